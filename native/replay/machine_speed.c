/* machine_speed.c - mo_machine_speed: a fixed stencil sweep timed on the CPU it
 * runs on, the machine's speed around each run of the predict check
 * (src/mpi_overlap/cluster/machine_speed.py starts one on every CPU at once and
 * says why). MPI-free.
 *
 * Why C and not numpy: numpy's sweep makes eight passes over 1 MB arrays, one
 * per operation, and spread 5-13 ms between back-to-back references on a
 * quiet machine; one pass, as a mini-app's own loop makes, spread by a few %
 * outside the machine's slow bursts.
 *
 * Usage: mo_machine_speed CPU [BLOCKS]: runs on CPU only (the caller starts one
 * per CPU at once, as a run's ranks run). Prints one line: the median time of
 * BLOCKS blocks of SWEEPS sweeps, in seconds, and the sum of the last array (so
 * the sweeps cannot be left out). */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"
#include "timer.h"

/* A rank's slab of the halo case: 64 x 64 points by 32 planes and a halo plane
 * each side (1.1 MB an array). */
enum { NX = 64, NY = 64, NZ = 34, PLANE = NX * NY, POINTS = PLANE * NZ };
enum { BLOCKS_DEFAULT = 9, BLOCKS_MAX = 99, SWEEPS = 50 };

static void sweep(const double *a, double *b)
{
    for (int i = PLANE; i < POINTS - PLANE; i++)
        b[i] = a[i] + 0.1 * (a[i - 1] + a[i + 1] + a[i - NX] + a[i + NX] + a[i - PLANE] +
                             a[i + PLANE] - 6.0 * a[i]);
}

int main(int argc, char **argv)
{
    int cpu = argc > 1 ? atoi(argv[1]) : -1;
    int blocks = argc > 2 ? atoi(argv[2]) : BLOCKS_DEFAULT;
    if (cpu < 0 || cpu >= CPU_SETSIZE || blocks < 1 || blocks > BLOCKS_MAX) {
        fprintf(stderr, "usage: mo_machine_speed CPU [BLOCKS 1-%d]\n", BLOCKS_MAX);
        return 2;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        perror("mo_machine_speed: sched_setaffinity");
        return 1;
    }
    double *a = malloc(sizeof(double) * POINTS), *b = malloc(sizeof(double) * POINTS);
    if (!a || !b) {
        fprintf(stderr, "mo_machine_speed: out of memory\n");
        return 1;
    }
    for (int i = 0; i < POINTS; i++)
        a[i] = b[i] = (double)(i % 7);
    sweep(a, b); /* the arrays in the caches before the first block */
    double times[BLOCKS_MAX];
    for (int k = 0; k < blocks; k++) {
        uint64_t t = mo_timer_now_ns();
        for (int s = 0; s < SWEEPS; s++) {
            sweep(a, b);
            double *tmp = a;
            a = b;
            b = tmp;
        }
        times[k] = 1e-9 * (double)(mo_timer_now_ns() - t);
    }
    double sum = 0;
    for (int i = 0; i < POINTS; i++)
        sum += a[i];
    printf("%.9g %.6g\n", mo_stats_median(times, (size_t)blocks), sum);
    free(a);
    free(b);
    return 0;
}
