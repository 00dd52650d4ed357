/* collectives.c - mo_collectives: the time of each MPI collective per
 * message size on the job's communicator size, for the collective series of
 * the profiler's transfer-time table (`mpi-overlap calibrate`, format v2)
 * and as a plain collective-latency benchmark (docs/benchmarks.md,
 * "collectives").
 *
 * Every op of native/profiler/mop_coll_ops.h is measured twice: blocking
 * (MPI_Bcast) and non-blocking (MPI_Ibcast posted and at once completed by
 * MPI_Wait), on a duplicate of MPI_COMM_WORLD; the neighbourhood ops on a
 * ring (MPI_Dist_graph_create_adjacent, in- and out-neighbours = left and
 * right). A size is the contract's per-process block (docs/method.md,
 * "Collectives"): every rank contributes / receives `bytes` per peer block,
 * MPI_BYTE for data movement, MPI_INT with MPI_SUM for reductions (sizes
 * that are not a multiple of sizeof(int) are skipped for those), root 0,
 * barrier at 0 bytes only.
 *
 * The sweep over (op, size) is made --passes times (as the ping-pong's), each
 * visit adding iterations to the point, so that a disturbance lasting some
 * milliseconds (another job's time slice) hits some iterations of many points
 * instead of all iterations of a few. A visit: an untimed warm-up, then its
 * share of the point's iterations (chosen at the first visit so that they
 * take about --reps x --sample-ms in all, cut at twice the visit's share of
 * that), each started after an untimed synchronisation (a one-int
 * MPI_Allreduce that also carries rank 0's verdict to stop) and timed on
 * every rank. The time of an iteration is the largest of the ranks' times
 * (a collective has moved its data only when its last rank is done, and the
 * table serves every rank, roots and leaves alike), and the op's time is the
 * median of that over all iterations: on a shared machine a preempted rank
 * adds tens of milliseconds to some iterations, which a mean would spread
 * over the op (measured: 1 MiB bcast on 2 ranks, median 82 us, mean 943 us).
 * The mean, and the OSU benchmarks' figure (the mean over ranks of each
 * rank's mean over iterations), are in the result too. Every rank takes
 * every decision from values all of them hold (an allreduced estimate, rank
 * 0's verdicts), so all run the same iterations. */
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
#include "fingerprint.h"
#include "mop_coll_ops.h"
#include "mop_xfer_table.h"

#define BENCH "collectives"
#define DEFAULT_SIZES "0:1M"
#define QUICK_SIZES "0,1K,64K,1M"
#define MAX_POINT_ITERS 1000 /* as OSU for small messages; per-iteration times are kept */
#define MIN_MEDIAN_ITERS 8   /* a median of fewer is moved by two preempted iterations */
#define NEIGHBOURS 2          /* ring: left and right */
#define DEFAULT_PASSES 5
#define DEFAULT_PASSES_QUICK 3

/* ---- benchmark-specific options ---------------------------------------- */

typedef struct cl_params {
    char *ops_spec;                    /* --ops as given; NULL = all */
    bool selected[MOP_XFER_NCOLL_OPS]; /* after finalize */
    long passes;
} cl_params;


