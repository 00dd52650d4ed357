/* mop_profile_json.c - the per-rank profile object: totals, cases, the
 * breakdowns by size bin, function and region, the checks on the bounds and
 * the counters. */
#include "mop_profile_json.h"

#include <stdio.h>
#include <string.h>

static const char *mop_name(const char *const *names, size_t n, size_t id, char *buf,
                            size_t buflen)
{
    if (names && id < n && names[id])
        return names[id];
    snprintf(buf, buflen, "#%zu", id);
    return buf;
}

/* Orders ids by their names (insertion sort: a few dozen entries). */
static void mop_sort_by_name(size_t *order, size_t n, const char *const *names, size_t nnames)
{
    for (size_t i = 1; i < n; i++) {
        size_t v = order[i], j = i;
        char b1[32], b2[32];
        while (j > 0 && strcmp(mop_name(names, nnames, order[j - 1], b1, sizeof b1),
                               mop_name(names, nnames, v, b2, sizeof b2)) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
}

static void mop_acc_json(mo_json *w, const mop_acc *a)
{
    mo_json_kv_uint64(w, "transfers", a->transfers);
    mo_json_kv_double(w, "xfer_s", a->xfer_s);
    mo_json_kv_double(w, "min_s", a->min_s);
    mo_json_kv_double(w, "max_s", a->max_s);
    mo_json_kv_double(w, "nonoverlap_s", a->xfer_s - a->max_s);
}

static void mop_bin_range_json(mo_json *w, const mop_process *p, size_t i)
{
    uint64_t lo, hi;
    mop_process_bin_range(p, i, &lo, &hi);
    mo_json_kv_uint64(w, "lo", lo);
    if (hi == UINT64_MAX) {
        mo_json_key(w, "hi");
        mo_json_null(w);
    } else {
        mo_json_kv_uint64(w, "hi", hi);
    }
}

static void mop_flagged_json(mo_json *w, const mop_flagged *f)
{
    mo_json_kv_uint64(w, "transfers", f->transfers);
    mo_json_kv_double(w, "xfer_s", f->xfer_s);
    mo_json_kv_double(w, "excess_s", f->excess_s);
}

/* One row per (entry, check) that flagged something: "fn" or a bin's range. */
static void mop_flagged_row(mo_json *w, const mop_flagged *f, mop_check k)
{
    mo_json_kv_string(w, "check", mop_check_name(k));
    mop_flagged_json(w, f);
    mo_json_end_object(w);
}

/* The checks on the bounds (mop_checks.h; docs/profiler.md, "Checks on the
 * bounds"). `order` holds the function ids sorted by name. */
static void mop_checks_json(mo_json *w, const mop_process *p, const mop_names *names,
                            const size_t *order, size_t n)
{
    const mop_checks *c = &p->checks;
    char buf[32];
    mo_json_key(w, "checks");
    mo_json_begin_object(w);
    mo_json_key(w, "in_call");
    mo_json_begin_object(w);
    mo_json_kv_uint64(w, "transfers", c->transfers[MOP_CHECK_IN_CALL]);
    mo_json_kv_double(w, "xfer_s", c->xfer_s[MOP_CHECK_IN_CALL]);
    mo_json_kv_uint64(w, "calls", c->calls);
    mo_json_kv_double(w, "call_s", (double)c->call_ticks * p->cfg.s_per_tick);
    mo_json_kv_double(w, "longest_s", c->longest_s);
    mo_json_key(w, "flagged");
    mo_json_begin_object(w);
    mop_flagged_json(w, &c->flagged[MOP_CHECK_IN_CALL]);
    mo_json_end_object(w);
    mo_json_kv_uint64(w, "calls_beyond", c->calls_beyond);
    mo_json_kv_double(w, "beyond_s", c->beyond_s);
    mo_json_kv_uint64(w, "unchecked", mop_checks_unchecked(c));
    mo_json_end_object(w);
    mo_json_key(w, "across_calls");
    mo_json_begin_object(w);
    mo_json_kv_uint64(w, "transfers", c->transfers[MOP_CHECK_ACROSS]);
    mo_json_kv_double(w, "xfer_s", c->xfer_s[MOP_CHECK_ACROSS]);
    mo_json_key(w, "flagged");
    mo_json_begin_object(w);
    mop_flagged_json(w, &c->flagged[MOP_CHECK_ACROSS]);
    mo_json_end_object(w);
    mo_json_end_object(w);
    mo_json_kv_double(w, "beyond_s", mop_checks_beyond_s(c));

    mo_json_key(w, "by_function");
    mo_json_begin_array(w);
    for (size_t k = 0; k < n; k++) {
        for (int m = 0; m < MOP_NCHECKS; m++) {
            const mop_flagged *f = &c->by_fn[order[k]][m];
            if (!f->transfers)
                continue;
            mo_json_begin_object(w);
            mo_json_kv_string(w, "fn", mop_name(names->fn, names->nfn, order[k], buf, sizeof buf));
            mop_flagged_row(w, f, (mop_check)m);
        }
    }
    mo_json_end_array(w);

    mo_json_key(w, "by_bin");
    mo_json_begin_array(w);
    for (size_t i = 0; i < mop_process_nbins(p); i++) {
        for (int m = 0; m < MOP_NCHECKS; m++) {
            const mop_flagged *f = &c->by_bin[i][m];
            if (!f->transfers)
                continue;
            mo_json_begin_object(w);
            mop_bin_range_json(w, p, i);
            mop_flagged_row(w, f, (mop_check)m);
        }
    }
    mo_json_end_array(w);
    mo_json_end_object(w);
}

/* Call sites and site pairs (mop_sites.h): addresses as hex strings (JSON
 * numbers lose bits above 2^53), in table order; the report resolves them to
 * source lines with the process's executable mappings ("maps"). */
static void mop_sites_json(mo_json *w, const mop_process *p, const mop_names *names)
{
    const mop_sites *s = &p->sites;
    char buf[32];
    mo_json_key(w, "sites");
    mo_json_begin_array(w);
    for (uint16_t i = 0; i < s->nsite; i++) {
        const mop_site *site = &s->site[i];
        if (i == MOP_SITE_UNKNOWN && site->calls == 0)
            continue;
        mo_json_begin_object(w);
        mo_json_kv_uint64(w, "id", i);
        snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)site->addr);
        mo_json_kv_string(w, "addr", i == MOP_SITE_UNKNOWN ? NULL : buf);
        mo_json_kv_string(w, "fn", i == MOP_SITE_UNKNOWN
                                       ? NULL
                                       : mop_name(names->fn, names->nfn, site->fn, buf, sizeof buf));
        mo_json_kv_uint64(w, "calls", site->calls);
        mo_json_kv_double(w, "call_s", (double)site->call_ticks * p->cfg.s_per_tick);
        uint64_t frame[MOP_SITE_FRAMES];
        int nframes = names->frames ? names->frames(site->addr, frame, MOP_SITE_FRAMES) : 0;
        if (nframes > 0) { /* --callsite-depth: the chain, innermost first */
            mo_json_key(w, "frames");
            mo_json_begin_array(w);
            for (int k = 0; k < nframes; k++) {
                snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)frame[k]);
                mo_json_string(w, buf);
            }
            mo_json_end_array(w);
        }
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    mo_json_key(w, "pairs");
    mo_json_begin_array(w);
    for (uint16_t k = 0; k < s->npair; k++) {
        mo_json_begin_object(w);
        mo_json_kv_uint64(w, "post", s->pair[k].post);
        mo_json_kv_uint64(w, "end", s->pair[k].end);
        mop_acc_json(w, &s->pair[k].x);
        mo_json_kv_uint64(w, "polled", s->pair[k].polled);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
}

