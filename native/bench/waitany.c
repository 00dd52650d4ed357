/* waitany.c - mo_waitany: how MPI_Waitany, MPI_Testany and MPI_Waitsome
 * scale with the number of requests they are given (Balaji et al., experiment
 * "MPI_Waitany / MPI_Testany / MPI_Waitsome scaling").
 *
 * Rank 0 holds N receive requests: request 0 receives from rank 1 (tag TA)
 * and is the only one ever matched; requests 1..N-1 are receives on a
 * duplicate communicator that nothing is sent to (posted once per N,
 * cancelled at its end), so they sit in the array without lengthening the
 * measured communicator's matching queue. A sample: rank 0 reposts request 0
 * and raises a shared-memory flag; rank 1 sends a 0-byte message (by
 * default; eager) and raises its own flag once MPI_Send returned; rank 0 waits for that flag without an
 * MPI call (shmsync.h), then times one call: MPI_Waitany; MPI_Testany called
 * until its flag is set (the calls are counted); or MPI_Waitsome. N = 1, 2,
 * 4, ..., --max-n; per N each call gets one untimed and --samples timed
 * samples, the three calls taking turns in a rotating order. */
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

#define BENCH "waitany"
#define DEFAULT_SIZES "0"
#define MAX_MSG_BYTES 1024
#define TAG_A 200
#define TAG_IDLE 201
#define DEFAULT_MAX_N 8192
#define QUICK_MAX_N 1024
#define DEFAULT_SAMPLES 25
#define QUICK_SAMPLES 11
#define NCALLS 3

enum { SLOT_GO = 0, SLOT_SENT = 1 };
enum { CALL_WAITANY = 0, CALL_TESTANY = 1, CALL_WAITSOME = 2 };
static const char *const CALL_NAMES[NCALLS] = {"MPI_Waitany", "MPI_Testany", "MPI_Waitsome"};

typedef struct wa_params {
    long max_n, samples;
} wa_params;

static const mo_field wa_fields[] = {
    MO_FIELD_LONG_Q("max-n", wa_params, max_n, 1, 1L << 20, DEFAULT_MAX_N, QUICK_MAX_N),
    MO_FIELD_LONG_Q("samples", wa_params, samples, 1, 100000, DEFAULT_SAMPLES, QUICK_SAMPLES),
};

static void wa_usage(FILE *f)
{
    fprintf(f,
            "  --max-n N            most requests (default %d; --quick %d)\n"
            "  --samples K          timed calls per N and call (default %d; --quick %d)\n"
            "  (--sizes: the message size in bytes, first value used, at most %d)\n",
            DEFAULT_MAX_N, QUICK_MAX_N, DEFAULT_SAMPLES, QUICK_SAMPLES, MAX_MSG_BYTES);
}

/* ---- state ------------------------------------------------------------- */

typedef struct wa_point {
    long n;
    size_t ns[NCALLS];
    double *samples[NCALLS]; /* ns */
    double *testany_calls;   /* Testany calls per timed sample */
    mo_stats st[NCALLS];
} wa_point;

typedef struct wa_state {
    const wa_params *params;
    MPI_Comm comm, idle, ctl;
    mo_shm shm;
    int rank, bytes;
    unsigned char *buf, *sink;
    MPI_Request *reqs;
    int *indices;
    mo_points points; /* rank 0's wa_point */
    int64_t seq;
} wa_state;

typedef struct wa_cmd {
    int64_t op, n, call;
} wa_cmd;
enum { CMD_SAMPLE = MO_CMD_QUIT + 1, CMD_SETUP, CMD_TEARDOWN };

/* Rank 0: posts (CMD_SETUP) or cancels (CMD_TEARDOWN) the N - 1 idle receives. */
static void idle_requests(wa_state *st, int n, bool post)
{
    if (post) {
        for (int i = 1; i < n; i++)
            MPI_Irecv(st->sink, st->bytes, MPI_BYTE, 1, TAG_IDLE, st->idle, &st->reqs[i]);
        return;
    }
    for (int i = 1; i < n; i++)
        MPI_Cancel(&st->reqs[i]);
    if (n > 1)
        MPI_Waitall(n - 1, st->reqs + 1, MPI_STATUSES_IGNORE);
}