/* --ops as given; cl_finalize() reads it once the other options are in. */
static int parse_ops(void *ctx, const char *arg, char *err, size_t errlen)
{
    cl_params *p = ctx;
    free(p->ops_spec);
    p->ops_spec = strdup(arg);
    if (!p->ops_spec) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static void ops_json(mo_json *w, const void *ctx)
{
    const cl_params *p = ctx;
    mo_json_kv_string(w, "ops", p->ops_spec ? p->ops_spec : "all");
}

static const mo_field cl_fields[] = {
    MO_FIELD_CUSTOM_OF("ops", parse_ops, ops_json),
    MO_FIELD_LONG_Q("passes", cl_params, passes, 1, 100, DEFAULT_PASSES, DEFAULT_PASSES_QUICK),
};

/* --ops: comma-separated names as in the table ("bcast", "ibcast"), or
 * "blocking" / "nonblocking" for one half; default all. */
static int cl_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    (void)quick;
    cl_params *p = ctx;
    if (!p->ops_spec) {
        for (int op = 0; op < MOP_XFER_NCOLL_OPS; op++)
            p->selected[op] = true;
        return 0;
    }
    char *copy = strdup(p->ops_spec), *save = NULL;
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = 0, rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        int op = mop_coll_op_parse(tok);
        bool blocking = strcmp(tok, "blocking") == 0, nb = strcmp(tok, "nonblocking") == 0;
        if (op < 0 && !blocking && !nb) {
            snprintf(err, errlen, "--ops: unknown collective '%s' (names as 'bcast', 'ibcast', "
                     "or 'blocking', 'nonblocking')", tok);
            rc = -1;
        }
        for (int o = 0; o < MOP_XFER_NCOLL_OPS; o++)
            if (o == op || (blocking && o < MOP_COLL_NB_OFFSET) || (nb && o >= MOP_COLL_NB_OFFSET))
                p->selected[o] = true;
        n++;
    }
    free(copy);
    if (rc == 0 && n == 0) {
        snprintf(err, errlen, "--ops: empty list");
        rc = -1;
    }
    return rc;
}

static void cl_usage(FILE *f)
{
    fprintf(f,
            "  --ops LIST           collectives to time, comma-separated: bcast, ibcast, ...\n"
            "                       (the transfer-time table's names), blocking, nonblocking\n"
            "                       (default: all)\n"
            "  --passes N           sweeps over (op, size), each adding iterations to every\n"
            "                       point (default %d; --quick %d)\n"
            "  (--sizes: per-process block in bytes, default " DEFAULT_SIZES "; --quick: "
            QUICK_SIZES " unless --sizes\n"
            "   is given; --iters: fixed iterations per size; --reps x --sample-ms: the\n"
            "   time the timed iterations of one size aim at otherwise)\n",
            DEFAULT_PASSES, DEFAULT_PASSES_QUICK);
}

/* ---- state ------------------------------------------------------------ */

typedef struct cl_point {
    uint64_t bytes;
    long planned;       /* iterations over all passes, chosen at the first visit */
    long iterations;    /* timed so far */
    int visits;
    double *samples;    /* rank 0: the slowest rank's time of each iteration */
    double rank_sum_s;  /* rank 0: sum over ranks and iterations of the ranks' times */
    double time_s;      /* median of samples: the table's value */
    double mean_s, min_s, max_s; /* of samples */
    double rank_mean_s; /* mean over ranks of each rank's mean (OSU's figure) */
} cl_point;

typedef struct cl_series {
    int op; /* with MOP_COLL_NB_OFFSET for the non-blocking one */
    bool complete;
    cl_point *points;
    int npoints;
} cl_series;

typedef struct cl_state {
    const mo_options *opts;
    const cl_params *params;
    MPI_Comm comm, ring;  /* dup of world; the ring topology */
    int rank, size, nodes;
    unsigned char *sbuf, *rbuf; /* size blocks of the largest size each, touched */
    int *counts, *displs;       /* size entries: one block per rank */
    MPI_Aint *adispls;          /* for the neighbourhood w variant */
    MPI_Datatype *types;
    double *iter_s, *iter_max_s; /* one visit: this rank's times, the slowest (rank 0) */
    uint64_t start_ns;
    cl_series *series;
    int nseries;
    mo_fingerprints fp;
} cl_state;

/* ---- one collective ----------------------------------------------------- */

static bool is_reduction(int base)
{
    return base == MOP_COLL_REDUCE || base == MOP_COLL_ALLREDUCE ||
           base == MOP_COLL_REDUCE_SCATTER || base == MOP_COLL_REDUCE_SCATTER_BLOCK ||
           base == MOP_COLL_SCAN || base == MOP_COLL_EXSCAN;
}

