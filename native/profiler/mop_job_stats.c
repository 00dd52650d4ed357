/* mop_job_stats.c - the job's statistics: made from one rank's measures,
 * merged in the tree's order, packed for messages, written as JSON; see
 * mop_job_stats.h. */
#include "mop_job_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "json.h"

#define MOP_JS_MAGIC 0x4a504f4du /* "MOPJ" */
#define MOP_JS_VERSION 1u

static double mop_nonoverlap(double xfer, double max)
{
    double d = xfer - max; /* as the analysis: max(0, xfer - max) per cell */
    return d > 0 ? d : 0.0;
}

/* One rank's cell: worst is this rank. */
static void mop_jcell_of(mop_jcell *c, const mop_acc *a, int rank)
{
    memset(c, 0, sizeof *c);
    c->transfers = a->transfers;
    c->xfer_s = a->xfer_s;
    c->min_s = a->min_s;
    c->max_s = a->max_s;
    c->nonoverlap_s = mop_nonoverlap(a->xfer_s, a->max_s);
    c->ranks = 1;
    c->worst_rank = rank;
    c->worst_s = c->nonoverlap_s;
}

static void mop_jranks_one(mop_jranks *w, int rank)
{
    w->n = 1;
    w->first[0] = rank;
}

/* dst's ranks, then src's (the next ranks), the lowest MOP_JS_FIRST kept. */
static void mop_jranks_merge(mop_jranks *dst, const mop_jranks *src)
{
    for (uint64_t i = 0; i < src->n && i < MOP_JS_FIRST && dst->n + i < MOP_JS_FIRST; i++)
        dst->first[dst->n + i] = src->first[i];
    dst->n += src->n;
}

/* dst += src: sums in this order, the worst rank by its time (lowest on ties). */
static void mop_jcell_merge(mop_jcell *dst, const mop_jcell *src)
{
    dst->transfers += src->transfers;
    dst->xfer_s += src->xfer_s;
    dst->min_s += src->min_s;
    dst->max_s += src->max_s;
    dst->nonoverlap_s += src->nonoverlap_s;
    dst->calls += src->calls;
    dst->comp_s += src->comp_s;
    dst->call_s += src->call_s;
    dst->excess_s += src->excess_s;
    mop_jranks_merge(&dst->who, &src->who);
    if (src->ranks && (!dst->ranks || src->worst_s > dst->worst_s ||
                       (src->worst_s == dst->worst_s && src->worst_rank < dst->worst_rank))) {
        dst->worst_rank = src->worst_rank;
        dst->worst_s = src->worst_s;
    }
    dst->ranks += src->ranks;
}

static const char *mop_js_name(const char *const *names, size_t n, size_t id, char *buf,
                               size_t cap)
{
    if (names && id < n && names[id])
        return names[id];
    snprintf(buf, cap, "#%zu", id); /* as the rank's document names it */
    return buf;
}

static int mop_by_name(const void *a, const void *b)
{
    return strcmp(((const mop_jentry *)a)->name, ((const mop_jentry *)b)->name);
}

static void mop_jlist_free(mop_jlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i].name);
    free(l->e);
    l->e = NULL;
    l->n = 0;
}

/* Appends a copy of name with its cell (the caller sorts or keeps order). */
static int mop_jlist_push(mop_jlist *l, size_t *cap, const char *name, size_t len,
                          const mop_jcell *c)
{
    if (l->n == *cap) {
        size_t more = *cap ? 2 * *cap : 16;
        mop_jentry *e = realloc(l->e, more * sizeof *e);
        if (!e)
            return -1;
        l->e = e;
        *cap = more;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, name, len);
    copy[len] = '\0';
    l->e[l->n].name = copy;
    l->e[l->n].c = *c;
    l->n++;
    return 0;
}

/* The counters in MOP_COUNTERS order, then outstanding_peak: as the documents list them. */
static void mop_js_counter_values(uint64_t *v, const mop_counters *c, uint64_t peak)
{
    int i = 0;
#define MOP_JS_VALUE(name) v[i++] = c->name;
    MOP_COUNTERS(MOP_JS_VALUE)
#undef MOP_JS_VALUE
    v[i] = peak;
}

static const char *const mop_js_counter_names[MOP_JS_NCOUNTERS] = {
#define MOP_JS_NAME(name) #name,
    MOP_COUNTERS(MOP_JS_NAME)
#undef MOP_JS_NAME
    "outstanding_peak",
};

static void mop_jflag_of(mop_jcell *c, const mop_flagged *f, int rank)
{
    memset(c, 0, sizeof *c);
    c->transfers = f->transfers;
    c->xfer_s = f->xfer_s;
    c->excess_s = f->excess_s;
    c->ranks = 1;
    c->worst_rank = rank;
    mop_jranks_one(&c->who, rank);
}

/* The rank's checks object (mop_profile_json.c) as two summable parts and the
 * flagged cells by bin; the flagged cells by function come with the names. */
static void mop_js_checks_of_rank(mop_job_stats *s, const mop_process *p, int rank)
{
    const mop_checks *c = &p->checks;
    mop_jcheck_part *in = &s->check[MOP_CHECK_IN_CALL], *ac = &s->check[MOP_CHECK_ACROSS];
    in->transfers = c->transfers[MOP_CHECK_IN_CALL];
    in->xfer_s = c->xfer_s[MOP_CHECK_IN_CALL];
    in->calls = c->calls;
    in->call_s = (double)c->call_ticks * p->cfg.s_per_tick;
    in->longest_s = c->longest_s;
    in->calls_beyond = c->calls_beyond;
    in->beyond_s = c->beyond_s;
    in->unchecked = mop_checks_unchecked(c);
    ac->transfers = c->transfers[MOP_CHECK_ACROSS];
    ac->xfer_s = c->xfer_s[MOP_CHECK_ACROSS];
    for (int k = 0; k < MOP_NCHECKS; k++) {
        s->check[k].flagged_transfers = c->flagged[k].transfers;
        s->check[k].flagged_xfer_s = c->flagged[k].xfer_s;
        s->check[k].excess_s = c->flagged[k].excess_s;
    }
    s->beyond_s = mop_checks_beyond_s(c);
    for (size_t i = 0; i < s->nbins; i++)
        for (int k = 0; k < MOP_NCHECKS; k++)
            if (c->by_bin[i][k].transfers)
                mop_jflag_of(&s->flag_bins[i][k], &c->by_bin[i][k], rank);
}

