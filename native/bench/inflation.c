/* inflation.c - mo_inflation: computation inflation (Strohbeen, the Cray
 * Gemini slides' miniGhost experiment): a fixed exchange with growing local
 * computation, total time per iteration against the computation, per
 * message size.
 *
 * Ranks 0 and 1 of MPI_COMM_WORLD take part (others wait at the end). Per
 * message size: a pilot of --pilot exchanges without work gives the median
 * exchange time T_x; the computation steps are 0 units, then --steps - 1
 * values spaced geometrically from --min-work-us to max(--max-factor * T_x,
 * 4 * --min-work-us), in calibrated work units (rank 0 chooses, broadcasts).
 * One round takes every step once (rotating start), and per step two
 * samples after a barrier:
 *   alone:    mo_work(units) on both ranks, no message  -> computation
 *   exchange: MPI_Irecv + MPI_Isend with the partner; mo_work(units);
 *             MPI_Waitall                               -> total
 *             (and the work inside it, for the compute slowdown)
 * --samples rounds; rank 0's times are recorded. The analysis fits a hinge
 * total = b + s * max(0, computation - k) (analysis/knee.py): k is the
 * computation above which the exchange is hidden. docs/benchmarks.md,
 * section inflation. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"

#define BENCH "inflation"
#define DEFAULT_SIZES "256:4M"
#define QUICK_SIZES "1k,64k,1M"
#define DEFAULT_SAMPLES 60
#define QUICK_SAMPLES 40
#define DEFAULT_STEPS 24
#define QUICK_STEPS 16
#define DEFAULT_PILOT 15
#define WARMUP 3
#define TAG 400
#define MAX_STEPS 200

typedef struct in_params {
    long samples, steps, pilot;
    double max_factor, min_work_us;
} in_params;

static const mo_field in_fields[] = {
    MO_FIELD_LONG_Q("samples", in_params, samples, 2, 100000, DEFAULT_SAMPLES, QUICK_SAMPLES),
    MO_FIELD_LONG_Q("steps", in_params, steps, 4, MAX_STEPS, DEFAULT_STEPS, QUICK_STEPS),
    MO_FIELD_LONG_OF("pilot", in_params, pilot, 1, 10000),
    MO_FIELD_DOUBLE_OF("max-factor", in_params, max_factor, 1.0, 1000.0),
    MO_FIELD_DOUBLE_OF("min-work-us", in_params, min_work_us, 0.01, 1e5),
};

static void in_usage(FILE *f)
{
    fprintf(f,
            "  --samples N          samples per step (default %d; --quick %d)\n"
            "  --steps N            computation steps incl. zero (default %d; --quick %d)\n"
            "  --pilot N            exchanges without work that set the range (default %d)\n"
            "  --max-factor F       largest computation = F x exchange time (default 8)\n"
            "  --min-work-us T      smallest non-zero computation in us (default 0.25)\n"
            "  (--quick without --sizes measures " QUICK_SIZES ")\n",
            DEFAULT_SAMPLES, QUICK_SAMPLES, DEFAULT_STEPS, QUICK_STEPS, DEFAULT_PILOT);
}

/* ---- state ------------------------------------------------------------- */

enum { S_ALONE = 0, S_TOTAL = 1, S_INSIDE = 2, NSERIES = 3 };
static const char *const SERIES_KEYS[NSERIES] = {"work_alone", "total", "work_inside"};

typedef struct in_step {
    int64_t units;
    double work_us_nominal;
    double *s[NSERIES]; /* rank 0's samples, us */
    mo_stats st[NSERIES];
} in_step;

typedef struct in_point {
    uint64_t bytes;
    double pilot_exchange_us;
    in_step *steps;
    int nsteps; /* allocated (rank 0's points) */
    size_t nsamples;
} in_point;

typedef struct in_state {
    const in_params *params;
    const mo_work_calib *work;
    MPI_Comm pair;
    mo_pair_points pp; /* rank 0's points are in_points; scratch: pilot samples */
} in_state;

