/* mop_sites.c - the call-site and site-pair tables; see mop_sites.h. */
#include "mop_sites.h"

#include <string.h>

void mop_sites_init(mop_sites *s)
{
    memset(s, 0, sizeof *s);
    s->nsite = 1; /* site 0: unknown */
}

/* Fibonacci hashing: return addresses differ in their low bits, and the
 * multiply spreads them over the top bits. */
static inline uint32_t mop_hash(uint64_t key, unsigned bits)
{
    return (uint32_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

uint16_t mop_sites_site(mop_sites *s, uint64_t addr, uint16_t fn, int *overflow)
{
    if (addr == 0)
        return MOP_SITE_UNKNOWN;
    uint32_t i = mop_hash(addr, 9);
    while (s->site_key[i] != addr) {
        if (s->site_key[i] == 0)
            goto insert;
        i = (i + 1) & (MOP_SITE_SLOTS - 1);
    }
    return s->site_slot[i];
insert:
    if (s->nsite == MOP_MAX_SITES) {
        *overflow = 1;
        return MOP_SITE_UNKNOWN;
    }
    uint16_t id = s->nsite++;
    s->site[id].addr = addr;
    s->site[id].fn = fn;
    s->site_key[i] = addr;
    s->site_slot[i] = id;
    return id;
}

static mop_pair *mop_pair_of(mop_sites *s, uint16_t post, uint16_t end)
{
    uint32_t key = ((uint32_t)post << 16 | end) + 1;
    uint32_t i = mop_hash(key, 10);
    while (s->pair_key[i] != key) {
        if (s->pair_key[i] == 0)
            goto insert;
        i = (i + 1) & (MOP_PAIR_SLOTS - 1);
    }
    return &s->pair[s->pair_slot[i]];
insert:
    if (s->npair == MOP_MAX_PAIRS)
        return NULL;
    mop_pair *pr = &s->pair[s->npair];
    pr->post = post;
    pr->end = end;
    s->pair_key[i] = key;
    s->pair_slot[i] = s->npair++;
    return pr;
}

mop_pair *mop_sites_reserve(mop_sites *s, uint16_t post, uint16_t end)
{
    mop_pair *pr = mop_pair_of(s, post, end);
    if (pr) {
        mop_site *site = &s->site[post];
        site->last_end = (uint16_t)(end + 1);
        site->last_pair = (uint16_t)(pr - s->pair);
    }
    return pr;
}

int mop_sites_add_slow(mop_sites *s, uint16_t post, uint16_t end, mop_acc x, uint64_t polled)
{
    mop_pair *pr = mop_sites_reserve(s, post, end);
    if (!pr)
        return -1;
    mop_acc_merge(&pr->x, &x);
    pr->polled += polled;
    return 0;
}

uint64_t mop_sites_merge(mop_sites *dst, const mop_sites *src, uint64_t *pair_transfers_lost)
{
    uint16_t map[MOP_MAX_SITES];
    uint64_t sites_lost = 0;
    map[0] = MOP_SITE_UNKNOWN;
    dst->site[0].calls += src->site[0].calls;
    dst->site[0].call_ticks += src->site[0].call_ticks;
    for (uint16_t i = 1; i < src->nsite; i++) {
        int full = 0;
        map[i] = mop_sites_site(dst, src->site[i].addr, src->site[i].fn, &full);
        sites_lost += (uint64_t)full;
        dst->site[map[i]].calls += src->site[i].calls;
        dst->site[map[i]].call_ticks += src->site[i].call_ticks;
    }
    for (uint16_t k = 0; k < src->npair; k++) {
        const mop_pair *sp = &src->pair[k];
        mop_pair *dp = mop_pair_of(dst, map[sp->post], map[sp->end]);
        if (dp) {
            mop_acc_merge(&dp->x, &sp->x);
            dp->polled += sp->polled;
        }
        else
            *pair_transfers_lost += sp->x.transfers;
    }
    return sites_lost;
}
