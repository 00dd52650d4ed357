/* rma_overlap.c - mo_rma_overlap: how much of a one-sided transfer
 * computation can hide (issue 5, item 7). Rank 0 (the origin) issues
 * MPI_Put or MPI_Get of each size to rank 1 (the target), computes, and
 * completes the operation
 *   - by MPI_Win_flush inside one MPI_Win_lock_all epoch (passive target:
 *     the target takes no part; it waits in the per-iteration barrier), or
 *   - by MPI_Win_fence (active target: both ranks open and close the epoch
 *     with a fence; between the fences the target computes the same work as
 *     the origin, as in a bulk-synchronous step).
 * Per (sync, op, size), three loops of `iterations` iterations:
 *   pure:    op; completion                    -> t_pure, t_op, t_complete_alone
 *   alone:   the calibrated work only           -> t_cpu
 *   overlap: op; work; completion              -> t_overall, t_compute, t_complete
 * The work is a fixed number of calibrated units sized to t_pure (corrected
 * once from the work timed alone, as the non-blocking collectives benchmark
 * does). The overlap % is the OSU formula without tests; the analysis
 * (benchmarks/rma_overlap/analysis.py) computes it from
 * the medians written here (origin's times).
 *
 * Ranks >= 2 take no part and wait without spinning. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"

#define PROGRAM "rma_overlap"
#define BENCH "rma-overlap"
#define DEFAULT_SIZES "8,4K,64K,1M"
#define CALIBRATION_MS 2.0
#define CALIBRATION_SAMPLES 11
#define RECALIBRATE_TOL 0.1

enum { OP_PUT, OP_GET, NOPS };
static const char *const OP_NAMES[NOPS] = {"put", "get"};
static const char *const OP_CALLS[NOPS] = {"MPI_Put", "MPI_Get"};
enum { SYNC_FLUSH, SYNC_FENCE, NSYNCS };
static const char *const SYNC_NAMES[NSYNCS] = {"flush", "fence"};
static const char *const SYNC_CALLS[NSYNCS] = {"MPI_Win_flush", "MPI_Win_fence"};
enum { WIN_ALLOCATE, WIN_CREATE, NWINS };
static const char *const WIN_NAMES[NWINS] = {"allocate", "create"};

/* ---- benchmark-specific options ------------------------------------------ */

typedef struct rm_params {
    unsigned ops, syncs, wins;
} rm_params;

static const mo_field rm_fields[] = {
    MO_FIELD_SET_OF("ops", rm_params, ops, OP_NAMES, NOPS, "both", false,
                    "--ops: unknown value '%.*s' (known: put, get, both)"),
    MO_FIELD_SET_OF("sync", rm_params, syncs, SYNC_NAMES, NSYNCS, "both", false,
                    "--sync: unknown value '%.*s' (known: flush, fence, both)"),
    MO_FIELD_SET_OF("window", rm_params, wins, WIN_NAMES, NWINS, "both", false,
                    "--window: unknown value '%.*s' (known: allocate, create, both)"),
};

static void rm_usage(FILE *f)
{
    fprintf(f,
            "  --ops LIST           put, get, comma-separated, or both (default both)\n"
            "  --sync LIST          flush (passive target), fence (active target), or both\n"
            "                       (default both)\n"
            "  --window LIST        allocate (MPI_Win_allocate), create (MPI_Win_create over\n"
            "                       malloc'd memory), or both (default both)\n"
            "  (--iters N           iterations per loop; default: about %g ms per loop, %g with\n"
            "                       --quick, %d to %d iterations)\n",
            MO_LOOP_MS, MO_LOOP_MS_QUICK, MO_LOOP_MIN_ITERS, MO_LOOP_MAX_ITERS);
}

/* ---- measured data ---------------------------------------------------------- */

/* Origin's times per iteration, summarized. */
enum {
    Q_PURE, Q_OP_ALONE, Q_COMPLETE_ALONE, Q_CPU, Q_OVERALL, Q_OP, Q_COMPUTE, Q_COMPLETE, Q_NONOV, NQ
};
static const char *const Q_KEYS[NQ] = {
    "t_pure_us", "t_op_alone_us", "t_complete_alone_us", "t_cpu_us", "t_overall_us",
    "t_op_us", "t_compute_us", "t_complete_us", "t_nonoverlap_us",
};

typedef struct rm_case {
    int win, sync, op;
    uint64_t size;
    long iterations;
    uint64_t units;
    mo_stats q[NQ];
} rm_case;

