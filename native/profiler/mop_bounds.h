/* mop_bounds.h - the bounds engine of the overlap profiler: the running
 * clocks of one thread of execution (computation between MPI calls, time
 * inside them) and the three cases of the source (Shet et al., §2.2) that turn
 * a transfer's XFER_BEGIN/XFER_END marks into [min, max] overlapped time.
 * Pure C: no MPI, no allocation, unit-tested on its own. Times are ticks of
 * whatever clock the caller uses. */
#ifndef MOP_BOUNDS_H
#define MOP_BOUNDS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct mop_clock {
    uint64_t call_seq;    /* outermost calls entered so far */
    int depth;            /* open MPI calls (nested ones count too) */
    uint64_t t_enter;     /* enter of the open outermost call */
    uint64_t t_comp_from; /* start of the running piece of computation; UINT64_MAX
                           * before the first call: the program's start is no
                           * computation (mop_clock_init) */
    uint64_t cum_comp;    /* all computation ticks so far */
} mop_clock;

/* What a transfer remembers of the moment it began. */
typedef struct mop_mark {
    uint64_t t;
    uint64_t call_seq;
    uint64_t cum_comp;
} mop_mark;

typedef enum mop_case {
    MOP_CASE_IN_CALL = 0,   /* begin and end inside one call: min = max = 0 */
    MOP_CASE_ACROSS = 1,    /* in different calls: bounded by computation and library time */
    MOP_CASE_BEGIN_ONLY = 2, /* end never observed: [0, xfer] */
    MOP_CASE_END_ONLY = 3,  /* begin not known at this layer: [0, xfer] */
    MOP_NCASES = 4
} mop_case;

typedef struct mop_bounds {
    mop_case kase;
    double xfer_s, min_s, max_s;
    bool clamped; /* xfer_time exceeded the whole begin-end span: min cut to max */
} mop_bounds;

const char *mop_case_name(mop_case c);

void mop_clock_init(mop_clock *c);

/* CALL_ENTER at t. Returns the computation ticks this enter ends (0 for a
 * nested call and for the first call of the program). */
static inline uint64_t mop_clock_enter(mop_clock *c, uint64_t t)
{
    uint64_t comp = 0;
    if (c->depth++ > 0)
        return 0;
    if (t > c->t_comp_from) /* computing until now; never before the first call */
        comp = t - c->t_comp_from;
    c->cum_comp += comp;
    c->call_seq++;
    c->t_enter = t;
    return comp;
}

/* CALL_EXIT at t. Returns the ticks of the outermost call it closes (0 when
 * it closes a nested call, or when no call is open). */
static inline uint64_t mop_clock_exit(mop_clock *c, uint64_t t)
{
    if (c->depth == 0)
        return 0;
    if (--c->depth > 0)
        return 0;
    c->t_comp_from = t;
    return t > c->t_enter ? t - c->t_enter : 0;
}

/* Cuts the running computation at t (a region boundary): returns the ticks
 * computed since the last cut or exit, 0 when not computing. */
static inline uint64_t mop_clock_split(mop_clock *c, uint64_t t)
{
    uint64_t comp = 0;
    if (c->depth > 0 || c->call_seq == 0) /* computation runs only between calls */
        return 0;
    if (t > c->t_comp_from) {
        comp = t - c->t_comp_from;
        c->t_comp_from = t;
    }
    c->cum_comp += comp;
    return comp;
}

/* XFER_BEGIN at t (inside the open call). */
static inline mop_mark mop_clock_mark(const mop_clock *c, uint64_t t)
{
    return (mop_mark){.t = t, .call_seq = c->call_seq, .cum_comp = c->cum_comp};
}

/* The clock above and the three cases below are inline: they run on every
 * call and transfer, and a case-2 result returned through memory from another
 * file stalled its caller on reading it back (perf; docs/profiler.md, "Memory
 * and cost"). */

/* Case 1 for a transfer known to begin and end in the open call (blocking
 * calls): min = max = 0. */
static inline mop_bounds mop_bounds_in_call(double xfer_s)
{
    return (mop_bounds){.kase = MOP_CASE_IN_CALL, .xfer_s = xfer_s};
}

/* XFER_END at t for a transfer that began at *begin: case 1 or case 2.
 * xfer_s is the a-priori transfer time, s_per_tick converts ticks. */
static inline mop_bounds mop_bounds_close(const mop_clock *c, const mop_mark *begin,
                                          uint64_t t_end, double xfer_s, double s_per_tick)
{
    if (c->call_seq == begin->call_seq)
        return mop_bounds_in_call(xfer_s); /* case 1: nothing useful ran while it moved */
    mop_bounds b = {.xfer_s = xfer_s};
    /* Case 2. Computation between the events bounds the overlap from above;
     * whatever of the transfer did not fit into the library time between
     * them must have run during computation, which bounds it from below. */
    uint64_t comp_ticks = c->cum_comp - begin->cum_comp;
    uint64_t span_ticks = t_end > begin->t ? t_end - begin->t : 0;
    uint64_t lib_ticks = span_ticks > comp_ticks ? span_ticks - comp_ticks : 0;
    double comp_s = (double)comp_ticks * s_per_tick;
    double lib_s = (double)lib_ticks * s_per_tick;
    b.kase = MOP_CASE_ACROSS;
    b.max_s = comp_s < xfer_s ? comp_s : xfer_s;
    b.min_s = 0.0 > xfer_s - lib_s ? 0.0 : xfer_s - lib_s;
    /* min > max happens only when the table's xfer_time is longer than the
     * whole span between the events, i.e. the table overstates this
     * transfer; cut min to max so the bounds stay ordered (and count it). */
    if (b.min_s > b.max_s) {
        b.min_s = b.max_s;
        b.clamped = true;
    }
    return b;
}

/* Case 3, for a transfer of which only one event is known. */
static inline mop_bounds mop_bounds_one_event(mop_case which, double xfer_s)
{
    return (mop_bounds){.kase = which, .xfer_s = xfer_s, .min_s = 0.0, .max_s = xfer_s};
}

#endif
