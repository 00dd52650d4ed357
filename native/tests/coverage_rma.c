/* coverage_rma.c - one-sided communication (MPI RMA) in every epoch kind, for
 * the profiler's end-to-end test (tests/test_profile_rma.py). On 2 ranks,
 * each iteration runs one named region per pattern; in each, every operation
 * is followed by WORK_MS of calibrated computation (native/common work loop)
 * before the call that completes it, so every transfer spans computation far
 * longer than itself (max overlap = its transfer time):
 *   fence       fence; K Put, K Get, K Put to MPI_PROC_NULL; work; fence
 *   pscw        post; start; K Put; work; complete; wait
 *   lock        lock(peer); K Put; work; flush(peer); K Get; work;
 *               flush_local(peer); K Put; work; unlock(peer)
 *   lock_all    lock_all; K Put; work; flush_all; K Get; work; flush_local_all;
 *               K Put; work; unlock_all
 *   request     lock_all; K each of Rput, Rget, Raccumulate, Rget_accumulate;
 *               work; MPI_Wait on each; unlock_all
 *   atomics     lock_all; K each of Accumulate, Get_accumulate, Fetch_and_op,
 *               Compare_and_swap; work; unlock_all
 *   large_count (MPI >= 4 headers only) lock_all; K each of Put_c, Get_c,
 *               Accumulate_c, Get_accumulate_c; work; flush_all; K each of
 *               Rput_c, Rget_c, Raccumulate_c, Rget_accumulate_c; work; Wait
 *               on each; unlock_all
 * Sizes: Put/Get (and _c, R*) 64 KiB, the accumulates 8 KiB (result size for
 * those that return one), Fetch_and_op and Compare_and_swap 8 bytes.
 * Mode "threads" (MPI_THREAD_MULTIPLE) runs only this, per iteration:
 *   other_thread  lock_all; a second thread posts K Put; the main thread
 *               works and calls flush_all; then the second thread makes one
 *               more one-sided call (a Put to MPI_PROC_NULL), where its K
 *               transfers end; unlock_all
 * Mode "unseen-sync" runs only this, per iteration:
 *   unseen_sync lock_all; K Put; work; PMPI_Win_unlock_all, which the profiler
 *               does not see (as with a Fortran binding that calls PMPI_);
 *               the K x iterations transfers end at MPI_Win_free (counted)
 * Usage: coverage_rma [iterations] [K] [work_ms] [all|threads|unseen-sync];
 * exits 3 when data that was put or fetched is wrong. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_overlap.h"
#include "work.h"

enum { N = 8192 /* doubles: 64 KiB */, NACC = 1024 /* doubles: 8 KiB */, KMAX = 64 };

/* The window (bytes, disp_unit 1): areas per operation kind, K slots each. */
typedef struct layout {
    MPI_Aint put, rput, get, acc, getacc, fao, cas, size;
} layout;

static layout lay;
static int K, peer, rank;
static uint64_t work_units;
static double *src, *dst, *accsrc, *accres; /* origin buffers, one slot per op */
static int64_t *fao_res, *cas_res;

static void work(void)
{
    mo_work(work_units);
}

static double *slot(double *base, int i, int n) { return base + (size_t)i * (size_t)n; }