typedef struct rm_state {
    const mo_options *opts;
    const rm_params *params;
    MPI_Comm pair;
    int rank;
    double rate;
    MPI_Win wins[NWINS];
    MPI_Win win;         /* of the running case */
    unsigned char *base[NWINS]; /* the windows' memory (largest size) */
    unsigned char *buf;  /* origin's local buffer */
    double *t[4];
    long cap;
    rm_case *cases;
    int ncases, planned;
} rm_state;

/* ---- the timed loops (ranks 0 and 1) ------------------------------------------ */

enum { L_PURE, L_ALONE, L_OVERLAP };

static void rma_op(const rm_state *st, int op, int n)
{
    if (op == OP_PUT)
        MPI_Put(st->buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, st->win);
    else
        MPI_Get(st->buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, st->win);
}

/* Timed iteration i of either synchronization, its times (us) into
 * st->t[0..3]: total, op (the origin's), compute, completion (the flush, or
 * the closing fence). */
static void timed_iteration(rm_state *st, int kind, int sync, int op, int n, uint64_t units, long i)
{
    uint64_t t0 = mo_timer_now_ns();
    if (st->rank == 0 && kind != L_ALONE)
        rma_op(st, op, n);
    uint64_t t1 = mo_timer_now_ns();
    if (kind != L_PURE)
        mo_work(units);
    uint64_t t2 = mo_timer_now_ns();
    if (kind != L_ALONE && sync == SYNC_FLUSH)
        MPI_Win_flush(1, st->win);
    else if (kind != L_ALONE)
        MPI_Win_fence(0, st->win);
    uint64_t t3 = mo_timer_now_ns();
    st->t[0][i] = mo_us_between(t0, t3);
    st->t[1][i] = mo_us_between(t0, t1);
    st->t[2][i] = mo_us_between(t1, t2);
    st->t[3][i] = mo_us_between(t2, t3);
}

/* One loop; the origin's times go to st->t[0..3]. */
static void run_loop(rm_state *st, int kind, int sync, int op, int n, long iters, uint64_t units)
{
    const bool origin = st->rank == 0;
    const MPI_Comm comm = st->pair;
    const MPI_Win win = st->win;
    MPI_Barrier(comm);
    if (sync == SYNC_FLUSH) {
        if (origin && kind != L_ALONE)
            MPI_Win_lock_all(0, win);
        for (long i = 0; i < iters; i++) {
            MPI_Barrier(comm);
            if (origin) /* the target only waits in the barrier */
                timed_iteration(st, kind, sync, op, n, units, i);
        }
        if (origin && kind != L_ALONE)
            MPI_Win_unlock_all(win);
    } else {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        for (long i = 0; i < iters; i++) {
            if (kind == L_ALONE)
                MPI_Barrier(comm);
            else
                MPI_Win_fence(0, win);
            timed_iteration(st, kind, sync, op, n, units, i);
        }
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    }
}

static void summarize(const double *x, long n, mo_stats *out)
{
    mo_stats_summarize_or_nan(x, (size_t)n, out);
}

