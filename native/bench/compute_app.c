/* compute_app.c - mo_compute_app: a compute-heavy MPI program whose run
 * time is the figure, for measuring what a tool (the overlap profiler)
 * adds to an application that mostly computes.
 *
 * Every rank runs --iterations iterations of
 *     work(units)                            ~ --work-ms of calibrated work
 *     Irecv from left and right neighbour    (ring over MPI_COMM_WORLD)
 *     Isend to left and right neighbour      (halo of --sizes bytes)
 *     Waitall(4)
 *     Allreduce(8 bytes, MPI_DOUBLE, sum)    (a residual, say)
 * between two barriers; the run time is MPI_Wtime after the second barrier
 * minus MPI_Wtime after the first, the largest over the ranks.
 *
 * The work per iteration is fixed in units, so two launches do exactly the
 * same computation: with --work-units U every rank does U units; otherwise
 * rank 0 calibrates the work loop and converts --work-ms (the result records
 * the units, so later launches can pass them). The program is an ordinary
 * MPI program and runs the same with or without the overlap profiler. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_main.h"

#define BENCH "compute-app" /* the result document's "benchmark" */
#define NAME "compute_app"  /* usage, default output mo_compute_app.json */
#define PROG "mo_" NAME
#define DEFAULT_SIZES "1k"
#define DEFAULT_ITERATIONS 2000
#define DEFAULT_ITERATIONS_QUICK 400
#define DEFAULT_WORK_MS 1.5
#define CALIBRATION_MS 1.0
#define CALIBRATION_SAMPLES 7
#define TAG_TO_RIGHT 41
#define TAG_TO_LEFT 43

/* ---- benchmark-specific options ---------------------------------------- */

typedef struct ca_params {
    long iterations;
    double work_ms;
    long work_units; /* 0: from --work-ms */
} ca_params;

static const mo_field ca_fields[] = {
    MO_FIELD_LONG_Q("iterations", ca_params, iterations, 1, 100000000, DEFAULT_ITERATIONS,
                    DEFAULT_ITERATIONS_QUICK),
    MO_FIELD_DOUBLE_OF("work-ms", ca_params, work_ms, 0.0, 1e6),
    MO_FIELD_LONG_OF("work-units", ca_params, work_units, 0, LONG_MAX / 2),
};

static void ca_usage(FILE *f)
{
    fprintf(f,
            "  --iterations N       compute + halo + allreduce iterations (default %d; --quick %d)\n"
            "  --work-ms X          work per iteration in ms, from the calibrated rate (default %g)\n"
            "  --work-units U       work per iteration in work-loop units; overrides --work-ms\n"
            "  (--sizes: one size, the halo message in bytes, default " DEFAULT_SIZES ")\n",
            DEFAULT_ITERATIONS, DEFAULT_ITERATIONS_QUICK, DEFAULT_WORK_MS);
}

/* ---- state and output ----------------------------------------------------- */

typedef struct ca_state {
    const ca_params *params;
    const mo_work_calib *work;
    uint64_t units;       /* per iteration, every rank */
    uint64_t halo_bytes;
    int ranks;
    bool done;
    double run_time_s;    /* largest over the ranks */
    double *rank_times_s; /* per rank (rank 0) */
    double checksum;      /* the last allreduce: keeps the reductions observable */
    unsigned char *sendbuf, *recvbuf; /* two halo slots each */
} ca_state;

static void write_results(mo_json *w, const void *ctx)
{
    const ca_state *st = ctx;
    const double per_iter_work_us = st->work->units_per_us > 0 ? (double)st->units / st->work->units_per_us : NAN;
    mo_json_kv_int64(w, "iterations", st->params->iterations);
    mo_json_kv_uint64(w, "work_units_per_iter", st->units);
    mo_json_kv_double(w, "work_us_nominal", per_iter_work_us);
    mo_json_kv_uint64(w, "halo_bytes", st->halo_bytes);
    mo_json_kv_int64(w, "neighbours", 2);
    mo_json_kv_int64(w, "ranks", st->ranks);
    mo_json_key(w, "run_time_s");
    if (st->done)
        mo_json_double(w, st->run_time_s);
    else
        mo_json_null(w);
    mo_json_kv_doubles(w, "rank_run_time_s", st->rank_times_s, st->done ? (size_t)st->ranks : 0);
    mo_json_kv_double(w, "per_iter_us",
                      st->done ? st->run_time_s * 1e6 / (double)st->params->iterations : NAN);
    mo_json_kv_double(w, "compute_fraction",
                      st->done && st->run_time_s > 0
                          ? per_iter_work_us * 1e-6 * (double)st->params->iterations / st->run_time_s
                          : NAN);
    mo_json_kv_double(w, "checksum", st->done ? st->checksum : NAN);
}

/* ---- main --------------------------------------------------------------- */

