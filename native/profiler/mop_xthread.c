/* mop_xthread.c - the owner table and the inboxes of mop_xthread.h. Every
 * shared word is read and written with __atomic builtins, never under a lock:
 * these calls run inside MPI wrappers, concurrently on every thread.
 *
 * Owner table: open addressing, linear probing from the handle's hash, so
 * every (handle, thread) entry of one handle lies in one run of slots. A slot
 * is claimed once (its key goes from 0 to the handle by CAS) and never freed:
 * MPI libraries reuse a small set of handles (free lists, object pools), so the
 * number of distinct pairs stays near the peak of outstanding requests times
 * the threads that post them. The state word holds the posting thread (high
 * 32 bits, written once after the claim) and its requests outstanding on that
 * handle (low 32 bits). Only the posting thread counts up; any thread counts
 * down, by CAS so that two completions never take the same post.
 *
 * A completion is recorded after the MPI call returns, and the MPI freed the
 * handle inside the call: in between, another thread may have been given the
 * same handle for a new request. So when several threads have the handle
 * outstanding, the completion takes the post made first (t_post: when the
 * posting call had returned, so a post of the reused handle is always later).
 * More than one request outstanding on one handle also happens when an MPI
 * shares a handle among requests that completed at once (MPICH's pre-completed
 * sends): then which post an END takes is not determined, and does not matter
 * for the bounds, each of them was complete when posted. */
#include "mop_xthread.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct mop_xt_slot {
    uint64_t key;    /* 0 = free */
    uint64_t state;  /* thread << 32 | outstanding; 0 until the claimer writes it */
    uint64_t t_post; /* when the latest post on it returned */
} mop_xt_slot;

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

void mop_xt_posted(uint32_t self, uint64_t key, uint64_t t)
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
                __atomic_store_n(&s->t_post, t, __ATOMIC_RELAXED);
                __atomic_store_n(&s->state, (uint64_t)self << 32 | 1, __ATOMIC_RELEASE);
                return;
            }
            /* another thread claimed it first: k is now its key */
        }
        if (k != key)
            continue;
        /* Only `self` claims and counts up entries of `self`, so a state
         * naming self is ours; one still 0 is another thread's being claimed. */
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) >> 32 == self) {
            __atomic_store_n(&s->t_post, t, __ATOMIC_RELAXED);
            __atomic_fetch_add(&s->state, 1, __ATOMIC_ACQ_REL);
            return;
        }
    }
    __atomic_fetch_add(&mop_xt_untracked_n, 1, __ATOMIC_RELAXED);
}

/* Takes one outstanding request from slot s if it has one. */
static bool mop_xt_take_one(mop_xt_slot *s, uint64_t st)
{
    while ((st & UINT32_MAX) != 0) {
        if (__atomic_compare_exchange_n(&s->state, &st, st - 1, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return true;
    }
    return false;
}

/* Key's entry of thread self (`mine`), or else the other threads' entry
 * whose first outstanding post is oldest; NULL when none has one outstanding. */
static mop_xt_slot *mop_xt_find(uint32_t self, uint64_t key, bool mine)
{
    size_t h = mop_xt_hash(key);
    mop_xt_slot *best = NULL;
    uint64_t best_t = 0;
    for (size_t i = 0; i < MOP_XT_PROBE; i++) {
        mop_xt_slot *s = &mop_xt_table[(h + i) & (MOP_XT_SLOTS - 1)];
        uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
        if (k == 0)
            break; /* end of the run: no further entry of key */
        if (k != key)
            continue;
        uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        uint32_t owner = (uint32_t)(st >> 32);
        if (owner == 0 || (owner == self) != mine || (st & UINT32_MAX) == 0)
            continue;
        if (mine)
            return s;
        uint64_t t = __atomic_load_n(&s->t_post, __ATOMIC_RELAXED);
        if (!best || t < best_t) {
            best = s;
            best_t = t;
        }
    }
    return best;
}

/* Takes (with `release`) one outstanding post of key (see mop_xt_find), or
 * only finds it; its thread, 0 if none. */
static uint32_t mop_xt_claim(uint32_t self, uint64_t key, bool mine, bool release)
{
    for (;;) {
        mop_xt_slot *s = mop_xt_find(self, key, mine);
        if (!s)
            return 0;
        uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (!release && (st & UINT32_MAX) != 0)
            return (uint32_t)(st >> 32);
        if (release && mop_xt_take_one(s, st))
            return (uint32_t)(st >> 32);
        /* another completion took it first: look again */
    }
}

uint32_t mop_xt_owner(uint32_t self, uint64_t key, bool release)
{
    if (!mop_xt_tracked(key))
        return 0;
    /* The completing thread's own request first: when it has one, nothing
     * crossed threads (a real handle is outstanding once, and no other thread
     * can be given it before this completion; or the handle is shared, and
     * any post will do). */
    if (self != 0 && mop_xt_claim(self, key, true, release))
        return 0;
    return mop_xt_claim(self, key, false, release);
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