/* One sample; rank 0 returns the call's time in ns and sets *calls. */
static double sample(wa_state *st, int n, int call, double *calls)
{
    const int64_t seq = ++st->seq;
    double t = NAN;
    if (st->rank == 0) {
        MPI_Irecv(st->buf, st->bytes, MPI_BYTE, 1, TAG_A, st->comm, &st->reqs[0]);
        mo_shm_set(&st->shm, 0, SLOT_GO, seq);
        mo_shm_wait(&st->shm, 1, SLOT_SENT, seq);
        int idx = -1, flag = 0, outcount = 0;
        long ncalls = 1;
        uint64_t t0 = mo_timer_now_ns();
        if (call == CALL_WAITANY) {
            MPI_Waitany(n, st->reqs, &idx, MPI_STATUS_IGNORE);
        } else if (call == CALL_TESTANY) {
            MPI_Testany(n, st->reqs, &idx, &flag, MPI_STATUS_IGNORE);
            while (!flag) {
                MPI_Testany(n, st->reqs, &idx, &flag, MPI_STATUS_IGNORE);
                ncalls++;
            }
        } else {
            MPI_Waitsome(n, st->reqs, &outcount, st->indices, MPI_STATUSES_IGNORE);
            idx = outcount == 1 ? st->indices[0] : -1;
        }
        uint64_t t1 = mo_timer_now_ns();
        t = (double)(t1 - t0);
        if (idx != 0) /* cannot happen: only request 0 is ever matched */
            t = NAN;
        *calls = (double)ncalls;
    } else if (st->rank == 1) {
        mo_shm_wait(&st->shm, 0, SLOT_GO, seq);
        MPI_Send(st->buf, st->bytes, MPI_BYTE, 0, TAG_A, st->comm);
        mo_shm_set(&st->shm, 1, SLOT_SENT, seq);
    }
    return t;
}

static double command(wa_state *st, wa_cmd c, double *calls)
{
    mo_cmd_send(st->ctl, &c, sizeof c);
    if (c.op == CMD_SAMPLE)
        return sample(st, (int)c.n, (int)c.call, calls);
    if (st->rank == 0)
        idle_requests(st, (int)c.n, c.op == CMD_SETUP);
    return NAN;
}

/* The other ranks: each of rank 0's samples. */
static void serve_cmd(void *ctx, const void *cmd)
{
    const wa_cmd *c = cmd;
    double calls;
    if (c->op == CMD_SAMPLE)
        sample(ctx, (int)c->n, (int)c->call, &calls);
}

static void measure_point(wa_state *st, wa_point *pt)
{
    double calls = 0;
    command(st, (wa_cmd){CMD_SETUP, pt->n, 0}, &calls);
    for (int c = 0; c < NCALLS; c++)
        command(st, (wa_cmd){CMD_SAMPLE, pt->n, c}, &calls); /* untimed */
    for (long k = 0; k < st->params->samples; k++) {
        for (int j = 0; j < NCALLS; j++) {
            int c = (int)((k + j) % NCALLS);
            double t = command(st, (wa_cmd){CMD_SAMPLE, pt->n, c}, &calls);
            if (c == CALL_TESTANY)
                pt->testany_calls[pt->ns[c]] = calls;
            pt->samples[c][pt->ns[c]++] = t;
        }
    }
    command(st, (wa_cmd){CMD_TEARDOWN, pt->n, 0}, &calls);
    for (int c = 0; c < NCALLS; c++)
        mo_stats_summarize_or_nan(pt->samples[c], pt->ns[c], &pt->st[c]);
}

/* ---- output ------------------------------------------------------------- */

/* One of "points". */
static void write_point(mo_json *w, const void *item, const void *ctx)
{
    const wa_point *pt = item;
    (void)ctx;
    mo_json_kv_int64(w, "n", pt->n);
    for (int c = 0; c < NCALLS; c++) {
        char key[48];
        static const char *const short_names[NCALLS] = {"waitany", "testany", "waitsome"};
        mo_json_key(w, short_names[c]);
        mo_json_begin_object(w);
        mo_json_kv_double(w, "time_ns", pt->st[c].median);
        mo_json_stats(w, "time", &pt->st[c]);
        snprintf(key, sizeof key, "samples_ns");
        mo_json_kv_doubles(w, key, pt->samples[c], pt->ns[c]);
        if (c == CALL_TESTANY) {
            mo_json_kv_double(w, "calls_median",
                              mo_stats_median(pt->testany_calls, pt->ns[c]));
        }
        mo_json_end_object(w);
    }
}