static void fail(const char *what)
{
    fprintf(stderr, "coverage_rma: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void puts_to(MPI_Aint area, MPI_Win win)
{
    for (int i = 0; i < K; i++)
        MPI_Put(slot(src, i, N), N, MPI_DOUBLE, peer, area + (MPI_Aint)i * N * 8, N, MPI_DOUBLE,
                win);
}

static void gets_from(MPI_Aint area, MPI_Win win)
{
    for (int i = 0; i < K; i++)
        MPI_Get(slot(dst, i, N), N, MPI_DOUBLE, peer, area + (MPI_Aint)i * N * 8, N, MPI_DOUBLE,
                win);
}

static void fence_epoch(MPI_Win win)
{
    MPI_OVERLAP_REGION_BEGIN("fence");
    MPI_Win_fence(0, win);
    puts_to(lay.put, win);
    gets_from(lay.get, win);
    for (int i = 0; i < K; i++) /* moves nothing */
        MPI_Put(slot(src, i, N), N, MPI_DOUBLE, MPI_PROC_NULL, 0, N, MPI_DOUBLE, win);
    work();
    MPI_Win_fence(0, win);
    MPI_OVERLAP_REGION_END("fence");
    if (dst[0] != 1000.0 * (peer + 1) + 7) /* the peer's get area holds its pattern */
        fail("MPI_Get in the fence epoch fetched the wrong data");
}

static void pscw_epoch(MPI_Win win, MPI_Group peer_group)
{
    MPI_OVERLAP_REGION_BEGIN("pscw");
    MPI_Win_post(peer_group, 0, win);
    MPI_Win_start(peer_group, 0, win);
    puts_to(lay.put, win);
    work();
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_OVERLAP_REGION_END("pscw");
}

static void lock_epoch(MPI_Win win)
{
    MPI_OVERLAP_REGION_BEGIN("lock");
    MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
    puts_to(lay.put, win);
    work();
    MPI_Win_flush(peer, win);
    gets_from(lay.get, win);
    work();
    MPI_Win_flush_local(peer, win);
    puts_to(lay.put, win);
    work();
    MPI_Win_unlock(peer, win);
    MPI_OVERLAP_REGION_END("lock");
}

static void lock_all_epoch(MPI_Win win)
{
    MPI_OVERLAP_REGION_BEGIN("lock_all");
    MPI_Win_lock_all(0, win);
    puts_to(lay.put, win);
    work();
    MPI_Win_flush_all(win);
    gets_from(lay.get, win);
    work();
    MPI_Win_flush_local_all(win);
    puts_to(lay.put, win);
    work();
    MPI_Win_unlock_all(win);
    MPI_OVERLAP_REGION_END("lock_all");
}

/* K each of Rput, Rget, Raccumulate and Rget_accumulate, their requests in
 * req[0 .. 4K-1]; then work, MPI_Wait on each and unlock_all. SFX is empty,
 * or _c for the MPI-4 large-count names, which the profiler wraps apart. */
#define REQUEST_OPS_THEN_WAIT(SFX, req, win)                                                    \
    do {                                                                                        \
        int n_ = 0;                                                                             \
        for (int i = 0; i < K; i++) {                                                           \
            MPI_Rput##SFX(slot(src, i, N), N, MPI_DOUBLE, peer, lay.rput + (MPI_Aint)i * N * 8, \
                          N, MPI_DOUBLE, win, &req[n_++]);                                      \
            MPI_Rget##SFX(slot(dst, i, N), N, MPI_DOUBLE, peer, lay.get + (MPI_Aint)i * N * 8,  \
                          N, MPI_DOUBLE, win, &req[n_++]);                                      \
            MPI_Raccumulate##SFX(slot(accsrc, i, NACC), NACC, MPI_DOUBLE, peer,                 \
                                 lay.acc + (MPI_Aint)i * NACC * 8, NACC, MPI_DOUBLE, MPI_SUM,   \
                                 win, &req[n_++]);                                              \
            MPI_Rget_accumulate##SFX(slot(accsrc, i, NACC), NACC, MPI_DOUBLE,                   \
                                     slot(accres, i, NACC), NACC, MPI_DOUBLE, peer,             \
                                     lay.getacc + (MPI_Aint)i * NACC * 8, NACC, MPI_DOUBLE,     \
                                     MPI_SUM, win, &req[n_++]);                                 \
        }                                                                                       \
        work();                                                                                 \
        for (int i = 0; i < n_; i++)                                                            \
            MPI_Wait(&req[i], MPI_STATUS_IGNORE);                                               \
        MPI_Win_unlock_all(win);                                                                \
    } while (0)

static void request_epoch(MPI_Win win)
{
    MPI_Request req[4 * KMAX];
    MPI_OVERLAP_REGION_BEGIN("request");
    MPI_Win_lock_all(0, win);
    REQUEST_OPS_THEN_WAIT(, req, win);
    MPI_OVERLAP_REGION_END("request");
}

