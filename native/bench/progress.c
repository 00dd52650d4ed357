/* progress.c - mo_progress: does a message's data reach the receive buffer
 * while neither rank calls MPI (asynchronous progress)? The miniGhost check
 * of Strohbeen (Cray Gemini overlap slides).
 *
 * Rank 0 receives, rank 1 sends. Per sample rank 0 fills its receive buffer
 * with a sentinel (0), posts MPI_Irecv and then computes in chunks of
 * calibrated work WITHOUT any MPI call; between chunks it reads (volatile)
 * a few watched positions spread over the buffer, first and last byte
 * included, and notes when the first and when all of them hold the payload
 * pattern (ordering within a message is not guaranteed). It stops when all
 * arrived or when the computation budget (--budget-factor times the
 * message's one-way ping-pong time, within --min-budget-ms and
 * --max-budget-ms) is spent, and only then calls MPI_Wait.
 *
 * Orderings (synchronised by flags in node-shared memory, shmsync.h, so that
 * no MPI call drives progress): sender-first (rank 1 posts MPI_Isend, raises
 * a flag; rank 0 waits for it, then posts its receive) and receiver-first
 * (rank 0 posts, raises a flag; rank 1 then sends). Sender modes: "computes"
 * (after MPI_Isend rank 1 computes in calibrated chunks, polling only the
 * shared flag with which rank 0 says it stopped watching, then MPI_Wait:
 * neither side calls MPI) and "waits" (rank 1 sits in MPI_Wait at once, so
 * its progress engine runs). A "dry" sample runs the same watch loop with no
 * message (rank 1 computing), as long as the budget, for the compute
 * slowdown (a shorter dry loop would be preempted less often on a busy node).
 *
 * Also recorded: what the MPI says about asynchronous progress (control
 * variables whose name holds "async_progress" or "progress_thread", the
 * environment variables of that name, the thread level, the number of
 * threads in the process). */
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

#define BENCH "progress"
#define DEFAULT_SIZES "1k:4M"
#define QUICK_SIZES "1k,8k,64k,1M,4M"
#define TAG_DATA 300
#define TAG_PP 301
#define DEFAULT_SAMPLES 15
#define QUICK_SAMPLES 7
#define DEFAULT_BUDGET_FACTOR 20.0
#define DEFAULT_MIN_BUDGET_MS 10.0
#define DEFAULT_MAX_BUDGET_MS 100.0
#define CHUNKS_PER_BUDGET 400
#define MIN_CHUNK_US 0.5
#define NWATCH 8
#define PP_SAMPLES 5
#define MAX_CVARS 8
#define MAX_ENVS 8

enum { ORD_SENDER_FIRST = 0, ORD_RECEIVER_FIRST = 1, NORD = 2 };
enum { MODE_COMPUTES = 0, MODE_WAITS = 1, NMODE = 2 };
enum { NCASES = NORD * NMODE };
static const char *const ORD_NAMES[NORD] = {"sender-first", "receiver-first"};
static const char *const MODE_NAMES[NMODE] = {"computes", "waits"};

/* Shared-memory slots: rank 0 (receiver) and rank 1 (sender). */
enum { SLOT_POSTED = 0, SLOT_DONE = 1 };
enum { SLOT_SENT = 0 };

typedef struct pg_params {
    long samples;
    double budget_factor, min_budget_ms, max_budget_ms;
} pg_params;

static int pg_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    (void)quick;
    pg_params *p = ctx;
    if (p->max_budget_ms < p->min_budget_ms) {
        snprintf(err, errlen, "--max-budget-ms (%g) must be at least --min-budget-ms (%g)",
                 p->max_budget_ms, p->min_budget_ms);
        return -1;
    }
    return 0;
}