/* Ranks 0 and 1: one case; the origin's statistics land in cs on rank 0. */
static void measure_case(rm_state *st, rm_case *cs)
{
    const mo_options *o = st->opts;
    const int n = (int)cs->size;
    long warm = mo_loop_warmup(o, st->cap);
    uint64_t w0 = mo_timer_now_ns();
    run_loop(st, L_PURE, cs->sync, cs->op, n, warm, 0);
    double pilot = (double)(mo_timer_now_ns() - w0) / 1000.0 / (double)warm, pilot_max = 0;
    MPI_Allreduce(&pilot, &pilot_max, 1, MPI_DOUBLE, MPI_MAX, st->pair);
    long iters = mo_loop_iters(o, pilot_max, st->cap);
    cs->iterations = iters;

    /* pure: the origin's median op + completion decides the work */
    run_loop(st, L_PURE, cs->sync, cs->op, n, iters, 0);
    double pure = 0;
    if (st->rank == 0) {
        summarize(st->t[0], iters, &cs->q[Q_PURE]);
        summarize(st->t[1], iters, &cs->q[Q_OP_ALONE]);
        summarize(st->t[3], iters, &cs->q[Q_COMPLETE_ALONE]);
        pure = cs->q[Q_PURE].median;
    }
    MPI_Bcast(&pure, 1, MPI_DOUBLE, 0, st->pair);
    double u = round(pure * st->rate);
    cs->units = isfinite(u) && u > 0 ? (uint64_t)u : 1;
    for (int pass = 0; pass < 2; pass++) {
        run_loop(st, L_ALONE, cs->sync, cs->op, n, iters, cs->units);
        double alone = 0;
        if (st->rank == 0) {
            summarize(st->t[2], iters, &cs->q[Q_CPU]);
            alone = cs->q[Q_CPU].median;
        }
        MPI_Bcast(&alone, 1, MPI_DOUBLE, 0, st->pair);
        if (pass > 0 || !(alone > 0) || !(pure > 0) || fabs(alone / pure - 1.0) <= RECALIBRATE_TOL)
            break;
        u = round((double)cs->units * pure / alone);
        cs->units = isfinite(u) && u > 0 ? (uint64_t)u : 1;
    }
    run_loop(st, L_OVERLAP, cs->sync, cs->op, n, iters, cs->units);
    if (st->rank == 0) {
        summarize(st->t[0], iters, &cs->q[Q_OVERALL]);
        summarize(st->t[1], iters, &cs->q[Q_OP]);
        summarize(st->t[2], iters, &cs->q[Q_COMPUTE]);
        summarize(st->t[3], iters, &cs->q[Q_COMPLETE]);
        for (long i = 0; i < iters; i++)
            st->t[0][i] -= st->t[2][i]; /* not overlapped: overall - computation */
        summarize(st->t[0], iters, &cs->q[Q_NONOV]);
    }
}

/* ---- output ------------------------------------------------------------------ */

/* One of "cases". */
static void write_case(mo_json *w, const void *item, const void *ctx)
{
    const rm_case *cs = item;
    const rm_state *st = ctx;
    mo_json_kv_string(w, "window", WIN_NAMES[cs->win]);
    mo_json_kv_string(w, "sync", SYNC_NAMES[cs->sync]);
    mo_json_kv_string(w, "sync_call", SYNC_CALLS[cs->sync]);
    mo_json_kv_string(w, "op", OP_NAMES[cs->op]);
    mo_json_kv_string(w, "op_call", OP_CALLS[cs->op]);
    mo_json_kv_uint64(w, "size", cs->size);
    mo_json_kv_int64(w, "iterations", cs->iterations);
    mo_json_kv_uint64(w, "work_units", cs->units);
    mo_json_kv_double(w, "work_us_nominal", (double)cs->units / st->rate);
    for (int k = 0; k < NQ; k++)
        mo_json_stats(w, Q_KEYS[k], &cs->q[k]);
}

static void write_results(mo_json *w, const void *ctx)
{
    const rm_state *st = ctx;
    mo_json_kv_string(w, "flush_epoch", "MPI_Win_lock_all");
    mo_json_kv_string(w, "fence_target", "computes the same work between the fences");
    mo_json_kv_string(w, "flush_target", "waits in MPI_Barrier");
    mo_json_kv_double(w, "work_units_per_us", st->rate);
    mo_json_kv_int64(w, "cases_planned", st->planned);
    mo_json_objects(w, "cases", st->cases, sizeof *st->cases, (size_t)st->ncases, write_case, st);
}

/* ---- main ----------------------------------------------------------------- */

static int popcount(unsigned s)
{
    int n = 0;
    for (; s; s >>= 1)
        n += (int)(s & 1u);
    return n;
}

static void rm_setup(mo_bench *b, void *ctx)
{
    rm_state *st = ctx;
    const rm_params *params = st->params;
    st->opts = &b->opts;
    st->cap = MO_LOOP_MAX_ITERS;
    st->planned = popcount(params->wins) * popcount(params->ops) * popcount(params->syncs) * (int)b->opts.sizes.n;
    st->wins[0] = st->wins[1] = MPI_WIN_NULL;
    st->pair = b->comm;
    b->ready.calib_ms = CALIBRATION_MS;
    b->ready.calib_samples = CALIBRATION_SAMPLES;
    b->ready.unbound_peer = 1;
}

