/* mop_job_stats.c - the job's statistics: made from one rank's measures and
 * merged in the tree's order; see mop_job_stats.h (the bytes between ranks:
 * mop_job_stats_pack.c; the file: mop_job_stats_json.c). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "mop_job_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "grow.h"

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

void mop_jlist_free(mop_jlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i].name);
    free(l->e);
    l->e = NULL;
    l->n = 0;
}

/* Appends a copy of name with its cell (the caller sorts or keeps order). */
int mop_jlist_push(mop_jlist *l, size_t *cap, const char *name, size_t len,
                          const mop_jcell *c)
{
    if (l->n == *cap) {
        mop_jentry *e = mo_grow(l->e, cap, sizeof *e, 16);
        if (!e)
            return -1;
        l->e = e;
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

bool mop_js_sorted(const mop_job_stats *s)
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

/* Adds c to the entry `name` of l, or appends it; entries are merged in the
 * order they come. Both are this rank's: the entry's ranks stay 1, and its
 * worst is this rank with the sum. */
static int mop_js_add_own(mop_jlist *l, size_t *cap, const char *name, const mop_jcell *c)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->e[i].name, name) == 0) {
            mop_jcell *d = &l->e[i].c;
            mop_jcell_merge(d, c);
            d->ranks = 1;
            d->worst_s = d->nonoverlap_s;
            return 0;
        }
    }
    return mop_jlist_push(l, cap, name, strlen(name), c);
}

/* The rank's call sites, site pairs, and the pairs summed per posting and per
 * completing site, as the analysis ranks them (analysis/callsites.py); each
 * site's name made once, for itself and every pair that names it. */
static int mop_js_sites_of_rank(mop_job_stats *s, const mop_process *p, const mop_names *names,
                                int rank)
{
    enum { NAME = 2 * 16384 + 2 };
    static char buf[2 * NAME]; /* profiles are made one at a time */
    const mop_sites *sites = &p->sites;
    char *name[MOP_MAX_SITES] = {NULL};
    int rc = 0;
    for (uint16_t i = 0; i < sites->nsite && rc == 0; i++) {
        mop_js_site_name(sites, i, names, buf, NAME);
        if (!(name[i] = strdup(buf)))
            rc = -1;
    }
    size_t cap = 0;
    for (uint16_t i = 0; i < sites->nsite && rc == 0; i++) {
        if (i == MOP_SITE_UNKNOWN && sites->site[i].calls == 0)
            continue; /* as the rank's document */
        mop_jcell c;
        memset(&c, 0, sizeof c);
        c.ranks = 1;
        c.worst_rank = rank;
        c.calls = sites->site[i].calls;
        c.call_s = (double)sites->site[i].call_ticks * p->cfg.s_per_tick;
        rc = mop_js_add_own(&s->list[MOP_JS_SITES], &cap, name[i], &c);
    }
    size_t pcap = 0, ecap = 0;
    cap = 0;
    for (uint16_t k = 0; k < sites->npair && rc == 0; k++) {
        const mop_pair *pr = &sites->pair[k];
        mop_jcell c;
        mop_jcell_of(&c, &pr->x, rank);
        if (mop_js_add_own(&s->list[MOP_JS_POSTS], &pcap, name[pr->post], &c) != 0 ||
            mop_js_add_own(&s->list[MOP_JS_ENDS], &ecap, name[pr->end], &c) != 0) {
            rc = -1;
            break;
        }
        c.calls = pr->polled;
        snprintf(buf, sizeof buf, "%s%c%s", name[pr->post], MOP_JS_PAIR_SEP, name[pr->end]);
        rc = mop_js_add_own(&s->list[MOP_JS_PAIRS], &cap, buf, &c);
    }
    for (uint16_t i = 0; i < sites->nsite; i++)
        free(name[i]);
    return rc;
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
    row->comp_off_cpu_s = row->run_delay_s = NAN; /* the runtime sets them (mop_cpu.h) */
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

/* Into out (empty): the union of two sorted lists, cells of one name merged
 * (a's first); a and b are left as they were. 0, or -1 (out of memory: out
 * then holds nothing to free). */
static int mop_jlist_union(mop_jlist *out, const mop_jlist *a, const mop_jlist *b)
{
    size_t cap = 0, i = 0, j = 0;
    while (i < a->n || j < b->n) {
        int cmp = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->e[i].name, b->e[j].name);
        const mop_jentry *from = cmp <= 0 ? &a->e[i] : &b->e[j];
        if (mop_jlist_push(out, &cap, from->name, strlen(from->name), &from->c) != 0) {
            mop_jlist_free(out);
            return -1;
        }
        if (cmp == 0)
            mop_jcell_merge(&out->e[out->n - 1].c, &b->e[j].c);
        i += cmp <= 0;
        j += cmp >= 0;
    }
    return 0;
}

int mop_job_stats_merge(mop_job_stats *dst, const mop_job_stats *src)
{
    /* the lists first, into new ones: they are the only step that can fail */
    mop_jlist merged[MOP_JS_NLISTS] = {{NULL, 0}};
    for (int l = 0; l < MOP_JS_NLISTS; l++)
        if (mop_jlist_union(&merged[l], &dst->list[l], &src->list[l]) != 0)
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
