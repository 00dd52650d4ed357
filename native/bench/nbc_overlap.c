/* nbc_overlap.c - mo_nbc_overlap: how much of a non-blocking collective's
 * time computation can hide (issue 5, item 6), by the methods of the OSU
 * micro-benchmarks (osu_iallreduce etc.) and of IMB-NBC, with the overlap
 * profiler's min/max bounds of the same loops beside them.
 *
 * Per collective and size, every rank of MPI_COMM_WORLD runs four loops of
 * `iterations` iterations, each iteration behind a barrier:
 *   pure:    post; MPI_Wait                                  -> t_pure
 *   alone:   the calibrated work, no communication           -> t_cpu (IMB)
 *   overlap: post; work in k chunks, MPI_Test after each
 *            chunk when k > 0; MPI_Wait                      -> t_overall,
 *            t_compute (the work phase, tests included), t_test, t_wait
 * once with no tests (-t 0) and once with --tests N calls, then the pure
 * loop again (t_pure after: a t_pure disturbed in one loop inflates every
 * overlap computed from it; the analysis marks a case whose two t_pure
 * disagree). The work is a
 * fixed number of calibrated units: the largest t_pure over the ranks times
 * rank 0's calibrated rate (IMB: computation calibrated to last t_pure), so
 * CPU time stolen by the collective shows as a longer work phase ("compute
 * slowdown" = work phase without tests / work alone - 1).
 *
 * Each overlap loop runs inside a profiler region
 * "<collective>/<bytes>/t<tests>" (weak region API: without the profiler
 * only the times are measured); the per-iteration barrier is made outside
 * the region so the region holds exactly the collective under test.
 *
 * Every rank times its own iterations; per rank the medians over the
 * iterations (t_pure with an order-statistic 95 % interval, tail
 * percentiles p90 and p99 of t_pure and t_overall beside them) go to rank
 * 0, which writes them. The overlap percentages (OSU, IMB) are computed from
 * them by its analysis (benchmarks/nbc_overlap/analysis.py).
 *
 * Like OSU: --datatype picks the element type of the reductions (int, float,
 * double; the other collectives move bytes), and --validate checks what
 * every collective delivered after each loop (outside the timing; OSU's -c). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"
#include "mpi_overlap.h"

#define PROGRAM "nbc_overlap"
#define BENCH "nbc-overlap"
#define DEFAULT_SIZES "8,1K,64K,1M"
#define QUICK_SIZES "8,64K,1M" /* --quick without --sizes */
#define DEFAULT_TESTS 8
#define CALIBRATION_MS 2.0
#define CALIBRATION_SAMPLES 11
#define RECALIBRATE_TOL 0.1 /* work alone vs t_pure: rescale the units beyond this */
#define MAX_REGIONS 254 /* distinct region names the profiler keeps apart */
#define REGION_LEN 64

/* ---- the collectives ------------------------------------------------------- */

enum {
    C_IBARRIER, C_IBCAST, C_IGATHER, C_ISCATTER, C_IREDUCE, C_IALLREDUCE, C_IALLGATHER,
    C_IALLTOALL, C_IREDUCE_SCATTER_BLOCK, C_IREDUCE_SCATTER, C_ISCAN, C_IEXSCAN, NCOLLS
};

typedef struct nb_coll {
    const char *name;  /* as in the JSON, the region and --collectives */
    bool reduction;    /* counts elements of --datatype (int: size / 4 of them) */
    bool sized;        /* false: one case, size 0 (Ibarrier) */
} nb_coll;

static const nb_coll COLLS[NCOLLS] = {
    {"Ibarrier", false, false},
    {"Ibcast", false, true},
    {"Igather", false, true},
    {"Iscatter", false, true},
    {"Ireduce", true, true},
    {"Iallreduce", true, true},
    {"Iallgather", false, true},
    {"Ialltoall", false, true},
    {"Ireduce_scatter_block", true, true},
    {"Ireduce_scatter", true, true},
    {"Iscan", true, true},
    {"Iexscan", true, true},
};

/* ---- benchmark-specific options ------------------------------------------ */

