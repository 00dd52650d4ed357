/* mop_xthread.c - the owner table and the inboxes of mop_xthread.h. Every
 * shared word is read and written with __atomic builtins, never under a lock:
 * these calls run inside MPI wrappers, concurrently on every thread.
 *
 * Owner table: open addressing, linear probing from the handle's hash, so
 * every (handle, thread) entry of one handle lies in one run of slots. A slot
 * is claimed once (its key goes from 0 to the handle by CAS) and never freed:
 * MPI libraries reuse a small set of handles (free lists, object pools), so the
 * number of distinct pairs stays near the peak of outstanding requests times
 * the threads that post them. The owner word names the posting thread
 * (written once, after the claim); the state word holds its requests
 * outstanding on that handle (low 32 bits) and how many of them completing
 * calls hold (high 32 bits). Only the posting thread counts up; a hold takes
 * an outstanding post that is not held, by CAS, so that two calls never hold
 * the same one; its release counts both down (or only the hold).
 *
 * Why hold before the MPI call: the MPI frees a handle inside the call that
 * completes its request, and another thread may be given the same handle for
 * a new request, post it, hand it on, and have it completed by a third thread,
 * all before the first call returns. Looked up afterwards, the two
 * completions of one handle would be told apart only by the order in which
 * they look it up, which is not the order of the requests. Before the call the
 * handle names one request; the post of the request whose handle was freed is
 * held by its completing call until that call records it, so the new
 * request's completion cannot take it.
 * More than one request outstanding on one handle also happens when an MPI
 * shares a handle among requests that completed at once (MPICH's pre-completed
 * sends): then which post an END takes is not determined, and does not matter
 * for the bounds, each of them was complete when posted. */
#include "mop_xthread.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct mop_xt_slot {
    uint64_t key;   /* 0 = free */
    uint32_t owner; /* the posting thread; 0 until the claimer writes it */
    uint64_t state; /* held << 32 | outstanding */
} mop_xt_slot;

#define MOP_XT_HELD_ONE (UINT64_C(1) << 32)

static inline uint32_t mop_xt_outstanding(uint64_t st)
{
    return (uint32_t)st;
}

/* Outstanding posts that no call holds. */
static inline uint32_t mop_xt_free_posts(uint64_t st)
{
    return (uint32_t)st - (uint32_t)(st >> 32);
}

static mop_xt_slot *mop_xt_table;
static mop_xt_inbox *mop_xt_inboxes[MOP_XT_MAX_THREADS];
static uint32_t mop_xt_nthreads;
static uint64_t mop_xt_untracked_n;

int mop_xt_init(void)
{
    free(mop_xt_table);
    mop_xt_table = calloc(MOP_XT_SLOTS, sizeof *mop_xt_table);
    memset(mop_xt_inboxes, 0, sizeof mop_xt_inboxes);
    mop_xt_nthreads = 0;
    mop_xt_untracked_n = 0;
    return mop_xt_table ? 0 : -1;
}

uint32_t mop_xt_register(mop_xt_inbox *ib)
{
    uint32_t id = __atomic_add_fetch(&mop_xt_nthreads, 1, __ATOMIC_RELAXED);
    if (id > MOP_XT_MAX_THREADS)
        return 0;
    /* Release: a thread that finds this id in the table finds the inbox too. */
    __atomic_store_n(&mop_xt_inboxes[id - 1], ib, __ATOMIC_RELEASE);
    return id;
}

/* Keys with bit 63 set are made up by the wrappers (one-sided operations),
 * never handles, and always ended by the thread that made them. */
static bool mop_xt_tracked(uint64_t key)
{
    return key != 0 && !(key >> 63) && mop_xt_table;
}

static size_t mop_xt_hash(uint64_t key)
{
    key ^= key >> 33;
    key *= UINT64_C(0xff51afd7ed558ccd);
    key ^= key >> 33;
    return (size_t)key & (MOP_XT_SLOTS - 1);
}

