/* mop_checks.c - the checks on the bounds; see mop_checks.h and
 * docs/method.md ("Checks on the bounds"). */
#include "mop_checks.h"

#include <stdlib.h>
#include <string.h>
#include "grow.h"

static const char *const mop_check_names[MOP_NCHECKS] = {"in-call", "across-calls"};

const char *mop_check_name(mop_check c)
{
    return (unsigned)c < MOP_NCHECKS ? mop_check_names[c] : "?";
}

void mop_checks_free(mop_checks *c)
{
    free(c->held);
    c->held = NULL;
    c->nheld = c->cap = 0;
}

void mop_checks_flag(mop_checks *c, mop_check which, double xfer_s, double excess_s,
                     uint16_t fn, size_t bin)
{
    mop_flagged *f[3] = {&c->flagged[which], &c->by_fn[fn % MOP_MAX_FN][which],
                         &c->by_bin[bin][which]};
    for (int i = 0; i < 3; i++) {
        f[i]->transfers++;
        f[i]->xfer_s += xfer_s;
        f[i]->excess_s += excess_s;
    }
}

int mop_checks_copy(mop_checks *dst, const mop_checks *src)
{
    *dst = *src;
    dst->held = NULL;
    dst->cap = 0;
    if (src->nheld == 0) {
        dst->nheld = 0;
        return 0;
    }
    dst->held = malloc(src->nheld * sizeof *dst->held);
    if (!dst->held) {
        dst->nheld = 0;
        return -1;
    }
    memcpy(dst->held, src->held, src->nheld * sizeof *dst->held);
    dst->cap = src->nheld;
    return 0;
}

int mop_checks_grow(mop_checks *c)
{
    mop_held *h = mo_grow(c->held, &c->cap, sizeof *h, 8);
    if (!h)
        return -1;
    c->held = h;
    return 0;
}

static void mop_release(mop_checks *c)
{
    c->nheld = 0;
    c->held_xfer_s = c->held_longest_s = 0.0;
    c->held_t_end = 0;
}

uint64_t mop_checks_call_done(mop_checks *c, uint64_t t_enter, uint64_t t_exit,
                              double s_per_tick)
{
    if (c->nheld == 0)
        return 0;
    /* The interval that holds the call's transfers: the call, stretched to an
     * XFER_END stamped after its exit (another thread's completion seen
     * late), so that no transfer is judged against less than its own interval. */
    uint64_t t_hi = c->held_t_end > t_exit ? c->held_t_end : t_exit;
    uint64_t ticks = t_hi > t_enter ? t_hi - t_enter : 0;
    double span_s = (double)ticks * s_per_tick;
    double longest = c->held_longest_s;
    c->transfers[MOP_CHECK_IN_CALL] += c->nheld;
    c->xfer_s[MOP_CHECK_IN_CALL] += c->held_xfer_s;
    c->calls++;
    c->call_ticks += ticks;
    c->longest_s += longest;
    uint64_t flagged = 0;
    if (longest > span_s) { /* else none of them is longer than the call */
        c->calls_beyond++;
        c->beyond_s += longest - span_s;
        for (size_t i = 0; i < c->nheld; i++) {
            const mop_held *h = &c->held[i];
            if (h->need_s > span_s) { /* each on its own: they may run concurrently */
                mop_checks_flag(c, MOP_CHECK_IN_CALL, h->xfer_s, h->need_s - span_s, h->fn, h->bin);
                flagged++;
            }
        }
    }
    mop_release(c);
    return flagged;
}

void mop_checks_abandon(mop_checks *c)
{
    c->unchecked += c->nheld;
    mop_release(c);
}

static void mop_flagged_merge(mop_flagged *dst, const mop_flagged *src)
{
    dst->transfers += src->transfers;
    dst->xfer_s += src->xfer_s;
    dst->excess_s += src->excess_s;
}

void mop_checks_merge(mop_checks *dst, const mop_checks *src)
{
    for (int k = 0; k < MOP_NCHECKS; k++) {
        dst->transfers[k] += src->transfers[k];
        dst->xfer_s[k] += src->xfer_s[k];
        mop_flagged_merge(&dst->flagged[k], &src->flagged[k]);
        for (size_t i = 0; i < MOP_MAX_FN; i++)
            mop_flagged_merge(&dst->by_fn[i][k], &src->by_fn[i][k]);
        for (size_t i = 0; i < MOP_MAX_BINS; i++)
            mop_flagged_merge(&dst->by_bin[i][k], &src->by_bin[i][k]);
    }
    dst->calls += src->calls;
    dst->call_ticks += src->call_ticks;
    dst->longest_s += src->longest_s;
    dst->calls_beyond += src->calls_beyond;
    dst->beyond_s += src->beyond_s;
    dst->unchecked += mop_checks_unchecked(src);
}

double mop_checks_beyond_s(const mop_checks *c)
{
    return c->beyond_s + c->flagged[MOP_CHECK_ACROSS].excess_s;
}

uint64_t mop_checks_unchecked(const mop_checks *c)
{
    return c->unchecked + c->nheld;
}