static void mop_js_site_name(const mop_sites *sites, uint16_t id, const mop_names *names,
                             char *buf, size_t cap);

static void mop_js_sort(mop_jlist *l)
{
    if (l->n > 1) /* an empty list has no array: qsort's must not be NULL */
        qsort(l->e, l->n, sizeof *l->e, mop_by_name);
}

/* Every list in name order, each name once: what merging needs of a message. */
static bool mop_js_sorted(const mop_job_stats *s)
{
    for (int l = 0; l < MOP_JS_NLISTS; l++)
        for (size_t i = 1; i < s->list[l].n; i++)
            if (strcmp(s->list[l].e[i - 1].name, s->list[l].e[i].name) >= 0)
                return false;
    return true;
}

/* A call site's name (mop_js_list_id): where its frames are, then its function. */
static void mop_js_site_name(const mop_sites *sites, uint16_t id, const mop_names *names,
                             char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    if (id != MOP_SITE_UNKNOWN) {
        uint64_t frame[MOP_SITE_FRAMES];
        int nframes = names->frames ? names->frames(sites->site[id].addr, frame,
                                                    MOP_SITE_FRAMES) : 0;
        if (nframes <= 0) {
            frame[0] = sites->site[id].addr;
            nframes = 1;
        }
        for (int k = 0; k < nframes && n + 4 < cap; k++) {
            char where[4200];
            if (names->place)
                names->place(frame[k], where, sizeof where);
            else
                snprintf(where, sizeof where, "0x%llx", (unsigned long long)frame[k]);
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", k ? " < " : "", where);
            if (n >= cap)
                n = cap - 1;
        }
    }
    char fnbuf[32];
    const char *fn = id == MOP_SITE_UNKNOWN ? ""
                     : mop_js_name(names->fn, names->nfn, sites->site[id].fn, fnbuf,
                                   sizeof fnbuf);
    snprintf(buf + n, cap - n, "\t%s", fn);
}

/* Adds c to the entry `name` of l (a rank's own: its ranks stay 1, its worst is
 * its sum), or appends it; entries are merged in the order they come. */
static int mop_js_add_own(mop_jlist *l, size_t *cap, const char *name, const mop_jcell *c)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->e[i].name, name) == 0) {
            mop_jcell *d = &l->e[i].c;
            d->transfers += c->transfers;
            d->xfer_s += c->xfer_s;
            d->min_s += c->min_s;
            d->max_s += c->max_s;
            d->nonoverlap_s += c->nonoverlap_s;
            d->calls += c->calls;
            d->call_s += c->call_s;
            d->worst_s = d->nonoverlap_s;
            return 0;
        }
    }
    return mop_jlist_push(l, cap, name, strlen(name), c);
}

/* The rank's call sites, site pairs, and the pairs summed per posting and per
 * completing site, as the analysis ranks them (analysis/callsites.py). */
static int mop_js_sites_of_rank(mop_job_stats *s, const mop_process *p, const mop_names *names,
                                int rank)
{
    enum { NAME = 2 * 16384 + 2 };
    static char post[NAME], end[NAME], pair[2 * NAME]; /* profiles are made one at a time */
    const mop_sites *sites = &p->sites;
    size_t cap = 0;
    for (uint16_t i = 0; i < sites->nsite; i++) {
        if (i == MOP_SITE_UNKNOWN && sites->site[i].calls == 0)
            continue; /* as the rank's document */
        mop_jcell c;
        memset(&c, 0, sizeof c);
        c.ranks = 1;
        c.worst_rank = rank;
        c.calls = sites->site[i].calls;
        c.call_s = (double)sites->site[i].call_ticks * p->cfg.s_per_tick;
        mop_js_site_name(sites, i, names, post, sizeof post);
        if (mop_js_add_own(&s->list[MOP_JS_SITES], &cap, post, &c) != 0)
            return -1;
    }
    size_t pcap = 0, ecap = 0;
    cap = 0;
    for (uint16_t k = 0; k < sites->npair; k++) {
        const mop_pair *pr = &sites->pair[k];
        mop_jcell c;
        mop_jcell_of(&c, &pr->x, rank);
        mop_js_site_name(sites, pr->post, names, post, sizeof post);
        mop_js_site_name(sites, pr->end, names, end, sizeof end);
        if (mop_js_add_own(&s->list[MOP_JS_POSTS], &pcap, post, &c) != 0 ||
            mop_js_add_own(&s->list[MOP_JS_ENDS], &ecap, end, &c) != 0)
            return -1;
        c.calls = pr->polled;
        snprintf(pair, sizeof pair, "%s%c%s", post, MOP_JS_PAIR_SEP, end);
        if (mop_js_add_own(&s->list[MOP_JS_PAIRS], &cap, pair, &c) != 0)
            return -1;
    }
    return 0;
}

