/* timer.h - the one clock every benchmark measures with, and what is known
 * about its quality (resolution, observed tick, cost of a read), so results
 * can be judged against the timer's own limits. */
#ifndef MO_TIMER_H
#define MO_TIMER_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC: immune to wall-clock adjustments. */
uint64_t mo_timer_now_ns(void);

/* Microseconds from a to b (mo_timer_now_ns() readings). */
static inline double mo_us_between(uint64_t a, uint64_t b)
{
    return (double)(b - a) / 1000.0;
}

typedef struct mo_timer_info {
    const char *clock;       /* name of the clock, "CLOCK_MONOTONIC" */
    double resolution_ns;    /* clock_getres */
    double measured_tick_ns; /* smallest non-zero difference of consecutive reads */
    double read_overhead_ns; /* median cost of one read */
} mo_timer_info;

/* Probes the clock (takes a few milliseconds). */
void mo_timer_probe(mo_timer_info *info);

#endif
