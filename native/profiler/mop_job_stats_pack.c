/* mop_job_stats_pack.c - the job's statistics as the bytes of a message
 * between ranks of one job (same ABI: the structures as they are in memory,
 * the lists and the bins with data only), and back, refusing whatever is cut,
 * damaged or not in name order; see mop_job_stats.h. */
#include <stdlib.h>
#include <string.h>

#include "mop_job_stats.h"

#define MOP_JS_MAGIC 0x4a504f4du /* "MOPJ" */
#define MOP_JS_VERSION 1u

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
