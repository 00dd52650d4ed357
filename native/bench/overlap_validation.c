/* overlap_validation.c - mo_overlap_validation: the validation experiment of
 * the overlap profiler (Shet et al., §3.1). Two ranks exchange one message per
 * iteration with each pairing of point-to-point calls (Isend-Irecv,
 * Isend-Recv, Send-Irecv); the side that posts a non-blocking call computes
 * between the post and MPI_Wait, for a fixed amount of calibrated work that
 * grows step by step from 0 to about 3x the blocking transfer time. Per step
 * the program records the time each side spends in the post, the
 * computation, MPI_Wait (or in its blocking call), and wraps the step's loop
 * in a profiler region named "<pairing>/<bytes>/<step>", so that the
 * profiler's by_region breakdown holds the overlap bounds of exactly that
 * step. Without the profiler the regions do nothing and only the times are
 * measured. Under the profiler the steps also reach 3x the transfer time of
 * its table (MPI_OVERLAP_TABLE), the time its upper bound saturates at.
 *
 * Rank 0 is always the sender and rank 1 the receiver. Rank 0 makes every
 * decision (work units, iterations) and broadcasts it; rank 1 follows and
 * sends its per-iteration times back after every step. Ranks >= 2 take no
 * part and wait without spinning. */
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
#include "mop_xfer_table.h"
#include "mpi_overlap.h"

#define PROGRAM "overlap_validation" /* mo_<PROGRAM>: usage, default output file */
#define BENCH "overlap-validation"   /* the result's benchmark (bench-overlap-validation-v1) */
/* The source's 10 KiB and 1 MiB, and 4 KiB: eager over MPICH's shared memory
 * (8 KiB cells), where 10 KiB already goes by rendezvous. (Open MPI's eager
 * limit there is 4096 bytes including its header: use --sizes 1K,... to see
 * its eager case.) */
#define DEFAULT_SIZES "4K,10K,1M"
#define DEFAULT_STEPS 12
#define DEFAULT_STEPS_QUICK 6
#define DEFAULT_ITERS 200
#define DEFAULT_ITERS_QUICK 50
#define TOP_FACTOR 3.0       /* the last step computes >= 3x the transfer time ... */
#define TOP_MIN_US 300.0     /* ... and at least this long */
#define FIRST_FRAC 0.125     /* the first non-zero step: 1/8 of the transfer time */
#define CALIBRATION_MS 2.0
#define CALIBRATION_SAMPLES 11
#define MAX_REGIONS 254      /* distinct region names the profiler keeps apart */
#define REGION_LEN 64        /* the profiler keeps 63 characters of a name */
#define MSG_TAG 29
#define DATA_TAG 31

/* ---- pairings -------------------------------------------------------------- */

typedef struct vs_pairing {
    const char *name;
    bool send_nb, recv_nb; /* which side posts a non-blocking call (and computes) */
    const char *send_call, *recv_call;
} vs_pairing;

enum { NPAIRINGS = 3 };
static const vs_pairing PAIRINGS[NPAIRINGS] = {
    {"isend-irecv", true, true, "MPI_Isend", "MPI_Irecv"},
    {"isend-recv", true, false, "MPI_Isend", "MPI_Recv"},
    {"send-irecv", false, true, "MPI_Send", "MPI_Irecv"},
};

/* ---- benchmark-specific options ------------------------------------------ */

typedef struct vs_params {
    unsigned pairings; /* bit i: PAIRINGS[i] */
    long steps;
} vs_params;

static const mo_field vs_fields[] = {
    MO_FIELD_SET_IN("pairings", vs_params, pairings, PAIRINGS, NPAIRINGS, "all", false,
                    "--pairings: unknown pairing '%.*s' (known: isend-irecv, isend-recv, send-irecv, all)"),
    MO_FIELD_LONG_Q("steps", vs_params, steps, 2, MAX_REGIONS, DEFAULT_STEPS, DEFAULT_STEPS_QUICK),
};