void mop_profile_json(mo_json *w, const mop_process *p, const mop_names *names)
{
    double spt = p->cfg.s_per_tick;
    char buf[32];
    mo_json_begin_object(w);

    mo_json_key(w, "totals");
    mo_json_begin_object(w);
    mop_acc_json(w, &p->total);
    mo_json_kv_double(w, "comp_s", (double)p->comp_ticks * spt);
    mo_json_kv_double(w, "call_s", (double)p->call_ticks * spt);
    mo_json_end_object(w);

    mo_json_key(w, "cases");
    mo_json_begin_object(w);
    for (int c = 0; c < MOP_NCASES; c++)
        mo_json_kv_uint64(w, mop_case_name((mop_case)c), p->cases[c]);
    mo_json_end_object(w);

    mo_json_key(w, "by_bin");
    mo_json_begin_array(w);
    for (size_t i = 0; i < mop_process_nbins(p); i++) {
        if (p->bins[i].transfers == 0)
            continue;
        mo_json_begin_object(w);
        mop_bin_range_json(w, p, i);
        mop_acc_json(w, &p->bins[i]);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);

    /* Sorted by name so documents compare across runs and ranks. */
    size_t order[MOP_MAX_FN], n = 0;
    for (size_t i = 0; i < MOP_MAX_FN; i++)
        if (p->fns[i].calls || p->fns[i].x.transfers)
            order[n++] = i;
    mop_sort_by_name(order, n, names->fn, names->nfn);
    mo_json_key(w, "by_function");
    mo_json_begin_array(w);
    for (size_t k = 0; k < n; k++) {
        const mop_fn_acc *f = &p->fns[order[k]];
        mo_json_begin_object(w);
        mo_json_kv_string(w, "fn", mop_name(names->fn, names->nfn, order[k], buf, sizeof buf));
        mo_json_kv_uint64(w, "calls", f->calls);
        mo_json_kv_double(w, "call_s", (double)f->call_ticks * spt);
        mop_acc_json(w, &f->x);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    /* in the same order: every flagged transfer is one of its function's */
    mop_checks_json(w, p, names, order, n);

    n = 0;
    for (size_t i = 0; i < MOP_MAX_REGIONS; i++) {
        const mop_region_acc *r = &p->regions[i];
        if (r->x.transfers || r->comp_ticks || r->call_ticks)
            order[n++] = i;
    }
    mop_sort_by_name(order, n, names->region, names->nregion);
    mo_json_key(w, "by_region");
    mo_json_begin_array(w);
    for (size_t k = 0; k < n; k++) {
        const mop_region_acc *r = &p->regions[order[k]];
        mo_json_begin_object(w);
        mo_json_kv_string(w, "region",
                          mop_name(names->region, names->nregion, order[k], buf, sizeof buf));
        mo_json_kv_double(w, "comp_s", (double)r->comp_ticks * spt);
        mo_json_kv_double(w, "call_s", (double)r->call_ticks * spt);
        mop_acc_json(w, &r->x);
        mo_json_end_object(w);
    }
    mo_json_end_array(w);

    mop_sites_json(w, p, names);

    mo_json_key(w, "counters");
    mo_json_begin_object(w);
#define MOP_COUNTER_JSON(name) mo_json_kv_uint64(w, #name, p->counters.name);
    MOP_COUNTERS(MOP_COUNTER_JSON)
#undef MOP_COUNTER_JSON
    mo_json_kv_uint64(w, "outstanding_peak", (uint64_t)p->reqs.peak);
    mo_json_end_object(w);

    mo_json_end_object(w);
}
