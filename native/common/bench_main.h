/* bench_main.h - the one main() of the benchmarks. A benchmark declares its
 * kernel (its options, set-up, one measured point or its own measurement,
 * results writer and teardown) and mo_bench_main() does the rest: MPI,
 * options, provenance, timer and work calibration, the result document, the
 * time limit, progress lines and teardown, the way each OSU benchmark is a
 * kernel over a thin shared util. It is a kernel's one header for that util:
 * it brings the driver's kit (bench_util, fields, json, options, points,
 * provenance, result, stats, timer, work), so a kernel includes only what
 * else it uses (shmsync.h, sizes.h, the profiler's headers). */
#ifndef MO_BENCH_MAIN_H
#define MO_BENCH_MAIN_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_util.h"
#include "fields.h"
#include "json.h"
#include "options.h"
#include "points.h"
#include "provenance.h"
#include "result.h"
#include "stats.h"
#include "timer.h"
#include "work.h"

/* What the driver owns and hands to every hook of a kernel. */
typedef struct mo_bench {
    int rank, nranks;  /* in MPI_COMM_WORLD */
    int provided;      /* MPI_Init_thread's, with kernel.thread_level; else MPI_THREAD_SINGLE */
    uint64_t start_ns; /* the program's start: --time-limit counts from here */
    int argc;
    char **argv;
    const char *program;   /* the kernel's spec.program: "mo_<program>: ..." lines */
    mo_results_fn results; /* the kernel's results writer, and its state */
    void *state;
    mo_bench_spec spec;         /* the kernel's, its ext wrapped with its fields */
    mo_fields_options fields;
    mo_options opts;
    mo_provenance prov;
    mo_timer_info timer;
    mo_work_calib work;
    mo_result doc;     /* rank 0 adds warnings to it */
    /* Set by the kernel's setup(), read by the vote before measuring: */
    int have;          /* this rank's set-up succeeded (default 1) */
    int have_shm;      /* -1: the kernel has no shared flags; else whether this
                        * rank's mo_shm_open() of them succeeded (its reason in err) */
    MPI_Comm ctl;      /* kernels with commands: rank 0's commands go over it
                        * (a copy of world, made before setup() and freed
                        * after teardown()); else MPI_COMM_NULL */
    MPI_Comm comm;     /* lockstep kernels: the ranks that measure together, world
                        * rank 0 first; MPI_COMM_NULL on the others (default).
                        * Under the kernel's pair: world ranks 0 and 1, set
                        * before setup() and freed after teardown() */
    mo_bench_ready_spec ready; /* the kernel sets calib_ms, calib_samples (default 5),
                                * unbound_peer, no_alloc, quiet, no_work_loop */
    char no_alloc[128];        /* room for ready.no_alloc */
    char err[512];             /* a set-up's reason (mo_shm_open's) */
    /* The point loop's state, for finish(): */
    int done, total;
    bool time_up;
} mo_bench;

/* Who measures a point. */
typedef enum mo_bench_mode {
    MO_BENCH_LEAD,     /* rank 0 measures every point; the others serve() */
    MO_BENCH_LOCKSTEP, /* every rank of b->comm measures every point together */
} mo_bench_mode;

/* What point() returns. */
enum {
    MO_POINT_OOM = -1, /* stop: rank 0 says "out of memory", status 1 */
    MO_POINT_OK = 0,
    MO_POINT_LAST = 1, /* measured and reported, then stop: the time ran out inside (lead only) */
};

/* A benchmark. Hooks that may be NULL say so; state is the kernel's own
 * (zeroed by the benchmark, static or in main's frame). */
