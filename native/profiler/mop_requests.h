/* mop_requests.h - the outstanding-transfer table: request handle -> what is
 * known of the transfer (its begin mark, size, posting function, region) and
 * of a persistent request's description. Open addressing with backward-shift
 * deletion, so its memory follows the number of requests outstanding at once,
 * never the length of the run. Pure C, no MPI: handles are opaque 64-bit keys. */
#ifndef MOP_REQUESTS_H
#define MOP_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mop_bounds.h"

enum {
    MOP_REQ_ACTIVE = 1u << 0,     /* a transfer is in flight on this handle */
    MOP_REQ_PERSISTENT = 1u << 1, /* a persistent request's description lives here */
    MOP_REQ_MONITORED = 1u << 2,  /* the transfer began while monitoring was on */
    MOP_REQ_DONE = 1u << 3,       /* closed by MPI_Request_get_status: the handle is
                                   * still valid, its Wait/Test/free closes nothing */
    MOP_REQ_JOINED = 1u << 4,     /* carried by the request of the entry before it
                                   * (MPI_Isendrecv's receive): ends with it */
};

struct mop_req_queue;

typedef struct mop_req {
    uint64_t key;
    struct mop_req_queue *more; /* later entries sharing this handle, oldest first */
    mop_mark begin;
    int64_t bytes;    /* posted size (a receive's capacity) */
    int32_t peer;     /* world rank, -1 unknown */
    uint16_t tests;   /* the thread's Test-family calls when it was posted, mod 2^16 */
    uint16_t fn;
    uint16_t region;
    uint16_t site;    /* posting call's site (mop_sites.h) */
    uint8_t kind;     /* mop_kind */
    uint8_t flags;
    bool used;        /* slot occupied */
} mop_req;

_Static_assert(sizeof(mop_req) <= 64, "a request entry stays one cache line");

/* A fresh entry for key in e: used, no flags, peer unknown. */
static inline mop_req *mop_req_fresh(mop_req *e, uint64_t key)
{
    *e = (mop_req){.key = key, .used = true, .peer = -1};
    return e;
}

/* The later entries of a shared handle, oldest first: items[head, head + count). */
struct mop_req_queue {
    size_t head, count, cap;
    mop_req items[];
};

/* How full the table may get, with its switch for measuring it against the
 * plain way (MPI_OVERLAP_NO_OPT=load, docs/profiler.md "Memory and cost"): a
 * field read where cap was, so the switch costs the hot path nothing. The
 * hash's fold and the inline move-up of a shared handle have no switch: one
 * would cost a load and a branch on every transfer (callgrind: 1 to 4
 * instructions), and their gain was counted in instructions (docs). */
typedef struct mop_requests_tuning {
    unsigned load_shift; /* grows past cap >> load_shift entries: 2 (a quarter), 1 */
} mop_requests_tuning;

#define MOP_REQUESTS_TUNED ((mop_requests_tuning){.load_shift = 2})

typedef struct mop_requests {
    mop_req *slots;
    size_t cap;   /* power of two */
    unsigned shift; /* 64 - log2(cap): the hash keeps a product's top bits */
    size_t limit;   /* cap >> tune.load_shift: the most entries before it grows */
    mop_requests_tuning tune;
    size_t count;
    size_t peak;
    /* The queue of the last shared handle whose entries were all removed, kept
     * for the next one: a window of sends on MPICH's or Open MPI's one shared
     * handle otherwise freed its queue and grew a new one by reallocs every
     * window (callgrind). At most one queue is kept. */
    struct mop_req_queue *spare;
} mop_requests;

int mop_requests_init(mop_requests *r, size_t initial_cap);
/* Another tuning than MOP_REQUESTS_TUNED, for an empty table (just initialised). */
void mop_requests_tune(mop_requests *r, mop_requests_tuning tune);
void mop_requests_free(mop_requests *r);
/* dst becomes an independent copy of src (its own memory). Returns 0, or -1
 * when out of memory (dst is then empty: free, never used). */
int mop_requests_copy(mop_requests *dst, const mop_requests *src);

/* Fibonacci hashing of the key folded with itself shifted: one multiply, the
 * product's top bits. Handles are small integers counting up (MPICH) or
 * pointers a fixed stride apart (Open MPI's free lists). The multiply alone
 * spreads the integers perfectly, but maps a progression of stride s to one
 * of step frac(s * phi), which for some strides lies near a fraction of small
 * denominator: Open MPI 5's receive requests, 768 bytes apart, fell into
 * clusters of three, and 62 % of their removals took the backward shift (53
 * instructions per message; callgrind, mo_msgrate). The fold (key ^ key >> 7)
 * breaks the progression (a simulation of a window of 64 at load 1/4 over
 * strides 16..4096: at most 25 of 64 removals shift, against 63, and 5 at
 * 768) and still spreads counting integers evenly (none shift). Costs a third
 * of the splitmix64 finaliser used before (its two multiplies sat on every
 * post's and completion's path). The shift is kept with the table, not
 * derived from its size at each of the three or more hashes a transfer takes
 * (callgrind). */
static inline size_t mop_requests_hash(uint64_t key, unsigned shift)
{
    return (size_t)(((key ^ key >> 7) * 0x9e3779b97f4a7c15ULL) >> shift);
}

/* Inline, as the removal's common case below: every completion takes both,
 * and their calls were a third of their cost (callgrind; measured in
 * docs/profiler.md, "Memory and cost"). */
static inline mop_req *mop_requests_find(mop_requests *r, uint64_t key)
{
    size_t mask = r->cap - 1;
    for (size_t i = mop_requests_hash(key, r->shift);; i = (i + 1) & mask) {
        if (!r->slots[i].used)
            return NULL;
        if (r->slots[i].key == key)
            return &r->slots[i];
    }
}

