/* mop_process.c - turns one thread's event stream into the per-process
 * measures; the rules are in docs/profiler.md and docs/method.md. */
#include "mop_process.h"

#include <stdlib.h>
#include <string.h>

/* The handlers every post and completion runs, inlined into the loop that
 * dispatches them: GCC kept them as calls, and inlining them took a self-send
 * window's Irecv+Isend pair from 175 to 167 ns (docs/profiler.md, "Memory and
 * cost"). */
#define MOP_HOT static inline __attribute__((always_inline))

int mop_process_init(mop_process *p, const mop_process_config *cfg)
{
    memset(p, 0, sizeof *p);
    p->cfg = *cfg;
    if (p->cfg.nbin_edges > MOP_MAX_BIN_EDGES)
        p->cfg.nbin_edges = MOP_MAX_BIN_EDGES;
    if (p->cfg.s_per_tick <= 0.0)
        p->cfg.s_per_tick = 1e-9;
    mop_clock_init(&p->clock);
    p->monitoring = true;
    p->last.bytes = -1;
    p->last.coll_op = -1;
    p->prev.bytes = -1;
    p->run.id = MOP_RUN_NONE;
    /* no cells have this key (56 bits): without runs every transfer misses */
    p->xrun.key = UINT64_MAX;
    if (cfg->test_fns)
        memcpy(p->fn_is_test, cfg->test_fns, sizeof p->fn_is_test);
    mop_sites_init(&p->sites);
    if (mop_requests_init(&p->reqs, 64) != 0)
        return -1;
    if (cfg->reqs_tuning)
        mop_requests_tune(&p->reqs, *cfg->reqs_tuning);
    return 0;
}

void mop_process_free(mop_process *p)
{
    mop_requests_free(&p->reqs);
    mop_checks_free(&p->checks);
}

int mop_process_copy(mop_process *dst, const mop_process *src)
{
    /* Deep: the copy is processed further and freed, and must share no heap
     * block with src (its request table, the checks' held transfers). */
    *dst = *src;
    if (mop_requests_copy(&dst->reqs, &src->reqs) != 0) {
        dst->checks.held = NULL;
        return -1;
    }
    if (mop_checks_copy(&dst->checks, &src->checks) != 0) {
        mop_requests_free(&dst->reqs);
        return -1;
    }
    return 0;
}

size_t mop_process_nbins(const mop_process *p)
{
    return p->cfg.bin_edges ? p->cfg.nbin_edges + 1 : MOP_POW2_BINS;
}

void mop_process_bin_range(const mop_process *p, size_t i, uint64_t *lo, uint64_t *hi)
{
    if (p->cfg.bin_edges) {
        *lo = i == 0 ? 0 : p->cfg.bin_edges[i - 1];
        *hi = i < p->cfg.nbin_edges ? p->cfg.bin_edges[i] : UINT64_MAX;
    } else {
        *lo = i == 0 ? 0 : (uint64_t)1 << (i - 1);
        *hi = i == 0 ? 1 : (i < 64 ? (uint64_t)1 << i : UINT64_MAX);
    }
}

_Static_assert(MOP_MAX_BINS <= 256, "a bin fits mop_lookup.bin");

static size_t mop_bin_of(const mop_process *p, uint64_t bytes)
{
    if (!p->cfg.bin_edges)
        return bytes == 0 ? 0 : (size_t)(64 - __builtin_clzll(bytes));
    size_t i = 0;
    while (i < p->cfg.nbin_edges && p->cfg.bin_edges[i] <= bytes)
        i++;
    return i;
}

static uint16_t mop_current_region(const mop_process *p)
{
    if (p->region_depth == 0)
        return 0;
    int top = p->region_depth < MOP_REGION_DEPTH ? p->region_depth : MOP_REGION_DEPTH;
    return p->region_stack[top - 1];
}

/* xfer_time of a transfer: for a collective (kind >= MOP_KIND_COLL) `arg`
 * is its communicator size and the op's calibrated series is used; for
 * point-to-point `arg` is the peer, which picks the intra/inter class. */
static __attribute__((noinline)) double mop_xfer_time_slow(mop_process *p, int64_t bytes,
                                                           int32_t arg, int kind)
{
    int cls = MOP_XFER_INTRA, coll_op = -1;
    int32_t comm_size = 0;
    if (kind >= MOP_KIND_COLL) {
        coll_op = kind - MOP_KIND_COLL;
        comm_size = arg;
    } else if (p->cfg.peer_remote && arg >= 0 && arg < p->cfg.npeers && p->cfg.peer_remote[arg]) {
        cls = MOP_XFER_INTER;
        p->counters.inter_node_transfers++; /* once per transfer: one lookup each */
    }
    if (bytes < 0)
        bytes = 0;
    if (bytes != p->last.bytes || cls != p->last.cls || coll_op != p->last.coll_op ||
        comm_size != p->last.comm_size) {
        mop_lookup before = p->last;
        if (!p->cfg.one_lookup && bytes == p->prev.bytes && cls == p->prev.cls &&
            coll_op == p->prev.coll_op && comm_size == p->prev.comm_size) {
            /* The lookups are pure (a const table): the one kept is the one the
             * search would give again, its parts too. */
            p->last = p->prev;
        } else {
            if (coll_op >= 0) {
                p->last.xfer_s = mop_xfer_table_lookup_coll(p->cfg.table, coll_op, comm_size,
                                                            (uint64_t)bytes, &p->last.flags);
            } else {
                bool ex;
                p->last.xfer_s = mop_xfer_table_lookup(p->cfg.table, cls, (uint64_t)bytes, &ex);
                p->last.flags = ex ? MOP_XFER_EXTRAPOLATED : 0;
            }
            p->last.bytes = bytes;
            p->last.bin = (uint8_t)mop_bin_of(p, (uint64_t)bytes);
            p->last.cls = cls;
            p->last.coll_op = coll_op;
            p->last.comm_size = comm_size;
            p->last.parts = MOP_PARTS_UNKNOWN;
        }
        p->prev = before;
    }
    p->last_plain = !p->cfg.peer_remote && cls == MOP_XFER_INTRA && coll_op < 0 &&
                    p->last.flags == 0;
    if (p->last.flags & MOP_XFER_EXTRAPOLATED)
        p->counters.table_extrapolated++;
    if (p->last.flags & MOP_XFER_COLL_SIZE_MODELLED)
        p->counters.coll_size_extrapolated++;
    if (p->last.flags & MOP_XFER_COLL_NB_AS_BLOCKING)
        p->counters.coll_nb_as_blocking++;
    if (p->last.flags & MOP_XFER_COLL_UNCALIBRATED)
        p->counters.coll_uncalibrated++;
    return p->last.xfer_s;
}