/* The element types of the reductions (--datatype). */
enum { DT_INT, DT_FLOAT, DT_DOUBLE, NDTYPES };
static const char *const DT_NAMES[NDTYPES] = {"int", "float", "double"};

typedef struct nb_params {
    unsigned colls; /* bit i: COLLS[i] */
    long tests;     /* MPI_Test calls in the second overlap variant; 0: only the first */
    int dtype;      /* DT_*: element type of the reductions */
    bool validate;  /* check the delivered data after every loop */
} nb_params;

static MPI_Datatype dt_mpi(int dtype)
{
    return dtype == DT_FLOAT ? MPI_FLOAT : dtype == DT_DOUBLE ? MPI_DOUBLE : MPI_INT;
}

static size_t dt_size(int dtype)
{
    return dtype == DT_FLOAT ? sizeof(float) : dtype == DT_DOUBLE ? sizeof(double) : sizeof(int);
}

static const mo_field nb_fields[] = {
    MO_FIELD_LONG_OF("tests", nb_params, tests, 0, 100000),
    /* Names compare ignoring case (--collectives=ibcast,IALLREDUCE). */
    MO_FIELD_SET_IN("collectives", nb_params, colls, COLLS, NCOLLS, "all", true,
                    "--collectives: unknown collective '%.*s' (known: Ibarrier, Ibcast, Igather, Iscatter, "
                    "Ireduce, Iallreduce, Iallgather, Ialltoall, Ireduce_scatter_block, Ireduce_scatter, "
                    "Iscan, Iexscan, all)"),
    MO_FIELD_CHOICE_OF("datatype", nb_params, dtype, DT_NAMES, NULL, NDTYPES,
                       "--datatype: expected int, float or double (got '%s')"),
    MO_FIELD_FLAG_OF("validate", nb_params, validate),
};

static void nb_usage(FILE *f)
{
    fprintf(f,
            "  --tests N            MPI_Test calls spread through the work of the second overlap\n"
            "                       variant (default %d; 0: only the variant without tests)\n"
            "  --collectives LIST   Ibarrier, Ibcast, Igather, Iscatter, Ireduce, Iallreduce,\n"
            "                       Iallgather, Ialltoall, Ireduce_scatter_block, Ireduce_scatter,\n"
            "                       Iscan, Iexscan, comma-separated, or all (default all)\n"
            "  --datatype T         element type of the reductions: int (default), float, double\n"
            "  --validate           check the data every collective delivered after each loop\n"
            "  (--iters N           iterations per loop; default: about %g ms per loop, %g with\n"
            "                       --quick, %d to %d iterations)\n",
            DEFAULT_TESTS, MO_LOOP_MS, MO_LOOP_MS_QUICK, MO_LOOP_MIN_ITERS, MO_LOOP_MAX_ITERS);
}

/* ---- measured data ---------------------------------------------------------- */

/* Per rank and overlap variant: medians over the iterations (us). */
enum { V_OVERALL, V_COMP, V_TEST, V_WAIT, V_POST, V_NONOV, V_NONOV_Q25, V_NONOV_Q75,
       V_OVERALL_P90, V_OVERALL_P99, NV };
static const char *const V_KEYS[NV] = {
    "t_overall_us", "t_compute_us", "t_test_us", "t_wait_us", "t_post_us",
    "t_nonoverlap_us", "t_nonoverlap_q25_us", "t_nonoverlap_q75_us",
    "t_overall_p90_us", "t_overall_p99_us",
};
/* Per rank and case: t_pure (with its interval and tails), the work alone, and t_pure
 * measured again after the overlapped loops (us). */
enum { P_PURE, P_ALONE, P_PURE_LO, P_PURE_HI, P_PURE_P90, P_PURE_P99, P_AFTER, P_AFTER_LO,
       P_AFTER_HI, NP };
static const char *const P_KEYS[NP] = {
    "t_pure_us", "t_cpu_us", "t_pure_ci_low_us", "t_pure_ci_high_us", "t_pure_p90_us",
    "t_pure_p99_us", "t_pure_after_us", "t_pure_after_ci_low_us", "t_pure_after_ci_high_us",
};

