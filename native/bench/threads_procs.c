/* threads_procs.c - mo_threads_procs: the message rate of 0-byte MPI_Send
 * calls to MPI_PROC_NULL from 1..k processes (MPI_THREAD_SINGLE) or from
 * 1..k threads of one process (MPI_THREAD_MULTIPLE); Balaji et al., "threads
 * against processes".
 *
 * One launch measures one thread level (chosen before MPI_Init_thread, so
 * the harness launches the program twice: k ranks with --thread-level single
 * and 1 rank with --thread-level multiple --workers k; docs/benchmarks.md).
 * A sample for c workers: the workers start together (MPI_Barrier between
 * processes, a pthread barrier between threads), each times N calls of
 * MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, ...), and the sample's rate is
 * c * N / (the slowest worker's time). Samples of all worker counts are
 * interleaved (rep 1: c = 1..k, rep 2: c = 1..k, ...), so that the counts are
 * measured side by side under the same machine load. N is chosen once from a
 * one-worker warm-up so that a sample lasts about --sample-ms. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_main.h"

#define BENCH "threads-procs"
#define MAX_WORKERS 256
#define MAX_CALLS 100000000L

typedef struct tp_params {
    int multiple; /* --thread-level: 0 single, 1 multiple */
    long workers; /* 0: default */
} tp_params;

static const char *const LEVEL_NAMES[] = {"single", "multiple"};

static const mo_field tp_fields[] = {
    MO_FIELD_CHOICE_OF("thread-level", tp_params, multiple, LEVEL_NAMES, NULL, 2,
                       "--thread-level must be single or multiple (got '%s')"),
    MO_FIELD_LONG_OF("workers", tp_params, workers, 1, MAX_WORKERS),
};

static void tp_usage(FILE *f)
{
    fprintf(f, "  --thread-level L     single: 1..k processes (k = ranks); multiple: 1..k threads\n"
               "                       of rank 0 (default single)\n"
               "  --workers K          threads for --thread-level multiple (default: online CPUs)\n");
}

/* ---- state --------------------------------------------------------------- */

typedef struct tp_count {
    size_t n;
    double *samples; /* messages per second */
    double *share;   /* per sample: the lowest CPU share of its workers */
    mo_stats st;
} tp_count;

typedef struct tp_state {
    const mo_options *opts;
    tp_params *params; /* tp_setup() sets the default --workers */
    int provided;
    int k;          /* worker counts 1..k */
    long calls;     /* MPI_Send calls per worker per sample */
    long cores;
    tp_count *counts; /* k of them (rank 0) */
    long reps_done;
    /* threads */
    pthread_barrier_t start, end;
    int active;     /* workers taking part in the current sample */
    bool quit;
    double elapsed[MAX_WORKERS];
    double share[MAX_WORKERS];
} tp_state;

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "unknown";
    }
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The timed loop: seconds for n sends to MPI_PROC_NULL; *share: the calling thread's
 * CPU time over that wall time (below 1: it was descheduled, the core was contended). */