/* Whether the transfer just priced (mop_xfer_time) moves eagerly by the
 * table's parts, with its overheads in *o_s, *o_r: looked up once per size
 * and class, as its time is (a blocking send and its receive have one size). */
static bool mop_last_eager(mop_process *p, double *o_s, double *o_r)
{
    if (p->last.parts == MOP_PARTS_UNKNOWN)
        p->last.parts = p->last.coll_op < 0 &&
                                mop_xfer_table_eager(p->cfg.table, p->last.cls,
                                                     (uint64_t)p->last.bytes, p->last.xfer_s,
                                                     &p->last.o_s, &p->last.o_r)
                            ? MOP_PARTS_EAGER
                            : MOP_PARTS_NONE;
    *o_s = p->last.o_s;
    *o_r = p->last.o_r;
    return p->last.parts == MOP_PARTS_EAGER;
}

/* The common case inline: a point-to-point message on one node of the size
 * the last lookup had, looked up exactly (no counter to bump). */
static inline double mop_xfer_time(mop_process *p, int64_t bytes, int32_t arg, int kind)
{
    if (__builtin_expect(kind < MOP_KIND_COLL && bytes == p->last.bytes && p->last_plain, 1))
        return p->last.xfer_s;
    return mop_xfer_time_slow(p, bytes, arg, kind);
}

/* The checks on the bounds (mop_checks.h): an across-calls transfer is
 * judged now, an in-call one when its call exits (its span is not known yet).
 * need_s: the part its call or span must hold (0: all of it); the span
 * [t_begin, t_end] is read only for a clamped transfer, the only kind the
 * across check flags. */
MOP_HOT void mop_judge_bounds(mop_process *p, const mop_bounds *b, double need_s,
                              uint64_t t_begin, uint64_t t_end, uint16_t fn, size_t bin)
{
    double need = need_s > 0 ? need_s : b->xfer_s;
    if (b->kase == MOP_CASE_ACROSS) {
        double span_s = 0.0;
        if (b->clamped) {
            uint64_t span = t_end > t_begin ? t_end - t_begin : 0;
            span_s = (double)span * p->cfg.s_per_tick;
        }
        mop_checks_across(&p->checks, b->xfer_s, need, span_s, b->clamped, fn, bin);
    } else if (b->kase == MOP_CASE_IN_CALL) {
        if (p->clock.depth == 0) /* no call holds it (a malformed replay stream) */
            p->checks.unchecked++;
        else if (mop_checks_hold(&p->checks, b->xfer_s, need, t_end, fn, bin) != 0)
            p->counters.out_of_memory++;
    }
}

MOP_HOT void mop_judge(mop_process *p, const mop_transfer *tr, size_t bin)
{
    mop_judge_bounds(p, &tr->b, tr->need_s, tr->t_begin, tr->t_end, tr->fn, bin);
}

/* The cells of a transfer (mop_xfer_run) as one word, so that a transfer
 * finds its run's with one compare. */
_Static_assert(MOP_MAX_BINS <= 1 << 16 && MOP_MAX_FN <= 1 << 16, "bin, fn: 16 bits each");
_Static_assert(MOP_MAX_REGIONS <= 1 << 8 && MOP_MAX_SITES <= 1 << 8, "region, sites: 8 bits");
static inline uint64_t mop_xfer_run_key(size_t bin, uint16_t fn, uint16_t region,
                                        uint16_t post_site, uint16_t end_site)
{
    return (uint64_t)bin | (uint64_t)(fn % MOP_MAX_FN) << 16 |
           (uint64_t)(region % MOP_MAX_REGIONS) << 32 | (uint64_t)(post_site & 0xff) << 40 |
           (uint64_t)(end_site & 0xff) << 48;
}

static uint16_t mop_xfer_run_post(uint64_t key) { return (uint16_t)(key >> 40 & 0xff); }
static uint16_t mop_xfer_run_end(uint64_t key) { return (uint16_t)(key >> 48 & 0xff); }

/* Adds sums x (of `polled` transfers polled) to p's total and to the cells
 * of bin, fn and region, and with call sites to pair (post, end), in p's site
 * ids. Inline, the sums by value (kept in registers): a transfer that does
 * not go to the run comes here directly. */
static inline void mop_cells_add(mop_process *p, mop_acc x, uint64_t polled, size_t bin,
                                 uint16_t fn, uint16_t region, uint16_t post, uint16_t end)
{
    mop_acc_merge(&p->total, &x);
    mop_acc_merge(&p->bins[bin], &x);
    mop_acc_merge(&p->fns[fn % MOP_MAX_FN].x, &x);
    mop_acc_merge(&p->regions[region % MOP_MAX_REGIONS].x, &x);
    if (p->cfg.callsites && mop_sites_add(&p->sites, post, end, x, polled) != 0)
        p->counters.pair_overflow += x.transfers;
}

/* Adds run x's sums to p's cells, its call-site pair as (post, end) in p's
 * site ids (its key's, or another process's mapped: mop_process_merge). */
static void mop_xfer_run_add(mop_process *p, const mop_xfer_run *x, uint16_t post, uint16_t end)
{
    if (x->x.transfers == 0)
        return;
    uint64_t k = x->key;
    mop_cells_add(p, x->x, x->polled, k & 0xffff, (uint16_t)(k >> 16 & 0xffff),
                  (uint16_t)(k >> 32 & 0xff), post, end);
}

void mop_process_settle(mop_process *p)
{
    mop_xfer_run *x = &p->xrun;
    mop_xfer_run_add(p, x, mop_xfer_run_post(x->key), mop_xfer_run_end(x->key));
    x->x = (mop_acc){0};
    x->polled = 0;
}

/* A judged transfer's bounds go into every breakdown cell it belongs to:
 * through the run when it holds those cells; else directly, unless the
 * transfer before went directly too: then the run gives way to these cells
 * (mop_xfer_run). */