void mop_xt_posted(uint32_t self, uint64_t key)
{
    if (!mop_xt_tracked(key))
        return;
    if (self == 0) {
        __atomic_fetch_add(&mop_xt_untracked_n, 1, __ATOMIC_RELAXED);
        return;
    }
    size_t h = mop_xt_hash(key);
    for (size_t i = 0; i < MOP_XT_PROBE; i++) {
        mop_xt_slot *s = &mop_xt_table[(h + i) & (MOP_XT_SLOTS - 1)];
        uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
        if (k == 0) {
            if (__atomic_compare_exchange_n(&s->key, &k, key, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                /* Ours: readers skip it until this store names its thread. */
                __atomic_store_n(&s->state, 1, __ATOMIC_RELAXED);
                __atomic_store_n(&s->owner, self, __ATOMIC_RELEASE);
                return;
            }
            /* another thread claimed it first: k is now its key */
        }
        if (k != key)
            continue;
        /* Only `self` claims and counts up entries of `self`, so an owner
         * naming self is ours; one still 0 is another thread's being claimed. */
        if (__atomic_load_n(&s->owner, __ATOMIC_ACQUIRE) == self) {
            __atomic_fetch_add(&s->state, 1, __ATOMIC_ACQ_REL);
            return;
        }
    }
    __atomic_fetch_add(&mop_xt_untracked_n, 1, __ATOMIC_RELAXED);
}

/* Holds one free post (outstanding, not held) of slot s, whose state was
 * read as st; false when it has none any more. */
static bool mop_xt_hold_slot(mop_xt_slot *s, uint64_t st)
{
    while (mop_xt_free_posts(st) != 0) {
        if (__atomic_compare_exchange_n(&s->state, &st, st + MOP_XT_HELD_ONE, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return true;
    }
    return false;
}

uint32_t mop_xt_hold(uint32_t self, uint64_t key)
{
    if (!mop_xt_tracked(key))
        return 0;
    size_t h = mop_xt_hash(key);
    for (;;) {
        /* self's entry when it has a free post, else the first other one */
        size_t other = SIZE_MAX;
        for (size_t i = 0; i < MOP_XT_PROBE; i++) {
            size_t at = (h + i) & (MOP_XT_SLOTS - 1);
            mop_xt_slot *s = &mop_xt_table[at];
            uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
            if (k == 0)
                break; /* end of the run: no further entry of key */
            if (k != key)
                continue;
            uint32_t owner = __atomic_load_n(&s->owner, __ATOMIC_ACQUIRE);
            uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
            if (owner == 0 || mop_xt_free_posts(st) == 0)
                continue; /* being claimed, or nothing to hold */
            if (owner != self) {
                if (other == SIZE_MAX)
                    other = at;
            } else if (mop_xt_hold_slot(s, st)) {
                return (uint32_t)at + 1;
            }
        }
        if (other == SIZE_MAX)
            return 0;
        mop_xt_slot *s = &mop_xt_table[other];
        if (mop_xt_hold_slot(s, __atomic_load_n(&s->state, __ATOMIC_ACQUIRE)))
            return (uint32_t)other + 1;
        /* another call held its last free post first: look again */
    }
}

uint32_t mop_xt_release(uint32_t self, uint32_t ticket, bool done)
{
    if (ticket == 0 || ticket > MOP_XT_SLOTS || !mop_xt_table)
        return 0;
    mop_xt_slot *s = &mop_xt_table[ticket - 1];
    __atomic_fetch_sub(&s->state, done ? MOP_XT_HELD_ONE + 1 : MOP_XT_HELD_ONE,
                       __ATOMIC_ACQ_REL);
    uint32_t owner = __atomic_load_n(&s->owner, __ATOMIC_ACQUIRE);
    return done && owner != self ? owner : 0;
}

uint32_t mop_xt_owner(uint32_t self, uint64_t key)
{
    if (!mop_xt_tracked(key))
        return 0;
    /* By rank: 0 self's entry with a post not held (then the END stays), 1
     * another thread's with one, 2 self's and 3 another's with all held. */
    size_t h = mop_xt_hash(key);
    uint32_t best = 0;
    int best_rank = 4;
    for (size_t i = 0; i < MOP_XT_PROBE && best_rank > 0; i++) {
        mop_xt_slot *s = &mop_xt_table[(h + i) & (MOP_XT_SLOTS - 1)];
        uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
        if (k == 0)
            break;
        if (k != key)
            continue;
        uint32_t owner = __atomic_load_n(&s->owner, __ATOMIC_ACQUIRE);
        uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (owner == 0 || mop_xt_outstanding(st) == 0)
            continue;
        int rank = (owner == self ? 0 : 1) + (mop_xt_free_posts(st) != 0 ? 0 : 2);
        if (rank < best_rank) {
            best = owner;
            best_rank = rank;
        }
    }
    return best != self ? best : 0;
}

int mop_xt_send(uint32_t to, const mop_event *ev)
{
    if (to == 0 || to > MOP_XT_MAX_THREADS)
        return -1;
    mop_xt_inbox *ib = __atomic_load_n(&mop_xt_inboxes[to - 1], __ATOMIC_ACQUIRE);
    mop_xt_node *node = ib ? malloc(sizeof *node) : NULL;
    if (!node)
        return -1;
    node->ev = *ev;
    node->next = __atomic_load_n(&ib->head, __ATOMIC_RELAXED);
    /* Release: the owner that takes the list sees the node's contents. */
    while (!__atomic_compare_exchange_n(&ib->head, &node->next, node, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
        ;
    return 0;
}

mop_xt_node *mop_xt_take(mop_xt_inbox *ib)
{
    mop_xt_node *stack = __atomic_exchange_n(&ib->head, NULL, __ATOMIC_ACQUIRE);
    /* The stack is newest first; insert each node into a list sorted by time
     * (stable: equal times keep the order they were sent in). The lists are
     * short: what other threads completed since this thread's last event. */
    mop_xt_node *sorted = NULL;
    while (stack) {
        mop_xt_node *n = stack;
        stack = stack->next;
        /* n was sent before everything already in `sorted`: it goes before
         * those with its time. Times mostly grow with the order of sending,
         * so this usually stops at the head. */
        mop_xt_node **at = &sorted;
        while (*at && (*at)->ev.t < n->ev.t)
            at = &(*at)->next;
        n->next = *at;
        *at = n;
    }
    return sorted;
}

uint64_t mop_xt_untracked(void)
{
    return __atomic_load_n(&mop_xt_untracked_n, __ATOMIC_RELAXED);
}