typedef struct nb_variant {
    long tests;
    double *v; /* NV * nranks, rank-major: v[r * NV + k] */
} nb_variant;

typedef struct nb_case {
    int coll;
    uint64_t size;  /* requested */
    uint64_t bytes; /* per block, after rounding to whole elements */
    long iterations;
    double t_pure_max_us;
    uint64_t units;
    long invalid; /* elements that differed from the expected data, all ranks; -1: not checked */
    double *p; /* NP * nranks */
    nb_variant var[2];
    int nvar;
} nb_case;

typedef struct nb_state {
    const mo_options *opts;
    const nb_params *params;
    int nranks;
    double rate; /* work units per us (rank 0's calibration, broadcast) */
    unsigned char *sbuf, *rbuf; /* nranks * largest bytes each, touched */
    int *counts;                /* nranks entries: Ireduce_scatter's recvcounts */
    MPI_Datatype rtype;         /* element type of the reductions */
    size_t rsize;               /* its size in bytes */
    double *t[8];               /* per-iteration times, cap each */
    long cap;
    bool profiled;
    nb_case *cases;
    int ncases, planned;
} nb_state;

/* ---- the timed loops (every rank) ----------------------------------------- */

static uint64_t case_bytes(int coll, uint64_t size, size_t rsize)
{
    if (!COLLS[coll].sized)
        return 0;
    return COLLS[coll].reduction ? size / rsize * rsize : size;
}

static void post(const nb_state *st, int coll, int count, MPI_Request *req)
{
    void *s = st->sbuf, *r = st->rbuf;
    MPI_Comm c = MPI_COMM_WORLD;
    switch (coll) {
    case C_IBARRIER: MPI_Ibarrier(c, req); break;
    case C_IBCAST: MPI_Ibcast(s, count, MPI_BYTE, 0, c, req); break;
    case C_IGATHER: MPI_Igather(s, count, MPI_BYTE, r, count, MPI_BYTE, 0, c, req); break;
    case C_ISCATTER: MPI_Iscatter(s, count, MPI_BYTE, r, count, MPI_BYTE, 0, c, req); break;
    case C_IREDUCE: MPI_Ireduce(s, r, count, st->rtype, MPI_SUM, 0, c, req); break;
    case C_IALLREDUCE: MPI_Iallreduce(s, r, count, st->rtype, MPI_SUM, c, req); break;
    case C_IALLGATHER: MPI_Iallgather(s, count, MPI_BYTE, r, count, MPI_BYTE, c, req); break;
    case C_IALLTOALL: MPI_Ialltoall(s, count, MPI_BYTE, r, count, MPI_BYTE, c, req); break;
    case C_IREDUCE_SCATTER_BLOCK: MPI_Ireduce_scatter_block(s, r, count, st->rtype, MPI_SUM, c, req); break;
    case C_IREDUCE_SCATTER: MPI_Ireduce_scatter(s, r, st->counts, st->rtype, MPI_SUM, c, req); break;
    case C_ISCAN: MPI_Iscan(s, r, count, st->rtype, MPI_SUM, c, req); break;
    case C_IEXSCAN: MPI_Iexscan(s, r, count, st->rtype, MPI_SUM, c, req); break;
    }
}

/* ---- --validate: known data in, the expected data out ------------------------ */

/* Byte j of rank r's send buffer (the data-movement collectives). */
static unsigned char pattern(int r, uint64_t j)
{
    return (unsigned char)((unsigned)r * 37u + (unsigned)(j * 11u) + 1u);
}

/* Element i of rank r's send buffer (the reductions): small integers, exact in every type. */
static double element(int r, uint64_t i) { return (double)(r + 1) + (double)(i % 7); }

static double get_elem(const nb_state *st, const unsigned char *buf, uint64_t i)
{
    if (st->rtype == MPI_FLOAT)
        return ((const float *)(const void *)buf)[i];
    if (st->rtype == MPI_DOUBLE)
        return ((const double *)(const void *)buf)[i];
    return ((const int *)(const void *)buf)[i];
}

