/* comm_overlap.c - mo_comm_overlap: the communication-computation overlap
 * tests of Colmenares et al. (An Overlap Study for Cluster Computing,
 * §III-B, §IV-B).
 *
 * Ranks 0 and 1 of MPI_COMM_WORLD take part (others wait at the end). Per
 * message size:
 *
 * Work sizing. A pilot of --pilot samples of the message alone (below) gives
 * its median time T_m; the work is then W = round(--work-factor * T_m *
 * units_per_us) calibrated work units (at least --min-work-us worth), fixed
 * for every sample of this size and of both tests. Rank 0 chooses it and
 * broadcasts it.
 *
 * (i) Basic test (rank 0 sends, rank 1 pre-posts its receive before a
 * barrier and waits; rank 0's times after the barrier):
 *   message:  MPI_Isend; MPI_Wait                       -> T_message
 *   workload: mo_work(W) (no message)                   -> T_workload
 *   overlap:  MPI_Isend; mo_work(W); MPI_Wait           -> T_overlap
 *             (and the time of the work inside it, for the compute slowdown)
 * The three kinds take turns in a rotating order, --samples rounds.
 *
 * (ii) Better test (both ranks post MPI_Irecv + MPI_Isend to the partner,
 * each times its own T_total after a barrier):
 *   non-overlap: post; MPI_Waitall; mo_work(W)
 *   overlap:     post; mo_work(W); MPI_Waitall
 * alternating, --samples rounds; each rank summarizes its samples and rank 0
 * gathers the summaries. docs/benchmarks.md, section comm-overlap. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"

#define BENCH "comm-overlap" /* the result document's "benchmark" */
#define NAME "comm_overlap"  /* the program, mo_comm_overlap */
#define DEFAULT_SIZES "8:4M"
#define QUICK_SIZES "1k,64k,1M"
#define DEFAULT_SAMPLES 1000
#define QUICK_SAMPLES 200
#define DEFAULT_PILOT 15
#define WARMUP 3
#define TAG 300

enum { KIND_MSG = 0, KIND_WORK = 1, KIND_OVL = 2, NKINDS = 3 };
enum { BT_NONOVL = 0, BT_OVL = 1 };
/* Per rank and better-test version: T_total and the work inside it. */
enum { BS_NONOVL_TOTAL = 0, BS_OVL_TOTAL, BS_NONOVL_WORK, BS_OVL_WORK, NBSTATS };
static const char *const BS_KEYS[NBSTATS] = {"nonoverlap", "overlap", "nonoverlap_work",
                                             "overlap_work"};
enum { STATS_DOUBLES = 8 };

typedef struct co_params {
    long samples, pilot;
    double work_factor, min_work_us;
} co_params;

static const mo_field co_fields[] = {
    MO_FIELD_LONG_Q("samples", co_params, samples, 2, 100000, DEFAULT_SAMPLES, QUICK_SAMPLES),
    MO_FIELD_LONG_OF("pilot", co_params, pilot, 1, 10000),
    MO_FIELD_DOUBLE_OF("work-factor", co_params, work_factor, 0.01, 1000.0),
    MO_FIELD_DOUBLE_OF("min-work-us", co_params, min_work_us, 0.0, 1e6),
};

static void co_usage(FILE *f)
{
    fprintf(f,
            "  --samples N          samples per test, kind and size (default %d; --quick %d)\n"
            "  --pilot N            samples of the message alone that size the work (default %d)\n"
            "  --work-factor F      work = F x median message time (default 1)\n"
            "  --min-work-us T      at least this much work in us (default 1)\n"
            "  (--quick without --sizes measures " QUICK_SIZES ")\n",
            DEFAULT_SAMPLES, QUICK_SAMPLES, DEFAULT_PILOT);
}

/* ---- state ------------------------------------------------------------- */

typedef struct co_point {
    uint64_t bytes;
    int64_t units;
    double pilot_message_us, work_us_nominal;
    double *basic[NKINDS + 1]; /* rank 0's samples (us): message, workload, overlap, overlap work */
    size_t nbasic;
    mo_stats basic_st[NKINDS + 1];
    mo_stats better[2][NBSTATS]; /* [rank][stat], on rank 0 */
} co_point;