typedef struct mo_bench_kernel {
    mo_bench_spec spec;     /* its options and their checks (bench_util.h) */
    /* Its options declared as data (fields.h; MO_KERNEL_FIELDS), their
     * values in spec.ext->ctx; spec.ext's parse, finalize and write_json
     * are then for what the rows do not say. May be NULL. */
    const mo_field *fields;
    int nfields;
    const char *benchmark;  /* the result document's "benchmark"; NULL: spec.program */
    mo_results_fn results;  /* the document's "results" from state */
    void *state;
    /* b->comm is the pair of world ranks 0 and 1 (MPI_COMM_NULL on the
     * others), made and freed by the driver: the kernel neither splits nor
     * frees it. */
    bool pair;
    /* The thread level to ask MPI_Init_thread for, read from argv before
     * MPI is up (the options are parsed after); NULL: MPI_Init. */
    int (*thread_level)(int argc, char **argv);
    /* Once the options are parsed, before anything else: adjusts options. May be NULL. */
    void (*configure)(mo_bench *b, void *state);
    /* Flags shared between the ranks (shmsync.h) in the kernel's state:
     * opened by the driver on every rank before setup() (b->have_shm, the
     * reason in b->err) and closed after teardown(). NULL: none. */
    struct mo_shm *shm;
    /* Every rank, before the vote: communicators, buffers, the plan; sets
     * b->have, b->comm and b->ready's fields. Rank 0 may add warnings to
     * b->doc. */
    void (*setup)(mo_bench *b, void *state);
    /* Every rank, after the vote: what needs the calibration or a late
     * allocation. Returns 0 to measure, 1 to skip measuring on this rank,
     * -1 to skip it and fail (the kernel said why). May be NULL. */
    int (*start)(mo_bench *b, void *state);

    /* The point loop, unless measure is set: */
    mo_bench_mode mode;
    const char *unit; /* the time limit's warning: "measured <done> of <total> <unit>" */
    /* Points to measure (rank 0; lockstep: every rank of b->comm): the
     * count planned points at once setup() is done (a field of the
     * kernel's state), or else npoints(). */
    const int *planned;
    int (*npoints)(const mo_bench *b, const void *state);
    /* Measures point i (lockstep: on every rank of b->comm); rank 0 prints
     * its --verbose lines and names it in label for the progress line.
     * Returns MO_POINT_*. */
    int (*point)(mo_bench *b, void *state, int i, char *label, size_t labellen);
    void (*serve)(mo_bench *b, void *state); /* lead: ranks other than 0 until quit */
    void (*quit)(mo_bench *b, void *state);  /* lead: rank 0 after the loop; may be NULL */
    /* Rank 0 sends commands over b->ctl (mo_cmd_send; bench_util.h). With
     * run_cmd, a lead kernel's serve and quit are the driver's: the other
     * ranks run each command with run_cmd(state, cmd) until rank 0's
     * mo_cmd_quit() after the loop. With measure, only rank 0 runs it; the
     * other ranks that reach it serve run_cmd likewise, over b->comm for a
     * pair kernel (no b->ctl is made), else over b->ctl, until measure's
     * mo_cmd_quit(). */
    bool commands;
    void (*run_cmd)(void *state, const void *cmd);
    /* Rank 0 after the loop, before the document is complete: its own
     * warnings. May be NULL. */
    void (*finish)(mo_bench *b, void *state);
    bool recheck_work;  /* mo_work_recheck() before the document is complete */
    bool clock_at_loop; /* the time limit counts from the loop's start, not the program's */

    /* Replaces the point loop: every rank (rank 0 alone with run_cmd); rank
     * 0 completes b->doc. Returns this rank's status (0, or non-zero after
     * saying why). May be NULL. */
    int (*measure)(mo_bench *b, void *state);

    bool verbose_done; /* --verbose: rank 0 ends with "mo_<program>: done in <s> s" */
    /* Every rank, after a failed vote or the measurement: frees state. May be NULL. */
    void (*teardown)(mo_bench *b, void *state);
    /* A pair kernel's points (mo_pair_points) in its state: freed by the
     * driver after teardown(). NULL: none. */
    struct mo_pair_points *pair_points;
} mo_bench_kernel;