static void set_elem(const nb_state *st, unsigned char *buf, uint64_t i, double v)
{
    if (st->rtype == MPI_FLOAT)
        ((float *)(void *)buf)[i] = (float)v;
    else if (st->rtype == MPI_DOUBLE)
        ((double *)(void *)buf)[i] = v;
    else
        ((int *)(void *)buf)[i] = (int)v;
}

/* Known send data for one case on this rank (Ibcast overwrites the buffer). */
static void fill_send(nb_state *st, int coll, int count, int wrank)
{
    uint64_t n = (uint64_t)count * (uint64_t)st->nranks; /* Iscatter/Ialltoall read n */
    for (uint64_t j = 0; j < n; j++) {
        if (COLLS[coll].reduction)
            set_elem(st, st->sbuf, j, element(wrank, j));
        else
            st->sbuf[j] = pattern(wrank, j);
    }
}

/* Sum over ranks q in [lo, hi) of element(q, i). */
static double sum_elem(int lo, int hi, uint64_t i)
{
    double v = 0;
    for (int q = lo; q < hi; q++)
        v += element(q, i);
    return v;
}

/* Elements (or bytes) of this rank's received data that differ from what the collective
 * must deliver; Ibarrier and the non-roots of rooted collectives have nothing to check. */
static long check_recv(const nb_state *st, int coll, int count, int wrank)
{
    const int n = st->nranks;
    const uint64_t c = (uint64_t)count;
    long bad = 0;
    switch (coll) {
    case C_IBCAST:
        for (uint64_t j = 0; j < c; j++)
            bad += st->sbuf[j] != pattern(0, j);
        break;
    case C_IGATHER:
    case C_IALLGATHER:
        if (coll == C_IGATHER && wrank != 0)
            break;
        for (int q = 0; q < n; q++)
            for (uint64_t j = 0; j < c; j++)
                bad += st->rbuf[(uint64_t)q * c + j] != pattern(q, j);
        break;
    case C_ISCATTER:
        for (uint64_t j = 0; j < c; j++)
            bad += st->rbuf[j] != pattern(0, (uint64_t)wrank * c + j);
        break;
    case C_IALLTOALL:
        for (int q = 0; q < n; q++)
            for (uint64_t j = 0; j < c; j++)
                bad += st->rbuf[(uint64_t)q * c + j] != pattern(q, (uint64_t)wrank * c + j);
        break;
    case C_IREDUCE:
    case C_IALLREDUCE:
        if (coll == C_IREDUCE && wrank != 0)
            break;
        for (uint64_t i = 0; i < c; i++)
            bad += get_elem(st, st->rbuf, i) != sum_elem(0, n, i);
        break;
    case C_IREDUCE_SCATTER_BLOCK:
    case C_IREDUCE_SCATTER:
        for (uint64_t i = 0; i < c; i++)
            bad += get_elem(st, st->rbuf, i) != sum_elem(0, n, (uint64_t)wrank * c + i);
        break;
    case C_ISCAN:
        for (uint64_t i = 0; i < c; i++)
            bad += get_elem(st, st->rbuf, i) != sum_elem(0, wrank + 1, i);
        break;
    case C_IEXSCAN: /* rank 0's result is undefined */
        for (uint64_t i = 0; wrank > 0 && i < c; i++)
            bad += get_elem(st, st->rbuf, i) != sum_elem(0, wrank, i);
        break;
    }
    return bad;
}

enum { L_PURE, L_ALONE, L_OVERLAP };
enum { T_A, T_B, T_C, T_D, T_E, T_F }; /* rows of st->t */