static void write_results(mo_json *w, const void *ctx)
{
    const wa_state *st = ctx;
    mo_json_kv_int64(w, "message_bytes", st->bytes);
    mo_json_kv_string(w, "arrival_sync", "shared-memory flag");
    mo_json_kv_int64(w, "samples_per_point", st->params->samples);
    mo_json_key(w, "calls");
    mo_json_begin_array(w);
    for (int c = 0; c < NCALLS; c++)
        mo_json_string(w, CALL_NAMES[c]);
    mo_json_end_array(w);
    mo_points_json(w, &st->points, write_point, NULL);
}

/* ---- main --------------------------------------------------------------- */

static int wa_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    (void)ctx;
    if (o->sizes.v[0] > MAX_MSG_BYTES) {
        snprintf(err, errlen, "message size %llu bytes: at most %d (the message must be eager)",
                 (unsigned long long)o->sizes.v[0], MAX_MSG_BYTES);
        return -1;
    }
    return 0;
}

static int plan(wa_state *st)
{
    const long max_n = st->params->max_n;
    int k = 0;
    for (long n = 1;; n = 2 * n > max_n ? max_n : 2 * n) {
        k++;
        if (n >= max_n)
            break;
    }
    if (mo_points_plan(&st->points, k, sizeof(wa_point)) != 0)
        return -1;
    long n = 1;
    for (int i = 0; i < k; i++, n = 2 * n > max_n ? max_n : 2 * n) {
        wa_point *pt = mo_points_at(&st->points, i);
        pt->n = n;
        for (int c = 0; c < NCALLS; c++)
            if (!(pt->samples[c] = malloc((size_t)st->params->samples * sizeof(double))))
                return -1;
        if (!(pt->testany_calls = malloc((size_t)st->params->samples * sizeof(double))))
            return -1;
    }
    return 0;
}

static void free_point(void *item)
{
    wa_point *pt = item;
    for (int c = 0; c < NCALLS; c++)
        free(pt->samples[c]);
    free(pt->testany_calls);
}

static void wa_teardown(mo_bench *b, void *ctx)
{
    wa_state *st = ctx;
    (void)b;
    MPI_Comm_free(&st->comm);
    MPI_Comm_free(&st->idle);
    mo_points_free(&st->points, free_point);
    free(st->indices);
    free(st->reqs);
    free(st->sink);
    free(st->buf);
}

/* Every rank: the communicators, flags and buffers; rank 0 the requests and the plan. */
static void wa_setup(mo_bench *b, void *ctx)
{
    wa_state *st = ctx;
    st->rank = b->rank;
    st->bytes = (int)b->opts.sizes.v[0];
    MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &st->idle);
    st->ctl = b->ctl;
    const size_t slot = st->bytes > 0 ? (size_t)st->bytes : 1;
    st->buf = mo_page_alloc(slot);
    st->sink = mo_page_alloc(slot);
    b->have = st->buf && st->sink;
    if (b->rank == 0) {
        st->reqs = malloc((size_t)st->params->max_n * sizeof *st->reqs);
        st->indices = malloc((size_t)st->params->max_n * sizeof *st->indices);
        b->have = b->have && st->reqs && st->indices && plan(st) == 0;
    }
    if (st->buf)
        memset(st->buf, b->rank + 1, slot);
    b->ready.no_alloc = "cannot allocate the requests and buffers";
}

static int wa_one_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    wa_state *st = ctx;
    (void)i;
    wa_point *pt = mo_points_next(&st->points);
    measure_point(st, pt);
    mo_verbose(&b->opts, "n=%-7ld waitany %9.0f ns  testany %9.0f ns  waitsome %9.0f ns\n", pt->n, pt->st[0].median,
               pt->st[1].median, pt->st[2].median);
    snprintf(label, labellen, "N=%ld", pt->n);
    return MO_POINT_OK;
}

int main(int argc, char **argv)
{
    static wa_params params;
    static wa_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = wa_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, wa_check, NULL},
        .results = write_results, .state = &st, .shm = &st.shm, .setup = wa_setup, .teardown = wa_teardown,
        .mode = MO_BENCH_LEAD, .unit = "points", .planned = &st.points.ntotal, .point = wa_one_point,
        .run_cmd = serve_cmd, MO_KERNEL_FIELDS(wa_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