MOP_HOT void mop_record_bounds(mop_process *p, const mop_bounds *b, size_t bin, uint16_t fn,
                               uint16_t region, uint16_t post_site, uint16_t end_site,
                               bool polled)
{
    if (b->clamped)
        p->counters.xfer_exceeds_span++;
    p->cases[b->kase]++;
    mop_xfer_run *x = &p->xrun;
    uint64_t key = mop_xfer_run_key(bin, fn, region, post_site, end_site);
    if (__builtin_expect(key != x->key, 0)) {
        if (!x->missed || p->cfg.no_runs) {
            x->missed = true;
            mop_acc one = {1, b->xfer_s, b->min_s, b->max_s};
            mop_cells_add(p, one, polled, bin, fn, region, post_site, end_site);
            return;
        }
        mop_process_settle(p);
        x->key = key;
        /* its pair made now, as a direct add would: the pairs keep the order in
         * which transfers first came to them, and a full table refuses the same
         * ones (the run's add counts its transfers as overflow then) */
        if (p->cfg.callsites)
            mop_sites_reserve(&p->sites, post_site, end_site);
    }
    x->missed = false;
    mop_acc_add(&x->x, b);
    x->polled += polled;
}

/* A judged transfer's bounds go where they belong, and to the observer. */
MOP_HOT void mop_record(mop_process *p, const mop_transfer *tr, size_t bin)
{
    mop_record_bounds(p, &tr->b, bin, tr->fn, tr->region, tr->post_site, tr->end_site,
                      tr->polled);
    if (p->cfg.on_transfer)
        p->cfg.on_transfer(p->cfg.on_transfer_ctx, tr);
}

/* A transfer is closed: judge it and count it where it belongs, or only count
 * that it was not monitored. */
MOP_HOT void mop_account(mop_process *p, const mop_transfer *tr, bool monitored)
{
    if (!monitored) {
        p->counters.unmonitored_transfers++;
        return;
    }
    size_t bin = mop_bin_of(p, tr->bytes > 0 ? (uint64_t)tr->bytes : 0);
    mop_judge(p, tr, bin);
    mop_record(p, tr, bin);
}

/* ---- eager blocking sends' tails (docs/method.md, "The transfer model's
 * parts"): after an eager MPI_Send returns, the rest of its transfer (its
 * one-way time less the sender's overhead) runs without the sender, so it
 * overlaps exactly the computation inside [exit, exit + len]. The engine
 * sees that computation piece by piece (exit or region cut -> next enter or
 * cut) and accounts the transfer once the window has passed. */

/* The tail ended with `comp` ticks of computation inside it: account it, as
 * an in-call transfer whose overlap the model knows (min = max). */
static void mop_tail_close(mop_process *p, int i, bool shift)
{
    mop_tail *tl = &p->tails[i];
    double ov = (double)tl->comp * p->cfg.s_per_tick;
    if (ov > tl->tr.b.xfer_s)
        ov = tl->tr.b.xfer_s;
    tl->tr.b.min_s = tl->tr.b.max_s = ov;
    mop_record(p, &tl->tr, tl->bin);
    if (shift) {
        p->tails[i] = p->tails[p->ntails - 1];
        p->ntails--;
    }
}

/* Computation ran over [from, to]: each running tail gets the part inside its
 * window; those whose window ends by `to` are accounted. */
static void mop_tails_computed(mop_process *p, uint64_t from, uint64_t to)
{
    for (int i = 0; i < p->ntails;) {
        mop_tail *tl = &p->tails[i];
        if (tl->start == 0) { /* its call is still open */
            i++;
            continue;
        }
        uint64_t end = tl->start + tl->len;
        uint64_t a = from > tl->start ? from : tl->start, b = to < end ? to : end;
        if (b > a)
            tl->comp += b - a;
        if (to >= end)
            mop_tail_close(p, i, true);
        else
            i++;
    }
}

/* The outermost call exited at t: the tails its sends left start now; the
 * others whose window ended inside the call are accounted. */
static void mop_tails_exit(mop_process *p, uint64_t t)
{
    for (int i = 0; i < p->ntails;) {
        mop_tail *tl = &p->tails[i];
        if (tl->start == 0) {
            tl->start = t;
            i++;
        } else if (t >= tl->start + tl->len) {
            mop_tail_close(p, i, true);
        } else {
            i++;
        }
    }
}

/* An eager blocking send of the open call: judged now against o_s, accounted
 * when its tail has ended. Where no tail fits, its bounds become [0, tail]:
 * valid whatever followed the call, only looser. */
static void mop_tail_open(mop_process *p, mop_transfer *tr)
{
    size_t bin = mop_bin_of(p, tr->bytes > 0 ? (uint64_t)tr->bytes : 0);
    mop_judge(p, tr, bin);
    double len_s = tr->b.xfer_s - tr->need_s;
    if (p->ntails == MOP_MAX_TAILS) {
        tr->b.max_s = len_s;
        mop_record(p, tr, bin);
        return;
    }
    mop_tail *tl = &p->tails[p->ntails++];
    tl->tr = *tr;
    tl->bin = bin;
    tl->len = (uint64_t)(len_s / p->cfg.s_per_tick + 0.5);
    tl->start = 0;
    tl->comp = 0;
}

/* Whether entries of this kind are data transfers (MPI_PROC_NULL requests
 * and generalized requests are tracked only to recognise their completion). */
static bool mop_moves_data(uint8_t kind)
{
    return kind != MOP_KIND_NULL && kind != MOP_KIND_GREQ;
}

/* Closes the active transfer in slot as case 3 (its end will never be seen). */
static void mop_close_begin_only(mop_process *p, mop_req *r)
{
    if (!mop_moves_data(r->kind))
        return;
    mop_transfer tr = {.has_key = true, .key = r->key, .bytes = r->bytes,
                       .kind = (mop_kind)r->kind, .fn = r->fn, .region = r->region,
                       .post_site = r->site, .end_site = MOP_SITE_UNKNOWN,
                       .peer = r->peer, .t_begin = r->begin.t};
    tr.b = mop_bounds_one_event(MOP_CASE_BEGIN_ONLY,
                                mop_xfer_time(p, r->bytes, r->peer, r->kind));
    mop_account(p, &tr, (r->flags & MOP_REQ_MONITORED) != 0);
}

/* Removes the oldest entry of slot's handle and the entries joined to it
 * (MPI_Isendrecv's receive): after a removal the slot holds the next entry of
 * the handle, or another handle's, or nothing. */
