/* mop_cpu.h - computation as CPU time (docs/profiler.md, "Computation as CPU
 * time"): beside the wall-clock computation between MPI calls, how much of it
 * the calling thread spent on a CPU. Wall-clock computation includes the time
 * the thread was descheduled for other processes; imbalance advice built on it
 * follows outside load.
 *
 * The thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) is a system call, 0.3-2 us,
 * ten to a hundred times a wrapper's whole cost, so it is not read per call:
 * only at the ENTER that ends a piece of computation at least a threshold
 * (min_ticks) long, at the EXIT right after such a read (the next piece then
 * has both ends read), and at the first EXIT once the threshold has passed
 * since the last read (a piece that grows long unexpectedly, most often
 * because it was descheduled, then has a recent reading before it). That is at
 * most three reads per threshold of run time, which the runtime sets
 * to 1000 times one read's measured cost (at least 1 ms): at most 0.3 % of
 * the run. Every call pays an increment, a decrement, a store and two
 * compares. Shorter pieces are counted as on the CPU all along: a piece
 * shorter than the threshold cannot hide more than the threshold. */
#ifndef MOP_CPU_H
#define MOP_CPU_H

#include <stdbool.h>
#include <stdint.h>

typedef struct mop_cpu {
    uint32_t depth;      /* the thread's open MPI calls, nested ones too */
    bool off;            /* monitoring off (MPI_Pcontrol(0)): pieces are not counted */
    uint64_t min_ticks;  /* the threshold (mop_cpu_setup; UINT64_MAX: off), per thread:
                          * no global's load through the GOT per call */
    uint64_t t_exit;     /* the outermost EXIT that began the current piece (0: none yet) */
    uint64_t next_read;  /* the next outermost EXIT at or after this tick reads the clock */
    uint64_t t_read;     /* when the clock was read last (ticks; 0: never) */
    uint64_t cpu_read;   /* the thread's CPU time then, ns */
    /* Written by the owner only (relaxed atomic stores: the profile is written
     * from another thread, which loads them the same way). */
    uint64_t reads;          /* reads of the CPU clock */
    uint64_t pieces;         /* pieces of computation measured (at least the threshold) */
    uint64_t pieces_bounded; /* of those, without a reading at their start (see mop_cpu.c) */
    uint64_t piece_ticks;    /* their wall-clock time, ticks */
    uint64_t piece_cpu_ns;   /* their CPU time, ns */
} mop_cpu;

/* Chooses the threshold from one read's measured cost (ns) and the clock's
 * seconds per tick: MPI_OVERLAP_CPU=0 turns the reads off; MPI_OVERLAP_CPU_MIN_US
 * sets the threshold in us instead. Returns the threshold in seconds (0: off). */
double mop_cpu_setup(double read_ns, double s_per_tick);

/* What one read of the thread's CPU clock costs here, in ns (the fastest of a
 * few batches); 0 where the clock cannot be read. */
double mop_cpu_read_cost(void);

/* A new thread's state (zeroed before): the first ENTER takes a reading. */
void mop_cpu_init(mop_cpu *c);

/* The slow paths: at the ENTER that ends a long piece, at an EXIT that reads. */
void mop_cpu_piece_end(mop_cpu *c, uint64_t t);
void mop_cpu_piece_start(mop_cpu *c, uint64_t t);

/* An ENTER at t (nested ones too). */
static inline void mop_cpu_enter(mop_cpu *c, uint64_t t)
{
    if (__builtin_expect(t - c->t_exit >= c->min_ticks, 0) && c->depth == 0)
        mop_cpu_piece_end(c, t);
    c->depth++;
}

/* An EXIT at t (or the POST that stands for it). */
static inline void mop_cpu_exit(mop_cpu *c, uint64_t t)
{
    if (__builtin_expect(c->depth == 0, 0))
        return; /* an exit without its enter: nothing to close */
    if (--c->depth == 0) {
        c->t_exit = t;
        if (__builtin_expect(t >= c->next_read, 0))
            mop_cpu_piece_start(c, t);
    }
}

/* A thread's figures, read from any thread. */
typedef struct mop_cpu_sums {
    uint64_t reads, pieces, pieces_bounded, piece_ticks, piece_cpu_ns;
} mop_cpu_sums;

void mop_cpu_add(mop_cpu_sums *sum, const mop_cpu *c);

/* The calling thread's scheduler statistics (/proc/thread-self/schedstat, or
 * the task `tid` of this process when tid > 0): time on a CPU and time spent
 * waiting on a run queue (descheduled while runnable), ns. Returns 0, or -1
 * where the kernel does not give them. */
int mop_schedstat(int tid, uint64_t *on_cpu_ns, uint64_t *run_delay_ns);

#endif