static void atomics_epoch(MPI_Win win)
{
    MPI_OVERLAP_REGION_BEGIN("atomics");
    MPI_Win_lock_all(0, win);
    int64_t one = 1, mine = rank + 1, zero = 0;
    for (int i = 0; i < K; i++) {
        MPI_Accumulate(slot(accsrc, i, NACC), NACC, MPI_DOUBLE, peer,
                       lay.acc + (MPI_Aint)i * NACC * 8, NACC, MPI_DOUBLE, MPI_SUM, win);
        MPI_Get_accumulate(slot(accsrc, i, NACC), NACC, MPI_DOUBLE, slot(accres, i, NACC), NACC,
                           MPI_DOUBLE, peer, lay.getacc + (MPI_Aint)i * NACC * 8, NACC,
                           MPI_DOUBLE, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &fao_res[i], MPI_INT64_T, peer, lay.fao + (MPI_Aint)i * 8, MPI_SUM,
                         win);
        MPI_Compare_and_swap(&mine, &zero, &cas_res[i], MPI_INT64_T, peer,
                             lay.cas + (MPI_Aint)i * 8, win);
    }
    work();
    MPI_Win_unlock_all(win);
    MPI_OVERLAP_REGION_END("atomics");
}

#if MPI_VERSION >= 4
static void large_count_epoch(MPI_Win win)
{
    MPI_Request req[4 * KMAX];
    MPI_OVERLAP_REGION_BEGIN("large_count");
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < K; i++) {
        MPI_Put_c(slot(src, i, N), N, MPI_DOUBLE, peer, lay.put + (MPI_Aint)i * N * 8, N,
                  MPI_DOUBLE, win);
        MPI_Get_c(slot(dst, i, N), N, MPI_DOUBLE, peer, lay.get + (MPI_Aint)i * N * 8, N,
                  MPI_DOUBLE, win);
        MPI_Accumulate_c(slot(accsrc, i, NACC), NACC, MPI_DOUBLE, peer,
                         lay.acc + (MPI_Aint)i * NACC * 8, NACC, MPI_DOUBLE, MPI_SUM, win);
        MPI_Get_accumulate_c(slot(accsrc, i, NACC), NACC, MPI_DOUBLE, slot(accres, i, NACC),
                             NACC, MPI_DOUBLE, peer, lay.getacc + (MPI_Aint)i * NACC * 8, NACC,
                             MPI_DOUBLE, MPI_SUM, win);
    }
    work();
    MPI_Win_flush_all(win);
    REQUEST_OPS_THEN_WAIT(_c, req, win);
    MPI_OVERLAP_REGION_END("large_count");
}
#endif

/* ---- a synchronization call on another thread than the operations ---------- */

static pthread_barrier_t step;
static MPI_Win shared_win;
static int thread_iters;

static void *other_thread_worker(void *arg)
{
    (void)arg;
    for (int it = 0; it < thread_iters; it++) {
        pthread_barrier_wait(&step); /* the main thread opened the epoch */
        puts_to(lay.put, shared_win);
        pthread_barrier_wait(&step); /* posted */
        pthread_barrier_wait(&step); /* the main thread's flush_all returned */
        MPI_Put(src, 0, MPI_DOUBLE, MPI_PROC_NULL, 0, 0, MPI_DOUBLE, shared_win);
        pthread_barrier_wait(&step);
    }
    return NULL;
}

static void other_thread_epochs(MPI_Win win, int iters)
{
    pthread_t worker;
    shared_win = win;
    thread_iters = iters;
    pthread_barrier_init(&step, NULL, 2);
    if (pthread_create(&worker, NULL, other_thread_worker, NULL) != 0)
        fail("cannot start a thread");
    for (int it = 0; it < iters; it++) {
        MPI_OVERLAP_REGION_BEGIN("other_thread");
        MPI_Win_lock_all(0, win);
        pthread_barrier_wait(&step);
        pthread_barrier_wait(&step);
        work();
        MPI_Win_flush_all(win);
        pthread_barrier_wait(&step);
        pthread_barrier_wait(&step);
        MPI_Win_unlock_all(win);
        MPI_OVERLAP_REGION_END("other_thread");
    }
    pthread_join(worker, NULL);
    pthread_barrier_destroy(&step);
}

/* ---- a synchronization the profiler cannot see ------------------------------- */

