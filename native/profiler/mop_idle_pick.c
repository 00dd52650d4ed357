/* mop_idle_pick.c - the trials that pick a thread's processing path from its
 * own pace (mop_idle_pick.h says why and how). */
#include "mop_idle_pick.h"

#include <string.h>

void mop_idle_pick_init(mop_idle_pick *p)
{
    memset(p, 0, sizeof *p);
    p->path = p->kept = MOP_PATH_PLAIN;
    p->hold = MOP_PICK_WARMUP;
    p->hold_len = MOP_PICK_HOLD_MIN / 2; /* the first confirmation holds HOLD_MIN */
}

/* The first epoch of pair k: idle first in the even pairs, plain first in the
 * odd ones (ABBA). */
static int mop_pick_first(uint8_t k)
{
    return k % 2 == 0 ? MOP_PATH_IDLE : MOP_PATH_PLAIN;
}

static int mop_pick_end_trial(mop_idle_pick *p, int pick)
{
    if (pick == p->kept) {
        p->hold_len *= 2;
        if (p->hold_len > MOP_PICK_HOLD_MAX)
            p->hold_len = MOP_PICK_HOLD_MAX;
    } else {
        p->hold_len = MOP_PICK_HOLD_MIN;
    }
    p->kept = (uint8_t)pick;
    p->hold = p->hold_len;
    p->in_trial = 0;
    return p->path = (uint8_t)pick;
}

int mop_idle_pick_epoch(mop_idle_pick *p, uint64_t now)
{
    if (!p->started) {
        p->started = 1;
        p->t0 = now;
        return p->path;
    }
    uint64_t dt = now - p->t0;
    p->t0 = now;
    p->epochs++;
    p->idle_epochs += p->path == MOP_PATH_IDLE;
    if (!p->in_trial) {
        if (--p->hold > 0)
            return p->path;
        p->in_trial = 1;
        p->slot = 0;
        p->trials++;
        return p->path = (uint8_t)mop_pick_first(0);
    }
    p->pair[p->path] = dt;
    p->slot++;
    if (p->slot % 2 == 1) /* the pair's other path next */
        return p->path = (uint8_t)(p->path ^ 1);
    if (p->pair[MOP_PATH_IDLE] >= p->pair[MOP_PATH_PLAIN])
        return mop_pick_end_trial(p, MOP_PATH_PLAIN);
    if (p->slot == 2 * MOP_PICK_PAIRS)
        return mop_pick_end_trial(p, MOP_PATH_IDLE);
    return p->path = (uint8_t)mop_pick_first(p->slot / 2);
}