static void mop_remove_with_joined(mop_process *p, mop_req *slot)
{
    uint64_t key = slot->key;
    mop_requests_remove(&p->reqs, slot);
    while (slot->used && slot->key == key && (slot->flags & MOP_REQ_JOINED))
        mop_requests_remove(&p->reqs, slot);
}

MOP_HOT void mop_begin(mop_process *p, mop_req *r, uint64_t t)
{
    r->flags = (uint8_t)((r->flags & MOP_REQ_PERSISTENT) | MOP_REQ_ACTIVE |
                         (p->monitoring ? MOP_REQ_MONITORED : 0));
    r->begin = mop_clock_mark(&p->clock, t);
    r->region = mop_current_region(p);
    r->site = p->run.site;
    r->tests = p->test_calls;
    if (r->kind == MOP_KIND_NULL)
        p->counters.proc_null++;
}

/* Entry r describes e's new request, begun at t: whatever it described before
 * (even a persistent request) is gone, the MPI handed the handle out again. */
static inline void mop_begin_new(mop_process *p, mop_req *r, const mop_event *e, uint64_t t)
{
    r->flags = 0;
    r->bytes = e->bytes;
    r->kind = e->kind;
    r->fn = e->id;
    r->peer = e->arg;
    mop_begin(p, r, t);
}

/* A BEGIN at t: e's own time, or for a POST its ENTER's (mop_on_post). */
MOP_HOT void mop_on_begin_at(mop_process *p, const mop_event *e, uint64_t t)
{
    mop_req *r = mop_requests_probe(&p->reqs, e->key);
    if (!r->used) {
        if (__builtin_expect(mop_requests_claim(&p->reqs), 1)) {
            /* A handle not in the table (most posts): the entry written once,
             * field by field (the rest by mop_begin_new), instead of zeroed by
             * an insert (mop_req_fresh) and written again: that was a sixth of
             * a post's cost, and a compound literal also wrote its padding
             * (callgrind). */
            r->key = e->key;
            r->more = NULL;
            r->used = true;
            mop_begin_new(p, r, e, t);
            return;
        }
        r = mop_requests_insert(&p->reqs, e->key); /* grows the table first; flags 0 */
    }
    /* Found, or inserted with flags 0. */
    if (r && (r->flags & (MOP_REQ_ACTIVE | MOP_REQ_DONE)) && !(r->flags & MOP_REQ_PERSISTENT)) {
        /* A handle given out again while its request is outstanding: the MPI
         * shares one handle among requests (completed at once); keep both,
         * completions match them oldest first. */
        p->counters.handle_shared++;
        r = mop_requests_share_unfilled(&p->reqs, r); /* mop_begin_new fills it */
    } else if (r && (r->flags & MOP_REQ_ACTIVE)) {
        p->counters.handle_reused++;
        mop_close_begin_only(p, r);
    }
    if (!r) {
        p->counters.out_of_memory++;
        return;
    }
    mop_begin_new(p, r, e, t);
}

MOP_HOT void mop_on_begin(mop_process *p, const mop_event *e)
{
    mop_on_begin_at(p, e, e->t);
}

/* A second transfer on the request just begun with this key: queued behind
 * it like a shared handle's entry (not counted as one), marked to end with it. */
static void mop_on_join(mop_process *p, const mop_event *e)
{
    mop_req *slot = mop_requests_find(&p->reqs, e->key);
    if (!slot) { /* its request's begin was not tracked (out of memory) */
        mop_on_begin(p, e);
        return;
    }
    mop_req *r = mop_requests_share(&p->reqs, slot);
    if (!r) {
        p->counters.out_of_memory++;
        return;
    }
    r->bytes = e->bytes;
    r->kind = e->kind;
    r->fn = e->id;
    r->peer = e->arg;
    mop_begin(p, r, e->t);
    r->flags |= MOP_REQ_JOINED;
}

/* One entry's transfer ends at e: counted as a transfer, a cancellation or a
 * generalized request's completion. */
/* A non-blocking point-to-point transfer whose one-way time exceeded its post ->
 * completion span (its bounds clamped). With the transfer model's parts an eager
 * one need hold only its own overhead there (o_s sending, o_r receiving data
 * that had arrived): the part inside the span is between that and the span, so
 * min = max(0, need - library time), max as before, and it is flagged only when
 * even need does not fit (docs/method.md, "The transfer model's parts"). Rare:
 * only clamped transfers come here. */
static void mop_close_eager(mop_process *p, mop_transfer *tr, const mop_mark *begin)
{
    double o_s, o_r;
    if ((tr->kind != MOP_KIND_SEND && tr->kind != MOP_KIND_RECV) || tr->bytes < 0 ||
        !mop_last_eager(p, &o_s, &o_r))
        return;
    double need = tr->kind == MOP_KIND_SEND ? o_s : o_r;
    uint64_t comp = p->clock.cum_comp - begin->cum_comp;
    uint64_t span = tr->t_end > begin->t ? tr->t_end - begin->t : 0;
    double lib_s = (double)(span > comp ? span - comp : 0) * p->cfg.s_per_tick;
    double comp_s = (double)comp * p->cfg.s_per_tick;
    tr->need_s = need;
    tr->b.max_s = comp_s < tr->b.xfer_s ? comp_s : tr->b.xfer_s;
    tr->b.min_s = need - lib_s > 0.0 ? need - lib_s : 0.0;
    tr->b.clamped = tr->b.min_s > tr->b.max_s;
    if (tr->b.clamped)
        tr->b.min_s = tr->b.max_s;
}