static void vs_usage(FILE *f)
{
    fprintf(f,
            "  --pairings LIST      isend-irecv, isend-recv, send-irecv, comma-separated, or all\n"
            "                       (default all)\n"
            "  --steps N            computation steps per (pairing, size), from 0 to max(%g x the\n"
            "                       blocking transfer time or the profiler's table time, %g us)\n"
            "                       (default %d; --quick %d)\n"
            "  (--iters N           iterations per step; default %d, --quick %d)\n",
            TOP_FACTOR, TOP_MIN_US, DEFAULT_STEPS, DEFAULT_STEPS_QUICK, DEFAULT_ITERS,
            DEFAULT_ITERS_QUICK);
}

/* ---- measured data --------------------------------------------------------- */

/* What one side did per iteration of a step: post / computation / MPI_Wait
 * for a non-blocking side, the blocking call for the other. */
enum { T_POST = 0, T_COMP = 1, T_WAIT = 2, T_CALL = 3, NT = 4 };
static const char *const T_KEYS[NT] = {"post_us", "comp_us", "wait_us", "call_us"};

typedef struct vs_side {
    bool has[NT];
    mo_stats st[NT];
} vs_side;

typedef struct vs_step {
    uint64_t units;
    double work_us_nominal;
    long iterations;
    vs_side side[2]; /* sender, receiver */
} vs_step;

typedef struct vs_case {
    int pairing;
    uint64_t size;
    bool complete;
    const char *stop_reason;
    mo_stats transfer; /* one-way blocking ping-pong, us */
    long round_trips;  /* per transfer sample */
    double table_us;   /* the profiler's table time for this size; NaN: none */
    double top_us;     /* the planned computation of the last step */
    vs_step *steps;
    int nsteps;
} vs_case;

typedef struct vs_state {
    const mo_options *opts;
    const vs_params *params;
    const mo_work_calib *work;
    MPI_Comm pair;      /* ranks 0 and 1 of MPI_COMM_WORLD */
    int rank;           /* in pair: 0 sends, 1 receives */
    unsigned char *buf; /* page-aligned, largest size, touched: the message buffer */
    unsigned char *back; /* same: the ping-pong's other direction (see run_pingpong) */
    long iters;         /* iterations per step */
    long cap;           /* room per kind of time: max(iters, warm-up iterations) */
    double *mine;       /* NT * cap: this rank's times of the running loop */
    double *theirs;     /* NT * cap: rank 1's times of the last step, on rank 0 */
    uint64_t start_ns;
    bool profiled;      /* the region API is there (the profiler is loaded) */
    const char *table_path; /* MPI_OVERLAP_TABLE, when set (rank 0) */
    bool have_table;
    mop_xfer_table table; /* its contents, when readable */
    vs_case *cases;
    int ncases;
} vs_state;

/* ---- the timed loops (both ranks) ------------------------------------------ */

enum { CMD_PINGPONG = MO_CMD_QUIT + 1, CMD_WARM, CMD_STEP };

typedef struct vs_cmd {
    int64_t op, pairing, size, units, iterations, step;
} vs_cmd;
_Static_assert(sizeof(vs_cmd) <= MO_CMD_WORDS * sizeof(int64_t), "vs_cmd travels as int64s (mo_cmd_send)");

static void region_name(char *buf, size_t len, int pairing, uint64_t size, long step)
{
    snprintf(buf, len, "%s/%llu/%ld", PAIRINGS[pairing].name, (unsigned long long)size, step);
}

/* Blocking ping-pong; on rank 0 returns the one-way time in us. Each
 * direction has its own buffers, and no rank sends from a buffer it
 * receives into: as in the exchange loop, the data sent is never data the
 * peer has just written. (Sending back the buffer just received, as a
 * one-buffer ping-pong does, made 1 MiB round trips ~6x slower with MPICH's
 * CMA single-copy path on the 2-core test VM: 487 vs 84 us one-way.) */