int mop_job_stats_of_rank(mop_job_stats *s, const mop_process *p, const mop_names *names,
                          int rank, bool disabled, const char *reason)
{
    memset(s, 0, sizeof *s);
    s->ranks = 1;
    s->nbins = mop_process_nbins(p);
    for (size_t i = 0; i < s->nbins; i++)
        mop_process_bin_range(p, i, &s->bin_lo[i], &s->bin_hi[i]);
    if (disabled) {
        snprintf(s->disabled_reason, sizeof s->disabled_reason, "%s",
                 reason && *reason ? reason : "no reason given");
        return 0;
    }
    double spt = p->cfg.s_per_tick;
    s->ranks_with_data = 1;
    mop_jcell_of(&s->total, &p->total, rank);
    s->total.comp_s = (double)p->comp_ticks * spt;
    s->total.call_s = (double)p->call_ticks * spt;
    memcpy(s->cases, p->cases, sizeof s->cases);
    s->counters = p->counters;
    s->outstanding_peak = (uint64_t)p->reqs.peak;
    for (int c = 0; c < MOP_NCASES; c++)
        if (p->cases[c])
            mop_jranks_one(&s->case_who[c], rank);
    uint64_t values[MOP_JS_NCOUNTERS];
    mop_js_counter_values(values, &s->counters, s->outstanding_peak);
    for (int c = 0; c < MOP_JS_NCOUNTERS; c++)
        if (values[c])
            mop_jranks_one(&s->counter_who[c], rank);
    mop_js_checks_of_rank(s, p, rank);
    for (size_t i = 0; i < s->nbins; i++)
        if (p->bins[i].transfers)
            mop_jcell_of(&s->bins[i], &p->bins[i], rank);
    char buf[32];
    size_t cap = 0;
    for (size_t i = 0; i < MOP_MAX_FN; i++) {
        const mop_fn_acc *f = &p->fns[i];
        if (!f->calls && !f->x.transfers)
            continue;
        mop_jcell c;
        mop_jcell_of(&c, &f->x, rank);
        c.calls = f->calls;
        c.call_s = (double)f->call_ticks * spt;
        const char *name = mop_js_name(names->fn, names->nfn, i, buf, sizeof buf);
        if (mop_jlist_push(&s->list[MOP_JS_FNS], &cap, name, strlen(name), &c) != 0)
            goto oom;
    }
    cap = 0;
    for (size_t i = 0; i < MOP_MAX_REGIONS; i++) {
        const mop_region_acc *r = &p->regions[i];
        if (!r->x.transfers && !r->comp_ticks && !r->call_ticks)
            continue;
        mop_jcell c;
        mop_jcell_of(&c, &r->x, rank);
        c.comp_s = (double)r->comp_ticks * spt;
        c.call_s = (double)r->call_ticks * spt;
        const char *name = mop_js_name(names->region, names->nregion, i, buf, sizeof buf);
        if (mop_jlist_push(&s->list[MOP_JS_REGIONS], &cap, name, strlen(name), &c) != 0)
            goto oom;
    }
    cap = 0;
    for (size_t i = 0; i < MOP_MAX_FN; i++) {
        for (int k = 0; k < MOP_NCHECKS; k++) {
            const mop_flagged *f = &p->checks.by_fn[i][k];
            if (!f->transfers)
                continue;
            mop_jcell c;
            mop_jflag_of(&c, f, rank);
            char key[160];
            snprintf(key, sizeof key, "%s\t%s",
                     mop_js_name(names->fn, names->nfn, i, buf, sizeof buf),
                     mop_check_name((mop_check)k));
            if (mop_jlist_push(&s->list[MOP_JS_FLAG_FNS], &cap, key, strlen(key), &c) != 0)
                goto oom;
        }
    }
    if (mop_js_sites_of_rank(s, p, names, rank) != 0)
        goto oom;
    for (int l = 0; l < MOP_JS_NLISTS; l++)
        mop_js_sort(&s->list[l]);
    return 0;
oom:
    mop_job_stats_free(s);
    return -1;
}

/* The rank's function with the most call time (ties: the last name) and its
 * known call site with the most (the first on ties), as the analysis picks
 * them from the rank's document. */
static void mop_js_row_digest(mop_job_row *row, const mop_process *p, const mop_names *names)
{
    double spt = p->cfg.s_per_tick;
    char buf[32];
    bool any = false;
    for (size_t i = 0; i < MOP_MAX_FN; i++) {
        const mop_fn_acc *f = &p->fns[i];
        if (!f->calls && !f->x.transfers)
            continue;
        double t = (double)f->call_ticks * spt;
        const char *name = mop_js_name(names->fn, names->nfn, i, buf, sizeof buf);
        if (!any || t > row->top_fn_call_s ||
            (t == row->top_fn_call_s && strcmp(name, row->top_fn) > 0)) {
            snprintf(row->top_fn, sizeof row->top_fn, "%s", name);
            row->top_fn_call_s = t;
            any = true;
        }
    }
    const mop_sites *sites = &p->sites;
    int best = -1;
    for (uint16_t i = 1; i < sites->nsite; i++) {
        double t = (double)sites->site[i].call_ticks * spt;
        if (best < 0 || t > row->busiest_site_call_s) {
            best = i;
            row->busiest_site_call_s = t;
        }
    }
    if (best > 0) {
        static char name[2 * 16384 + 2]; /* profiles are made one at a time */
        mop_js_site_name(sites, (uint16_t)best, names, name, sizeof name);
        row->busiest_site = mo_fnv1a64(name);
    }
}

int mop_job_bins_of_rank(mop_job_bin *bins, const mop_process *p, bool disabled)
{
    int n = 0;
    for (size_t i = 0; !disabled && i < mop_process_nbins(p); i++) {
        const mop_acc *a = &p->bins[i];
        if (a->transfers)
            bins[n++] = (mop_job_bin){i, a->transfers, a->xfer_s, a->min_s, a->max_s};
    }
    return n;
}