/* One loop of `iters` iterations; the times go to st->t rows. */
static void run_loop(nb_state *st, int kind, int coll, int count, long iters, uint64_t units, long tests,
                     const char *region)
{
    double *const a = st->t[T_A], *const b = st->t[T_B], *const cc = st->t[T_C];
    double *const d = st->t[T_D], *const e = st->t[T_E], *const f = st->t[T_F];
    const long chunks = tests > 0 ? tests : 1;
    const uint64_t per = units / (uint64_t)chunks, last = units - per * (uint64_t)(chunks - 1);
    const bool in_region = kind == L_OVERLAP && st->profiled;
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (in_region)
            MPI_OVERLAP_REGION_BEGIN(region);
        uint64_t t0 = mo_timer_now_ns();
        if (kind == L_ALONE) {
            mo_work(units);
            a[i] = mo_us_between(t0, mo_timer_now_ns());
            continue;
        }
        post(st, coll, count, &req);
        uint64_t t1 = mo_timer_now_ns();
        if (kind == L_PURE) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            a[i] = mo_us_between(t0, mo_timer_now_ns());
            continue;
        }
        uint64_t test_ns = 0;
        for (long k = 0; k < chunks; k++) {
            mo_work(k + 1 == chunks ? last : per);
            if (tests > 0) {
                int flag;
                uint64_t ta = mo_timer_now_ns();
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                test_ns += mo_timer_now_ns() - ta;
            }
        }
        uint64_t t2 = mo_timer_now_ns();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        uint64_t t3 = mo_timer_now_ns();
        if (in_region)
            MPI_OVERLAP_REGION_END(region);
        a[i] = mo_us_between(t0, t3);  /* overall */
        b[i] = mo_us_between(t1, t2);  /* work phase, tests included */
        cc[i] = (double)test_ns / 1000.0; /* tests */
        d[i] = mo_us_between(t2, t3);  /* wait */
        e[i] = mo_us_between(t0, t1);  /* post */
        f[i] = a[i] - (b[i] - cc[i]); /* not overlapped: overall - pure computation */
    }
}

static double quantile(double *x, long n, double q)
{
    /* insertion sort: n is at most MO_LOOP_MAX_ITERS */
    for (long i = 1; i < n; i++) {
        double v = x[i];
        long j = i - 1;
        while (j >= 0 && x[j] > v) {
            x[j + 1] = x[j];
            j--;
        }
        x[j + 1] = v;
    }
    double pos = q * (double)(n - 1);
    long lo = (long)floor(pos);
    long hi = lo + 1 < n ? lo + 1 : lo;
    return x[lo] + (pos - (double)lo) * (x[hi] - x[lo]);
}

static double median_of(double *x, long n) { return quantile(x, n, 0.5); }

/* Distribution-free 95 % interval of the median of n sorted values: the order statistics
 * n/2 -/+ 0.98 sqrt(n) (the normal approximation of Binomial(n, 1/2)). */
