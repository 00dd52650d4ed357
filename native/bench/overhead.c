/* overhead.c - mo_overhead: host processor overhead and application
 * availability of non-blocking point-to-point transfers, by the
 * post-work-wait method of Sandia's mpi_overhead (Doerfler, SMB).
 *
 * Rank 0 posts a transfer, works for a growing amount of time, and waits.
 * While the work is shorter than the transfer, the loop time (iter_t) stays
 * at the transfer time (base_t); once the work dominates, iter_t = work +
 * the time the host spent on the transfer. Overhead = iter_t - work_t (the
 * same work without a message); availability = 1 - overhead / base_t.
 *
 * Rank 0 is always the measured rank and makes every decision (iterations,
 * work, when to stop); rank 1 is its peer and just follows the commands
 * rank 0 broadcasts, so both always run the same number of iterations.
 * Ranks >= 2 take no part and wait without spinning. */
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

#define BENCH "overhead"
#define DEFAULT_SIZES "0:4M"
#define PILOT_SAMPLES 3
#define CALIBRATION_MS 2.0
#define CALIBRATION_SAMPLES 11
#define MSG_TAG 17

enum { DIR_SEND = 1, DIR_RECV = 2 };

/* ---- benchmark-specific options ---------------------------------------- */

typedef struct ov_params {
    int directions; /* DIR_SEND | DIR_RECV */
    double thresh, bthresh, extend;
    long steps_per_octave;
    long max_steps;
    double work_start_frac;
} ov_params;

static const char *const DIR_NAMES[] = {"send", "recv", "both"};
static const int DIR_SETS[] = {DIR_SEND, DIR_RECV, DIR_SEND | DIR_RECV};

static int ov_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    (void)quick;
    ov_params *p = ctx;
    if (p->bthresh > p->thresh) {
        snprintf(err, errlen, "--bthresh (%g) must not exceed --thresh (%g)", p->bthresh, p->thresh);
        return -1;
    }
    if (p->extend < p->thresh) {
        snprintf(err, errlen, "--extend (%g) must be at least --thresh (%g)", p->extend, p->thresh);
        return -1;
    }
    return 0;
}

static const mo_field ov_fields[] = {
    MO_FIELD_CHOICE_OF("direction", ov_params, directions, DIR_NAMES, DIR_SETS, 3,
                       "--direction: expected send, recv or both, got '%s'"),
    MO_FIELD_DOUBLE_OF("thresh", ov_params, thresh, 1.0, 1e6),
    MO_FIELD_DOUBLE_OF("bthresh", ov_params, bthresh, 1.0, 1e6),
    MO_FIELD_DOUBLE_OF("extend", ov_params, extend, 1.0, 1e6),
    MO_FIELD_LONG_Q("steps-per-octave", ov_params, steps_per_octave, 1, 64, 3, 2),
    MO_FIELD_LONG_OF("max-steps", ov_params, max_steps, 2, 100000),
    MO_FIELD_DOUBLE_ABOVE("work-start-frac", ov_params, work_start_frac, 0.0, 1e3),
};

static void ov_usage(FILE *f)
{
    fputs("  --direction D        send, recv or both (default both)\n"
          "  --thresh X           classic stop threshold: measure at iter_t > X*base_t (default 1.5)\n"
          "  --bthresh X          classic base threshold: average iter_t < X*base_t (default 1.02)\n"
          "  --extend X           keep stepping until iter_t > X*base_t (default 3.0, >= thresh)\n"
          "  --steps-per-octave N work steps per doubling (default 3; --quick 2)\n"
          "  --max-steps N        most work steps per size (default 60)\n"
          "  --work-start-frac F  first non-zero work = F * pilot base_t (default 0.03125)\n",
          f);
}

/* ---- measured data -------------------------------------------------------- */

typedef struct ov_series {
    double *samples; /* us per iteration, reps of them */
    mo_stats st;
} ov_series;

typedef struct ov_step {
    uint64_t units;
    double work_us_nominal;
    long iterations;
    ov_series iter, work; /* work.samples points into iter.samples' block */
} ov_step;

typedef struct ov_classic {
    bool found;
    double base_t;
    int base_steps;
    int stop_step; /* -1: not found */
    double iter_t, work_t, overhead, availability_pct;
} ov_classic;

typedef struct ov_size {
    uint64_t size;
    bool complete;
    const char *stop_reason;
    ov_step *steps;
    int nsteps;
    ov_classic classic;
} ov_size;

typedef struct ov_direction {
    int dir;
    ov_size *sizes;
    int nsizes; /* completed (or cut short) so far */
} ov_direction;

