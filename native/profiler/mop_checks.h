/* mop_checks.h - the checks on the bounds (docs/method.md, "Checks on the
 * bounds"): both bounds assume that a transfer lasting the table's
 * xfer_time fits into the interval its events give it. A transfer for which
 * it does not fit is evidence that the table overstates it or that its data
 * moved outside that interval (an eager message that arrived while the
 * receiver computed); its bounds are then not to be trusted. Two checks:
 *
 * - in-call (case 1): the part of xfer_time the call must hold (all of it,
 *   or the sender's / receiver's overhead of an eager blocking send /
 *   receive) against the time of the outermost call that holds the transfer
 *   (CALL_ENTER -> CALL_EXIT), judged at that call's exit,
 *   each transfer on its own (a call may carry two that run concurrently,
 *   MPI_Sendrecv); per call, the longest transfer against the call's time
 *   gives the per-rank "beyond the wall clock" sum;
 * - across calls (case 2): xfer_time (an eager one's overhead) against
 *   XFER_BEGIN -> XFER_END (the transfers counted in xfer_exceeds_span).
 *
 * Pure C, no MPI; kept by mop_process, never on the wrappers' hot path. */
#ifndef MOP_CHECKS_H
#define MOP_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mop_limits.h"

typedef enum mop_check {
    MOP_CHECK_IN_CALL = 0, /* in-call transfer longer than its call */
    MOP_CHECK_ACROSS = 1,  /* across-call transfer longer than begin -> end */
    MOP_NCHECKS = 2
} mop_check;

/* The check's name: the name of the case it judges ("in-call", "across-calls"). */
const char *mop_check_name(mop_check c);

/* Transfers a check flagged. */
typedef struct mop_flagged {
    uint64_t transfers;
    double xfer_s;   /* their table transfer time */
    double excess_s; /* sum over them of xfer_time - the interval that should hold it */
} mop_flagged;

/* An in-call transfer of the open call, waiting for the call's exit. */
typedef struct mop_held {
    double xfer_s; /* its whole transfer time */
    double need_s; /* the part of it its call must hold: xfer_s, or o_s / o_r of an
                    * eager blocking send / receive (docs/method.md) */
    uint64_t t_end; /* its XFER_END (ticks), or the call's enter for INCALL events */
    uint16_t fn;
    uint16_t bin;
} mop_held;

typedef struct mop_checks {
    uint64_t transfers[MOP_NCHECKS]; /* transfers judged */
    double xfer_s[MOP_NCHECKS];      /* their table transfer time */
    mop_flagged flagged[MOP_NCHECKS];
    mop_flagged by_fn[MOP_MAX_FN][MOP_NCHECKS];
    mop_flagged by_bin[MOP_MAX_BINS][MOP_NCHECKS];
    /* Outermost calls that held in-call transfers: how many, their time, the
     * sum of each one's longest transfer, and how far those exceed their call. */
    uint64_t calls;
    uint64_t call_ticks;
    double longest_s;
    uint64_t calls_beyond;
    double beyond_s;
    /* In-call transfers with no call to judge them against: outside any call,
     * still in a call when the program ended, or no memory to hold them. */
    uint64_t unchecked;
    mop_held *held; /* the open call's in-call transfers */
    size_t nheld, cap;
    double held_xfer_s, held_longest_s; /* their xfer_s sum and need_s maximum */
    uint64_t held_t_end;                /* their latest XFER_END */
} mop_checks;

/* A zeroed mop_checks is ready; this frees what holding transfers allocated. */
void mop_checks_free(mop_checks *c);

/* A deep copy (the held transfers too): 0, or -1 when out of memory (then dst
 * holds nothing to free). */
int mop_checks_copy(mop_checks *dst, const mop_checks *src);

/* Room for one more held transfer: 0, or -1 when out of memory. */
int mop_checks_grow(mop_checks *c);

/* An in-call transfer of the open call (bin < MOP_MAX_BINS) of transfer
 * time xfer_s, of which its call must hold need_s; judged at
 * mop_checks_call_done. Returns 0, or -1 when out of memory (then it is
 * counted unchecked). Inline: it runs for every blocking call's transfers. */
static inline int mop_checks_hold(mop_checks *c, double xfer_s, double need_s, uint64_t t_end,
                                  uint16_t fn, size_t bin)
{
    if (c->nheld == c->cap && mop_checks_grow(c) != 0) {
        c->unchecked++;
        return -1;
    }
    c->held[c->nheld++] = (mop_held){.xfer_s = xfer_s, .need_s = need_s, .t_end = t_end,
                                     .fn = fn, .bin = (uint16_t)bin};
    c->held_xfer_s += xfer_s;
    if (need_s > c->held_longest_s)
        c->held_longest_s = need_s;
    if (t_end > c->held_t_end)
        c->held_t_end = t_end;
    return 0;
}

/* The outermost call [t_enter, t_exit] closed: judges the transfers it held.
 * Returns how many it flagged. */
uint64_t mop_checks_call_done(mop_checks *c, uint64_t t_enter, uint64_t t_exit,
                              double s_per_tick);

/* Counts a flagged transfer (bin < MOP_MAX_BINS) in the totals and breakdowns. */
void mop_checks_flag(mop_checks *c, mop_check which, double xfer_s, double excess_s,
                     uint16_t fn, size_t bin);

/* An across-calls transfer (bin < MOP_MAX_BINS) whose events lie span_s
 * apart, of which need_s must lie between them (xfer_s, or an eager one's
 * overhead); `exceeds` when its bounds were clamped (need_s > span,
 * mop_bounds.clamped). Inline, like mop_checks_hold. */
static inline void mop_checks_across(mop_checks *c, double xfer_s, double need_s, double span_s,
                                     bool exceeds, uint16_t fn, size_t bin)
{
    c->transfers[MOP_CHECK_ACROSS]++;
    c->xfer_s[MOP_CHECK_ACROSS] += xfer_s;
    if (exceeds)
        mop_checks_flag(c, MOP_CHECK_ACROSS, xfer_s, need_s > span_s ? need_s - span_s : 0.0,
                        fn, bin);
}

/* The open call will never exit (end of the program): what it held is unchecked. */
void mop_checks_abandon(mop_checks *c);

/* Adds src into dst (threads of one rank); src's held transfers count as unchecked. */
void mop_checks_merge(mop_checks *dst, const mop_checks *src);

/* Transfer time beyond what the wall clock allows: the in-call calls' excess
 * (longest transfer - call time) plus the across-calls transfers' excess. */
double mop_checks_beyond_s(const mop_checks *c);

/* Transfers judged but not yet counted (held by the open call) count as unchecked. */
uint64_t mop_checks_unchecked(const mop_checks *c);

#endif