/* One exchange with `units` of work inside: the total (us), *inside the work. */
static double exchange(const in_state *st, int n, uint64_t units, double *inside)
{
    const MPI_Comm pc = st->pair;
    const int peer = 1 - st->pp.rank;
    MPI_Request req[2];
    MPI_Barrier(pc);
    uint64_t t0 = mo_timer_now_ns();
    MPI_Irecv(st->pp.rbuf, n, MPI_BYTE, peer, TAG, pc, &req[0]);
    MPI_Isend(st->pp.sbuf, n, MPI_BYTE, peer, TAG, pc, &req[1]);
    uint64_t ta = mo_timer_now_ns();
    mo_work(units);
    uint64_t tb = mo_timer_now_ns();
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    uint64_t t1 = mo_timer_now_ns();
    *inside = mo_us_between(ta, tb);
    return mo_us_between(t0, t1);
}

static double alone(const in_state *st, uint64_t units)
{
    MPI_Barrier(st->pair);
    uint64_t t0 = mo_timer_now_ns();
    mo_work(units);
    uint64_t t1 = mo_timer_now_ns();
    return mo_us_between(t0, t1);
}

static void measure_point(in_state *st, in_point *pt, double *scratch)
{
    const in_params *p = st->params;
    const int n = (int)pt->bytes;
    const int nsteps = (int)p->steps;
    double inside;
    for (int i = 0; i < WARMUP; i++)
        exchange(st, n, 0, &inside);
    for (long i = 0; i < p->pilot; i++)
        scratch[i] = exchange(st, n, 0, &inside);
    int64_t units[MAX_STEPS];
    if (st->pp.rank == 0) {
        const double upu = st->work->units_per_us;
        pt->pilot_exchange_us = mo_stats_median(scratch, (size_t)p->pilot);
        double lo = p->min_work_us, hi = p->max_factor * pt->pilot_exchange_us;
        if (!(hi >= 4.0 * lo))
            hi = 4.0 * lo;
        units[0] = 0;
        for (int j = 1; j < nsteps; j++) {
            double us = lo * pow(hi / lo, (double)(j - 1) / (double)(nsteps - 2));
            int64_t u = (int64_t)llround(us * upu);
            if (u <= units[j - 1])
                u = units[j - 1] + 1;
            units[j] = u;
        }
    }
    MPI_Bcast(units, nsteps, MPI_INT64_T, 0, st->pair);
    for (int j = 0; j < nsteps; j++) {
        in_step *s = &pt->steps[j];
        s->units = units[j];
        if (st->pp.rank == 0)
            s->work_us_nominal = (double)units[j] / st->work->units_per_us;
    }
    for (int j = 0; j < nsteps; j++) { /* untimed: one of each */
        alone(st, (uint64_t)units[j]);
        exchange(st, n, (uint64_t)units[j], &inside);
    }
    for (size_t r = 0; r < (size_t)p->samples; r++) {
        for (int i = 0; i < nsteps; i++) {
            int j = (int)((r + (size_t)i) % (size_t)nsteps);
            in_step *s = &pt->steps[j];
            const uint64_t u = (uint64_t)units[j];
            double a, t;
            if (r % 2) {
                t = exchange(st, n, u, &inside);
                a = alone(st, u);
            } else {
                a = alone(st, u);
                t = exchange(st, n, u, &inside);
            }
            if (st->pp.rank == 0) {
                s->s[S_ALONE][r] = a;
                s->s[S_TOTAL][r] = t;
                s->s[S_INSIDE][r] = inside;
            }
        }
    }
    if (st->pp.rank == 0) {
        pt->nsamples = (size_t)p->samples;
        for (int j = 0; j < nsteps; j++)
            for (int k = 0; k < NSERIES; k++)
                mo_stats_summarize_or_nan(pt->steps[j].s[k], pt->nsamples, &pt->steps[j].st[k]);
    }
}

/* ---- output ------------------------------------------------------------- */

/* One of "steps" of the point ctx. */
static void write_step(mo_json *w, const void *item, const void *ctx)
{
    const in_step *s = item;
    const in_point *pt = ctx;
    mo_json_kv_int64(w, "work_units", s->units);
    mo_json_kv_double(w, "work_us_nominal", s->work_us_nominal);
    for (int k = 0; k < NSERIES; k++) {
        char key[48];
        mo_json_stats(w, SERIES_KEYS[k], &s->st[k]);
        snprintf(key, sizeof key, "%s_samples_us", SERIES_KEYS[k]);
        mo_json_kv_doubles(w, key, s->s[k], pt->nsamples);
    }
}

