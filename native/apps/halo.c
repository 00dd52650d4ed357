/* halo.c - mo_halo: a miniGhost-like mini-application. A 3-D grid of
 * doubles, decomposed over any number of ranks (MPI_Dims_create +
 * MPI_Cart_create, grid.h), is smoothed by a 7-point stencil (each point
 * becomes the mean of itself and its 6 face neighbours; zero outside the
 * grid) for --iterations iterations, with a ghost exchange before each sweep
 * in one of five modes:
 *   blocking      one MPI_Sendrecv per face, axis by axis, then compute
 *   nonblocking   post the 6 face receives and sends, MPI_Waitall, compute
 *   overlap       post, compute the interior, MPI_Waitall, compute the boundary
 *   overlap-test  as overlap, with --tests K MPI_Testall calls spread evenly
 *                 through the interior computation
 *   diagonal      as nonblocking, but with all 26 neighbours (faces, edges
 *                 and corners, as miniGhost's diagonal exchange); the stencil
 *                 stays 7-point, so the edge and corner ghosts travel but are
 *                 not read, and the result is that of the other modes
 * Every mode computes each point by the same expression in the same order,
 * so the grid after the run is bitwise the same in every mode and for every
 * number of ranks; the checksums (grid.h) prove it. --inflate F sweeps every
 * part of the grid F times per iteration (the same values each time): more
 * computation per exchange without changing the result.
 *
 * Measured per mode, without PMPI: the run time (the largest over the ranks),
 * the time each rank spends inside the exchange's MPI calls (post, test,
 * wait, sendrecv) and in computation, the time of each iteration (largest over
 * the ranks) and the number of MPI_Testall calls, after --warmup untimed
 * iterations (the mode then starts again from the seeded data; the profiler's
 * monitoring is off, MPI_Pcontrol(0), meanwhile). Under the overlap profiler each
 * mode's exchange, interior and boundary computation are regions
 * "<mode>/exchange", "<mode>/interior", "<mode>/boundary" (weak region API:
 * without the profiler they do nothing). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
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

#define NAME "halo"      /* usage, default output mo_halo.json */
#define BENCH "halo"     /* the result's benchmark (bench-halo-v1) */
#define DEFAULT_GRID 64
#define DEFAULT_GRID_QUICK 32
#define DEFAULT_ITERATIONS 200
#define DEFAULT_ITERATIONS_QUICK 50
#define DEFAULT_TESTS 4
#define MAX_GRID 4096
#define CALIBRATION_MS 1.0
#define CALIBRATION_SAMPLES 5
#define REGION_LEN 64

/* ---- modes ----------------------------------------------------------------- */

enum { MODE_BLOCKING, MODE_NONBLOCKING, MODE_OVERLAP, MODE_OVERLAP_TEST, MODE_DIAGONAL, NMODES };
static const char *const MODE_NAMES[NMODES] = {"blocking", "nonblocking", "overlap", "overlap-test", "diagonal"};

/* ---- application options ----------------------------------------------------- */

static const app_defaults HALO_DEFAULTS = {MODE_NAMES, NMODES, MAX_GRID, DEFAULT_GRID, DEFAULT_GRID_QUICK,
                                           DEFAULT_ITERATIONS, DEFAULT_ITERATIONS_QUICK};

typedef struct halo_params {
    app_common c; /* modes, grid, iterations, seed */
    long tests, inflate;
} halo_params;

enum { OPT_TESTS = APP_OPT_FIRST, OPT_INFLATE };

static const struct option halo_longopts[] = {
    APP_COMMON_LONGOPTS,
    {"tests", required_argument, NULL, OPT_TESTS},
    {"inflate", required_argument, NULL, OPT_INFLATE},
    {NULL, 0, NULL, 0},
};

static int halo_parse(void *ctx, int code, const char *arg, char *err, size_t errlen)
{
    halo_params *p = ctx;
    switch (code) {
    case OPT_TESTS: return mo_options_parse_long("tests", arg, 0, 100000, &p->tests, err, errlen);
    case OPT_INFLATE: return mo_options_parse_long("inflate", arg, 1, 100000, &p->inflate, err, errlen);
    }
    const int rc = app_common_parse(&p->c, &HALO_DEFAULTS, code, arg, err, errlen);
    if (rc == 1)
        snprintf(err, errlen, "internal error: unknown option code %d", code);
    return rc == 0 ? 0 : -1;
}

