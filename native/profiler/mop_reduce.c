/* mop_reduce.c - the job's statistics reduced up a binomial tree to rank 0
 * and written as profile.stats.json; see mop_reduce.h.
 *
 * A subtree that could not be reduced (out of memory, a malformed message)
 * is passed up as an empty message: the whole reduction is then void and
 * rank 0 writes no statistics rather than statistics of some ranks that look
 * like the job's. Every rank still takes part to the end, so no rank waits
 * forever for a message that never comes. */
#define _POSIX_C_SOURCE 200809L
#include "mop_reduce.h"

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mop_output.h"

#define MOP_REDUCE_TAG 7302

/* Takes rank `from`'s subtree and merges it into *mine; false when that or
 * anything below it failed. */
static bool mop_reduce_take(MPI_Comm comm, int from, mop_job_stats *mine, bool ok,
                            uint64_t *largest)
{
    MPI_Message msg;
    MPI_Status st;
    int n = 0;
    if (PMPI_Mprobe(from, MOP_REDUCE_TAG, comm, &msg, &st) != MPI_SUCCESS ||
        PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS)
        return false; /* nothing was matched: nothing to drain */
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    unsigned char one;
    if (PMPI_Mrecv(buf ? buf : &one, buf ? n : 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS || !buf || n == 0)
        ok = false;
    if ((uint64_t)n > *largest)
        *largest = (uint64_t)n;
    mop_job_stats *theirs = ok ? malloc(sizeof *theirs) : NULL; /* 50 KB: not on the stack */
    if (theirs && mop_job_stats_unpack(theirs, buf, (size_t)n) == 0) {
        ok = mop_job_stats_merge(mine, theirs) == 0;
        mop_job_stats_free(theirs);
    } else {
        ok = false;
    }
    free(theirs);
    free(buf);
    return ok;
}

typedef struct mop_stats_source {
    const mop_job_stats *s;
    const mop_job_stats_info *info;
} mop_stats_source;

static int mop_write_stats(FILE *f, const void *ctx)
{
    const mop_stats_source *src = ctx;
    return mop_job_stats_json(f, src->s, src->info) != 0 || fputc('\n', f) == EOF;
}

static int mop_reduce_write(const char *outdir, const mop_job_stats *s,
                            const mop_job_stats_info *info, char *err, size_t errlen)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", outdir, MOP_STATS_FILE);
    mop_stats_source src = {s, info};
    return mop_output_write_whole(path, mop_write_stats, &src, err, errlen);
}

/* Every rank's bins with transfers to rank 0, rank after rank (MPI_Gatherv),
 * their counts known there from the rows already gathered. Rank 0 gets them in
 * *all (malloc'ed). */
static int mop_gather_bins(MPI_Comm comm, int rank, int size, const mop_job_row *rows,
                           const mop_job_bin *bins, int nbins, mop_job_bin **all)
{
    int *bytes = NULL, *at = NULL, total = 0;
    mop_job_bin *got = NULL;
    if (rank == 0) {
        bytes = malloc((size_t)size * sizeof *bytes);
        at = malloc((size_t)size * sizeof *at);
        for (int r = 0; bytes && at && r < size; r++) {
            at[r] = total * (int)sizeof *got;
            bytes[r] = (int)rows[r].nbins * (int)sizeof *got;
            total += (int)rows[r].nbins;
        }
        got = bytes && at ? malloc((size_t)(total ? total : 1) * sizeof *got) : NULL;
    }
    int ok = rank != 0 || got; /* without room at rank 0, nobody sends */
    int rc = PMPI_Bcast(&ok, 1, MPI_INT, 0, comm) == MPI_SUCCESS && ok &&
                     PMPI_Gatherv(bins, nbins * (int)sizeof *bins, MPI_BYTE, got, bytes, at,
                                  MPI_BYTE, 0, comm) == MPI_SUCCESS
                 ? 0 : -1;
    free(bytes);
    free(at);
    if (rc != 0)
        free(got);
    else
        *all = got;
    return rc;
}

int mop_reduce_job(const char *outdir, int rank, int size, mop_job_stats *mine,
                   const mop_job_row *row, const mop_job_bin *bins,
                   const char *library_version, char *err, size_t errlen)
{
    MPI_Comm comm;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        snprintf(err, errlen, "no job statistics: MPI_Comm_dup failed");
        if (mine)
            mop_job_stats_free(mine);
        return -1;
    }
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    double t0 = PMPI_Wtime();
    bool ok = mine != NULL; /* false: this subtree is void, mine is neither sent nor merged */
    uint64_t largest = 0;
    int rc = 0;
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            unsigned char *buf = NULL;
            size_t len = 0;
            if (!ok || mop_job_stats_pack(mine, &buf, &len) != 0 || len > (size_t)INT_MAX) {
                free(buf);
                buf = NULL;
                len = 0; /* the empty message: void */
            }
            unsigned char none;
            if (PMPI_Send(buf ? buf : &none, (int)len, MPI_BYTE, rank - mask, MOP_REDUCE_TAG,
                          comm) != MPI_SUCCESS) {
                snprintf(err, errlen, "the job statistics' reduction failed (MPI_Send)");
                rc = -1;
            }
            free(buf);
            break;
        }
        if (rank + mask < size)
            ok = mop_reduce_take(comm, rank + mask, mine, ok, &largest) && ok;
    }
    /* The rows: fixed-size records, rank 0 alone holds them all. */
    mop_job_row *rows = rank == 0 ? calloc((size_t)size, sizeof *rows) : NULL;
    int have_rows = rows != NULL; /* rank 0's: without room there, nobody sends a row */
    if (PMPI_Bcast(&have_rows, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        have_rows = 0;
    if (have_rows &&
        PMPI_Gather(row, (int)sizeof *row, MPI_BYTE, rows, (int)sizeof *row, MPI_BYTE, 0,
                    comm) != MPI_SUCCESS && rc == 0) {
        snprintf(err, errlen, "the job statistics' gather of rows failed");
        rc = -1;
    }
    mop_job_bin *all_bins = NULL;
    if (have_rows && mop_gather_bins(comm, rank, size, rows, bins, (int)row->nbins,
                                     &all_bins) != 0 && rc == 0) {
        snprintf(err, errlen, "the job statistics' gather of size bins failed");
        rc = -1;
    }
    if (rank == 0 && rc == 0) {
        if (!ok || !rows) {
            snprintf(err, errlen, "no job statistics: a rank ran out of memory reducing them");
            rc = -1;
        } else {
            mop_job_stats_info info = {.rows = rows, .nrows = size, .bins = all_bins,
                                       .library_version = library_version,
                                       .reduce_s = PMPI_Wtime() - t0, .largest_message = largest};
            rc = mop_reduce_write(outdir, mine, &info, err, errlen);
        }
    }
    free(rows);
    free(all_bins);
    if (mine)
        mop_job_stats_free(mine);
    /* Every rank learns whether the file stands: where it stands for the rank
     * documents, a rank whose statistics went nowhere keeps its own file. */
    int stands = rank == 0 && rc == 0;
    if (PMPI_Bcast(&stands, 1, MPI_INT, 0, comm) != MPI_SUCCESS && rc == 0) {
        snprintf(err, errlen, "the job statistics' outcome could not be shared (MPI_Bcast)");
        rc = -1;
    }
    PMPI_Comm_free(&comm);
    if (rc < 0 && rank != 0)
        return -1;
    if (!stands && rank != 0)
        snprintf(err, errlen, "rank 0 wrote no job statistics");
    return stands ? 0 : 1;
}
