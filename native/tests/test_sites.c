/* test_sites.c - call sites and site pairs (mop_sites.h), driven through the
 * event processing with synthetic events, MPI-free: an ENTER's key is its call
 * site; transfers go to their (posting site, completing site) pair; in-call
 * transfers pair a site with itself, end-only ones have an unknown posting
 * site; the tables stay fixed in size and count what does not fit; threads
 * merge by address; MPI_OVERLAP_CALLSITES=0 (cfg.callsites false) keeps none.
 * Ticks are nanoseconds; the table prices every transfer at 2 us. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "mo_test.h"
#include "mop_process.h"

enum { FN_ISEND = 1, FN_WAIT, FN_SEND, FN_TEST };
enum { SITE_ISEND = 0x401000, SITE_WAIT = 0x401080, SITE_SEND = 0x4010c0 };

static mop_xfer_table table;

static mop_event ev(mop_event_type type, uint64_t t, uint64_t key, int64_t bytes, int kind,
                    uint16_t id)
{
    return (mop_event){.t = t, .key = key, .bytes = bytes, .type = (uint8_t)type,
                       .kind = (uint8_t)kind, .id = id, .arg = -1};
}

static uint8_t test_fns[MOP_MAX_FN] = {[FN_TEST] = 1};

static void start(mop_process *p, bool callsites)
{
    mop_process_config cfg = {.table = &table, .s_per_tick = 1e-9, .callsites = callsites,
                              .test_fns = test_fns};
    CHECK(mop_process_init(p, &cfg) == 0);
}

/* MPI_Isend at SITE_ISEND, 10 us of computation, MPI_Wait at SITE_WAIT (request
 * 7), then MPI_Send at SITE_SEND; from t0, `reps` times. */
static void halo(mop_process *p, uint64_t t0, int reps)
{
    for (int i = 0; i < reps; i++, t0 += 100000) {
        const mop_event e[] = {
            ev(MOP_EV_ENTER, t0, SITE_ISEND, 0, 0, FN_ISEND),
            ev(MOP_EV_BEGIN, t0, 7, 1024, MOP_KIND_SEND, FN_ISEND),
            ev(MOP_EV_EXIT, t0 + 1000, 0, 0, 0, 0),
            ev(MOP_EV_ENTER, t0 + 11000, SITE_WAIT, 0, 0, FN_WAIT),
            ev(MOP_EV_END, t0 + 12000, 7, -1, MOP_END_COMPLETED, 0),
            ev(MOP_EV_EXIT, t0 + 12000, 0, 0, 0, 0),
            ev(MOP_EV_ENTER, t0 + 20000, SITE_SEND, 0, 0, FN_SEND),
            ev(MOP_EV_INCALL, t0 + 20000, 0, 1024, MOP_KIND_SEND, FN_SEND),
            ev(MOP_EV_EXIT, t0 + 25000, 0, 0, 0, 0),
        };
        mop_process_events(p, e, sizeof e / sizeof e[0]);
    }
}

static const mop_pair *find_pair(const mop_process *p, uint64_t post, uint64_t end)
{
    for (uint16_t k = 0; k < p->sites.npair; k++) {
        const mop_pair *pr = &p->sites.pair[k];
        if (p->sites.site[pr->post].addr == post && p->sites.site[pr->end].addr == end)
            return pr;
    }
    return NULL;
}

