/* sync_overlap.c - mo_sync_overlap: synchronization-computation overlap and
 * the message-size sweep that finds the eager / buffer limit
 * (Colmenares et al., §III-A and §IV-A).
 *
 * Two sample kinds per message size, both sender-first (the message is sent
 * before the receive is posted, as in the paper), plus the work alone:
 *
 *   send-test (does the send complete without the receiver?): rank 0 calls
 *     MPI_Isend, does W of calibrated work, then MPI_Test up to MAX_TESTS
 *     times; only then does it raise a shared-memory flag (shmsync.h) that
 *     rank 1 spins on with no MPI call, so rank 1 can not have posted the
 *     receive (nor entered the MPI library) before rank 0's tests ended.
 *     Rank 1 then does W of work (the receiver's delay) and MPI_Recv; rank 0
 *     times its MPI_Wait. completed = a test returned true: the MPI buffered
 *     the message (eager); not completed: MPI_Wait lasts about the
 *     receiver's delay (rendezvous).
 *   seed (the paper's test, its Figure 1): after a barrier rank 0 does MPI_Isend, W of
 *     work, MPI_Wait (T_P0); rank 1 does W/4 of work, then a blocking MPI_Recv
 *     (T_P1, barrier to received). T_P1/T_P0 near 1/4: the message was
 *     delivered without rank 0's further participation; near 1: not. Since
 *     timings on a loaded machine blur that ratio, rank 1 also raises a
 *     shared-memory flag once its receive returned, and rank 0, after its
 *     work, watches it (no MPI call) until rank 1 has had as long as rank 0's
 *     Isend and work took, counted from rank 1's own start, before its
 *     MPI_Wait: set means the receive completed while rank 0 made no MPI call
 *     (seed_alone; exact in that direction).
 *   alone: rank 0's W of work with no message in flight (compute slowdown).
 *
 * The sweep: the --sizes (powers of two by default), then bisection between
 * the last size whose sends completed without the receiver and the first
 * whose did not, until they are --resolution bytes apart or --refine-steps
 * are spent; [last_yes, first_no] is the limit's uncertainty interval.
 * The MPI's control variables whose names suggest an eager / rendezvous /
 * cell-size threshold are read back through MPI_T and written out. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"
#include "shmsync.h"

#define BENCH "sync-overlap"
#define PROGRAM "sync_overlap"
#define DEFAULT_SIZES "1:1M"
#define TAG_DATA 300
#define TAG_TP1 301
#define MAX_TESTS 16
#define MAX_POINTS 256
#define MAX_CVARS 48
#define DEFAULT_SAMPLES 15
#define QUICK_SAMPLES 7
#define DEFAULT_WORK_US 400.0
#define QUICK_WORK_US 200.0
#define DEFAULT_REFINE 24
#define QUICK_REFINE 6

enum { SLOT_GO = 0, SLOT_RECEIVED = 1, SLOT_START_NS = 2, SLOT_STARTED = 3 };
enum { KIND_TEST = 0, KIND_SEED = 1, KIND_ALONE = 2 };

typedef struct so_params {
    long samples, refine_steps, resolution;
    double work_us;
} so_params;

/* --resolution 0 (its default) is 1. */
static int so_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    (void)quick;
    (void)err;
    (void)errlen;
    so_params *p = ctx;
    if (p->resolution == 0)
        p->resolution = 1;
    return 0;
}

static const mo_field so_fields[] = {
    MO_FIELD_LONG_Q("samples", so_params, samples, 1, 10000, DEFAULT_SAMPLES, QUICK_SAMPLES),
    MO_FIELD_DOUBLE_Q("work-us", so_params, work_us, 1.0, 1e6, DEFAULT_WORK_US, QUICK_WORK_US),
    MO_FIELD_LONG_Q("refine-steps", so_params, refine_steps, 0, 64, DEFAULT_REFINE, QUICK_REFINE),
    MO_FIELD_LONG_OF("resolution", so_params, resolution, 1, 1L << 30),
};

