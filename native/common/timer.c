/* timer.c - CLOCK_MONOTONIC reads and a probe of the clock's quality. */
#define _POSIX_C_SOURCE 200809L
#include "timer.h"

#include <time.h>

#include "stats.h"

uint64_t mo_timer_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum { TICK_READS = 100000, COST_BLOCKS = 101, COST_READS_PER_BLOCK = 1000 };

void mo_timer_probe(mo_timer_info *info)
{
    struct timespec res;
    info->clock = "CLOCK_MONOTONIC";
    info->resolution_ns = 0.0;
    if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
        info->resolution_ns = (double)res.tv_sec * 1e9 + (double)res.tv_nsec;

    /* clock_getres often claims 1 ns; the tick actually observed between
     * consecutive reads tells what the clock really resolves. */
    uint64_t smallest = UINT64_MAX;
    uint64_t prev = mo_timer_now_ns();
    for (int i = 0; i < TICK_READS; i++) {
        uint64_t now = mo_timer_now_ns();
        if (now > prev && now - prev < smallest)
            smallest = now - prev;
        prev = now;
    }
    info->measured_tick_ns = smallest == UINT64_MAX ? 0.0 : (double)smallest;

    /* One read is too short to time on its own; time blocks of reads and
     * take the median per-read cost so that interrupts do not inflate it. */
    double cost[COST_BLOCKS];
    for (int b = 0; b < COST_BLOCKS; b++) {
        uint64_t t0 = mo_timer_now_ns();
        for (int i = 0; i < COST_READS_PER_BLOCK; i++)
            (void)mo_timer_now_ns();
        uint64_t t1 = mo_timer_now_ns();
        cost[b] = (double)(t1 - t0) / COST_READS_PER_BLOCK;
    }
    info->read_overhead_ns = mo_stats_median(cost, COST_BLOCKS);
}
