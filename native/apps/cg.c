/* cg.c - mo_cg: a miniFE-like mini-application. Unpreconditioned conjugate
 * gradient on the 3-D Poisson matrix (7-point Laplacian: 6 on the diagonal,
 * -1 per face neighbour, zero Dirichlet boundary; applied matrix-free),
 * decomposed over any number of ranks (grid.h), right-hand side seeded
 * random values, x0 = 0, for a fixed number of --iterations, restarted from
 * x0 = 0 whenever the residual has fallen by 1e-30 (CG_RESTART_FALL). Each iteration:
 *     q = A p       ghost exchange of p with the 6 face neighbours: post,
 *                   compute the interior of q, MPI_Waitall, the boundary
 *     pq = p.q      dot product, reduced over the ranks
 *     independent work: --work-us of calibrated work (rank 0: (1 + F) times
 *                   that with --imbalance F), standing for the rest of an
 *                   application's step, which does not depend on pq
 *     r -= alpha q  alpha = rr / pq
 *     rr' = r.r     dot product, reduced over the ranks
 *     x += alpha p  (does not depend on rr')
 *     p = r + beta p   beta = rr' / rr
 * with the two reductions done in one of two modes:
 *   allreduce    MPI_Allreduce, then the independent work / the x update
 *   iallreduce   MPI_Iallreduce, the independent work / the x update while it
 *                is in flight, then MPI_Wait
 * Both modes perform the same floating-point operations in the same order,
 * so for one number of ranks their residual histories are the same (up to
 * the MPI's reduction order, which may differ between MPI_Allreduce and
 * MPI_Iallreduce on more than 2 ranks); across numbers of ranks the local
 * partial sums differ in rounding only, and the histories agree to a
 * relative 1e-10 (residual_tolerance in the result; the tests check it).
 *
 * Measured per mode, without PMPI: run time (largest over the ranks), time
 * in the halo exchange's and in the reductions' MPI calls, in the
 * independent work, per-iteration times (largest over the ranks), the
 * residual norm ||r_k|| for k = 0..iterations, after --warmup untimed
 * iterations (the solve then starts again from x0 = 0; the profiler's
 * monitoring is off, MPI_Pcontrol(0), meanwhile). Under the overlap profiler the phases
 * are regions "<mode>/halo", "<mode>/matvec", "<mode>/reduce", "<mode>/work"
 * (weak region API). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_ab.h"
#include "app_main.h"
#include "app_options.h"
#include "bench_util.h"
#include "grid.h"
#include "json.h"
#include "mpi_overlap.h"
#include "options.h"
#include "provenance.h"
#include "result.h"
#include "stats.h"
#include "timer.h"
#include "work.h"

#define NAME "cg"   /* usage, default output mo_cg.json */
#define BENCH "cg"  /* the result's benchmark (bench-cg-v1) */
#define DEFAULT_GRID 64
#define DEFAULT_GRID_QUICK 32
#define DEFAULT_ITERATIONS 100
#define DEFAULT_ITERATIONS_QUICK 30
#define DEFAULT_WORK_US 20.0
#define MAX_GRID 4096
#define RESIDUAL_TOLERANCE 1e-10 /* relative, per iteration, across modes and rank counts */
/* The solve starts again from x0 = 0 once r.r has fallen by this factor (the
 * relative residual by 1e-30). It falls about 1e-46 per 500 iterations on the
 * 64^3 grid and faster on smaller ones (below 1e-160 within 200 iterations at
 * 8^3); left alone, the squares in r.r turn subnormal (slow) and then r.r
 * underflows to 0 and the iterations compute NaNs (after about 3,350 at 64^3).
 * Restarting keeps a run of any length computing numbers of one scale at one
 * speed, so the profiler's cost can be measured on runs of 10 s and more. The
 * test is on the reduced r.r, the same on every rank and, to the reduction's
 * rounding, in every mode; a restart takes no MPI call (the start's r.r is
 * kept), so every iteration communicates alike. */
#define CG_RESTART_FALL 1e-60
#define CALIBRATION_MS 1.0
#define CALIBRATION_SAMPLES 7
#define REGION_LEN 64

/* ---- modes ----------------------------------------------------------------- */

enum { MODE_ALLREDUCE, MODE_IALLREDUCE, NMODES };
static const char *const MODE_NAMES[NMODES] = {"allreduce", "iallreduce"};

/* ---- application options ----------------------------------------------------- */

