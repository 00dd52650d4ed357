/* wire_probe.c - mo_wire_probe: the messages of `mpi-overlap cluster
 * wire-check`, whose ground truth is a packet capture of the link between two
 * (emulated) nodes. It runs under the profiler with a timeline trace, which
 * gives every message its overlap bounds; the capture gives the time every
 * byte crossed the wire (src/mpi_overlap/cluster/wire_check.py compares them).
 *
 * Rank 0 sends, rank 1 receives. Per size: a few untimed blocking messages
 * (connection set-up, protocol warm-up), the one-way time X by ping-pong, then
 * for each receiver pattern `--reps` messages:
 *   both ranks: barrier;
 *   rank 1: MPI_Irecv, a 1-byte "ready" send to rank 0, compute c,
 *           MPI_Wait, with c = 0 ("exposed"), X/2 ("partial") or 2X ("hidden");
 *   rank 0: receives "ready" (so the receive is posted before any byte
 *           moves: the whole transfer lies between post and completion),
 *           computes --lead-us (default 200), MPI_Isend, MPI_Wait;
 *   each message in a profiler region "wire/<bytes>/<pattern>/<rep>" (on
 *   both ranks), then both compute --gap-us, so consecutive messages stand
 *   apart on the wire.
 * The program prints one line per message on rank 1 (region and c) and
 * nothing it measured itself is used as truth: the wire and the trace are. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_overlap.h"
#include "sizes.h"
#include "stats.h"
#include "timer.h"
#include "work.h"

#define DEFAULT_SIZES "1M,4M"
#define WARMUP 3
#define PINGPONGS 5
#define DATA_TAG 41
#define READY_TAG 42
#define REGION_LEN 64

static const char *const patterns[] = {"exposed", "partial", "hidden"};
static const double pattern_factor[] = {0.0, 0.5, 2.0};
#define NPATTERNS 3

typedef struct probe_opts {
    const char *sizes;
    long reps;
    double lead_us, gap_us;
} probe_opts;

static void work_us(const mo_work_calib *c, double us)
{
    if (us > 0)
        mo_work((uint64_t)(us * c->units_per_us));
}

static int parse(int argc, char **argv, probe_opts *o)
{
    *o = (probe_opts){DEFAULT_SIZES, 3, 200.0, 3000.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--sizes") == 0 && v) {
            o->sizes = v;
        } else if (strcmp(a, "--reps") == 0 && v) {
            o->reps = strtol(v, NULL, 10);
        } else if (strcmp(a, "--lead-us") == 0 && v) {
            o->lead_us = strtod(v, NULL);
        } else if (strcmp(a, "--gap-us") == 0 && v) {
            o->gap_us = strtod(v, NULL);
        } else {
            fprintf(stderr, "mo_wire_probe: unknown or incomplete option '%s' (usage: "
                            "mo_wire_probe [--sizes LIST] [--reps N] [--lead-us U] "
                            "[--gap-us U])\n", a);
            return -1;
        }
        i++;
    }
    if (o->reps < 1 || o->reps > 1000 || !(o->lead_us >= 0) || !(o->gap_us >= 0)) {
        fprintf(stderr, "mo_wire_probe: --reps must be 1..1000, --lead-us and --gap-us >= 0\n");
        return -1;
    }
    return 0;
}

/* One-way seconds of `bytes` by ping-pong (the median of PINGPONGS round trips
 * halved), known to both ranks. */
static double one_way_s(char *buf, uint64_t bytes, int rank)
{
    double one_way[PINGPONGS];
    for (int i = 0; i < PINGPONGS; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t t0 = mo_timer_now_ns();
        if (rank == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, 1, DATA_TAG, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, DATA_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, DATA_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, 0, DATA_TAG, MPI_COMM_WORLD);
        }
        one_way[i] = (double)(mo_timer_now_ns() - t0) * 1e-9 / 2;
    }
    double x = mo_stats_median(one_way, PINGPONGS);
    MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return x;
}

static void one_message(char *buf, uint64_t bytes, int rank, const probe_opts *o,
                        const mo_work_calib *wc, double compute_us, const char *region)
{
    MPI_Request req;
    char ready = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OVERLAP_REGION_BEGIN(region);
    if (rank == 1) {
        /* The receive is posted before the sender may start: a late receiver (a
         * busy machine) cannot let the data arrive before its post. */
        MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, DATA_TAG, MPI_COMM_WORLD, &req);
        MPI_Send(&ready, 1, MPI_BYTE, 0, READY_TAG, MPI_COMM_WORLD);
        work_us(wc, compute_us);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        MPI_Recv(&ready, 1, MPI_BYTE, 1, READY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        work_us(wc, o->lead_us);
        MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, DATA_TAG, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_OVERLAP_REGION_END(region);
    work_us(wc, o->gap_us);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    probe_opts o;
    mo_sizes sizes = {0};
    char err[256];
    int bad = parse(argc, argv, &o) != 0 || mo_sizes_parse(o.sizes, &sizes, err, sizeof err) != 0;
    if (bad && rank == 0 && sizes.n == 0 && err[0])
        fprintf(stderr, "mo_wire_probe: --sizes: %s\n", err);
    if (!bad && (size != 2 || sizes.v[sizes.n - 1] > (uint64_t)INT32_MAX)) {
        if (rank == 0)
            fprintf(stderr, "mo_wire_probe: needs exactly 2 ranks and sizes below 2 GiB\n");
        bad = 1;
    }
    if (bad) {
        mo_sizes_free(&sizes);
        MPI_Finalize();
        return 2;
    }
    mo_work_calib wc;
    if (mo_work_calibrate(&wc, 2.0, 7) != 0) {
        fprintf(stderr, "mo_wire_probe: rank %d could not calibrate its work loop\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    char *buf = calloc(sizes.v[sizes.n - 1] + 1, 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t s = 0; s < sizes.n; s++) {
        uint64_t bytes = sizes.v[s];
        for (int i = 0; i < WARMUP; i++)
            one_message(buf, bytes, rank, &o, &wc, 0, "warm-up");
        double x = one_way_s(buf, bytes, rank);
        for (int p = 0; p < NPATTERNS; p++)
            for (long r = 0; r < o.reps; r++) {
                char region[REGION_LEN];
                snprintf(region, sizeof region, "wire/%llu/%s/%ld", (unsigned long long)bytes,
                         patterns[p], r);
                double c_us = pattern_factor[p] * x * 1e6;
                one_message(buf, bytes, rank, &o, &wc, c_us, region);
                if (rank == 1)
                    printf("%s compute_us=%.1f one_way_us=%.1f\n", region, c_us, x * 1e6);
            }
    }
    free(buf);
    mo_sizes_free(&sizes);
    MPI_Finalize();
    return 0;
}
