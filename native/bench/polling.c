/* polling.c - mo_polling: COMB's polling method (Lawry et al., CLUSTER 2002), the
 * companion of post-work-wait. Rank 0 runs a loop of calibrated work split
 * into chunks of k units (the poll interval); after every chunk it calls
 * MPI_Test on each of its --window outstanding receives and reposts the ones
 * that completed. Rank 1 keeps --window sends in flight the whole time
 * (MPI_Test on each, reposting), so a message is always there for rank 0.
 *
 * Availability = time of the same chunked work loop with no messaging (the
 * dry run, interleaved with the messaging samples) / time of the loop with
 * messaging. Bandwidth = bytes received during the loop / loop time. Swept
 * over the poll interval (a geometric sequence of work per chunk, in us of
 * calibrated work) and the message size.
 *
 * The end of a sample is not timed: rank 0 says stop and how many receives
 * it posted through node-shared memory (shmsync.h), rank 1 answers with how
 * many sends it posted, and both post the difference so that every request
 * completes without MPI_Cancel. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"
#include "shmsync.h"

#define BENCH "polling"
#define DEFAULT_SIZES "1k,8k,64k,512k,4M"
#define QUICK_SIZES "1k,64k,512k,4M"
#define TAG_DATA 400
#define DEFAULT_INTERVALS "1,3,10,30,100,300,1000,3000"
#define QUICK_INTERVALS "1,10,100,1000"
#define DEFAULT_SAMPLES 9
#define QUICK_SAMPLES 5
#define DEFAULT_WORK_MS 20.0
#define QUICK_WORK_MS 8.0
#define MIN_POLLS 20
/* At most this many polls per sample: at 1 us intervals a 4 MiB message is
 * copied inside nearly every MPI_Test, and 20 000 polls of 0.5 ms each would
 * make one sample last seconds. */
#define MAX_POLLS 1000
#define MAX_INTERVALS 32
#define MAX_WINDOW 64

/* Shared-memory slots: rank 0 and rank 1. */
enum { SLOT_GO = 0, SLOT_STOP = 1, SLOT_N0 = 2 };
enum { SLOT_DONE = 0, SLOT_N1 = 1 };

typedef struct pl_params {
    long samples, window;
    double work_ms;
    double intervals[MAX_INTERVALS]; /* us */
    int nintervals;
    bool intervals_set;
} pl_params;

static int parse_intervals(pl_params *p, const char *arg, char *err, size_t errlen)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    p->nintervals = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (p->nintervals == MAX_INTERVALS) {
            snprintf(err, errlen, "--intervals: at most %d values", MAX_INTERVALS);
            return -1;
        }
        double v;
        if (mo_options_parse_double("intervals", tok, 0.01, 1e6, &v, err, errlen))
            return -1;
        if (p->nintervals > 0 && v <= p->intervals[p->nintervals - 1]) {
            snprintf(err, errlen, "--intervals: values must increase (%g after %g)", v,
                     p->intervals[p->nintervals - 1]);
            return -1;
        }
        p->intervals[p->nintervals++] = v;
    }
    if (p->nintervals == 0) {
        snprintf(err, errlen, "--intervals: give at least one value");
        return -1;
    }
    return 0;
}

static int intervals_field(void *ctx, const char *arg, char *err, size_t errlen)
{
    pl_params *p = ctx;
    p->intervals_set = true;
    return parse_intervals(p, arg, err, errlen);
}

static void intervals_json(mo_json *w, const void *ctx)
{
    const pl_params *p = ctx;
    mo_json_kv_doubles(w, "intervals_us", p->intervals, (size_t)p->nintervals);
}

/* The intervals' --quick default (the fields' are applied before). */
static int pl_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    pl_params *p = ctx;
    if (!p->intervals_set && parse_intervals(p, quick ? QUICK_INTERVALS : DEFAULT_INTERVALS, err, errlen))
        return -1;
    return 0;
}

static const mo_field pl_fields[] = {
    MO_FIELD_LONG_Q("samples", pl_params, samples, 1, 10000, DEFAULT_SAMPLES, QUICK_SAMPLES),
    MO_FIELD_LONG_OF("window", pl_params, window, 1, MAX_WINDOW),
    MO_FIELD_DOUBLE_Q("work-ms", pl_params, work_ms, 0.1, 1e5, DEFAULT_WORK_MS, QUICK_WORK_MS),
    MO_FIELD_CUSTOM_OF("intervals", intervals_field, intervals_json),
};

