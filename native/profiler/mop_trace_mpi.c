/* mop_trace_mpi.c - the MPI side of timeline traces (mop_trace.h): whether
 * one is wanted (MPI_OVERLAP_TRACE), opening the rank's file next to its
 * profile, and the alignment of this rank's clock with rank 0's, measured at
 * MPI_Init and again at MPI_Finalize (docs/profiler.md, "Timeline traces"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mop_clock.h"
#include "mop_fn_ids.h"
#include "mop_region_names.h"
#include "mop_trace.h"

enum { MOP_SYNC_ROUNDS = 8 };
static const uint64_t mop_trace_default_cap = 256ull << 20;

static struct {
    bool wanted;     /* MPI_OVERLAP_TRACE is set */
    bool synced;     /* the start measurement ran (so the end one must too) */
    double s_per_tick;
    uint64_t origin; /* rank 0: its clock at the start measurement = 0 s of the timeline */
    uint64_t sync_ticks;
    double sync_s, sync_rtt_s;
} mop_ts = {.sync_rtt_s = -1.0};

/* One measurement, collective over MPI_COMM_WORLD (on a duplicate, so no
 * message can match the program's). Rank 0 answers each rank's pings with
 * its timeline's seconds; a rank keeps the exchange with the shortest round
 * trip and pairs the middle of it with rank 0's answer (Cristian's method):
 * its clock read *ticks when rank 0's read *s, to within *rtt / 2. */
static int mop_clock_exchange(bool start, uint64_t *ticks, double *s, double *rtt)
{
    MPI_Comm c;
    int rank, size;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS)
        return -1;
    PMPI_Comm_rank(c, &rank);
    PMPI_Comm_size(c, &size);
    PMPI_Barrier(c);
    double spt = mop_ts.s_per_tick;
    if (rank == 0) {
        uint64_t now = mop_now();
        if (start)
            mop_ts.origin = now;
        *ticks = now;
        *s = (double)(now - mop_ts.origin) * spt;
        *rtt = 0.0;
        for (int r = 1; r < size; r++) {
            for (int k = 0; k < MOP_SYNC_ROUNDS; k++) {
                char ping;
                PMPI_Recv(&ping, 1, MPI_CHAR, r, 0, c, MPI_STATUS_IGNORE);
                double t = (double)(mop_now() - mop_ts.origin) * spt;
                PMPI_Send(&t, 1, MPI_DOUBLE, r, 1, c);
            }
        }
    } else {
        double best = INFINITY;
        for (int k = 0; k < MOP_SYNC_ROUNDS; k++) {
            char ping = 0;
            double t = 0;
            uint64_t ta = mop_now();
            PMPI_Send(&ping, 1, MPI_CHAR, 0, 0, c);
            PMPI_Recv(&t, 1, MPI_DOUBLE, 0, 1, c, MPI_STATUS_IGNORE);
            uint64_t tb = mop_now();
            double r = (double)(tb - ta) * spt;
            if (r < best) {
                best = r;
                *ticks = ta + (tb - ta) / 2;
                *s = t;
            }
        }
        *rtt = best;
    }
    PMPI_Comm_free(&c);
    return 0;
}

bool mop_trace_sync_start(double s_per_tick)
{
    const char *on = getenv("MPI_OVERLAP_TRACE");
    mop_ts.wanted = on && *on && strcmp(on, "0") != 0;
    if (!mop_ts.wanted)
        return false;
    mop_ts.s_per_tick = s_per_tick;
    mop_ts.synced = mop_clock_exchange(true, &mop_ts.sync_ticks, &mop_ts.sync_s,
                                       &mop_ts.sync_rtt_s) == 0;
    if (!mop_ts.synced) { /* unaligned: the rank's own clock from its start */
        mop_ts.sync_ticks = mop_now();
        mop_ts.sync_s = 0.0;
        mop_ts.sync_rtt_s = -1.0;
    }
    return true;
}

void mop_trace_sync_end(mop_trace *tr)
{
    if (!mop_ts.synced)
        return;
    uint64_t ticks;
    double s, rtt;
    if (mop_clock_exchange(false, &ticks, &s, &rtt) == 0)
        mop_trace_set_end_sync(tr, ticks, s, rtt);
}

static uint64_t mop_trace_cap(int rank)
{
    const char *s = getenv("MPI_OVERLAP_TRACE_CAP");
    if (!s || !*s)
        return mop_trace_default_cap;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v == 0) {
        if (rank == 0)
            fprintf(stderr, "mpi-overlap: MPI_OVERLAP_TRACE_CAP must be a positive byte count "
                            "(got '%s'); using 256 MiB\n", s);
        return mop_trace_default_cap;
    }
    return v;
}

bool mop_trace_start(mop_trace *tr, mop_process_config *cfg, const char *outdir, int rank,
                     int size, double s_per_tick, bool clock_tsc)
{
    if (!mop_ts.wanted)
        return false;
    char path[1200];
    snprintf(path, sizeof path, "%s/trace.rank-%d.mopt", outdir, rank);
    mop_trace_info info = {
        .rank = rank, .size = size, .s_per_tick = s_per_tick, .clock_tsc = clock_tsc,
        .sync_ticks = mop_ts.sync_ticks, .sync_s = mop_ts.sync_s,
        .sync_rtt_s = mop_ts.sync_rtt_s,
        .fn_names = mop_fn_names, .nfn = mop_fn_count,
        .region_names = mop_region_names,
    };
    if (mop_trace_open(tr, path, mop_trace_cap(rank), &info) != 0) {
        fprintf(stderr, "mpi-overlap: rank %d: no trace: %s\n", rank, tr->st.error);
        return false;
    }
    mop_trace_configure(tr, cfg);
    mop_match_start(tr, rank, size);
    return true;
}
