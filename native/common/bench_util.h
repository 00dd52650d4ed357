/* bench_util.h - the MPI plumbing every benchmark's main() shares: parsing
 * and checking the options, rank 0's probes before measuring, leaving with
 * one error line and no MPI_Abort, waiting without spinning a core, and
 * warning when the measuring ranks are not pinned. */
#ifndef MO_BENCH_UTIL_H
#define MO_BENCH_UTIL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "provenance.h"
#include "result.h"

/* Every rank leaves through here: if msg is not NULL, rank 0 prints
 * "mo_<program>: error: <msg>" (one line on stderr); then MPI_Finalize.
 * program is the name without "mo_" (as given to mo_options_parse).
 * Returns status, for `return mo_bench_finish(...)` from main(). */
int mo_bench_finish(int rank, const char *program, int status, const char *msg);

/* What mo_bench_start() parses and checks for one benchmark. */
typedef struct mo_bench_spec {
    const char *program;          /* name without "mo_", as for mo_options_parse */
    const char *default_sizes;
    const mo_bench_options *ext;  /* the benchmark's own options; may be NULL */
    int min_ranks;                /* fewer ranks is an error; 0: any number */
    bool int_count;               /* the largest size must fit an int MPI count */
    /* The benchmark's own checks, run after those above (so their messages
     * come second when several apply); ctx is the benchmark's parameters
     * (mo_fields_params(ext): ext->ctx, or that of the options fields.h
     * wrapped; NULL without ext).
     * Returns 0, or -1 with one line in err. May be NULL. */
    int (*check)(const mo_options *o, void *ctx, char *err, size_t errlen);
    /* The sizes under --quick when --sizes is not given (a suite passes only --quick);
     * NULL: default_sizes. */
    const char *quick_sizes;
} mo_bench_spec;

/* The start of every main(), right after MPI_Init: parses argv into opts and
 * runs the checks of spec. Returns true when the benchmark goes on. Returns
 * false when main() should `return *exit_status`: opts is then freed and MPI
 * finalized, after rank 0 printed the usage (--help, status 0) or
 * "mo_<program>: error: <msg>" (status 2). */
bool mo_bench_start(mo_options *opts, const mo_bench_spec *spec, int argc, char **argv,
                    int *exit_status);

/* Rank 0's probes before anything is measured: that provenance was
 * collected (prov_rc from mo_provenance_collect), the timer, and the work
 * loop's calibration (calib_ms, calib_samples as for mo_work_calibrate).
 * Returns true, or false with one line in err. */
bool mo_bench_probe(int prov_rc, mo_timer_info *timer, mo_work_calib *work, double calib_ms,
                    int calib_samples, char *err, size_t errlen);

/* What rank 0 does in mo_bench_ready() before anything is measured. */
typedef struct mo_bench_ready_spec {
    int prov_rc;                 /* from mo_provenance_collect */
    mo_timer_info *timer;        /* doc's timer: probed */
    mo_work_calib *work;         /* doc's work loop: calibrated (calib_ms, calib_samples) */
    int calib_samples;
    int unbound_peer;            /* > 0: mo_warn_if_unbound(doc, provenance, 0, unbound_peer) */
    mo_results_fn results;       /* doc is written "running" with results(ctx) */
    const void *ctx;
    const char *no_alloc;        /* the error when only some rank's set-up failed */
    bool quiet;                  /* wait for the vote like mo_quiet_wait() */
    bool no_work_loop;           /* the method uses no work loop: drop its calibration's warnings
                                  * (the document still records the CPU speed) */
    double calib_ms;             /* the calibration's interval; 0: 1 ms */
    /* Rank 0, after a successful probe and before doc is written: what the
     * benchmark derives from the calibration (work units). May be NULL. */
    void (*calibrated)(void *arg);
    void *calibrated_arg;
} mo_bench_ready_spec;

/* Collective over MPI_COMM_WORLD, between a benchmark's set-up and its
 * measurement. Rank 0 probes (mo_bench_probe), warns as spec says and
 * writes doc as "running"; then every rank learns whether that and every
 * rank's set-up (have) succeeded. Returns true, or false with rank 0's
 * reason in err (rank 0's own failure, else spec->no_alloc); the caller
 * frees its state and leaves through mo_bench_end() with err. */