void mop_job_row_of_rank(mop_job_row *row, const mop_process *p, const mop_names *names,
                         int rank, bool disabled, double wall_s, const char *host)
{
    memset(row, 0, sizeof *row);
    row->rank = rank;
    row->disabled = disabled;
    row->wall_s = wall_s;
    snprintf(row->host, sizeof row->host, "%s", host ? host : "");
    if (disabled)
        return;
    mop_js_row_digest(row, p, names);
    double spt = p->cfg.s_per_tick;
    row->transfers = p->total.transfers;
    row->xfer_s = p->total.xfer_s;
    row->min_s = p->total.min_s;
    row->max_s = p->total.max_s;
    row->nonoverlap_s = mop_nonoverlap(p->total.xfer_s, p->total.max_s);
    row->comp_s = (double)p->comp_ticks * spt;
    row->call_s = (double)p->call_ticks * spt;
    const mop_checks *c = &p->checks;
    row->in_call_xfer_s = c->xfer_s[MOP_CHECK_IN_CALL];
    row->in_call_calls = c->calls;
    row->in_call_calls_beyond = c->calls_beyond;
    row->in_call_call_s = (double)c->call_ticks * spt;
    row->in_call_longest_s = c->longest_s;
    row->flagged_transfers = c->flagged[MOP_CHECK_IN_CALL].transfers +
                             c->flagged[MOP_CHECK_ACROSS].transfers;
    row->flagged_xfer_s = c->flagged[MOP_CHECK_IN_CALL].xfer_s +
                          c->flagged[MOP_CHECK_ACROSS].xfer_s;
    row->beyond_s = mop_checks_beyond_s(c);
}

/* The union of two sorted lists, cells of one name merged (a's first). */
static int mop_jlist_merge(mop_jlist *a, const mop_jlist *b)
{
    mop_jlist out = {NULL, 0};
    size_t cap = 0, i = 0, j = 0;
    while (i < a->n || j < b->n) {
        int cmp = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->e[i].name, b->e[j].name);
        const mop_jentry *from = cmp <= 0 ? &a->e[i] : &b->e[j];
        if (mop_jlist_push(&out, &cap, from->name, strlen(from->name), &from->c) != 0) {
            mop_jlist_free(&out);
            return -1;
        }
        if (cmp == 0)
            mop_jcell_merge(&out.e[out.n - 1].c, &b->e[j].c);
        i += cmp <= 0;
        j += cmp >= 0;
    }
    mop_jlist_free(a);
    *a = out;
    return 0;
}

/* A copy of l: 0, or -1 when out of memory (out then holds nothing to free). */
static int mop_jlist_copy(mop_jlist *out, const mop_jlist *l)
{
    size_t cap = 0;
    *out = (mop_jlist){NULL, 0};
    for (size_t i = 0; i < l->n; i++) {
        if (mop_jlist_push(out, &cap, l->e[i].name, strlen(l->e[i].name), &l->e[i].c) != 0) {
            mop_jlist_free(out);
            return -1;
        }
    }
    return 0;
}

int mop_job_stats_merge(mop_job_stats *dst, const mop_job_stats *src)
{
    /* the lists first, on copies: they are the only step that can fail */
    mop_jlist merged[MOP_JS_NLISTS] = {{NULL, 0}};
    for (int l = 0; l < MOP_JS_NLISTS; l++)
        if (mop_jlist_copy(&merged[l], &dst->list[l]) != 0 ||
            mop_jlist_merge(&merged[l], &src->list[l]) != 0)
            goto oom;
    for (int l = 0; l < MOP_JS_NLISTS; l++) {
        mop_jlist_free(&dst->list[l]);
        dst->list[l] = merged[l];
    }

    dst->ranks += src->ranks;
    dst->ranks_with_data += src->ranks_with_data;
    if (!dst->disabled_reason[0]) /* the lower ranks' first */
        memcpy(dst->disabled_reason, src->disabled_reason, sizeof dst->disabled_reason);
    mop_jcell_merge(&dst->total, &src->total);
    for (int c = 0; c < MOP_NCASES; c++)
        dst->cases[c] += src->cases[c];
#define MOP_JS_COUNTER_ADD(name) dst->counters.name += src->counters.name;
    MOP_COUNTERS(MOP_JS_COUNTER_ADD)
#undef MOP_JS_COUNTER_ADD
    if (src->outstanding_peak > dst->outstanding_peak)
        dst->outstanding_peak = src->outstanding_peak;
    for (int c = 0; c < MOP_NCASES; c++)
        mop_jranks_merge(&dst->case_who[c], &src->case_who[c]);
    for (int c = 0; c < MOP_JS_NCOUNTERS; c++)
        mop_jranks_merge(&dst->counter_who[c], &src->counter_who[c]);
    for (int k = 0; k < MOP_NCHECKS; k++) {
        mop_jcheck_part *d = &dst->check[k];
        const mop_jcheck_part *p = &src->check[k];
        d->transfers += p->transfers;
        d->calls += p->calls;
        d->calls_beyond += p->calls_beyond;
        d->unchecked += p->unchecked;
        d->flagged_transfers += p->flagged_transfers;
        d->xfer_s += p->xfer_s;
        d->call_s += p->call_s;
        d->longest_s += p->longest_s;
        d->beyond_s += p->beyond_s;
        d->flagged_xfer_s += p->flagged_xfer_s;
        d->excess_s += p->excess_s;
    }
    dst->beyond_s += src->beyond_s;
    if (src->nbins > dst->nbins) { /* a disabled rank 0 still knows the bins; be safe */
        for (size_t i = dst->nbins; i < src->nbins; i++) {
            dst->bin_lo[i] = src->bin_lo[i];
            dst->bin_hi[i] = src->bin_hi[i];
        }
        dst->nbins = src->nbins;
    }
    for (size_t i = 0; i < src->nbins; i++) {
        if (src->bins[i].ranks)
            mop_jcell_merge(&dst->bins[i], &src->bins[i]);
        for (int k = 0; k < MOP_NCHECKS; k++)
            if (src->flag_bins[i][k].ranks)
                mop_jcell_merge(&dst->flag_bins[i][k], &src->flag_bins[i][k]);
    }
    return 0;
oom:
    for (int l = 0; l < MOP_JS_NLISTS; l++)
        mop_jlist_free(&merged[l]);
    return -1;
}

void mop_job_stats_free(mop_job_stats *s)
{
    for (int l = 0; l < MOP_JS_NLISTS; l++)
        mop_jlist_free(&s->list[l]);
}

/* ---------------------------------------------------------------- bytes */

