/* mop_xthread.h - requests completed on another thread than the one that
 * posted them (docs/profiler.md, "Threads"). Each thread's events go to its own
 * engine, which pairs a request's begin with its end by handle; when another
 * thread completes (or frees) the request, that END must reach the posting
 * thread's engine, in its place among that thread's events. Two lock-free
 * pieces do it, used only when MPI may be called from several threads:
 *   - an owner table, (handle, posting thread) -> requests outstanding: a post
 *     counts up, a completion counts down the completing thread's own entry if
 *     it has one (then the END stays where it is) and otherwise another
 *     thread's (the earliest post, when several have the handle
 *     outstanding), whose id it returns;
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

/* Thread `self` posted (BEGIN, START) a request with handle `key`; t: a time
 * taken after the posting call returned (it orders posts of one handle by
 * different threads). Call it after the BEGIN is in self's queue: from then
 * on another thread may send its END to self. */
void mop_xt_posted(uint32_t self, uint64_t key, uint64_t t);

/* Thread `self` saw `key` complete (END) or freed (FREE). Returns the id of the
 * thread whose outstanding request it was when that is not `self` (the event
 * belongs in that thread's inbox), else 0 (it stays in self's queue: self's
 * own request, or one the table does not know). With `release` the post is
 * taken (the handle is freed); without (MPI_Request_get_status: complete, but
 * the handle stays valid until its Wait, Test or free) it stays outstanding. */
uint32_t mop_xt_owner(uint32_t self, uint64_t key, bool release);

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