static double send_loop(long n, double *share)
{
    char dummy = 0;
    double c0 = thread_cpu_s();
    uint64_t t0 = mo_timer_now_ns();
    for (long i = 0; i < n; i++)
        MPI_Send(&dummy, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    double wall = (double)(mo_timer_now_ns() - t0) / 1e9;
    double cpu = thread_cpu_s() - c0;
    if (share)
        *share = wall > 0 ? cpu / wall : NAN;
    return wall;
}

static void *worker_main(void *arg)
{
    tp_state *st = ((void **)arg)[0];
    int id = (int)(intptr_t)((void **)arg)[1];
    for (;;) {
        pthread_barrier_wait(&st->start);
        if (st->quit)
            return NULL;
        if (id < st->active)
            st->elapsed[id] = send_loop(st->calls, &st->share[id]);
        pthread_barrier_wait(&st->end);
    }
}

/* Threads mode (rank 0, threads 1..k-1 already waiting): one sample of c threads. */
static double thread_sample(tp_state *st, int c, double *share)
{
    st->active = c;
    pthread_barrier_wait(&st->start);
    st->elapsed[0] = send_loop(st->calls, &st->share[0]);
    pthread_barrier_wait(&st->end);
    double slowest = 0;
    *share = 1.0;
    for (int i = 0; i < c; i++) {
        slowest = st->elapsed[i] > slowest ? st->elapsed[i] : slowest;
        *share = st->share[i] < *share ? st->share[i] : *share;
    }
    return slowest > 0 ? (double)c * (double)st->calls / slowest : NAN;
}

/* Processes mode (every rank): one sample of ranks 0..c-1; rate on rank 0. */
static double process_sample(tp_state *st, int rank, int c, double *share)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double my_share = 1.0;
    double el = rank < c ? send_loop(st->calls, &my_share) : 0.0;
    double slowest = 0;
    MPI_Reduce(&el, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_share, share, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    return slowest > 0 ? (double)c * (double)st->calls / slowest : NAN;
}

/* ---- output ---------------------------------------------------------------- */

static void write_results(mo_json *w, const void *ctx)
{
    const tp_state *st = ctx;
    mo_json_key(w, "launches");
    mo_json_begin_array(w);
    mo_json_begin_object(w);
    mo_json_kv_string(w, "workers_kind", st->params->multiple ? "threads" : "processes");
    mo_json_kv_string(w, "requested", st->params->multiple ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_SINGLE");
    mo_json_kv_string(w, "provided", level_name(st->provided));
    mo_json_kv_string(w, "call", "MPI_Send(0 B, MPI_PROC_NULL)");
    mo_json_kv_int64(w, "calls_per_worker", st->calls);
    mo_json_kv_int64(w, "online_cpus", st->cores);
    mo_json_kv_int64(w, "reps_done", st->reps_done);
    mo_json_key(w, "counts");
    mo_json_begin_array(w);
    for (int c = 0; st->counts && c < st->k; c++) {
        const tp_count *tc = &st->counts[c];
        mo_json_begin_object(w);
        mo_json_kv_int64(w, "workers", c + 1);
        mo_json_kv_double(w, "msgs_per_s", tc->st.median);
        mo_json_stats(w, "rate", &tc->st);
        mo_json_kv_doubles(w, "samples_msgs_per_s", tc->samples, tc->n);
        mo_json_kv_doubles(w, "cpu_share_min", tc->share, tc->n);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    mo_json_end_object(w);
    mo_json_end_array(w);
}

static void summarize_counts(tp_state *st)
{
    for (int c = 0; st->counts && c < st->k; c++) {
        tp_count *tc = &st->counts[c];
        mo_stats_summarize_or_nan(tc->samples, tc->n, &tc->st);
    }
}

/* ---- main ------------------------------------------------------------------ */

/* The thread level must be known before MPI_Init_thread: --thread-level
 * multiple asks for MPI_THREAD_MULTIPLE. */
static int tp_thread_level(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--thread-level") == 0 && strcmp(argv[i + 1], "multiple") == 0)
            return MPI_THREAD_MULTIPLE;
    return MPI_THREAD_SINGLE;
}

/* The worker counts and, on rank 0, their sample buffers and warnings. */
static void tp_setup(mo_bench *b, void *ctx)
{
    tp_state *st = ctx;
    tp_params *params = st->params;
    st->opts = &b->opts;
    st->provided = b->provided;
    st->cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (params->workers == 0)
        params->workers = params->multiple ? (st->cores > 0 ? st->cores : 1) : b->nranks;
    st->k = params->multiple ? (int)params->workers : b->nranks;
    if (params->multiple && st->provided < MPI_THREAD_MULTIPLE)
        st->k = 1; /* more threads may not call MPI */
    if (b->rank == 0) {
        st->counts = calloc((size_t)st->k, sizeof *st->counts);
        for (int c = 0; st->counts && c < st->k; c++)
            if (!(st->counts[c].samples = malloc((size_t)b->opts.reps * sizeof(double))) ||
                !(st->counts[c].share = malloc((size_t)b->opts.reps * sizeof(double))))
                b->have = 0;
        if (!st->counts)
            b->have = 0;
        /* The warnings are only written with the "running" document, after the probe succeeded. */
        if (params->multiple && st->provided < MPI_THREAD_MULTIPLE)
            mo_result_warn(&b->doc, "MPI_THREAD_MULTIPLE requested, %s provided: measured 1 thread only",
                           level_name(st->provided));
        if (st->k > st->cores)
            mo_result_warn(&b->doc, "%d %s on %ld online CPUs: oversubscribed above %ld", st->k,
                           params->multiple ? "threads" : "processes", st->cores, st->cores);
    }
    b->ready.no_alloc = "cannot allocate the sample buffers";
}

/* Calls per sample from a one-worker warm-up on rank 0 (doubling until a
 * block lasts 1 ms); every rank learns it. */
static long calls_per_sample(const mo_bench *b)
{
    long calls = 1000;
    if (b->rank == 0) {
        double t = send_loop(calls, NULL);
        while (t < 1e-3 && calls < MAX_CALLS / 2) {
            calls *= 2;
            t = send_loop(calls, NULL);
        }
        double rate = t > 0 ? (double)calls / t : 1e6;
        double want = ceil(b->opts.sample_ms / 1000.0 * rate);
        if (b->opts.iters > 0)
            want = (double)b->opts.iters;
        calls = want < 1000 ? 1000 : want > MAX_CALLS ? MAX_CALLS : (long)want;
    }
    MPI_Bcast(&calls, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return calls;
}

/* The reps, each over the worker counts 1..k, until the time limit: the
 * samples are not a flat point list (threads or processes per rep). */
static int tp_measure(mo_bench *b, void *ctx)
{
    tp_state *st = ctx;
    const tp_params *params = st->params;
    const mo_options *opts = &b->opts;
    const int wrank = b->rank;
    st->calls = calls_per_sample(b);

    /* Threads mode: rank 0 starts k-1 extra threads that wait on a barrier. */
    pthread_t tids[MAX_WORKERS];
    void *targs[MAX_WORKERS][2];
    int nthreads = 0;
    char err[128] = "";
    bool threads = params->multiple && wrank == 0;
    if (threads) {
        pthread_barrier_init(&st->start, NULL, (unsigned)st->k);
        pthread_barrier_init(&st->end, NULL, (unsigned)st->k);
        for (int i = 1; i < st->k; i++) {
            targs[i][0] = st;
            targs[i][1] = (void *)(intptr_t)i;
            if (pthread_create(&tids[i], NULL, worker_main, targs[i]) != 0)
                break;
            nthreads++;
        }
        if (nthreads != st->k - 1)
            snprintf(err, sizeof err, "could start only %d of %d threads", nthreads + 1, st->k);
    }
    /* Threads that did start wait on barriers sized for k: they end with the process. */
    const bool threads_ok = !threads || nthreads == st->k - 1;

    const uint64_t t_start = mo_timer_now_ns();
    bool time_up = false;
    int status = 0;
    if (threads_ok) {
        for (long r = 0; r < opts->reps; r++) {
            int stop = 0;
            if (wrank == 0 && mo_time_up(opts, t_start))
                stop = 1;
            if (!params->multiple)
                MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop) {
                time_up = true;
                break;
            }
            for (int c = 1; c <= st->k; c++) {
                double rate, share = NAN;
                if (params->multiple) {
                    if (wrank != 0)
                        continue;
                    rate = st->k == 1 ? (double)st->calls / send_loop(st->calls, &share)
                                      : thread_sample(st, c, &share);
                } else {
                    rate = process_sample(st, wrank, c, &share);
                }
                if (wrank == 0) {
                    tp_count *tc = &st->counts[c - 1];
                    tc->share[tc->n] = share;
                    tc->samples[tc->n++] = rate;
                }
            }
            st->reps_done = r + 1;
            if (wrank == 0)
                mo_progress(opts->progress, (int)(r + 1), (int)opts->reps, "rep %ld", r + 1);
        }
    } else {
        status = 1;
    }
    if (threads && threads_ok) {
        if (st->k > 1) {
            st->quit = true;
            pthread_barrier_wait(&st->start);
        }
        for (int i = 1; i <= nthreads; i++)
            pthread_join(tids[i], NULL);
        pthread_barrier_destroy(&st->start);
        pthread_barrier_destroy(&st->end);
    }
    if (wrank != 0)
        return status;
    summarize_counts(st);
    if (opts->verbose)
        for (int c = 0; c < st->k; c++)
            printf("%d %s: %.0f msgs/s\n", c + 1, params->multiple ? "threads" : "processes",
                   st->counts[c].st.median);
    if (time_up)
        mo_result_warn(&b->doc, "time limit of %g s reached after %ld of %ld reps", opts->time_limit_s,
                       st->reps_done, opts->reps);
    if (status != 0) {
        fprintf(stderr, "mo_%s: error: %s\n", b->program, err);
        fflush(stderr);
        return status;
    }
    return mo_result_complete(&b->doc, b->program, write_results, st);
}

static void tp_teardown(mo_bench *b, void *ctx)
{
    tp_state *st = ctx;
    (void)b;
    for (int c = 0; st->counts && c < st->k; c++) {
        free(st->counts[c].samples);
        free(st->counts[c].share);
    }
    free(st->counts);
}

int main(int argc, char **argv)
{
    static tp_params params = {.multiple = 0, .workers = 0};
    static tp_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = tp_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {"threads_procs", "0", &ext, 1, false, NULL, NULL}, .benchmark = BENCH,
        .results = write_results, .state = &st, .thread_level = tp_thread_level, .setup = tp_setup,
        .measure = tp_measure, .teardown = tp_teardown, MO_KERNEL_FIELDS(tp_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
