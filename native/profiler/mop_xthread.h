/* mop_xthread.h - requests completed on another thread than the one that
 * posted them (docs/profiler.md, "Threads"). Each thread's events go to its own
 * engine, which pairs a request's begin with its end by handle; when another
 * thread completes (or frees) the request, that END must reach the posting
 * thread's engine, in its place among that thread's events. Two lock-free
 * pieces do it, used only when MPI may be called from several threads:
 *   - an owner table, (handle, posting thread) -> requests outstanding, and
 *     how many of them completing calls hold. A post counts up. A call that
 *     may complete or free a handle holds one of its posts *before* it calls
 *     the MPI (its own when it has one, else another thread's) and afterwards
 *     takes it (completed: the END goes to that post's thread) or lets it go.
 *     Held posts are invisible to other holds: the MPI frees a handle inside
 *     the completing call and may give it to another thread's new request at
 *     once, and that request's completion must not take the old post, whose
 *     END is not recorded yet;
 *   - per thread an inbox (a lock-free stack) into which other threads put the
 *     ENDs they saw for it; the thread moves them into its own queue before its
 *     next event, so they are processed between the events they fall between.
 * Pure C (no MPI), so the unit tests and ThreadSanitizer can drive it alone. */
#ifndef MOP_XTHREAD_H
#define MOP_XTHREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mop_event.h"

enum {
    MOP_XT_MAX_THREADS = 4096, /* thread ids 1..MOP_XT_MAX_THREADS; 0 = none */
    MOP_XT_SLOTS = 1 << 14,    /* (handle, thread) pairs the owner table holds */
    MOP_XT_PROBE = 256,        /* slots looked at before a post goes untracked */
};

typedef struct mop_xt_node {
    struct mop_xt_node *next;
    mop_event ev;
} mop_xt_node;

typedef struct mop_xt_inbox {
    mop_xt_node *head; /* pushed by other threads, taken whole by the owner */
} mop_xt_inbox;

/* Allocates (or clears, for tests) the owner table and the registry. Only
 * while no thread uses them. Returns 0, or -1 when out of memory (then every
 * call below is a no-op that keeps events where they are). */
int mop_xt_init(void);

/* Registers a thread's inbox: its id (>= 1), or 0 when MOP_XT_MAX_THREADS
 * threads have registered already (its posts are then not tracked). */
uint32_t mop_xt_register(mop_xt_inbox *ib);

/* Thread `self` posted (BEGIN, START) a request with handle `key`. Call it
 * after the BEGIN is in self's queue: from then on another thread may send
 * its END to self. */
void mop_xt_posted(uint32_t self, uint64_t key);

/* Thread `self` is about to call the MPI with handle `key`, which the call
 * may complete or free: holds one post of key that no other call holds (self's
 * own when it has one, else another thread's) and returns a ticket for
 * mop_xt_release; 0 when there is none (a key the table does not know: the
 * event stays in self's queue). Before the MPI call: once the MPI has freed
 * the handle it may give it to another thread's new request. */
uint32_t mop_xt_hold(uint32_t self, uint64_t key);

/* After that call: with `done` (the request completed or was freed) the held
 * post is taken, and its thread returned when that is not self (the END goes
 * to that thread's inbox), else 0; without, it is let go (it stays
 * outstanding) and 0 returned. Ticket 0: nothing to do, 0. */
uint32_t mop_xt_release(uint32_t self, uint32_t ticket, bool done);

/* For a query (MPI_Request_get_status: complete, but the handle stays valid
 * until its Wait, Test or free), which takes nothing: the thread of a post of
 * `key` when it is not self's, else 0 (also when none is known). Self's own
 * first, then posts not held: a held one may be an earlier request whose
 * handle the MPI has freed. */
uint32_t mop_xt_owner(uint32_t self, uint64_t key);

/* Puts a copy of ev into thread `to`'s inbox. Returns 0, or -1 when out of
 * memory (the caller keeps the event in its own queue instead). */
int mop_xt_send(uint32_t to, const mop_event *ev);

/* Takes everything in the inbox, as a list ordered by event time (oldest
 * first); the caller frees the nodes with free(). NULL when empty. */
mop_xt_node *mop_xt_take(mop_xt_inbox *ib);

/* Posts the owner table could not hold (full, or thread not registered): if
 * another thread completes one of them, it shows as begin-only + end-only. */
uint64_t mop_xt_untracked(void);

#endif
