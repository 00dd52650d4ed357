/* test_engine_runs.c - the engine's call runs (mop_call_run, mop_process.c),
 * MPI-free, with call sites on: consecutive outermost calls with one
 * function, call site and region sum their calls, call time and computation
 * in one tally that goes into the function, region and site cells when a
 * call goes elsewhere, at a region boundary and at the end of each batch. The
 * replay format carries no call sites, so the property tests never reach this
 * with sites; here synthetic streams do, each with its known answer worked
 * out by hand (per function, per site, per region, totals, Test-family
 * counting, a full site table), and each processed in every way the runtime
 * may cut it (one batch, fixed batch sizes down to 1, one event at a time,
 * two batches cut at every event, a snapshot taken at every event): every
 * way must give the same cells and the same profile document. Ticks are
 * nanoseconds; the first call's enter ends no computation. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mo_test.h"
#include "mop_process.h"
#include "mop_profile_json.h"

enum { FN_SEND = 1, FN_RECV, FN_ISEND, FN_WAIT, FN_WAITALL, FN_TEST };
/* Return addresses into the program: the ENTER's key. */
enum {
    SITE_A = 0x401000, SITE_B = 0x401040, SITE_C = 0x401080,
    SITE_W = 0x4010c0, SITE_T = 0x401100,
    SITE_FILL = 0x500000, /* + 16 i: the sites that fill the table */
    SITE_X = 0x600000, SITE_Y = 0x600100, SITE_Z = 0x600200, /* no room for them */
};
#define REQ UINT64_C(0x7f0000001000) /* request handles: REQ + 256 i */

static mop_xfer_table table;
static const uint8_t test_fns[MOP_MAX_FN] = {[FN_TEST] = 1};

/* ---- streams ---------------------------------------------------------------- */

enum { MAX_EVENTS = 1024 };
typedef struct stream {
    const char *name;
    mop_event ev[MAX_EVENTS];
    size_t n;
    uint64_t t; /* the time of the last event */
} stream;

static void push(stream *s, mop_event e)
{
    if (s->n == MAX_EVENTS) {
        fprintf(stderr, "test_engine_runs: stream %s longer than %d events\n", s->name,
                MAX_EVENTS);
        exit(1);
    }
    s->ev[s->n++] = e;
}

/* An outermost call's ENTER after `gap` ticks of computation. */
static void enter(stream *s, uint16_t fn, uint64_t site, uint64_t gap)
{
    s->t += gap;
    push(s, (mop_event){.type = MOP_EV_ENTER, .t = s->t, .key = site, .id = fn, .arg = -1});
}

static void leave(stream *s, uint64_t dur)
{
    s->t += dur;
    push(s, (mop_event){.type = MOP_EV_EXIT, .t = s->t});
}

static void call(stream *s, uint16_t fn, uint64_t site, uint64_t gap, uint64_t dur)
{
    enter(s, fn, site, gap);
    leave(s, dur);
}

/* n calls alike: a run. */
static void calls(stream *s, int n, uint16_t fn, uint64_t site, uint64_t gap, uint64_t dur)
{
    for (int i = 0; i < n; i++)
        call(s, fn, site, gap, dur);
}

/* A non-blocking send of 64 bytes on request `req`, its call `dur` long: the
 * ENTER and a POST (its BEGIN and EXIT in one, as the wrappers push them). */
static void post(stream *s, uint16_t fn, uint64_t site, uint64_t gap, uint64_t dur, uint64_t req)
{
    enter(s, fn, site, gap);
    s->t += dur;
    push(s, (mop_event){.type = MOP_EV_POST, .t = s->t, .key = req, .bytes = 64,
                        .kind = MOP_KIND_SEND, .id = fn, .arg = -1});
}

/* Request `req` completed now (inside the open call). */
static void complete(stream *s, uint64_t req)
{
    push(s, (mop_event){.type = MOP_EV_END, .t = s->t, .key = req, .bytes = -1,
                        .kind = MOP_END_COMPLETED});
}

