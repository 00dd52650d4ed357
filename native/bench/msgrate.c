/* msgrate.c - mo_msgrate: the small-message rate between two ranks, in the
 * style of OSU's osu_mbw_mr with one pair.
 *
 * A window is W non-blocking transfers of B bytes: rank 0 posts W MPI_Isend,
 * rank 1 W MPI_Irecv (into W distinct slots of one buffer), both complete
 * them with MPI_Waitall, then rank 1 sends a 4-byte acknowledgement that
 * rank 0 receives, so the next window starts only after the last one has
 * arrived. A sample is one timed block of `iterations` windows on rank 0;
 * its rate is W * iterations / block time (messages per second). Each size
 * gets an untimed warm-up of --warmup windows, whose fastest part sets the
 * iterations per sample so that a sample lasts about --sample-ms, then
 * --reps samples; the reported rate is their median.
 *
 * Rank 0 makes every decision and sends it to rank 1 before each block, so
 * both always run the same number of windows. Ranks >= 2 take no part and
 * wait without spinning. The program is an ordinary MPI program: it runs
 * the same with or without the overlap profiler preloaded (the
 * profiler-overhead benchmark runs it both ways). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_main.h"

#define BENCH "msgrate"
#define DEFAULT_SIZES "8"
#define DEFAULT_WINDOW 64
#define MAX_WINDOW 4096
#define ACK_BYTES 4
#define CMD_TAG 31
#define MSG_TAG 29
#define ACK_TAG 37
#define WARM_BLOCKS 3

/* ---- benchmark-specific options ---------------------------------------- */

typedef struct mr_params {
    long window;
} mr_params;

static const mo_field mr_fields[] = {
    MO_FIELD_LONG_OF("window", mr_params, window, 1, MAX_WINDOW),
};

static void mr_usage(FILE *f)
{
    fprintf(f,
            "  --window W           messages in flight per window (default %d, at most %d)\n"
            "  (--sizes: message sizes in bytes, default " DEFAULT_SIZES "; --warmup: untimed\n"
            "   windows per size; --iters: fixed windows per sample)\n",
            DEFAULT_WINDOW, MAX_WINDOW);
}

/* ---- state ------------------------------------------------------------- */

typedef struct mr_size {
    uint64_t bytes;
    long iterations; /* windows per sample */
    size_t n;        /* samples taken */
    double *samples; /* messages per second */
    mo_stats st;
} mr_size;

typedef struct mr_state {
    const mo_options *opts;
    const mr_params *params;
    MPI_Comm pair;       /* world ranks 0 and 1 */
    int rank;            /* in pair */
    unsigned char *buf;  /* window * largest size, page-aligned, touched */
    MPI_Request *reqs;   /* window of them */
    mr_size *sizes;
    int nsizes;          /* measured (or being measured) */
    int nalloc;          /* rank 0: sizes allocated */
    uint64_t messages;   /* rank 0: messages posted, warm-up included */
    uint64_t windows;    /* rank 0: windows run, warm-up included */
} mr_state;

/* ---- the timed loop (both ranks) ---------------------------------------- */

enum { CMD_QUIT = 0, CMD_RUN = 1 };

typedef struct mr_cmd {
    int64_t op, size, iterations;
} mr_cmd;
_Static_assert(sizeof(mr_cmd) == 3 * sizeof(int64_t), "mr_cmd is sent as packed int64s");

/* Runs `iters` windows of n-byte messages; on rank 0 returns the rate in
 * messages per second (rank 1 returns 0). */
static double run_block(const mr_state *st, int n, int64_t iters)
{
    /* Locals, so the loops reload nothing after MPI calls. */
    const MPI_Comm comm = st->pair;
    const int w = (int)st->params->window;
    unsigned char *const buf = st->buf;
    MPI_Request *const reqs = st->reqs;
    const size_t stride = n > 0 ? (size_t)n : 1;
    int32_t ack = 0;
    /* Untimed: rank 1 gets the command about a latency after rank 0 sent it. */
    MPI_Barrier(comm);
    uint64_t t0 = mo_timer_now_ns();
    if (st->rank == 0) {
        for (int64_t i = 0; i < iters; i++) {
            for (int j = 0; j < w; j++)
                MPI_Isend(buf + (size_t)j * stride, n, MPI_BYTE, 1, MSG_TAG, comm, &reqs[j]);
            MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, ACK_BYTES, MPI_BYTE, 1, ACK_TAG, comm, MPI_STATUS_IGNORE);
        }
    } else {
        for (int64_t i = 0; i < iters; i++) {
            for (int j = 0; j < w; j++)
                MPI_Irecv(buf + (size_t)j * stride, n, MPI_BYTE, 0, MSG_TAG, comm, &reqs[j]);
            MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, ACK_BYTES, MPI_BYTE, 0, ACK_TAG, comm);
        }
    }
    uint64_t t1 = mo_timer_now_ns();
    if (st->rank != 0)
        return 0.0;
    double s = (double)(t1 - t0) / 1e9;
    return s > 0 ? (double)w * (double)iters / s : NAN;
}