/* A kernel's fields: .fields and .nfields from one static table. */
#define MO_KERNEL_FIELDS(table) .fields = (table), .nfields = MO_NFIELDS(table)

/* The whole main(): returns its exit status (0; 1 when measuring failed;
 * 2 for bad options or a failed set-up; 0 after --help). */
int mo_bench_main(int argc, char **argv, const mo_bench_kernel *k);

/* The largest --sizes in bytes, 1 at least: the room a message buffer needs. */
size_t mo_bench_largest(const mo_bench *b);

/* start() of a pair kernel that allocates once rank 0 has calibrated:
 * whether every rank of b->comm has what it needs (have, this rank's); when
 * not, rank 0 says "mo_<program>: error: cannot allocate <bytes>-byte message
 * buffers". Returns start()'s answer: 0 to measure, else 1 (rank 1) or -1
 * (rank 0). */
int mo_bench_pair_allocated(mo_bench *b, int pair_rank, bool have, size_t bytes);

/* npoints() for a kernel with one point per size of --sizes. */
int mo_bench_nsizes(const mo_bench *b, const void *state);

/* Pair kernels' setup(): page-aligned send and receive buffers of the
 * largest --sizes (1 byte at least) on the ranks of b->comm, the send one
 * filled with rank + 1 and the receive one zeroed; b->have is false when
 * either is missing, and the vote's allocation error names their size. */
void mo_bench_pair_buffers(mo_bench *b, unsigned char **sbuf, unsigned char **rbuf);

/* Lockstep pair kernels that measure one point per size (comm-overlap,
 * inflation): the pair's rank, buffers and scratch, rank 0's points. */
typedef struct mo_pair_points {
    int rank;                   /* in b->comm */
    unsigned char *sbuf, *rbuf; /* mo_bench_pair_buffers() */
    double *scratch;            /* the pair's */
    /* Rank 0's, one per size; on both ranks points.ntotal is the
     * kernel's .planned */
    mo_points points;
    void (*fini)(void *point); /* frees what init() gave a point; NULL: nothing */
} mo_pair_points;

/* setup(): the pair's buffers, nscratch doubles of scratch on the pair, and
 * on rank 0 a zeroed point per size handed to init(point, bytes, arg)
 * (returns 0, or -1 out of memory), each freed by fini(point) at the end;
 * b->have says whether all of it came, and ranks 0 and 1 are warned of when
 * not bound. The kernel names pp as its .pair_points. */
void mo_pair_points_setup(mo_bench *b, mo_pair_points *pp, size_t item, size_t nscratch,
                          int (*init)(void *point, uint64_t bytes, void *arg), void (*fini)(void *point),
                          void *arg);

/* point(): where point i is measured, rank 0's or else local (which rank 1
 * drops); then mo_pair_point_done(). */
void *mo_pair_point(const mo_pair_points *pp, int i, void *local);

/* Rank 0 after point i of bytes: counts it and names it in label. */
void mo_pair_point_done(mo_pair_points *pp, int i, uint64_t bytes, char *label, size_t labellen);

/* The driver after teardown(): each planned point through pp->fini (it also
 * meets points that init() never reached, zeroed), then the rest; pp is left
 * with no points, planned or measured. */
void mo_pair_points_free(mo_pair_points *pp);

/* Rank 0 after a point: the running document again, a warning line on
 * failure (for kernels with their own measure()). */
void mo_bench_running(mo_bench *b);

/* Rank 0 at the end of a measurement: "mo_<program>: error: out of memory"
 * and -1 when oom; else the time limit's warning when b->time_up (counting
 * b->done of b->total unit), finish(), mo_work_recheck() when recheck_work,
 * and the complete document (mo_result_complete's status). The point loop's
 * end; kernels with their own measure() end with it too. */
int mo_bench_conclude(mo_bench *b, bool oom, const char *unit, void (*finish)(mo_bench *b, void *state),
                      bool recheck_work);

#endif