static void test_pairs(void)
{
    static mop_process p;
    start(&p, true);
    halo(&p, 0, 3);
    /* an end-only completion at the wait site: posting site unknown */
    const mop_event e[] = {ev(MOP_EV_ENTER, 400000, SITE_WAIT, 0, 0, FN_WAIT),
                           ev(MOP_EV_END, 401000, 99, 64, MOP_END_COMPLETED, 0),
                           ev(MOP_EV_EXIT, 401000, 0, 0, 0, 0)};
    mop_process_events(&p, e, 3);
    mop_process_settle(&p); /* the transfers' sums into their cells */
    CHECK(p.sites.nsite == 4); /* unknown + three addresses */
    const mop_pair *a = find_pair(&p, SITE_ISEND, SITE_WAIT);
    const mop_pair *b = find_pair(&p, SITE_SEND, SITE_SEND);
    const mop_pair *c = find_pair(&p, 0, SITE_WAIT);
    CHECK(a && a->x.transfers == 3);
    CHECK(a && a->x.max_s > 5.9e-6 && a->x.max_s < 6.1e-6); /* 2 us each, hidden by 10 us */
    CHECK(b && b->x.transfers == 3 && b->x.max_s == 0.0);
    CHECK(c && c->x.transfers == 1);
    CHECK(p.sites.npair == 3);
    /* every transfer is in one pair */
    uint64_t sum = 0;
    for (uint16_t k = 0; k < p.sites.npair; k++)
        sum += p.sites.pair[k].x.transfers;
    CHECK(sum == p.total.transfers);
    /* calls and their time per site: the wait site's 4 calls of 1 us */
    uint16_t wait_id = 0;
    for (uint16_t i = 1; i < p.sites.nsite; i++)
        if (p.sites.site[i].addr == SITE_WAIT)
            wait_id = i;
    CHECK(p.sites.site[wait_id].calls == 4 && p.sites.site[wait_id].call_ticks == 4000);
    CHECK(p.sites.site[wait_id].fn == FN_WAIT);
    CHECK(p.counters.site_overflow == 0 && p.counters.pair_overflow == 0);
    mop_process_free(&p);
}

/* More distinct sites than the table holds: the rest are counted, their calls
 * go to site 0, and memory does not grow. */
static void test_overflow(void)
{
    static mop_process p;
    start(&p, true);
    for (uint64_t i = 0; i < MOP_MAX_SITES + 10; i++) {
        const mop_event e[] = {ev(MOP_EV_ENTER, i * 1000, 0x500000 + 16 * i, 0, 0, FN_SEND),
                               ev(MOP_EV_INCALL, i * 1000, 0, 8, MOP_KIND_SEND, FN_SEND),
                               ev(MOP_EV_EXIT, i * 1000 + 500, 0, 0, 0, 0)};
        mop_process_events(&p, e, 3);
    }
    CHECK(p.sites.nsite == MOP_MAX_SITES);
    CHECK(p.counters.site_overflow == 11); /* 255 fit beside site 0 */
    CHECK(p.sites.site[0].calls == 11);
    mop_process_free(&p);
}

/* Two threads of one process: the same address is one site after the merge. */
static void test_merge(void)
{
    static mop_process t1, t2, agg;
    start(&t1, true);
    start(&t2, true);
    start(&agg, true);
    halo(&t1, 0, 2);
    /* thread 2 meets the sites in another order, so its ids differ */
    const mop_event e[] = {ev(MOP_EV_ENTER, 0, SITE_SEND, 0, 0, FN_SEND),
                           ev(MOP_EV_INCALL, 0, 0, 8, MOP_KIND_SEND, FN_SEND),
                           ev(MOP_EV_EXIT, 500, 0, 0, 0, 0)};
    mop_process_events(&t2, e, 3);
    halo(&t2, 1000, 1);
    mop_process_merge(&agg, &t1);
    mop_process_merge(&agg, &t2);
    CHECK(agg.sites.nsite == 4);
    const mop_pair *a = find_pair(&agg, SITE_ISEND, SITE_WAIT);
    const mop_pair *b = find_pair(&agg, SITE_SEND, SITE_SEND);
    CHECK(a && a->x.transfers == 3);
    CHECK(b && b->x.transfers == 4);
    mop_process_free(&t1);
    mop_process_free(&t2);
    mop_process_free(&agg);
}

/* A Test call between post and completion marks the transfer polled; the
 * completing Test itself does not. */
