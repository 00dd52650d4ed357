/* error_checking.c - mo_error_checking: small-message costs under the MPI's
 * current argument-checking setting (Balaji et al., "error checking").
 *
 * The setting is fixed at MPI_Init from the environment (MPICH and Intel MPI:
 * MPIR_CVAR_ERROR_CHECKING; Open MPI: OMPI_MCA_mpi_param_check), so the
 * harness launches the program once per setting; this program reports which
 * setting the library took by reading the control variable back through the
 * MPI tool interface (MPI_T) after MPI_Init. Three tests, interleaved per
 * rep so they share the machine's load:
 *   pingpong-0B, pingpong-8B: ranks 0 and 1, N round trips of MPI_Send /
 *     MPI_Recv; ns per message = round-trip time / 2;
 *   proc-null-send: rank 0 alone, N calls of MPI_Send(0 B, MPI_PROC_NULL);
 *     ns per call.
 * N per test is chosen from a warm-up so that a sample lasts about
 * --sample-ms; each sample's value is its time / N. Ranks >= 2 only wait. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"

#define BENCH "error-checking"
#define NTESTS 3
#define MAX_CALLS 50000000L
#define TAG 11

static const char *const test_names[NTESTS] = {"pingpong-0B", "pingpong-8B", "proc-null-send"};
/* The control variables that switch argument checking, by MPI family. */
static const char *const cvar_names[] = {"MPIR_CVAR_ERROR_CHECKING", "mpi_param_check"};
static const char *const env_names[] = {"MPIR_CVAR_ERROR_CHECKING", "OMPI_MCA_mpi_param_check"};

typedef struct ec_test {
    long calls;
    size_t n;
    double *samples; /* ns per message */
    mo_stats st;
} ec_test;

typedef struct ec_state {
    ec_test tests[NTESTS];
    mo_cvar cvar;     /* the one found; name "" when none */
    char cvar_note[320];
    long reps_done;
} ec_state;

static bool checking_cvar(const char *name, MPI_Datatype dt, int bind, const void *arg)
{
    (void)dt;
    (void)bind;
    (void)arg;
    for (size_t w = 0; w < sizeof cvar_names / sizeof cvar_names[0]; w++)
        if (strcmp(name, cvar_names[w]) == 0)
            return true;
    return false;
}

/* Reads the first known argument-checking cvar back via MPI_T. */
static void read_cvar(ec_state *st)
{
    mo_cvar found[8];
    int n = mo_cvar_read(checking_cvar, NULL, found, 8, st->cvar_note, sizeof st->cvar_note);
    if (st->cvar_note[0]) /* MPI_T did not start */
        return;
    snprintf(st->cvar_note, sizeof st->cvar_note, "no argument-checking control variable found");
    for (size_t w = 0; w < sizeof cvar_names / sizeof cvar_names[0] && !st->cvar.name[0]; w++) {
        for (int i = 0; i < n; i++) {
            if (strcmp(found[i].name, cvar_names[w]) != 0)
                continue;
            st->cvar = found[i];
            if (st->cvar.read)
                st->cvar_note[0] = 0;
            else
                snprintf(st->cvar_note, sizeof st->cvar_note, "%s found but not readable", st->cvar.name);
            break;
        }
    }
}

/* One timed block of test t with n messages; ns per message on rank 0. */
static double run_test(int t, long n, int rank, MPI_Comm pair)
{
    char buf[8] = {0};
    MPI_Barrier(pair);
    uint64_t t0 = mo_timer_now_ns();
    if (t == 2) {
        if (rank == 0)
            for (long i = 0; i < n; i++)
                MPI_Send(buf, 0, MPI_BYTE, MPI_PROC_NULL, TAG, pair);
    } else {
        int bytes = t == 0 ? 0 : 8;
        long rounds = n / 2 > 0 ? n / 2 : 1;
        if (rank == 0) {
            for (long i = 0; i < rounds; i++) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, TAG, pair);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, TAG, pair, MPI_STATUS_IGNORE);
            }
        } else {
            for (long i = 0; i < rounds; i++) {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, TAG, pair, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, TAG, pair);
            }
        }
        n = 2 * rounds;
    }
    double ns = (double)(mo_timer_now_ns() - t0);
    return ns / (double)n;
}

