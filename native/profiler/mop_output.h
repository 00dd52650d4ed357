/* mop_output.h - one rank's profile document (schema mpi-overlap/profile-rank
 * v1): who and what was measured, with which table and clock, whether the
 * run ended properly, and the measures. Written via a temporary file and a
 * rename, so a reader never sees half a document. */
#ifndef MOP_OUTPUT_H
#define MOP_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "mop_process.h"
#include "mop_profile_json.h"
#include "mop_trace.h"
#include "mop_xfer_table.h"

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
    double wall_s;
    int queue_events;
    mop_names names;
    const mop_trace_stats *trace; /* NULL or not wanted: no "trace" object */
} mop_output_info;

/* Writes <outdir>/profile.rank-<rank>.json. Returns 0, or -1 with err. */
int mop_output_write(const char *outdir, const mop_output_info *info, const mop_process *p,
                     char *err, size_t errlen);

#endif