static bool is_neighbour(int base)
{
    return base >= MOP_COLL_NEIGHBOR_ALLGATHER && base <= MOP_COLL_NEIGHBOR_ALLTOALLW;
}

/* Whether (op, bytes) is measured: barrier moves no data (0 only); a
 * reduction's block must hold whole ints. */
static bool point_applies(int op, uint64_t bytes)
{
    int base = op % MOP_COLL_NB_OFFSET;
    if (base == MOP_COLL_BARRIER)
        return bytes == 0;
    if (is_reduction(base))
        return bytes % sizeof(int) == 0;
    return true;
}

/* Sets counts / displacements for blocks of b units in n slots. */
static void set_blocks(cl_state *st, int n, int b)
{
    for (int i = 0; i < n; i++) {
        st->counts[i] = b;
        st->displs[i] = i * b;
        st->adispls[i] = (MPI_Aint)i * b;
        st->types[i] = MPI_BYTE;
    }
}

/* Posts (nb) or runs one collective with a per-process block of `bytes`;
 * for a non-blocking one *req is set and the caller waits. */
static void start_op(cl_state *st, int op, uint64_t bytes, MPI_Request *req)
{
    const int base = op % MOP_COLL_NB_OFFSET;
    const bool nb = op >= MOP_COLL_NB_OFFSET;
    const int b = (int)bytes, ni = (int)(bytes / sizeof(int));
    MPI_Comm c = st->comm, g = st->ring;
    void *s = st->sbuf, *r = st->rbuf;
    int *cnt = st->counts, *dsp = st->displs;
    *req = MPI_REQUEST_NULL;
    switch ((mop_coll_op)base) {
    case MOP_COLL_BARRIER:
        nb ? MPI_Ibarrier(c, req) : MPI_Barrier(c);
        break;
    case MOP_COLL_BCAST:
        nb ? MPI_Ibcast(s, b, MPI_BYTE, 0, c, req) : MPI_Bcast(s, b, MPI_BYTE, 0, c);
        break;
    case MOP_COLL_GATHER:
        nb ? MPI_Igather(s, b, MPI_BYTE, r, b, MPI_BYTE, 0, c, req)
           : MPI_Gather(s, b, MPI_BYTE, r, b, MPI_BYTE, 0, c);
        break;
    case MOP_COLL_GATHERV:
        nb ? MPI_Igatherv(s, b, MPI_BYTE, r, cnt, dsp, MPI_BYTE, 0, c, req)
           : MPI_Gatherv(s, b, MPI_BYTE, r, cnt, dsp, MPI_BYTE, 0, c);
        break;
    case MOP_COLL_SCATTER:
        nb ? MPI_Iscatter(s, b, MPI_BYTE, r, b, MPI_BYTE, 0, c, req)
           : MPI_Scatter(s, b, MPI_BYTE, r, b, MPI_BYTE, 0, c);
        break;
    case MOP_COLL_SCATTERV:
        nb ? MPI_Iscatterv(s, cnt, dsp, MPI_BYTE, r, b, MPI_BYTE, 0, c, req)
           : MPI_Scatterv(s, cnt, dsp, MPI_BYTE, r, b, MPI_BYTE, 0, c);
        break;
    case MOP_COLL_ALLGATHER:
        nb ? MPI_Iallgather(s, b, MPI_BYTE, r, b, MPI_BYTE, c, req)
           : MPI_Allgather(s, b, MPI_BYTE, r, b, MPI_BYTE, c);
        break;
    case MOP_COLL_ALLGATHERV:
        nb ? MPI_Iallgatherv(s, b, MPI_BYTE, r, cnt, dsp, MPI_BYTE, c, req)
           : MPI_Allgatherv(s, b, MPI_BYTE, r, cnt, dsp, MPI_BYTE, c);
        break;
    case MOP_COLL_ALLTOALL:
        nb ? MPI_Ialltoall(s, b, MPI_BYTE, r, b, MPI_BYTE, c, req)
           : MPI_Alltoall(s, b, MPI_BYTE, r, b, MPI_BYTE, c);
        break;
    case MOP_COLL_ALLTOALLV:
        nb ? MPI_Ialltoallv(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, c, req)
           : MPI_Alltoallv(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, c);
        break;
    case MOP_COLL_ALLTOALLW: /* w takes byte displacements */
        nb ? MPI_Ialltoallw(s, cnt, dsp, st->types, r, cnt, dsp, st->types, c, req)
           : MPI_Alltoallw(s, cnt, dsp, st->types, r, cnt, dsp, st->types, c);
        break;
    case MOP_COLL_REDUCE:
        nb ? MPI_Ireduce(s, r, ni, MPI_INT, MPI_SUM, 0, c, req)
           : MPI_Reduce(s, r, ni, MPI_INT, MPI_SUM, 0, c);
        break;
    case MOP_COLL_ALLREDUCE:
        nb ? MPI_Iallreduce(s, r, ni, MPI_INT, MPI_SUM, c, req)
           : MPI_Allreduce(s, r, ni, MPI_INT, MPI_SUM, c);
        break;
    case MOP_COLL_REDUCE_SCATTER: /* counts are in ints here */
        nb ? MPI_Ireduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, c, req)
           : MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, c);
        break;
    case MOP_COLL_REDUCE_SCATTER_BLOCK:
        nb ? MPI_Ireduce_scatter_block(s, r, ni, MPI_INT, MPI_SUM, c, req)
           : MPI_Reduce_scatter_block(s, r, ni, MPI_INT, MPI_SUM, c);
        break;
    case MOP_COLL_SCAN:
        nb ? MPI_Iscan(s, r, ni, MPI_INT, MPI_SUM, c, req)
           : MPI_Scan(s, r, ni, MPI_INT, MPI_SUM, c);
        break;
    case MOP_COLL_EXSCAN:
        nb ? MPI_Iexscan(s, r, ni, MPI_INT, MPI_SUM, c, req)
           : MPI_Exscan(s, r, ni, MPI_INT, MPI_SUM, c);
        break;
    case MOP_COLL_NEIGHBOR_ALLGATHER:
        nb ? MPI_Ineighbor_allgather(s, b, MPI_BYTE, r, b, MPI_BYTE, g, req)
           : MPI_Neighbor_allgather(s, b, MPI_BYTE, r, b, MPI_BYTE, g);
        break;
    case MOP_COLL_NEIGHBOR_ALLGATHERV:
        nb ? MPI_Ineighbor_allgatherv(s, b, MPI_BYTE, r, cnt, dsp, MPI_BYTE, g, req)
           : MPI_Neighbor_allgatherv(s, b, MPI_BYTE, r, cnt, dsp, MPI_BYTE, g);
        break;
    case MOP_COLL_NEIGHBOR_ALLTOALL:
        nb ? MPI_Ineighbor_alltoall(s, b, MPI_BYTE, r, b, MPI_BYTE, g, req)
           : MPI_Neighbor_alltoall(s, b, MPI_BYTE, r, b, MPI_BYTE, g);
        break;
    case MOP_COLL_NEIGHBOR_ALLTOALLV:
        nb ? MPI_Ineighbor_alltoallv(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, g, req)
           : MPI_Neighbor_alltoallv(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, g);
        break;
    case MOP_COLL_NEIGHBOR_ALLTOALLW:
        nb ? MPI_Ineighbor_alltoallw(s, cnt, st->adispls, st->types, r, cnt, st->adispls,
                                     st->types, g, req)
           : MPI_Neighbor_alltoallw(s, cnt, st->adispls, st->types, r, cnt, st->adispls,
                                    st->types, g);
        break;
    case MOP_COLL_NOPS:
        break;
    }
}