static void write_results(mo_json *w, const void *ctx)
{
    const ec_state *st = ctx;
    mo_json_key(w, "launches");
    mo_json_begin_array(w);
    mo_json_begin_object(w);
    mo_json_kv_string(w, "cvar", st->cvar.name[0] ? st->cvar.name : NULL);
    mo_json_key(w, "cvar_value");
    if (st->cvar.read)
        mo_json_int64(w, st->cvar.value);
    else
        mo_json_null(w);
    mo_json_kv_string(w, "cvar_note", st->cvar_note[0] ? st->cvar_note : NULL);
    mo_json_key(w, "env");
    mo_json_begin_object(w);
    for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++)
        mo_json_kv_string(w, env_names[i], getenv(env_names[i]));
    mo_json_end_object(w);
    mo_json_kv_int64(w, "reps_done", st->reps_done);
    mo_json_key(w, "tests");
    mo_json_begin_array(w);
    for (int t = 0; t < NTESTS; t++) {
        const ec_test *et = &st->tests[t];
        mo_json_begin_object(w);
        mo_json_kv_string(w, "name", test_names[t]);
        mo_json_kv_int64(w, "messages_per_sample", et->calls);
        mo_json_kv_double(w, "ns_per_msg", et->st.median);
        mo_json_stats(w, "ns", &et->st);
        mo_json_kv_doubles(w, "samples_ns", et->samples, et->n);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    mo_json_end_object(w);
    mo_json_end_array(w);
}

/* Ranks 0 and 1 take part; rank 0 holds the samples. */
static void ec_setup(mo_bench *b, void *ctx)
{
    ec_state *st = ctx;
    read_cvar(st);
    if (b->rank == 0)
        for (int t = 0; t < NTESTS; t++)
            if (!(st->tests[t].samples = malloc((size_t)b->opts.reps * sizeof(double))))
                b->have = 0;
    b->ready.no_alloc = "cannot allocate the sample buffers";
}

/* The pair: calls per sample for each test, then --reps rounds of every test. */
static int ec_measure(mo_bench *b, void *ctx)
{
    ec_state *st = ctx;
    const mo_options *o = &b->opts;
    const MPI_Comm pair = b->comm;
    if (pair == MPI_COMM_NULL)
        return 0;
    int rank;
    MPI_Comm_rank(pair, &rank);
    /* Messages per sample: double a warm-up block until it lasts 1 ms. */
    long calls[NTESTS];
    for (int t = 0; t < NTESTS; t++) {
        long n = 1000;
        for (;;) {
            double per = run_test(t, n, rank, pair);
            int more = per * (double)n < 1e6 && n < MAX_CALLS / 2;
            MPI_Bcast(&more, 1, MPI_INT, 0, pair);
            if (!more) {
                double want = o->iters > 0 ? (double)o->iters : ceil(o->sample_ms * 1e6 / per);
                calls[t] = want < 1000 ? 1000 : want > MAX_CALLS ? MAX_CALLS : (long)want;
                break;
            }
            n *= 2;
        }
        MPI_Bcast(&calls[t], 1, MPI_LONG, 0, pair);
        st->tests[t].calls = calls[t];
    }
    const uint64_t t_start = mo_timer_now_ns();
    for (long r = 0; r < o->reps; r++) {
        int stop = rank == 0 && mo_time_up(o, t_start);
        MPI_Bcast(&stop, 1, MPI_INT, 0, pair);
        if (stop) {
            if (rank == 0)
                mo_result_warn(&b->doc, "time limit of %g s reached after %ld of %ld reps", o->time_limit_s,
                               st->reps_done, o->reps);
            break;
        }
        for (int t = 0; t < NTESTS; t++) {
            double v = run_test(t, calls[t], rank, pair);
            if (rank == 0)
                st->tests[t].samples[st->tests[t].n++] = v;
        }
        st->reps_done = r + 1;
        if (rank == 0)
            mo_progress(o->progress, (int)(r + 1), (int)o->reps, "rep %ld", r + 1);
    }
    if (rank != 0)
        return 0;
    for (int t = 0; t < NTESTS; t++) {
        ec_test *et = &st->tests[t];
        mo_stats_summarize_or_nan(et->samples, et->n, &et->st);
        mo_verbose(o, "%-16s %.1f ns per message\n", test_names[t], et->st.median);
    }
    return mo_result_complete(&b->doc, b->program, write_results, st);
}

static void ec_teardown(mo_bench *b, void *ctx)
{
    ec_state *st = ctx;
    (void)b;
    for (int t = 0; t < NTESTS; t++)
        free(st->tests[t].samples);
}

int main(int argc, char **argv)
{
    static ec_state st;
    const mo_bench_kernel k = {
        .spec = {"error_checking", "0", NULL, 2, false, NULL, NULL}, .benchmark = BENCH, .pair = true,
        .results = write_results, .state = &st, .setup = ec_setup, .measure = ec_measure,
        .teardown = ec_teardown,
    };
    return mo_bench_main(argc, argv, &k);
}
