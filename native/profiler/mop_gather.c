/* mop_gather.c - the job file: every rank's final document gathered to rank
 * 0 at MPI_Finalize; see mop_gather.h.
 *
 * Why a flat gather and not a tree: every byte ends at rank 0 either way, so
 * a tree only adds hops and holds whole subtrees in inner ranks' memory.
 * Rank 0 takes the documents in rank order (MPI_Mprobe of each rank in turn)
 * and writes each at once, so it holds one document at a time and the file
 * is in rank order: the same run gives the same file, and a reader can go
 * through it rank by rank without sorting it. A late rank delays the ones
 * after it in the file, not the end of the gather (which waits for every
 * rank anyway); their messages wait in the MPI meanwhile. */
#define _POSIX_C_SOURCE 200809L
#include "mop_gather.h"

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "mop_output.h"

#define MOP_GATHER_TAG 7301

/* Rank 0's tally, written as the file's last line. */
typedef struct mop_gather_tally {
    int size;
    int in_file;          /* documents written into the file */
    uint64_t bytes;       /* their bytes */
    size_t largest;       /* the longest line */
    unsigned char *state; /* per rank: 0 none, 1 in the file, 2 its own file; | 4: has a rank file */
} mop_gather_tally;

static void mop_rank_list_json(mo_json *w, const char *key, const mop_gather_tally *t,
                               unsigned char want)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (int r = 0; r < t->size; r++)
        if ((t->state[r] & 3) == want)
            mo_json_int64(w, r);
    mo_json_end_array(w);
}

static int mop_tally_json(FILE *f, const mop_gather_tally *t, double gather_s,
                          bool keep_rank_files)
{
    mo_json w;
    mo_json_init_line(&w, f);
    mo_json_begin_document(&w, "mpi-overlap/profile-job", 1);
    mo_json_kv_int64(&w, "ranks", t->size);
    mo_json_kv_int64(&w, "in_file", t->in_file);
    mop_rank_list_json(&w, "own_files", t, 2);   /* wrote profile.rank-N.json instead */
    mo_json_kv_bool(&w, "rank_files_kept", keep_rank_files);
    mo_json_kv_uint64(&w, "bytes", t->bytes);
    mo_json_kv_uint64(&w, "largest_line", t->largest);
    mo_json_kv_double(&w, "gather_s", gather_s);
    mo_json_end_object(&w);
    return mo_json_finish(&w);
}

/* One document into the file; a failed write is remembered in *bad. */
static void mop_put_line(FILE *f, const char *line, size_t len, mop_gather_tally *t, int rank,
                         int *bad)
{
    if (f && !*bad && fwrite(line, 1, len, f) != len)
        *bad = errno ? errno : EIO;
    t->state[rank] = (t->state[rank] & 4) | 1;
    t->in_file++;
    t->bytes += len;
    if (len > t->largest)
        t->largest = len;
}

static int mop_gather_root(MPI_Comm comm, const char *outdir, int size, const char *line,
                           size_t len, unsigned flags, bool keep_rank_files, char *err,
                           size_t errlen)
{
    double t0 = PMPI_Wtime();
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", outdir, MOP_JOB_FILE);
    mop_gather_tally t = {.size = size, .state = calloc((size_t)size, 1)};
    int bad = 0, rc = 0;
    errno = 0;
    FILE *f = fopen(path, "w");
    if (!f)
        bad = errno ? errno : EIO;
    if (!t.state) { /* no tally: still take every message, or the senders wait forever */
        bad = ENOMEM;
        if (f)
            fclose(f);
        f = NULL;
    }
    int own = 1; /* rank 0's own document */
    if (line && !(flags & MOP_GATHER_OWN_FILE)) {
        if (t.state)
            mop_put_line(f, line, len, &t, 0, &bad);
        own = 0;
    }
    if (t.state)
        t.state[0] = (unsigned char)((own ? 2 : 1) | (flags & MOP_GATHER_HAS_RANK_FILE ? 4 : 0));
    char *buf = NULL;
    size_t cap = 0;
    for (int from = 1; from < size; from++) {
        MPI_Message msg;
        MPI_Status st;
        int n = 0;
        if (PMPI_Mprobe(from, MOP_GATHER_TAG, comm, &msg, &st) != MPI_SUCCESS ||
            PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < 1) {
            snprintf(err, errlen, "the job file's gather failed (MPI error in MPI_Mprobe)");
            rc = -1;
            break;
        }
        if ((size_t)n > cap) {
            char *more = realloc(buf, (size_t)n);
            if (!more) { /* into one byte: MPI_ERR_TRUNCATE (returned), the rank is lost */
                bad = ENOMEM;
                char one;
                PMPI_Mrecv(&one, 1, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
                continue;
            }
            buf = more;
            cap = (size_t)n;
        }
        PMPI_Mrecv(buf, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        if (!t.state)
            continue;
        unsigned char fl = (unsigned char)buf[0];
        t.state[from] = fl & MOP_GATHER_HAS_RANK_FILE ? 4 : 0;
        if (fl & MOP_GATHER_OWN_FILE || n == 1)
            t.state[from] |= 2;
        else
            mop_put_line(f, buf + 1, (size_t)n - 1, &t, from, &bad);
    }
    free(buf);
    if (f && !bad && mop_tally_json(f, &t, PMPI_Wtime() - t0, keep_rank_files) != 0)
        bad = errno ? errno : EIO;
    if (f && fclose(f) != 0 && !bad)
        bad = errno ? errno : EIO;
    if (bad && rc == 0) {
        snprintf(err, errlen, "cannot write %s: %s; the ranks' last snapshots stand", path,
                 strerror(bad));
        rc = -1;
    }
    /* Only now is every document in a whole file: the snapshots they replace go. */
    if (rc == 0 && !keep_rank_files) {
        for (int r = 0; r < size; r++) {
            if ((t.state[r] & 3) == 1 && t.state[r] & 4) {
                mop_output_rank_path(path, sizeof path, outdir, r);
                unlink(path);
            }
        }
    }
    free(t.state);
    return rc < 0 ? -1 : own;
}

int mop_gather_job(const char *outdir, int rank, int size, const char *line, size_t len,
                   unsigned flags, bool keep_rank_files, char *err, size_t errlen)
{
    MPI_Comm comm;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        snprintf(err, errlen, "no job file: MPI_Comm_dup failed");
        return -1;
    }
    /* A failure here (a message rank 0 has no memory for) must not end the job. */
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (!line || len + 1 > (size_t)INT_MAX)
        flags |= MOP_GATHER_OWN_FILE;
    int rc;
    if (rank == 0) {
        rc = mop_gather_root(comm, outdir, size, line, len, flags, keep_rank_files, err,
                             errlen);
    } else {
        /* One message: a flag byte, then the line. Out of memory: the flag alone. */
        size_t n = flags & MOP_GATHER_OWN_FILE ? 1 : len + 1;
        char *msg = malloc(n);
        char flag_only = (char)(flags | MOP_GATHER_OWN_FILE);
        if (msg) {
            msg[0] = (char)flags;
            if (n > 1)
                memcpy(msg + 1, line, len);
        }
        rc = PMPI_Send(msg ? msg : &flag_only, msg ? (int)n : 1, MPI_BYTE, 0, MOP_GATHER_TAG,
                       comm) == MPI_SUCCESS ? 0 : -1;
        if (rc < 0)
            snprintf(err, errlen, "the job file's gather failed (MPI error in MPI_Send)");
        else if (!msg || flags & MOP_GATHER_OWN_FILE)
            rc = 1;
        free(msg);
    }
    PMPI_Comm_free(&comm);
    return rc;
}
