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
