/* bench_util.c - MPI plumbing shared by the benchmarks; see bench_util.h. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, posix_memalign */
#include "bench_util.h"
#include "fields.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void *mo_page_alloc(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    void *mem = NULL;
    if (posix_memalign(&mem, page > 0 ? (size_t)page : 4096, bytes) != 0)
        return NULL;
    return mem;
}

int mo_result_complete(const mo_result *doc, const char *program, mo_results_fn results,
                       const void *ctx)
{
    char err[512];
    if (mo_result_write(doc, "complete", results, ctx, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "mo_%s: error: %s\n", program, err);
    return -1;
}

int mo_bench_finish(int rank, const char *program, int status, const char *msg)
{
    if (msg && rank == 0) {
        fprintf(stderr, "mo_%s: error: %s\n", program, msg);
        fflush(stderr);
    }
    MPI_Finalize();
    return status;
}

/* Every rank parses the same argv and counts the same ranks, so all reach
 * the same verdict without communicating, and all leave together. */
bool mo_bench_start(mo_options *opts, const mo_bench_spec *spec, int argc, char **argv,
                    int *exit_status)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char err[512];
    int rc = mo_options_parse(opts, spec->program, spec->default_sizes, spec->quick_sizes, argc, argv,
                              spec->ext, err,
                              sizeof err);
    if (rc == MO_OPTIONS_HELP) {
        if (rank == 0)
            mo_options_usage(stdout, spec->program, spec->default_sizes, spec->ext);
        mo_options_free(opts);
        *exit_status = mo_bench_finish(rank, spec->program, 0, NULL);
        return false;
    }
    if (rc == MO_OPTIONS_OK && size < spec->min_ranks) {
        snprintf(err, sizeof err, "needs at least %d MPI ranks, got %d", spec->min_ranks, size);
        rc = MO_OPTIONS_ERROR;
    }
    /* The benchmarks pass a message's bytes as an int count of MPI_BYTE. */
    if (rc == MO_OPTIONS_OK && spec->int_count && opts->sizes.v[opts->sizes.n - 1] > (uint64_t)INT_MAX) {
        snprintf(err, sizeof err, "message size %llu exceeds the largest MPI count (%d bytes)",
                 (unsigned long long)opts->sizes.v[opts->sizes.n - 1], INT_MAX);
        rc = MO_OPTIONS_ERROR;
    }
    if (rc == MO_OPTIONS_OK && spec->check &&
        spec->check(opts, mo_fields_params(spec->ext), err, sizeof err) != 0)
        rc = MO_OPTIONS_ERROR;
    if (rc != MO_OPTIONS_OK) {
        mo_options_free(opts);
        *exit_status = mo_bench_finish(rank, spec->program, 2, err);
        return false;
    }
    return true;
}

/* The timer is probed whatever the verdict: it is cheap and leaves *timer
 * defined for the document that refers to it. */
bool mo_bench_probe(int prov_rc, mo_timer_info *timer, mo_work_calib *work, double calib_ms,
                    int calib_samples, char *err, size_t errlen)
{
    bool ok = true;
    if (prov_rc != 0) {
        snprintf(err, errlen, "could not collect provenance (out of memory)");
        ok = false;
    }
    mo_timer_probe(timer);
    if (ok && mo_work_calibrate(work, calib_ms, calib_samples) != 0) {
        snprintf(err, errlen, "work loop calibration failed");
        ok = false;
    }
    return ok;
}

/* votes: rank 0's probe and write, every rank's set-up, and (nvotes 3)
 * every rank's shared-memory flags. */
static bool bench_ready(mo_result *doc, const mo_bench_ready_spec *spec, int nvotes, int have,
                        int have_shm, char *err, size_t errlen)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int verdict[3] = {1, have, have_shm};
    if (rank == 0 && have_shm) {
        verdict[0] = mo_bench_probe(spec->prov_rc, spec->timer, spec->work,
                                    spec->calib_ms > 0 ? spec->calib_ms : 1.0, spec->calib_samples,
                                    err, errlen);
        if (spec->no_work_loop)
            spec->work->nwarnings = 0;
        if (verdict[0] && spec->calibrated)
            spec->calibrated(spec->calibrated_arg);
        if (verdict[0] && spec->unbound_peer > 0)
            mo_warn_if_unbound(doc, doc->provenance, 0, spec->unbound_peer);
        if (verdict[0] && mo_result_write(doc, "running", spec->results, spec->ctx, err, errlen) != 0)
            verdict[0] = 0;
    }
    if (spec->quiet) {
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, verdict, nvotes, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
        mo_quiet_wait(&req);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, verdict, nvotes, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (verdict[0] && verdict[1] && verdict[2])
        return true;
    if (verdict[0] && verdict[2])
        snprintf(err, errlen, "%s", spec->no_alloc);
    else if (!verdict[2] && !err[0])
        snprintf(err, errlen, "%s", MO_FLAGS_PLACEMENT_ERR);
    return false;
}

