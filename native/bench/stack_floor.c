/* stack_floor.c - mo_stack_floor: what the MPI stack adds to a message
 * between two cores of one node, against the physical floor (issue 6,
 * experiments 1 and 2; Balaji et al.).
 *
 * Ranks 0 and 1 measure, for every size, four methods, one sample of each in
 * turn (so a disturbance touches all four alike and the differences are
 * paired):
 *   mpi_blocking     ping-pong with MPI_Send / MPI_Recv
 *   mpi_nonblocking  ping-pong with MPI_Isend / MPI_Irecv / MPI_Waitall
 *                    (rank 0: Irecv pong, Isend ping, Waitall 2; rank 1:
 *                    Irecv ping, Waitall 1, Isend pong, Waitall 1)
 *   shm              the same ping-pong without MPI: one shared segment
 *                    (MPI_Win_allocate_shared, set up with MPI), in the
 *                    timed loop only C11 atomic flag stores/loads and
 *                    spins. One mailbox per direction: a 64-byte line whose
 *                    first 8 bytes are the flag (a sequence number); a
 *                    payload of up to 56 bytes sits in the same line, a
 *                    larger one in the lines right after it. Sender: memcpy
 *                    its buffer into the mailbox, release-store the flag;
 *                    receiver: spin on an acquire load, memcpy out.
 *                    With one rank on each of two nodes (a 2-rank job) the
 *                    floor is the same ping-pong over a TCP connection of
 *                    the program's own between the two hosts instead
 *                    (shmsync.h's side channel; TCP_NODELAY; 0 B is sent as
 *                    1 byte; the receiver polls with non-blocking recv, as
 *                    MPI's progress does): what the kernel's network path
 *                    costs without MPI. The result's floor_path says which.
 *   memcpy           rank 0 alone: memcpy of the size between two private
 *                    buffers (the single-core copy bandwidth floor).
 * A sample is a timed block of `iterations` round trips (copies for
 * memcpy) / (2 * iterations) (memcpy: / iterations), seconds one way.
 * Iterations per method and size come from an untimed estimate so that a
 * sample lasts about --sample-ms. Rank 0 decides and broadcasts (outside
 * the timed blocks); a barrier starts every block.
 *
 * Rank 0 also reads the MPI's protocol thresholds back through MPI_T (the
 * analysis cross-checks the switch it finds against them). The program
 * also records where the layer below MPI ships a ping-pong
 * tool (fi_pingpong, ucx_perftest) on PATH or beside the MPI library; the
 * Python side runs it when present. Further ranks wait without spinning. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_main.h"
#include "shmsync.h"

#define BENCH "stack-floor" /* the result's benchmark (bench-stack-floor-v1) */
#define DEFAULT_SIZES "0:4M"
#define MSG_TAG 31
#define LINE 64
#define INLINE_MAX (LINE - 8)
#define NMETHODS 4
#define WARM_BLOCKS 3
#define MAX_CVARS 48

enum { M_BLOCKING, M_NONBLOCKING, M_SHM, M_MEMCPY };
static const char *const method_names[NMETHODS] = {"mpi_blocking", "mpi_nonblocking", "shm", "memcpy"};

typedef struct sf_method {
    long iterations;
    size_t n;
    double *samples;
} sf_method;

typedef struct sf_size {
    uint64_t bytes;
    sf_method m[NMETHODS];
} sf_size;

/* ---- the shared segment ------------------------------------------------ */

typedef struct shm_box {
    _Atomic uint64_t *flag;
    unsigned char *payload_inline; /* flag + 8 */
    unsigned char *payload_big;    /* flag + LINE */
} shm_box;

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins until *flag == s. After SPIN_YIELD spins without it, yields the core
 * each time: on a quiet machine the flag comes long before that; on a busy
 * one (fewer free cores than spinning ranks) the partner needs the core to
 * set it, as MPI's own progress loops do. */