/* A call that completes request `req` at its exit. */
static void call_completing(stream *s, uint16_t fn, uint64_t site, uint64_t gap, uint64_t dur,
                            uint64_t req)
{
    enter(s, fn, site, gap);
    s->t += dur;
    complete(s, req);
    leave(s, 0);
}

/* A region boundary or MPI_Pcontrol `dt` after the last event. */
static void marker(stream *s, mop_event_type type, uint16_t id, int32_t arg, uint64_t dt)
{
    s->t += dt;
    push(s, (mop_event){.type = (uint8_t)type, .t = s->t, .id = id, .arg = arg});
}

/* ---- processing and comparing -------------------------------------------------- */

/* A new process; `no_runs`: its transfers go to their cells at once
 * (MPI_OVERLAP_NO_OPT=runs). */
static mop_process *fresh_as(bool no_runs)
{
    mop_process *p = malloc(sizeof *p);
    mop_process_config cfg = {.table = &table, .s_per_tick = 1e-9, .callsites = true,
                              .test_fns = test_fns, .no_runs = no_runs};
    if (!p || mop_process_init(p, &cfg) != 0) {
        fprintf(stderr, "test_engine_runs: out of memory\n");
        exit(1);
    }
    return p;
}

static mop_process *fresh(void)
{
    return fresh_as(false);
}

static void discard(mop_process *p)
{
    mop_process_free(p);
    free(p);
}

/* A copy of p with every sum in its cell (mop_process_settle), to read p
 * without fixing the grouping of its sums while it goes on. */
static mop_process *settled_copy(const mop_process *p)
{
    mop_process *c = malloc(sizeof *c);
    if (!c || mop_process_copy(c, p) != 0) {
        fprintf(stderr, "test_engine_runs: out of memory\n");
        exit(1);
    }
    mop_process_settle(c);
    return c;
}

/* Events [from, to) in batches of `batch` (mop_process_events), or with 0 one
 * at a time through mop_process_event. */
static void feed(mop_process *p, const stream *s, size_t from, size_t to, size_t batch)
{
    for (size_t i = from; i < to; i += batch ? batch : 1) {
        if (batch == 0)
            mop_process_event(p, &s->ev[i]);
        else
            mop_process_events(p, &s->ev[i], batch < to - i ? batch : to - i);
    }
}

/* p's profile document with the number of batches (counters.flushes, which
 * the cuts change by design) as 0: everything else must be the same. */
static char *document(mop_process *p)
{
    uint64_t flushes = p->counters.flushes;
    p->counters.flushes = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        fprintf(stderr, "test_engine_runs: out of memory\n");
        exit(1);
    }
    mo_json w;
    mo_json_init(&w, f);
    mop_names names = {0};
    mop_profile_json(&w, p, &names);
    CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    p->counters.flushes = flushes;
    return buf;
}

/* One integer cell of `got` against the one-batch reference; the first few
 * differences are printed. */
static void same(int *bad, const char *what, size_t i, uint64_t got, uint64_t want)
{
    if (got != want && (*bad)++ < 6)
        fprintf(stderr, "    %s[%zu] = %llu, in one batch: %llu\n", what, i,
                (unsigned long long)got, (unsigned long long)want);
}

/* Every integer cell the runs touch, and the counters but flushes; the Test
 * count is no measure and a merge leaves it out (with_tests false). */
