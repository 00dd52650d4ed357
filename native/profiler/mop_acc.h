/* mop_acc.h - the transfer measures of one breakdown cell (a size bin, a
 * function, a region, a call-site pair): transfers, their transfer time and
 * its overlapped bounds, summed. Pure C. */
#ifndef MOP_ACC_H
#define MOP_ACC_H

#include <stdint.h>

#include "mop_bounds.h"

typedef struct mop_acc {
    uint64_t transfers;
    double xfer_s, min_s, max_s;
} mop_acc;

static inline void mop_acc_add(mop_acc *a, const mop_bounds *b)
{
    a->transfers++;
    a->xfer_s += b->xfer_s;
    a->min_s += b->min_s;
    a->max_s += b->max_s;
}

static inline void mop_acc_merge(mop_acc *a, const mop_acc *b)
{
    a->transfers += b->transfers;
    a->xfer_s += b->xfer_s;
    a->min_s += b->min_s;
    a->max_s += b->max_s;
}

#endif