MOP_HOT void mop_close_end(mop_process *p, mop_req *r, const mop_event *e)
{
    if (r->kind == MOP_KIND_GREQ) {
        p->counters.grequest_completions++;
    } else if (MOP_END_REASON(e->kind) == MOP_END_CANCELLED) {
        p->counters.cancelled++;
    } else if (r->kind != MOP_KIND_NULL) {
        int64_t bytes = (r->kind == MOP_KIND_RECV && e->bytes >= 0) ? e->bytes : r->bytes;
        /* Test calls since the post, not counting the one completing it now (mod
         * 2^16: 65536 of them between one post and its completion read as none). */
        uint16_t tests = (uint16_t)(p->test_calls - r->tests - p->run.test_inc);
        /* Field by field, not a designated initializer: that zeroes all 96
         * bytes first (a `rep stos`, about 7 % of the library's time in a
         * self-loop of Isend/Irecv/Waitall, perf), and every field is set here. */
        mop_transfer tr;
        tr.has_key = true;
        tr.key = r->key;
        tr.bytes = bytes;
        tr.kind = (mop_kind)r->kind;
        tr.fn = r->fn;
        tr.region = r->region;
        tr.post_site = r->site;
        tr.end_site = p->run.site;
        tr.polled = tests != 0;
        tr.peer = r->peer;
        tr.t_begin = r->begin.t;
        tr.t_end = e->t;
        tr.need_s = 0.0;
        tr.b = mop_bounds_close(&p->clock, &r->begin, e->t,
                                mop_xfer_time(p, bytes, r->peer, r->kind), p->cfg.s_per_tick);
        if (__builtin_expect(tr.b.clamped, 0))
            mop_close_eager(p, &tr, &r->begin);
        mop_account(p, &tr, (r->flags & MOP_REQ_MONITORED) != 0);
    }
}

/* The common completion, on its own short path: a Wait/Test (no query, no
 * reason) of an active, monitored point-to-point send or receive on a handle
 * with no transfer joined to it, whose size the last lookup priced exactly,
 * with bounds that need no clamping and no observer to tell. It does what
 * mop_on_end and mop_close_end do for it, in the same order, with the
 * transfer in registers instead of a 96-byte record; any other completion
 * returns false having changed nothing, and takes the general path. Half of a
 * transfer's processing was the general path's (the query and joined-entry
 * rules, the record built field by field, spills): measured in the commit
 * that added this. */
MOP_HOT bool mop_end_fast(mop_process *p, const mop_event *e)
{
    if (e->kind != 0 || p->cfg.on_transfer)
        return false;
    mop_req *r = mop_requests_find(&p->reqs, e->key);
    if (!r || (r->flags & (MOP_REQ_ACTIVE | MOP_REQ_DONE | MOP_REQ_MONITORED)) !=
                  (MOP_REQ_ACTIVE | MOP_REQ_MONITORED) ||
        r->kind > MOP_KIND_RECV)
        return false;
    mop_req *next = mop_requests_next(r, r);
    if (next && (next->flags & MOP_REQ_JOINED))
        return false;
    int64_t bytes = (r->kind == MOP_KIND_RECV && e->bytes >= 0) ? e->bytes : r->bytes;
    if (bytes != p->last.bytes || !p->last_plain) /* a lookup that may count */
        return false;
    mop_bounds b = mop_bounds_close(&p->clock, &r->begin, e->t, p->last.xfer_s,
                                    p->cfg.s_per_tick);
    if (b.clamped)
        return false;
    uint16_t tests = (uint16_t)(p->test_calls - r->tests - p->run.test_inc);
    size_t bin = p->last.bin; /* bytes == last.bytes */
    mop_judge_bounds(p, &b, 0.0, r->begin.t, e->t, r->fn, bin);
    mop_record_bounds(p, &b, bin, r->fn, r->region, r->site, p->run.site, tests != 0);
    if (r->flags & MOP_REQ_PERSISTENT)
        r->flags = MOP_REQ_PERSISTENT;
    else
        mop_requests_remove(&p->reqs, r);
    return true;
}

/* A completion of e->key was observed. A query (MPI_Request_get_status) closes
 * the oldest entry of the handle not already closed by one and leaves it in
 * the table, marked done; a completion that frees (Wait/Test) takes the oldest
 * entry and closes it unless a query did. Entries joined to the one closed
 * end with it. */
static void mop_on_end(mop_process *p, const mop_event *e)
{
    if (__builtin_expect(MOP_END_REASON(e->kind) != 0, 0)) { /* mostly none */
        switch (MOP_END_REASON(e->kind)) {
        case MOP_END_RMA_OTHER_THREAD: p->counters.rma_other_thread++; break;
        case MOP_END_RMA_WIN_FREED: p->counters.rma_freed_pending++; break;
        default: break;
        }
    }
    bool query = (e->kind & MOP_END_QUERY) != 0;
    mop_req *slot = mop_requests_find(&p->reqs, e->key);
    mop_req *r = slot;
    while (query && r && (r->flags & (MOP_REQ_DONE | MOP_REQ_JOINED)))
        r = mop_requests_next(slot, r);
    if (query && slot && !r)
        return; /* every request on this handle was seen complete already */
    if (!query && r && (r->flags & MOP_REQ_DONE)) {
        if (r->flags & MOP_REQ_PERSISTENT)
            r->flags = MOP_REQ_PERSISTENT;
        else
            mop_remove_with_joined(p, r);
        return;
    }
    if (!r || !(r->flags & MOP_REQ_ACTIVE)) {
        if (r && (r->flags & MOP_REQ_PERSISTENT)) {
            p->counters.inactive_completions++;
            return;
        }
        int64_t bytes = e->bytes >= 0 ? e->bytes : 0;
        mop_transfer tr = {.has_key = true, .key = e->key, .bytes = bytes,
                           .kind = MOP_KIND_UNKNOWN, .fn = p->run.fn,
                           .region = mop_current_region(p), .post_site = MOP_SITE_UNKNOWN,
                           .end_site = p->run.site, .peer = -1, .t_end = e->t};
        tr.b = mop_bounds_one_event(MOP_CASE_END_ONLY,
                                    mop_xfer_time(p, bytes, -1, MOP_KIND_UNKNOWN));
        mop_account(p, &tr, p->monitoring);
        if (query && !slot) { /* so that its Wait/Test does not count it again */
            mop_req *d = mop_requests_insert(&p->reqs, e->key);
            if (d)
                d->flags = MOP_REQ_DONE;
            else
                p->counters.out_of_memory++;
        }
        return;
    }
    mop_close_end(p, r, e);
    for (mop_req *j = mop_requests_next(slot, r); j && (j->flags & MOP_REQ_JOINED);
         j = mop_requests_next(slot, j))
        mop_close_end(p, j, e);
    if (query) {
        r->flags = (uint8_t)((r->flags & MOP_REQ_PERSISTENT) | MOP_REQ_DONE);
        for (mop_req *j = mop_requests_next(slot, r); j && (j->flags & MOP_REQ_JOINED);
             j = mop_requests_next(slot, j))
            j->flags = MOP_REQ_JOINED | MOP_REQ_DONE;
    } else if (r->flags & MOP_REQ_PERSISTENT) {
        r->flags = MOP_REQ_PERSISTENT;
    } else {
        mop_remove_with_joined(p, r);
    }
}