static const mo_field pg_fields[] = {
    MO_FIELD_LONG_Q("samples", pg_params, samples, 1, 10000, DEFAULT_SAMPLES, QUICK_SAMPLES),
    MO_FIELD_DOUBLE_OF("budget-factor", pg_params, budget_factor, 1.0, 1e6),
    MO_FIELD_DOUBLE_OF("min-budget-ms", pg_params, min_budget_ms, 0.01, 1e4),
    MO_FIELD_DOUBLE_OF("max-budget-ms", pg_params, max_budget_ms, 0.01, 1e5),
};

static void pg_usage(FILE *f)
{
    fprintf(f,
            "  --samples K          samples per size, ordering and sender mode (default %d; --quick %d)\n"
            "  --budget-factor X    computation budget = X * one-way transfer time (default %g)\n"
            "  --min-budget-ms T    but at least T ms (default %g)\n"
            "  --max-budget-ms T    and at most T ms (default %g)\n"
            "  (--quick without --sizes: sizes %s)\n",
            DEFAULT_SAMPLES, QUICK_SAMPLES, DEFAULT_BUDGET_FACTOR, DEFAULT_MIN_BUDGET_MS,
            DEFAULT_MAX_BUDGET_MS, QUICK_SIZES);
}

/* ---- state ------------------------------------------------------------- */

typedef struct pg_sample {
    double arrived_ns; /* all watched positions hold the payload; NaN: not before MPI_Wait */
    double first_ns;   /* the first watched position did; NaN: none */
    double fraction;   /* watched positions holding the payload when watching ended */
    double elapsed_ns; /* the watch loop (computation and looks) */
    double wait_ns;    /* the MPI_Wait after it */
    long chunks;       /* work chunks done */
} pg_sample;

typedef struct pg_point {
    uint64_t size;
    double transfer_ns, budget_ns, chunk_ns;
    uint64_t chunk_units;
    long max_chunks;
    size_t n[NCASES + 1]; /* the last one: dry */
    pg_sample *s[NCASES + 1];
    long data_errors;
} pg_point;

typedef struct pg_state {
    const pg_params *params;
    const mo_options *opts;
    const mo_work_calib *work;
    MPI_Comm comm, pp, ctl;
    mo_shm shm;
    int rank;
    unsigned char *buf;
    mo_points points; /* rank 0's pg_point */
    int64_t seq;
    /* what the MPI says about asynchronous progress */
    int thread_provided;
    long threads_in_process;
    int ncvars, nenvs;
    mo_cvar cvars[MAX_CVARS];
    char envs[MAX_ENVS][160];
} pg_state;

typedef struct pg_cmd {
    int64_t op, size, a, b, c;
} pg_cmd;
enum { CMD_PINGPONG = MO_CMD_QUIT + 1, CMD_SAMPLE };
enum { CASE_DRY = NCASES };

/* ---- asynchronous-progress settings --------------------------------------- */

/* Names of the settings that switch asynchronous progress on. */
static const char *const PROGRESS_KEYS[] = {"async_progress", "progress_thread", "async_thread"};

static bool progress_name(const char *name)
{
    return mo_name_has(name, PROGRESS_KEYS, sizeof PROGRESS_KEYS / sizeof PROGRESS_KEYS[0]);
}

static bool progress_cvar(const char *name, MPI_Datatype dt, int bind, const void *arg)
{
    (void)dt;
    (void)bind;
    (void)arg;
    return progress_name(name);
}

extern char **environ;

static void read_progress_env(pg_state *st)
{
    for (char **e = environ; e && *e && st->nenvs < MAX_ENVS; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || (size_t)(eq - *e) >= 120)
            continue;
        char name[128];
        memcpy(name, *e, (size_t)(eq - *e));
        name[eq - *e] = 0;
        if (progress_name(name))
            snprintf(st->envs[st->nenvs++], sizeof st->envs[0], "%s", *e);
    }
}

static long threads_in_process(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long n = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Threads:", 8) == 0) {
            n = strtol(line + 8, NULL, 10);
            break;
        }
    fclose(f);
    return n;
}

static const char *thread_level_name(int level)
{
    return level == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : level == MPI_THREAD_MULTIPLE   ? "MPI_THREAD_MULTIPLE"
                                            : "unknown";
}