#define SPIN_YIELD 2000
static inline void wait_flag(_Atomic uint64_t *flag, uint64_t s)
{
    for (unsigned spins = 0; atomic_load_explicit(flag, memory_order_acquire) != s; spins++) {
        if (spins < SPIN_YIELD)
            cpu_relax();
        else
            sched_yield();
    }
}

static inline unsigned char *box_payload(const shm_box *b, size_t n)
{
    return n <= INLINE_MAX ? b->payload_inline : b->payload_big;
}

/* ---- one timed block -------------------------------------------------- */

typedef struct sf_bufs {
    unsigned char *sbuf, *rbuf;
    shm_box box[2]; /* [0]: 0 -> 1, [1]: 1 -> 0 */
    uint64_t seq;   /* last sequence number used, the same on both ranks */
    int tcp;        /* across nodes: the socket to the other rank; else -1 */
} sf_bufs;

typedef struct sf_state {
    const mo_options *opts;
    sf_size *sizes;
    int nsizes; /* measured so far */
    bool complete;
    int ranks;
    bool same_node;
    bool tcp_floor; /* ranks on two nodes: the floor is the TCP ping-pong */
    char tools[2][PATH_MAX + 1]; /* fi_pingpong, ucx_perftest: path or "" */
    char searched[4096];         /* the directories searched, ':'-separated */
    mo_cvar cvars[MAX_CVARS];    /* the MPI's protocol thresholds (rank 0), for the analysis */
    int ncvars;
    char cvar_note[128];
    MPI_Comm pair;   /* ranks 0 and 1 where the floor can run */
    sf_bufs b;
    MPI_Win win;     /* the shm floor's segment */
    mo_shm channel;  /* the TCP floor's connection */
    char channel_err[256];
    char why[512];   /* rank 0: why the vote failed, when it did */
} sf_state;

/* The whole of n bytes over the floor's socket (a short write or read is
 * continued); false when the connection failed. */
static bool tcp_send_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, 0);
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Polls without blocking, as an MPI's progress loop polls its sockets: a
 * blocking recv would add the kernel's wake-up of a sleeping process (tens of
 * µs on a VM) to the floor, which the MPI it is compared with never pays. */
static bool tcp_recv_all(int fd, unsigned char *p, size_t n)
{
    unsigned spins = 0;
    while (n > 0) {
        ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            spins = 0;
        } else if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            return false;
        } else if (++spins >= SPIN_YIELD) {
            sched_yield(); /* a busy machine: let the partner's node run */
        }
    }
    return true;
}