typedef struct mop_js_buf {
    unsigned char *p;
    size_t len, cap;
    int bad;
} mop_js_buf;

static void mop_js_put(mop_js_buf *b, const void *v, size_t n)
{
    if (b->bad)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

static void mop_js_put_u64(mop_js_buf *b, uint64_t v)
{
    mop_js_put(b, &v, sizeof v);
}

static void mop_js_put_list(mop_js_buf *b, const mop_jlist *l)
{
    mop_js_put_u64(b, l->n);
    for (size_t i = 0; i < l->n; i++) {
        uint64_t len = strlen(l->e[i].name);
        mop_js_put_u64(b, len);
        mop_js_put(b, l->e[i].name, len);
        mop_js_put(b, &l->e[i].c, sizeof l->e[i].c);
    }
}

/* The cells with data (most of the bins are empty), each with its index. */
static void mop_js_put_cells(mop_js_buf *b, const mop_jcell *cells, size_t n)
{
    uint64_t used = 0;
    for (size_t i = 0; i < n; i++)
        used += cells[i].ranks != 0;
    mop_js_put_u64(b, used);
    for (size_t i = 0; i < n; i++) {
        if (!cells[i].ranks)
            continue;
        mop_js_put_u64(b, i);
        mop_js_put(b, &cells[i], sizeof cells[i]);
    }
}

int mop_job_stats_pack(const mop_job_stats *s, unsigned char **buf, size_t *len)
{
    mop_js_buf b = {NULL, 0, 0, 0};
    mop_js_put_u64(&b, ((uint64_t)MOP_JS_VERSION << 32) | MOP_JS_MAGIC);
    mop_js_put_u64(&b, s->ranks);
    mop_js_put_u64(&b, s->ranks_with_data);
    mop_js_put(&b, &s->total, sizeof s->total);
    mop_js_put(&b, s->cases, sizeof s->cases);
    mop_js_put(&b, &s->counters, sizeof s->counters);
    mop_js_put_u64(&b, s->outstanding_peak);
    mop_js_put(&b, s->case_who, sizeof s->case_who);
    mop_js_put(&b, s->counter_who, sizeof s->counter_who);
    mop_js_put(&b, s->check, sizeof s->check);
    mop_js_put(&b, &s->beyond_s, sizeof s->beyond_s);
    mop_js_put(&b, s->disabled_reason, sizeof s->disabled_reason);
    mop_js_put_u64(&b, s->nbins);
    mop_js_put(&b, s->bin_lo, s->nbins * sizeof *s->bin_lo);
    mop_js_put(&b, s->bin_hi, s->nbins * sizeof *s->bin_hi);
    mop_js_put_cells(&b, s->bins, s->nbins);
    mop_js_put_cells(&b, &s->flag_bins[0][0], s->nbins * MOP_NCHECKS);
    for (int l = 0; l < MOP_JS_NLISTS; l++)
        mop_js_put_list(&b, &s->list[l]);
    if (b.bad) {
        free(b.p);
        return -1;
    }
    *buf = b.p;
    *len = b.len;
    return 0;
}

typedef struct mop_js_in {
    const unsigned char *p;
    size_t left;
} mop_js_in;

static int mop_js_get(mop_js_in *in, void *v, size_t n)
{
    if (n > in->left)
        return -1;
    memcpy(v, in->p, n);
    in->p += n;
    in->left -= n;
    return 0;
}

static int mop_js_get_list(mop_js_in *in, mop_jlist *l)
{
    uint64_t n;
    size_t cap = 0;
    if (mop_js_get(in, &n, sizeof n) != 0 || n > in->left)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        mop_jcell c;
        if (mop_js_get(in, &len, sizeof len) != 0 || len > in->left)
            return -1;
        const char *name = (const char *)in->p;
        in->p += len;
        in->left -= len;
        if (mop_js_get(in, &c, sizeof c) != 0 || mop_jlist_push(l, &cap, name, len, &c) != 0)
            return -1;
    }
    return 0;
}

static int mop_js_get_cells(mop_js_in *in, mop_jcell *cells, size_t n)
{
    uint64_t used;
    if (mop_js_get(in, &used, sizeof used) != 0 || used > n)
        return -1;
    for (uint64_t k = 0; k < used; k++) {
        uint64_t i;
        if (mop_js_get(in, &i, sizeof i) != 0 || i >= n ||
            mop_js_get(in, &cells[i], sizeof cells[i]) != 0)
            return -1;
    }
    return 0;
}