static void pl_usage(FILE *f)
{
    fprintf(f,
            "  --intervals LIST     poll intervals in us of calibrated work, increasing\n"
            "                       (default %s; --quick %s)\n"
            "  --work-ms T          work per sample, %d to %d poll intervals (default %g; --quick %g)\n"
            "  --window W           receives (rank 0) and sends (rank 1) in flight (default 2)\n"
            "  --samples K          samples per size and interval (default %d; --quick %d)\n"
            "  (--quick without --sizes: sizes %s)\n",
            DEFAULT_INTERVALS, QUICK_INTERVALS, MIN_POLLS, MAX_POLLS, DEFAULT_WORK_MS, QUICK_WORK_MS,
            DEFAULT_SAMPLES, QUICK_SAMPLES, QUICK_SIZES);
}

/* ---- state ------------------------------------------------------------- */

typedef struct pl_sample {
    double work_ns;  /* the chunked loop with messaging */
    double dry_ns;   /* the same loop without */
    long polls;      /* chunks = rounds of MPI_Test */
    long messages;   /* receives completed inside the loop */
} pl_sample;

typedef struct pl_point {
    uint64_t size;
    double interval_us;
    uint64_t chunk_units;
    long chunks;
    size_t n;
    pl_sample *s;
} pl_point;

typedef struct pl_state {
    const pl_params *params;
    const mo_options *opts;
    const mo_work_calib *work;
    MPI_Comm comm, ctl;
    mo_shm shm;
    int rank;
    unsigned char *buf; /* window slots of the largest size */
    MPI_Request reqs[MAX_WINDOW];
    mo_points points; /* rank 0's pl_point */
    int64_t seq;
} pl_state;

typedef struct pl_cmd {
    int64_t op, size, chunk_units, chunks;
} pl_cmd;
enum { CMD_SAMPLE = MO_CMD_QUIT + 1, CMD_DRY };

/* ---- the measurements (both ranks) ---------------------------------------- */

static unsigned char *slot_buf(const pl_state *st, int i, uint64_t size)
{
    return st->buf + (size_t)i * (size_t)size;
}

/* Rank 0's loop; returns its time in ns, counts polls and completed messages. */
static double receiver(pl_state *st, const pl_cmd *c, long *polls, long *messages)
{
    const int64_t seq = ++st->seq;
    const int w = (int)st->params->window, n = (int)c->size;
    for (int i = 0; i < w; i++)
        MPI_Irecv(slot_buf(st, i, (uint64_t)c->size), n, MPI_BYTE, 1, TAG_DATA, st->comm, &st->reqs[i]);
    long posted = w, done = 0;
    mo_shm_set(&st->shm, 0, SLOT_GO, seq);
    const uint64_t t0 = mo_timer_now_ns();
    for (long k = 0; k < c->chunks; k++) {
        mo_work((uint64_t)c->chunk_units);
        for (int i = 0; i < w; i++) {
            int flag = 0;
            MPI_Test(&st->reqs[i], &flag, MPI_STATUS_IGNORE);
            if (flag) {
                done++;
                MPI_Irecv(slot_buf(st, i, (uint64_t)c->size), n, MPI_BYTE, 1, TAG_DATA, st->comm,
                          &st->reqs[i]);
                posted++;
            }
        }
    }
    const uint64_t t1 = mo_timer_now_ns();
    /* untimed end: agree on a total, post the difference, complete everything */
    mo_shm_set(&st->shm, 0, SLOT_N0, posted);
    mo_shm_set(&st->shm, 0, SLOT_STOP, seq);
    mo_shm_wait(&st->shm, 1, SLOT_DONE, seq);
    const long n1 = (long)mo_shm_get(&st->shm, 1, SLOT_N1);
    MPI_Waitall(w, st->reqs, MPI_STATUSES_IGNORE);
    for (long extra = n1 - posted; extra > 0; extra--)
        MPI_Recv(st->buf, n, MPI_BYTE, 1, TAG_DATA, st->comm, MPI_STATUS_IGNORE);
    *polls = c->chunks;
    *messages = done;
    return (double)(t1 - t0);
}