/* One TCP round trip of n bytes (at least 1) from rank 0's side or rank 1's. */
static void tcp_round_trip(const sf_bufs *b, int rank, size_t n)
{
    const size_t m = n > 0 ? n : 1;
    bool ok = rank == 0 ? tcp_send_all(b->tcp, b->sbuf, m) && tcp_recv_all(b->tcp, b->rbuf, m)
                        : tcp_recv_all(b->tcp, b->rbuf, m) && tcp_send_all(b->tcp, b->sbuf, m);
    if (!ok) {
        perror("mo_stack-floor: the TCP floor's connection");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Runs one block on both ranks of comm; returns one-way seconds on rank 0. */
static double run_block(MPI_Comm comm, int rank, sf_bufs *b, int method, size_t n, long iters)
{
    const int cnt = (int)n;
    MPI_Barrier(comm);
    uint64_t t0 = mo_timer_now_ns();
    switch (method) {
    case M_BLOCKING:
        for (long i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(b->sbuf, cnt, MPI_BYTE, 1, MSG_TAG, comm);
                MPI_Recv(b->rbuf, cnt, MPI_BYTE, 1, MSG_TAG, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(b->rbuf, cnt, MPI_BYTE, 0, MSG_TAG, comm, MPI_STATUS_IGNORE);
                MPI_Send(b->sbuf, cnt, MPI_BYTE, 0, MSG_TAG, comm);
            }
        }
        break;
    case M_NONBLOCKING:
        for (long i = 0; i < iters; i++) {
            MPI_Request req[2];
            if (rank == 0) {
                MPI_Irecv(b->rbuf, cnt, MPI_BYTE, 1, MSG_TAG, comm, &req[0]);
                MPI_Isend(b->sbuf, cnt, MPI_BYTE, 1, MSG_TAG, comm, &req[1]);
                MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            } else {
                MPI_Irecv(b->rbuf, cnt, MPI_BYTE, 0, MSG_TAG, comm, &req[0]);
                MPI_Waitall(1, req, MPI_STATUSES_IGNORE);
                MPI_Isend(b->sbuf, cnt, MPI_BYTE, 0, MSG_TAG, comm, &req[1]);
                MPI_Waitall(1, &req[1], MPI_STATUSES_IGNORE);
            }
        }
        break;
    case M_SHM: {
        if (b->tcp >= 0) {
            for (long i = 0; i < iters; i++)
                tcp_round_trip(b, rank, n);
            break;
        }
        const shm_box *out = &b->box[rank], *in = &b->box[1 - rank];
        unsigned char *po = box_payload(out, n), *pi = box_payload(in, n);
        for (long i = 0; i < iters; i++) {
            const uint64_t s = ++b->seq;
            if (rank == 0) {
                memcpy(po, b->sbuf, n);
                atomic_store_explicit(out->flag, s, memory_order_release);
                wait_flag(in->flag, s);
                memcpy(b->rbuf, pi, n);
            } else {
                wait_flag(in->flag, s);
                memcpy(b->rbuf, pi, n);
                memcpy(po, b->sbuf, n);
                atomic_store_explicit(out->flag, s, memory_order_release);
            }
        }
        break;
    }
    case M_MEMCPY:
        if (rank == 0) {
            for (long i = 0; i < iters; i++) {
                memcpy(b->rbuf, b->sbuf, n);
                /* keep the copy: the compiler may not drop or merge it */
                __asm__ __volatile__("" : : "r"(b->rbuf) : "memory");
            }
            uint64_t t1 = mo_timer_now_ns();
            return (double)(t1 - t0) / 1e9 / (double)iters;
        }
        return 0.0;
    }
    uint64_t t1 = mo_timer_now_ns();
    return rank == 0 ? (double)(t1 - t0) / 1e9 / (double)iters / 2.0 : 0.0;
}

/* Rank 0 decides iterations and broadcasts them; both ranks run the block. */
static double block(MPI_Comm comm, int rank, sf_bufs *b, int method, size_t n, long iters)
{
    long it = iters;
    MPI_Bcast(&it, 1, MPI_LONG, 0, comm);
    return run_block(comm, rank, b, method, n, it);
}

static long choose_iterations(const mo_options *o, int method, double est_s)
{
    if (o->iters > 0)
        return o->iters;
    if (!(est_s > 0))
        est_s = 1e-7;
    return mo_clamp_iters(o, ceil(o->sample_ms / 1000.0 / (method == M_MEMCPY ? est_s : 2.0 * est_s)));
}

/* ---- the layer below MPI ----------------------------------------------- */

/* Appends ":<dir><suffix>" (no ':' when dirs is empty) if it fits. */
static void append_dir(char *dirs, size_t cap, const char *dir, const char *suffix)
{
    size_t len = strlen(dirs), a = strlen(dir), c = strlen(suffix);
    if (len + 1 + a + c + 1 > cap)
        return;
    if (len)
        dirs[len++] = ':';
    memcpy(dirs + len, dir, a);
    memcpy(dirs + len + a, suffix, c + 1);
}

static void find_tools(sf_state *st)
{
    static const char *const names[2] = {"fi_pingpong", "ucx_perftest"};
    char dirs[8192] = "";
    const char *path = getenv("PATH");
    if (path)
        snprintf(dirs, sizeof dirs, "%s", path);
    /* The MPI library's prefix: <prefix>/lib/libmpi.so -> <prefix>/bin and
     * <prefix>/bin/libfabric (where Intel MPI keeps fi_pingpong). */
    Dl_info info;
    if (dladdr((void *)&MPI_Init, &info) && info.dli_fname) {
        char lib[PATH_MAX];
        if (realpath(info.dli_fname, lib)) {
            char *slash = strrchr(lib, '/');
            if (slash) {
                *slash = '\0';
                append_dir(dirs, sizeof dirs, lib, "/../bin");
                append_dir(dirs, sizeof dirs, lib, "/../bin/libfabric");
            }
        }
    }
    snprintf(st->searched, sizeof st->searched, "%s", dirs);
    for (int k = 0; k < 2; k++) {
        st->tools[k][0] = '\0';
        char copy[8192];
        snprintf(copy, sizeof copy, "%s", dirs);
        char *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            char cand[PATH_MAX + 32];
            snprintf(cand, sizeof cand, "%s/%s", d, names[k]);
            char real[PATH_MAX];
            if (access(cand, X_OK) == 0 && realpath(cand, real)) {
                snprintf(st->tools[k], sizeof st->tools[k], "%s", real);
                break;
            }
        }
    }
}

/* ---- output ----------------------------------------------------------- */

/* One of "sizes". */
static void write_size(mo_json *w, const void *item, const void *ctx)
{
    const sf_size *sz = item;
    (void)ctx;
    mo_json_kv_uint64(w, "bytes", sz->bytes);
    for (int m = 0; m < NMETHODS; m++) {
        mo_json_key(w, method_names[m]);
        mo_json_begin_object(w);
        mo_json_kv_int64(w, "iterations", sz->m[m].iterations);
        mo_json_kv_doubles(w, "samples_s", sz->m[m].samples, sz->m[m].n);
        mo_json_end_object(w);
    }
}

static void write_results(mo_json *w, const void *ctx)
{
    const sf_state *st = ctx;
    mo_json_kv_int64(w, "ranks", st->ranks);
    mo_json_kv_bool(w, "complete", st->complete);
    mo_json_kv_int64(w, "inline_max", INLINE_MAX);
    mo_json_kv_int64(w, "line_bytes", LINE);
    mo_json_kv_string(w, "floor_path", st->tcp_floor ? "tcp" : "shared-memory");
    mo_json_key(w, "lower_layer_tools");
    mo_json_begin_object(w);
    mo_json_kv_string(w, "searched", st->searched);
    mo_json_key(w, "fi_pingpong");
    if (st->tools[0][0])
        mo_json_string(w, st->tools[0]);
    else
        mo_json_null(w);
    mo_json_key(w, "ucx_perftest");
    if (st->tools[1][0])
        mo_json_string(w, st->tools[1]);
    else
        mo_json_null(w);
    mo_json_end_object(w);
    mo_cvar_json(w, st->cvars, st->ncvars, st->cvar_note);
    mo_json_objects(w, "sizes", st->sizes, sizeof *st->sizes, (size_t)st->nsizes, write_size, NULL);
}

/* ---- the kernel -------------------------------------------------------- */

/* Rank 0 after its probe: the tools of the layer below MPI. */
static void sf_calibrated(void *arg)
{
    find_tools(arg);
}

/* The shared segment of the shm floor on the pair: a mailbox per direction. */
static bool open_segment(sf_state *st, int wrank, size_t largest)
{
    long page = sysconf(_SC_PAGESIZE);
    const size_t pagesz = page > 0 ? (size_t)page : 4096;
    const size_t boxsz = (LINE + largest + pagesz - 1) / pagesz * pagesz;
    void *base = NULL;
    MPI_Aint segsz = wrank == 0 ? (MPI_Aint)(2 * boxsz + LINE) : 0;
    if (MPI_Win_allocate_shared(segsz, 1, MPI_INFO_NULL, st->pair, &base, &st->win) != MPI_SUCCESS)
        return false;
    MPI_Aint qsz;
    int disp;
    MPI_Win_shared_query(st->win, 0, &qsz, &disp, &base);
    uintptr_t p = ((uintptr_t)base + LINE - 1) / LINE * LINE;
    for (int d = 0; d < 2; d++) {
        unsigned char *start = (unsigned char *)p + (size_t)d * boxsz;
        st->b.box[d].flag = (_Atomic uint64_t *)(void *)start;
        st->b.box[d].payload_inline = start + 8;
        st->b.box[d].payload_big = start + LINE;
    }
    if (wrank == 0) {
        memset((void *)p, 0, 2 * boxsz);
        atomic_store(st->b.box[0].flag, 0);
        atomic_store(st->b.box[1].flag, 0);
    }
    /* A passive-target epoch for the whole run, as the MPI memory model
     * wants for direct loads and stores to the segment. */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, st->win);
    MPI_Win_sync(st->win);
    MPI_Barrier(st->pair);
    return true;
}