bool mo_bench_ready(mo_result *doc, const mo_bench_ready_spec *spec, int have, char *err,
                    size_t errlen)
{
    return bench_ready(doc, spec, 2, have, 1, err, errlen);
}

bool mo_bench_ready_shm(mo_result *doc, const mo_bench_ready_spec *spec, int have, int have_shm,
                        char *err, size_t errlen)
{
    return bench_ready(doc, spec, 3, have, have_shm, err, errlen);
}

int mo_bench_end(int rank, const char *program, mo_result *doc, mo_provenance *prov,
                 mo_options *opts, int status, const char *msg)
{
    mo_result_free(doc);
    mo_provenance_free(prov);
    mo_options_free(opts);
    return mo_bench_finish(rank, program, status, msg);
}

bool mo_time_up(const mo_options *o, uint64_t start_ns)
{
    return o->time_limit_s > 0 && (double)(mo_timer_now_ns() - start_ns) / 1e9 > o->time_limit_s;
}

long mo_clamp_iters(const mo_options *o, double n)
{
    if (n < (double)o->min_iters)
        return o->min_iters;
    if (n > (double)o->max_iters)
        return o->max_iters;
    return (long)n;
}

long mo_loop_warmup(const mo_options *o, long cap)
{
    long warm = o->warmup > 0 ? o->warmup : 1;
    return warm > cap ? cap : warm;
}

long mo_loop_iters(const mo_options *o, double pilot_us, long cap)
{
    long iters = o->iters;
    if (iters <= 0) {
        double target = (o->quick ? MO_LOOP_MS_QUICK : MO_LOOP_MS) * 1000.0;
        double n = ceil(target / fmax(pilot_us, 0.1));
        long hi = o->quick ? MO_LOOP_MAX_ITERS_QUICK : MO_LOOP_MAX_ITERS;
        iters = n < MO_LOOP_MIN_ITERS ? MO_LOOP_MIN_ITERS : n > hi ? hi : (long)n;
        /* then --min-iters/--max-iters, as every other benchmark's estimate
         * (their defaults, 4 and 100000, leave the loop's own bounds as they are) */
        iters = mo_clamp_iters(o, (double)iters);
    }
    return iters > cap ? cap : iters;
}

int mo_loop_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    (void)ctx;
    if (o->iters > MO_LOOP_MAX_ITERS) {
        snprintf(err, errlen, "--iters %ld is too large (at most %d)", o->iters, MO_LOOP_MAX_ITERS);
        return -1;
    }
    return 0;
}

long mo_round_trips(const mo_options *o, double one_way_s)
{
    if (o->iters > 0)
        return o->iters;
    if (!(one_way_s > 0))
        one_way_s = 1e-6;
    return mo_clamp_iters(o, ceil(o->sample_ms / 1000.0 / (2.0 * one_way_s)));
}

void mo_verbose(const mo_options *o, const char *fmt, ...)
{
    if (!o->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* While rank 0 calibrates the work loop, while one pair is measured and
 * another waits for its turn, or while ranks >= 2 idle, a peer polling in a
 * blocking call would take CPU time from the measured rank (on a machine
 * with few cores that visibly slows the work loop). */
void mo_quiet_wait(MPI_Request *req)
{
    int done = 0;
    struct timespec nap = {0, 1000000};
    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&nap, NULL);
    }
}

void mo_quiet_barrier(MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    mo_quiet_wait(&req);
}

/* A cpu_binding entry naming exactly one CPU ("3", not "0-3", "0,2" or
 * "unknown"). */
static bool single_cpu(const char *list)
{
    return list && *list && !strpbrk(list, ",-") && strcmp(list, "unknown") != 0;
}

/* Unbound ranks may be moved between CPUs or share one for a while; on
 * small machines that shows up as bimodal loop and round-trip times. Say so
 * in the result rather than leave it to be guessed from the samples. */
int mo_node_leader(void)
{
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int leader = wrank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    return leader;
}

void mo_warn_if_unbound(mo_result *doc, const mo_provenance *p, int rank_a, int rank_b)
{
    if (!p->cpu_binding || rank_a < 0 || rank_b < 0 || rank_a >= p->ranks || rank_b >= p->ranks)
        return;
    const char *a = p->cpu_binding[rank_a], *b = p->cpu_binding[rank_b];
    if (single_cpu(a) && single_cpu(b) && strcmp(a, b) != 0)
        return;
    mo_result_warn(doc, "ranks %d and %d are not each bound to one distinct CPU (cpu_binding '%s', '%s'): "
                        "the OS may move or co-schedule them, which makes timings noisy; bind them "
                        "(e.g. mpiexec -bind-to core)", rank_a, rank_b, a ? a : "?", b ? b : "?");
}

int mo_cvar_info(int i, char *name, int namelen, MPI_Datatype *dt, int *bind)
{
    char desc[8]; /* the description is not wanted: room for a truncated one */
    int nlen = namelen, dlen = sizeof desc, verb, scope;
    MPI_T_enum en;
    return MPI_T_cvar_get_info(i, name, &nlen, &verb, dt, &en, desc, &dlen, bind, &scope);
}