/* Rank 1: keeps the window of sends in flight until rank 0 says stop. */
static void sender(pl_state *st, const pl_cmd *c)
{
    const int64_t seq = ++st->seq;
    const int w = (int)st->params->window, n = (int)c->size;
    mo_shm_wait(&st->shm, 0, SLOT_GO, seq);
    for (int i = 0; i < w; i++)
        MPI_Isend(slot_buf(st, i, (uint64_t)c->size), n, MPI_BYTE, 0, TAG_DATA, st->comm, &st->reqs[i]);
    long posted = w;
    while (mo_shm_get(&st->shm, 0, SLOT_STOP) < seq) {
        for (int i = 0; i < w; i++) {
            int flag = 0;
            MPI_Test(&st->reqs[i], &flag, MPI_STATUS_IGNORE);
            if (flag) {
                MPI_Isend(slot_buf(st, i, (uint64_t)c->size), n, MPI_BYTE, 0, TAG_DATA, st->comm,
                          &st->reqs[i]);
                posted++;
            }
        }
    }
    const long n0 = (long)mo_shm_get(&st->shm, 0, SLOT_N0);
    mo_shm_set(&st->shm, 1, SLOT_N1, posted);
    mo_shm_set(&st->shm, 1, SLOT_DONE, seq);
    MPI_Waitall(w, st->reqs, MPI_STATUSES_IGNORE);
    for (long extra = n0 - posted; extra > 0; extra--)
        MPI_Send(st->buf, n, MPI_BYTE, 0, TAG_DATA, st->comm);
}

static double dry(const pl_cmd *c)
{
    const uint64_t t0 = mo_timer_now_ns();
    for (long k = 0; k < c->chunks; k++)
        mo_work((uint64_t)c->chunk_units);
    return (double)(mo_timer_now_ns() - t0);
}

static double command(pl_state *st, pl_cmd c, long *polls, long *messages)
{
    mo_cmd_send(st->ctl, &c, sizeof c);
    if (c.op == CMD_DRY)
        return dry(&c);
    return receiver(st, &c, polls, messages);
}

/* The other ranks: rank 1 sends for each of rank 0's samples. */
static void serve_cmd(void *ctx, const void *cmd)
{
    pl_state *st = ctx;
    const pl_cmd *c = cmd;
    if (c->op == CMD_SAMPLE && st->rank == 1)
        sender(st, c);
}

static void measure_point(pl_state *st, pl_point *pt)
{
    const double upus = st->work->units_per_us;
    pt->chunk_units = (uint64_t)ceil(pt->interval_us * upus);
    if (pt->chunk_units < 1)
        pt->chunk_units = 1;
    const double chunk_us = (double)pt->chunk_units / upus;
    long chunks = (long)ceil(st->params->work_ms * 1e3 / chunk_us);
    pt->chunks = chunks < MIN_POLLS ? MIN_POLLS : chunks > MAX_POLLS ? MAX_POLLS : chunks;
    const pl_cmd sample = {CMD_SAMPLE, (int64_t)pt->size, (int64_t)pt->chunk_units, pt->chunks};
    const pl_cmd dry_cmd = {CMD_DRY, (int64_t)pt->size, (int64_t)pt->chunk_units, pt->chunks};
    long polls = 0, msgs = 0;
    command(st, sample, &polls, &msgs); /* untimed */
    for (long k = 0; k < st->params->samples; k++) {
        pl_sample *s = &pt->s[pt->n++];
        if (k % 2 == 0) {
            s->dry_ns = command(st, dry_cmd, NULL, NULL);
            s->work_ns = command(st, sample, &s->polls, &s->messages);
        } else {
            s->work_ns = command(st, sample, &s->polls, &s->messages);
            s->dry_ns = command(st, dry_cmd, NULL, NULL);
        }
    }
}

/* ---- output ------------------------------------------------------------- */