bool mo_bench_ready(mo_result *doc, const mo_bench_ready_spec *spec, int have, char *err,
                    size_t errlen);

/* Why a benchmark whose ranks share flags (shmsync.h) cannot run where it was
 * placed, when no rank gave a reason of its own. */
#define MO_FLAGS_PLACEMENT_ERR "needs every rank on one node, or 2 ranks (shared-memory flags)"

/* mo_bench_ready() for benchmarks whose ranks share flags in memory:
 * have_shm is this rank's mo_shm_open() (which left its reason in err);
 * rank 0 probes only with it, and a rank without it fails the vote with
 * MO_FLAGS_PLACEMENT_ERR unless rank 0 has
 * its own reason. */
bool mo_bench_ready_shm(mo_result *doc, const mo_bench_ready_spec *spec, int have, int have_shm,
                        char *err, size_t errlen);

/* The end of every main(), after the benchmark freed its own state: frees
 * doc's warnings, prov and opts, then leaves as mo_bench_finish() does. */
int mo_bench_end(int rank, const char *program, mo_result *doc, mo_provenance *prov,
                 mo_options *opts, int status, const char *msg);

/* A page-aligned buffer of bytes (free() it), or NULL. Message buffers are
 * page-aligned so that every benchmark's transfers start alike. */
void *mo_page_alloc(size_t bytes);

/* Rank 0 at the end of a measurement: writes doc as "complete" with
 * results(ctx). Returns 0, or -1 after printing "mo_<program>: error: <why>"
 * (one line on stderr). */
int mo_result_complete(const mo_result *doc, const char *program, mo_results_fn results,
                       const void *ctx);

/* Whether --time-limit is set and start_ns (mo_timer_now_ns()) lies further
 * back than it. */
bool mo_time_up(const mo_options *o, uint64_t start_ns);

/* n iterations per sample (a ceil()ed estimate) held to --min-iters and
 * --max-iters: the last step of every benchmark's choice of iterations. */
long mo_clamp_iters(const mo_options *o, double n);

/* The overlap loops (nbc-overlap, rma-overlap): a timed loop lasts about
 * MO_LOOP_MS of iterations (--quick MO_LOOP_MS_QUICK), from MO_LOOP_MIN_ITERS
 * to MO_LOOP_MAX_ITERS (--quick MO_LOOP_MAX_ITERS_QUICK). */
#define MO_LOOP_MS 60.0
#define MO_LOOP_MS_QUICK 15.0
#define MO_LOOP_MIN_ITERS 30
#define MO_LOOP_MAX_ITERS 2000
#define MO_LOOP_MAX_ITERS_QUICK 400

/* Untimed warm-up iterations of an overlap loop: --warmup (1 at least), at
 * most cap. */
long mo_loop_warmup(const mo_options *o, long cap);

/* Timed iterations of an overlap loop from the slowest rank's pilot (us per
 * iteration): --iters when fixed, else as MO_LOOP_MS says, held to
 * --min-iters and --max-iters (mo_clamp_iters); at most cap. */
long mo_loop_iters(const mo_options *o, double pilot_us, long cap);

/* A benchmark's check (mo_bench_spec.check) for the overlap loops: --iters
 * at most MO_LOOP_MAX_ITERS (their buffers of times hold no more). */
int mo_loop_check(const mo_options *o, void *ctx, char *err, size_t errlen);

/* Ping-pong round trips per sample so that one sample lasts about
 * --sample-ms, given the one-way time in seconds (1 us when unknown);
 * --iters when fixed. */
long mo_round_trips(const mo_options *o, double one_way_s);

/* --verbose: printf(fmt, ...) on stdout, flushed at once so that the lines
 * interleave with stderr's progress lines as they happen; else nothing. */