bool mo_cvar_integer(MPI_Datatype dt, const mo_cvar_value *v, long long *out)
{
    if (dt == MPI_INT)
        *out = v->i;
    else if (dt == MPI_UNSIGNED)
        *out = v->u;
    else if (dt == MPI_LONG)
        *out = v->l;
    else if (dt == MPI_UNSIGNED_LONG)
        *out = (long long)v->ul;
    else if (dt == MPI_LONG_LONG)
        *out = v->ll;
    else if (dt == MPI_UNSIGNED_LONG_LONG)
        *out = (long long)v->ull;
    else
        return false;
    return true;
}

bool mo_name_has(const char *name, const char *const *keys, size_t n)
{
    char low[256];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof low; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = 0;
    for (size_t k = 0; k < n; k++)
        if (strstr(low, keys[k]))
            return true;
    return false;
}

int mo_cvar_read(mo_cvar_filter wanted, const void *arg, mo_cvar *out, int max, char *note, size_t notelen)
{
    int provided, num = 0, n = 0;
    if (note)
        note[0] = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        if (note)
            snprintf(note, notelen, "MPI_T_init_thread failed");
        return 0;
    }
    MPI_T_cvar_get_num(&num);
    for (int i = 0; i < num && n < max; i++) {
        char name[sizeof out->name];
        MPI_Datatype dt;
        int bind;
        if (mo_cvar_info(i, name, sizeof name, &dt, &bind) != MPI_SUCCESS || !wanted(name, dt, bind, arg))
            continue;
        mo_cvar *c = &out[n++];
        snprintf(c->name, sizeof c->name, "%s", name);
        c->read = false;
        MPI_T_cvar_handle h;
        int count = 0;
        mo_cvar_value v;
        memset(&v, 0, sizeof v);
        if (bind != MPI_T_BIND_NO_OBJECT || MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
            continue;
        if (count == 1 && MPI_T_cvar_read(h, &v) == MPI_SUCCESS) {
            c->read = dt != MPI_CHAR; /* a string: no value to give */
            if (!mo_cvar_integer(dt, &v, &c->value)) /* bool-like types: any non-zero byte */
                c->value = v.c[0] != 0 || v.i != 0;
        }
        MPI_T_cvar_handle_free(&h);
    }
    MPI_T_finalize();
    return n;
}

/* Integer control variables that bind no object and whose names suggest a
 * size threshold of the point-to-point protocols. */
static bool threshold_cvar(const char *name, MPI_Datatype dt, int bind, const void *arg)
{
    static const char *const skip[] = {"ctxid", "rma", "coll", "gpu", "accelerator", "bcast", "reduce"};
    static const char *const keys[] = {"eager",         "rndv",         "rendezvous",
                                       "cell_size",     "p2p_threshold", "max_send_size",
                                       "fbox_size",     "max_inline_send", "num_cells"};
    (void)arg;
    if (bind != MPI_T_BIND_NO_OBJECT || mo_name_has(name, skip, sizeof skip / sizeof skip[0]))
        return false;
    if (dt != MPI_INT && dt != MPI_UNSIGNED && dt != MPI_LONG && dt != MPI_UNSIGNED_LONG &&
        dt != MPI_LONG_LONG && dt != MPI_UNSIGNED_LONG_LONG)
        return false;
    return mo_name_has(name, keys, sizeof keys / sizeof keys[0]);
}

int mo_cvar_read_thresholds(mo_cvar *out, int max, char *note, size_t notelen)
{
    return mo_cvar_read(threshold_cvar, NULL, out, max, note, notelen);
}

void mo_cvar_array(mo_json *w, const char *key, const mo_cvar *c, int n)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (int i = 0; i < n; i++) {
        mo_json_begin_object(w);
        mo_json_kv_string(w, "name", c[i].name);
        mo_json_key(w, "value");
        if (c[i].read)
            mo_json_int64(w, c[i].value);
        else
            mo_json_null(w);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

void mo_cvar_json(mo_json *w, const mo_cvar *c, int n, const char *note)
{
    mo_cvar_array(w, "mpi_cvars", c, n);
    mo_json_kv_string(w, "cvar_note", note && note[0] ? note : NULL);
}

void mo_cmd_send(MPI_Comm ctl, const void *cmd, size_t size)
{
    int64_t words[MO_CMD_WORDS] = {0};
    memcpy(words, cmd, size < sizeof words ? size : sizeof words);
    MPI_Bcast(words, MO_CMD_WORDS, MPI_INT64_T, 0, ctl);
}

void mo_cmd_quit(MPI_Comm ctl)
{
    const int64_t quit = MO_CMD_QUIT;
    mo_cmd_send(ctl, &quit, sizeof quit);
}

void mo_cmd_serve(MPI_Comm ctl, void (*run)(void *state, const void *cmd), void *state)
{
    for (;;) {
        int64_t words[MO_CMD_WORDS];
        MPI_Bcast(words, MO_CMD_WORDS, MPI_INT64_T, 0, ctl);
        if (words[0] == MO_CMD_QUIT)
            return;
        run(state, words);
    }
}