static const app_defaults CG_DEFAULTS = {MODE_NAMES, NMODES, MAX_GRID, DEFAULT_GRID, DEFAULT_GRID_QUICK,
                                         DEFAULT_ITERATIONS, DEFAULT_ITERATIONS_QUICK};

typedef struct cg_params {
    app_common c; /* modes, grid, iterations, seed */
    double work_us, imbalance;
    long long work_units; /* 0: from --work-us */
} cg_params;

enum { OPT_WORK_US = APP_OPT_FIRST, OPT_WORK_UNITS, OPT_IMBALANCE };

static const struct option cg_longopts[] = {
    APP_COMMON_LONGOPTS,
    {"work-us", required_argument, NULL, OPT_WORK_US},
    {"work-units", required_argument, NULL, OPT_WORK_UNITS},
    {"imbalance", required_argument, NULL, OPT_IMBALANCE},
    {NULL, 0, NULL, 0},
};

static int cg_parse(void *ctx, int code, const char *arg, char *err, size_t errlen)
{
    cg_params *p = ctx;
    long v = 0;
    switch (code) {
    case OPT_WORK_US: return mo_options_parse_double("work-us", arg, 0.0, 1e7, &p->work_us, err, errlen);
    case OPT_WORK_UNITS:
        if (mo_options_parse_long("work-units", arg, 0, LONG_MAX / 4, &v, err, errlen))
            return -1;
        p->work_units = v;
        return 0;
    case OPT_IMBALANCE: return mo_options_parse_double("imbalance", arg, 0.0, 1e4, &p->imbalance, err, errlen);
    }
    const int rc = app_common_parse(&p->c, &CG_DEFAULTS, code, arg, err, errlen);
    if (rc == 1)
        snprintf(err, errlen, "internal error: unknown option code %d", code);
    return rc == 0 ? 0 : -1;
}

static int cg_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    return app_common_finalize(&((cg_params *)ctx)->c, &CG_DEFAULTS, quick, err, errlen);
}

static void cg_usage(FILE *f)
{
    fprintf(f,
            "  --modes LIST         allreduce, iallreduce, comma-separated, or all (default all);\n"
            "                       --mode is the same\n"
            "  --grid N|NXxNYxNZ    global grid points (default %d^3; --quick %d^3)\n"
            "  --local N|NXxNYxNZ   points per rank instead (times the MPI_Dims_create split)\n"
            "  --iterations N       CG iterations per mode, no early stop (default %d; --quick %d)\n"
            "  --work-us X          independent calibrated work per iteration, us (default %g)\n"
            "  --work-units U       the same in work-loop units; overrides --work-us\n"
            "  --imbalance F        rank 0 does (1 + F) times the independent work (default 0)\n"
            "  --seed S             right-hand side seed (default 1)\n"
            APP_PROFILER_AB_USAGE
            "  (--warmup N: untimed iterations per mode, at most --iterations, after which the\n"
            "  mode starts again from x0 = 0; --sizes, --reps, --sample-ms, --iters are not used)\n",
            DEFAULT_GRID, DEFAULT_GRID_QUICK, DEFAULT_ITERATIONS, DEFAULT_ITERATIONS_QUICK, DEFAULT_WORK_US);
}

static void cg_write_json(mo_json *w, const void *ctx)
{
    const cg_params *p = ctx;
    app_common_json(w, &p->c, &CG_DEFAULTS);
    mo_json_kv_double(w, "work_us", p->work_us);
    mo_json_kv_int64(w, "work_units", p->work_units);
    mo_json_kv_double(w, "imbalance", p->imbalance);
    mo_json_kv_int64(w, "seed", p->c.seed);
}

/* ---- state ------------------------------------------------------------------- */

typedef struct cg_mode_result {
    int mode;
    bool done;
    double run_time_s;
    double mpi_time_s_max, mpi_time_s_mean, halo_time_s_max, reduce_time_s_max, work_time_s_max;
    int64_t reductions_per_rank;
    double *iter_s;    /* per iteration, largest over the ranks */
    double *residuals; /* ||r_k||, k = 0..iterations */
} cg_mode_result;

typedef struct cg_state {
    const cg_params *params;
    const app_grid *grid;
    const mo_work_calib *work;
    uint64_t units;    /* independent work per iteration (rank 0's, before the imbalance) */
    uint64_t my_units; /* this rank's: rank 0 does 1 + imbalance times units */
    long warmup;       /* untimed iterations per mode */
    int nmodes;
    cg_mode_result *res;
    double *vec;       /* the 5 vectors of solve() */
    double *iter_s;    /* this rank's iteration times, then the largest (rank 0) */
    double *residuals; /* this rank's ||r_k|| */
} cg_state;

