/* mop_cpu.c - computation as CPU time: the slow paths of mop_cpu.h, which
 * read the thread's CPU clock, the threshold chosen from the clock's measured
 * cost, and the scheduler's own figures for a whole thread. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mop_cpu.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mop_clock.h"

/* A piece at least this long has its CPU time read; also the period of the
 * reads at EXITs. UINT64_MAX: off. */
static uint64_t mop_cpu_min_ticks = UINT64_MAX;
static double mop_cpu_ns_per_tick = 1.0;
static bool mop_cpu_on;

static inline uint64_t mop_cpu_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double mop_cpu_read_cost(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    enum { BATCHES = 8, READS = 64 };
    double best = 0.0;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t sink = 0, m0 = mop_mono_ns();
        for (int i = 0; i < READS; i++)
            sink += mop_cpu_now_ns();
        uint64_t m1 = mop_mono_ns();
        __asm__ volatile("" : : "r"(sink));
        double ns = (double)(m1 - m0) / READS;
        if (b == 0 || ns < best)
            best = ns;
    }
    return best;
}

/* 1000 reads' cost, at least 1 ms: with at most three reads per threshold of
 * run time (mop_cpu.h), the reads take at most 0.3 % of it, and mostly one
 * read per threshold. The floor was 200 us: then mo_halo and mo_cg read the
 * clock about 4,200 times a second, nearly all at the EXITs that come once a
 * threshold has passed (14 of 3,793 reads ended a piece that long), 0.07-0.11 %
 * of their run at 158 ns a read, 270 with the caches a sweep leaves (2026-12-04;
 * docs/profiler.md, "Computation as CPU time"): a sixth of what the profiler
 * costs them. A piece shorter than 1 ms hides at most that much descheduling,
 * and a descheduled piece lasts at least a time slice, a few ms. */
enum { MOP_CPU_COST_FACTOR = 1000 };
#define MOP_CPU_MIN_FLOOR_S 1e-3

double mop_cpu_setup(double read_ns, double s_per_tick)
{
    const char *off = getenv("MPI_OVERLAP_CPU");
    const char *min_us = getenv("MPI_OVERLAP_CPU_MIN_US");
    mop_cpu_on = false;
    mop_cpu_min_ticks = UINT64_MAX;
    if ((off && strcmp(off, "0") == 0) || !(read_ns > 0) || !(s_per_tick > 0))
        return 0.0;
    double min_s = MOP_CPU_COST_FACTOR * read_ns * 1e-9;
    if (min_s < MOP_CPU_MIN_FLOOR_S)
        min_s = MOP_CPU_MIN_FLOOR_S;
    if (min_us && *min_us) {
        char *end;
        double v = strtod(min_us, &end);
        if (end != min_us && *end == '\0' && v > 0 && v < 1e9)
            min_s = v * 1e-6;
    }
    mop_cpu_ns_per_tick = s_per_tick * 1e9;
    double ticks = min_s / s_per_tick;
    mop_cpu_min_ticks = ticks < 1.0 ? 1 : (uint64_t)ticks;
    mop_cpu_on = true;
    return min_s;
}

static inline void mop_cpu_store(uint64_t *field, uint64_t v)
{
    __atomic_store_n(field, v, __ATOMIC_RELAXED);
}

void mop_cpu_init(mop_cpu *c)
{
    c->min_ticks = mop_cpu_on ? mop_cpu_min_ticks : UINT64_MAX;
    c->next_read = mop_cpu_on ? 0 : UINT64_MAX;
}

/* The ENTER at t ends a piece that began at c->t_exit and is at least the
 * threshold long. Its CPU time is exact when its start was read (the EXIT
 * that began it read the clock); otherwise it is bounded below by assuming
 * the stretch from the last reading to its start ran on the CPU throughout
 * (so the piece's time off the CPU is bounded above; that stretch is shorter
 * than the threshold, mop_cpu.h). Then the clock is read at the next EXIT. */
void mop_cpu_piece_end(mop_cpu *c, uint64_t t)
{
    uint64_t cpu = mop_cpu_now_ns();
    if (c->t_read != 0 && c->t_exit != 0 && t > c->t_exit && !c->off && cpu >= c->cpu_read) {
        uint64_t wall = t - c->t_exit;
        double wall_ns = (double)wall * mop_cpu_ns_per_tick;
        double on = (double)(cpu - c->cpu_read);
        bool exact = c->t_read == c->t_exit;
        if (!exact && c->t_exit > c->t_read)
            on -= (double)(c->t_exit - c->t_read) * mop_cpu_ns_per_tick;
        on = on < 0 ? 0 : on > wall_ns ? wall_ns : on;
        mop_cpu_store(&c->pieces, c->pieces + 1);
        mop_cpu_store(&c->pieces_bounded, c->pieces_bounded + !exact);
        mop_cpu_store(&c->piece_ticks, c->piece_ticks + wall);
        mop_cpu_store(&c->piece_cpu_ns, c->piece_cpu_ns + (uint64_t)on);
    }
    c->t_read = t;
    c->cpu_read = cpu;
    c->next_read = 0;
    mop_cpu_store(&c->reads, c->reads + 1);
}

/* An EXIT at t that reads the clock: after a long piece (the next one is then
 * measured exactly if it is long too), or once a threshold has passed since
 * the last reading. */
void mop_cpu_piece_start(mop_cpu *c, uint64_t t)
{
    c->cpu_read = mop_cpu_now_ns();
    c->t_read = t;
    c->next_read = t + mop_cpu_min_ticks;
    mop_cpu_store(&c->reads, c->reads + 1);
}

void mop_cpu_add(mop_cpu_sums *sum, const mop_cpu *c)
{
    sum->reads += __atomic_load_n(&c->reads, __ATOMIC_RELAXED);
    sum->pieces += __atomic_load_n(&c->pieces, __ATOMIC_RELAXED);
    sum->pieces_bounded += __atomic_load_n(&c->pieces_bounded, __ATOMIC_RELAXED);
    sum->piece_ticks += __atomic_load_n(&c->piece_ticks, __ATOMIC_RELAXED);
    sum->piece_cpu_ns += __atomic_load_n(&c->piece_cpu_ns, __ATOMIC_RELAXED);
}

int mop_schedstat(int tid, uint64_t *on_cpu_ns, uint64_t *run_delay_ns)
{
    char path[64];
    if (tid > 0)
        snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    else
        snprintf(path, sizeof path, "/proc/thread-self/schedstat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[128];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    unsigned long long a, b;
    if (sscanf(buf, "%llu %llu", &a, &b) != 2)
        return -1;
    *on_cpu_ns = a;
    *run_delay_ns = b;
    return 0;
}