static void so_usage(FILE *f)
{
    fprintf(f,
            "  --samples K          samples of each kind per size (default %d; --quick %d)\n"
            "  --work-us W          rank 0's calibrated work per sample in us (default %g; --quick %g)\n"
            "  --refine-steps N     most bisection steps after the coarse sweep (default %d; --quick %d)\n"
            "  --resolution B       stop refining when the limit is known to B bytes (default 1)\n"
            "  (--sizes: the coarse sweep, default %s)\n",
            DEFAULT_SAMPLES, QUICK_SAMPLES, DEFAULT_WORK_US, QUICK_WORK_US, DEFAULT_REFINE,
            QUICK_REFINE, DEFAULT_SIZES);
}

/* ---- state ------------------------------------------------------------- */

typedef struct so_point {
    long bytes;
    const char *phase; /* "coarse" or "refine" */
    size_t n;
    double *isend_ns, *test_work_ns, *wait_ns, *tests; /* send-test; tests: 0 = not completed */
    double *tp0_ns, *tp1_ns, *ratio, *seed_alone;     /* seed */
    double *alone_ns;                                  /* work alone */
    double completed_fraction, seed_alone_fraction;
    bool yes;
} so_point;

typedef struct so_state {
    const so_params *params;
    MPI_Comm comm, ctl;
    mo_shm shm;
    int rank;
    long max_bytes;
    unsigned char *buf;
    uint64_t units;
    so_point points[MAX_POINTS];
    int npoints;
    int64_t seq;
    /* the sweep's verdict */
    long last_yes, first_no; /* -1: none */
    int refine_done;
    bool monotonic;
    mo_cvar cvars[MAX_CVARS];
    int ncvars;
    char cvar_note[128];
    /* across nodes: rank 0's net.ipv4.tcp_wmem and rank 1's tcp_rmem (min,
     * default, max bytes; -1 unknown), each read in its own network namespace */
    int64_t tcp_mem[2][3];
} so_state;

typedef struct so_cmd {
    int64_t op, bytes, kind, units;
} so_cmd;
enum { CMD_SAMPLE = MO_CMD_QUIT + 1 };

