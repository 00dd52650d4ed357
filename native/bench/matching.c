/* matching.c - mo_matching: what a long matching queue costs one receive
 * (Balaji et al., experiments "tag and source matching" and "unexpected-message
 * queue").
 *
 * Rank 0 receives; ranks 1..N are its peers; rank 1 also sends the one
 * message that is timed (tag T1). Two queues:
 *
 *   posted      rank 0 posts M MPI_Irecv per peer with tag T0 (source = the
 *               peer), then one MPI_Irecv from rank 1 with tag T1, and raises
 *               a shared-memory flag; rank 1 sees it, sends T1 (MPI_Send, a
 *               small eager message) and raises its own flag once the send
 *               returned. Rank 0 waits for that flag without any MPI call,
 *               then times MPI_Wait on the T1 request: taking the message in
 *               and matching it past the M*N queued receives. Afterwards
 *               (untimed) the T0 receives are cancelled and completed.
 *   unexpected  peers send M messages each with tag T0 before rank 0 posts
 *               anything; rank 1 sends T1 last, after every peer's flag says
 *               its sends returned. Rank 0 drives progress with MPI_Test of
 *               a receive on a separate communicator that nothing matches
 *               until rank 1's flag is up (then cancels it), then
 *               MPI_Iprobe for T1 until it is found (every T0 message is in
 *               the unexpected queue before it), then times MPI_Recv of T1,
 *               which searches past the M*N unexpected T0 messages.
 *               Afterwards (untimed) the T0 messages are received.
 *
 * The arrival flags live in node shared memory (shmsync.h), so no MPI message
 * touches the matching queues between the posting and the timed call.
 * Commands travel by MPI_Bcast on a duplicate of MPI_COMM_WORLD at the start
 * of each sample, while the measured queues are empty.
 *
 * Sweeps: M = 0, 1, 2, 4, ..., --max-m with N = 1 (M = 0 is the baseline:
 * the same receive with an empty queue), and N = 1..--max-n with M = 1. A
 * point is --samples timed receives after one untimed one; the time is their
 * median. With more ranks than cores the run is oversubscribed; the result
 * says so. */
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

#define BENCH "matching"
#define DEFAULT_SIZES "0"
#define MAX_MSG_BYTES 1024
#define TAG_T0 100
#define TAG_T1 101
#define TAG_NEVER 102
#define DEFAULT_MAX_M 65536
#define QUICK_MAX_M 4096
#define LIMIT_MAX_M (1L << 20)
#define DEFAULT_SAMPLES 25
#define QUICK_SAMPLES 11

/* Shared-memory flag slots. */
enum { SLOT_GO = 0, SLOT_SENT = 1, SLOT_DONE = 2 };
enum { Q_POSTED = 1, Q_UNEXPECTED = 2 };

typedef struct mt_params {
    int queues; /* bit set of Q_* */
    long max_m, max_n, samples;
} mt_params;

static const char *const QUEUE_NAMES[] = {"posted", "unexpected", "both"};
static const int QUEUE_SETS[] = {Q_POSTED, Q_UNEXPECTED, Q_POSTED | Q_UNEXPECTED};

static const mo_field mt_fields[] = {
    MO_FIELD_CHOICE_OF("queue", mt_params, queues, QUEUE_NAMES, QUEUE_SETS, 3,
                       "--queue must be posted, unexpected or both (got '%s')"),
    MO_FIELD_LONG_Q("max-m", mt_params, max_m, 1, LIMIT_MAX_M, DEFAULT_MAX_M, QUICK_MAX_M),
    MO_FIELD_LONG_OF("max-n", mt_params, max_n, 1, 1L << 20),
    MO_FIELD_LONG_Q("samples", mt_params, samples, 1, 100000, DEFAULT_SAMPLES, QUICK_SAMPLES),
};

static void mt_usage(FILE *f)
{
    fprintf(f,
            "  --queue Q            posted | unexpected | both (default both)\n"
            "  --max-m M            largest queued requests per peer in the M sweep (default %d;\n"
            "                       --quick %d)\n"
            "  --max-n N            most peers in the N sweep (default: ranks - 1)\n"
            "  --samples K          timed receives per point (default %d; --quick %d)\n"
            "  (--sizes: the message size in bytes, first value used, at most %d)\n",
            DEFAULT_MAX_M, QUICK_MAX_M, DEFAULT_SAMPLES, QUICK_SAMPLES, MAX_MSG_BYTES);
}

