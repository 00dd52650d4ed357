/* busy_compute.h - the computation of the test programs: a busy loop for a
 * wall-clock duration with no MPI call inside, so that a transfer posted
 * before it can only progress asynchronously. Header-only: the programs that
 * use it are plain MPI programs linked with nothing of ours. */
#ifndef BUSY_COMPUTE_H
#define BUSY_COMPUTE_H

#include <time.h>

static volatile double busy_compute_sink;

/* Busy computation for about `seconds`, with no MPI call inside. */
static inline void compute(double seconds)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    double x = 0;
    do {
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec) < seconds);
    busy_compute_sink = x;
}

#endif
