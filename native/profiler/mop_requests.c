/* mop_requests.c - open-addressing hash table of outstanding transfers. */
#include "mop_requests.h"

#include <stdlib.h>
#include <string.h>

/* Appends an empty entry for slot's key; NULL when out of memory. */
static mop_req *mop_queue_append(mop_requests *r, mop_req *slot)
{
    struct mop_req_queue *q = slot->more;
    if (!q && r->spare) { /* the last emptied queue, with its room */
        q = slot->more = r->spare;
        r->spare = NULL;
        q->head = q->count = 0;
    }
    if (!q || q->head + q->count == q->cap) {
        if (q && q->head > 0) { /* room at the front: compact */
            memmove(q->items, q->items + q->head, q->count * sizeof q->items[0]);
            q->head = 0;
        } else {
            size_t cap = q ? 2 * q->cap : 8;
            struct mop_req_queue *nq = realloc(q, sizeof *nq + cap * sizeof nq->items[0]);
            if (!nq)
                return NULL;
            if (!q)
                nq->head = nq->count = 0;
            nq->cap = cap;
            slot->more = q = nq;
        }
    }
    return mop_req_fresh(&q->items[q->head + q->count++], slot->key);
}

static unsigned mop_shift_of(size_t cap)
{
    return 64u - (unsigned)__builtin_ctzll((uint64_t)cap);
}

int mop_requests_init(mop_requests *r, size_t initial_cap)
{
    size_t cap = 16;
    while (cap < initial_cap)
        cap *= 2;
    r->slots = calloc(cap, sizeof *r->slots);
    r->cap = r->slots ? cap : 0;
    r->shift = mop_shift_of(cap);
    r->tune = MOP_REQUESTS_TUNED;
    r->limit = cap >> r->tune.load_shift;
    r->count = r->peak = 0;
    r->spare = NULL;
    return r->slots ? 0 : -1;
}

void mop_requests_tune(mop_requests *r, mop_requests_tuning tune)
{
    r->tune = tune;
    r->limit = r->cap >> tune.load_shift;
}

void mop_requests_free(mop_requests *r)
{
    for (size_t i = 0; i < r->cap; i++)
        if (r->slots[i].used)
            free(r->slots[i].more);
    free(r->spare);
    free(r->slots);
    memset(r, 0, sizeof *r);
}

int mop_requests_copy(mop_requests *dst, const mop_requests *src)
{
    *dst = *src;
    dst->spare = NULL; /* src's, not to be shared */
    dst->slots = malloc(src->cap * sizeof *dst->slots);
    if (!dst->slots) {
        memset(dst, 0, sizeof *dst);
        return -1;
    }
    memcpy(dst->slots, src->slots, src->cap * sizeof *dst->slots);
    int rc = 0;
    for (size_t i = 0; i < src->cap; i++) {
        mop_req *s = &dst->slots[i];
        const struct mop_req_queue *q = src->slots[i].more;
        s->more = NULL; /* a free slot may keep a stale pointer: never copied */
        if (!s->used || !q)
            continue;
        size_t bytes = sizeof *q + q->cap * sizeof q->items[0];
        if (!(s->more = malloc(bytes))) {
            rc = -1;
            continue;
        }
        memcpy(s->more, q, bytes);
    }
    if (rc != 0)
        mop_requests_free(dst);
    return rc;
}

static int mop_requests_grow(mop_requests *r)
{
    size_t ncap = r->cap * 2;
    mop_req *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < r->cap; i++) {
        if (!r->slots[i].used)
            continue;
        size_t j = mop_requests_hash(r->slots[i].key, mop_shift_of(ncap));
        while (ns[j].used)
            j = (j + 1) & (ncap - 1);
        ns[j] = r->slots[i];
    }
    free(r->slots);
    r->slots = ns;
    r->cap = ncap;
    r->shift = mop_shift_of(ncap);
    r->limit = ncap >> r->tune.load_shift;
    return 0;
}

mop_req *mop_requests_get(mop_requests *r, uint64_t key)
{
    /* One probe for both outcomes: the run ends at the key or at the empty
     * slot an insert would take, unless the table grows (the slot moves). */
    mop_req *e = mop_requests_probe(r, key);
    if (e->used)
        return e;
    if (!mop_requests_claim(r))
        return mop_requests_insert(r, key);
    return mop_req_fresh(e, key);
}

mop_req *mop_requests_insert(mop_requests *r, uint64_t key)
{
    if (mop_requests_full(r) && mop_requests_grow(r) != 0)
        return NULL;
    size_t mask = r->cap - 1, i = mop_requests_hash(key, r->shift);
    while (r->slots[i].used)
        i = (i + 1) & mask;
    mop_requests_count_one(r);
    return mop_req_fresh(&r->slots[i], key);
}

mop_req *mop_requests_share_slow(mop_requests *r, mop_req *slot)
{
    mop_req *e = mop_queue_append(r, slot);
    if (e)
        mop_requests_count_one(r);
    return e;
}

void mop_requests_remove_slow(mop_requests *r, mop_req *slot)
{
    size_t mask = r->cap - 1, i = (size_t)(slot - r->slots);
    struct mop_req_queue *q = slot->more;
    if (q && q->count > 0) { /* the next request sharing the handle moves up */
        mop_requests_move_up(r, slot, q);
        return;
    }
    r->count--;
    if (q) { /* kept for the next shared handle (one at most) */
        if (r->spare)
            free(r->spare);
        r->spare = q;
        r->slots[i].more = NULL;
    }
    r->slots[i].used = false;
    /* Backward-shift: pull later members of the probe run into the hole so
     * lookups never need tombstones. */
    for (size_t j = (i + 1) & mask; r->slots[j].used; j = (j + 1) & mask) {
        size_t home = mop_requests_hash(r->slots[j].key, r->shift);
        bool movable = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            r->slots[i] = r->slots[j];
            r->slots[j].used = false;
            i = j;
        }
    }
}

static int mop_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t *mop_requests_active_keys(const mop_requests *r, size_t *n)
{
    uint64_t *keys = malloc((r->count ? r->count : 1) * sizeof *keys);
    *n = 0;
    if (!keys)
        return NULL;
    for (size_t i = 0; i < r->cap; i++) {
        const mop_req *s = &r->slots[i];
        if (!s->used)
            continue;
        if (s->flags & MOP_REQ_ACTIVE)
            keys[(*n)++] = s->key;
        /* entries behind it may be active while it is not (closed by a query) */
        for (size_t k = 0; s->more && k < s->more->count; k++)
            if (s->more->items[s->more->head + k].flags & MOP_REQ_ACTIVE)
                keys[(*n)++] = s->key;
    }
    qsort(keys, *n, sizeof *keys, mop_cmp_u64);
    return keys;
}
