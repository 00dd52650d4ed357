/* mop_bounds.c - the source's three cases and the clocks they need; see
 * mop_bounds.h and docs/method.md ("Overlap bounds"). */
#include "mop_bounds.h"

#include <stddef.h>

static const char *const mop_case_names[MOP_NCASES] = {
    "in-call", "across-calls", "begin-only", "end-only"};

const char *mop_case_name(mop_case c)
{
    return (unsigned)c < MOP_NCASES ? mop_case_names[c] : "?";
}

void mop_clock_init(mop_clock *c)
{
    *c = (mop_clock){0};
}

uint64_t mop_clock_enter(mop_clock *c, uint64_t t)
{
    uint64_t comp = 0;
    if (c->depth++ > 0)
        return 0;
    if (c->call_seq > 0 && t > c->t_comp_from) /* computing until now */
        comp = t - c->t_comp_from;
    c->cum_comp += comp;
    c->call_seq++;
    c->t_enter = t;
    return comp;
}

uint64_t mop_clock_exit(mop_clock *c, uint64_t t)
{
    if (c->depth == 0)
        return 0;
    if (--c->depth > 0)
        return 0;
    c->t_comp_from = t;
    return t > c->t_enter ? t - c->t_enter : 0;
}

uint64_t mop_clock_split(mop_clock *c, uint64_t t)
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

mop_mark mop_clock_mark(const mop_clock *c, uint64_t t)
{
    return (mop_mark){.t = t, .call_seq = c->call_seq, .cum_comp = c->cum_comp};
}

static double mop_min(double a, double b) { return a < b ? a : b; }
static double mop_max(double a, double b) { return a > b ? a : b; }

mop_bounds mop_bounds_close(const mop_clock *c, const mop_mark *begin, uint64_t t_end,
                            double xfer_s, double s_per_tick)
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
    b.max_s = mop_min(comp_s, xfer_s);
    b.min_s = mop_max(0.0, xfer_s - lib_s);
    /* min > max happens only when the table's xfer_time is longer than the
     * whole span between the events, i.e. the table overstates this
     * transfer; cut min to max so the bounds stay ordered (and count it). */
    if (b.min_s > b.max_s) {
        b.min_s = b.max_s;
        b.clamped = true;
    }
    return b;
}

mop_bounds mop_bounds_in_call(double xfer_s)
{
    return (mop_bounds){.kase = MOP_CASE_IN_CALL, .xfer_s = xfer_s};
}

mop_bounds mop_bounds_one_event(mop_case which, double xfer_s)
{
    return (mop_bounds){.kase = which, .xfer_s = xfer_s, .min_s = 0.0, .max_s = xfer_s};
}
