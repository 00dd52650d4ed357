/* mop_sites.h - call sites (docs/profiler.md, "Call sites"): the return
 * addresses of the program's outermost MPI calls, each with its calls and
 * their time, and the transfers by (posting site, completing site) pair.
 * Fixed-size tables with open addressing and no deletion, so memory never
 * grows with the run: a site or pair that finds no room is counted by the
 * caller (counters site_overflow, pair_overflow), never dropped silently.
 * Site 0 is "unknown": a call whose address was not recorded, the posting
 * site of an end-only transfer, the completing site of a begin-only one.
 * Pure C, no MPI. */
#ifndef MOP_SITES_H
#define MOP_SITES_H

#include <stdbool.h>
#include <stdint.h>

#include "mop_acc.h"

enum {
    MOP_MAX_SITES = 256,
    MOP_SITE_SLOTS = 512,  /* hash slots: twice the sites, so probes stay short */
    MOP_MAX_PAIRS = 512,
    MOP_PAIR_SLOTS = 1024,
    MOP_SITE_UNKNOWN = 0,
};

typedef struct mop_site {
    uint64_t addr;   /* return address in the program (0: unknown) */
    uint16_t fn;     /* the MPI function called there (first seen) */
    /* The pair of this posting site last added to (last_end + 1, 0: none): a
     * site's transfers mostly complete at one place, so most adds skip the hash. */
    uint16_t last_end, last_pair;
    uint64_t calls, call_ticks;
} mop_site;

typedef struct mop_pair {
    uint16_t post, end; /* site ids */
    mop_acc x;
    /* Transfers with an MPI_Test-family call made between their post and their
     * completion (not the completing call): the program already polls there. */
    uint64_t polled;
} mop_pair;

typedef struct mop_sites {
    uint16_t nsite;                       /* sites in use, site 0 included */
    uint16_t npair;
    /* Hash slots hold their key beside the id, so a lookup reads one slot
     * (measured: the profiler's processing is paid on every call). */
    uint64_t site_key[MOP_SITE_SLOTS];    /* address, 0: empty */
    uint16_t site_slot[MOP_SITE_SLOTS];   /* site id */
    uint32_t pair_key[MOP_PAIR_SLOTS];    /* post << 16 | end, + 1; 0: empty */
    uint16_t pair_slot[MOP_PAIR_SLOTS];   /* pair index */
    mop_site site[MOP_MAX_SITES];
    mop_pair pair[MOP_MAX_PAIRS];
} mop_sites;

void mop_sites_init(mop_sites *s);

/* The id of the site at addr, added (with fn) when new; MOP_SITE_UNKNOWN for
 * addr 0 or when the table is full (*overflow then set to 1). */
uint16_t mop_sites_site(mop_sites *s, uint64_t addr, uint16_t fn, int *overflow);

/* Adds closed transfers' summed bounds to pair (post, end), `polled` of them
 * with a Test call between their post and completion; returns 0, or -1 when
 * the pair table is full (the transfers are then in no pair). */
int mop_sites_add_slow(mop_sites *s, uint16_t post, uint16_t end, mop_acc x, uint64_t polled);
/* Inline: most adds go to the pair their posting site last completed at. The
 * sums by value: a pointer made the callers' inlined fast paths keep them in
 * memory for the slow path, spilled on every transfer (callgrind). */
static inline int mop_sites_add(mop_sites *s, uint16_t post, uint16_t end, mop_acc x,
                                uint64_t polled)
{
    mop_site *site = &s->site[post];
    if (__builtin_expect(site->last_end != end + 1, 0))
        return mop_sites_add_slow(s, post, end, x, polled);
    mop_acc_merge(&s->pair[site->last_pair].x, &x);
    s->pair[site->last_pair].polled += polled;
    return 0;
}

/* Makes pair (post, end) if it is new and there is room, and makes it the
 * one its posting site last completed at (the next mop_sites_add's); returns
 * it, NULL when the table is full. */
mop_pair *mop_sites_reserve(mop_sites *s, uint16_t post, uint16_t end);

/* Adds src's sites and pairs into dst (threads of one process: the same
 * address is one site). Returns what found no room: sites + pairs' transfers. */
uint64_t mop_sites_merge(mop_sites *dst, const mop_sites *src, uint64_t *pair_transfers_lost);

#endif