/* An END another thread saw for a request of this one (e->arg > 0 names it;
 * docs/profiler.md, "Threads"). The bounds use this thread's timeline, as for
 * its own completions, but the END is not at one of its call exits: at e->t
 * it may be computing, or inside another call. So it is closed as if this
 * thread entered a call at e->t: computation up to e->t counts (none after the
 * thread ended), and a transfer posted in the call this thread has left since
 * is across calls, not in one. The clock is restored afterwards: no call was
 * made here. */
static void mop_on_foreign_end(mop_process *p, const mop_event *e)
{
    /* Counted once per request: not again for the Wait/Test/free of a request
     * a query (MPI_Request_get_status) already saw complete. */
    mop_req *r = mop_requests_find(&p->reqs, e->key);
    if ((e->kind & MOP_END_QUERY) || !r || !(r->flags & MOP_REQ_DONE))
        p->counters.cross_thread_completions++;
    mop_clock saved = p->clock;
    /* Another thread's call completed it: no site of this thread's. Only the
     * END reads the run's site here; nothing in mop_on_end flushes the run,
     * so its sums keep their cells. */
    uint16_t saved_site = p->run.site;
    p->run.site = MOP_SITE_UNKNOWN;
    if (p->clock.depth == 0) {
        uint64_t t = e->t;
        if (p->t_thread_end && t > p->t_thread_end)
            t = p->t_thread_end;
        mop_clock_enter(&p->clock, t);
    }
    mop_on_end(p, e);
    p->clock = saved;
    p->run.site = saved_site;
}

static void mop_on_pinit(mop_process *p, const mop_event *e)
{
    mop_req *r = mop_requests_get(&p->reqs, e->key);
    if (!r) {
        p->counters.out_of_memory++;
        return;
    }
    if (r->flags & MOP_REQ_ACTIVE) {
        p->counters.handle_reused++;
        mop_close_begin_only(p, r);
    }
    r->flags = MOP_REQ_PERSISTENT;
    r->bytes = e->bytes;
    r->kind = e->kind;
    r->fn = e->id;
    r->peer = e->arg;
}

static void mop_on_start(mop_process *p, const mop_event *e)
{
    mop_req *r = mop_requests_find(&p->reqs, e->key);
    if (!r || !(r->flags & MOP_REQ_PERSISTENT)) {
        p->counters.start_unknown++;
        return;
    }
    if (r->flags & MOP_REQ_ACTIVE) {
        p->counters.handle_reused++;
        mop_close_begin_only(p, r);
    }
    mop_begin(p, r, e->t);
}

static void mop_on_free(mop_process *p, const mop_event *e)
{
    mop_req *r = mop_requests_find(&p->reqs, e->key);
    if (!r) {
        p->counters.free_unknown++;
        return;
    }
    if (r->flags & MOP_REQ_ACTIVE) {
        for (mop_req *j = r; j && (j == r || (j->flags & MOP_REQ_JOINED));
             j = mop_requests_next(r, j)) {
            if (e->kind == MOP_FREE_UNTRACKED) /* a one-sided operation nobody can end */
                p->counters.out_of_memory++;
            else if (mop_moves_data(j->kind))
                p->counters.freed_active++;
            mop_close_begin_only(p, j);
        }
    }
    mop_remove_with_joined(p, r);
}

static void mop_on_incall(mop_process *p, const mop_event *e)
{
    if (e->kind == MOP_KIND_NULL) {
        p->counters.proc_null++;
        return;
    }
    mop_transfer tr; /* field by field: see mop_close_end */
    tr.has_key = false;
    tr.key = 0;
    tr.bytes = e->bytes;
    tr.kind = (mop_kind)e->kind;
    tr.fn = e->id;
    tr.region = mop_current_region(p);
    tr.post_site = p->run.site;
    tr.end_site = p->run.site;
    tr.polled = false;
    tr.peer = e->arg;
    tr.t_begin = e->t;
    tr.t_end = e->t;
    tr.need_s = 0.0;
    double x = mop_xfer_time(p, e->bytes, e->arg, e->kind);
    tr.b = mop_bounds_in_call(x);
    /* The transfer model's parts: an eager send holds o_s, a receive whose data
     * had arrived o_r (docs/method.md); without parts, or rendezvous, all of x. */
    uint8_t part = p->cfg.part_fns && e->kind < MOP_KIND_COLL ? p->cfg.part_fns[tr.fn % MOP_MAX_FN]
                                                              : MOP_PART_WHOLE;
    double o_s, o_r;
    if (part != MOP_PART_WHOLE && e->bytes >= 0 && mop_last_eager(p, &o_s, &o_r)) {
        if (part == MOP_PART_RECV) {
            tr.need_s = o_r;
        } else if (p->monitoring && p->clock.depth > 0 && x > o_s) {
            tr.need_s = o_s;
            mop_tail_open(p, &tr);
            return;
        }
    }
    mop_account(p, &tr, p->monitoring);
}

/* Computation up to t goes to the region that was current while it ran. */
static void mop_split_computation(mop_process *p, uint64_t t)
{
    if (p->ntails && p->clock.depth == 0 && p->clock.call_seq > 0)
        mop_tails_computed(p, p->clock.t_comp_from, t);
    uint64_t comp = mop_clock_split(&p->clock, t);
    if (p->monitoring) {
        p->comp_ticks += comp;
        p->regions[mop_current_region(p)].comp_ticks += comp;
    }
}

static void mop_on_region_begin(mop_process *p, const mop_event *e)
{
    mop_split_computation(p, e->t);
    p->run.id = MOP_RUN_NONE; /* the next call's region is another */
    if (p->region_depth >= MOP_REGION_DEPTH)
        p->counters.region_overflow++;
    else
        p->region_stack[p->region_depth] = e->id;
    p->region_depth++;
}

static void mop_on_region_end(mop_process *p, const mop_event *e)
{
    mop_split_computation(p, e->t);
    p->run.id = MOP_RUN_NONE;
    if (p->region_depth > MOP_REGION_DEPTH) { /* levels we could not store */
        p->region_depth--;
        return;
    }
    for (int i = p->region_depth - 1; i >= 0; i--) {
        if (p->region_stack[i] == e->id) {
            if (i != p->region_depth - 1)
                p->counters.region_mismatch++;
            p->region_depth = i;
            return;
        }
    }
    p->counters.region_mismatch++;
}