/* ---- state ------------------------------------------------------------- */

typedef struct mt_point {
    int queue; /* Q_* */
    char sweep; /* 'M' or 'N' */
    long m, n;
    size_t ns;
    double *samples; /* ns */
    mo_stats st;
} mt_point;

typedef struct mt_state {
    mt_params *params; /* non-const: mt_configure() bounds --max-n */
    MPI_Comm comm, ctl; /* measured; commands and progress polls */
    mo_shm shm;
    int rank, nranks, cores;
    int bytes;
    unsigned char *buf, *sink; /* message; receive slots of the T0 messages */
    MPI_Request *reqs;
    mo_points points; /* rank 0's mt_point */
    int64_t seq; /* samples started, the value the flags carry */
} mt_state;

typedef struct mt_cmd {
    int64_t op, queue, m, n;
} mt_cmd;
enum { CMD_SAMPLE = MO_CMD_QUIT + 1 };

static const char *queue_name(int q)
{
    return q == Q_POSTED ? "posted" : "unexpected";
}

/* One sample on every rank; rank 0 returns the timed receive in ns. */
static double sample(mt_state *st, const mt_cmd *c)
{
    const int64_t seq = ++st->seq;
    const int m = (int)c->m, n = (int)c->n, bytes = st->bytes;
    const int me = st->rank;
    double t = NAN;
    if (c->queue == Q_POSTED) {
        if (me == 0) {
            size_t k = 0;
            for (int p = 1; p <= n; p++)
                for (int j = 0; j < m; j++, k++)
                    MPI_Irecv(st->sink + k * (size_t)bytes, bytes, MPI_BYTE, p, TAG_T0, st->comm,
                              &st->reqs[k]);
            MPI_Request r1;
            MPI_Irecv(st->buf, bytes, MPI_BYTE, 1, TAG_T1, st->comm, &r1);
            mo_shm_set(&st->shm, 0, SLOT_GO, seq);
            mo_shm_wait(&st->shm, 1, SLOT_SENT, seq);
            uint64_t t0 = mo_timer_now_ns();
            MPI_Wait(&r1, MPI_STATUS_IGNORE);
            uint64_t t1 = mo_timer_now_ns();
            t = (double)(t1 - t0);
            for (size_t i = 0; i < k; i++)
                MPI_Cancel(&st->reqs[i]);
            MPI_Waitall((int)k, st->reqs, MPI_STATUSES_IGNORE);
        } else if (me == 1) {
            mo_shm_wait(&st->shm, 0, SLOT_GO, seq);
            MPI_Send(st->buf, bytes, MPI_BYTE, 0, TAG_T1, st->comm);
            mo_shm_set(&st->shm, 1, SLOT_SENT, seq);
        }
    } else {
        if (me == 0) {
            /* Progress while the messages come in: MPI_Test on a receive on
             * the other communicator that nothing matches. (MPI_Iprobe there
             * made the sweep quadratic in M under MPICH: each probe searched
             * the growing unexpected list of the measured communicator too.)
             * It is cancelled before the timed receive. */
            int flag = 0;
            MPI_Request poll;
            MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG_NEVER, st->ctl, &poll);
            while (mo_shm_get(&st->shm, 1, SLOT_SENT) < seq)
                MPI_Test(&poll, &flag, MPI_STATUS_IGNORE);
            MPI_Cancel(&poll);
            MPI_Wait(&poll, MPI_STATUS_IGNORE);
            for (flag = 0; !flag;)
                MPI_Iprobe(1, TAG_T1, st->comm, &flag, MPI_STATUS_IGNORE);
            uint64_t t0 = mo_timer_now_ns();
            MPI_Recv(st->buf, bytes, MPI_BYTE, 1, TAG_T1, st->comm, MPI_STATUS_IGNORE);
            uint64_t t1 = mo_timer_now_ns();
            t = (double)(t1 - t0);
            for (int p = 1; p <= n; p++)
                for (int j = 0; j < m; j++)
                    MPI_Recv(st->sink, bytes, MPI_BYTE, p, TAG_T0, st->comm, MPI_STATUS_IGNORE);
        } else if (me <= n) {
            for (int j = 0; j < m; j++)
                MPI_Send(st->buf, bytes, MPI_BYTE, 0, TAG_T0, st->comm);
            mo_shm_set(&st->shm, me, SLOT_DONE, seq);
            if (me == 1) {
                for (int p = 2; p <= n; p++)
                    mo_shm_wait(&st->shm, p, SLOT_DONE, seq);
                MPI_Send(st->buf, bytes, MPI_BYTE, 0, TAG_T1, st->comm);
                mo_shm_set(&st->shm, 1, SLOT_SENT, seq);
            }
        }
    }
    return t;
}

