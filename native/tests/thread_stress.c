/* thread_stress.c - an MPI_THREAD_MULTIPLE program for the profiler's thread
 * tests: the ThreadSanitizer ctest (native/tests/CMakeLists.txt) and the exact
 * counts of tests/test_profile_threads.py. On exactly 2 ranks, 8 threads per
 * rank; thread t exchanges with thread t of the other rank (tags distinct per
 * thread). Per iteration and thread:
 *   p2p       Irecv + Isend + Waitall                         2 transfers
 *   handoff   Irecv + Isend posted by this thread; the Irecv  2 transfers
 *             is handed to its neighbour t^1 of the same rank,
 *             which completes it (Wait; in odd iterations after
 *             MPI_Request_get_status saw it complete) while this
 *             thread goes on with
 *   blocking  rank 0 Send then Recv, rank 1 Recv then Send    2 transfers
 *             and then waits for its Isend and for the neighbour. Even
 *             threads post while odd ones complete, then the other way round.
 * Only receives are handed over: an MPI may give several outstanding sends
 * one handle (MPICH's pre-completed eager sends), and which thread's request
 * a completion of such a handle takes is not determined, so a count of
 * completions on another thread would not be exact.
 * Each pattern runs inside a region of its name (begun by the posting thread).
 * That is 6 transfers per thread and iteration; 1 of them completed on
 * another thread than the one that posted it, while the posting thread
 * makes MPI calls of its own. Received data are checked.
 * On this project's 2-core machines 2 x 8 threads are oversubscribed 8-fold:
 * the test is about correctness under contention, not speed.
 * Usage: thread_stress [iterations] [bytes]   (exit 0 = all data as expected) */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_overlap.h"

enum { NTHREADS = 8, TAGS_PER_THREAD = 8 };

static int g_rank, g_iters, g_bytes;
static int g_errors; /* updated with atomics: threads report bad data */
/* A duplicate of MPI_COMM_WORLD for the p2p pattern: in trace mode its peers
 * go through the profiler's per-communicator table (mop_peers.c), which the
 * threads then make and read at once. */
static MPI_Comm g_p2p_comm;
/* g_handoff[t]: the receive thread t posted for its neighbour to complete.
 * g_ready[t] = step once it is there (release: the neighbour reads it after
 * it), g_done[t] = step once the neighbour completed it. */
static MPI_Request g_handoff[NTHREADS];
static int g_ready[NTHREADS], g_done[NTHREADS];

static void wait_for(int *flag, int step)
{
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != step)
        sched_yield(); /* 16 threads on 2 cores: let the one we wait for run */
}

static void fill(char *buf, int iter, int thread, int pattern)
{
    memset(buf, (iter * 31 + thread * 7 + pattern + g_rank) & 0xff, (size_t)g_bytes);
}