/* Rank 0: tells rank 1 what to run, runs it, returns messages per second. */
static double block(mr_state *st, uint64_t size, long iterations)
{
    mr_cmd c = {CMD_RUN, (int64_t)size, iterations};
    MPI_Send(&c, 3, MPI_INT64_T, 1, CMD_TAG, st->pair);
    double rate = run_block(st, (int)size, iterations);
    st->windows += (uint64_t)iterations;
    st->messages += (uint64_t)iterations * (uint64_t)st->params->window;
    return rate;
}

/* Rank 1: follows rank 0's commands until told to quit. */
static void serve(mr_state *st)
{
    for (;;) {
        mr_cmd c;
        MPI_Recv(&c, 3, MPI_INT64_T, 0, CMD_TAG, st->pair, MPI_STATUS_IGNORE);
        if (c.op == CMD_QUIT)
            return;
        run_block(st, (int)c.size, c.iterations);
    }
}

/* ---- the method (rank 0) -------------------------------------------------- */

/* Windows per sample so that one sample lasts about --sample-ms. */
static long choose_iterations(const mo_options *o, long window, double rate)
{
    if (o->iters > 0)
        return o->iters;
    if (!(rate > 0) || !isfinite(rate))
        return o->min_iters;
    return mo_clamp_iters(o, ceil(o->sample_ms / 1000.0 * rate / (double)window));
}

static void measure_size(mr_state *st, mr_size *sz)
{
    const mo_options *o = st->opts;
    /* Warm-up: first contact in one window, then the rest of --warmup in a
     * few blocks; the fastest block estimates the rate (noise only slows). */
    double est = block(st, sz->bytes, 1);
    long more = o->warmup > 1 ? o->warmup - 1 : 0;
    long nblocks = more < WARM_BLOCKS ? more : WARM_BLOCKS;
    for (long b = 0; b < nblocks; b++) {
        double r = block(st, sz->bytes, more / nblocks);
        if (isfinite(r) && (!isfinite(est) || r > est))
            est = r;
    }
    sz->iterations = choose_iterations(o, st->params->window, est);
    for (long k = 0; k < o->reps; k++)
        sz->samples[sz->n++] = block(st, sz->bytes, sz->iterations);
    mo_stats_summarize_or_nan(sz->samples, sz->n, &sz->st);
}

/* ---- output ------------------------------------------------------------- */

/* One of "sizes". */
static void write_size(mo_json *w, const void *item, const void *ctx)
{
    const mr_size *sz = item;
    const mr_state *st = ctx;
    mo_json_kv_uint64(w, "bytes", sz->bytes);
    mo_json_kv_int64(w, "iterations", sz->iterations);
    mo_json_kv_int64(w, "messages_per_sample", sz->iterations * st->params->window);
    mo_json_kv_double(w, "msgs_per_s", sz->st.median);
    mo_json_kv_double(w, "mb_per_s", sz->st.median * (double)sz->bytes / 1e6);
    mo_json_stats(w, "rate", &sz->st);
    mo_json_kv_doubles(w, "samples_msgs_per_s", sz->samples, sz->n);
}

static void write_results(mo_json *w, const void *ctx)
{
    const mr_state *st = ctx;
    mo_json_kv_int64(w, "window", st->params->window);
    mo_json_kv_int64(w, "ack_bytes", ACK_BYTES);
    mo_json_objects(w, "sizes", st->sizes, sizeof *st->sizes, (size_t)st->nsizes, write_size, st);
    mo_json_kv_uint64(w, "messages_total", st->messages);
    mo_json_kv_uint64(w, "windows_total", st->windows);
}