/* Counts and displacements the op needs at this size. */
static void prepare(cl_state *st, int op, uint64_t bytes)
{
    int base = op % MOP_COLL_NB_OFFSET;
    int slots = is_neighbour(base) ? NEIGHBOURS : st->size;
    if (base == MOP_COLL_REDUCE_SCATTER)
        set_blocks(st, slots, (int)(bytes / sizeof(int)));
    else
        set_blocks(st, slots, (int)bytes);
}

/* One iteration (barrier untimed): this rank's seconds. */
/* One iteration after the synchronisation (done by the caller): this rank's
 * seconds. */
static double timed_op(cl_state *st, int op, uint64_t bytes)
{
    MPI_Request req;
    uint64_t t0 = mo_timer_now_ns();
    start_op(st, op, bytes, &req);
    if (req != MPI_REQUEST_NULL)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    return (double)(mo_timer_now_ns() - t0) / 1e9;
}

/* The slowest rank's time of one iteration (after a barrier), on every rank. */
static double iteration_max(cl_state *st, int op, uint64_t bytes)
{
    MPI_Barrier(st->comm);
    double t = timed_op(st, op, bytes);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, st->comm);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Rank 0: the point's statistics from its samples so far. */
static void summarize(cl_state *st, cl_point *pt)
{
    long n = pt->iterations;
    if (n == 0)
        return;
    double total = 0.0;
    for (long i = 0; i < n; i++)
        total += pt->samples[i];
    memcpy(st->iter_max_s, pt->samples, (size_t)n * sizeof *pt->samples);
    qsort(st->iter_max_s, (size_t)n, sizeof *st->iter_max_s, cmp_double);
    pt->time_s = n % 2 ? st->iter_max_s[n / 2]
                       : 0.5 * (st->iter_max_s[n / 2 - 1] + st->iter_max_s[n / 2]);
    pt->mean_s = total / (double)n;
    pt->min_s = st->iter_max_s[0];
    pt->max_s = st->iter_max_s[n - 1];
    pt->rank_mean_s = pt->rank_sum_s / (double)n / (double)st->size;
}