static void median_ci(const double *sorted, long n, double *lo, double *hi)
{
    double half = 0.98 * sqrt((double)n);
    long j = (long)floor(0.5 * (double)n - half), k = (long)ceil(0.5 * (double)n + half);
    *lo = sorted[j < 0 ? 0 : j >= n ? n - 1 : j];
    *hi = sorted[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* The median, its interval and tail percentiles of one pure loop's times (sorts them). */
static void pure_stats(double *x, long n, double *med, double *lo, double *hi, double *p90,
                       double *p99)
{
    *med = median_of(x, n); /* sorted from here on */
    median_ci(x, n, lo, hi);
    if (p90)
        *p90 = quantile(x, n, 0.90);
    if (p99)
        *p99 = quantile(x, n, 0.99);
}

static void region_name(char *buf, size_t len, int coll, uint64_t bytes, long tests)
{
    snprintf(buf, len, "%s/%llu/t%ld", COLLS[coll].name, (unsigned long long)bytes, tests);
}

/* Every rank: measures one case; rank 0 gets every rank's values in cs. */
static int measure_case(nb_state *st, nb_case *cs)
{
    const mo_options *o = st->opts;
    const int coll = cs->coll;
    const int count = (int)(COLLS[coll].reduction ? cs->bytes / st->rsize : cs->bytes);
    const bool validate = st->params->validate;
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    long bad = 0;
    for (int r = 0; r < st->nranks; r++)
        st->counts[r] = count;
    char region[REGION_LEN];

    /* Warm-up and pilot: the iterations come from the slowest rank's mean. */
    long warm = mo_loop_warmup(o, st->cap);
    uint64_t w0 = mo_timer_now_ns();
    run_loop(st, L_PURE, coll, count, warm, 0, 0, NULL);
    double pilot = (double)(mo_timer_now_ns() - w0) / 1000.0 / (double)warm, pilot_max = 0;
    MPI_Allreduce(&pilot, &pilot_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long iters = mo_loop_iters(o, pilot_max, st->cap);
    cs->iterations = iters;

    double mine_p[NP], mine_v[NV];
    if (validate)
        fill_send(st, coll, count, wrank);
    run_loop(st, L_PURE, coll, count, iters, 0, 0, NULL);
    if (validate)
        bad += check_recv(st, coll, count, wrank);
    pure_stats(st->t[T_A], iters, &mine_p[P_PURE], &mine_p[P_PURE_LO], &mine_p[P_PURE_HI],
               &mine_p[P_PURE_P90], &mine_p[P_PURE_P99]);
    MPI_Allreduce(&mine_p[P_PURE], &cs->t_pure_max_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double u = round(cs->t_pure_max_us * st->rate);
    cs->units = isfinite(u) && u > 0 ? (uint64_t)u : 1;
    /* IMB: the computation is calibrated to last t_pure. The start-of-run
     * rate may be off (frequency, a busy machine): one correction from the
     * work timed alone here, with the same units on every rank. */
    for (int pass = 0; pass < 2; pass++) {
        run_loop(st, L_ALONE, coll, count, iters, cs->units, 0, NULL);
        mine_p[P_ALONE] = median_of(st->t[T_A], iters);
        double alone_max = 0;
        MPI_Allreduce(&mine_p[P_ALONE], &alone_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (pass > 0 || !(alone_max > 0) || fabs(alone_max / cs->t_pure_max_us - 1.0) <= RECALIBRATE_TOL)
            break;
        u = round((double)cs->units * cs->t_pure_max_us / alone_max);
        cs->units = isfinite(u) && u > 0 ? (uint64_t)u : 1;
    }

    cs->nvar = st->params->tests > 0 ? 2 : 1;
    for (int vi = 0; vi < cs->nvar; vi++) {
        nb_variant *v = &cs->var[vi];
        v->tests = vi == 0 ? 0 : st->params->tests;
        region_name(region, sizeof region, coll, cs->bytes, v->tests);
        if (validate)
            fill_send(st, coll, count, wrank);
        run_loop(st, L_OVERLAP, coll, count, iters, cs->units, v->tests, region);
        if (validate)
            bad += check_recv(st, coll, count, wrank);
        mine_v[V_OVERALL] = median_of(st->t[T_A], iters); /* sorted from here on */
        mine_v[V_OVERALL_P90] = quantile(st->t[T_A], iters, 0.90);
        mine_v[V_OVERALL_P99] = quantile(st->t[T_A], iters, 0.99);
        mine_v[V_COMP] = median_of(st->t[T_B], iters);
        mine_v[V_TEST] = median_of(st->t[T_C], iters);
        mine_v[V_WAIT] = median_of(st->t[T_D], iters);
        mine_v[V_POST] = median_of(st->t[T_E], iters);
        mine_v[V_NONOV] = quantile(st->t[T_F], iters, 0.5);
        mine_v[V_NONOV_Q25] = quantile(st->t[T_F], iters, 0.25);
        mine_v[V_NONOV_Q75] = quantile(st->t[T_F], iters, 0.75);
        MPI_Gather(mine_v, NV, MPI_DOUBLE, v->v, NV, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    /* t_pure again, after the overlapped loops: the analysis compares the two. */
    run_loop(st, L_PURE, coll, count, iters, 0, 0, NULL);
    pure_stats(st->t[T_A], iters, &mine_p[P_AFTER], &mine_p[P_AFTER_LO], &mine_p[P_AFTER_HI],
               NULL, NULL);
    MPI_Gather(mine_p, NP, MPI_DOUBLE, cs->p, NP, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    cs->invalid = -1;
    if (validate)
        MPI_Reduce(&bad, &cs->invalid, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    return 0;
}

/* ---- output ------------------------------------------------------------------ */

static void write_rank_array(mo_json *w, const char *key, const double *base, int stride, int k, int n)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (int r = 0; r < n; r++)
        mo_json_double(w, base[r * stride + k]);
    mo_json_end_array(w);
}

/* One of "cases". */
static void write_case(mo_json *w, const void *item, const void *ctx)
{
    const nb_case *cs = item;
    const nb_state *st = ctx;
    mo_json_kv_string(w, "collective", COLLS[cs->coll].name);
    mo_json_kv_uint64(w, "size", cs->size);
    mo_json_kv_uint64(w, "bytes", cs->bytes);
    mo_json_kv_int64(w, "iterations", cs->iterations);
    mo_json_kv_double(w, "t_pure_max_us", cs->t_pure_max_us);
    mo_json_kv_uint64(w, "work_units", cs->units);
    mo_json_kv_double(w, "work_us_nominal", (double)cs->units / st->rate);
    for (int k = 0; k < NP; k++)
        write_rank_array(w, P_KEYS[k], cs->p, NP, k, st->nranks);
    if (cs->invalid >= 0)
        mo_json_kv_int64(w, "invalid_elements", cs->invalid);
    mo_json_key(w, "variants");
    mo_json_begin_array(w);
    for (int vi = 0; vi < cs->nvar; vi++) {
        const nb_variant *v = &cs->var[vi];
        char region[REGION_LEN];
        region_name(region, sizeof region, cs->coll, cs->bytes, v->tests);
        mo_json_begin_object(w);
        mo_json_kv_int64(w, "tests", v->tests);
        mo_json_kv_string(w, "region", region);
        for (int k = 0; k < NV; k++)
            write_rank_array(w, V_KEYS[k], v->v, NV, k, st->nranks);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

static void write_results(mo_json *w, const void *ctx)
{
    const nb_state *st = ctx;
    mo_json_kv_bool(w, "profiler_loaded", st->profiled);
    mo_json_kv_string(w, "region_format", "<collective>/<bytes>/t<tests>");
    mo_json_kv_int64(w, "ranks", st->nranks);
    mo_json_kv_int64(w, "tests", st->params->tests);
    mo_json_kv_double(w, "work_units_per_us", st->rate);
    mo_json_kv_int64(w, "cases_planned", st->planned);
    mo_json_objects(w, "cases", st->cases, sizeof *st->cases, (size_t)st->ncases, write_case, st);
}

/* ---- main ----------------------------------------------------------------- */

static bool nb_profiled(void)
{
    return mpi_overlap_region_begin != NULL && mpi_overlap_region_end != NULL;
}

static int planned_cases(const nb_params *p, size_t nsizes)
{
    int n = 0;
    for (int i = 0; i < NCOLLS; i++)
        if (p->colls & (1u << i))
            n += COLLS[i].sized ? (int)nsizes : 1;
    return n;
}

static int nb_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    const nb_params *p = ctx;
    const long nregions = (long)planned_cases(p, o->sizes.n) * (p->tests > 0 ? 2 : 1);
    if (nb_profiled() && nregions > MAX_REGIONS) {
        snprintf(err, errlen, "%ld regions (cases x variants) exceed the %d the profiler keeps apart; "
                 "use fewer sizes or collectives", nregions, MAX_REGIONS);
        return -1;
    }
    return mo_loop_check(o, ctx, err, errlen);
}

static void nb_teardown(mo_bench *b, void *ctx)
{
    nb_state *st = ctx;
    (void)b;
    for (int i = 0; i < st->ncases; i++) {
        free(st->cases[i].p);
        for (int v = 0; v < 2; v++)
            free(st->cases[i].var[v].v);
    }
    free(st->cases);
    free(st->sbuf);
    free(st->rbuf);
    free(st->counts);
    for (int k = 0; k < 8; k++)
        free(st->t[k]);
}

static void nb_setup(mo_bench *b, void *ctx)
{
    nb_state *st = ctx;
    const nb_params *params = st->params;
    st->opts = &b->opts;
    st->nranks = b->nranks;
    st->profiled = nb_profiled();
    st->cap = MO_LOOP_MAX_ITERS;
    st->planned = planned_cases(params, b->opts.sizes.n);
    st->rtype = dt_mpi(params->dtype);
    st->rsize = dt_size(params->dtype);
    b->comm = MPI_COMM_WORLD;
    if (b->rank == 0 && !st->profiled)
        mo_result_warn(&b->doc, "the overlap profiler is not loaded: no profiler bounds (run it with "
                                "mpi-overlap bench nbc-overlap)");
    b->ready.calib_ms = CALIBRATION_MS;
    b->ready.calib_samples = CALIBRATION_SAMPLES;
}

/* Every rank: rank 0's work rate, then buffers for every case. */
static int nb_start(mo_bench *b, void *ctx)
{
    nb_state *st = ctx;
    const int nranks = b->nranks;
    st->rate = b->work.units_per_us;
    MPI_Bcast(&st->rate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    uint64_t largest = b->opts.sizes.v[b->opts.sizes.n - 1];
    size_t block = largest > 0 ? (size_t)largest : 4;
    size_t bytes = block * (size_t)nranks;
    st->sbuf = mo_page_alloc(bytes);
    st->rbuf = mo_page_alloc(bytes);
    st->counts = malloc((size_t)nranks * sizeof *st->counts);
    int have = st->sbuf && st->rbuf && st->counts, all = 0;
    for (int k = 0; k < 8; k++) {
        st->t[k] = malloc((size_t)st->cap * sizeof(double));
        have = have && st->t[k];
    }
    st->cases = calloc((size_t)st->planned, sizeof *st->cases);
    have = have && st->cases;
    for (int i = 0; i < st->planned && have; i++) {
        st->cases[i].p = malloc((size_t)NP * (size_t)nranks * sizeof(double));
        st->cases[i].var[0].v = malloc((size_t)NV * (size_t)nranks * sizeof(double));
        st->cases[i].var[1].v = malloc((size_t)NV * (size_t)nranks * sizeof(double));
        have = st->cases[i].p && st->cases[i].var[0].v && st->cases[i].var[1].v;
    }
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (b->rank == 0)
            fprintf(stderr, "mo_" PROGRAM ": error: out of memory (%zu-byte buffers)\n", bytes);
        return -1;
    }
    memset(st->sbuf, b->rank + 1, bytes);
    memset(st->rbuf, 0, bytes);
    return 0;
}

/* Case i: the selected collectives in turn, each over --sizes if sized. */
static int nb_one_case(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    nb_state *st = ctx;
    int ci = 0, si = i;
    for (;; ci++) {
        if (!(st->params->colls & (1u << ci)))
            continue;
        int nsz = COLLS[ci].sized ? (int)b->opts.sizes.n : 1;
        if (si < nsz)
            break;
        si -= nsz;
    }
    nb_case *cs = &st->cases[st->ncases];
    cs->coll = ci;
    cs->size = COLLS[ci].sized ? b->opts.sizes.v[si] : 0;
    cs->bytes = case_bytes(ci, cs->size, st->rsize);
    measure_case(st, cs);
    st->ncases++;
    if (b->rank == 0) {
        snprintf(label, labellen, "%s %llu B", COLLS[ci].name, (unsigned long long)cs->bytes);
        const nb_variant *v = &cs->var[cs->nvar - 1];
        mo_verbose(&b->opts,
                   "%-22s %8llu B  t_pure %9.2f us  t_cpu %9.2f us  t_ovrl(t0) %9.2f us  "
                   "t_ovrl(t%ld) %9.2f us  (%ld iterations)\n",
                   COLLS[ci].name, (unsigned long long)cs->bytes, cs->p[P_PURE], cs->p[P_ALONE],
                   cs->var[0].v[V_OVERALL], v->tests, v->v[V_OVERALL], cs->iterations);
    }
    return MO_POINT_OK;
}

int main(int argc, char **argv)
{
    static nb_params params = {.colls = (1u << NCOLLS) - 1, .tests = DEFAULT_TESTS, .dtype = DT_INT};
    static nb_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = nb_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {PROGRAM, DEFAULT_SIZES, &ext, 2, true, nb_check, QUICK_SIZES}, .benchmark = BENCH,
        .results = write_results, .state = &st, .setup = nb_setup, .start = nb_start, .teardown = nb_teardown,
        .mode = MO_BENCH_LOCKSTEP, .unit = "cases", .planned = &st.planned, .point = nb_one_case,
        .recheck_work = true, MO_KERNEL_FIELDS(nb_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