static int halo_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    return app_common_finalize(&((halo_params *)ctx)->c, &HALO_DEFAULTS, quick, err, errlen);
}

static void halo_usage(FILE *f)
{
    fprintf(f,
            "  --modes LIST         blocking, nonblocking, overlap, overlap-test, diagonal,\n"
            "                       comma-separated, or all (default all); --mode is the same\n"
            "  --grid N|NXxNYxNZ    global grid points (default %d^3; --quick %d^3)\n"
            "  --local N|NXxNYxNZ   points per rank instead: the global grid is this times the\n"
            "                       MPI_Dims_create decomposition\n"
            "  --iterations N       stencil sweeps per mode (default %d; --quick %d)\n"
            "  --tests K            MPI_Testall calls per iteration in overlap-test (default %d)\n"
            "  --inflate F          sweep every point F times per iteration (same result; default 1)\n"
            "  --seed S             initial data seed (default 1)\n"
            APP_PROFILER_AB_USAGE
            "  (--warmup N: untimed iterations per mode, at most --iterations, after which the\n"
            "  mode starts again from the seeded data; --sizes, --reps, --sample-ms, --iters\n"
            "  are not used)\n",
            DEFAULT_GRID, DEFAULT_GRID_QUICK, DEFAULT_ITERATIONS, DEFAULT_ITERATIONS_QUICK, DEFAULT_TESTS);
}

static void halo_write_json(mo_json *w, const void *ctx)
{
    const halo_params *p = ctx;
    app_common_json(w, &p->c, &HALO_DEFAULTS);
    mo_json_kv_int64(w, "tests", p->tests);
    mo_json_kv_int64(w, "inflate", p->inflate);
    mo_json_kv_int64(w, "seed", p->c.seed);
}

/* ---- state ------------------------------------------------------------------- */

typedef struct halo_mode_result {
    int mode;
    bool done;
    double run_time_s;                 /* largest over the ranks */
    double mpi_time_s_max, mpi_time_s_mean;
    double compute_time_s_max, compute_time_s_mean;
    double *iter_s;                    /* per iteration, largest over the ranks */
    int64_t test_calls_min, test_calls_max, test_calls_total;
    int64_t requests_per_iter_max;     /* posted receives + sends per iteration */
    uint64_t hash;
    double sum;
} halo_mode_result;

typedef struct halo_state {
    const halo_params *params;
    const app_grid *grid;
    long warmup;                       /* untimed iterations per mode */
    int nmodes;
    halo_mode_result *res;
    double *u0, *u1;                   /* the grid block and its next sweep */
    double *iter_s;                    /* this rank's iteration times, then the largest (rank 0) */
} halo_state;

static void hex64(uint64_t v, char out[17])
{
    snprintf(out, 17, "%016" PRIx64, v);
}