/* The timed part: identical on every rank. Returns this rank's run time. */
static double run(const ca_state *st, MPI_Comm comm, int rank, int size, unsigned char *sendbuf,
                  unsigned char *recvbuf, double *checksum)
{
    const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    const int n = (int)st->halo_bytes;
    const long iters = st->params->iterations;
    const uint64_t units = st->units;
    unsigned char *const from_left = recvbuf, *const from_right = recvbuf + (n > 0 ? n : 1);
    unsigned char *const to_left = sendbuf, *const to_right = sendbuf + (n > 0 ? n : 1);
    MPI_Request reqs[4];
    double acc = 0.0;
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        uint64_t x = mo_work(units);
        MPI_Irecv(from_left, n, MPI_BYTE, left, TAG_TO_RIGHT, comm, &reqs[0]);
        MPI_Irecv(from_right, n, MPI_BYTE, right, TAG_TO_LEFT, comm, &reqs[1]);
        MPI_Isend(to_right, n, MPI_BYTE, right, TAG_TO_RIGHT, comm, &reqs[2]);
        MPI_Isend(to_left, n, MPI_BYTE, left, TAG_TO_LEFT, comm, &reqs[3]);
        MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
        double local = (double)(x & 0xffff) * 1e-6 + (n > 0 ? from_left[0] + from_right[0] : 0);
        MPI_Allreduce(&local, &acc, 1, MPI_DOUBLE, MPI_SUM, comm);
    }
    MPI_Barrier(comm);
    const double t1 = MPI_Wtime();
    *checksum = acc;
    return t1 - t0;
}

/* Exactly one halo size, and each buffer holds two halos (one per
 * neighbour) at int offsets, so twice the size must stay an int. */
static int ca_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    (void)ctx;
    if (o->sizes.n != 1) {
        snprintf(err, errlen, "--sizes: give exactly one halo size (got %zu)", o->sizes.n);
        return -1;
    }
    if (o->sizes.v[0] > (uint64_t)(INT_MAX / 2)) {
        snprintf(err, errlen, "halo size %llu is too large (at most %d bytes)",
                 (unsigned long long)o->sizes.v[0], INT_MAX / 2);
        return -1;
    }
    return 0;
}

/* Rank 0, once calibrated: the work units per iteration (--work-ms needs
 * the CPU speed); every rank learns them in ca_start. */
static void ca_calibrated(void *arg)
{
    mo_bench *b = arg;
    ca_state *st = b->state;
    double u = st->params->work_units > 0 ? (double)st->params->work_units
                                          : round(st->params->work_ms * 1000.0 * b->work.units_per_us);
    st->units = (uint64_t)(u > 0 ? u : 0);
}

static void ca_setup(mo_bench *b, void *ctx)
{
    ca_state *st = ctx;
    st->halo_bytes = b->opts.sizes.v[0];
    st->ranks = b->nranks;
    st->work = &b->work;
    const size_t slot = st->halo_bytes > 0 ? (size_t)st->halo_bytes : 1;
    st->sendbuf = malloc(2 * slot);
    st->recvbuf = malloc(2 * slot);
    if (st->sendbuf && st->recvbuf) {
        memset(st->sendbuf, b->rank + 1, 2 * slot);
        memset(st->recvbuf, 0, 2 * slot);
    }
    st->rank_times_s = b->rank == 0 ? calloc((size_t)b->nranks, sizeof *st->rank_times_s) : NULL;
    b->have = st->sendbuf && st->recvbuf && (b->rank != 0 || st->rank_times_s);
    snprintf(b->no_alloc, sizeof b->no_alloc, "cannot allocate %zu-byte halo buffers on every rank", 2 * slot);
    b->ready.no_alloc = b->no_alloc;
    b->ready.calib_ms = CALIBRATION_MS;
    b->ready.calib_samples = CALIBRATION_SAMPLES;
    b->ready.quiet = true;
    b->ready.calibrated = ca_calibrated;
    b->ready.calibrated_arg = b;
}

static int ca_start(mo_bench *b, void *ctx)
{
    ca_state *st = ctx;
    (void)b;
    MPI_Request req;
    MPI_Ibcast(&st->units, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req);
    mo_quiet_wait(&req);
    return 0;
}

/* Every rank runs the program; rank 0 keeps the slowest rank's time. */
static int ca_measure(mo_bench *b, void *ctx)
{
    ca_state *st = ctx;
    double mine = run(st, MPI_COMM_WORLD, b->rank, b->nranks, st->sendbuf, st->recvbuf, &st->checksum);
    MPI_Gather(&mine, 1, MPI_DOUBLE, st->rank_times_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (b->rank != 0)
        return 0;
    st->done = true;
    st->run_time_s = 0.0;
    for (int r = 0; r < b->nranks; r++)
        if (st->rank_times_s[r] > st->run_time_s)
            st->run_time_s = st->rank_times_s[r];
    mo_verbose(&b->opts, "%ld iterations of %llu work units + halo %llu B + allreduce: %.6f s\n", st->params->iterations,
               (unsigned long long)st->units, (unsigned long long)st->halo_bytes, st->run_time_s);
    mo_work_recheck(&b->work);
    return mo_result_complete(&b->doc, NAME, write_results, st);
}

static void ca_teardown(mo_bench *b, void *ctx)
{
    ca_state *st = ctx;
    (void)b;
    free(st->sendbuf);
    free(st->recvbuf);
    free(st->rank_times_s);
}

int main(int argc, char **argv)
{
    static ca_params params = {.work_ms = DEFAULT_WORK_MS};
    static ca_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = ca_usage, .ctx = &params};
    /* Any number of ranks (with one, the ring's neighbours are itself); the
     * halo's own check (ca_check) is stricter than the MPI count one. */
    const mo_bench_kernel k = {
        .spec = {NAME, DEFAULT_SIZES, &ext, 0, false, ca_check, NULL}, .benchmark = BENCH,
        .results = write_results, .state = &st, .setup = ca_setup, .start = ca_start, .measure = ca_measure,
        .teardown = ca_teardown, MO_KERNEL_FIELDS(ca_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
