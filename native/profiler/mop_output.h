/* mop_output.h - one rank's profile document (schema mpi-overlap/profile-rank
 * v1): who and what was measured, with which table and clock, whether the
 * run ended properly, and the measures. Written via a temporary file and a
 * rename, so a reader never sees half a document. */
#ifndef MOP_OUTPUT_H
#define MOP_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include "mop_cpu.h"
#include "mop_process.h"
#include "mop_profile_json.h"
#include "mop_trace.h"
#include "mop_xfer_table.h"

/* One reading of the profiler's clock paired with CLOCK_REALTIME (the clock of
 * packet captures and logs): ticks at the middle of the realtime read, within
 * +- uncertainty_s (half the tightest of a few tries). Two of them (MPI_Init and
 * the write) map the rank's ticks onto wall-clock time. */
typedef struct mop_clock_anchor {
    uint64_t ticks;
    double realtime_s;
    double uncertainty_s;
} mop_clock_anchor;

/* Computation as CPU time (mop_cpu.h): the document's "cpu" object. */
typedef struct mop_output_cpu {
    double read_ns;     /* one read of the thread's CPU clock at MPI_Init (0: not readable) */
    double min_piece_s; /* pieces at least this long are read (0: reads off) */
    mop_cpu_sums sums;  /* every thread's measured pieces */
    /* The thread of MPI_Init since MPI_Init, from the scheduler (/proc/.../schedstat):
     * its time on a CPU and waiting on a run queue. sched false: not available. */
    bool sched;
    double thread_cpu_s, run_delay_s;
} mop_output_cpu;

/* The measured pieces' time off the CPU, s: their wall-clock time less their
 * CPU time (at least 0). */
double mop_output_off_cpu_s(const mop_output_cpu *c, double s_per_tick);

typedef struct mop_output_info {
    const char *status; /* complete | incomplete | running | disabled */
    const char *reason; /* why not complete, or NULL */
    int rank, size, nodes, threads;
    const char *library_version;
    const mop_xfer_table *table;
    const char *table_path;
    bool table_forced;
    const char *clock;
    double s_per_tick;
    double clock_read_ns; /* one read of that clock, timed at MPI_Init; 0: not timed */
    mop_clock_anchor anchors[2]; /* at MPI_Init and now; ticks 0: not taken */
    double wall_s;
    int queue_events;
    bool count_only; /* events counted, not processed: "processing": "off" */
    mop_names names;
    const mop_trace_stats *trace; /* NULL or not wanted: no "trace" object */
    const mop_output_cpu *cpu;    /* NULL: no "cpu" object (a disabled rank) */
    /* The library's own time once per launch, s: in MPI_Init after PMPI_Init,
     * and in MPI_Finalize up to this document (final documents at
     * MPI_Finalize only); 0: not known (no "library_s"; no "finalize"). */
    double start_s, stop_s;
} mop_output_info;

/* A file whole or not at all: `write` writes it (0, or non-zero on failure,
 * errno naming the cause) into a temporary file that is renamed to `path`
 * only once whole, so a failed write (disk full, quota) never leaves a cut
 * file under the name, and the previous file, if any, stays. Returns 0, or -1
 * with err. */
int mop_output_write_whole(const char *path, int (*write)(FILE *f, const void *ctx),
                           const void *ctx, char *err, size_t errlen);

/* The name of a rank's own document: <outdir>/profile.rank-<rank>.json. */
void mop_output_rank_path(char *path, size_t cap, const char *outdir, int rank);

/* Writes <outdir>/profile.rank-<rank>.json. Returns 0, or -1 with err. Its
 * "maps" are the mappings mop_places_load (mop_places.h) read last. */
int mop_output_write(const char *outdir, const mop_output_info *info, const mop_process *p,
                     char *err, size_t errlen);

/* The same document on one line ending in a newline, in *line (malloc'ed,
 * *len bytes), for the job file (mop_gather.h). Returns 0, or -1 (out of
 * memory). */
int mop_output_line(const mop_output_info *info, const mop_process *p, char **line,
                    size_t *len);

/* Writes a document made by mop_output_line as <outdir>/profile.rank-<rank>.json
 * (the job file could not take it). Returns 0, or -1 with err. */
int mop_output_write_text(const char *outdir, int rank, const char *text, size_t len,
                          char *err, size_t errlen);

#endif
