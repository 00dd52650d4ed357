/* mop_reduce.h - the job's statistics reduced inside the job at
 * MPI_Finalize, after the program's last MPI call: a binomial tree over a dup
 * of MPI_COMM_WORLD merges every rank's statistics (mop_job_stats.h) into
 * rank 0, which also gathers one row of totals per rank and writes
 * <outdir>/profile.stats.json (schema mpi-overlap/profile-stats).
 *
 * The tree: in step k (mask = 2^k), a rank with that bit set sends what it
 * holds to rank - mask and is done; a rank without it merges what rank + mask
 * sends, if that rank exists. So rank r's partial covers ranks
 * [r, r + 2^k) and every sum is (lower half) + (upper half): a fixed order
 * the analysis repeats (profiling/job_stats.py). Inner ranks hold one subtree's
 * statistics at a time: their size is the number of distinct bins, functions
 * and regions, not of ranks. */
#ifndef MOP_REDUCE_H
#define MOP_REDUCE_H

#include <stddef.h>

#include "mop_job_stats.h"

#define MOP_STATS_FILE "profile.stats.json"

/* Collective over MPI_COMM_WORLD. `mine` is this rank's statistics (NULL:
 * none could be made, out of memory: the job then gets no statistics file and
 * every rank says so to rank 0), `row` its totals, `bins` its size bins with
 * transfers (row->nbins of them). Consumes `mine`. Returns,
 * on every rank, 0 when rank 0 wrote the file; 1 when it did not (rank 0's err
 * says why); -1 when an MPI call failed on this rank (err). */
int mop_reduce_job(const char *outdir, int rank, int size, mop_job_stats *mine,
                   const mop_job_row *row, const mop_job_bin *bins,
                   const char *library_version, char *err, size_t errlen);

#endif