int mop_job_stats_unpack(mop_job_stats *s, const unsigned char *buf, size_t len)
{
    memset(s, 0, sizeof *s);
    mop_js_in in = {buf, len};
    uint64_t head, nbins;
    if (mop_js_get(&in, &head, sizeof head) != 0 ||
        head != (((uint64_t)MOP_JS_VERSION << 32) | MOP_JS_MAGIC) ||
        mop_js_get(&in, &s->ranks, sizeof s->ranks) != 0 ||
        mop_js_get(&in, &s->ranks_with_data, sizeof s->ranks_with_data) != 0 ||
        mop_js_get(&in, &s->total, sizeof s->total) != 0 ||
        mop_js_get(&in, s->cases, sizeof s->cases) != 0 ||
        mop_js_get(&in, &s->counters, sizeof s->counters) != 0 ||
        mop_js_get(&in, &s->outstanding_peak, sizeof s->outstanding_peak) != 0 ||
        mop_js_get(&in, s->case_who, sizeof s->case_who) != 0 ||
        mop_js_get(&in, s->counter_who, sizeof s->counter_who) != 0 ||
        mop_js_get(&in, s->check, sizeof s->check) != 0 ||
        mop_js_get(&in, &s->beyond_s, sizeof s->beyond_s) != 0 ||
        mop_js_get(&in, s->disabled_reason, sizeof s->disabled_reason) != 0 ||
        mop_js_get(&in, &nbins, sizeof nbins) != 0 || nbins > MOP_MAX_BINS)
        return -1;
    s->disabled_reason[sizeof s->disabled_reason - 1] = '\0'; /* from another rank */
    s->nbins = (size_t)nbins;
    if (mop_js_get(&in, s->bin_lo, s->nbins * sizeof *s->bin_lo) != 0 ||
        mop_js_get(&in, s->bin_hi, s->nbins * sizeof *s->bin_hi) != 0 ||
        mop_js_get_cells(&in, s->bins, s->nbins) != 0 ||
        mop_js_get_cells(&in, &s->flag_bins[0][0], s->nbins * MOP_NCHECKS) != 0)
        return -1;
    for (int l = 0; l < MOP_JS_NLISTS; l++) {
        if (mop_js_get_list(&in, &s->list[l]) != 0) {
            mop_job_stats_free(s);
            return -1;
        }
    }
    if (in.left != 0 || !mop_js_sorted(s)) {
        mop_job_stats_free(s);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- JSON */

static void mop_js_measures(mo_json *w, const mop_jcell *c)
{
    mo_json_kv_uint64(w, "transfers", c->transfers);
    mo_json_kv_double(w, "xfer_s", c->xfer_s);
    mo_json_kv_double(w, "min_s", c->min_s);
    mo_json_kv_double(w, "max_s", c->max_s);
    mo_json_kv_double(w, "nonoverlap_s", c->nonoverlap_s);
}

static void mop_js_ranks(mo_json *w, const mop_jcell *c)
{
    mo_json_kv_uint64(w, "ranks", c->ranks);
    mo_json_key(w, "worst_rank"); /* as the analysis: none when no rank lost time here */
    if (c->ranks && c->worst_s > 0)
        mo_json_int64(w, c->worst_rank);
    else
        mo_json_null(w);
    mo_json_kv_double(w, "worst_s", c->worst_s);
}

static void mop_js_list(mo_json *w, const char *key, const char *name_key, const mop_jlist *l,
                        bool is_fn)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (size_t i = 0; i < l->n; i++) {
        const mop_jcell *c = &l->e[i].c;
        mo_json_begin_object(w);
        mo_json_kv_string(w, name_key, l->e[i].name);
        if (is_fn) {
            mo_json_kv_uint64(w, "calls", c->calls);
        } else {
            mo_json_kv_double(w, "comp_s", c->comp_s);
        }
        mo_json_kv_double(w, "call_s", c->call_s);
        mop_js_measures(w, c);
        mop_js_ranks(w, c);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

/* The per-rank rows as columns: one array per measure, indexed like "rank". */
#define MOP_JS_ROW_COLUMNS(X)       \
    X(transfers, uint64)            \
    X(xfer_s, double)               \
    X(min_s, double)                \
    X(max_s, double)                \
    X(nonoverlap_s, double)         \
    X(comp_s, double)               \
    X(call_s, double)               \
    X(wall_s, double)               \
    X(in_call_xfer_s, double)       \
    X(in_call_calls, uint64)        \
    X(in_call_calls_beyond, uint64) \
    X(in_call_call_s, double)       \
    X(in_call_longest_s, double)    \
    X(flagged_transfers, uint64)    \
    X(flagged_xfer_s, double)       \
    X(beyond_s, double)             \
    X(top_fn_call_s, double)        \
    X(busiest_site_call_s, double)

static void mop_js_rows(mo_json *w, const mop_job_stats_info *info)
{
    mo_json_key(w, "rank_rows");
    mo_json_begin_object(w);
    /* each column on one line: a number a line would be 30 bytes a rank and column */
    mo_json_key(w, "rank");
    mo_json_begin_array(w);
    bool was = mo_json_inline(w, true);
    for (int r = 0; r < info->nrows; r++)
        mo_json_int64(w, info->rows[r].rank);
    mo_json_end_array(w);
    mo_json_inline(w, was);
    mo_json_key(w, "disabled");
    mo_json_begin_array(w);
    mo_json_inline(w, true);
    for (int r = 0; r < info->nrows; r++)
        mo_json_bool(w, info->rows[r].disabled != 0);
    mo_json_end_array(w);
    mo_json_inline(w, was);
#define MOP_JS_COLUMN(field, kind)                 \
    mo_json_key(w, #field);                        \
    mo_json_begin_array(w);                        \
    mo_json_inline(w, true);                       \
    for (int r = 0; r < info->nrows; r++)          \
        mo_json_##kind(w, info->rows[r].field);    \
    mo_json_end_array(w);                          \
    mo_json_inline(w, was);
    MOP_JS_ROW_COLUMNS(MOP_JS_COLUMN)
#undef MOP_JS_COLUMN
    static const char *const text_keys[] = {"host", "top_fn"};
    for (int k = 0; k < 2; k++) {
        mo_json_key(w, text_keys[k]);
        mo_json_begin_array(w);
        mo_json_inline(w, true);
        for (int r = 0; r < info->nrows; r++)
            mo_json_string(w, k == 0 ? info->rows[r].host : info->rows[r].top_fn);
        mo_json_end_array(w);
        mo_json_inline(w, was);
    }
    mo_json_key(w, "busiest_site"); /* hex: JSON numbers lose bits above 2^53 */
    mo_json_begin_array(w);
    mo_json_inline(w, true);
    for (int r = 0; r < info->nrows; r++) {
        char hex[24];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)info->rows[r].busiest_site);
        mo_json_string(w, info->rows[r].busiest_site ? hex : NULL);
    }
    mo_json_end_array(w);
    mo_json_inline(w, was);
    mo_json_end_object(w);
}

/* Every rank's bins with transfers, by the job's bin: per bin, one column per
 * measure over the ranks (0 where a rank had none of that size). */
static void mop_js_rank_bins(mo_json *w, const mop_job_stats *s, const mop_job_stats_info *info)
{
    mo_json_key(w, "rank_bins");
    mo_json_begin_array(w);
    for (size_t i = 0; info->bins && i < s->nbins; i++) {
        if (!s->bins[i].ranks)
            continue;
        mo_json_begin_object(w);
        mo_json_kv_uint64(w, "lo", s->bin_lo[i]);
        mo_json_key(w, "hi");
        if (s->bin_hi[i] == UINT64_MAX)
            mo_json_null(w);
        else
            mo_json_uint64(w, s->bin_hi[i]);
        for (int m = 0; m < 4; m++) {
            static const char *const keys[] = {"transfers", "xfer_s", "min_s", "max_s"};
            mo_json_key(w, keys[m]);
            mo_json_begin_array(w);
            bool was = mo_json_inline(w, true);
            for (int r = 0; r < info->nrows; r++) {
                const mop_job_bin *b = NULL;
                for (int k = 0; k < info->nbins[r]; k++)
                    if (info->bins[info->first_bin[r] + k].bin == i)
                        b = &info->bins[info->first_bin[r] + k];
                if (m == 0)
                    mo_json_uint64(w, b ? b->transfers : 0);
                else
                    mo_json_double(w, !b ? 0.0 : m == 1 ? b->xfer_s : m == 2 ? b->min_s
                                                                         : b->max_s);
            }
            mo_json_end_array(w);
            mo_json_inline(w, was);
        }
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

/* {"n": ranks, "first": [the lowest of them]} */
static void mop_js_who(mo_json *w, const char *key, const mop_jranks *who)
{
    mo_json_key(w, key);
    mo_json_begin_object(w);
    mo_json_kv_uint64(w, "n", who->n);
    mo_json_key(w, "first");
    mo_json_begin_array(w);
    bool was = mo_json_inline(w, true);
    for (uint64_t i = 0; i < who->n && i < MOP_JS_FIRST; i++)
        mo_json_int64(w, who->first[i]);
    mo_json_end_array(w);
    mo_json_inline(w, was);
    mo_json_end_object(w);
}

static void mop_js_flag(mo_json *w, const mop_jcell *c)
{
    mo_json_kv_uint64(w, "transfers", c->transfers);
    mo_json_kv_double(w, "xfer_s", c->xfer_s);
    mo_json_kv_double(w, "excess_s", c->excess_s);
    mop_js_who(w, "ranks", &c->who);
}

static void mop_js_part(mo_json *w, const char *key, const mop_jcheck_part *p, bool in_call)
{
    mo_json_key(w, key);
    mo_json_begin_object(w);
    mo_json_kv_uint64(w, "transfers", p->transfers);
    mo_json_kv_double(w, "xfer_s", p->xfer_s);
    if (in_call) {
        mo_json_kv_uint64(w, "calls", p->calls);
        mo_json_kv_double(w, "call_s", p->call_s);
        mo_json_kv_double(w, "longest_s", p->longest_s);
        mo_json_kv_uint64(w, "calls_beyond", p->calls_beyond);
        mo_json_kv_double(w, "beyond_s", p->beyond_s);
        mo_json_kv_uint64(w, "unchecked", p->unchecked);
    }
    mo_json_kv_uint64(w, "flagged_transfers", p->flagged_transfers);
    mo_json_kv_double(w, "flagged_xfer_s", p->flagged_xfer_s);
    mo_json_kv_double(w, "excess_s", p->excess_s);
    mo_json_end_object(w);
}

/* The checks on the bounds summed, and what they flagged by function and bin. */
static void mop_js_checks(mo_json *w, const mop_job_stats *s)
{
    mo_json_key(w, "checks");
    mo_json_begin_object(w);
    mop_js_part(w, "in_call", &s->check[MOP_CHECK_IN_CALL], true);
    mop_js_part(w, "across_calls", &s->check[MOP_CHECK_ACROSS], false);
    mo_json_kv_double(w, "beyond_s", s->beyond_s);
    mo_json_key(w, "by_function");
    mo_json_begin_array(w);
    const mop_jlist *flags = &s->list[MOP_JS_FLAG_FNS];
    for (size_t i = 0; i < flags->n; i++) {
        const char *key = flags->e[i].name, *tab = strchr(key, '\t');
        char fn[160];
        snprintf(fn, sizeof fn, "%.*s", tab ? (int)(tab - key) : (int)strlen(key), key);
        mo_json_begin_object(w);
        mo_json_kv_string(w, "fn", fn);
        mo_json_kv_string(w, "check", tab ? tab + 1 : "");
        mop_js_flag(w, &flags->e[i].c);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    mo_json_key(w, "by_bin");
    mo_json_begin_array(w);
    for (size_t i = 0; i < s->nbins; i++) {
        for (int k = 0; k < MOP_NCHECKS; k++) {
            const mop_jcell *c = &s->flag_bins[i][k];
            if (!c->ranks)
                continue;
            mo_json_begin_object(w);
            mo_json_kv_uint64(w, "lo", s->bin_lo[i]);
            mo_json_key(w, "hi");
            if (s->bin_hi[i] == UINT64_MAX)
                mo_json_null(w);
            else
                mo_json_uint64(w, s->bin_hi[i]);
            mo_json_kv_string(w, "check", mop_check_name((mop_check)k));
            mop_js_flag(w, c);
            mo_json_end_object(w);
        }
    }
    mo_json_end_array(w);
    mo_json_end_object(w);
}

/* "<where>\t<fn>" written as the two fields `where_key` and `fn_key`. */
static void mop_js_site_fields(mo_json *w, const char *name, size_t len, const char *where_key,
                               const char *fn_key)
{
    const char *tab = memchr(name, '\t', len);
    size_t wlen = tab ? (size_t)(tab - name) : len;
    char *where = malloc(wlen + 1);
    if (where) {
        memcpy(where, name, wlen);
        where[wlen] = '\0';
    }
    mo_json_kv_string(w, where_key, where ? where : "");
    free(where);
    char fn[64];
    snprintf(fn, sizeof fn, "%.*s", tab ? (int)(len - wlen - 1) : 0, tab ? tab + 1 : "");
    mo_json_kv_string(w, fn_key, fn);
}

/* Call sites, site pairs, and the pairs per posting and completing site. */
static void mop_js_sites(mo_json *w, const mop_job_stats *s)
{
    const mop_jlist *sites = &s->list[MOP_JS_SITES];
    mo_json_key(w, "sites");
    mo_json_begin_array(w);
    for (size_t i = 0; i < sites->n; i++) {
        mo_json_begin_object(w);
        mop_js_site_fields(w, sites->e[i].name, strlen(sites->e[i].name), "site", "fn");
        mo_json_kv_uint64(w, "calls", sites->e[i].c.calls);
        mo_json_kv_double(w, "call_s", sites->e[i].c.call_s);
        mo_json_kv_uint64(w, "ranks", sites->e[i].c.ranks);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    static const struct { int id; const char *key; } ends[] = {
        {MOP_JS_POSTS, "post_sites"}, {MOP_JS_ENDS, "end_sites"}};
    for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) {
        const mop_jlist *l = &s->list[ends[k].id];
        mo_json_key(w, ends[k].key);
        mo_json_begin_array(w);
        for (size_t i = 0; i < l->n; i++) {
            mo_json_begin_object(w);
            mop_js_site_fields(w, l->e[i].name, strlen(l->e[i].name), "site", "fn");
            mop_js_measures(w, &l->e[i].c);
            mop_js_ranks(w, &l->e[i].c);
            mo_json_end_object(w);
        }
        mo_json_end_array(w);
    }
    const mop_jlist *pairs = &s->list[MOP_JS_PAIRS];
    mo_json_key(w, "pairs");
    mo_json_begin_array(w);
    for (size_t i = 0; i < pairs->n; i++) {
        const char *name = pairs->e[i].name, *sep = strchr(name, MOP_JS_PAIR_SEP);
        size_t plen = sep ? (size_t)(sep - name) : strlen(name);
        mo_json_begin_object(w);
        mop_js_site_fields(w, name, plen, "post", "post_fn");
        if (sep)
            mop_js_site_fields(w, sep + 1, strlen(sep + 1), "end", "end_fn");
        mo_json_kv_uint64(w, "polled", pairs->e[i].c.calls);
        mop_js_measures(w, &pairs->e[i].c);
        mop_js_ranks(w, &pairs->e[i].c);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

int mop_job_stats_json(FILE *f, const mop_job_stats *s, const mop_job_stats_info *info)
{
    mo_json w;
    mo_json_init(&w, f);
    mo_json_begin_object(&w);
    mo_json_kv_string(&w, "schema", "mpi-overlap/profile-stats");
    mo_json_kv_int64(&w, "schema_version", 1);
    mo_json_kv_uint64(&w, "ranks", s->ranks);
    mo_json_kv_uint64(&w, "ranks_with_data", s->ranks_with_data);
    mo_json_kv_string(&w, "order", "binomial tree over MPI_COMM_WORLD ranks");
    mo_json_kv_double(&w, "reduce_s", info->reduce_s);
    mo_json_kv_uint64(&w, "largest_message", info->largest_message);
    mo_json_kv_string(&w, "mpi_library_version", info->library_version);
    mo_json_kv_string(&w, "disabled_reason", s->disabled_reason[0] ? s->disabled_reason : NULL);

    mo_json_key(&w, "totals");
    mo_json_begin_object(&w);
    mop_js_measures(&w, &s->total);
    mo_json_kv_double(&w, "comp_s", s->total.comp_s);
    mo_json_kv_double(&w, "call_s", s->total.call_s);
    mo_json_end_object(&w);

    mo_json_key(&w, "cases");
    mo_json_begin_object(&w);
    for (int c = 0; c < MOP_NCASES; c++)
        mo_json_kv_uint64(&w, mop_case_name((mop_case)c), s->cases[c]);
    mo_json_end_object(&w);

    mo_json_key(&w, "counters");
    mo_json_begin_object(&w);
#define MOP_JS_COUNTER_JSON(name) mo_json_kv_uint64(&w, #name, s->counters.name);
    MOP_COUNTERS(MOP_JS_COUNTER_JSON)
#undef MOP_JS_COUNTER_JSON
    mo_json_kv_uint64(&w, "outstanding_peak", s->outstanding_peak);
    mo_json_end_object(&w);

    /* which ranks had each case and counter non-zero */
    mo_json_key(&w, "cases_ranks");
    mo_json_begin_object(&w);
    for (int c = 0; c < MOP_NCASES; c++)
        mop_js_who(&w, mop_case_name((mop_case)c), &s->case_who[c]);
    mo_json_end_object(&w);
    mo_json_key(&w, "counters_ranks");
    mo_json_begin_object(&w);
    for (int c = 0; c < MOP_JS_NCOUNTERS; c++)
        mop_js_who(&w, mop_js_counter_names[c], &s->counter_who[c]);
    mo_json_end_object(&w);
    mop_js_checks(&w, s);

    mo_json_key(&w, "by_bin");
    mo_json_begin_array(&w);
    for (size_t i = 0; i < s->nbins; i++) {
        const mop_jcell *c = &s->bins[i];
        if (!c->ranks)
            continue;
        mo_json_begin_object(&w);
        mo_json_kv_uint64(&w, "lo", s->bin_lo[i]);
        mo_json_key(&w, "hi");
        if (s->bin_hi[i] == UINT64_MAX)
            mo_json_null(&w);
        else
            mo_json_uint64(&w, s->bin_hi[i]);
        mop_js_measures(&w, c);
        mop_js_ranks(&w, c);
        mo_json_end_object(&w);
    }
    mo_json_end_array(&w);
    mop_js_list(&w, "by_function", "fn", &s->list[MOP_JS_FNS], true);
    mop_js_list(&w, "by_region", "region", &s->list[MOP_JS_REGIONS], false);
    mop_js_sites(&w, s);
    mop_js_rank_bins(&w, s, info);
    mop_js_rows(&w, info);
    mo_json_end_object(&w);
    return mo_json_finish(&w);
}