typedef struct ov_state {
    const mo_options *opts;
    const ov_params *params;
    const mo_work_calib *work;
    MPI_Comm pair;       /* ranks 0 and 1 of MPI_COMM_WORLD */
    int rank;            /* in pair */
    unsigned char *buf;  /* page-aligned, largest size, touched */
    uint64_t start_ns;
    ov_direction dirs[2];
    int ndirs;
} ov_state;

static const char *dir_name(int dir) { return dir == DIR_SEND ? "send" : "recv"; }

/* ---- the timed loops (both ranks) ------------------------------------------ */

enum { CMD_MSG = MO_CMD_QUIT + 1, CMD_NOMSG };

typedef struct ov_cmd {
    int64_t op, dir, size, units, iterations;
} ov_cmd;
_Static_assert(sizeof(ov_cmd) <= MO_CMD_WORDS * sizeof(int64_t), "ov_cmd travels as int64s (mo_cmd_send)");

/* Runs one block of cmd->iterations loop iterations; on rank 0 returns the
 * mean time of one iteration in us (rank 1 returns 0). The loop bodies are
 * those of the original mpi_overhead. */
static double run_block(const ov_state *st, const ov_cmd *c)
{
    /* Locals, not st->/c-> reads: c's address escapes to MPI_Bcast, so the
     * compiler would reload those fields after every MPI call, inside the
     * timed loops. No branch stays inside a loop either. */
    const MPI_Comm comm = st->pair;
    const int rank = st->rank;
    void *const buf = st->buf;
    const int n = (int)c->size;
    const int64_t iters = c->iterations;
    const uint64_t units = (uint64_t)c->units;
    MPI_Request req;
    /* Untimed: rank 0 leaves MPI_Bcast about a latency before rank 1 has the
     * command; without this the first timed barrier would include that gap. */
    MPI_Barrier(comm);
    uint64_t t0 = mo_timer_now_ns();
    if (c->op == CMD_NOMSG) {
        if (rank == 0) {
            for (int64_t i = 0; i < iters; i++) {
                MPI_Barrier(comm);
                mo_work(units);
            }
        } else {
            for (int64_t i = 0; i < iters; i++)
                MPI_Barrier(comm);
        }
    } else if (c->dir == DIR_SEND) {
        if (rank == 0) {
            for (int64_t i = 0; i < iters; i++) {
                MPI_Barrier(comm);
                MPI_Isend(buf, n, MPI_BYTE, 1, MSG_TAG, comm, &req);
                mo_work(units);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        } else {
            for (int64_t i = 0; i < iters; i++) {
                /* Pre-posted, so the send never waits for the receive. */
                MPI_Irecv(buf, n, MPI_BYTE, 0, MSG_TAG, comm, &req);
                MPI_Barrier(comm);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        }
    } else {
        if (rank == 0) {
            for (int64_t i = 0; i < iters; i++) {
                MPI_Irecv(buf, n, MPI_BYTE, 1, MSG_TAG, comm, &req);
                MPI_Barrier(comm);
                mo_work(units);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        } else {
            for (int64_t i = 0; i < iters; i++) {
                MPI_Barrier(comm);
                MPI_Send(buf, n, MPI_BYTE, 0, MSG_TAG, comm);
            }
        }
    }
    uint64_t t1 = mo_timer_now_ns();
    return rank == 0 ? (double)(t1 - t0) / 1000.0 / (double)iters : 0.0;
}

/* Rank 0: tells rank 1 what to run, runs it, returns us per iteration. */
static double block(const ov_state *st, int op, int dir, uint64_t size, uint64_t units, long iterations)
{
    ov_cmd c = {op, dir, (int64_t)size, (int64_t)units, iterations};
    mo_cmd_send(st->pair, &c, sizeof c);
    return run_block(st, &c);
}

/* Rank 1: each of rank 0's commands (mo_cmd_serve). */
static void serve_cmd(void *st, const void *cmd)
{
    run_block(st, cmd);
}

/* ---- the method (rank 0) -------------------------------------------------- */

/* Iterations per sample so that one sample lasts about --sample-ms. */
static long choose_iterations(const mo_options *o, double est_us_per_iter)
{
    if (o->iters > 0)
        return o->iters;
    if (!(est_us_per_iter > 0))
        est_us_per_iter = 1.0;
    return mo_clamp_iters(o, ceil(o->sample_ms * 1000.0 / est_us_per_iter));
}

/* The original's computation on step medians: base_t starts at the first
 * step and is the running average of the steps whose iter_t < bthresh *
 * base_t, frozen at the first step that is not; the measurement is at the
 * first step with iter_t > thresh * base_t. Because thresh >= bthresh, the
 * base is frozen by then, so the final base_t is the one in force there. */
static void classic_compute(const ov_step *steps, int n, const ov_params *p, ov_classic *c)
{
    memset(c, 0, sizeof *c);
    c->stop_step = -1;
    c->base_t = c->iter_t = c->work_t = c->overhead = c->availability_pct = NAN;
    if (n == 0)
        return;
    double sum = steps[0].iter.st.median;
    int count = 1;
    bool frozen = false;
    double base = sum;
    for (int j = 1; j < n; j++) {
        double it = steps[j].iter.st.median;
        if (!frozen) {
            if (it < p->bthresh * base) {
                sum += it;
                count++;
                base = sum / count;
            } else {
                frozen = true;
            }
        }
        if (!c->found && it > p->thresh * base) {
            c->found = true;
            c->stop_step = j;
            c->iter_t = it;
            c->work_t = steps[j].work.st.median;
        }
    }
    c->base_t = base;
    c->base_steps = count;
    if (c->found) {
        c->overhead = c->iter_t - c->work_t;
        c->availability_pct = 100.0 * (1.0 - c->overhead / base);
    }
}

/* Appends a step and takes its interleaved samples. Returns 0 or -1. */
static int take_step(const ov_state *st, int dir, ov_size *sz, uint64_t units, long iterations)
{
    const long reps = st->opts->reps;
    ov_step *steps = realloc(sz->steps, (size_t)(sz->nsteps + 1) * sizeof *steps);
    if (!steps)
        return -1;
    sz->steps = steps;
    ov_step *s = &steps[sz->nsteps];
    memset(s, 0, sizeof *s);
    s->units = units;
    s->work_us_nominal = (double)units / st->work->units_per_us;
    s->iterations = iterations;
    s->iter.samples = malloc(2 * (size_t)reps * sizeof *s->iter.samples);
    if (!s->iter.samples)
        return -1;
    s->work.samples = s->iter.samples + reps;
    sz->nsteps++;
    /* Interleaved, so slow drifts (frequency, other load) hit both loops
     * alike instead of biasing their difference. */
    for (long r = 0; r < reps; r++) {
        s->iter.samples[r] = block(st, CMD_MSG, dir, sz->size, units, iterations);
        s->work.samples[r] = block(st, CMD_NOMSG, dir, sz->size, units, iterations);
    }
    if (mo_stats_summarize(s->iter.samples, (size_t)reps, &s->iter.st) != 0 ||
        mo_stats_summarize(s->work.samples, (size_t)reps, &s->work.st) != 0)
        return -1;
    return 0;
}

/* Measures one (direction, size). Returns 0, or -1 if out of memory. */
static int measure_size(const ov_state *st, int dir, ov_size *sz, bool *time_up)
{
    const mo_options *o = st->opts;
    const ov_params *p = st->params;
    const uint64_t size = sz->size;

    /* Warm-up (work 0): caches, lazy connection setup, eager/rendezvous
     * paths. Its time per iteration seeds the choice of iterations. */
    long warm = o->warmup > 0 ? o->warmup : o->min_iters;
    double est = block(st, CMD_MSG, dir, size, 0, warm);

    /* Pilot estimate of the transfer time; it scales the work steps. */
    double pilot[PILOT_SAMPLES];
    long pilot_iters = choose_iterations(o, est);
    for (int i = 0; i < PILOT_SAMPLES; i++)
        pilot[i] = block(st, CMD_MSG, dir, size, 0, pilot_iters);
    double pilot_base = mo_stats_median(pilot, PILOT_SAMPLES);

    mo_verbose(o, "%-12s%-12s%-12s%-12s%-12s\n", "work", "iter_t", "base_t", "work_t", "iterations");

    uint64_t prev_units = 0;
    double prev_nominal = 0.0;
    sz->stop_reason = NULL;
    for (long j = 0;; j++) {
        uint64_t units = 0;
        if (j > 0) {
            double work_us = pilot_base * p->work_start_frac *
                             pow(2.0, (double)(j - 1) / (double)p->steps_per_octave);
            double u = round(work_us * st->work->units_per_us);
            if (!isfinite(u)) {
                sz->stop_reason = "bad-estimate";
                break;
            }
            if (u <= (double)prev_units)
                continue; /* too small a step to change the unit count */
            units = (uint64_t)u;
        }
        double nominal = (double)units / st->work->units_per_us;
        if (sz->nsteps == 0) {
            est = pilot_base;
        } else {
            /* Work adds to the loop time one for one once it dominates;
             * before that this overestimates, which errs on short samples. */
            const ov_step *last = &sz->steps[sz->nsteps - 1];
            est = fmax(last->iter.st.median, last->work.st.median) + (nominal - prev_nominal);
        }
        if (take_step(st, dir, sz, units, choose_iterations(o, est)))
            return -1;
        prev_units = units;
        prev_nominal = nominal;

        classic_compute(sz->steps, sz->nsteps, p, &sz->classic);
        const ov_step *s = &sz->steps[sz->nsteps - 1];
        mo_verbose(o, "%-12llu%-12.3f%-12.3f%-12.3f%-12ld\n", (unsigned long long)units, s->iter.st.median,
                   sz->classic.base_t, s->work.st.median, s->iterations);
        if (s->iter.st.median > p->extend * sz->classic.base_t) {
            sz->complete = true;
            sz->stop_reason = "extend";
            break;
        }
        if (sz->nsteps >= p->max_steps) {
            sz->stop_reason = "max-steps";
            break;
        }
        if (mo_time_up(st->opts, st->start_ns)) {
            sz->stop_reason = "time-limit";
            *time_up = true;
            break;
        }
    }
    return 0;
}

/* ---- output ------------------------------------------------------------- */

/* One of "steps". */
static void write_step(mo_json *w, const void *item, const void *ctx)
{
    const ov_step *s = item;
    (void)ctx;
    mo_json_kv_uint64(w, "work_units", s->units);
    mo_json_kv_double(w, "work_us_nominal", s->work_us_nominal);
    mo_json_kv_int64(w, "iterations", s->iterations);
    mo_json_stats(w, "iter_t_us", &s->iter.st);
    mo_json_stats(w, "work_t_us", &s->work.st);
    mo_json_kv_doubles(w, "iter_samples_us", s->iter.samples, s->iter.st.n);
    mo_json_kv_doubles(w, "work_samples_us", s->work.samples, s->work.st.n);
}

/* One of "sizes". */
static void write_size(mo_json *w, const void *item, const void *ctx)
{
    const ov_size *sz = item;
    (void)ctx;
    mo_json_kv_uint64(w, "size", sz->size);
    mo_json_kv_bool(w, "complete", sz->complete);
    if (sz->stop_reason)
        mo_json_kv_string(w, "stop_reason", sz->stop_reason);
    mo_json_objects(w, "steps", sz->steps, sizeof *sz->steps, (size_t)sz->nsteps, write_step, NULL);
    const ov_classic *c = &sz->classic;
    mo_json_key(w, "classic");
    mo_json_begin_object(w);
    mo_json_kv_bool(w, "found", c->found);
    mo_json_kv_double(w, "base_t_us", c->base_t);
    mo_json_kv_int64(w, "base_steps", c->base_steps);
    mo_json_key(w, "stop_step");
    if (c->found)
        mo_json_int64(w, c->stop_step);
    else
        mo_json_null(w);
    mo_json_kv_double(w, "iter_t_us", c->iter_t);
    mo_json_kv_double(w, "work_t_us", c->work_t);
    mo_json_kv_double(w, "overhead_us", c->overhead);
    mo_json_kv_double(w, "availability_pct", c->availability_pct);
    mo_json_end_object(w);
}

/* One of "directions". */
static void write_direction(mo_json *w, const void *item, const void *ctx)
{
    const ov_direction *dir = item;
    (void)ctx;
    mo_json_kv_string(w, "direction", dir_name(dir->dir));
    mo_json_objects(w, "sizes", dir->sizes, sizeof *dir->sizes, (size_t)dir->nsizes, write_size, NULL);
}

static void write_results(mo_json *w, const void *ctx)
{
    const ov_state *st = ctx;
    mo_json_objects(w, "directions", st->dirs, sizeof *st->dirs, (size_t)st->ndirs, write_direction, NULL);
}

static void ov_teardown(mo_bench *b, void *ctx)
{
    ov_state *st = ctx;
    (void)b;
    for (int d = 0; d < st->ndirs; d++) {
        for (int i = 0; i < st->dirs[d].nsizes; i++) {
            ov_size *sz = &st->dirs[d].sizes[i];
            for (int j = 0; j < sz->nsteps; j++)
                free(sz->steps[j].iter.samples); /* work.samples shares the block */
            free(sz->steps);
        }
        free(st->dirs[d].sizes);
    }
    free(st->buf);
}

/* ---- main --------------------------------------------------------------- */

static void ov_setup(mo_bench *b, void *ctx)
{
    ov_state *st = ctx;
    st->opts = &b->opts;
    st->start_ns = b->start_ns;
    st->pair = b->comm;
    b->ready.calib_ms = CALIBRATION_MS;
    b->ready.calib_samples = CALIBRATION_SAMPLES;
    b->ready.unbound_peer = 1;
    b->ready.quiet = true;
}

/* The pair: its message buffer, once rank 0 has calibrated. */
static int ov_start(mo_bench *b, void *ctx)
{
    ov_state *st = ctx;
    if (st->pair == MPI_COMM_NULL)
        return 1;
    MPI_Comm_rank(st->pair, &st->rank);
    st->work = &b->work;
    const size_t bytes = mo_bench_largest(b);
    st->buf = mo_page_alloc(bytes);
    int rc = mo_bench_pair_allocated(b, st->rank, st->buf != NULL, bytes);
    if (rc != 0)
        return rc;
    /* Touch every page now, so no page faults land in timed loops. */
    memset(st->buf, b->rank + 1, bytes);
    return 0;
}

/* Rank 0: each direction's sizes in turn; rank 1 serves (run_cmd). */
static int ov_measure(mo_bench *b, void *ctx)
{
    ov_state *st = ctx;
    const ov_params *params = st->params;
    const mo_options *o = &b->opts;
    const int total_dirs = (params->directions & DIR_SEND ? 1 : 0) + (params->directions & DIR_RECV ? 1 : 0);
    b->total = total_dirs * (int)o->sizes.n;
    bool oom = false;
    for (int dir = DIR_SEND; dir <= DIR_RECV && !b->time_up && !oom; dir <<= 1) {
        if (!(params->directions & dir))
            continue;
        ov_direction *d = &st->dirs[st->ndirs++];
        d->dir = dir;
        d->sizes = calloc(o->sizes.n, sizeof *d->sizes);
        if (!d->sizes) {
            oom = true;
            break;
        }
        mo_verbose(o, "Calculating %s overhead\n", dir_name(dir));
        for (size_t i = 0; i < o->sizes.n && !b->time_up && !oom; i++) {
            if (mo_time_up(st->opts, st->start_ns)) {
                b->time_up = true;
                break;
            }
            ov_size *sz = &d->sizes[d->nsizes++];
            sz->size = o->sizes.v[i];
            if (measure_size(st, dir, sz, &b->time_up)) {
                oom = true;
                break;
            }
            const ov_classic *c = &sz->classic;
            if (!sz->complete)
                mo_result_warn(&b->doc, "%s size %llu: stopped by %s before iter_t exceeded %g*base_t",
                               dir_name(dir), (unsigned long long)sz->size, sz->stop_reason, params->extend);
            if (!c->found)
                mo_result_warn(&b->doc, "%s size %llu: iter_t never exceeded thresh*base_t; no classic result",
                               dir_name(dir), (unsigned long long)sz->size);
            else if (c->availability_pct < 0 || c->availability_pct > 100)
                mo_result_warn(&b->doc, "%s size %llu: classic availability %.1f %% is outside 0-100 %%",
                               dir_name(dir), (unsigned long long)sz->size, c->availability_pct);
            mo_verbose(o, "%-12s%-12s%-12s%-12s%-12s%-12s%-12s\n%-12llu%-12ld%-12.3f%-12.3f%-12.3f%-12.3f%-12.1f\n",
                       "msgsize", "iterations", "iter_t", "work_t", "overhead", "base_t", "avail(%)",
                       (unsigned long long)sz->size, c->found ? sz->steps[c->stop_step].iterations : 0L, c->iter_t,
                       c->work_t, c->overhead, c->base_t, c->availability_pct);
            mo_progress(o->progress, ++b->done, b->total, "%s/%llu", dir_name(dir), (unsigned long long)sz->size);
            mo_bench_running(b);
        }
    }
    /* Rank 1 goes to the quiet barrier, so the re-check of the work rate
     * runs undisturbed like the calibration. */
    mo_cmd_quit(st->pair);
    return mo_bench_conclude(b, oom, "(direction, size) points", NULL, true);
}

int main(int argc, char **argv)
{
    static ov_params params = {
        .directions = DIR_SEND | DIR_RECV, .thresh = 1.5, .bthresh = 1.02, .extend = 3.0,
        .steps_per_octave = 3, .max_steps = 60, .work_start_frac = 1.0 / 32.0,
    };
    static ov_state st = {.params = &params};
    static const mo_bench_options ext = {.finalize = ov_finalize, .usage = ov_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, NULL, NULL}, .pair = true,
        .results = write_results, .state = &st, .setup = ov_setup, .start = ov_start, .measure = ov_measure, .run_cmd = serve_cmd,
        .verbose_done = true, .teardown = ov_teardown, MO_KERNEL_FIELDS(ov_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