/* One visit of a point (pass `pass` of `passes`), on every rank. */
static void measure_visit(cl_state *st, int op, cl_point *pt, long pass, long passes)
{
    const mo_options *o = st->opts;
    const uint64_t bytes = pt->bytes;
    const double target_s = (double)o->reps * o->sample_ms / 1000.0;
    prepare(st, op, bytes);

    /* Warm-up: first contact (algorithm selection, connections, caches
     * after the other points), then up to --warmup - 1 iterations, at least
     * 2 but stopping once they took about one sample's time; the fastest
     * estimates one iteration (noise only adds time). Every rank sees the
     * same allreduced times, so all stop together. */
    double first = iteration_max(st, op, bytes), est = INFINITY, spent = 0.0;
    for (long i = 0; i < o->warmup - 1; i++) {
        double t = iteration_max(st, op, bytes);
        est = t < est ? t : est;
        spent += t;
        if (i >= 1 && spent > o->sample_ms / 1000.0)
            break;
    }
    if (!isfinite(est))
        est = first;
    if (pt->visits == 0) { /* the plan, from the first visit's estimate */
        long iters = o->iters;
        if (iters <= 0) {
            double n = ceil(target_s / (est > 0 ? est : 1e-6));
            iters = mo_clamp_iters(o, n);
            if (iters < MIN_MEDIAN_ITERS) /* but --max-iters is respected */
                iters = MIN_MEDIAN_ITERS < o->max_iters ? MIN_MEDIAN_ITERS : o->max_iters;
        }
        pt->planned = iters > MAX_POINT_ITERS ? MAX_POINT_ITERS : iters;
    }
    /* This visit's share of what is left, and of the floor of iterations. */
    const long left = pt->planned - pt->iterations, passes_left = passes - pass;
    const long quota = (left + passes_left - 1) / passes_left;
    const long min_total = o->min_iters > MIN_MEDIAN_ITERS ? o->min_iters : MIN_MEDIAN_ITERS;
    const long floor_iters = (min_total + passes - 1) / passes;

    /* Each iteration starts after an untimed MPI_Allreduce, which
     * synchronises the ranks as a barrier would and carries rank 0's verdict
     * that the visit has had twice its share of the time: under contention
     * an iteration can take far longer than the warm-up's fastest, and a
     * fixed count would then run for minutes. --iters is kept exactly. */
    const uint64_t t_start = mo_timer_now_ns();
    double sum = 0.0;
    long n = 0;
    for (; n < quota; n++) {
        int stop = st->rank == 0 && o->iters <= 0 && n >= floor_iters &&
                   (double)(mo_timer_now_ns() - t_start) / 1e9 >
                       2.0 * target_s / (double)passes;
        MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, st->comm);
        if (stop)
            break;
        st->iter_s[n] = timed_op(st, op, bytes);
        sum += st->iter_s[n];
    }
    double *into = st->rank == 0 ? pt->samples + pt->iterations : NULL;
    MPI_Reduce(st->iter_s, into, (int)n, MPI_DOUBLE, MPI_MAX, 0, st->comm);
    double sum_all = 0.0;
    MPI_Reduce(&sum, &sum_all, 1, MPI_DOUBLE, MPI_SUM, 0, st->comm);
    pt->iterations += n;
    pt->visits++;
    if (st->rank == 0) {
        pt->rank_sum_s += sum_all;
        summarize(st, pt);
    }
}

