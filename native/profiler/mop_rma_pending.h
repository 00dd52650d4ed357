/* mop_rma_pending.h - one thread's one-sided operations (MPI_Put, MPI_Get,
 * the accumulates) that have begun and wait for the synchronization call that
 * completes them: (window, target, key) triples, so that MPI_Win_flush(target),
 * MPI_Win_unlock_all, MPI_Win_fence... end exactly the operations they
 * complete (docs/method.md, "One-sided communication"). The keys are the
 * transfers' keys in the bounds engine. Pure C, no MPI, no locking (the
 * wrappers lock around it): windows are opaque 64-bit handle bits.
 *
 * A plain array, scanned per synchronization call: a window's epoch rarely
 * holds more than a few thousand operations, and a synchronization call costs
 * far more than the scan. It grows by doubling up to a cap, so that a program
 * whose synchronization calls the profiler cannot see (a Fortran binding that
 * calls PMPI_ directly) cannot make it grow without end. */
#ifndef MOP_RMA_PENDING_H
#define MOP_RMA_PENDING_H

#include <stddef.h>
#include <stdint.h>

/* Why an operation left the list (mop_rma_done.state). */
typedef enum mop_rma_state {
    MOP_RMA_PENDING = 0,      /* still waiting; when taken: completed by this thread's call */
    MOP_RMA_OTHER_THREAD = 1, /* completed by another thread's synchronization call */
    MOP_RMA_WIN_FREED = 2,    /* its window was freed (by another thread) while pending */
} mop_rma_state;

/* Any target of the window (fence, complete, flush_all, unlock_all, free). */
enum { MOP_RMA_ALL_TARGETS = -1 };

typedef struct mop_rma_op {
    uint64_t win;
    uint64_t key;
    uint64_t t_posted; /* exit of the posting call (ticks) */
    int32_t target;    /* rank in the window's group */
    uint8_t state;     /* mop_rma_state */
} mop_rma_op;

typedef struct mop_rma_done {
    uint64_t key;
    uint8_t state; /* mop_rma_state */
} mop_rma_done;

typedef struct mop_rma_pending {
    mop_rma_op *ops;
    size_t n, cap;
    size_t max;    /* cap on n */
    size_t marked; /* ops whose state is not MOP_RMA_PENDING */
    size_t peak;
} mop_rma_pending;

void mop_rma_pending_init(mop_rma_pending *p, size_t max);
void mop_rma_pending_free(mop_rma_pending *p);

/* Remembers an operation. Returns 0, or -1 when the list is at its cap or
 * memory is short (the caller then cannot end the transfer, and says so). */
int mop_rma_pending_add(mop_rma_pending *p, uint64_t win, int32_t target, uint64_t key,
                        uint64_t t_posted);

/* This thread's synchronization call completed the operations on win to
 * target (MOP_RMA_ALL_TARGETS: to any): removes up to `max` of them into
 * out[] with their state (an operation another thread already completed or
 * freed keeps that state). Returns how many; call again while it returns max. */
size_t mop_rma_pending_take(mop_rma_pending *p, uint64_t win, int32_t target,
                            mop_rma_done *out, size_t max);

/* Another thread's call completed (state MOP_RMA_OTHER_THREAD) or freed
 * (MOP_RMA_WIN_FREED) the operations on win to target: marks those still
 * pending that were posted before t_call (the entry of that call; later ones
 * are not completed by it). The owner takes them with
 * mop_rma_pending_take_marked. Returns how many were marked. */
size_t mop_rma_pending_mark(mop_rma_pending *p, uint64_t win, int32_t target,
                            uint64_t t_call, mop_rma_state state);

/* Removes up to `max` marked operations into out[]; returns how many. */
size_t mop_rma_pending_take_marked(mop_rma_pending *p, mop_rma_done *out, size_t max);

#endif