/* Rank 0: broadcasts the command, then runs it everywhere. */
static double command(mt_state *st, mt_cmd c)
{
    mo_cmd_send(st->ctl, &c, sizeof c);
    return sample(st, &c);
}

/* The other ranks: each of rank 0's samples. */
static void serve_cmd(void *ctx, const void *cmd)
{
    sample(ctx, cmd);
}

static void measure_point(mt_state *st, mt_point *pt)
{
    mt_cmd c = {CMD_SAMPLE, pt->queue, pt->m, pt->n};
    command(st, c); /* untimed: first contact, allocations */
    for (long k = 0; k < st->params->samples; k++)
        pt->samples[pt->ns++] = command(st, c);
    mo_stats_summarize_or_nan(pt->samples, pt->ns, &pt->st);
}

/* ---- output ------------------------------------------------------------- */

/* One of "points". */
static void write_point(mo_json *w, const void *item, const void *ctx)
{
    const mt_point *pt = item;
    (void)ctx;
    mo_json_kv_string(w, "queue", queue_name(pt->queue));
    mo_json_kv_string(w, "sweep", pt->sweep == 'M' ? "M" : "N");
    mo_json_kv_int64(w, "m", pt->m);
    mo_json_kv_int64(w, "n", pt->n);
    mo_json_kv_int64(w, "queued", pt->m * pt->n);
    mo_json_kv_double(w, "time_ns", pt->st.median);
    mo_json_stats(w, "time", &pt->st);
    mo_json_kv_doubles(w, "samples_ns", pt->samples, pt->ns);
}

static void write_results(mo_json *w, const void *ctx)
{
    const mt_state *st = ctx;
    mo_json_kv_int64(w, "message_bytes", st->bytes);
    mo_json_kv_int64(w, "ranks", st->nranks);
    mo_json_kv_int64(w, "cores", st->cores);
    mo_json_kv_bool(w, "oversubscribed", st->nranks > st->cores);
    mo_json_kv_string(w, "arrival_sync", "shared-memory flag");
    mo_json_kv_int64(w, "samples_per_point", st->params->samples);
    mo_json_key(w, "queues");
    mo_json_begin_array(w);
    if (st->params->queues & Q_POSTED)
        mo_json_string(w, "posted");
    if (st->params->queues & Q_UNEXPECTED)
        mo_json_string(w, "unexpected");
    mo_json_end_array(w);
    mo_points_json(w, &st->points, write_point, NULL);
}

/* ---- main --------------------------------------------------------------- */

static int mt_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    (void)ctx;
    if (o->sizes.v[0] > MAX_MSG_BYTES) {
        snprintf(err, errlen, "message size %llu bytes: at most %d (the messages must be eager)",
                 (unsigned long long)o->sizes.v[0], MAX_MSG_BYTES);
        return -1;
    }
    return 0;
}

/* The points in measuring order: per queue, the M sweep with N = 1 (0, 1, 2,
 * 4, ..., max_m), then the N sweep with M = 1 (1..max_n). */