void mo_verbose(const mo_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Completes a request without spinning a core: polls with MPI_Test and
 * sleeps 1 ms between polls. */
void mo_quiet_wait(MPI_Request *req);

/* Lead benchmarks driven by rank 0's commands: a command is the
 * benchmark's own struct of at most MO_CMD_WORDS int64_t fields, op first;
 * op MO_CMD_QUIT ends the serving. Every rank of ctl takes part in each. */
enum { MO_CMD_WORDS = 6, MO_CMD_QUIT = 0 };

/* Rank 0: sends cmd (size bytes) to the ranks serving on ctl. */
void mo_cmd_send(MPI_Comm ctl, const void *cmd, size_t size);

/* Rank 0: ends the others' mo_cmd_serve(). */
void mo_cmd_quit(MPI_Comm ctl);

/* The ranks but 0: runs each of rank 0's commands, run(state, cmd) with
 * cmd the benchmark's struct, until MO_CMD_QUIT. */
void mo_cmd_serve(MPI_Comm ctl, void (*run)(void *state, const void *cmd), void *state);

/* A barrier over comm that waits like mo_quiet_wait(). */
void mo_quiet_barrier(MPI_Comm comm);

/* Collective over MPI_COMM_WORLD: the lowest world rank on this rank's
 * shared-memory node, which names the node. */
int mo_node_leader(void);

/* On rank 0 (the only one holding p->cpu_binding): adds a warning to doc
 * unless rank_a and rank_b are each bound to one CPU, and not the same one.
 * Does nothing without bindings or if either rank is not in p. */
void mo_warn_if_unbound(mo_result *doc, const mo_provenance *p, int rank_a, int rank_b);

/* A buffer for MPI_T_cvar_read of one control variable (memset it first). */
typedef union mo_cvar_value {
    int i;
    unsigned u;
    long l;
    unsigned long ul;
    long long ll;
    unsigned long long ull;
    char c[256];
} mo_cvar_value;

/* The value read into v as a long long when dt is MPI_INT, MPI_UNSIGNED,
 * MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG or MPI_UNSIGNED_LONG_LONG: true;
 * false for any other type (*out untouched), which the caller interprets. */
bool mo_cvar_integer(MPI_Datatype dt, const mo_cvar_value *v, long long *out);

/* MPI_T_cvar_get_info of control variable i, keeping what the benchmarks use:
 * its name (namelen bytes of room), datatype and binding; MPI_T's return code.
 * MPI_T must be initialised. */
int mo_cvar_info(int i, char *name, int namelen, MPI_Datatype *dt, int *bind);

/* One integer control variable read back through MPI_T. */
typedef struct mo_cvar {
    char name[128];
    long long value;
    bool read; /* false: listed but not readable (value undefined) */
} mo_cvar;

/* Whether name, in lower case, contains one of the n keys (lower case). */
bool mo_name_has(const char *name, const char *const *keys, size_t n);

/* Which control variables mo_cvar_read() keeps, by name, datatype and binding. */
typedef bool (*mo_cvar_filter)(const char *name, MPI_Datatype dt, int bind, const void *arg);

/* The control variables that wanted(name, dt, bind, arg) accepts, in MPI_T's
 * order, read through MPI_T (own MPI_T_init_thread / MPI_T_finalize): up to
 * max into out, the count returned. One is read when it binds no object and
 * its one value reads back: integer types as their value (mo_cvar_integer),
 * strings (MPI_CHAR) not, other types as 0 or 1 (bool-like: any non-zero
 * byte). note (may be NULL) gets why none could be read ("" otherwise). */
int mo_cvar_read(mo_cvar_filter wanted, const void *arg, mo_cvar *out, int max, char *note, size_t notelen);

/* The MPI's integer control variables whose names suggest a size threshold
 * of the point-to-point protocols (eager, rendezvous, cell size, the CMA /
 * XPMEM p2p thresholds, ...), read through MPI_T (own MPI_T_init_thread /
 * MPI_T_finalize): up to max into out, the count returned; note gets why
 * none could be read ("" otherwise). */
int mo_cvar_read_thresholds(mo_cvar *out, int max, char *note, size_t notelen);

/* key: [{"name", "value" (null when not read)}...] for the n cvars of c. */
void mo_cvar_array(mo_json *w, const char *key, const mo_cvar *c, int n);

/* "mpi_cvars" (mo_cvar_array) and "cvar_note" (null when note is empty). */
void mo_cvar_json(mo_json *w, const mo_cvar *c, int n, const char *note);

#endif