/* ---- output ----------------------------------------------------------- */

/* "MPI_Ibcast" for "ibcast": the MPI function an op names. */
static void mpi_function(int op, char *buf, size_t len)
{
    const char *name = mop_coll_op_name(op);
    snprintf(buf, len, "MPI_%c%s", name[0] - 'a' + 'A', name + 1);
}

static void write_results(mo_json *w, const void *ctx)
{
    const cl_state *st = ctx;
    mo_json_kv_int64(w, "comm_size", st->size);
    mo_json_kv_int64(w, "nodes", st->nodes);
    mo_json_kv_string(w, "statistic", "median over iterations of the slowest rank's time");
    mo_json_kv_string(w, "neighbour_topology", "ring");
    mo_json_key(w, "series");
    mo_json_begin_array(w);
    for (int i = 0; i < st->nseries; i++) {
        const cl_series *s = &st->series[i];
        char fn[64];
        mpi_function(s->op, fn, sizeof fn);
        mo_json_begin_object(w);
        mo_json_kv_string(w, "op", mop_coll_op_name(s->op));
        mo_json_kv_string(w, "mpi_function", fn);
        mo_json_kv_bool(w, "nonblocking", s->op >= MOP_COLL_NB_OFFSET);
        mo_json_kv_bool(w, "complete", s->complete);
        mo_json_key(w, "sizes");
        mo_json_begin_array(w);
        for (int j = 0; j < s->npoints; j++) {
            const cl_point *p = &s->points[j];
            if (p->iterations == 0) /* not reached yet (or cut by the time limit) */
                continue;
            mo_json_begin_object(w);
            mo_json_kv_uint64(w, "bytes", p->bytes);
            mo_json_kv_int64(w, "iterations", p->iterations);
            mo_json_kv_int64(w, "visits", p->visits);
            mo_json_kv_double(w, "time_s", p->time_s);
            mo_json_kv_double(w, "mean_s", p->mean_s);
            mo_json_kv_double(w, "min_s", p->min_s);
            mo_json_kv_double(w, "max_s", p->max_s);
            mo_json_kv_double(w, "rank_mean_s", p->rank_mean_s);
            mo_json_end_object(w);
        }
        mo_json_end_array(w);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    mo_json_fingerprints(w, &st->fp);
}

/* ---- the kernel -------------------------------------------------------- */

/* Rank 0 after its probe: the fingerprints the table's keys name. */
static void cl_calibrated(void *arg)
{
    mo_bench *b = arg;
    mo_fingerprints_collect(&((cl_state *)b->state)->fp, b->prov.mpi_library_version);
}

/* Every rank: the communicators, the buffers (a block per rank or neighbour
 * of the largest size, on both sides; counts must stay int) and the nodes. */
static void cl_setup(mo_bench *b, void *ctx)
{
    cl_state *st = ctx;
    const mo_options *o = &b->opts;
    st->opts = o;
    st->start_ns = b->start_ns;
    st->rank = b->rank;
    st->size = b->nranks;
    MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
    int nb[NEIGHBOURS] = {(b->rank - 1 + b->nranks) % b->nranks, (b->rank + 1) % b->nranks};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, NEIGHBOURS, nb, MPI_UNWEIGHTED, NEIGHBOURS, nb,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &st->ring);
    int is_leader = mo_node_leader() == b->rank;
    MPI_Allreduce(&is_leader, &st->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    const uint64_t largest = o->sizes.v[o->sizes.n - 1];
    const int slots = b->nranks > NEIGHBOURS ? b->nranks : NEIGHBOURS;
    const uint64_t buf_bytes = (largest > 0 ? largest : 1) * (uint64_t)slots;
    const bool fits = buf_bytes <= (uint64_t)INT_MAX;
    if (fits) {
        st->sbuf = mo_page_alloc((size_t)buf_bytes);
        st->rbuf = mo_page_alloc((size_t)buf_bytes);
        if (st->sbuf && st->rbuf) { /* every page now; zeros sum to zeros */
            memset(st->sbuf, 0, (size_t)buf_bytes);
            memset(st->rbuf, 0, (size_t)buf_bytes);
        }
    }
    st->counts = malloc((size_t)slots * sizeof *st->counts);
    st->displs = malloc((size_t)slots * sizeof *st->displs);
    st->adispls = malloc((size_t)slots * sizeof *st->adispls);
    st->types = malloc((size_t)slots * sizeof *st->types);
    st->iter_s = malloc(MAX_POINT_ITERS * sizeof *st->iter_s);
    st->iter_max_s = malloc(MAX_POINT_ITERS * sizeof *st->iter_max_s);
    st->series = calloc(MOP_XFER_NCOLL_OPS, sizeof *st->series);
    b->have = fits && st->sbuf && st->rbuf && st->counts && st->displs && st->adispls && st->types &&
              st->iter_s && st->iter_max_s && st->series;
    /* fits is the same on every rank: it names the failed vote's reason. */
    if (!fits)
        snprintf(b->no_alloc, sizeof b->no_alloc, "%d ranks x the largest size (%llu bytes) exceed the "
                 "largest MPI count; give smaller --sizes", slots, (unsigned long long)largest);
    else
        snprintf(b->no_alloc, sizeof b->no_alloc, "cannot allocate 2 x %llu bytes of message buffers on "
                 "every rank", (unsigned long long)buf_bytes);
    b->ready.no_alloc = b->no_alloc;
    /* The work loop is not used by the method; the result format records
     * the CPU speed. */
    b->ready.calib_ms = 1.0;
    b->ready.no_work_loop = true;
    b->ready.calibrated = cl_calibrated;
    b->ready.calibrated_arg = b;
}

/* Every rank, after the vote: the series, each blocking op followed by its
 * non-blocking twin so that the two are measured close together in time,
 * and their points. */
static int cl_start(mo_bench *b, void *ctx)
{
    cl_state *st = ctx;
    int ok = 1;
    for (int k = 0; k < MOP_XFER_NCOLL_OPS && ok; k++) {
        int op = k % 2 == 0 ? k / 2 : MOP_COLL_NB_OFFSET + k / 2;
        if (!st->params->selected[op])
            continue;
        cl_series *s = &st->series[st->nseries++];
        s->op = op;
        s->points = calloc(b->opts.sizes.n, sizeof *s->points);
        ok = s->points != NULL;
        for (size_t i = 0; ok && i < b->opts.sizes.n; i++) {
            if (!point_applies(op, b->opts.sizes.v[i]))
                continue;
            cl_point *pt = &s->points[s->npoints++];
            pt->bytes = b->opts.sizes.v[i];
            if (b->rank == 0) {
                pt->samples = malloc(MAX_POINT_ITERS * sizeof *pt->samples);
                ok = pt->samples != NULL;
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok && b->rank == 0)
        fprintf(stderr, "mo_" BENCH ": error: out of memory\n");
    return ok ? 0 : -1;
}

/* Every rank: --passes sweeps over (op, size), the running document after
 * each. */
static int cl_measure(mo_bench *b, void *ctx)
{
    cl_state *st = ctx;
    const mo_options *o = &b->opts;
    const long passes = st->params->passes;
    int points = 0, done = 0;
    for (int i = 0; i < st->nseries; i++)
        points += st->series[i].npoints;
    const int total = points * (int)passes;
    if (o->verbose && b->rank == 0)
        printf("%d ranks, %d nodes\n%-8s%-24s%-12s%-12s%-14s%-14s\n", st->size, st->nodes, "pass", "op",
               "bytes", "iterations", "time_us", "rank_mean_us");
    bool time_up = false;
    for (long pass = 0; pass < passes && !time_up; pass++) {
        for (int k = 0; k < st->nseries && !time_up; k++) {
            cl_series *s = &st->series[k];
            for (int i = 0; i < s->npoints; i++) {
                int go = !mo_time_up(o, st->start_ns);
                MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
                if (!go) {
                    time_up = true;
                    break;
                }
                cl_point *p = &s->points[i];
                measure_visit(st, s->op, p, pass, passes);
                if (b->rank == 0) {
                    mo_verbose(o, "%-8ld%-24s%-12llu%-12ld%-14.3f%-14.3f\n", pass + 1, mop_coll_op_name(s->op),
                               (unsigned long long)p->bytes, p->iterations, p->time_s * 1e6,
                               p->rank_mean_s * 1e6);
                    mo_progress(o->progress, ++done, total, "%s/%llu pass %ld/%ld", mop_coll_op_name(s->op),
                                (unsigned long long)p->bytes, pass + 1, passes);
                }
            }
        }
        if (b->rank == 0)
            mo_bench_running(b);
    }
    for (int k = 0; k < st->nseries; k++) /* every point had every pass */
        st->series[k].complete = !time_up;
    int status = 0;
    if (b->rank == 0) {
        if (time_up)
            mo_result_warn(&b->doc, "time limit of %g s reached: made %d of %d (pass, op, size) visits",
                           o->time_limit_s, done, total);
        status = mo_bench_conclude(b, false, NULL, NULL, false);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

static void cl_teardown(mo_bench *b, void *ctx)
{
    cl_state *st = ctx;
    (void)b;
    for (int i = 0; i < st->nseries; i++) {
        for (int j = 0; j < st->series[i].npoints; j++)
            free(st->series[i].points[j].samples);
        free(st->series[i].points);
    }
    free(st->series);
    free(st->sbuf);
    free(st->rbuf);
    free(st->counts);
    free(st->displs);
    free(st->adispls);
    free(st->types);
    free(st->iter_s);
    free(st->iter_max_s);
    if (st->ring != MPI_COMM_NULL)
        MPI_Comm_free(&st->ring);
    if (st->comm != MPI_COMM_NULL)
        MPI_Comm_free(&st->comm);
    free(st->params->ops_spec);
}

int main(int argc, char **argv)
{
    static cl_params params;
    static cl_state st = {.params = &params, .comm = MPI_COMM_NULL, .ring = MPI_COMM_NULL};
    static const mo_bench_options own = {.finalize = cl_finalize, .usage = cl_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &own, 1, true, NULL, QUICK_SIZES}, .results = write_results,
        .state = &st, .setup = cl_setup, .start = cl_start, .measure = cl_measure, .verbose_done = true,
        .teardown = cl_teardown, MO_KERNEL_FIELDS(cl_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