static double run_pingpong(const vs_state *st, const vs_cmd *c)
{
    const MPI_Comm comm = st->pair;
    void *const buf = st->buf, *const back = st->back;
    const int n = (int)c->size;
    const int64_t iters = c->iterations;
    MPI_Barrier(comm);
    uint64_t t0 = mo_timer_now_ns();
    if (st->rank == 0) {
        for (int64_t i = 0; i < iters; i++) {
            MPI_Send(buf, n, MPI_BYTE, 1, MSG_TAG, comm);
            MPI_Recv(back, n, MPI_BYTE, 1, MSG_TAG, comm, MPI_STATUS_IGNORE);
        }
    } else {
        for (int64_t i = 0; i < iters; i++) {
            MPI_Recv(buf, n, MPI_BYTE, 0, MSG_TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(back, n, MPI_BYTE, 0, MSG_TAG, comm);
        }
    }
    uint64_t t1 = mo_timer_now_ns();
    return (double)(t1 - t0) / 1000.0 / (double)iters / 2.0;
}

/* The barrier that keeps the ranks in step between iterations. The profiler
 * records a collective as a transfer too, so it is made outside the step's
 * region: the region holds exactly the iterations' messages (the analysis
 * checks one transfer per iteration). */
static void step_barrier(MPI_Comm comm, const char *region, bool in_region)
{
    if (in_region)
        MPI_OVERLAP_REGION_END(region);
    MPI_Barrier(comm);
    if (in_region)
        MPI_OVERLAP_REGION_BEGIN(region);
}

/* One step's loop (CMD_STEP, inside its region) or the untimed warm-up
 * (CMD_WARM, outside every region). Times go to st->mine. The barrier keeps
 * the ranks in step; it is outside the timed post-compute-wait. */
static void run_exchange(const vs_state *st, const vs_cmd *c)
{
    /* Locals, not st->/c-> reads: c's address escapes to MPI_Bcast. */
    const MPI_Comm comm = st->pair;
    const vs_pairing *p = &PAIRINGS[c->pairing];
    const bool sender = st->rank == 0;
    const bool nb = sender ? p->send_nb : p->recv_nb;
    const int peer = 1 - st->rank;
    void *const buf = st->buf;
    const int n = (int)c->size;
    const int64_t iters = c->iterations;
    const uint64_t units = (uint64_t)c->units;
    double *const post = st->mine + T_POST * st->cap;
    double *const comp = st->mine + T_COMP * st->cap;
    double *const wait = st->mine + T_WAIT * st->cap;
    double *const call = st->mine + T_CALL * st->cap;
    char region[REGION_LEN];
    const bool in_region = c->op == CMD_STEP;
    region_name(region, sizeof region, (int)c->pairing, (uint64_t)c->size, (long)c->step);
    MPI_Request req;

    MPI_Barrier(comm);
    if (in_region)
        MPI_OVERLAP_REGION_BEGIN(region);
    if (nb) {
        for (int64_t i = 0; i < iters; i++) {
            step_barrier(comm, region, in_region);
            uint64_t t0 = mo_timer_now_ns();
            if (sender)
                MPI_Isend(buf, n, MPI_BYTE, peer, MSG_TAG, comm, &req);
            else
                MPI_Irecv(buf, n, MPI_BYTE, peer, MSG_TAG, comm, &req);
            uint64_t t1 = mo_timer_now_ns();
            mo_work(units);
            uint64_t t2 = mo_timer_now_ns();
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            uint64_t t3 = mo_timer_now_ns();
            post[i] = (double)(t1 - t0) / 1000.0;
            comp[i] = (double)(t2 - t1) / 1000.0;
            wait[i] = (double)(t3 - t2) / 1000.0;
        }
    } else {
        for (int64_t i = 0; i < iters; i++) {
            step_barrier(comm, region, in_region);
            uint64_t t0 = mo_timer_now_ns();
            if (sender)
                MPI_Send(buf, n, MPI_BYTE, peer, MSG_TAG, comm);
            else
                MPI_Recv(buf, n, MPI_BYTE, peer, MSG_TAG, comm, MPI_STATUS_IGNORE);
            uint64_t t1 = mo_timer_now_ns();
            call[i] = (double)(t1 - t0) / 1000.0;
        }
    }
    if (in_region)
        MPI_OVERLAP_REGION_END(region);
    /* Outside the region: rank 1's times go to rank 0. */
    if (in_region) {
        if (sender)
            MPI_Recv(st->theirs, (int)(NT * st->cap), MPI_DOUBLE, 1, DATA_TAG, comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(st->mine, (int)(NT * st->cap), MPI_DOUBLE, 0, DATA_TAG, comm);
    }
}

static double run_cmd(const vs_state *st, const vs_cmd *c)
{
    if (c->op == CMD_PINGPONG)
        return run_pingpong(st, c);
    run_exchange(st, c);
    return 0.0;
}

/* Rank 0: tells rank 1 what to run and runs it. */
static double command(const vs_state *st, int op, int pairing, uint64_t size, uint64_t units,
                      long iterations, long step)
{
    vs_cmd c = {op, pairing, (int64_t)size, (int64_t)units, iterations, step};
    mo_cmd_send(st->pair, &c, sizeof c);
    return run_cmd(st, &c);
}

/* Rank 1: each of rank 0's commands (mo_cmd_serve). */
static void serve_cmd(void *st, const void *cmd)
{
    run_cmd(st, cmd);
}

/* ---- the method (rank 0) ---------------------------------------------------- */

/* Round trips per ping-pong sample so that one lasts about --sample-ms. */
static long round_trips(const mo_options *o, double one_way_us)
{
    if (!(one_way_us > 0))
        one_way_us = 1.0;
    return mo_clamp_iters(o, ceil(o->sample_ms * 1000.0 / (2.0 * one_way_us)));
}

/* Planned computation of step j of n: 0, then geometric from FIRST_FRAC * T
 * to the case's top (max of TOP_FACTOR * T, TOP_FACTOR * the table time, TOP_MIN_US). */
static double planned_us(double transfer_us, double top_us, long j, long n)
{
    if (j == 0)
        return 0.0;
    double first = FIRST_FRAC * transfer_us;
    if (!(first > 0) || first > top_us)
        first = top_us / 64.0;
    if (n <= 2)
        return top_us;
    return first * pow(top_us / first, (double)(j - 1) / (double)(n - 2));
}

/* times: NT rows of `stride` values, the first `iters` of each measured. */
static void summarize_side(vs_side *s, const double *times, long stride, long iters, bool nb)
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < NT; k++) {
        s->has[k] = nb ? k != T_CALL : k == T_CALL;
        if (s->has[k] && mo_stats_summarize(times + k * stride, (size_t)iters, &s->st[k]) != 0)
            s->has[k] = false; /* out of memory for the sort */
    }
}