/* ---- the measurements (both ranks) ---------------------------------------- */

static void watch_positions(uint64_t size, size_t pos[NWATCH], int *nw)
{
    int n = size < NWATCH ? (int)size : NWATCH;
    for (int i = 0; i < n; i++)
        pos[i] = n == 1 ? 0 : (size_t)((size - 1) * (uint64_t)i / (uint64_t)(n - 1));
    *nw = n;
}

/* Round trips of size bytes; rank 0 returns the one-way time in ns. */
static double pingpong(pg_state *st, uint64_t size, long iters)
{
    const int n = (int)size;
    if (st->rank > 1)
        return NAN;
    MPI_Barrier(st->pp);
    uint64_t t0 = mo_timer_now_ns();
    for (long i = 0; i < iters; i++) {
        if (st->rank == 0) {
            MPI_Send(st->buf, n, MPI_BYTE, 1, TAG_PP, st->pp);
            MPI_Recv(st->buf, n, MPI_BYTE, 1, TAG_PP, st->pp, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(st->buf, n, MPI_BYTE, 0, TAG_PP, st->pp, MPI_STATUS_IGNORE);
            MPI_Send(st->buf, n, MPI_BYTE, 0, TAG_PP, st->pp);
        }
    }
    return (double)(mo_timer_now_ns() - t0) / (2.0 * (double)iters);
}

/* One sample of case c (ordering * NMODE + mode, or CASE_DRY). */
static void sample(pg_state *st, uint64_t size, int c, uint64_t chunk_units, long max_chunks,
                   pg_sample *out, long *data_errors)
{
    const int64_t seq = ++st->seq;
    const unsigned char v = (unsigned char)(1 + seq % 250);
    const int n = (int)size;
    const bool dry = c == CASE_DRY;
    const int ord = dry ? 0 : c / NMODE, mode = dry ? MODE_COMPUTES : c % NMODE;
    if (st->rank == 0) {
        size_t pos[NWATCH];
        int nw;
        watch_positions(size, pos, &nw);
        memset(st->buf, 0, size);
        MPI_Request req = MPI_REQUEST_NULL;
        if (!dry && ord == ORD_SENDER_FIRST)
            mo_shm_wait(&st->shm, 1, SLOT_SENT, seq);
        const uint64_t t0 = mo_timer_now_ns();
        if (!dry)
            MPI_Irecv(st->buf, n, MPI_BYTE, 1, TAG_DATA, st->comm, &req);
        if (dry || ord == ORD_RECEIVER_FIRST)
            mo_shm_set(&st->shm, 0, SLOT_POSTED, seq);
        const volatile unsigned char *p = st->buf;
        out->arrived_ns = out->first_ns = NAN;
        long chunks = 0;
        int cnt = 0;
        for (;;) {
            cnt = 0;
            for (int i = 0; i < nw; i++)
                cnt += p[pos[i]] == v;
            if (cnt > 0 && isnan(out->first_ns))
                out->first_ns = (double)(mo_timer_now_ns() - t0);
            if (cnt == nw) {
                out->arrived_ns = (double)(mo_timer_now_ns() - t0);
                break;
            }
            if (chunks >= max_chunks)
                break;
            mo_work(chunk_units);
            chunks++;
        }
        const uint64_t t1 = mo_timer_now_ns();
        mo_shm_set(&st->shm, 0, SLOT_DONE, seq);
        if (!dry)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        const uint64_t t2 = mo_timer_now_ns();
        out->fraction = (double)cnt / nw;
        out->elapsed_ns = (double)(t1 - t0);
        out->wait_ns = dry ? NAN : (double)(t2 - t1);
        out->chunks = chunks;
        if (!dry)
            for (int i = 0; i < nw; i++)
                *data_errors += p[pos[i]] != v;
    } else if (st->rank == 1) {
        if (!dry)
            memset(st->buf, v, size);
        MPI_Request req = MPI_REQUEST_NULL;
        if (dry || ord == ORD_RECEIVER_FIRST)
            mo_shm_wait(&st->shm, 0, SLOT_POSTED, seq);
        if (!dry)
            MPI_Isend(st->buf, n, MPI_BYTE, 0, TAG_DATA, st->comm, &req);
        if (!dry && ord == ORD_SENDER_FIRST)
            mo_shm_set(&st->shm, 1, SLOT_SENT, seq);
        if (mode == MODE_COMPUTES)
            while (mo_shm_get(&st->shm, 0, SLOT_DONE) < seq)
                mo_work(chunk_units);
        if (!dry)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static void run_cmd(pg_state *st, const pg_cmd *c, double *pp_ns, pg_sample *out, long *errs)
{
    if (c->op == CMD_PINGPONG) {
        double t = pingpong(st, (uint64_t)c->size, c->a);
        if (pp_ns)
            *pp_ns = t;
    } else if (c->op == CMD_SAMPLE) {
        pg_sample dummy;
        long e = 0;
        sample(st, (uint64_t)c->size, (int)c->a, (uint64_t)c->b, (long)c->c, out ? out : &dummy,
               errs ? errs : &e);
    }
}

static void command(pg_state *st, pg_cmd c, double *pp_ns, pg_sample *out, long *errs)
{
    mo_cmd_send(st->ctl, &c, sizeof c);
    run_cmd(st, &c, pp_ns, out, errs);
}

/* The other ranks: each of rank 0's commands. */
static void serve_cmd(void *ctx, const void *cmd)
{
    run_cmd(ctx, cmd, NULL, NULL, NULL);
}

static void measure_point(pg_state *st, pg_point *pt)
{
    const double upus = st->work->units_per_us;
    /* one-way time: round trips lasting ~1 ms, PP_SAMPLES times, median */
    double est = 0;
    command(st, (pg_cmd){CMD_PINGPONG, (int64_t)pt->size, 2, 0, 0}, &est, NULL, NULL);
    long iters = est > 0 ? (long)(1e6 / (2 * est)) : 10;
    iters = iters < 3 ? 3 : iters > 2000 ? 2000 : iters;
    double pp[PP_SAMPLES];
    for (int i = 0; i < PP_SAMPLES; i++)
        command(st, (pg_cmd){CMD_PINGPONG, (int64_t)pt->size, iters, 0, 0}, &pp[i], NULL, NULL);
    pt->transfer_ns = mo_stats_median(pp, PP_SAMPLES);
    pt->budget_ns = st->params->budget_factor * pt->transfer_ns;
    if (pt->budget_ns > st->params->max_budget_ms * 1e6)
        pt->budget_ns = st->params->max_budget_ms * 1e6;
    if (pt->budget_ns < st->params->min_budget_ms * 1e6)
        pt->budget_ns = st->params->min_budget_ms * 1e6;
    double chunk_ns = pt->budget_ns / CHUNKS_PER_BUDGET;
    if (chunk_ns < MIN_CHUNK_US * 1e3)
        chunk_ns = MIN_CHUNK_US * 1e3;
    pt->chunk_units = (uint64_t)ceil(chunk_ns * 1e-3 * upus);
    if (pt->chunk_units < 1)
        pt->chunk_units = 1;
    pt->chunk_ns = (double)pt->chunk_units / upus * 1e3;
    pt->max_chunks = (long)ceil(pt->budget_ns / pt->chunk_ns);
    /* one untimed sample of each case, then rounds in rotating order */
    for (int c = 0; c <= NCASES; c++)
        command(st, (pg_cmd){CMD_SAMPLE, (int64_t)pt->size, c, (int64_t)pt->chunk_units, pt->max_chunks},
                NULL, NULL, NULL);
    for (long k = 0; k < st->params->samples; k++)
        for (int j = 0; j <= NCASES; j++) {
            int c = (int)((k + j) % (NCASES + 1));
            pg_sample *s = &pt->s[c][pt->n[c]++];
            command(st, (pg_cmd){CMD_SAMPLE, (int64_t)pt->size, c, (int64_t)pt->chunk_units, pt->max_chunks},
                    NULL, s, &pt->data_errors);
        }
}

/* ---- output ------------------------------------------------------------- */

static void write_samples(mo_json *w, const pg_sample *s, size_t n)
{
    mo_json_key(w, "samples");
    mo_json_begin_array(w);
    for (size_t i = 0; i < n; i++) {
        mo_json_begin_object(w);
        mo_json_kv_double(w, "arrived_ns", s[i].arrived_ns);
        mo_json_kv_double(w, "first_ns", s[i].first_ns);
        mo_json_kv_double(w, "fraction", s[i].fraction);
        mo_json_kv_double(w, "elapsed_ns", s[i].elapsed_ns);
        mo_json_kv_double(w, "wait_ns", s[i].wait_ns);
        mo_json_kv_int64(w, "chunks", s[i].chunks);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

/* One of "points". */
static void write_point(mo_json *w, const void *item, const void *ctx)
{
    const pg_point *pt = item;
    (void)ctx;
    mo_json_kv_uint64(w, "size", pt->size);
    mo_json_kv_double(w, "transfer_ns", pt->transfer_ns);
    mo_json_kv_double(w, "budget_ns", pt->budget_ns);
    mo_json_kv_double(w, "chunk_ns", pt->chunk_ns);
    mo_json_kv_uint64(w, "chunk_units", pt->chunk_units);
    mo_json_kv_int64(w, "max_chunks", pt->max_chunks);
    mo_json_kv_int64(w, "data_errors", pt->data_errors);
    mo_json_key(w, "dry");
    mo_json_begin_object(w);
    write_samples(w, pt->s[CASE_DRY], pt->n[CASE_DRY]);
    mo_json_end_object(w);
    mo_json_key(w, "cases");
    mo_json_begin_array(w);
    for (int c = 0; c < NCASES; c++) {
        mo_json_begin_object(w);
        mo_json_kv_string(w, "ordering", ORD_NAMES[c / NMODE]);
        mo_json_kv_string(w, "sender", MODE_NAMES[c % NMODE]);
        write_samples(w, pt->s[c], pt->n[c]);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

static void write_results(mo_json *w, const void *ctx)
{
    const pg_state *st = ctx;
    mo_json_kv_string(w, "sync", "shared-memory flags");
    mo_json_kv_int64(w, "watched_positions", NWATCH);
    mo_json_kv_int64(w, "samples_per_case", st->params->samples);
    mo_json_kv_double(w, "budget_factor", st->params->budget_factor);
    mo_json_kv_double(w, "min_budget_ns", st->params->min_budget_ms * 1e6);
    mo_json_kv_double(w, "max_budget_ns", st->params->max_budget_ms * 1e6);
    mo_json_key(w, "async_progress");
    mo_json_begin_object(w);
    mo_json_kv_string(w, "thread_level", thread_level_name(st->thread_provided));
    if (st->threads_in_process > 0)
        mo_json_kv_int64(w, "threads_in_process", st->threads_in_process);
    else
        mo_json_kv_string(w, "threads_in_process", NULL);
    mo_cvar_array(w, "cvars", st->cvars, st->ncvars);
    mo_json_key(w, "env");
    mo_json_begin_array(w);
    for (int i = 0; i < st->nenvs; i++)
        mo_json_string(w, st->envs[i]);
    mo_json_end_array(w);
    mo_json_end_object(w);
    mo_points_json(w, &st->points, write_point, NULL);
}

/* ---- main --------------------------------------------------------------- */

static int pg_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    (void)ctx;
    if (o->sizes.v[0] < 1) {
        snprintf(err, errlen, "message sizes must be at least 1 byte (a 0-byte message has no data to watch)");
        return -1;
    }
    return 0;
}

static int plan(pg_state *st)
{
    const mo_sizes *sz = &st->opts->sizes;
    if (mo_points_plan(&st->points, (int)sz->n, sizeof(pg_point)) != 0)
        return -1;
    for (int i = 0; i < st->points.ntotal; i++) {
        pg_point *pt = mo_points_at(&st->points, i);
        pt->size = sz->v[i];
        for (int c = 0; c <= NCASES; c++)
            if (!(pt->s[c] = calloc((size_t)st->params->samples, sizeof(pg_sample))))
                return -1;
    }
    return 0;
}

static void free_point(void *item)
{
    pg_point *pt = item;
    for (int c = 0; c <= NCASES; c++)
        free(pt->s[c]);
}

static void pg_teardown(mo_bench *b, void *ctx)
{
    pg_state *st = ctx;
    (void)b;
    MPI_Comm_free(&st->comm);
    MPI_Comm_free(&st->pp);
    mo_points_free(&st->points, free_point);
    free(st->buf);
}

/* Every rank: what it knows of its MPI's progress, the communicators, flags
 * and buffer; rank 0 the plan. */
static void pg_setup(mo_bench *b, void *ctx)
{
    pg_state *st = ctx;
    st->opts = &b->opts;
    st->rank = b->rank;
    st->work = &b->work;
    MPI_Query_thread(&st->thread_provided);
    st->threads_in_process = threads_in_process();
    st->ncvars = mo_cvar_read(progress_cvar, NULL, st->cvars, MAX_CVARS, NULL, 0);
    read_progress_env(st);
    MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &st->pp);
    st->ctl = b->ctl;
    const uint64_t largest = b->opts.sizes.v[b->opts.sizes.n - 1];
    st->buf = mo_page_alloc((size_t)largest);
    b->have = st->buf != NULL;
    if (b->rank == 0)
        b->have = b->have && plan(st) == 0;
    if (st->buf)
        memset(st->buf, 0, (size_t)largest);
    b->ready.calib_samples = 11;
    b->ready.no_alloc = "cannot allocate the buffers";
}

static int pg_one_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    pg_state *st = ctx;
    (void)i;
    pg_point *pt = mo_points_next(&st->points);
    measure_point(st, pt);
    if (b->opts.verbose) {
        printf("size=%-9llu transfer %9.1f us  budget %9.1f us", (unsigned long long)pt->size,
               pt->transfer_ns / 1e3, pt->budget_ns / 1e3);
        for (int c = 0; c < NCASES; c++) {
            size_t got = 0;
            for (size_t k = 0; k < pt->n[c]; k++)
                got += !isnan(pt->s[c][k].arrived_ns);
            printf("  %s/%s %zu/%zu", ORD_NAMES[c / NMODE], MODE_NAMES[c % NMODE], got, pt->n[c]);
        }
        printf("\n");
        fflush(stdout);
    }
    snprintf(label, labellen, "%llu B", (unsigned long long)pt->size);
    return MO_POINT_OK;
}

static void pg_finish(mo_bench *b, void *ctx)
{
    const pg_state *st = ctx;
    for (int i = 0; i < st->points.npoints; i++) {
        const pg_point *pt = mo_points_at(&st->points, i);
        if (pt->data_errors)
            mo_result_warn(&b->doc, "%llu B: %ld watched bytes wrong after MPI_Wait", (unsigned long long)pt->size,
                           pt->data_errors);
    }
}

int main(int argc, char **argv)
{
    static pg_params params = {0, DEFAULT_BUDGET_FACTOR, DEFAULT_MIN_BUDGET_MS, DEFAULT_MAX_BUDGET_MS};
    static pg_state st = {.params = &params};
    static const mo_bench_options ext = {.finalize = pg_finalize, .usage = pg_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, pg_check, QUICK_SIZES},
        .results = write_results, .state = &st, .shm = &st.shm, .setup = pg_setup, .teardown = pg_teardown,
        .mode = MO_BENCH_LEAD, .unit = "sizes", .planned = &st.points.ntotal, .point = pg_one_point,
        .run_cmd = serve_cmd, .finish = pg_finish, .recheck_work = true, MO_KERNEL_FIELDS(pg_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
