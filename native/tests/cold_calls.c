/* cold_calls.c - what the profiler adds to MPI calls made after a computation
 * has evicted its code's data from the caches, as an application's are: one
 * rank; each iteration sweeps SWEEP_KB of memory (a[k] += 1), then times a
 * region begin, MPI_Irecv and MPI_Isend of 8 bytes to itself on
 * MPI_COMM_SELF, MPI_Waitall and the region's end, each call on its own
 * (CLOCK_MONOTONIC through mo_timer_now_ns: the same clock with or without
 * the profiler). With SWEEP_KB 0 the calls run hot, as in a message-rate
 * loop. Prints one line of JSON: the mean ns per iteration of each call and
 * of the sweep. tools/cold_calls.py launches it with and without the
 * profiler, interleaved (`make bench-cold-calls`; docs/profiler.md, "Memory
 * and cost", cold calls).
 *
 * usage: cold_calls SWEEP_KB ITERATIONS */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_overlap.h"
#include "options.h"
#include "timer.h"

enum { PARTS = 6 }; /* region begin, Irecv, Isend, Waitall, region end, sweep */
static const char *const part_names[PARTS] = {"region_begin", "irecv", "isend", "waitall",
                                              "region_end", "sweep"};

/* argv[i] as a whole number in [lo, hi], or the program ends saying why. */
static long arg(const char *name, const char *text, long lo, long hi)
{
    long v;
    char err[160];
    if (mo_options_parse_long(name, text, lo, hi, &v, err, sizeof err) != 0) {
        fprintf(stderr, "cold_calls: %s\n", err);
        MPI_Finalize();
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 3) {
        fprintf(stderr, "usage: cold_calls SWEEP_KB ITERATIONS\n");
        MPI_Finalize();
        return 2;
    }
    const long sweep_kb = arg("sweep-kb", argv[1], 0, 1 << 20),
               iterations = arg("iterations", argv[2], 1, 100000000);
    const size_t n = (size_t)sweep_kb * 1024 / sizeof(double);
    double *a = calloc(n + 1, sizeof *a);
    if (!a) {
        fprintf(stderr, "cold_calls: no memory for %ld KB\n", sweep_kb);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const char region[] = "cold/exchange";
    char sendbuf[8] = {0}, recvbuf[8];
    MPI_Request reqs[2];
    uint64_t sum[PARTS] = {0};
    for (long it = 0; it < iterations; it++) {
        uint64_t t[PARTS + 1];
        t[0] = mo_timer_now_ns();
        MPI_OVERLAP_REGION_BEGIN(region);
        t[1] = mo_timer_now_ns();
        MPI_Irecv(recvbuf, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &reqs[0]);
        t[2] = mo_timer_now_ns();
        MPI_Isend(sendbuf, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &reqs[1]);
        t[3] = mo_timer_now_ns();
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        t[4] = mo_timer_now_ns();
        MPI_OVERLAP_REGION_END(region);
        t[5] = mo_timer_now_ns();
        for (size_t k = 0; k < n; k++)
            a[k] += 1.0;
        t[6] = mo_timer_now_ns();
        for (int p = 0; p < PARTS; p++)
            sum[p] += t[p + 1] - t[p];
    }
    printf("{\"sweep_kb\": %ld, \"iterations\": %ld, \"checksum\": %g, \"ns_per_iteration\": {",
           sweep_kb, iterations, n ? a[n / 2] : 0.0);
    for (int p = 0; p < PARTS; p++)
        printf("%s\"%s\": %.2f", p ? ", " : "", part_names[p], (double)sum[p] / (double)iterations);
    printf("}}\n");
    free(a);
    MPI_Finalize();
    return 0;
}