/* Measures one (pairing, size). Returns 0, or -1 if out of memory. */
static int measure_case(mo_bench *b, vs_state *st, vs_case *cs)
{
    const mo_options *o = st->opts;
    const long nsteps = st->params->steps;
    const vs_pairing *p = &PAIRINGS[cs->pairing];

    /* The blocking transfer time: warm-up, then --reps ping-pong samples,
     * once per size (the ping-pong is the same for every pairing; one
     * measurement keeps the pairings of a size on one scale). */
    const vs_case *same = NULL;
    for (const vs_case *c = st->cases; c < cs && !same; c++)
        if (c->size == cs->size && c->transfer.n > 0)
            same = c;
    if (same) {
        cs->transfer = same->transfer;
        cs->round_trips = same->round_trips;
    } else {
        long warm = o->warmup > 0 ? o->warmup : 1;
        double est = command(st, CMD_PINGPONG, cs->pairing, cs->size, 0, warm, 0);
        cs->round_trips = round_trips(o, est);
        double *samples = malloc((size_t)o->reps * sizeof *samples);
        if (!samples)
            return -1;
        for (long r = 0; r < o->reps; r++)
            samples[r] = command(st, CMD_PINGPONG, cs->pairing, cs->size, 0, cs->round_trips, 0);
        int rc = mo_stats_summarize(samples, (size_t)o->reps, &cs->transfer);
        free(samples);
        if (rc != 0)
            return -1;
    }
    const double t_us = cs->transfer.median;
    bool extrapolated = false;
    cs->table_us = st->have_table
                       ? 1e6 * mop_xfer_table_lookup(&st->table, MOP_XFER_INTRA, cs->size, &extrapolated)
                       : NAN;
    cs->top_us = fmax(TOP_FACTOR * t_us, TOP_MIN_US);
    if (isfinite(cs->table_us))
        cs->top_us = fmax(cs->top_us, TOP_FACTOR * cs->table_us);

    cs->steps = calloc((size_t)nsteps, sizeof *cs->steps);
    if (!cs->steps)
        return -1;
    /* Untimed warm-up of the exchange itself (no work, no region). */
    if (o->warmup > 0)
        command(st, CMD_WARM, cs->pairing, cs->size, 0, o->warmup, 0);

    mo_verbose(o, "%s %llu B: blocking transfer %.3f us; computation 0 to %.1f us\n%-6s%-12s%-12s%-12s%-12s%-12s%-12s\n",
               p->name, (unsigned long long)cs->size, t_us, cs->top_us, "step", "comp_us", "s.wait", "s.call",
               "r.wait", "r.call", "iterations");
    cs->stop_reason = NULL;
    for (long j = 0; j < nsteps; j++) {
        double plan = planned_us(t_us, cs->top_us, j, nsteps);
        double u = round(plan * st->work->units_per_us);
        if (!isfinite(u) || u < 0) {
            cs->stop_reason = "bad-estimate";
            break;
        }
        vs_step *s = &cs->steps[cs->nsteps];
        s->units = (uint64_t)u;
        s->work_us_nominal = (double)s->units / st->work->units_per_us;
        s->iterations = st->iters;
        command(st, CMD_STEP, cs->pairing, cs->size, s->units, st->iters, j);
        summarize_side(&s->side[0], st->mine, st->cap, st->iters, p->send_nb);
        summarize_side(&s->side[1], st->theirs, st->cap, st->iters, p->recv_nb);
        cs->nsteps++;
        const vs_side *snd = &s->side[0], *rcv = &s->side[1];
        const vs_side *nbs = p->send_nb ? snd : rcv;
        mo_verbose(o, "%-6ld%-12.3f%-12.3f%-12.3f%-12.3f%-12.3f%-12ld\n", j, nbs->st[T_COMP].median,
                   snd->has[T_WAIT] ? snd->st[T_WAIT].median : NAN, snd->has[T_CALL] ? snd->st[T_CALL].median : NAN,
                   rcv->has[T_WAIT] ? rcv->st[T_WAIT].median : NAN, rcv->has[T_CALL] ? rcv->st[T_CALL].median : NAN,
                   s->iterations);
        if (cs->nsteps == nsteps)
            cs->complete = true;
        mo_progress(o->progress, ++b->done, b->total, "%s/%llu step %ld/%ld", p->name,
                    (unsigned long long)cs->size, j + 1, nsteps);
        mo_bench_running(b);
        if (mo_time_up(st->opts, st->start_ns) && j + 1 < nsteps) {
            cs->stop_reason = "time-limit";
            b->time_up = true;
            break;
        }
    }
    return 0;
}

