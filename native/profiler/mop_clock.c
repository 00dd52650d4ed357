/* mop_clock.c - choosing the profiler's clock at MPI_Init (mop_clock.h) and
 * timing what one read of it costs. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mop_hot.h"
#include "mop_clock.h"

MOP_HOT_FLAG int mop_use_tsc;

uint64_t mop_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef MOP_HAVE_TSC
/* The start of the TSC rate's window (mop_clock_rate_start); mono 0: not started. */
static uint64_t mop_clock_start_mono, mop_clock_start_tsc;

/* One (CLOCK_MONOTONIC, TSC) pair: the TSC read on both sides of the
 * clock_gettime, the tightest of a few tries, its midpoint. An interrupt or
 * a trap between two reads would otherwise put microseconds of error into an
 * endpoint of the window; the rate's error is the endpoints' over its length. */
static void mop_clock_pair(uint64_t *mono, uint64_t *tsc)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t a = __rdtsc(), m = mop_mono_ns(), b = __rdtsc();
        if (b >= a && b - a < best) {
            best = b - a;
            *mono = m;
            *tsc = a + (b - a) / 2;
        }
    }
    if (best == UINT64_MAX) { /* the TSC ran back every time: take the last */
        *mono = mop_mono_ns();
        *tsc = __rdtsc();
    }
}
#endif

void mop_clock_rate_start(void)
{
#ifdef MOP_HAVE_TSC
    if (mop_clock_start_mono == 0)
        mop_clock_pair(&mop_clock_start_mono, &mop_clock_start_tsc);
#endif
}

/* The TSC is used only where the kernel says it ticks at a constant rate
 * through sleep states; its rate is measured against CLOCK_MONOTONIC over at
 * least 20 ms (rate to ~1e-5) from the start taken before PMPI_Init: the MPI's
 * own start-up fills the window, and only what it left is spun here (it was
 * all 20 ms, most of the profiler's MPI_Init: bench profiler-overhead's
 * per_launch). */
double mop_clock_setup(void)
{
    const char *want = getenv("MPI_OVERLAP_CLOCK");
    double s_per_tick = 1e-9;
    mop_use_tsc = 0;
#ifdef MOP_HAVE_TSC
    bool constant = false;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[4096];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "flags", 5) == 0) {
                constant = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
                break;
            }
        fclose(f);
    }
    if (constant && !(want && strcmp(want, "monotonic") == 0)) {
        uint64_t m0 = mop_clock_start_mono, c0 = mop_clock_start_tsc, m1, c1;
        if (m0 == 0)
            mop_clock_pair(&m0, &c0);
        while (mop_mono_ns() - m0 < 20000000u)
            ;
        mop_clock_pair(&m1, &c1);
        if (c1 > c0 && m1 > m0) {
            s_per_tick = (double)(m1 - m0) * 1e-9 / (double)(c1 - c0);
            mop_use_tsc = 1;
        }
    }
#else
    (void)want;
#endif
    return s_per_tick;
}

/* What one read of the profiler's clock costs on this machine, in ns: the
 * floor of the per-call cost, since every wrapper reads it twice (docs/
 * profiler.md, "Memory and cost"). Fastest of 8 batches of 2048 reads, so
 * an interruption does not count; about 0.5 ms with clock_gettime. */
double mop_clock_read_cost(void)
{
    enum { BATCHES = 8, READS = 2048 };
    double best = 0.0;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t sink = 0, m0 = mop_mono_ns();
        for (int i = 0; i < READS; i++)
            sink += mop_now();
        uint64_t m1 = mop_mono_ns();
        __asm__ volatile("" : : "r"(sink)); /* the reads are not optimised away */
        double ns = (double)(m1 - m0) / READS;
        if (b == 0 || ns < best)
            best = ns;
    }
    return best;
}
