/* mop_rma_pending.c - the pending one-sided operations of one thread; see
 * mop_rma_pending.h. Removal swaps the last entry into the hole: the order of
 * the entries means nothing. */
#include "mop_rma_pending.h"

#include <stdlib.h>

void mop_rma_pending_init(mop_rma_pending *p, size_t max)
{
    *p = (mop_rma_pending){.max = max};
}

void mop_rma_pending_free(mop_rma_pending *p)
{
    free(p->ops);
    *p = (mop_rma_pending){.max = p->max};
}

int mop_rma_pending_add(mop_rma_pending *p, uint64_t win, int32_t target, uint64_t key,
                        uint64_t t_posted)
{
    if (p->n >= p->max)
        return -1;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        if (cap > p->max)
            cap = p->max;
        mop_rma_op *ops = realloc(p->ops, cap * sizeof *ops);
        if (!ops)
            return -1;
        p->ops = ops;
        p->cap = cap;
    }
    p->ops[p->n++] = (mop_rma_op){.win = win, .key = key, .t_posted = t_posted,
                                  .target = target, .state = MOP_RMA_PENDING};
    if (p->n > p->peak)
        p->peak = p->n;
    return 0;
}

static int mop_rma_matches(const mop_rma_op *op, uint64_t win, int32_t target)
{
    return op->win == win && (target == MOP_RMA_ALL_TARGETS || op->target == target);
}

/* Moves entry i out into *out and fills its place with the last one. */
static void mop_rma_remove(mop_rma_pending *p, size_t i, mop_rma_done *out)
{
    *out = (mop_rma_done){.key = p->ops[i].key, .state = p->ops[i].state};
    if (p->ops[i].state != MOP_RMA_PENDING)
        p->marked--;
    p->ops[i] = p->ops[--p->n];
}

size_t mop_rma_pending_take(mop_rma_pending *p, uint64_t win, int32_t target,
                            mop_rma_done *out, size_t max)
{
    size_t k = 0, i = 0;
    while (i < p->n && k < max) {
        if (mop_rma_matches(&p->ops[i], win, target))
            mop_rma_remove(p, i, &out[k++]); /* entry i is now another one: look again */
        else
            i++;
    }
    return k;
}

size_t mop_rma_pending_mark(mop_rma_pending *p, uint64_t win, int32_t target,
                            uint64_t t_call, mop_rma_state state)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        mop_rma_op *op = &p->ops[i];
        if (op->state == MOP_RMA_PENDING && op->t_posted < t_call &&
            mop_rma_matches(op, win, target)) {
            op->state = (uint8_t)state;
            k++;
        }
    }
    p->marked += k;
    return k;
}

size_t mop_rma_pending_take_marked(mop_rma_pending *p, mop_rma_done *out, size_t max)
{
    size_t k = 0, i = 0;
    while (i < p->n && k < max && p->marked > 0) {
        if (p->ops[i].state != MOP_RMA_PENDING)
            mop_rma_remove(p, i, &out[k++]);
        else
            i++;
    }
    return k;
}