/* Every rank: where the floor runs, the pair, its buffers and segment; rank
 * 0 the MPI's thresholds and its samples. */
static void sf_setup(mo_bench *b, void *ctx)
{
    sf_state *st = ctx;
    const mo_options *o = &b->opts;
    const int wrank = b->rank;
    st->opts = o;
    st->ranks = b->nranks;
    if (wrank == 0) /* where the MPI says its protocols switch (analysis: agrees / disagrees) */
        st->ncvars = mo_cvar_read_thresholds(st->cvars, MAX_CVARS, st->cvar_note, sizeof st->cvar_note);

    /* The floor is a shared segment when ranks 0 and 1 share a node, a TCP
     * connection between them when a 2-rank job has one on each of two. */
    int leader = mo_node_leader();
    int leader1 = wrank == 1 ? leader : -1;
    MPI_Allreduce(MPI_IN_PLACE, &leader1, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    st->same_node = leader1 == 0;
    st->channel.fd = -1;
    if (!st->same_node && b->nranks == 2)
        st->tcp_floor = mo_shm_open_channel(&st->channel, st->channel_err, sizeof st->channel_err) == 0;
    MPI_Comm_split(MPI_COMM_WORLD, wrank < 2 && (st->same_node || st->tcp_floor) ? 0 : MPI_UNDEFINED, wrank,
                   &st->pair);
    b->comm = st->pair;

    const size_t largest = (size_t)o->sizes.v[o->sizes.n - 1];
    st->b.tcp = st->channel.fd;
    st->win = MPI_WIN_NULL;
    bool ok = true;
    if (st->pair != MPI_COMM_NULL) {
        const size_t bufsz = largest > 0 ? largest : 1; /* the TCP floor sends 0 B as 1 */
        st->b.sbuf = mo_page_alloc(bufsz);
        st->b.rbuf = mo_page_alloc(bufsz);
        ok = st->b.sbuf && st->b.rbuf;
        if (ok) {
            memset(st->b.sbuf, wrank + 1, bufsz);
            memset(st->b.rbuf, 0, bufsz);
        }
        if (!st->tcp_floor && !open_segment(st, wrank, largest))
            ok = false;
    }
    bool sized = true;
    if (wrank == 0) {
        st->sizes = calloc(o->sizes.n, sizeof *st->sizes);
        sized = st->sizes != NULL;
        for (size_t i = 0; sized && i < o->sizes.n; i++) {
            st->sizes[i].bytes = o->sizes.v[i];
            for (int m = 0; m < NMETHODS; m++)
                if (!(st->sizes[i].m[m].samples = calloc((size_t)o->reps, sizeof(double))))
                    sized = false;
        }
    }
    /* Rank 0 says why the vote failed: its own memory, else where ranks 0
     * and 1 are, else some rank's buffers or segment. */
    int placed = st->same_node || st->tcp_floor;
    MPI_Allreduce(MPI_IN_PLACE, &placed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    b->have = ok && sized && placed;
    if (!sized)
        snprintf(st->why, sizeof st->why, "out of memory");
    else if (!placed)
        snprintf(st->why, sizeof st->why, "ranks 0 and 1 are on different nodes: the floor needs them on one "
                 "node, or a 2-rank job%s%s", st->channel_err[0] ? " and " : "", st->channel_err);
    else
        snprintf(st->why, sizeof st->why, "cannot allocate the message buffers or the shared segment");
    b->ready.no_alloc = st->why;
    b->ready.calib_ms = 1.0;
    b->ready.no_work_loop = true; /* about a loop this method does not use */
    b->ready.unbound_peer = 1;
    b->ready.quiet = true;
    b->ready.calibrated = sf_calibrated;
    b->ready.calibrated_arg = st;
}

/* One size on the pair: every method's estimate, then --reps rounds of one
 * sample each. */
static int sf_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    sf_state *st = ctx;
    const mo_options *o = &b->opts;
    const int wrank = b->rank;
    const size_t n = (size_t)o->sizes.v[i];
    sf_size *sz = wrank == 0 ? &st->sizes[i] : NULL;
    /* Warm-up and estimate: one round trip (first contact), then --warmup
     * in WARM_BLOCKS blocks; the fastest block sets the iterations (noise
     * only adds time, and a disturbed estimate would make samples far
     * shorter than --sample-ms). */
    long its[NMETHODS];
    for (int m = 0; m < NMETHODS; m++) {
        block(st->pair, wrank, &st->b, m, n, 1);
        long w = o->warmup > WARM_BLOCKS ? o->warmup / WARM_BLOCKS : 1;
        double est = 0.0;
        for (int k = 0; k < WARM_BLOCKS; k++) {
            double t = block(st->pair, wrank, &st->b, m, n, w);
            if (k == 0 || t < est)
                est = t;
        }
        its[m] = choose_iterations(o, m, est);
        if (sz)
            sz->m[m].iterations = its[m];
    }
    for (long r = 0; r < o->reps; r++)
        for (int m = 0; m < NMETHODS; m++) {
            double t = block(st->pair, wrank, &st->b, m, n, its[m]);
            if (sz)
                sz->m[m].samples[sz->m[m].n++] = t;
        }
    if (wrank != 0)
        return MO_POINT_OK;
    st->nsizes = i + 1;
    if (o->verbose) /* the medians only then: no work between points otherwise */
        mo_verbose(o, "%10zu B  blocking %9.3f us  nonblocking %9.3f us  shm %9.3f us  memcpy %9.3f us\n", n,
                   mo_stats_median(sz->m[0].samples, sz->m[0].n) * 1e6,
                   mo_stats_median(sz->m[1].samples, sz->m[1].n) * 1e6,
                   mo_stats_median(sz->m[2].samples, sz->m[2].n) * 1e6,
                   mo_stats_median(sz->m[3].samples, sz->m[3].n) * 1e6);
    snprintf(label, labellen, "%zu B", n);
    return MO_POINT_OK;
}

static void sf_finish(mo_bench *b, void *ctx)
{
    sf_state *st = ctx;
    st->complete = st->nsizes == b->total;
}

static void sf_teardown(mo_bench *b, void *ctx)
{
    sf_state *st = ctx;
    if (st->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(st->win);
        MPI_Win_free(&st->win);
    }
    if (st->pair != MPI_COMM_NULL)
        MPI_Comm_free(&st->pair);
    if (st->tcp_floor)
        mo_shm_close(&st->channel);
    if (st->sizes) {
        for (size_t i = 0; i < b->opts.sizes.n; i++)
            for (int m = 0; m < NMETHODS; m++)
                free(st->sizes[i].m[m].samples);
        free(st->sizes);
    }
    free(st->b.sbuf);
    free(st->b.rbuf);
}

int main(int argc, char **argv)
{
    static sf_state st;
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, NULL, 2, true, NULL, NULL}, .results = write_results, .state = &st,
        .setup = sf_setup, .mode = MO_BENCH_LOCKSTEP, .unit = "sizes", .npoints = mo_bench_nsizes,
        .point = sf_point, .finish = sf_finish, .teardown = sf_teardown,
    };
    return mo_bench_main(argc, argv, &k);
}