/* Largest relative difference between two residual histories. */
static double max_rel_diff(const double *a, const double *b, long n)
{
    double worst = 0.0;
    for (long i = 0; i < n; i++) {
        const double scale = fmax(fabs(a[i]), fabs(b[i]));
        const double d = scale > 0 ? fabs(a[i] - b[i]) / scale : 0.0;
        if (!(d <= worst))
            worst = d;
    }
    return worst;
}

static void write_results(mo_json *w, const void *ctx)
{
    const cg_state *st = ctx;
    const app_grid *g = st->grid;
    const long iters = st->params->c.iterations;
    app_json_dims(w, "grid", g->global);
    app_json_dims(w, "dims", g->dims);
    mo_json_kv_int64(w, "ranks", g->size);
    mo_json_kv_int64(w, "points", (int64_t)g->global[0] * g->global[1] * g->global[2]);
    mo_json_kv_int64(w, "iterations", iters);
    mo_json_kv_int64(w, "warmup_iterations", st->warmup);
    mo_json_kv_uint64(w, "work_units_per_iter", st->units);
    mo_json_kv_double(w, "work_us_nominal",
                      st->work->units_per_us > 0 ? (double)st->units / st->work->units_per_us : NAN);
    mo_json_kv_double(w, "imbalance", st->params->imbalance);
    mo_json_kv_int64(w, "seed", st->params->c.seed);
    mo_json_kv_double(w, "residual_tolerance", RESIDUAL_TOLERANCE);
    mo_json_key(w, "modes");
    mo_json_begin_array(w);
    bool all_done = true;
    double worst = 0.0;
    for (int i = 0; i < st->nmodes; i++) {
        const cg_mode_result *r = &st->res[i];
        all_done = all_done && r->done;
        if (r->done && st->res[0].done) {
            const double d = max_rel_diff(r->residuals, st->res[0].residuals, iters + 1);
            if (!(d <= worst))
                worst = d;
        }
        mo_json_begin_object(w);
        mo_json_kv_string(w, "mode", MODE_NAMES[r->mode]);
        mo_json_kv_bool(w, "complete", r->done);
        if (r->done) {
            mo_json_kv_double(w, "run_time_s", r->run_time_s);
            mo_json_kv_double(w, "per_iter_us", mo_stats_median(r->iter_s, (size_t)iters) * 1e6);
            mo_json_kv_double(w, "mpi_time_s", r->mpi_time_s_max);
            mo_json_kv_double(w, "mpi_time_s_mean", r->mpi_time_s_mean);
            mo_json_kv_double(w, "halo_time_s", r->halo_time_s_max);
            mo_json_kv_double(w, "reduce_time_s", r->reduce_time_s_max);
            mo_json_kv_double(w, "work_time_s", r->work_time_s_max);
            mo_json_kv_int64(w, "reductions_per_rank", r->reductions_per_rank);
            mo_json_kv_double(w, "relative_residual",
                              r->residuals[0] > 0 ? r->residuals[iters] / r->residuals[0] : NAN);
            mo_json_kv_doubles(w, "residuals", r->residuals, (size_t)iters + 1);
            mo_json_kv_doubles(w, "iter_time_s", r->iter_s, (size_t)iters);
        }
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    mo_json_key(w, "residuals_max_rel_diff");
    if (all_done)
        mo_json_double(w, worst);
    else
        mo_json_null(w);
    mo_json_key(w, "residuals_agree");
    if (all_done)
        mo_json_bool(w, worst <= RESIDUAL_TOLERANCE);
    else
        mo_json_null(w);
}

/* ---- computation ------------------------------------------------------------ */


/* q = A p on the rows of box b (A: the 7-point Laplacian). */
static void matvec_box(const app_grid *g, const double *restrict p, double *restrict q, const app_box *b)
{
    const size_t sx = g->sx, sxy = g->sxy;
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int j = b->lo[1]; j < b->hi[1]; j++) {
            const double *c = p + app_idx(g, 0, j, k);
            double *o = q + app_idx(g, 0, j, k);
            for (int i = b->lo[0]; i < b->hi[0]; i++)
                o[i] = 6.0 * c[i] - c[i - 1] - c[i + 1] - c[i - sx] - c[i + sx] - c[i - sxy] - c[i + sxy];
        }
}

