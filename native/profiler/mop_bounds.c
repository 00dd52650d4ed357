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
    /* No time is later than t_comp_from until the first call's exit sets it:
     * the enter of the first call then ends no computation, without a test
     * of call_seq on every enter. */
    *c = (mop_clock){.t_comp_from = UINT64_MAX};
}