/* ---- the kernel ----------------------------------------------------------- */

static void mr_teardown(mo_bench *b, void *ctx)
{
    mr_state *st = ctx;
    (void)b;
    for (int i = 0; i < st->nalloc; i++)
        free(st->sizes[i].samples);
    free(st->sizes);
    free(st->reqs);
    free(st->buf);
}

/* The window of the largest size is allocated at once on both ranks. */
static int mr_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    const mr_params *p = ctx;
    const uint64_t largest = o->sizes.v[o->sizes.n - 1];
    if ((largest > 0 ? largest : 1) > (uint64_t)(1u << 30) / (uint64_t)p->window) {
        snprintf(err, errlen, "--window %ld x %llu bytes exceeds 1 GiB of message buffers", p->window,
                 (unsigned long long)largest);
        return -1;
    }
    return 0;
}

/* Buffers on the pair, the sizes' samples on rank 0; ranks >= 2 take no part. */
static void mr_setup(mo_bench *b, void *ctx)
{
    mr_state *st = ctx;
    const mo_options *o = &b->opts;
    st->opts = o;
    st->pair = b->comm;
    const uint64_t largest = o->sizes.v[o->sizes.n - 1];
    const size_t slot = largest > 0 ? (size_t)largest : 1;
    const size_t bytes = slot * (size_t)st->params->window;
    if (st->pair != MPI_COMM_NULL) {
        MPI_Comm_rank(st->pair, &st->rank);
        st->buf = mo_page_alloc(bytes);
        st->reqs = malloc((size_t)st->params->window * sizeof *st->reqs);
        b->have = st->buf && st->reqs;
        if (st->buf)
            memset(st->buf, b->rank + 1, bytes);
    }
    if (b->rank == 0) {
        st->sizes = calloc(o->sizes.n, sizeof *st->sizes);
        st->nalloc = st->sizes ? (int)o->sizes.n : 0;
        for (int i = 0; i < st->nalloc; i++) {
            st->sizes[i].bytes = o->sizes.v[i];
            st->sizes[i].samples = malloc((size_t)o->reps * sizeof *st->sizes[i].samples);
            if (!st->sizes[i].samples)
                b->have = 0;
        }
        if (!st->sizes)
            b->have = 0;
    }
    /* The work loop is not used by the method; the result format records the CPU speed. */
    snprintf(b->no_alloc, sizeof b->no_alloc, "cannot allocate %zu bytes of message buffers on every rank",
             bytes);
    b->ready.no_alloc = b->no_alloc;
    b->ready.quiet = true;
}

static int mr_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    mr_state *st = ctx;
    if (i == 0)
        mo_verbose(&b->opts, "%-10s%-12s%-14s%-14s%-14s\n", "bytes", "windows", "msgs/s", "min", "max");
    mr_size *sz = &st->sizes[st->nsizes++];
    measure_size(st, sz);
    mo_verbose(&b->opts, "%-10llu%-12ld%-14.0f%-14.0f%-14.0f\n", (unsigned long long)sz->bytes, sz->iterations,
               sz->st.median, sz->st.min, sz->st.max);
    snprintf(label, labellen, "%llu B", (unsigned long long)sz->bytes);
    return MO_POINT_OK;
}

static void mr_serve(mo_bench *b, void *ctx)
{
    mr_state *st = ctx;
    (void)b;
    if (st->pair != MPI_COMM_NULL && st->rank == 1)
        serve(st);
}

static void mr_quit(mo_bench *b, void *ctx)
{
    mr_state *st = ctx;
    (void)b;
    mr_cmd quit = {CMD_QUIT, 0, 0};
    MPI_Send(&quit, 3, MPI_INT64_T, 1, CMD_TAG, st->pair);
}

int main(int argc, char **argv)
{
    static mr_params params = {.window = DEFAULT_WINDOW};
    static mr_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = mr_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, mr_check, NULL}, .pair = true,
        .results = write_results, .state = &st, .setup = mr_setup, .teardown = mr_teardown,
        .mode = MO_BENCH_LEAD, .unit = "sizes", .npoints = mo_bench_nsizes, .point = mr_point,
        .serve = mr_serve, .quit = mr_quit, MO_KERNEL_FIELDS(mr_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