static void unseen_sync_epoch(MPI_Win win)
{
    MPI_OVERLAP_REGION_BEGIN("unseen_sync");
    MPI_Win_lock_all(0, win);
    puts_to(lay.put, win);
    work();
    PMPI_Win_unlock_all(win);
    MPI_OVERLAP_REGION_END("unseen_sync");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 4 ? argv[4] : "all";
    int threads = strcmp(mode, "threads") == 0, unseen = strcmp(mode, "unseen-sync") == 0;
    int provided = 0;
    MPI_Init_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 3;
    K = argc > 2 ? atoi(argv[2]) : 4;
    double work_ms = argc > 3 ? atof(argv[3]) : 5.0;
    if (size != 2 || iters < 1 || K < 1 || K > KMAX || !(work_ms > 0) ||
        (!threads && !unseen && strcmp(mode, "all") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: coverage_rma [iterations >= 1] [K in 1..%d] [work_ms > 0] "
                            "[all|threads|unseen-sync], on exactly 2 ranks\n", KMAX);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (threads && provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "coverage_rma: this MPI does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    peer = 1 - rank;
    mo_work_calib calib;
    if (mo_work_calibrate(&calib, 2.0, 5) != 0)
        fail("the work loop could not be calibrated");
    work_units = (uint64_t)(calib.units_per_us * work_ms * 1000.0);

    MPI_Aint slotN = (MPI_Aint)K * N * 8, slotA = (MPI_Aint)K * NACC * 8;
    lay.put = 0;
    lay.rput = lay.put + slotN;
    lay.get = lay.rput + slotN;
    lay.acc = lay.get + slotN;
    lay.getacc = lay.acc + slotA;
    lay.fao = lay.getacc + slotA;
    lay.cas = lay.fao + (MPI_Aint)K * 8;
    lay.size = lay.cas + (MPI_Aint)K * 8;
    char *base;
    MPI_Win win;
    MPI_Win_allocate(lay.size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, (size_t)lay.size);
    for (int i = 0; i < K * N; i++) /* the get area: this rank's pattern */
        ((double *)(base + lay.get))[i] = 1000.0 * (rank + 1) + 7;
    src = malloc((size_t)K * N * sizeof *src);
    dst = calloc((size_t)K * N, sizeof *dst);
    accsrc = malloc((size_t)K * NACC * sizeof *accsrc);
    accres = calloc((size_t)K * NACC, sizeof *accres);
    fao_res = calloc((size_t)K, sizeof *fao_res);
    cas_res = calloc((size_t)K, sizeof *cas_res);
    if (!src || !dst || !accsrc || !accres || !fao_res || !cas_res)
        fail("out of memory");
    for (int i = 0; i < K * N; i++)
        src[i] = 1000.0 * (rank + 1) + 1;
    for (int i = 0; i < K * NACC; i++)
        accsrc[i] = 1.0;
    MPI_Group world_group, peer_group;
    MPI_Win_get_group(win, &world_group);
    MPI_Group_incl(world_group, 1, &peer, &peer_group);
    MPI_Barrier(MPI_COMM_WORLD); /* window initialised everywhere */

    for (int it = 0; it < iters && !threads && !unseen; it++) {
        fence_epoch(win);
        pscw_epoch(win, peer_group);
        lock_epoch(win);
        lock_all_epoch(win);
        request_epoch(win);
        atomics_epoch(win);
#if MPI_VERSION >= 4
        large_count_epoch(win);
#endif
    }
    if (threads)
        other_thread_epochs(win, iters);
    for (int it = 0; it < iters && unseen; it++)
        unseen_sync_epoch(win);
    MPI_Barrier(MPI_COMM_WORLD); /* every epoch on the peer done before checking */
    const double *put_area = (const double *)(base + lay.put);
    const int64_t *fao_area = (const int64_t *)(base + lay.fao);
    if (put_area[0] != 1000.0 * (peer + 1) + 1)
        fail("MPI_Put wrote the wrong data");
    if (!threads && !unseen && fao_area[0] != iters) /* one Fetch_and_op(+1) per iteration from the peer */
        fail("MPI_Fetch_and_op did not add up");

    MPI_Group_free(&peer_group);
    MPI_Group_free(&world_group);
    MPI_Win_free(&win);
    free(src);
    free(dst);
    free(accsrc);
    free(accres);
    free(fao_res);
    free(cas_res);
    MPI_Finalize();
    return 0;
}