/* This rank's part of a . b over its owned points, in a fixed order. */
static double local_dot(const app_grid *g, const double *a, const double *b)
{
    double s = 0.0;
    for (int k = 1; k <= g->n[2]; k++)
        for (int j = 1; j <= g->n[1]; j++) {
            const size_t row = app_idx(g, 0, j, k);
            for (int i = 1; i <= g->n[0]; i++)
                s += a[row + (size_t)i] * b[row + (size_t)i];
        }
    return s;
}

typedef struct cg_counters {
    double halo_s, reduce_s, work_s;
    int64_t reductions;
} cg_counters;

typedef struct cg_regions {
    char halo[REGION_LEN], matvec[REGION_LEN], reduce[REGION_LEN], work[REGION_LEN];
} cg_regions;

/* The global sum of one double in this mode; `overlap` (with its argument)
 * runs between the start and the completion of the reduction in iallreduce
 * mode and after the reduction in allreduce mode, so both modes do the same
 * computation. */
typedef void (*cg_overlap_fn)(void *arg, cg_counters *c);

static double reduce_sum(const app_grid *g, int mode, const cg_regions *rg, double local, cg_overlap_fn overlap,
                         void *arg, cg_counters *c)
{
    double global = 0.0;
    double t = app_now_s();
    MPI_OVERLAP_REGION_BEGIN(rg->reduce);
    if (mode == MODE_ALLREDUCE) {
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, g->cart);
        MPI_OVERLAP_REGION_END(rg->reduce);
        c->reduce_s += app_now_s() - t;
        overlap(arg, c);
    } else {
        MPI_Request req;
        MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, g->cart, &req);
        MPI_OVERLAP_REGION_END(rg->reduce);
        c->reduce_s += app_now_s() - t;
        overlap(arg, c);
        t = app_now_s();
        MPI_OVERLAP_REGION_BEGIN(rg->reduce);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_OVERLAP_REGION_END(rg->reduce);
        c->reduce_s += app_now_s() - t;
    }
    c->reductions++;
    return global;
}

typedef struct work_arg {
    uint64_t units;
    const cg_regions *rg;
} work_arg;

static void do_work(void *arg, cg_counters *c)
{
    const work_arg *w = arg;
    const double t = app_now_s();
    MPI_OVERLAP_REGION_BEGIN(w->rg->work);
    mo_work(w->units);
    MPI_OVERLAP_REGION_END(w->rg->work);
    c->work_s += app_now_s() - t;
}

typedef struct axpy_arg {
    double *x;
    const double *p;
    double alpha;
    size_t n;
} axpy_arg;

static void do_x_update(void *arg, cg_counters *c)
{
    (void)c;
    const axpy_arg *a = arg;
    for (size_t i = 0; i < a->n; i++)
        a->x[i] += a->alpha * a->p[i];
}

/* CG from x0 = 0 for `iters` iterations in one mode; collective. vec holds 5
 * vectors of g->total doubles: x, r, p, q, b. Records the residual norms
 * (iters + 1) and iteration times when residuals / iter_s are not NULL. */