/* One of "points". */
static void write_point(mo_json *w, const void *item, const void *ctx)
{
    const pl_point *pt = item;
    (void)ctx;
    mo_json_kv_uint64(w, "size", pt->size);
    mo_json_kv_double(w, "interval_us", pt->interval_us);
    mo_json_kv_uint64(w, "chunk_units", pt->chunk_units);
    mo_json_kv_int64(w, "chunks", pt->chunks);
    mo_json_key(w, "samples");
    mo_json_begin_array(w);
    for (size_t k = 0; k < pt->n; k++) {
        mo_json_begin_object(w);
        mo_json_kv_double(w, "work_ns", pt->s[k].work_ns);
        mo_json_kv_double(w, "dry_ns", pt->s[k].dry_ns);
        mo_json_kv_int64(w, "polls", pt->s[k].polls);
        mo_json_kv_int64(w, "messages", pt->s[k].messages);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

static void write_results(mo_json *w, const void *ctx)
{
    const pl_state *st = ctx;
    mo_json_kv_string(w, "direction", "rank 1 sends, rank 0 polls its receives");
    mo_json_kv_int64(w, "window", st->params->window);
    mo_json_kv_int64(w, "samples_per_point", st->params->samples);
    mo_json_kv_double(w, "work_ns", st->params->work_ms * 1e6);
    mo_json_kv_doubles(w, "intervals_us", st->params->intervals, (size_t)st->params->nintervals);
    mo_points_json(w, &st->points, write_point, NULL);
}

/* ---- main --------------------------------------------------------------- */

static int plan(pl_state *st)
{
    const mo_sizes *sz = &st->opts->sizes;
    const int ni = st->params->nintervals;
    if (mo_points_plan(&st->points, (int)sz->n * ni, sizeof(pl_point)) != 0)
        return -1;
    for (size_t i = 0; i < sz->n; i++)
        for (int j = 0; j < ni; j++) {
            pl_point *pt = mo_points_at(&st->points, (int)i * ni + j);
            pt->size = sz->v[i];
            pt->interval_us = st->params->intervals[j];
            if (!(pt->s = calloc((size_t)st->params->samples, sizeof *pt->s)))
                return -1;
        }
    return 0;
}

static void free_point(void *item)
{
    free(((pl_point *)item)->s);
}

static void pl_teardown(mo_bench *b, void *ctx)
{
    pl_state *st = ctx;
    (void)b;
    MPI_Comm_free(&st->comm);
    mo_points_free(&st->points, free_point);
    free(st->buf);
}

/* Every rank: the communicators, flags and buffer; rank 0 the plan. */
static void pl_setup(mo_bench *b, void *ctx)
{
    pl_state *st = ctx;
    st->opts = &b->opts;
    st->rank = b->rank;
    st->work = &b->work;
    MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
    st->ctl = b->ctl;
    const uint64_t largest = b->opts.sizes.v[b->opts.sizes.n - 1];
    const size_t bytes = (size_t)st->params->window * (size_t)(largest > 0 ? largest : 1);
    st->buf = mo_page_alloc(bytes);
    b->have = st->buf != NULL;
    if (b->rank == 0)
        b->have = b->have && plan(st) == 0;
    if (st->buf)
        memset(st->buf, b->rank + 1, bytes);
    b->ready.calib_samples = 11;
    b->ready.no_alloc = "cannot allocate the buffers";
}

static int pl_one_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    pl_state *st = ctx;
    (void)i;
    pl_point *pt = mo_points_next(&st->points);
    measure_point(st, pt);
    if (b->opts.verbose) {
        double work[64], dryv[64], msg[64];
        size_t n = pt->n < 64 ? pt->n : 64;
        for (size_t k = 0; k < n; k++) {
            work[k] = pt->s[k].work_ns;
            dryv[k] = pt->s[k].dry_ns;
            msg[k] = (double)pt->s[k].messages;
        }
        double wm = mo_stats_median(work, n), dm = mo_stats_median(dryv, n);
        printf("size=%-9llu interval %8.1f us  availability %.3f  %.3f GB/s\n", (unsigned long long)pt->size,
               pt->interval_us, dm / wm, mo_stats_median(msg, n) * (double)pt->size / wm);
        fflush(stdout);
    }
    snprintf(label, labellen, "%llu B, %g us", (unsigned long long)pt->size, pt->interval_us);
    return MO_POINT_OK;
}

int main(int argc, char **argv)
{
    static pl_params params = {.window = 2};
    static pl_state st = {.params = &params};
    static const mo_bench_options ext = {.finalize = pl_finalize, .usage = pl_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, NULL, QUICK_SIZES},
        .results = write_results, .state = &st, .shm = &st.shm, .setup = pl_setup, .teardown = pl_teardown,
        .mode = MO_BENCH_LEAD, .unit = "points", .planned = &st.points.ntotal, .point = pl_one_point,
        .run_cmd = serve_cmd, .recheck_work = true, MO_KERNEL_FIELDS(pl_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
