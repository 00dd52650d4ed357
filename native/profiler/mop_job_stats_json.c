/* mop_job_stats_json.c - the job's statistics as profile.stats.json (schema
 * mpi-overlap/profile-stats v1): the job's tables, the per-rank rows as
 * columns (one line each) and the ranks' size bins; see mop_job_stats.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mop_job_stats.h"

static const char *const mop_js_counter_names[MOP_JS_NCOUNTERS] = {
#define MOP_JS_NAME(name) #name,
    MOP_COUNTERS(MOP_JS_NAME)
#undef MOP_JS_NAME
    "outstanding_peak",
};

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
    X(comp_off_cpu_s, double)       \
    X(run_delay_s, double)          \
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

/* An array under `key` on one line (a number a line would be 30 bytes a
 * rank and column): begin returns the writer's setting, for end. */
static bool mop_js_line_begin(mo_json *w, const char *key)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    return mo_json_inline(w, true);
}

static void mop_js_line_end(mo_json *w, bool was)
{
    mo_json_end_array(w);
    mo_json_inline(w, was);
}

static void mop_js_rows(mo_json *w, const mop_job_stats_info *info)
{
    mo_json_key(w, "rank_rows");
    mo_json_begin_object(w);
    bool was = mop_js_line_begin(w, "rank");
    for (int r = 0; r < info->nrows; r++)
        mo_json_int64(w, info->rows[r].rank);
    mop_js_line_end(w, was);
    was = mop_js_line_begin(w, "disabled");
    for (int r = 0; r < info->nrows; r++)
        mo_json_bool(w, info->rows[r].disabled != 0);
    mop_js_line_end(w, was);
#define MOP_JS_COLUMN(field, kind)              \
    was = mop_js_line_begin(w, #field);         \
    for (int r = 0; r < info->nrows; r++)       \
        mo_json_##kind(w, info->rows[r].field); \
    mop_js_line_end(w, was);
    MOP_JS_ROW_COLUMNS(MOP_JS_COLUMN)
    MOP_JS_COLUMN(host, string)
    MOP_JS_COLUMN(top_fn, string)
#undef MOP_JS_COLUMN
    was = mop_js_line_begin(w, "busiest_site"); /* hex: JSON numbers lose bits above 2^53 */
    for (int r = 0; r < info->nrows; r++) {
        char hex[24];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)info->rows[r].busiest_site);
        mo_json_string(w, info->rows[r].busiest_site ? hex : NULL);
    }
    mop_js_line_end(w, was);
    mo_json_end_object(w);
}

/* A bin's "lo" and "hi" (null: the open last bin). */
static void mop_js_bin_range(mo_json *w, const mop_job_stats *s, size_t i)
{
    mo_json_kv_uint64(w, "lo", s->bin_lo[i]);
    mo_json_key(w, "hi");
    if (s->bin_hi[i] == UINT64_MAX)
        mo_json_null(w);
    else
        mo_json_uint64(w, s->bin_hi[i]);
}

/* Room to walk every rank's bins at once: per rank, its next bin not yet
 * written (each rank's are by ascending index, as the job's bins are taken),
 * and the one it has of the bin being written, if any. */
typedef struct mop_js_cursor {
    size_t next, end;
    const mop_job_bin *here;
} mop_js_cursor;

/* Every rank's bins with transfers, by the job's bin: per bin, one column per
 * measure over the ranks (0 where a rank had none of that size). */
static void mop_js_rank_bins(mo_json *w, const mop_job_stats *s, const mop_job_stats_info *info,
                             mop_js_cursor *cur)
{
    mo_json_key(w, "rank_bins");
    mo_json_begin_array(w);
    size_t at = 0;
    for (int r = 0; cur && r < info->nrows; r++) {
        cur[r] = (mop_js_cursor){at, at + info->rows[r].nbins, NULL};
        at = cur[r].end;
    }
    for (size_t i = 0; cur && i < s->nbins; i++) {
        if (!s->bins[i].ranks)
            continue;
        for (int r = 0; r < info->nrows; r++) {
            mop_js_cursor *c = &cur[r];
            c->here = c->next < c->end && info->bins[c->next].bin == i ? &info->bins[c->next++]
                                                                       : NULL;
        }
        mo_json_begin_object(w);
        mop_js_bin_range(w, s, i);
        for (int m = 0; m < 4; m++) {
            static const char *const keys[] = {"transfers", "xfer_s", "min_s", "max_s"};
            bool was = mop_js_line_begin(w, keys[m]);
            for (int r = 0; r < info->nrows; r++) {
                const mop_job_bin *b = cur[r].here;
                if (m == 0)
                    mo_json_uint64(w, b ? b->transfers : 0);
                else
                    mo_json_double(w, !b ? 0.0 : m == 1 ? b->xfer_s : m == 2 ? b->min_s
                                                                         : b->max_s);
            }
            mop_js_line_end(w, was);
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
    bool was = mop_js_line_begin(w, "first");
    for (uint64_t i = 0; i < who->n && i < MOP_JS_FIRST; i++)
        mo_json_int64(w, who->first[i]);
    mop_js_line_end(w, was);
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
            mop_js_bin_range(w, s, i);
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
    mop_js_cursor *cur = NULL; /* for the ranks' bins, taken before anything is written */
    if (info->bins && info->nrows > 0 &&
        !(cur = malloc((size_t)info->nrows * sizeof *cur))) {
        errno = ENOMEM;
        return -1;
    }
    mo_json w;
    mo_json_init(&w, f);
    mo_json_begin_document(&w, "mpi-overlap/profile-stats", 1);
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
        mop_js_bin_range(&w, s, i);
        mop_js_measures(&w, c);
        mop_js_ranks(&w, c);
        mo_json_end_object(&w);
    }
    mo_json_end_array(&w);
    mop_js_list(&w, "by_function", "fn", &s->list[MOP_JS_FNS], true);
    mop_js_list(&w, "by_region", "region", &s->list[MOP_JS_REGIONS], false);
    mop_js_sites(&w, s);
    mop_js_rank_bins(&w, s, info, cur);
    free(cur);
    mop_js_rows(&w, info);
    mo_json_end_object(&w);
    return mo_json_finish(&w);
}