/* The slot holding key (its oldest entry), or the empty slot where an insert
 * would put it (used false; valid until the next insert or removal). Inline:
 * every post asks, and most fill that empty slot at once (mop_requests_claim). */
static inline mop_req *mop_requests_probe(mop_requests *r, uint64_t key)
{
    size_t mask = r->cap - 1, i = mop_requests_hash(key, r->shift);
    while (r->slots[i].used && r->slots[i].key != key)
        i = (i + 1) & mask;
    return &r->slots[i];
}

/* One more entry counted (and the peak). */
static inline void mop_requests_count_one(mop_requests *r)
{
    if (++r->count > r->peak)
        r->peak = r->count;
}

/* Whether one more entry needs the table grown first (load at most 1/4). At
 * 1/2, a window of 64 requests (a table of 128) sent a quarter to two thirds
 * of its removals into the backward shift, whatever the hash (a simulation
 * over strides 16..4096: 25 of 64 on average); at 1/4, 13. Entries are a cache
 * line each, so the lines a window touches are as many either way. */
static inline bool mop_requests_full(const mop_requests *r)
{
    return r->count >= r->limit;
}

/* Whether the empty slot probe returned may be filled now (the table need not
 * grow first); if so it is counted, and the caller writes the whole entry. */
static inline bool mop_requests_claim(mop_requests *r)
{
    if (mop_requests_full(r))
        return false;
    mop_requests_count_one(r);
    return true;
}

/* Returns the (oldest) slot for key, inserting an empty one (flags 0) when absent;
 * NULL when out of memory. Pointers are valid until the next insert/remove. */
mop_req *mop_requests_get(mop_requests *r, uint64_t key);

/* A new slot for a key the caller has just found absent; NULL when out of
 * memory. */
mop_req *mop_requests_insert(mop_requests *r, uint64_t key);

/* A new entry sharing slot's handle, queued behind it (constant time): MPIs
 * hand out one handle for many requests that completed at once (MPICH's
 * pre-completed "lightweight" requests, Open MPI's static completed request),
 * so a window of eager sends all share it; find returns the oldest. NULL when
 * out of memory. Inline while the queue has room: every such send takes it. */
mop_req *mop_requests_share_slow(mop_requests *r, mop_req *slot);

/* As mop_requests_share, for a caller that writes every other field of the
 * entry at once (a post's begin, mop_process.c): only the key, `more` and
 * `used` are set where the queue has room, the rest is not zeroed first (the
 * zeroing was 8 of the shared handle's instructions a send, callgrind). */
static inline mop_req *mop_requests_share_unfilled(mop_requests *r, mop_req *slot)
{
    struct mop_req_queue *q = slot->more;
    if (!q || q->head + q->count == q->cap)
        return mop_requests_share_slow(r, slot);
    mop_requests_count_one(r);
    mop_req *e = &q->items[q->head + q->count++];
    e->key = slot->key;
    e->more = NULL;
    e->used = true;
    return e;
}

static inline mop_req *mop_requests_share(mop_requests *r, mop_req *slot)
{
    mop_req *e = mop_requests_share_unfilled(r, slot);
    return e ? mop_req_fresh(e, slot->key) : NULL;
}

/* The entry after `entry` among those sharing slot's handle (slot as returned
 * by find, entry = slot or one returned by an earlier call), NULL after the
 * newest. Inline for the common case, a handle no other request shares:
 * every completion asks (callgrind: 10 instructions of a call saved). */
static inline mop_req *mop_requests_next(mop_req *slot, mop_req *entry)
{
    struct mop_req_queue *q = slot->more;
    if (!q || q->count == 0)
        return NULL;
    size_t i = entry == slot ? q->head : (size_t)(entry - q->items) + 1;
    return i < q->head + q->count ? &q->items[i] : NULL;
}

/* Removes the oldest entry of slot's key (slot as returned by find): the next
 * one sharing the handle, if any, takes its place. */
void mop_requests_remove_slow(mop_requests *r, mop_req *slot);

/* The next entry sharing slot's handle (q, not empty) takes its place. */
static inline void mop_requests_move_up(mop_requests *r, mop_req *slot,
                                        struct mop_req_queue *q)
{
    r->count--;
    *slot = q->items[q->head++];
    slot->more = q;
    if (--q->count == 0)
        q->head = 0;
}

static inline void mop_requests_remove(mop_requests *r, mop_req *slot)
{
    /* Most removals: a handle no other request shares, with nothing to shift
     * back into its slot (the table is at most a quarter full); or one of a window
     * of requests on one shared handle (MPICH's and Open MPI's completed
     * eager sends), whose next entry moves up. That one was a call of 46
     * instructions per send (callgrind, mo_msgrate), a third of them the
     * call's own. */
    struct mop_req_queue *q = slot->more;
    if (!q) {
        size_t i = (size_t)(slot - r->slots);
        if (!r->slots[(i + 1) & (r->cap - 1)].used) {
            r->count--;
            slot->used = false;
            return;
        }
    } else if (__builtin_expect(q->count > 0, 1)) { /* the queue is mostly not empty */
        /* Said likely: GCC 12 took this branch for a rare one and copied the
         * 64-byte entry with `rep movs` (a microcoded start-up, and 17
         * instructions a move by callgrind's count) instead of 16-byte moves. */
        mop_requests_move_up(r, slot, q);
        return;
    }
    mop_requests_remove_slow(r, slot);
}

/* Keys of the active entries, ascending (a shared key once per entry), into a
 * malloc'd array. */
uint64_t *mop_requests_active_keys(const mop_requests *r, size_t *n);

#endif