static int cells_differ(const mop_process *p, const mop_process *ref, bool with_tests)
{
    int bad = 0;
    same(&bad, "comp_ticks", 0, p->comp_ticks, ref->comp_ticks);
    same(&bad, "call_ticks", 0, p->call_ticks, ref->call_ticks);
    if (with_tests)
        same(&bad, "test_calls", 0, p->test_calls, ref->test_calls);
    same(&bad, "total.transfers", 0, p->total.transfers, ref->total.transfers);
    for (size_t i = 0; i < MOP_NCASES; i++)
        same(&bad, "cases", i, p->cases[i], ref->cases[i]);
    for (size_t i = 0; i < MOP_MAX_FN; i++) {
        same(&bad, "fns.calls", i, p->fns[i].calls, ref->fns[i].calls);
        same(&bad, "fns.call_ticks", i, p->fns[i].call_ticks, ref->fns[i].call_ticks);
        same(&bad, "fns.transfers", i, p->fns[i].x.transfers, ref->fns[i].x.transfers);
    }
    for (size_t i = 0; i < MOP_MAX_REGIONS; i++) {
        same(&bad, "regions.comp_ticks", i, p->regions[i].comp_ticks, ref->regions[i].comp_ticks);
        same(&bad, "regions.call_ticks", i, p->regions[i].call_ticks, ref->regions[i].call_ticks);
        same(&bad, "regions.transfers", i, p->regions[i].x.transfers, ref->regions[i].x.transfers);
    }
    const mop_sites *s = &p->sites, *r = &ref->sites;
    same(&bad, "nsite", 0, s->nsite, r->nsite);
    same(&bad, "npair", 0, s->npair, r->npair);
    for (size_t i = 0; i < s->nsite && i < r->nsite; i++) {
        same(&bad, "site.addr", i, s->site[i].addr, r->site[i].addr);
        same(&bad, "site.fn", i, s->site[i].fn, r->site[i].fn);
        same(&bad, "site.calls", i, s->site[i].calls, r->site[i].calls);
        same(&bad, "site.call_ticks", i, s->site[i].call_ticks, r->site[i].call_ticks);
    }
    for (size_t k = 0; k < s->npair && k < r->npair; k++) {
        same(&bad, "pair.post", k, s->pair[k].post, r->pair[k].post);
        same(&bad, "pair.end", k, s->pair[k].end, r->pair[k].end);
        same(&bad, "pair.transfers", k, s->pair[k].x.transfers, r->pair[k].x.transfers);
        same(&bad, "pair.polled", k, s->pair[k].polled, r->pair[k].polled);
    }
#define MOP_COUNTER_SAME(name) \
    if (strcmp(#name, "flushes") != 0) \
        same(&bad, "counters." #name, 0, p->counters.name, ref->counters.name);
    MOP_COUNTERS(MOP_COUNTER_SAME)
#undef MOP_COUNTER_SAME
    return bad;
}

static mop_site *site_at(mop_process *p, uint64_t addr)
{
    for (uint16_t i = 1; i < p->sites.nsite; i++)
        if (p->sites.site[i].addr == addr)
            return &p->sites.site[i];
    return NULL;
}

static const mop_pair *pair_at(mop_process *p, uint64_t post, uint64_t end)
{
    for (uint16_t k = 0; k < p->sites.npair; k++) {
        const mop_pair *pr = &p->sites.pair[k];
        if (p->sites.site[pr->post].addr == post && p->sites.site[pr->end].addr == end)
            return pr;
    }
    return NULL;
}

/* Calls of function fn: the number, then their ticks. */
#define CHECK_FN(p, fn, n, ticks) CHECK((p)->fns[fn].calls == (n) && (p)->fns[fn].call_ticks == (ticks))
/* Calls made at address addr (a site in the table). */
#define CHECK_SITE(p, addr, fn_, n, ticks)                                              \
    do {                                                                               \
        const mop_site *s_ = site_at(p, addr);                                         \
        CHECK(s_ && s_->fn == (fn_) && s_->calls == (n) && s_->call_ticks == (ticks)); \
    } while (0)
#define CHECK_REGION(p, id, comp, call)                                               \
    CHECK((p)->regions[id].comp_ticks == (comp) && (p)->regions[id].call_ticks == (call))

/* The sums of every function and every site are the totals: no call went to a
 * cell the known answer does not name. */
static void check_sums(mop_process *p, uint64_t calls, uint64_t comp, uint64_t call_ticks)
{
    uint64_t fn_calls = 0, fn_ticks = 0, site_calls = 0, site_ticks = 0, reg_comp = 0,
             reg_call = 0;
    for (size_t i = 0; i < MOP_MAX_FN; i++) {
        fn_calls += p->fns[i].calls;
        fn_ticks += p->fns[i].call_ticks;
    }
    for (size_t i = 0; i < MOP_MAX_SITES; i++) {
        site_calls += p->sites.site[i].calls;
        site_ticks += p->sites.site[i].call_ticks;
    }
    for (size_t i = 0; i < MOP_MAX_REGIONS; i++) {
        reg_comp += p->regions[i].comp_ticks;
        reg_call += p->regions[i].call_ticks;
    }
    CHECK(p->comp_ticks == comp && p->call_ticks == call_ticks);
    CHECK(fn_calls == calls && fn_ticks == call_ticks);
    CHECK(site_calls == calls && site_ticks == call_ticks);
    CHECK(reg_comp == comp && reg_call == call_ticks);
}

/* ---- the streams and their known answers ----------------------------------------- */

/* One long run, a function switch at the same address (a call through a
 * function pointer), a site switch only, back to the first, then two sites
 * alternating call by call. Each segment has its own gap and duration, so a
 * call summed into a neighbour's cell shows. */
static void build_runs(stream *s)
{
    calls(s, 100, FN_SEND, SITE_A, 100, 30);
    calls(s, 20, FN_RECV, SITE_A, 200, 40);
    calls(s, 30, FN_RECV, SITE_B, 300, 50);
    calls(s, 50, FN_SEND, SITE_A, 400, 60);
    for (int i = 0; i < 10; i++) {
        call(s, FN_RECV, SITE_B, 500, 70);
        call(s, FN_RECV, SITE_C, 500, 80);
    }
}

static void expect_runs(mop_process *p)
{
    CHECK_FN(p, FN_SEND, 100 + 50, 100 * 30 + 50 * 60);
    CHECK_FN(p, FN_RECV, 20 + 30 + 10 + 10, 20 * 40 + 30 * 50 + 10 * 70 + 10 * 80);
    CHECK_SITE(p, SITE_A, FN_SEND, 100 + 20 + 50, 100 * 30 + 20 * 40 + 50 * 60);
    CHECK_SITE(p, SITE_B, FN_RECV, 30 + 10, 30 * 50 + 10 * 70);
    CHECK_SITE(p, SITE_C, FN_RECV, 10, 10 * 80);
    CHECK(p->sites.nsite == 4 && p->sites.site[0].calls == 0);
    /* 220 calls: the gaps of all but the first */
    uint64_t comp = 99 * 100 + 20 * 200 + 30 * 300 + 50 * 400 + 20 * 500;
    uint64_t call_ticks = 100 * 30 + 20 * 40 + 30 * 50 + 50 * 60 + 10 * 70 + 10 * 80;
    CHECK(comp == 52900 && call_ticks == 9800);
    CHECK_REGION(p, 0, comp, call_ticks);
    check_sums(p, 220, comp, call_ticks);
    CHECK(p->counters.events == 440 && p->counters.site_overflow == 0);
    CHECK(p->counters.nested_calls == 0 && p->test_calls == 0);
}

/* Thirty posts at one site and one Waitall completing them all. Region 5
 * begins after the tenth post and ends after the twentieth; region 6 begins
 * and ends between the fifteenth and sixteenth with no call inside. The run
 * of posts has one function and site throughout: only the regions cut it. */
static void build_regions(stream *s)
{
    for (int i = 0; i < 10; i++)
        post(s, FN_ISEND, SITE_A, 100, 30, REQ + 256 * (uint64_t)i);
    marker(s, MOP_EV_REGION_BEGIN, 5, 0, 40);
    for (int i = 0; i < 10; i++) {
        post(s, FN_ISEND, SITE_A, i == 0 ? 60 : i == 5 ? 40 : 100, 30,
             REQ + 256 * (uint64_t)(10 + i));
        if (i == 4) {
            marker(s, MOP_EV_REGION_BEGIN, 6, 0, 10);
            marker(s, MOP_EV_REGION_END, 6, 0, 50);
        }
    }
    marker(s, MOP_EV_REGION_END, 5, 0, 25);
    for (int i = 0; i < 10; i++)
        post(s, FN_ISEND, SITE_A, i == 0 ? 75 : 100, 30, REQ + 256 * (uint64_t)(20 + i));
    enter(s, FN_WAITALL, SITE_W, 100);
    s->t += 500;
    for (int i = 0; i < 30; i++)
        complete(s, REQ + 256 * (uint64_t)i);
    leave(s, 0);
}

static void expect_regions(mop_process *p)
{
    /* region 0: posts 2-10, 40 before region 5, 75 after it, posts 22-30, the
     * Waitall's gap; region 5: 60 before post 11, posts 12-20 but for region
     * 6's 50, 25 before its end */
    CHECK_REGION(p, 0, 9 * 100 + 40 + 75 + 9 * 100 + 100, 20 * 30 + 500);
    CHECK_REGION(p, 5, 60 + 8 * 100 + (10 + 40) + 25, 10 * 30);
    CHECK_REGION(p, 6, 50, 0);
    CHECK(p->regions[0].x.transfers == 20 && p->regions[5].x.transfers == 10 &&
          p->regions[6].x.transfers == 0);
    CHECK_FN(p, FN_ISEND, 30, 30 * 30);
    CHECK_FN(p, FN_WAITALL, 1, 500);
    CHECK(p->fns[FN_ISEND].x.transfers == 30 && p->fns[FN_WAITALL].x.transfers == 0);
    CHECK_SITE(p, SITE_A, FN_ISEND, 30, 30 * 30);
    CHECK_SITE(p, SITE_W, FN_WAITALL, 1, 500);
    const mop_pair *pr = pair_at(p, SITE_A, SITE_W);
    CHECK(pr && pr->x.transfers == 30 && pr->polled == 0 && p->sites.npair == 1);
    CHECK(p->total.transfers == 30 && p->cases[MOP_CASE_ACROSS] == 30);
    check_sums(p, 31, 3000, 1400);
    CHECK(p->counters.events == 30 * 2 + 1 + 30 + 1 + 4);
    CHECK(p->counters.region_mismatch == 0 && p->region_depth == 0);
}

/* MPI_Pcontrol(0) in the middle of a run: its calls are not counted, nor the
 * computation an unmonitored enter ends; the run goes on across it. */
static void build_monitoring(stream *s)
{
    calls(s, 5, FN_SEND, SITE_A, 100, 30);
    marker(s, MOP_EV_PCONTROL, 0, 0, 50);
    call(s, FN_SEND, SITE_A, 50, 30);
    calls(s, 2, FN_SEND, SITE_A, 100, 30);
    marker(s, MOP_EV_PCONTROL, 0, 1, 50);
    call(s, FN_SEND, SITE_A, 50, 30);
    calls(s, 3, FN_SEND, SITE_A, 100, 30);
}

static void expect_monitoring(mop_process *p)
{
    /* monitored enters 2-5 and 9-12 (9's gap spans the Pcontrol(1): monitoring
     * is what it is at the enter) */
    uint64_t comp = 4 * 100 + 4 * 100;
    CHECK_FN(p, FN_SEND, 9, 9 * 30);
    CHECK_SITE(p, SITE_A, FN_SEND, 9, 9 * 30);
    CHECK_REGION(p, 0, comp, 9 * 30);
    check_sums(p, 9, comp, 9 * 30);
    CHECK(p->counters.events == 12 * 2 + 2 && p->monitoring);
}

/* Test-family calls in runs: an Isend, five Tests that find it pending, the
 * Wait that completes it (polled); an Isend completed by the first Test after
 * it (not polled: the completing Test does not count), three more Tests; an
 * Isend, two Tests, and a third that completes it (polled). */
static void build_tests(stream *s)
{
    post(s, FN_ISEND, SITE_A, 100, 20, REQ);
    calls(s, 5, FN_TEST, SITE_T, 100, 10);
    call_completing(s, FN_WAIT, SITE_W, 100, 30, REQ);
    post(s, FN_ISEND, SITE_A, 100, 20, REQ + 256);
    call_completing(s, FN_TEST, SITE_T, 100, 10, REQ + 256);
    calls(s, 3, FN_TEST, SITE_T, 100, 10);
    post(s, FN_ISEND, SITE_A, 100, 20, REQ + 512);
    calls(s, 2, FN_TEST, SITE_T, 100, 10);
    call_completing(s, FN_TEST, SITE_T, 100, 10, REQ + 512);
}

static void expect_tests(mop_process *p)
{
    CHECK(p->test_calls == 5 + 4 + 3);
    CHECK_FN(p, FN_TEST, 12, 12 * 10);
    CHECK_FN(p, FN_ISEND, 3, 3 * 20);
    CHECK_FN(p, FN_WAIT, 1, 30);
    CHECK(p->fns[FN_ISEND].x.transfers == 3);
    CHECK_SITE(p, SITE_A, FN_ISEND, 3, 3 * 20);
    CHECK_SITE(p, SITE_T, FN_TEST, 12, 12 * 10);
    CHECK_SITE(p, SITE_W, FN_WAIT, 1, 30);
    const mop_pair *waited = pair_at(p, SITE_A, SITE_W), *tested = pair_at(p, SITE_A, SITE_T);
    CHECK(waited && waited->x.transfers == 1 && waited->polled == 1);
    CHECK(tested && tested->x.transfers == 2 && tested->polled == 1);
    check_sums(p, 16, 15 * 100, 3 * 20 + 12 * 10 + 30);
    CHECK(p->counters.events == 16 + 3 + 13 + 3);
}

/* 255 addresses fill the site table beside site 0; then calls from addresses
 * with no room (SITE_X, a Test at SITE_Z, SITE_Y: counted on every call, their
 * calls in site 0), between runs at the first address, which has its site. */
static void build_overflow(stream *s)
{
    for (int i = 0; i < MOP_MAX_SITES - 1; i++)
        call(s, FN_SEND, SITE_FILL + 16 * (uint64_t)i, 100, 10);
    calls(s, 7, FN_SEND, SITE_X, 100, 20);
    calls(s, 3, FN_SEND, SITE_FILL, 100, 30);
    calls(s, 2, FN_SEND, SITE_X, 100, 40);
    calls(s, 3, FN_TEST, SITE_Z, 100, 50);
    calls(s, 4, FN_RECV, SITE_Y, 100, 60);
    calls(s, 2, FN_SEND, SITE_FILL, 100, 70);
}

static void expect_overflow(mop_process *p)
{
    CHECK(p->sites.nsite == MOP_MAX_SITES);
    CHECK(p->counters.site_overflow == 7 + 2 + 3 + 4);
    CHECK(p->sites.site[0].calls == 16 && p->sites.site[0].call_ticks == 7 * 20 + 2 * 40 + 3 * 50 + 4 * 60);
    CHECK(!site_at(p, SITE_X) && !site_at(p, SITE_Y) && !site_at(p, SITE_Z));
    CHECK_SITE(p, SITE_FILL, FN_SEND, 1 + 3 + 2, 10 + 3 * 30 + 2 * 70);
    CHECK_SITE(p, SITE_FILL + 16, FN_SEND, 1, 10);
    CHECK_SITE(p, SITE_FILL + 16 * 254, FN_SEND, 1, 10);
    CHECK_FN(p, FN_SEND, 255 + 7 + 3 + 2 + 2, 255 * 10 + 7 * 20 + 3 * 30 + 2 * 40 + 2 * 70);
    CHECK_FN(p, FN_TEST, 3, 3 * 50);
    CHECK_FN(p, FN_RECV, 4, 4 * 60);
    CHECK(p->test_calls == 3);
    check_sums(p, 276, 275 * 100, 3000 + 150 + 240);
}

/* ---- every way of cutting a stream ----------------------------------------------- */

typedef void (*expect_fn)(mop_process *p);

static int failed_variants;

/* p, processed one way, has the known answer (expect, unless NULL) and the
 * cells and document of ref, the same events processed in one batch. */
static void check_variant(const stream *s, const char *how, mop_process *p, expect_fn expect,
                          const mop_process *ref, const char *ref_doc, bool with_tests)
{
    if (failed_variants > 10)
        return; /* enough said */
    int before = mo_test_failures;
    mop_process *view = settled_copy(p);
    if (expect)
        expect(view);
    int bad = cells_differ(view, ref, with_tests);
    char *doc = document(view);
    discard(view);
    if (strcmp(doc, ref_doc) != 0) {
        size_t i = 0;
        while (doc[i] == ref_doc[i])
            i++;
        fprintf(stderr, "    document differs at byte %zu: ...%.60s\n", i, doc + i);
        bad++;
    }
    free(doc);
    mo_test_failures += bad != 0;
    if (mo_test_failures > before) {
        fprintf(stderr, "  (stream %s, %s)\n", s->name, how);
        failed_variants++;
    }
}

static void check_stream(const stream *s, expect_fn expect)
{
    mop_process *ref = fresh();
    feed(ref, s, 0, s->n, s->n);
    mop_process_settle(ref); /* the stream's end */
    int before = mo_test_failures;
    expect(ref);
    if (mo_test_failures > before)
        fprintf(stderr, "  (stream %s, one batch)\n", s->name);
    char *ref_doc = document(ref);
    char how[64];

    /* fixed batch sizes; 0: one event at a time through mop_process_event */
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 16, 64};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        mop_process *p = fresh();
        feed(p, s, 0, s->n, sizes[k]);
        snprintf(how, sizeof how, "batches of %zu", sizes[k]);
        check_variant(s, how, p, expect, ref, ref_doc, true);
        discard(p);
    }
    /* without runs (MPI_OVERLAP_NO_OPT=runs): the same known answer and cells,
     * pairs in the same order; not the document, whose sums are grouped
     * otherwise and so may differ in their last bits */
    mop_process *plain = fresh_as(true);
    feed(plain, s, 0, s->n, 16);
    int before_plain = mo_test_failures;
    CHECK(plain->xrun.x.transfers == 0); /* nothing was held */
    mop_process_settle(plain);
    expect(plain);
    mo_test_failures += cells_differ(plain, ref, true) != 0;
    if (mo_test_failures > before_plain)
        fprintf(stderr, "  (stream %s, without runs)\n", s->name);
    discard(plain);
    /* every prefix in one batch, against the same events one at a time and in
     * batches of one: after each batch every call's sum is in its cell, an
     * ENTER's computation in a batch of its own too, and every transfer's once
     * a copy is settled */
    mop_process *by_event = fresh(), *by_one = fresh();
    for (size_t k = 1; k < s->n; k++) {
        mop_process *p = fresh();
        feed(p, s, 0, k, k);
        mop_process *prefix = settled_copy(p);
        char *prefix_doc = document(prefix);
        feed(by_event, s, k - 1, k, 0);
        snprintf(how, sizeof how, "first %zu events one at a time", k);
        check_variant(s, how, by_event, NULL, prefix, prefix_doc, true);
        feed(by_one, s, k - 1, k, 1);
        snprintf(how, sizeof how, "first %zu events in batches of 1", k);
        check_variant(s, how, by_one, NULL, prefix, prefix_doc, true);
        free(prefix_doc);
        discard(prefix);
        /* then the rest in a second batch */
        snprintf(how, sizeof how, "two batches cut before event %zu", k);
        mop_process *copy = malloc(sizeof *copy);
        CHECK(copy && mop_process_copy(copy, p) == 0);
        feed(p, s, k, s->n, s->n - k);
        check_variant(s, how, p, expect, ref, ref_doc, true);
        /* a snapshot as the runtime takes one (mop_snapshot_thread): a copy
         * made between the two batches processes the rest, merged into an
         * empty process; the copy itself goes on as the thread would */
        feed(copy, s, k, s->n, s->n - k);
        snprintf(how, sizeof how, "copy before event %zu", k);
        check_variant(s, how, copy, expect, ref, ref_doc, true);
        mop_process *agg = fresh();
        mop_process_merge(agg, copy);
        snprintf(how, sizeof how, "copy before event %zu, merged", k);
        check_variant(s, how, agg, NULL, ref, ref_doc, false); /* no Test count */
        discard(agg);
        discard(copy);
        discard(p);
    }
    discard(by_event);
    discard(by_one);
    free(ref_doc);
    discard(ref);
}

/* A snapshot taken in the middle of a run holds the run's sums so far, and
 * stays as it was while the thread goes on. */
static void test_snapshot_mid_run(const stream *runs)
{
    mop_process *p = fresh();
    /* 41 calls of the first run in batches of 3, then the 42nd's ENTER in a
     * batch of its own (as a wait step may take it): its gap is computation
     * already */
    feed(p, runs, 0, 82, 3);
    feed(p, runs, 82, 83, 1);
    mop_process *snap = malloc(sizeof *snap);
    CHECK(snap && mop_process_copy(snap, p) == 0);
    for (int round = 0; round < 2; round++) {
        mop_process *q = round == 0 ? p : snap;
        CHECK_FN(q, FN_SEND, 41, 41 * 30);
        CHECK_SITE(q, SITE_A, FN_SEND, 41, 41 * 30);
        CHECK_REGION(q, 0, 41 * 100, 41 * 30);
        CHECK(q->comp_ticks == 41 * 100 && q->call_ticks == 41 * 30 && q->clock.depth == 1);
    }
    /* the thread goes on, one event a batch, to 15 calls into the third run
     * (site B) */
    feed(p, runs, 83, 270, 1);
    CHECK_FN(p, FN_SEND, 100, 100 * 30);
    CHECK_FN(p, FN_RECV, 20 + 15, 20 * 40 + 15 * 50);
    CHECK_SITE(p, SITE_A, FN_SEND, 120, 100 * 30 + 20 * 40);
    CHECK_SITE(p, SITE_B, FN_RECV, 15, 15 * 50);
    CHECK_REGION(p, 0, 99 * 100 + 20 * 200 + 15 * 300, 100 * 30 + 20 * 40 + 15 * 50);
    /* the snapshot has not moved */
    CHECK_FN(snap, FN_SEND, 41, 41 * 30);
    CHECK(snap->fns[FN_RECV].calls == 0 && !site_at(snap, SITE_B));
    CHECK(snap->comp_ticks == 41 * 100 && snap->call_ticks == 41 * 30);
    /* merged into an empty process (the runtime's aggregate), the same sums */
    mop_process *agg = fresh();
    mop_process_merge(agg, snap);
    CHECK_FN(agg, FN_SEND, 41, 41 * 30);
    CHECK_SITE(agg, SITE_A, FN_SEND, 41, 41 * 30);
    CHECK_REGION(agg, 0, 41 * 100, 41 * 30);
    discard(agg);
    discard(snap);
    discard(p);
}

int main(void)
{
    mop_xfer_table_init(&table);
    mop_xfer_table_add(&table, MOP_XFER_INTRA, 0, 2e-6);
    mop_xfer_table_add(&table, MOP_XFER_INTRA, 4096, 2e-6);
    static stream runs = {.name = "runs", .t = 1000}, regions = {.name = "regions", .t = 1000},
                  monitoring = {.name = "monitoring", .t = 1000},
                  tests = {.name = "tests", .t = 1000}, overflow = {.name = "overflow", .t = 1000};
    build_runs(&runs);
    build_regions(&regions);
    build_monitoring(&monitoring);
    build_tests(&tests);
    build_overflow(&overflow);
    check_stream(&runs, expect_runs);
    check_stream(&regions, expect_regions);
    check_stream(&monitoring, expect_monitoring);
    check_stream(&tests, expect_tests);
    check_stream(&overflow, expect_overflow);
    test_snapshot_mid_run(&runs);
    mop_xfer_table_free(&table);
    return TEST_RESULT();
}
