/* mop_clock.h - the profiler's clock, read inline by every wrapper (twice
 * per MPI call): the TSC where the kernel says it ticks at a constant rate
 * through sleep states (its rate measured against CLOCK_MONOTONIC at
 * MPI_Init), else CLOCK_MONOTONIC in ns. MPI-free: the runtime, the traces'
 * clock alignment and the tests share it without depending on each other. */
#ifndef MOP_CLOCK_H
#define MOP_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define MOP_HAVE_TSC 1
#endif

/* 1 when mop_now() reads the TSC (set by mop_clock_setup). */
extern int mop_use_tsc;

static inline uint64_t mop_now(void)
{
#ifdef MOP_HAVE_TSC
    if (__builtin_expect(mop_use_tsc, 1))
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in ns. */
uint64_t mop_mono_ns(void);

/* Starts the window over which mop_clock_setup() measures the TSC's rate:
 * called before PMPI_Init, so that the MPI's start-up runs inside it. The
 * first call counts (the Fortran MPI_INIT may reach the C wrapper too);
 * without one, mop_clock_setup() spins the whole window. */
void mop_clock_rate_start(void);

/* Chooses the clock (MPI_OVERLAP_CLOCK=monotonic refuses the TSC) and
 * returns the seconds per tick of mop_now(); with the TSC it waits until 20 ms
 * have passed since that start (or since its own where none was made). */
double mop_clock_setup(void);

/* What one mop_now() costs here, in ns (the fastest of a few batches). */
double mop_clock_read_cost(void);

#endif
