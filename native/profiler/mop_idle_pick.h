/* mop_idle_pick.h - which path processes a thread's event queue, picked from
 * the thread's own pace (issue 40): the plain path (the queue processed when
 * full) or processing while the program waits in MPI (mop_idle.h).
 *
 * Which one costs less is not a constant: on one 2-core VM processing while
 * waiting saved MPICH 38 ns a message, on a fresh VM of the same kind it cost
 * 440 ns more, and Open MPI's figures differ again (docs/profiler.md, "Memory
 * and cost"); it also depends on whether the program's waits are long. So the
 * thread measures it on itself: its pace is the time it takes to record
 * MOP_PICK_EPOCH events (an epoch), which is the program's own progress with the
 * profiler's cost in it, whatever the cause of that cost (the tests a wait
 * makes, a stalled partner, where the MPI lets the work hide).
 *
 * A trial runs epochs in pairs, one on each path, in ABBA order (idle first in
 * the even pairs, plain first in the odd ones) so that a steady drift of the
 * program's pace favours neither. The idle path is picked only when it was
 * faster in every one of MOP_PICK_PAIRS pairs; the trial stops at the first pair
 * it loses. So where the idle path is dearer, a trial costs one epoch on it.
 * Between trials the pick is held, MOP_PICK_HOLD_MIN epochs after a trial that
 * changed it and twice as long as the last hold after one that confirmed it (up
 * to MOP_PICK_HOLD_MAX), so the trials' share of a long run shrinks towards
 * nothing while a program whose phases change is still measured again.
 *
 * Pure C: no MPI, no clock (times come in as arguments; the unit test feeds
 * them), one instance per thread, used under the thread's lock. */
#ifndef MOP_IDLE_PICK_H
#define MOP_IDLE_PICK_H

#include <stdint.h>

enum {
    MOP_PATH_PLAIN = 0,
    MOP_PATH_IDLE = 1,
    /* Four queues' worth: a few milliseconds of a message-rate loop, long
     * enough that a timer tick or a short preemption is a small part of it. */
    MOP_PICK_EPOCH = 16384,
    MOP_PICK_PAIRS = 3,
    /* Epochs on the plain path before the first trial: MPI_Init's and the
     * program's set-up calls are not its steady pace. */
    MOP_PICK_WARMUP = 2,
    MOP_PICK_HOLD_MIN = 16,
    MOP_PICK_HOLD_MAX = 1024,
};

typedef struct mop_idle_pick {
    uint8_t path;       /* the current epoch's path */
    uint8_t kept;       /* the path held between trials (the last pick) */
    uint8_t in_trial;
    uint8_t slot;       /* epochs of the current trial done */
    uint8_t started;    /* t0 is set */
    uint32_t hold;      /* epochs left before the next trial */
    uint32_t hold_len;  /* the last hold's length */
    uint64_t t0;        /* the current epoch's start (ticks) */
    uint64_t pair[2];   /* the current pair's epoch times, by path */
    uint64_t trials, idle_epochs, epochs;
} mop_idle_pick;

void mop_idle_pick_init(mop_idle_pick *p);

/* An epoch ended at `now` (ticks of one monotonic clock): returns the path of
 * the next one. The first call only starts the first epoch. */
int mop_idle_pick_epoch(mop_idle_pick *p, uint64_t now);

#endif