/* The run's sums into its cells (mop_call_run), and none held. */
static void mop_run_flush(mop_process *p)
{
    mop_call_run *r = &p->run;
    p->comp_ticks += r->comp_ticks;
    p->call_ticks += r->call_ticks;
    p->fns[r->fn].calls += r->calls;
    p->fns[r->fn].call_ticks += r->call_ticks;
    p->regions[r->region].comp_ticks += r->comp_ticks;
    p->regions[r->region].call_ticks += r->call_ticks;
    p->sites.site[r->site].calls += r->calls;
    p->sites.site[r->site].call_ticks += r->call_ticks;
    r->calls = r->call_ticks = r->comp_ticks = 0;
}

/* An outermost call whose function, call site or region differ from the last
 * one's: the run so far goes to its cells, and this call's cells are looked
 * up (function, region, call site, Test flag) and become the run's. A site
 * the table had no room for is counted on every such call, as before the run
 * existed: no key then, so the next call comes here again. */
static __attribute__((noinline)) void mop_run_start(mop_process *p, const mop_event *e)
{
    mop_run_flush(p);
    mop_call_run *run = &p->run;
    uint16_t fn = (uint16_t)(e->id % MOP_MAX_FN);
    int full = 0;
    run->fn = fn;
    run->site = MOP_SITE_UNKNOWN;
    run->test_inc = 0; /* without call sites, no Test family: mop_process_config */
    if (p->cfg.callsites) { /* an ENTER's key is its call site (mop_event.h) */
        run->test_inc = p->fn_is_test[fn];
        if (p->fn_site_addr[fn] == e->key && e->key != 0) {
            run->site = p->fn_site_id[fn];
        } else {
            run->site = mop_sites_site(&p->sites, e->key, fn, &full);
            p->counters.site_overflow += (uint64_t)full;
            if (!full) {
                p->fn_site_addr[fn] = e->key;
                p->fn_site_id[fn] = run->site;
            }
        }
    }
    run->id = full ? MOP_RUN_NONE : e->id;
    run->addr = e->key;
    run->region = mop_current_region(p);
}

MOP_HOT void mop_on_enter(mop_process *p, const mop_event *e)
{
    p->t_last_enter = e->t;
    /* Most enters open an outermost call with no tail running: one test for both. */
    if (__builtin_expect((p->clock.depth != 0) | (p->ntails != 0), 0)) {
        if (p->clock.depth > 0) {
            mop_clock_enter(&p->clock, e->t);
            p->counters.nested_calls++;
            return;
        }
        if (p->clock.call_seq > 0)
            mop_tails_computed(p, p->clock.t_comp_from, e->t);
    }
    uint64_t comp = mop_clock_enter(&p->clock, e->t);
    /* Mostly the function and site of the call before, in the same region:
     * its cells (the run's function, site, region and Test flag) stand. */
    if (__builtin_expect(e->id != p->run.id || e->key != p->run.addr, 0))
        mop_run_start(p, e);
    p->test_calls = (uint16_t)(p->test_calls + p->run.test_inc);
    p->call_monitored = p->monitoring;
    if (p->monitoring)
        p->run.comp_ticks += comp; /* to the current region: the run's */
}

MOP_HOT void mop_on_exit(mop_process *p, const mop_event *e)
{
    if (__builtin_expect(p->clock.depth != 1, 0)) { /* a nested call's exit, or no call open */
        mop_clock_exit(&p->clock, e->t);
        return;
    }
    uint64_t t = e->t;
    uint64_t ticks = mop_clock_exit(&p->clock, t);
    /* Most calls hold no in-call transfer and leave no tail: one test for both. */
    if (__builtin_expect((p->checks.nheld != 0) | (p->ntails != 0), 0)) {
        if (p->checks.nheld)
            p->counters.xfer_exceeds_call +=
                mop_checks_call_done(&p->checks, p->clock.t_enter, t, p->cfg.s_per_tick);
        if (p->ntails)
            mop_tails_exit(p, t);
    }
    if (!p->call_monitored)
        return;
    p->run.calls++; /* the call's cells are the run's: its enter made them so */
    p->run.call_ticks += ticks;
}

/* POST: the BEGIN at the time of the ENTER just before it, then the EXIT at
 * the POST's own time (mop_event.h): exactly the three-event form. */
MOP_HOT void mop_on_post(mop_process *p, const mop_event *e)
{
    mop_on_begin_at(p, e, p->t_last_enter);
    mop_on_exit(p, e);
}

/* The handlers of the events a program records rarely; the caller counts e. */
static __attribute__((noinline)) void mop_process_rare(mop_process *p, const mop_event *e)
{
    switch ((mop_event_type)e->type) {
    case MOP_EV_ENTER: mop_on_enter(p, e); break;
    case MOP_EV_EXIT: mop_on_exit(p, e); break;
    case MOP_EV_BEGIN: mop_on_begin(p, e); break;
    case MOP_EV_END: e->arg > 0 ? mop_on_foreign_end(p, e) : mop_on_end(p, e); break;
    case MOP_EV_INCALL: mop_on_incall(p, e); break;
    case MOP_EV_PINIT: mop_on_pinit(p, e); break;
    case MOP_EV_START: mop_on_start(p, e); break;
    case MOP_EV_FREE: mop_on_free(p, e); break;
    case MOP_EV_REGION_BEGIN: mop_on_region_begin(p, e); break;
    case MOP_EV_REGION_END: mop_on_region_end(p, e); break;
    case MOP_EV_PCONTROL: p->monitoring = e->arg != 0; break;
    case MOP_EV_JOIN: mop_on_join(p, e); break;
    case MOP_EV_POST: mop_on_post(p, e); break;
    case MOP_EV_MATCH:
    case MOP_EV_STATUS: break;
    }
}

void mop_process_event(mop_process *p, const mop_event *e)
{
    /* Matching information for traces: not the engine's, and not counted, so a
     * traced run's counters equal an untraced one's. */
    if (e->type == MOP_EV_MATCH || e->type == MOP_EV_STATUS)
        return;
    p->counters.events++;
    mop_process_rare(p, e);
    mop_run_flush(p);
}