static void solve(const app_grid *g, int mode, const cg_params *prm, const cg_regions *rg, uint64_t units,
                  double *vec, long iters, double *iter_s, double *residuals, cg_counters *c)
{
    const size_t n = g->total;
    double *x = vec, *r = vec + n, *p = vec + 2 * n, *q = vec + 3 * n, *b = vec + 4 * n;
    app_grid_seed(g, b, (uint64_t)prm->c.seed, 1);
    memset(x, 0, n * sizeof *x);
    memset(q, 0, n * sizeof *q);
    memcpy(r, b, n * sizeof *r);
    memcpy(p, b, n * sizeof *p);
    const app_box in = app_grid_interior(g);
    app_box bnd[6];
    const int nbnd = app_grid_boundary(g, bnd);
    work_arg wa = {units, rg};
    axpy_arg xa = {x, p, 0.0, n};

    double rr0 = 0.0;
    {
        const double local = local_dot(g, r, r);
        MPI_Allreduce(&local, &rr0, 1, MPI_DOUBLE, MPI_SUM, g->cart);
    }
    double rr = rr0;
    if (residuals)
        residuals[0] = sqrt(rr);
    bool paused = false;
    for (long it = 0; it < iters; it++) {
        if (rr < rr0 * CG_RESTART_FALL) { /* outside the iteration's time */
            memset(x, 0, n * sizeof *x);
            memcpy(r, b, n * sizeof *r);
            memcpy(p, b, n * sizeof *p);
            rr = rr0;
        }
        if (iter_s) /* the timed solve */
            app_ab_step(prm->c.profiler_ab, it, &paused);
        const double ti = app_now_s();
        MPI_Request reqs[GRID_MAX_REQS];
        double t = app_now_s();
        MPI_OVERLAP_REGION_BEGIN(rg->halo);
        const int nreq = app_grid_post(g, p, false, reqs);
        MPI_OVERLAP_REGION_END(rg->halo);
        c->halo_s += app_now_s() - t;
        MPI_OVERLAP_REGION_BEGIN(rg->matvec);
        matvec_box(g, p, q, &in);
        MPI_OVERLAP_REGION_END(rg->matvec);
        t = app_now_s();
        MPI_OVERLAP_REGION_BEGIN(rg->halo);
        MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        MPI_OVERLAP_REGION_END(rg->halo);
        c->halo_s += app_now_s() - t;
        MPI_OVERLAP_REGION_BEGIN(rg->matvec);
        for (int k = 0; k < nbnd; k++)
            matvec_box(g, p, q, &bnd[k]);
        MPI_OVERLAP_REGION_END(rg->matvec);

        const double pq = reduce_sum(g, mode, rg, local_dot(g, p, q), do_work, &wa, c);
        const double alpha = rr / pq;
        for (size_t i = 0; i < n; i++)
            r[i] -= alpha * q[i];
        xa.alpha = alpha;
        const double rr_new = reduce_sum(g, mode, rg, local_dot(g, r, r), do_x_update, &xa, c);
        const double beta = rr_new / rr;
        for (size_t i = 0; i < n; i++)
            p[i] = r[i] + beta * p[i];
        rr = rr_new;
        if (residuals)
            residuals[it + 1] = sqrt(rr);
        if (iter_s)
            iter_s[it] = app_now_s() - ti;
    }
    app_ab_end(&paused);
}

/* Runs one mode after `warmup` untimed iterations (then from x0 = 0 again,
 * with the profiler's monitoring off: MPI_Pcontrol(0)); collective. Rank 0 gets res
 * filled in. */
static void run_mode(const app_grid *g, int mode, const cg_params *prm, uint64_t units, long warmup,
                     double *vec, double *iter_s, double *residuals, cg_mode_result *res)
{
    cg_regions rg;
    snprintf(rg.halo, sizeof rg.halo, "%s/halo", MODE_NAMES[mode]);
    snprintf(rg.matvec, sizeof rg.matvec, "%s/matvec", MODE_NAMES[mode]);
    snprintf(rg.reduce, sizeof rg.reduce, "%s/reduce", MODE_NAMES[mode]);
    snprintf(rg.work, sizeof rg.work, "%s/work", MODE_NAMES[mode]);
    cg_counters c = {0};
    if (warmup > 0) {
        MPI_Pcontrol(0);
        solve(g, mode, prm, &rg, units, vec, warmup, NULL, NULL, &c);
        MPI_Pcontrol(1);
        memset(&c, 0, sizeof c);
    }
    MPI_Barrier(g->cart);
    const double t0 = app_now_s();
    solve(g, mode, prm, &rg, units, vec, prm->c.iterations, iter_s, residuals, &c);
    const double mine = app_now_s() - t0;

    double times[5] = {mine, c.halo_s + c.reduce_s, c.halo_s, c.reduce_s, c.work_s}, tmax[5], mpi_sum = 0.0;
    MPI_Reduce(times, tmax, 5, MPI_DOUBLE, MPI_MAX, 0, g->cart);
    MPI_Reduce(&times[1], &mpi_sum, 1, MPI_DOUBLE, MPI_SUM, 0, g->cart);
    MPI_Reduce(g->rank == 0 ? MPI_IN_PLACE : iter_s, iter_s, (int)prm->c.iterations, MPI_DOUBLE, MPI_MAX, 0,
               g->cart);
    if (g->rank == 0) {
        res->done = true;
        res->run_time_s = tmax[0];
        res->mpi_time_s_max = tmax[1];
        res->halo_time_s_max = tmax[2];
        res->reduce_time_s_max = tmax[3];
        res->work_time_s_max = tmax[4];
        res->mpi_time_s_mean = mpi_sum / g->size;
        res->reductions_per_rank = c.reductions;
        memcpy(res->iter_s, iter_s, (size_t)prm->c.iterations * sizeof *iter_s);
        memcpy(res->residuals, residuals, ((size_t)prm->c.iterations + 1) * sizeof *residuals);
    }
}