/* ---- output ----------------------------------------------------------------- */

static void write_side_meta(mo_json *w, const char *key, int rank, const char *call, bool nb)
{
    mo_json_key(w, key);
    mo_json_begin_object(w);
    mo_json_kv_int64(w, "rank", rank);
    mo_json_kv_string(w, "call", call);
    mo_json_kv_bool(w, "nonblocking", nb);
    mo_json_end_object(w);
}

static void write_side(mo_json *w, const char *key, const vs_side *s)
{
    mo_json_key(w, key);
    mo_json_begin_object(w);
    for (int k = 0; k < NT; k++) {
        if (s->has[k]) {
            mo_json_stats(w, T_KEYS[k], &s->st[k]);
        } else {
            mo_json_key(w, T_KEYS[k]);
            mo_json_null(w);
        }
    }
    mo_json_end_object(w);
}

static void write_results(mo_json *w, const void *ctx)
{
    const vs_state *st = ctx;
    mo_json_kv_bool(w, "profiler_loaded", st->profiled);
    mo_json_kv_string(w, "profiler_table", st->have_table ? st->table_path : NULL);
    mo_json_kv_string(w, "region_format", "<pairing>/<bytes>/<step>");
    mo_json_kv_int64(w, "iterations", st->iters);
    mo_json_kv_double(w, "top_factor", TOP_FACTOR);
    mo_json_kv_double(w, "top_min_us", TOP_MIN_US);
    mo_json_kv_double(w, "first_frac", FIRST_FRAC);
    mo_json_key(w, "cases");
    mo_json_begin_array(w);
    for (int i = 0; i < st->ncases; i++) {
        const vs_case *cs = &st->cases[i];
        const vs_pairing *p = &PAIRINGS[cs->pairing];
        mo_json_begin_object(w);
        mo_json_kv_string(w, "pairing", p->name);
        mo_json_kv_uint64(w, "size", cs->size);
        mo_json_kv_bool(w, "complete", cs->complete);
        if (cs->stop_reason)
            mo_json_kv_string(w, "stop_reason", cs->stop_reason);
        write_side_meta(w, "sender", 0, p->send_call, p->send_nb);
        write_side_meta(w, "receiver", 1, p->recv_call, p->recv_nb);
        mo_json_stats(w, "transfer_us", &cs->transfer);
        mo_json_kv_int64(w, "transfer_round_trips", cs->round_trips);
        mo_json_kv_double(w, "table_us", cs->table_us); /* NaN -> null */
        mo_json_kv_double(w, "top_comp_us", cs->top_us);
        mo_json_key(w, "steps");
        mo_json_begin_array(w);
        for (int j = 0; j < cs->nsteps; j++) {
            const vs_step *s = &cs->steps[j];
            char region[REGION_LEN];
            region_name(region, sizeof region, cs->pairing, cs->size, j);
            mo_json_begin_object(w);
            mo_json_kv_int64(w, "step", j);
            mo_json_kv_string(w, "region", region);
            mo_json_kv_uint64(w, "work_units", s->units);
            mo_json_kv_double(w, "work_us_nominal", s->work_us_nominal);
            mo_json_kv_int64(w, "iterations", s->iterations);
            write_side(w, "sender", &s->side[0]);
            write_side(w, "receiver", &s->side[1]);
            mo_json_end_object(w);
        }
        mo_json_end_array(w);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

static void vs_teardown(mo_bench *b, void *ctx)
{
    vs_state *st = ctx;
    (void)b;
    for (int i = 0; i < st->ncases; i++)
        free(st->cases[i].steps);
    free(st->cases);
    free(st->buf);
    free(st->back);
    free(st->mine);
    free(st->theirs);
    if (st->have_table)
        mop_xfer_table_free(&st->table);
}

/* ---- main ----------------------------------------------------------------- */

static int npairings(unsigned set)
{
    int n = 0;
    for (int i = 0; i < NPAIRINGS; i++)
        n += (set >> i) & 1u;
    return n;
}

/* The region API is a weak symbol: present only under the profiler. */
static bool vs_profiled(void)
{
    return mpi_overlap_region_begin != NULL && mpi_overlap_region_end != NULL;
}

/* Timed iterations per step. */
static long vs_iters(const mo_options *o)
{
    return o->iters > 0 ? o->iters : o->quick ? DEFAULT_ITERS_QUICK : DEFAULT_ITERS;
}

/* Iterations the time buffers hold: the warm-up ones are recorded too. */
static long vs_cap(const mo_options *o)
{
    return o->warmup > vs_iters(o) ? o->warmup : vs_iters(o);
}

/* Each (pairing, size, step) is a region of its own under the profiler, and
 * the NT time series of cap iterations go to rank 0 as one int count. */
static int vs_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    const vs_params *p = ctx;
    const long nregions = (long)npairings(p->pairings) * (long)o->sizes.n * p->steps;
    if (vs_profiled() && nregions > MAX_REGIONS) {
        snprintf(err, errlen, "%ld regions (pairings x sizes x steps) exceed the %d the profiler keeps "
                 "apart; use fewer sizes or steps", nregions, MAX_REGIONS);
        return -1;
    }
    const long cap = vs_cap(o);
    if (cap > INT_MAX / NT) {
        snprintf(err, errlen, "--iters/--warmup %ld is too large (at most %d)", cap, INT_MAX / NT);
        return -1;
    }
    return 0;
}

/* Rank 0's warnings come here, in the order the document has always had
 * them: the binding, the profiler, its table (which rank 0 reads: its time
 * per size is where the upper bound saturates, so the steps must reach past
 * it too). */
static void vs_setup(mo_bench *b, void *ctx)
{
    vs_state *st = ctx;
    st->opts = &b->opts;
    st->start_ns = b->start_ns;
    st->iters = vs_iters(&b->opts);
    st->cap = vs_cap(&b->opts);
    st->profiled = vs_profiled();
    st->pair = b->comm;
    b->ready.calib_ms = CALIBRATION_MS;
    b->ready.calib_samples = CALIBRATION_SAMPLES;
    b->ready.quiet = true;
    if (b->rank != 0)
        return;
    mo_warn_if_unbound(&b->doc, &b->prov, 0, 1);
    if (!st->profiled)
        mo_result_warn(&b->doc, "the overlap profiler is not loaded: only the times are measured, "
                                "no overlap bounds (run it with mpi-overlap bench overlap-validation)");
    st->table_path = getenv("MPI_OVERLAP_TABLE");
    if (st->table_path && *st->table_path) {
        char terr[256];
        mop_xfer_table_init(&st->table);
        if (mop_xfer_table_load(&st->table, st->table_path, terr, sizeof terr) == 0) {
            st->have_table = true;
        } else {
            mop_xfer_table_free(&st->table);
            mo_result_warn(&b->doc, "cannot read the profiler's table %s (%s): computation steps "
                                    "scale with the measured transfer time only", st->table_path, terr);
        }
    }
}

/* The pair: its buffers, once rank 0 has calibrated. */
static int vs_start(mo_bench *b, void *ctx)
{
    vs_state *st = ctx;
    if (st->pair == MPI_COMM_NULL)
        return 1;
    MPI_Comm_rank(st->pair, &st->rank);
    st->work = &b->work;
    const size_t bytes = mo_bench_largest(b);
    st->buf = mo_page_alloc(bytes);
    st->back = mo_page_alloc(bytes);
    st->mine = malloc((size_t)NT * (size_t)st->cap * sizeof *st->mine);
    if (st->rank == 0)
        st->theirs = malloc((size_t)NT * (size_t)st->cap * sizeof *st->theirs);
    int rc = mo_bench_pair_allocated(b, st->rank, st->buf && st->back && st->mine && (st->rank != 0 || st->theirs),
                                     bytes);
    if (rc != 0)
        return rc;
    /* Touch every page now, so no page faults land in timed loops; zeroed
     * times, so unused slots are defined when sent. */
    memset(st->buf, b->rank + 1, bytes);
    memset(st->back, b->rank + 1, bytes);
    memset(st->mine, 0, (size_t)NT * (size_t)st->cap * sizeof *st->mine);
    return 0;
}

/* Rank 0: each pairing's sizes in turn, a progress line per step; rank 1 serves (run_cmd). */
static int vs_measure(mo_bench *b, void *ctx)
{
    vs_state *st = ctx;
    const vs_params *params = st->params;
    const mo_options *o = &b->opts;
    const int ncases = npairings(params->pairings) * (int)o->sizes.n;
    b->total = ncases * (int)params->steps;
    st->cases = calloc((size_t)ncases, sizeof *st->cases);
    bool oom = st->cases == NULL;
    for (int pi = 0; pi < NPAIRINGS && !b->time_up && !oom; pi++) {
        if (!(params->pairings & (1u << pi)))
            continue;
        for (size_t i = 0; i < o->sizes.n && !b->time_up && !oom; i++) {
            if (mo_time_up(st->opts, st->start_ns)) {
                b->time_up = true;
                break;
            }
            vs_case *cs = &st->cases[st->ncases++];
            cs->pairing = pi;
            cs->size = o->sizes.v[i];
            if (measure_case(b, st, cs)) {
                oom = true;
                break;
            }
            if (!cs->complete)
                mo_result_warn(&b->doc, "%s size %llu: stopped by %s after %d of %ld steps", PAIRINGS[pi].name,
                               (unsigned long long)cs->size, cs->stop_reason ? cs->stop_reason : "?", cs->nsteps,
                               params->steps);
        }
    }
    mo_cmd_quit(st->pair);
    return mo_bench_conclude(b, oom, "steps", NULL, true);
}

int main(int argc, char **argv)
{
    static vs_params params = {.pairings = (1u << NPAIRINGS) - 1, .steps = DEFAULT_STEPS};
    static vs_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = vs_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {PROGRAM, DEFAULT_SIZES, &ext, 2, true, vs_check, NULL}, .benchmark = BENCH, .pair = true,
        .results = write_results, .state = &st, .setup = vs_setup, .start = vs_start, .measure = vs_measure, .run_cmd = serve_cmd,
        .verbose_done = true, .teardown = vs_teardown, MO_KERNEL_FIELDS(vs_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