/* One of "points". */
static void write_point(mo_json *w, const void *item, const void *ctx)
{
    const in_point *pt = item;
    const in_state *st = ctx;
    mo_json_kv_uint64(w, "bytes", pt->bytes);
    mo_json_kv_double(w, "pilot_exchange_us", pt->pilot_exchange_us);
    mo_json_objects(w, "steps", pt->steps, sizeof *pt->steps, (size_t)st->params->steps, write_step, pt);
}

static void write_results(mo_json *w, const void *ctx)
{
    const in_state *st = ctx;
    const in_params *p = st->params;
    mo_json_kv_int64(w, "samples", p->samples);
    mo_json_kv_int64(w, "steps", p->steps);
    mo_json_kv_double(w, "max_factor", p->max_factor);
    mo_json_kv_double(w, "min_work_us", p->min_work_us);
    mo_json_kv_double(w, "units_per_us", st->work ? st->work->units_per_us : NAN);
    mo_points_json(w, &st->pp.points, write_point, st);
}

/* ---- the kernel ------------------------------------------------------- */

static int init_point(void *item, uint64_t bytes, void *arg)
{
    in_point *pt = item;
    const in_params *p = arg;
    pt->bytes = bytes;
    if (!(pt->steps = calloc((size_t)p->steps, sizeof *pt->steps)))
        return -1;
    pt->nsteps = (int)p->steps;
    for (int j = 0; j < (int)p->steps; j++)
        for (int k = 0; k < NSERIES; k++)
            if (!(pt->steps[j].s[k] = calloc((size_t)p->samples, sizeof(double))))
                return -1;
    return 0;
}

static void free_point(void *item)
{
    in_point *pt = item;
    for (int j = 0; pt->steps && j < pt->nsteps; j++)
        for (int k = 0; k < NSERIES; k++)
            free(pt->steps[j].s[k]);
    free(pt->steps);
}

/* The pair's buffers and scratch; rank 0 the points. */
static void in_setup(mo_bench *b, void *ctx)
{
    in_state *st = ctx;
    st->work = &b->work;
    st->pair = b->comm;
    mo_pair_points_setup(b, &st->pp, sizeof(in_point), (size_t)st->params->pilot, init_point,
                         free_point, (void *)st->params);
}

/* Both ranks measure; rank 1 into a point of its own, which it drops. */
static int in_one_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    in_state *st = ctx;
    in_step local_steps[MAX_STEPS];
    memset(local_steps, 0, sizeof local_steps);
    in_point local = {.bytes = b->opts.sizes.v[i], .steps = local_steps};
    in_point *pt = mo_pair_point(&st->pp, i, &local);
    measure_point(st, pt, st->pp.scratch);
    if (st->pp.rank != 0)
        return MO_POINT_OK;
    mo_pair_point_done(&st->pp, i, pt->bytes, label, labellen);
    const in_step *last = &pt->steps[st->params->steps - 1];
    mo_verbose(&b->opts, "%8llu B  exchange %9.2f us  at 0 work: total %9.2f us  at %9.2f us work: total %9.2f us\n",
               (unsigned long long)pt->bytes, pt->pilot_exchange_us, pt->steps[0].st[S_TOTAL].median,
               last->st[S_ALONE].median, last->st[S_TOTAL].median);
    return MO_POINT_OK;
}

int main(int argc, char **argv)
{
    static in_params params = {.pilot = DEFAULT_PILOT, .max_factor = 8.0, .min_work_us = 0.25};
    static in_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = in_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, NULL, QUICK_SIZES}, .pair = true,
        .results = write_results, .state = &st, .setup = in_setup, .pair_points = &st.pp,
        .mode = MO_BENCH_LOCKSTEP, .unit = "sizes", .planned = &st.pp.points.ntotal, .point = in_one_point,
        .recheck_work = true, MO_KERNEL_FIELDS(in_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