/* One dispatch per event, the handlers of what a message-heavy program
 * records (a call's ENTER and EXIT, a post: POST, or BEGIN where the wrapper
 * could not push a POST, a completion) inlined into the loop, the others
 * behind a call; events counted once per batch, less the trace-only ones.
 * Calling mop_process_event for each event instead paid its prologue and
 * epilogue (the registers every inlined handler needs, saved and restored)
 * and a counter's read-modify-write on every event: measured in the commit
 * that made this loop. */
void mop_process_events(mop_process *p, const mop_event *e, size_t n)
{
    p->counters.flushes++;
    if (__builtin_expect(p->cfg.count_only, 0)) { /* once per batch: nothing per event */
        p->counters.events += n;
        return;
    }
    uint64_t trace_only = 0;
    for (const mop_event *x = e, *end = e + n; x != end; x++) {
        /* Tests in the order of how often a message-heavy program records each
         * here (every call an ENTER, every completion an END; a POST or an EXIT
         * mostly comes with its ENTER, below): two compares instead of a jump
         * table's bounds check, load and indirect jump (callgrind;
         * docs/profiler.md, "Memory and cost"). */
        uint8_t type = x->type;
        if (type == MOP_EV_ENTER) {
            mop_on_enter(p, x);
            /* Its call's POST or EXIT mostly follows at once: handled here, the
             * call's state just written still in registers. */
            if (x + 1 != end && p->clock.depth == 1) {
                uint8_t next = x[1].type;
                if (next == MOP_EV_POST) {
                    mop_on_post(p, ++x);
                } else if (next == MOP_EV_EXIT) {
                    mop_on_exit(p, ++x);
                }
            }
        } else if (type == MOP_EV_END) {
            if (__builtin_expect(x->arg > 0, 0)) /* another thread saw it */
                mop_on_foreign_end(p, x);
            else if (!mop_end_fast(p, x))
                mop_on_end(p, x);
        } else if (type == MOP_EV_POST) { /* one whose ENTER ended the batch before */
            mop_on_post(p, x);
        } else if (type == MOP_EV_EXIT) {
            mop_on_exit(p, x);
        } else if (type == MOP_EV_BEGIN) {
            mop_on_begin(p, x);
        } else if (type == MOP_EV_MATCH || type == MOP_EV_STATUS) {
            trace_only++;
        } else {
            mop_process_rare(p, x);
        }
    }
    p->counters.events += n - trace_only;
    if (p->run.calls | p->run.comp_ticks) /* the caller sees every sum in its cell */
        mop_run_flush(p);
}

void mop_process_finish(mop_process *p)
{
    /* Tails still running end with the computation seen so far: none follows
     * the last event. A tail whose call never exited is in that call. */
    for (int i = 0; i < p->ntails; i++)
        mop_tail_close(p, i, false);
    p->ntails = 0;
    /* A call still open at the end never exits: its in-call transfers stay
     * unjudged (the begin-only ones closed below are in no check). */
    mop_checks_abandon(&p->checks);
    size_t n = 0;
    uint64_t *keys = mop_requests_active_keys(&p->reqs, &n);
    if (!keys) {
        p->counters.out_of_memory++;
        mop_process_settle(p);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        mop_req *r = mop_requests_find(&p->reqs, keys[i]);
        /* requests a query saw complete, never waited for: nothing to close */
        while (r && !(r->flags & (MOP_REQ_ACTIVE | MOP_REQ_PERSISTENT))) {
            mop_requests_remove(&p->reqs, r);
            r = mop_requests_find(&p->reqs, keys[i]);
        }
        if (!r)
            continue;
        if (mop_moves_data(r->kind))
            p->counters.unfinished++;
        mop_close_begin_only(p, r);
        if (r->flags & MOP_REQ_PERSISTENT)
            r->flags = MOP_REQ_PERSISTENT;
        else
            mop_requests_remove(&p->reqs, r);
    }
    free(keys);
    mop_process_settle(p);
}

void mop_process_thread_exit(mop_process *p, uint64_t t)
{
    p->t_thread_end = t;
}

/* The id in dst of src's site `id`, which mop_sites_merge added to dst (site 0,
 * unknown, where it found no room: counted there). */
static uint16_t mop_site_in(mop_process *dst, const mop_process *src, uint16_t id)
{
    if (id == MOP_SITE_UNKNOWN || id >= src->sites.nsite)
        return MOP_SITE_UNKNOWN;
    int full = 0;
    const mop_site *site = &src->sites.site[id];
    return mop_sites_site(&dst->sites, site->addr, site->fn, &full);
}

void mop_process_merge(mop_process *dst, const mop_process *src)
{
    mop_process_settle(dst);
    mop_acc_merge(&dst->total, &src->total);
    if (src->reqs.peak > dst->reqs.peak) /* threads' peaks need not coincide: the largest */
        dst->reqs.peak = src->reqs.peak;
    dst->comp_ticks += src->comp_ticks;
    dst->call_ticks += src->call_ticks;
    for (int c = 0; c < MOP_NCASES; c++)
        dst->cases[c] += src->cases[c];
    for (size_t i = 0; i < mop_process_nbins(dst); i++)
        mop_acc_merge(&dst->bins[i], &src->bins[i]);
    for (size_t i = 0; i < MOP_MAX_FN; i++) {
        mop_acc_merge(&dst->fns[i].x, &src->fns[i].x);
        dst->fns[i].calls += src->fns[i].calls;
        dst->fns[i].call_ticks += src->fns[i].call_ticks;
    }
    for (size_t i = 0; i < MOP_MAX_REGIONS; i++) {
        mop_acc_merge(&dst->regions[i].x, &src->regions[i].x);
        dst->regions[i].comp_ticks += src->regions[i].comp_ticks;
        dst->regions[i].call_ticks += src->regions[i].call_ticks;
    }
    mop_checks_merge(&dst->checks, &src->checks);
    dst->counters.site_overflow +=
        mop_sites_merge(&dst->sites, &src->sites, &dst->counters.pair_overflow);
    /* src's held transfers, as if it had settled: their pair by its sites'
     * ids in dst, which the merge just gave them */
    const mop_xfer_run *x = &src->xrun;
    mop_xfer_run_add(dst, x, mop_site_in(dst, src, mop_xfer_run_post(x->key)),
                     mop_site_in(dst, src, mop_xfer_run_end(x->key)));
#define MOP_COUNTER_MERGE(name) dst->counters.name += src->counters.name;
    MOP_COUNTERS(MOP_COUNTER_MERGE)
#undef MOP_COUNTER_MERGE
}