static const char *const BASIC_KEYS[NKINDS + 1] = {"message", "workload", "overlap",
                                                   "overlap_work"};

typedef struct co_state {
    const co_params *params;
    const mo_work_calib *work;
    MPI_Comm pair;
    mo_pair_points pp; /* rank 0's points are co_points; scratch: samples of one point */
} co_state;

/* One sample of the basic test; rank 0 returns T (us) and sets *work_us for
 * KIND_OVL; rank 1 returns NaN. */
static double basic_sample(const co_state *st, int kind, int n, uint64_t units, double *work_us)
{
    const MPI_Comm pc = st->pair;
    MPI_Request req;
    if (st->pp.rank == 1) {
        if (kind != KIND_WORK)
            MPI_Irecv(st->pp.rbuf, n, MPI_BYTE, 0, TAG, pc, &req);
        MPI_Barrier(pc);
        if (kind != KIND_WORK)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        return NAN;
    }
    MPI_Barrier(pc);
    uint64_t t0 = mo_timer_now_ns(), ta = 0, tb = 0;
    if (kind == KIND_MSG) {
        MPI_Isend(st->pp.sbuf, n, MPI_BYTE, 1, TAG, pc, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (kind == KIND_WORK) {
        mo_work(units);
    } else {
        MPI_Isend(st->pp.sbuf, n, MPI_BYTE, 1, TAG, pc, &req);
        ta = mo_timer_now_ns();
        mo_work(units);
        tb = mo_timer_now_ns();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    uint64_t t1 = mo_timer_now_ns();
    if (kind == KIND_OVL)
        *work_us = mo_us_between(ta, tb);
    return mo_us_between(t0, t1);
}

/* One sample of the better test on this rank: T_total (us), *work_us the work. */
static double better_sample(const co_state *st, int version, int n, uint64_t units,
                            double *work_us)
{
    const MPI_Comm pc = st->pair;
    const int peer = 1 - st->pp.rank;
    MPI_Request req[2];
    MPI_Barrier(pc);
    uint64_t t0 = mo_timer_now_ns(), ta, tb;
    MPI_Irecv(st->pp.rbuf, n, MPI_BYTE, peer, TAG, pc, &req[0]);
    MPI_Isend(st->pp.sbuf, n, MPI_BYTE, peer, TAG, pc, &req[1]);
    if (version == BT_OVL) {
        ta = mo_timer_now_ns();
        mo_work(units);
        tb = mo_timer_now_ns();
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    } else {
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        ta = mo_timer_now_ns();
        mo_work(units);
        tb = mo_timer_now_ns();
    }
    uint64_t t1 = mo_timer_now_ns();
    *work_us = mo_us_between(ta, tb);
    return mo_us_between(t0, t1);
}

static void pack_stats(const mo_stats *s, double *out)
{
    out[0] = (double)s->n;
    out[1] = s->min;
    out[2] = s->median;
    out[3] = s->mean;
    out[4] = s->max;
    out[5] = s->stdev;
    out[6] = s->ci95_low;
    out[7] = s->ci95_high;
}

static void unpack_stats(const double *in, mo_stats *s)
{
    s->n = (size_t)in[0];
    s->min = in[1];
    s->median = in[2];
    s->mean = in[3];
    s->max = in[4];
    s->stdev = in[5];
    s->ci95_low = in[6];
    s->ci95_high = in[7];
}

/* Measures one size on both ranks. bufs: scratch of 4 * samples doubles. */
static void measure_point(co_state *st, co_point *pt, double *scratch)
{
    const co_params *p = st->params;
    const int n = (int)pt->bytes;
    const size_t ns = (size_t)p->samples;
    double w;

    /* warm-up and pilot: the message alone */
    for (int i = 0; i < WARMUP; i++)
        basic_sample(st, KIND_MSG, n, 0, &w);
    for (long i = 0; i < p->pilot; i++)
        scratch[i] = basic_sample(st, KIND_MSG, n, 0, &w);
    int64_t units = 0;
    if (st->pp.rank == 0) {
        pt->pilot_message_us = mo_stats_median(scratch, (size_t)p->pilot);
        double work_us = p->work_factor * pt->pilot_message_us;
        if (!(work_us >= p->min_work_us))
            work_us = p->min_work_us;
        units = (int64_t)llround(work_us * st->work->units_per_us);
        if (units < 1)
            units = 1;
        pt->units = units;
        pt->work_us_nominal = (double)units / st->work->units_per_us;
    }
    MPI_Bcast(&units, 1, MPI_INT64_T, 0, st->pair);
    const uint64_t u = (uint64_t)units;

    /* (i) basic test: rotating order of the three kinds */
    for (int k = 0; k < NKINDS; k++)
        basic_sample(st, k, n, u, &w);
    for (size_t r = 0; r < ns; r++) {
        for (int j = 0; j < NKINDS; j++) {
            int kind = (int)((r + (size_t)j) % NKINDS);
            double wt = NAN;
            double t = basic_sample(st, kind, n, u, &wt);
            if (st->pp.rank == 0) {
                pt->basic[kind][r] = t;
                if (kind == KIND_OVL)
                    pt->basic[NKINDS][r] = wt;
            }
        }
    }
    if (st->pp.rank == 0) {
        pt->nbasic = ns;
        for (int k = 0; k <= NKINDS; k++)
            mo_stats_summarize_or_nan(pt->basic[k], ns, &pt->basic_st[k]);
    }

    /* (ii) better test: both ranks non-blocking, versions alternating */
    double *tot[2] = {scratch, scratch + ns};
    double *wk[2] = {scratch + 2 * ns, scratch + 3 * ns};
    better_sample(st, BT_NONOVL, n, u, &w);
    better_sample(st, BT_OVL, n, u, &w);
    for (size_t r = 0; r < ns; r++) {
        for (int j = 0; j < 2; j++) {
            int v = (int)((r + (size_t)j) % 2);
            tot[v][r] = better_sample(st, v, n, u, &wk[v][r]);
        }
    }
    mo_stats mine[NBSTATS];
    mo_stats_summarize_or_nan(tot[BT_NONOVL], ns, &mine[BS_NONOVL_TOTAL]);
    mo_stats_summarize_or_nan(tot[BT_OVL], ns, &mine[BS_OVL_TOTAL]);
    mo_stats_summarize_or_nan(wk[BT_NONOVL], ns, &mine[BS_NONOVL_WORK]);
    mo_stats_summarize_or_nan(wk[BT_OVL], ns, &mine[BS_OVL_WORK]);
    double packed[NBSTATS * STATS_DOUBLES], all[2 * NBSTATS * STATS_DOUBLES];
    for (int s = 0; s < NBSTATS; s++)
        pack_stats(&mine[s], packed + s * STATS_DOUBLES);
    MPI_Gather(packed, NBSTATS * STATS_DOUBLES, MPI_DOUBLE, all, NBSTATS * STATS_DOUBLES,
               MPI_DOUBLE, 0, st->pair);
    if (st->pp.rank == 0)
        for (int r = 0; r < 2; r++)
            for (int s = 0; s < NBSTATS; s++)
                unpack_stats(all + (r * NBSTATS + s) * STATS_DOUBLES, &pt->better[r][s]);
}

/* ---- output ------------------------------------------------------------- */

/* One of "points". */
static void write_point(mo_json *w, const void *item, const void *ctx)
{
    const co_point *pt = item;
    (void)ctx;
    mo_json_kv_uint64(w, "bytes", pt->bytes);
    mo_json_kv_int64(w, "work_units", pt->units);
    mo_json_kv_double(w, "work_us_nominal", pt->work_us_nominal);
    mo_json_kv_double(w, "pilot_message_us", pt->pilot_message_us);
    mo_json_key(w, "basic");
    mo_json_begin_object(w);
    for (int k = 0; k <= NKINDS; k++) {
        char key[48];
        mo_json_stats(w, BASIC_KEYS[k], &pt->basic_st[k]);
        snprintf(key, sizeof key, "%s_samples_us", BASIC_KEYS[k]);
        mo_json_kv_doubles(w, key, pt->basic[k], pt->nbasic);
    }
    mo_json_end_object(w);
    mo_json_key(w, "better");
    mo_json_begin_array(w);
    for (int r = 0; r < 2; r++) {
        mo_json_begin_object(w);
        mo_json_kv_int64(w, "rank", r);
        for (int s = 0; s < NBSTATS; s++)
            mo_json_stats(w, BS_KEYS[s], &pt->better[r][s]);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

static void write_results(mo_json *w, const void *ctx)
{
    const co_state *st = ctx;
    const co_params *p = st->params;
    mo_json_kv_int64(w, "samples", p->samples);
    mo_json_kv_int64(w, "pilot_samples", p->pilot);
    mo_json_kv_double(w, "work_factor", p->work_factor);
    mo_json_kv_double(w, "min_work_us", p->min_work_us);
    mo_json_kv_double(w, "units_per_us", st->work ? st->work->units_per_us : NAN);
    mo_points_json(w, &st->pp.points, write_point, NULL);
}

/* ---- the kernel ------------------------------------------------------- */

static int init_point(void *item, uint64_t bytes, void *arg)
{
    co_point *pt = item;
    const co_params *p = arg;
    pt->bytes = bytes;
    for (int k = 0; k <= NKINDS; k++)
        if (!(pt->basic[k] = calloc((size_t)p->samples, sizeof(double))))
            return -1;
    return 0;
}

static void free_point(void *item)
{
    co_point *pt = item;
    for (int k = 0; k <= NKINDS; k++)
        free(pt->basic[k]);
}

/* The pair's buffers and scratch; rank 0 the points. */
static void co_setup(mo_bench *b, void *ctx)
{
    co_state *st = ctx;
    const co_params *p = st->params;
    st->work = &b->work;
    st->pair = b->comm;
    mo_pair_points_setup(b, &st->pp, sizeof(co_point), 4 * (size_t)p->samples + (size_t)p->pilot, init_point,
                         free_point, (void *)p);
}

/* Both ranks measure; rank 1 into a point of its own, which it drops. */
static int co_one_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    co_state *st = ctx;
    co_point local = {.bytes = b->opts.sizes.v[i]};
    co_point *pt = mo_pair_point(&st->pp, i, &local);
    measure_point(st, pt, st->pp.scratch);
    if (st->pp.rank != 0)
        return MO_POINT_OK;
    mo_pair_point_done(&st->pp, i, pt->bytes, label, labellen);
    const mo_stats *bs = pt->basic_st;
    mo_verbose(&b->opts,
               "%8llu B  work %8.2f us  msg %9.2f  work %9.2f  overlap %9.2f us  "
               "better r0 %9.2f/%9.2f  r1 %9.2f/%9.2f us\n",
               (unsigned long long)pt->bytes, pt->work_us_nominal, bs[KIND_MSG].median, bs[KIND_WORK].median,
               bs[KIND_OVL].median, pt->better[0][0].mean, pt->better[0][1].mean, pt->better[1][0].mean,
               pt->better[1][1].mean);
    return MO_POINT_OK;
}

int main(int argc, char **argv)
{
    static co_params params = {.pilot = DEFAULT_PILOT, .work_factor = 1.0, .min_work_us = 1.0};
    static co_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = co_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {NAME, DEFAULT_SIZES, &ext, 2, true, NULL, QUICK_SIZES}, .benchmark = BENCH, .pair = true,
        .results = write_results, .state = &st, .setup = co_setup, .pair_points = &st.pp,
        .mode = MO_BENCH_LOCKSTEP, .unit = "sizes", .planned = &st.pp.points.ntotal, .point = co_one_point,
        .recheck_work = true, MO_KERNEL_FIELDS(co_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