/* Every rank: rank 0's work rate; the pair: its windows and buffers. */
static int rm_start(mo_bench *b, void *ctx)
{
    rm_state *st = ctx;
    st->rate = b->work.units_per_us;
    MPI_Bcast(&st->rate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (st->pair == MPI_COMM_NULL)
        return 1;
    MPI_Comm_rank(st->pair, &st->rank);
    const size_t bytes = mo_bench_largest(b);
    int wrc = MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, st->pair, &st->base[WIN_ALLOCATE],
                               &st->wins[WIN_ALLOCATE]);
    st->base[WIN_CREATE] = mo_page_alloc(bytes);
    int crc = st->base[WIN_CREATE] ? MPI_Win_create(st->base[WIN_CREATE], (MPI_Aint)bytes, 1, MPI_INFO_NULL,
                                                    st->pair, &st->wins[WIN_CREATE])
                                   : MPI_ERR_NO_MEM;
    st->buf = mo_page_alloc(bytes);
    st->cases = calloc((size_t)st->planned, sizeof *st->cases);
    int have = wrc == MPI_SUCCESS && crc == MPI_SUCCESS && st->buf && st->cases, all = 0;
    for (int k = 0; k < 4; k++) {
        st->t[k] = malloc((size_t)st->cap * sizeof(double));
        have = have && st->t[k];
    }
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_LAND, st->pair);
    if (!all) {
        if (st->rank == 0)
            fprintf(stderr, "mo_" PROGRAM ": error: cannot allocate the %zu-byte window and buffers\n", bytes);
        return -1;
    }
    memset(st->base[WIN_ALLOCATE], st->rank + 1, bytes);
    memset(st->base[WIN_CREATE], st->rank + 1, bytes);
    memset(st->buf, st->rank + 1, bytes);
    MPI_Barrier(st->pair);
    return 0;
}

/* The i-th selected case, window outermost, then sync, op and size. */
static int rm_one_case(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    rm_state *st = ctx;
    const rm_params *p = st->params;
    const int nsizes = (int)b->opts.sizes.n;
    int wi = 0, sy = 0, op = 0, n = i / nsizes;
    for (wi = 0; wi < NWINS; wi++)
        for (sy = 0; sy < NSYNCS; sy++)
            for (op = 0; op < NOPS; op++)
                if ((p->wins & (1u << wi)) && (p->syncs & (1u << sy)) && (p->ops & (1u << op)) && n-- == 0)
                    goto found;
found:
    st->win = st->wins[wi];
    rm_case *cs = &st->cases[st->ncases];
    cs->win = wi;
    cs->sync = sy;
    cs->op = op;
    cs->size = b->opts.sizes.v[i % nsizes];
    measure_case(st, cs);
    st->ncases++;
    if (st->rank != 0)
        return MO_POINT_OK;
    snprintf(label, labellen, "%s/%s/%s %llu B", WIN_NAMES[wi], SYNC_NAMES[sy], OP_NAMES[op],
             (unsigned long long)cs->size);
    mo_verbose(&b->opts, "%-8s %-6s %-4s %8llu B  t_pure %9.2f  complete alone %9.2f  t_cpu %9.2f  "
               "t_ovrl %9.2f  complete after work %9.2f us (%ld iterations)\n",
               WIN_NAMES[wi], SYNC_NAMES[sy], OP_NAMES[op], (unsigned long long)cs->size, cs->q[Q_PURE].median,
               cs->q[Q_COMPLETE_ALONE].median, cs->q[Q_CPU].median, cs->q[Q_OVERALL].median,
               cs->q[Q_COMPLETE].median, cs->iterations);
    return MO_POINT_OK;
}

static void rm_teardown(mo_bench *b, void *ctx)
{
    rm_state *st = ctx;
    (void)b;
    for (int wi = 0; wi < NWINS; wi++)
        if (st->wins[wi] != MPI_WIN_NULL)
            MPI_Win_free(&st->wins[wi]);
    free(st->base[WIN_CREATE]);
    free(st->buf);
    free(st->cases);
    for (int k = 0; k < 4; k++)
        free(st->t[k]);
}

int main(int argc, char **argv)
{
    static rm_params params = {.ops = (1u << NOPS) - 1, .syncs = (1u << NSYNCS) - 1, .wins = (1u << NWINS) - 1};
    static rm_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = rm_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {PROGRAM, DEFAULT_SIZES, &ext, 2, true, mo_loop_check, NULL}, .benchmark = BENCH, .pair = true,
        .results = write_results, .state = &st, .setup = rm_setup, .start = rm_start, .teardown = rm_teardown,
        .mode = MO_BENCH_LOCKSTEP, .unit = "cases", .planned = &st.planned, .point = rm_one_case,
        .recheck_work = true, MO_KERNEL_FIELDS(rm_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
