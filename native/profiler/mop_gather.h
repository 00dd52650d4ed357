/* mop_gather.h - the job file: at MPI_Finalize, after the program's last MPI
 * call, every rank sends its final profile document to rank 0, which writes
 * them into one file, <outdir>/profile.job.jsonl: one line per rank (in rank
 * order; each names its rank), then one line on the gather itself
 * (schema mpi-overlap/profile-job). One file per job instead of one per rank:
 * the per-rank files become optional (docs/profiler.md, "Many ranks").
 *
 * A file without that last line was cut (rank 0 killed while writing): its
 * whole lines stand. A rank that never reaches MPI_Finalize is not waited for
 * by anyone but rank 0, like PMPI_Finalize itself; its last snapshot
 * (profile.rank-N.json) stands, and rank 0's file says which ranks it has. */
#ifndef MOP_GATHER_H
#define MOP_GATHER_H

#include <stdbool.h>
#include <stddef.h>

#define MOP_JOB_FILE "profile.job.jsonl"

/* Jobs of up to this many ranks keep profile.rank-N.json files too by default. */
#define MOP_RANK_FILES_UP_TO 8

/* What a rank tells rank 0 with its document. */
enum {
    /* profile.rank-N.json of this rank is on disk (a snapshot, or its
     * document at MPI_Init): rank 0 removes it once the job file is whole,
     * unless the per-rank files are kept. */
    MOP_GATHER_HAS_RANK_FILE = 1,
    /* No document follows: this rank writes its own per-rank file (its
     * document would not fit one message). */
    MOP_GATHER_OWN_FILE = 2,
};

/* Collective over MPI_COMM_WORLD (it duplicates it: the program's pending
 * receives cannot take these messages). `line` is this rank's document on
 * one line with its newline (NULL: none, e.g. out of memory), `flags`
 * MOP_GATHER_*. Returns 0 when the document went to rank 0, 1 when the caller
 * must write its own per-rank file instead, -1 on an MPI error (err says
 * which, rank 0's: also the file error). */
int mop_gather_job(const char *outdir, int rank, int size, const char *line, size_t len,
                   unsigned flags, bool keep_rank_files, char *err, size_t errlen);

#endif