/* One sample of `kind`; rank 0 fills out[0..3]. */
static void sample(so_state *st, int bytes, int kind, uint64_t units, double *out)
{
    const int64_t seq = ++st->seq;
    MPI_Barrier(st->ctl);
    if (kind == KIND_ALONE) {
        if (st->rank == 0) {
            uint64_t t0 = mo_timer_now_ns();
            mo_work(units);
            out[0] = (double)(mo_timer_now_ns() - t0);
        }
        return;
    }
    if (kind == KIND_TEST) {
        if (st->rank == 0) {
            MPI_Request req;
            int flag = 0, ntests = 0;
            uint64_t t0 = mo_timer_now_ns();
            MPI_Isend(st->buf, bytes, MPI_BYTE, 1, TAG_DATA, st->comm, &req);
            uint64_t t1 = mo_timer_now_ns();
            mo_work(units);
            uint64_t t2 = mo_timer_now_ns();
            while (!flag && ntests < MAX_TESTS) {
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                ntests++;
            }
            mo_shm_set(&st->shm, 0, SLOT_GO, seq);
            uint64_t t3 = mo_timer_now_ns();
            if (!flag)
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            uint64_t t4 = mo_timer_now_ns();
            out[0] = (double)(t1 - t0);
            out[1] = (double)(t2 - t1);
            out[2] = (double)(t4 - t3);
            out[3] = flag ? ntests : 0;
        } else if (st->rank == 1) {
            mo_shm_wait(&st->shm, 0, SLOT_GO, seq);
            mo_work(units);
            MPI_Recv(st->buf, bytes, MPI_BYTE, 0, TAG_DATA, st->comm, MPI_STATUS_IGNORE);
        }
        return;
    }
    /* KIND_SEED */
    if (st->rank == 0) {
        MPI_Request req;
        uint64_t t0 = mo_timer_now_ns();
        MPI_Isend(st->buf, bytes, MPI_BYTE, 1, TAG_DATA, st->comm, &req);
        mo_work(units);
        /* Grace, still without an MPI call: rank 1 gets as long from its own
         * start (a shared-memory timestamp; one node, one CLOCK_MONOTONIC) as
         * rank 0's Isend and work took, however late the OS let it leave the
         * barrier. A receive that needs rank 0 can not end in it, so a set
         * flag still means "without the sender". The grace is no part of
         * T_P0, nor of T_P1 when it expired. */
        const uint64_t t1 = mo_timer_now_ns(), span = t1 - t0;
        bool alone;
        /* Across nodes (the side channel) rank 1's clock is not ours: its start
         * counts from when its STARTED flag reached us, later than it was, so
         * the grace is only longer. */
        const bool remote = mo_shm_remote(&st->shm);
        uint64_t seen_start = 0;
        while (!(alone = mo_shm_get(&st->shm, 1, SLOT_RECEIVED) >= seq)) {
            if (mo_shm_get(&st->shm, 1, SLOT_STARTED) >= seq) {
                if (!seen_start)
                    seen_start = remote ? mo_timer_now_ns()
                                        : (uint64_t)mo_shm_get(&st->shm, 1, SLOT_START_NS);
                if (mo_timer_now_ns() - seen_start >= span)
                    break;
            }
            sched_yield();
        }
        const uint64_t t2 = mo_timer_now_ns();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double tp0 = (double)(mo_timer_now_ns() - t0 - (t2 - t1)), tp1 = NAN;
        MPI_Recv(&tp1, 1, MPI_DOUBLE, 1, TAG_TP1, st->ctl, MPI_STATUS_IGNORE);
        out[0] = tp0;
        out[1] = alone ? tp1 : tp1 - (double)(t2 - t1);
        out[2] = alone;
    } else if (st->rank == 1) {
        uint64_t t0 = mo_timer_now_ns();
        mo_shm_set(&st->shm, 1, SLOT_START_NS, (int64_t)t0);
        mo_shm_set(&st->shm, 1, SLOT_STARTED, seq);
        mo_work(units / 4);
        MPI_Recv(st->buf, bytes, MPI_BYTE, 0, TAG_DATA, st->comm, MPI_STATUS_IGNORE);
        double tp1 = (double)(mo_timer_now_ns() - t0);
        mo_shm_set(&st->shm, 1, SLOT_RECEIVED, seq);
        MPI_Send(&tp1, 1, MPI_DOUBLE, 0, TAG_TP1, st->ctl);
    }
}

static void read_tcp_mem(const char *path, int64_t out[3])
{
    long long v[3] = {-1, -1, -1};
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lld %lld %lld", &v[0], &v[1], &v[2]) != 3)
            v[0] = v[1] = v[2] = -1;
        fclose(f);
    }
    for (int i = 0; i < 3; i++)
        out[i] = v[i];
}

