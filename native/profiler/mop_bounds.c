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