static void expect(const char *buf, int iter, int thread, int pattern, const char *what)
{
    int want = (iter * 31 + thread * 7 + pattern + (1 - g_rank)) & 0xff;
    for (int i = 0; i < g_bytes; i++) {
        if ((unsigned char)buf[i] != want) {
            fprintf(stderr, "thread_stress: rank %d thread %d iteration %d: bad %s data\n",
                    g_rank, thread, iter, what);
            __atomic_fetch_add(&g_errors, 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

static int tag(int thread, int pattern)
{
    return thread * TAGS_PER_THREAD + pattern;
}

static void p2p(int t, int iter, char *sbuf, char *rbuf)
{
    MPI_Request r[2];
    MPI_OVERLAP_REGION_BEGIN("p2p");
    fill(sbuf, iter, t, 0);
    MPI_Irecv(rbuf, g_bytes, MPI_BYTE, 1 - g_rank, tag(t, 0), g_p2p_comm, &r[0]);
    MPI_Isend(sbuf, g_bytes, MPI_BYTE, 1 - g_rank, tag(t, 0), g_p2p_comm, &r[1]);
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC 12 takes Debian MPICH 4.0's
                       * (MPI_Status *)1 for an array of size 0 (-Wstringop-overflow) */
    MPI_Waitall(2, r, st);
    MPI_OVERLAP_REGION_END("p2p");
    expect(rbuf, iter, t, 0, "p2p");
}

static void blocking(int t, int iter, char *sbuf, char *rbuf)
{
    MPI_OVERLAP_REGION_BEGIN("blocking");
    fill(sbuf, iter, t, 1);
    if (g_rank == 0) {
        MPI_Send(sbuf, g_bytes, MPI_BYTE, 1, tag(t, 1), MPI_COMM_WORLD);
        MPI_Recv(rbuf, g_bytes, MPI_BYTE, 1, tag(t, 1), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rbuf, g_bytes, MPI_BYTE, 0, tag(t, 1), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, g_bytes, MPI_BYTE, 0, tag(t, 1), MPI_COMM_WORLD);
    }
    MPI_OVERLAP_REGION_END("blocking");
    expect(rbuf, iter, t, 1, "blocking");
}

/* One half of the handoff: threads of parity `posting` post, hand the
 * requests over and do their blocking exchange meanwhile; the others complete
 * their neighbour's requests. */
static void handoff_half(int t, int iter, int posting, char *sbuf, char *rbuf, char *hbuf,
                         char *hrbuf)
{
    int step = 2 * iter + posting + 1;
    if (t % 2 == posting) {
        MPI_Request send;
        MPI_OVERLAP_REGION_BEGIN("handoff");
        fill(hbuf, iter, t, 2);
        MPI_Irecv(hrbuf, g_bytes, MPI_BYTE, 1 - g_rank, tag(t, 2), MPI_COMM_WORLD,
                  &g_handoff[t]);
        MPI_Isend(hbuf, g_bytes, MPI_BYTE, 1 - g_rank, tag(t, 2), MPI_COMM_WORLD, &send);
        MPI_OVERLAP_REGION_END("handoff");
        __atomic_store_n(&g_ready[t], step, __ATOMIC_RELEASE);
        blocking(t, iter, sbuf, rbuf); /* while the neighbour completes the receive */
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        wait_for(&g_done[t], step);
        expect(hrbuf, iter, t, 2, "handoff");
    } else {
        wait_for(&g_ready[t ^ 1], step);
        if (iter % 2) { /* see it complete first, without freeing it */
            int flag = 0;
            MPI_Request_get_status(g_handoff[t ^ 1], &flag, MPI_STATUS_IGNORE);
            while (!flag) {
                sched_yield();
                MPI_Request_get_status(g_handoff[t ^ 1], &flag, MPI_STATUS_IGNORE);
            }
        }
        MPI_Wait(&g_handoff[t ^ 1], MPI_STATUS_IGNORE);
        __atomic_store_n(&g_done[t ^ 1], step, __ATOMIC_RELEASE);
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char *buf = malloc(4 * (size_t)g_bytes);
    if (!buf) {
        fprintf(stderr, "thread_stress: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *sbuf = buf, *rbuf = buf + g_bytes, *hbuf = buf + 2 * g_bytes, *hrbuf = buf + 3 * g_bytes;
    for (int i = 0; i < g_iters; i++) {
        p2p(t, i, sbuf, rbuf);
        handoff_half(t, i, 0, sbuf, rbuf, hbuf, hrbuf);
        handoff_half(t, i, 1, sbuf, rbuf, hbuf, hrbuf);
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE, size = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_iters = argc > 1 ? atoi(argv[1]) : 50;
    g_bytes = argc > 2 ? atoi(argv[2]) : 64;
    if (size != 2 || provided != MPI_THREAD_MULTIPLE || g_iters < 1 || g_bytes < 1) {
        if (g_rank == 0)
            fprintf(stderr, "thread_stress needs exactly 2 ranks, MPI_THREAD_MULTIPLE "
                            "(provided: %d) and positive iterations and bytes\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &g_p2p_comm);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0) {
            fprintf(stderr, "thread_stress: cannot create thread %d\n", t);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    /* No collective here: each rank's exit status says whether its data were
     * right, and the profiled transfers are exactly the workers' (a blocking
     * collective would be a transfer too). */
    int errors = __atomic_load_n(&g_errors, __ATOMIC_RELAXED);
    printf("thread_stress: rank %d: %d threads x %d iterations x 6 transfers, %d bad\n",
           g_rank, NTHREADS, g_iters, errors);
    MPI_Comm_free(&g_p2p_comm);
    MPI_Finalize();
    return errors ? 1 : 0;
}