static void test_polled(void)
{
    static mop_process p;
    start(&p, true);
    const mop_event e[] = {
        ev(MOP_EV_ENTER, 0, SITE_ISEND, 0, 0, FN_ISEND),
        ev(MOP_EV_BEGIN, 0, 7, 64, MOP_KIND_SEND, FN_ISEND),
        ev(MOP_EV_EXIT, 100, 0, 0, 0, 0),
        ev(MOP_EV_ENTER, 1000, SITE_ISEND + 4, 0, 0, FN_TEST), /* finds it pending */
        ev(MOP_EV_EXIT, 1100, 0, 0, 0, 0),
        ev(MOP_EV_ENTER, 5000, SITE_WAIT, 0, 0, FN_WAIT),
        ev(MOP_EV_END, 5100, 7, -1, MOP_END_COMPLETED, 0),
        ev(MOP_EV_EXIT, 5100, 0, 0, 0, 0),
        /* completed by the first Test after its post: not polled */
        ev(MOP_EV_ENTER, 6000, SITE_ISEND, 0, 0, FN_ISEND),
        ev(MOP_EV_BEGIN, 6000, 8, 64, MOP_KIND_SEND, FN_ISEND),
        ev(MOP_EV_EXIT, 6100, 0, 0, 0, 0),
        ev(MOP_EV_ENTER, 9000, SITE_ISEND + 4, 0, 0, FN_TEST),
        ev(MOP_EV_END, 9100, 8, -1, MOP_END_COMPLETED, 0),
        ev(MOP_EV_EXIT, 9100, 0, 0, 0, 0),
    };
    mop_process_events(&p, e, sizeof e / sizeof e[0]);
    mop_process_settle(&p);
    const mop_pair *waited = find_pair(&p, SITE_ISEND, SITE_WAIT);
    const mop_pair *tested = find_pair(&p, SITE_ISEND, SITE_ISEND + 4);
    CHECK(waited && waited->x.transfers == 1 && waited->polled == 1);
    CHECK(tested && tested->x.transfers == 1 && tested->polled == 0);
    mop_process_free(&p);
}

/* Pairs are listed in the order transfers first came to them, whether a
 * transfer went to its cells directly or into the run held for them
 * (mop_xfer_run): three completions at three wait sites, each of its own pair,
 * list them in that order. */
static void test_pair_order(void)
{
    static mop_process p;
    start(&p, true);
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t t0 = 1000 + 20000 * i;
        const mop_event e[] = {ev(MOP_EV_ENTER, t0, SITE_ISEND, 0, 0, FN_ISEND),
                               ev(MOP_EV_BEGIN, t0, 7, 64, MOP_KIND_SEND, FN_ISEND),
                               ev(MOP_EV_EXIT, t0 + 100, 0, 0, 0, 0),
                               ev(MOP_EV_ENTER, t0 + 5000, SITE_WAIT + 16 * i, 0, 0, FN_WAIT),
                               ev(MOP_EV_END, t0 + 5100, 7, -1, MOP_END_COMPLETED, 0),
                               ev(MOP_EV_EXIT, t0 + 5100, 0, 0, 0, 0)};
        mop_process_events(&p, e, sizeof e / sizeof e[0]);
    }
    mop_process_settle(&p);
    CHECK(p.sites.npair == 3);
    for (uint16_t k = 0; k < p.sites.npair && k < 3; k++) {
        const mop_pair *pr = &p.sites.pair[k];
        CHECK(p.sites.site[pr->end].addr == SITE_WAIT + 16u * k && pr->x.transfers == 1);
    }
    mop_process_free(&p);
}

static void test_off(void)
{
    static mop_process p;
    start(&p, false);
    halo(&p, 0, 2);
    mop_process_settle(&p);
    CHECK(p.sites.nsite == 1 && p.sites.npair == 0);
    CHECK(p.total.transfers == 4);
    mop_process_free(&p);
}

int main(void)
{
    mop_xfer_table_init(&table);
    mop_xfer_table_add(&table, MOP_XFER_INTRA, 0, 2e-6);
    mop_xfer_table_add(&table, MOP_XFER_INTRA, 4096, 2e-6);
    test_pairs();
    test_overflow();
    test_merge();
    test_polled();
    test_pair_order();
    test_off();
    mop_xfer_table_free(&table);
    return TEST_RESULT();
}