static int plan(mt_state *st)
{
    const mt_params *p = st->params;
    int cap = 2 * (64 + (int)p->max_n), k = 0;
    if (mo_points_plan(&st->points, cap, sizeof(mt_point)) != 0)
        return -1;
    mt_point *points = st->points.v;
    for (int q = Q_POSTED; q <= Q_UNEXPECTED; q <<= 1) {
        if (!(p->queues & q))
            continue;
        long m = 0;
        for (;;) {
            points[k++] = (mt_point){.queue = q, .sweep = 'M', .m = m, .n = 1};
            if (m >= p->max_m)
                break;
            m = m == 0 ? 1 : (2 * m > p->max_m ? p->max_m : 2 * m);
        }
        for (long n = 1; n <= p->max_n; n++)
            points[k++] = (mt_point){.queue = q, .sweep = 'N', .m = 1, .n = n};
    }
    st->points.ntotal = k; /* of the cap's room */
    for (int i = 0; i < k; i++)
        if (!(points[i].samples = malloc((size_t)p->samples * sizeof(double))))
            return -1;
    return 0;
}

static void free_point(void *item)
{
    free(((mt_point *)item)->samples);
}

static void mt_teardown(mo_bench *b, void *ctx)
{
    mt_state *st = ctx;
    (void)b;
    MPI_Comm_free(&st->comm);
    mo_points_free(&st->points, free_point);
    free(st->reqs);
    free(st->sink);
    free(st->buf);
}

/* Every rank: the communicators, flags and its send buffer; rank 0 the
 * receive buffers, the requests and the plan. */
static void mt_setup(mo_bench *b, void *ctx)
{
    mt_state *st = ctx;
    const mt_params *params = st->params;
    st->rank = b->rank;
    st->nranks = b->nranks;
    st->cores = mo_node_cores();
    st->bytes = (int)b->opts.sizes.v[0];
    MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
    st->ctl = b->ctl;
    const size_t maxq = (size_t)(params->max_m > params->max_n ? params->max_m : params->max_n);
    const size_t slot = st->bytes > 0 ? (size_t)st->bytes : 1;
    st->buf = mo_page_alloc(slot);
    b->have = st->buf != NULL;
    if (b->rank == 0) {
        st->sink = mo_page_alloc(maxq * slot);
        st->reqs = malloc(maxq * sizeof *st->reqs);
        b->have = b->have && st->sink && st->reqs && plan(st) == 0;
        if (st->sink)
            memset(st->sink, 0, maxq * slot);
    }
    if (st->buf)
        memset(st->buf, b->rank + 1, slot);
    b->ready.no_alloc = "cannot allocate the receive buffers and requests";
}

static int mt_start(mo_bench *b, void *ctx)
{
    const mt_state *st = ctx;
    if (b->rank == 0 && b->nranks > st->cores)
        mo_result_warn(&b->doc, "oversubscribed: %d ranks on %d cores; the N sweep's times include "
                                "waiting for the CPU",
                       b->nranks, st->cores);
    return 0;
}

static int mt_one_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    mt_state *st = ctx;
    (void)i;
    mt_point *pt = mo_points_next(&st->points);
    measure_point(st, pt);
    mo_verbose(&b->opts, "%-11s %c m=%-7ld n=%-4ld %10.0f ns\n", queue_name(pt->queue), pt->sweep, pt->m, pt->n,
               pt->st.median);
    snprintf(label, labellen, "%s %c=%ld", queue_name(pt->queue), pt->sweep, pt->sweep == 'M' ? pt->m : pt->n);
    return MO_POINT_OK;
}

/* --max-n defaults to (and is held to) the ranks there are to send. */
static void mt_configure(mo_bench *b, void *ctx)
{
    mt_params *params = ((mt_state *)ctx)->params;
    if (params->max_n == 0 || params->max_n > b->nranks - 1)
        params->max_n = b->nranks - 1;
}

int main(int argc, char **argv)
{
    static mt_params params = {.queues = Q_POSTED | Q_UNEXPECTED, .max_n = 0};
    static mt_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = mt_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, mt_check, NULL},
        .results = write_results, .state = &st, .shm = &st.shm, .configure = mt_configure, .setup = mt_setup,
        .start = mt_start, .teardown = mt_teardown,
        .mode = MO_BENCH_LEAD, .unit = "points", .planned = &st.points.ntotal, .point = mt_one_point,
        .run_cmd = serve_cmd, MO_KERNEL_FIELDS(mt_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