static void write_results(mo_json *w, const void *ctx)
{
    const halo_state *st = ctx;
    const app_grid *g = st->grid;
    const long iters = st->params->c.iterations;
    app_json_dims(w, "grid", g->global);
    app_json_dims(w, "dims", g->dims);
    mo_json_kv_int64(w, "ranks", g->size);
    mo_json_kv_int64(w, "points", (int64_t)g->global[0] * g->global[1] * g->global[2]);
    mo_json_kv_int64(w, "iterations", iters);
    mo_json_kv_int64(w, "warmup_iterations", st->warmup);
    mo_json_kv_int64(w, "tests_per_iter", st->params->tests);
    mo_json_kv_int64(w, "inflate", st->params->inflate);
    mo_json_kv_int64(w, "seed", st->params->c.seed);
    mo_json_key(w, "modes");
    mo_json_begin_array(w);
    bool all_done = true, identical = true;
    for (int i = 0; i < st->nmodes; i++) {
        const halo_mode_result *r = &st->res[i];
        all_done = all_done && r->done;
        if (r->done && st->res[0].done)
            identical = identical && r->hash == st->res[0].hash && r->sum == st->res[0].sum;
        mo_json_begin_object(w);
        mo_json_kv_string(w, "mode", MODE_NAMES[r->mode]);
        mo_json_kv_bool(w, "complete", r->done);
        if (r->done) {
            char hex[17];
            hex64(r->hash, hex);
            mo_json_kv_string(w, "checksum", hex);
            mo_json_kv_double(w, "sum", r->sum);
            mo_json_kv_double(w, "run_time_s", r->run_time_s);
            mo_json_kv_double(w, "per_iter_us", mo_stats_median(r->iter_s, (size_t)iters) * 1e6);
            mo_json_kv_double(w, "mpi_time_s", r->mpi_time_s_max);
            mo_json_kv_double(w, "mpi_time_s_mean", r->mpi_time_s_mean);
            mo_json_kv_double(w, "compute_time_s", r->compute_time_s_max);
            mo_json_kv_double(w, "compute_time_s_mean", r->compute_time_s_mean);
            mo_json_kv_int64(w, "test_calls_per_rank_min", r->test_calls_min);
            mo_json_kv_int64(w, "test_calls_per_rank_max", r->test_calls_max);
            mo_json_kv_int64(w, "test_calls_total", r->test_calls_total);
            mo_json_kv_int64(w, "requests_per_iter_max", r->requests_per_iter_max);
            mo_json_kv_doubles(w, "iter_time_s", r->iter_s, (size_t)iters);
        }
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    mo_json_key(w, "checksums_identical");
    if (all_done)
        mo_json_bool(w, identical);
    else
        mo_json_null(w);
}

/* ---- computation ------------------------------------------------------------ */

/* Rows r0..r1-1 (row = one (j, k) pair of box b, k-major) of the 7-point
 * mean, out of line so that --inflate's repeated sweeps are all done. */
__attribute__((noinline)) static void stencil_rows(const app_grid *g, const double *restrict in,
                                                   double *restrict out, const app_box *b, long r0, long r1)
{
    const long ny = b->hi[1] - b->lo[1];
    const size_t sx = g->sx, sxy = g->sxy;
    for (long r = r0; r < r1; r++) {
        const int j = b->lo[1] + (int)(r % ny), k = b->lo[2] + (int)(r / ny);
        const double *c = in + app_idx(g, 0, j, k);
        double *o = out + app_idx(g, 0, j, k);
        for (int i = b->lo[0]; i < b->hi[0]; i++)
            o[i] = (c[i] + c[i - 1] + c[i + 1] + c[i - sx] + c[i + sx] + c[i - sxy] + c[i + sxy]) * (1.0 / 7.0);
    }
}

static void sweep(const app_grid *g, const double *in, double *out, const app_box *b, long r0, long r1,
                  long inflate)
{
    for (long f = 0; f < inflate; f++)
        stencil_rows(g, in, out, b, r0, r1);
}

typedef struct halo_counters {
    double mpi_s, compute_s;
    int64_t tests, requests;
} halo_counters;


typedef struct halo_regions {
    char exchange[REGION_LEN], interior[REGION_LEN], boundary[REGION_LEN];
} halo_regions;

/* One iteration: the exchange of cur's ghosts and the sweep cur -> nxt. */
static void iteration(const app_grid *g, int mode, const halo_params *p, const halo_regions *rg,
                      double *cur, double *nxt, halo_counters *c)
{
    MPI_Request reqs[GRID_MAX_REQS];
    const app_box in = app_grid_interior(g);
    app_box bnd[6];
    const int nbnd = app_grid_boundary(g, bnd);
    const long in_rows = app_box_rows(&in);
    int nreq = 0;
    double t = app_now_s(), t1;

    MPI_OVERLAP_REGION_BEGIN(rg->exchange);
    if (mode == MODE_BLOCKING)
        app_grid_sendrecv(g, cur);
    else
        nreq = app_grid_post(g, cur, mode == MODE_DIAGONAL, reqs);
    if (mode == MODE_NONBLOCKING || mode == MODE_DIAGONAL)
        MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    MPI_OVERLAP_REGION_END(rg->exchange);
    t1 = app_now_s();
    c->mpi_s += t1 - t;
    c->requests += nreq;

    /* The interior, in K+1 pieces with an MPI_Testall between two pieces in
     * overlap-test, in one piece otherwise. */
    const long pieces = mode == MODE_OVERLAP_TEST ? p->tests + 1 : 1;
    for (long q = 0; q < pieces; q++) {
        t = app_now_s();
        MPI_OVERLAP_REGION_BEGIN(rg->interior);
        sweep(g, cur, nxt, &in, in_rows * q / pieces, in_rows * (q + 1) / pieces, p->inflate);
        MPI_OVERLAP_REGION_END(rg->interior);
        t1 = app_now_s();
        c->compute_s += t1 - t;
        if (q + 1 < pieces) {
            int flag;
            MPI_OVERLAP_REGION_BEGIN(rg->exchange);
            MPI_Testall(nreq, reqs, &flag, MPI_STATUSES_IGNORE);
            MPI_OVERLAP_REGION_END(rg->exchange);
            c->tests++;
            t = app_now_s();
            c->mpi_s += t - t1;
        }
    }
    if (mode == MODE_OVERLAP || mode == MODE_OVERLAP_TEST) {
        t = app_now_s();
        MPI_OVERLAP_REGION_BEGIN(rg->exchange);
        MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        MPI_OVERLAP_REGION_END(rg->exchange);
        c->mpi_s += app_now_s() - t;
    }
    t = app_now_s();
    MPI_OVERLAP_REGION_BEGIN(rg->boundary);
    for (int b = 0; b < nbnd; b++)
        sweep(g, cur, nxt, &bnd[b], 0, app_box_rows(&bnd[b]), p->inflate);
    MPI_OVERLAP_REGION_END(rg->boundary);
    c->compute_s += app_now_s() - t;
}

/* Runs one mode from the seeded data after `warmup` untimed iterations (from
 * which it starts again, with the profiler's monitoring off: MPI_Pcontrol(0));
 * collective. Rank 0 gets r filled in. */
static void run_mode(const app_grid *g, int mode, const halo_params *p, long warmup, double *u0, double *u1,
                     double *iter_s, halo_mode_result *r)
{
    halo_regions rg;
    snprintf(rg.exchange, sizeof rg.exchange, "%s/exchange", MODE_NAMES[mode]);
    snprintf(rg.interior, sizeof rg.interior, "%s/interior", MODE_NAMES[mode]);
    snprintf(rg.boundary, sizeof rg.boundary, "%s/boundary", MODE_NAMES[mode]);
    halo_counters c = {0};
    if (warmup > 0) {
        MPI_Pcontrol(0);
        app_grid_seed(g, u0, (uint64_t)p->c.seed, 0);
        memset(u1, 0, g->total * sizeof *u1);
        for (long it = 0; it < warmup; it++)
            iteration(g, mode, p, &rg, it % 2 ? u1 : u0, it % 2 ? u0 : u1, &c);
        MPI_Pcontrol(1);
        memset(&c, 0, sizeof c);
    }
    app_grid_seed(g, u0, (uint64_t)p->c.seed, 0);
    memset(u1, 0, g->total * sizeof *u1);
    double *cur = u0, *nxt = u1;

    MPI_Barrier(g->cart);
    bool paused = false;
    const double t0 = app_now_s();
    for (long it = 0; it < p->c.iterations; it++) {
        app_ab_step(p->c.profiler_ab, it, &paused);
        const double ti = app_now_s();
        iteration(g, mode, p, &rg, cur, nxt, &c);
        double *tmp = cur;
        cur = nxt;
        nxt = tmp;
        iter_s[it] = app_now_s() - ti;
    }
    const double mine = app_now_s() - t0;
    app_ab_end(&paused);

    double times[3] = {mine, c.mpi_s, c.compute_s}, tmax[3], tsum[2];
    MPI_Reduce(times, tmax, 3, MPI_DOUBLE, MPI_MAX, 0, g->cart);
    MPI_Reduce(&times[1], tsum, 2, MPI_DOUBLE, MPI_SUM, 0, g->cart);
    MPI_Reduce(g->rank == 0 ? MPI_IN_PLACE : iter_s, iter_s, (int)p->c.iterations, MPI_DOUBLE, MPI_MAX, 0, g->cart);
    const int64_t per_iter = c.requests / p->c.iterations;
    int64_t cnt[3] = {-c.tests, c.tests, per_iter}, cmax[3], ctotal = 0;
    MPI_Reduce(cnt, cmax, 3, MPI_INT64_T, MPI_MAX, 0, g->cart);
    MPI_Reduce(&c.tests, &ctotal, 1, MPI_INT64_T, MPI_SUM, 0, g->cart);
    uint64_t hash;
    double sum;
    app_grid_checksum(g, cur, &hash, &sum);
    if (g->rank == 0) {
        r->mode = mode;
        r->done = true;
        r->run_time_s = tmax[0];
        r->mpi_time_s_max = tmax[1];
        r->compute_time_s_max = tmax[2];
        r->mpi_time_s_mean = tsum[0] / g->size;
        r->compute_time_s_mean = tsum[1] / g->size;
        r->test_calls_min = -cmax[0];
        r->test_calls_max = cmax[1];
        r->requests_per_iter_max = cmax[2];
        r->test_calls_total = ctotal;
        r->hash = hash;
        r->sum = sum;
        memcpy(r->iter_s, iter_s, (size_t)p->c.iterations * sizeof *iter_s);
    }
}

/* ---- main ----------------------------------------------------------------- */

/* app_run_modes()'s hook: one mode on every rank; rank 0 records it and
 * prints its --verbose line. */
static void halo_mode(app_run *run, void *app, int i, int mode)
{
    halo_state *st = app;
    run_mode(st->grid, mode, st->params, st->warmup, st->u0, st->u1, st->iter_s,
             run->rank == 0 ? &st->res[i] : NULL);
    if (run->rank == 0 && run->opts.verbose) {
        const halo_mode_result *r = &st->res[i];
        printf("%-13s checksum %016" PRIx64 " sum %.17g  run %.6f s  mpi %.6f s  tests %" PRId64 "\n",
               MODE_NAMES[mode], r->hash, r->sum, r->run_time_s, r->mpi_time_s_max, r->test_calls_max);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    halo_params params = {.c = app_common_init(&HALO_DEFAULTS), .tests = DEFAULT_TESTS, .inflate = 1};
    mo_bench_options ext = {halo_longopts, halo_parse, halo_finalize, halo_usage, halo_write_json, &params};
    const mo_bench_spec spec = {NAME, "8", &ext, 0, false, NULL, NULL};
    app_run run;
    int exit_status;
    if (!app_run_start(&run, &spec, BENCH, &params.c.extent, argc, argv, &exit_status))
        return exit_status;
    const int rank = run.rank;
    const app_grid *g = &run.grid;

    halo_state st = {&params, g, 0, 0, NULL, NULL, NULL, NULL};
    st.warmup = run.opts.warmup < params.c.iterations ? run.opts.warmup : params.c.iterations;
    st.nmodes = app_count_modes(params.c.modes);
    st.u0 = malloc(g->total * sizeof *st.u0);
    st.u1 = malloc(g->total * sizeof *st.u1);
    st.iter_s = malloc((size_t)params.c.iterations * sizeof *st.iter_s);
    bool ok = st.u0 && st.u1 && st.iter_s;
    if (rank == 0) {
        st.res = calloc((size_t)st.nmodes, sizeof *st.res);
        ok = ok && st.res;
        for (int m = 0, i = 0; ok && m < NMODES; m++)
            if (params.c.modes & (1u << m)) {
                st.res[i].mode = m;
                st.res[i].iter_s = malloc((size_t)params.c.iterations * sizeof *st.iter_s);
                ok = ok && st.res[i++].iter_s;
            }
    }
    /* Rank 0 probes the timer and calibrates the work loop (the result
     * records the CPU speed) and checks it can write the result. */
    int status = app_run_ready(&run, ok, CALIBRATION_MS, CALIBRATION_SAMPLES, NULL, &st, write_results, "grid blocks");
    if (status == 0)
        status = app_run_modes(&run, params.c.modes, MODE_NAMES, halo_mode, &st, write_results);
    if (st.res)
        for (int i = 0; i < st.nmodes; i++)
            free(st.res[i].iter_s);
    free(st.res);
    free(st.u0);
    free(st.u1);
    free(st.iter_s);
    return app_run_end(&run, status, status == 2 ? run.err : NULL);
}