/* Collective: rank 0 learns both ends' socket buffer limits. */
static void socket_buffers(so_state *st, int wrank)
{
    if (wrank == 0) {
        read_tcp_mem("/proc/sys/net/ipv4/tcp_wmem", st->tcp_mem[0]);
        MPI_Recv(st->tcp_mem[1], 3, MPI_INT64_T, 1, TAG_TP1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (wrank == 1) {
        int64_t mine[3];
        read_tcp_mem("/proc/sys/net/ipv4/tcp_rmem", mine);
        MPI_Send(mine, 3, MPI_INT64_T, 0, TAG_TP1, MPI_COMM_WORLD);
    }
}

static void command(so_state *st, so_cmd c, double *out)
{
    mo_cmd_send(st->ctl, &c, sizeof c);
    if (c.op == CMD_SAMPLE)
        sample(st, (int)c.bytes, (int)c.kind, (uint64_t)c.units, out);
}

/* The other ranks: each of rank 0's samples. */
static void serve_cmd(void *ctx, const void *cmd)
{
    const so_cmd *c = cmd;
    double out[4];
    sample(ctx, (int)c->bytes, (int)c->kind, (uint64_t)c->units, out);
}

static int point_alloc(so_point *pt, long samples)
{
    double **arrays[] = {&pt->isend_ns, &pt->test_work_ns, &pt->wait_ns,    &pt->tests,
                         &pt->tp0_ns,   &pt->tp1_ns,       &pt->ratio,      &pt->alone_ns,
                         &pt->seed_alone};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (!(*arrays[i] = calloc((size_t)samples, sizeof(double))))
            return -1;
    return 0;
}

static void point_free(so_point *pt)
{
    free(pt->isend_ns);
    free(pt->test_work_ns);
    free(pt->wait_ns);
    free(pt->tests);
    free(pt->tp0_ns);
    free(pt->tp1_ns);
    free(pt->ratio);
    free(pt->alone_ns);
    free(pt->seed_alone);
}

/* Rank 0: measures one size; NULL when out of points or memory. */
static so_point *measure(so_state *st, long bytes, const char *phase)
{
    if (st->npoints >= MAX_POINTS)
        return NULL;
    so_point *pt = &st->points[st->npoints];
    memset(pt, 0, sizeof *pt);
    if (point_alloc(pt, st->params->samples) != 0) {
        point_free(pt);
        return NULL;
    }
    st->npoints++;
    pt->bytes = bytes;
    pt->phase = phase;
    double out[4];
    /* one untimed round of each kind */
    for (int kind = 0; kind < 3; kind++)
        command(st, (so_cmd){CMD_SAMPLE, bytes, kind, (int64_t)st->units}, out);
    int completed = 0, seed_alone = 0;
    for (long k = 0; k < st->params->samples; k++) {
        for (int j = 0; j < 3; j++) {
            int kind = (int)((k + j) % 3);
            command(st, (so_cmd){CMD_SAMPLE, bytes, kind, (int64_t)st->units}, out);
            if (kind == KIND_TEST) {
                pt->isend_ns[k] = out[0];
                pt->test_work_ns[k] = out[1];
                pt->wait_ns[k] = out[2];
                pt->tests[k] = out[3];
                completed += out[3] > 0;
            } else if (kind == KIND_SEED) {
                pt->tp0_ns[k] = out[0];
                pt->tp1_ns[k] = out[1];
                pt->ratio[k] = out[0] > 0 ? out[1] / out[0] : NAN;
                pt->seed_alone[k] = out[2];
                seed_alone += out[2] > 0;
            } else {
                pt->alone_ns[k] = out[0];
            }
        }
    }
    pt->n = (size_t)st->params->samples;
    pt->completed_fraction = (double)completed / (double)pt->n;
    pt->seed_alone_fraction = (double)seed_alone / (double)pt->n;
    pt->yes = 2 * completed >= (int)pt->n;
    return pt;
}

/* [last_yes, first_no] from the points measured so far, ordered by size:
 * last_yes is the largest size below which every point is a yes. */
static void verdict(so_state *st)
{
    long last_yes = -1, first_no = -1;
    bool monotonic = true;
    for (int i = 0; i < st->npoints; i++) /* the smallest "no" size */
        if (!st->points[i].yes && (first_no < 0 || st->points[i].bytes < first_no))
            first_no = st->points[i].bytes;
    for (int i = 0; i < st->npoints; i++) {
        const so_point *p = &st->points[i];
        if (p->yes && (first_no < 0 || p->bytes < first_no) && p->bytes > last_yes)
            last_yes = p->bytes;
        if (p->yes && first_no >= 0 && p->bytes > first_no)
            monotonic = false;
    }
    st->last_yes = last_yes;
    st->first_no = first_no;
    st->monotonic = monotonic;
}

/* ---- output ------------------------------------------------------------- */

static void write_stats(mo_json *w, const char *key, const double *x, size_t n)
{
    mo_stats s;
    mo_stats_summarize_or_nan(x, n, &s);
    mo_json_stats(w, key, &s);
}

/* One of "points". */
static void write_point(mo_json *w, const void *item, const void *ctx)
{
    const so_point *p = item;
    (void)ctx;
    mo_json_kv_int64(w, "bytes", p->bytes);
    mo_json_kv_string(w, "phase", p->phase);
    mo_json_kv_double(w, "completed_fraction", p->completed_fraction);
    mo_json_kv_bool(w, "completed", p->yes);
    mo_json_kv_doubles(w, "tests", p->tests, p->n);
    mo_json_kv_double(w, "seed_alone_fraction", p->seed_alone_fraction);
    mo_json_kv_doubles(w, "seed_alone", p->seed_alone, p->n);
    const struct {
        const char *key;
        const double *x;
    } summaries[] = {
        {"isend_ns", p->isend_ns}, {"wait_ns", p->wait_ns}, {"work_ns", p->test_work_ns},
        {"alone_ns", p->alone_ns}, {"tp0_ns", p->tp0_ns}, {"tp1_ns", p->tp1_ns},
        {"tp1_ratio", p->ratio},
    };
    for (size_t i = 0; i < sizeof summaries / sizeof summaries[0]; i++)
        write_stats(w, summaries[i].key, summaries[i].x, p->n);
    mo_json_kv_doubles(w, "wait_samples_ns", p->wait_ns, p->n);
    mo_json_kv_doubles(w, "work_samples_ns", p->test_work_ns, p->n);
    mo_json_kv_doubles(w, "alone_samples_ns", p->alone_ns, p->n);
    mo_json_kv_doubles(w, "tp1_ratio_samples", p->ratio, p->n);
}

static void write_results(mo_json *w, const void *ctx)
{
    const so_state *st = ctx;
    mo_json_kv_string(w, "order", "sender-first");
    mo_json_kv_string(w, "receiver_hold", mo_shm_remote(&st->shm)
                                              ? "side-channel flag (TCP, ranks on two nodes)"
                                              : "shared-memory flag");
    if (mo_shm_remote(&st->shm)) {
        /* what the kernel may hold of a message while no MPI call runs */
        mo_json_key(w, "socket_buffers");
        mo_json_begin_object(w);
        mo_json_key(w, "sender_tcp_wmem");
        mo_json_begin_array(w);
        for (int i = 0; i < 3; i++)
            mo_json_int64(w, st->tcp_mem[0][i]);
        mo_json_end_array(w);
        mo_json_key(w, "receiver_tcp_rmem");
        mo_json_begin_array(w);
        for (int i = 0; i < 3; i++)
            mo_json_int64(w, st->tcp_mem[1][i]);
        mo_json_end_array(w);
        mo_json_end_object(w);
    }
    mo_json_kv_int64(w, "samples_per_point", st->params->samples);
    mo_json_kv_double(w, "work_us", st->params->work_us);
    mo_json_kv_uint64(w, "work_units", st->units);
    mo_json_kv_int64(w, "max_tests", MAX_TESTS);
    mo_json_kv_int64(w, "refine_steps_done", st->refine_done);
    mo_json_key(w, "limit");
    mo_json_begin_object(w);
    mo_json_key(w, "last_yes_bytes");
    if (st->last_yes >= 0)
        mo_json_int64(w, st->last_yes);
    else
        mo_json_null(w);
    mo_json_key(w, "first_no_bytes");
    if (st->first_no >= 0)
        mo_json_int64(w, st->first_no);
    else
        mo_json_null(w);
    mo_json_kv_bool(w, "monotonic", st->monotonic);
    mo_json_end_object(w);
    mo_cvar_json(w, st->cvars, st->ncvars, st->cvar_note);
    mo_json_objects(w, "points", st->points, sizeof *st->points, (size_t)st->npoints, write_point, NULL);
}

/* ---- main --------------------------------------------------------------- */

static void progress(so_state *st, const mo_options *opts, const so_point *pt, int done, int total)
{
    if (opts->verbose) {
        mo_stats w, r;
        mo_stats_summarize_or_nan(pt->wait_ns, pt->n, &w);
        mo_stats_summarize_or_nan(pt->ratio, pt->n, &r);
        printf("%-6s %9ld B  completed %3.0f %%  wait %10.0f ns  T_P1/T_P0 %.2f\n", pt->phase,
               pt->bytes, 100.0 * pt->completed_fraction, w.median, r.median);
        fflush(stdout);
    }
    mo_progress(opts->progress, done, total, "%s %ld B", pt->phase, pt->bytes);
    (void)st;
}

/* Rank 0, once calibrated: the work between a send and its check. */
static void so_calibrated(void *arg)
{
    mo_bench *b = arg;
    so_state *st = b->state;
    st->units = (uint64_t)ceil(st->params->work_us * b->work.units_per_us);
    if (st->units < 4)
        st->units = 4;
}

static void so_setup(mo_bench *b, void *ctx)
{
    so_state *st = ctx;
    const int wrank = b->rank;
    st->rank = wrank;
    st->last_yes = st->first_no = -1;
    st->monotonic = true;
    st->max_bytes = (long)b->opts.sizes.v[b->opts.sizes.n - 1];
    MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
    st->ctl = b->ctl;
    if (wrank == 0)
        st->ncvars = mo_cvar_read_thresholds(st->cvars, MAX_CVARS, st->cvar_note, sizeof st->cvar_note);
    if (b->have_shm && mo_shm_remote(&st->shm))
        socket_buffers(st, wrank);
    st->buf = mo_page_alloc(st->max_bytes > 0 ? (size_t)st->max_bytes : 1);
    b->have = st->buf != NULL;
    if (st->buf)
        memset(st->buf, wrank + 1, st->max_bytes > 0 ? (size_t)st->max_bytes : 1);
    b->ready.no_alloc = "cannot allocate the message buffer";
    b->ready.calibrated = so_calibrated;
    b->ready.calibrated_arg = b;
}

/* Rank 0: the sizes of --sizes, then bisection between the last size that
 * completed and the first that did not (the others serve: run_cmd). */
static int so_measure(mo_bench *b, void *ctx)
{
    so_state *st = ctx;
    const so_params *params = st->params;
    const mo_options *o = &b->opts;
    mo_warn_if_unbound(&b->doc, &b->prov, 0, 1);
    const int ncoarse = (int)o->sizes.n;
    int total = ncoarse + (int)params->refine_steps, done = 0;
    bool time_up = false, full = false;
    for (int i = 0; i < ncoarse && !time_up && !full; i++) {
        if (mo_time_up(o, b->start_ns)) {
            time_up = true;
            break;
        }
        so_point *pt = measure(st, (long)o->sizes.v[i], "coarse");
        if (!pt) {
            full = true;
            break;
        }
        progress(st, o, pt, ++done, total);
        verdict(st);
        mo_bench_running(b);
    }
    verdict(st);
    while (!time_up && !full && st->last_yes >= 0 && st->first_no >= 0 && st->refine_done < params->refine_steps &&
           st->first_no - st->last_yes > params->resolution) {
        if (mo_time_up(o, b->start_ns)) {
            time_up = true;
            break;
        }
        long mid = st->last_yes + (st->first_no - st->last_yes) / 2;
        so_point *pt = measure(st, mid, "refine");
        if (!pt) {
            full = true;
            break;
        }
        st->refine_done++;
        progress(st, o, pt, ++done, total);
        verdict(st);
        mo_bench_running(b);
    }
    mo_progress(o->progress, total, total, "done");
    mo_cmd_quit(st->ctl);
    if (time_up)
        mo_result_warn(&b->doc, "time limit of %g s reached: measured %d sizes", o->time_limit_s, st->npoints);
    if (full)
        mo_result_warn(&b->doc, "stopped at %d measured sizes (out of points or memory)", st->npoints);
    if (!st->monotonic)
        mo_result_warn(&b->doc, "a size above the first not-completing size %ld B completed again: "
                                "the limit is not a single threshold", st->first_no);
    mo_work_recheck(&b->work);
    return mo_result_complete(&b->doc, PROGRAM, write_results, st);
}

static void so_teardown(mo_bench *b, void *ctx)
{
    so_state *st = ctx;
    (void)b;
    MPI_Comm_free(&st->comm);
    for (int i = 0; i < st->npoints; i++)
        point_free(&st->points[i]);
    free(st->buf);
}

int main(int argc, char **argv)
{
    static so_params params;
    static so_state st = {.params = &params};
    static const mo_bench_options ext = {.finalize = so_finalize, .usage = so_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {PROGRAM, DEFAULT_SIZES, &ext, 2, true, NULL, NULL}, .benchmark = BENCH,
        .results = write_results, .state = &st, .shm = &st.shm, .setup = so_setup, .measure = so_measure,
        .run_cmd = serve_cmd, .teardown = so_teardown, MO_KERNEL_FIELDS(so_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