/* ---- main ----------------------------------------------------------------- */

/* app_run_modes()'s hook: one mode on every rank; rank 0 records it and
 * prints its --verbose lines. */
static void cg_mode(app_run *run, void *app, int i, int mode)
{
    cg_state *st = app;
    const size_t iters = (size_t)st->params->c.iterations;
    run_mode(st->grid, mode, st->params, st->my_units, st->warmup, st->vec, st->iter_s, st->residuals,
             run->rank == 0 ? &st->res[i] : NULL);
    if (run->rank == 0 && run->opts.verbose) {
        const cg_mode_result *r = &st->res[i];
        printf("%-10s run %.6f s  mpi %.6f s  reduce %.6f s  ||r||/||r0|| %.6e\n", MODE_NAMES[mode], r->run_time_s,
               r->mpi_time_s_max, r->reduce_time_s_max, r->residuals[iters] / r->residuals[0]);
        for (size_t k = 0; k <= iters; k++)
            printf("  %s residual %zu %.17g\n", MODE_NAMES[mode], k, r->residuals[k]);
        fflush(stdout);
    }
}

/* Rank 0 after its probe: the units of independent work per iteration. */
static void cg_calibrated(void *app)
{
    cg_state *st = app;
    const double u = st->params->work_units > 0 ? (double)st->params->work_units
                                                : round(st->params->work_us * st->work->units_per_us);
    st->units = (uint64_t)(int64_t)(u > 0 ? u : 0);
}

int main(int argc, char **argv)
{
    cg_params params = {.c = app_common_init(&CG_DEFAULTS), .work_us = DEFAULT_WORK_US};
    mo_bench_options ext = {cg_longopts, cg_parse, cg_finalize, cg_usage, cg_write_json, &params};
    const mo_bench_spec spec = {NAME, "8", &ext, 0, false, NULL, NULL};
    app_run run;
    int exit_status;
    if (!app_run_start(&run, &spec, BENCH, &params.c.extent, argc, argv, &exit_status))
        return exit_status;
    const int rank = run.rank;
    const app_grid *g = &run.grid;

    cg_state st = {&params, g, &run.work, 0, 0, 0, 0, NULL, NULL, NULL, NULL};
    st.warmup = run.opts.warmup < params.c.iterations ? run.opts.warmup : params.c.iterations;
    st.nmodes = app_count_modes(params.c.modes);
    const size_t iters = (size_t)params.c.iterations;
    st.vec = malloc(5 * g->total * sizeof *st.vec);
    st.iter_s = malloc(iters * sizeof *st.iter_s);
    st.residuals = malloc((iters + 1) * sizeof *st.residuals);
    bool ok = st.vec && st.iter_s && st.residuals;
    if (rank == 0) {
        st.res = calloc((size_t)st.nmodes, sizeof *st.res);
        ok = ok && st.res;
        for (int m = 0, i = 0; ok && m < NMODES; m++)
            if (params.c.modes & (1u << m)) {
                st.res[i].mode = m;
                st.res[i].iter_s = malloc(iters * sizeof *st.iter_s);
                st.res[i].residuals = malloc((iters + 1) * sizeof *st.residuals);
                ok = ok && st.res[i].iter_s && st.res[i].residuals;
                i++;
            }
    }
    /* Rank 0 calibrates the work loop, fixes the units of independent work
     * and checks it can write the result; every rank gets the units. */
    int status = app_run_ready(&run, ok, CALIBRATION_MS, CALIBRATION_SAMPLES, cg_calibrated, &st, write_results,
                               "vectors");
    if (status == 0) {
        MPI_Bcast(&st.units, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        st.my_units = rank == 0 ? (uint64_t)llround((double)st.units * (1.0 + params.imbalance)) : st.units;
        status = app_run_modes(&run, params.c.modes, MODE_NAMES, cg_mode, &st, write_results);
    }
    if (st.res)
        for (int i = 0; i < st.nmodes; i++) {
            free(st.res[i].iter_s);
            free(st.res[i].residuals);
        }
    free(st.res);
    free(st.vec);
    free(st.iter_s);
    free(st.residuals);
    return app_run_end(&run, status, status == 2 ? run.err : NULL);
}
