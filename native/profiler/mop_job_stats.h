/* mop_job_stats.h - the job's statistics, reduced across ranks inside the
 * job (docs/profiler.md, "Many ranks"): one rank's measures made into cells
 * that merge, two subtrees' statistics merged, sent as bytes and written as
 * JSON (schema mpi-overlap/profile-stats). Pure C, no MPI: mop_reduce.c moves
 * them up the tree.
 *
 * Every double is the number the rank's own document prints (seconds from
 * ticks times that rank's s_per_tick, non-overlap as max(0, xfer - max)), so
 * the statistics are sums of the documents' numbers. Floating-point sums
 * depend on their order: the order is the binomial tree of mop_reduce.h, and
 * the analysis repeats it over the rank documents (profiling/job_stats.py),
 * so both give the same bits (tests/test_profile_job_stats.py). */
#ifndef MOP_JOB_STATS_H
#define MOP_JOB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mop_process.h"
#include "mop_profile_json.h"

/* Ranks listed for a counter or a flagged entry: how many, and the lowest
 * MOP_JS_FIRST of them. Subtrees are contiguous rank ranges, the lower one
 * merged first, so a merge appends and cuts. */
#define MOP_JS_FIRST 16
typedef struct mop_jranks {
    uint64_t n;
    int64_t first[MOP_JS_FIRST];
} mop_jranks;

/* The number of counters (mop_process.h's MOP_COUNTERS), plus outstanding_peak. */
#define MOP_JS_ONE(name) +1
enum { MOP_JS_NCOUNTERS = 0 MOP_COUNTERS(MOP_JS_ONE) + 1 };
#undef MOP_JS_ONE

/* One ranking entry summed over ranks: a size bin, a function, a region; or
 * the transfers one check flagged in a function or bin (transfers, xfer_s,
 * excess_s and who). */
typedef struct mop_jcell {
    uint64_t transfers;
    double xfer_s, min_s, max_s, nonoverlap_s;
    uint64_t calls;       /* functions */
    double comp_s;        /* regions */
    double call_s;        /* functions and regions */
    uint64_t ranks;       /* ranks that have the entry */
    int64_t worst_rank;   /* the rank that lost most non-overlapped time here (lowest on ties) */
    double worst_s;       /* that rank's non-overlapped time here */
    double excess_s;      /* flagged: how far the transfers exceed their intervals */
    mop_jranks who;       /* flagged: the ranks */
} mop_jcell;

/* One check's part of the checks on the bounds (mop_checks.h), summed: the
 * fields of a rank document's checks.in_call and checks.across_calls. */
typedef struct mop_jcheck_part {
    uint64_t transfers, calls, calls_beyond, unchecked, flagged_transfers;
    double xfer_s, call_s, longest_s, beyond_s, flagged_xfer_s, excess_s;
} mop_jcheck_part;

/* A name-keyed cell: entries are kept sorted by name, so two lists merge in
 * one pass and every rank's ids (regions are interned per process) drop out. */
typedef struct mop_jentry {
    char *name;
    mop_jcell c;
} mop_jentry;

typedef struct mop_jlist {
    mop_jentry *e;
    size_t n;
} mop_jlist;

/* The name-keyed tables. A call site is named by where it is in its object,
 * "<path>+0x<file offset>" (names->place; a chain's frames joined by " < ",
 * innermost first; "" for the unknown site), then a tab and the MPI function
 * called there: the same for every rank that runs the object, whatever ASLR
 * did. A pair is its two sites' names joined by MOP_JS_PAIR_SEP. */
typedef enum mop_js_list_id {
    MOP_JS_FNS,      /* by function name */
    MOP_JS_REGIONS,  /* by region name */
    MOP_JS_FLAG_FNS, /* flagged by the checks: "<function>\t<check>" */
    MOP_JS_SITES,    /* calls and call time per call site */
    MOP_JS_PAIRS,    /* transfers per (posting site, completing site); calls: polled */
    MOP_JS_POSTS,    /* the pairs summed per posting site */
    MOP_JS_ENDS,     /* and per completing site */
    MOP_JS_NLISTS
} mop_js_list_id;
#define MOP_JS_PAIR_SEP '\x1f'

typedef struct mop_job_stats {
    uint64_t ranks;           /* ranks merged */
    uint64_t ranks_with_data; /* of those, not disabled */
    mop_jcell total;          /* comp_s and call_s too */
    uint64_t cases[MOP_NCASES];
    mop_counters counters;    /* summed */
    uint64_t outstanding_peak; /* the largest */
    mop_jranks case_who[MOP_NCASES];           /* ranks with the case non-zero */
    mop_jranks counter_who[MOP_JS_NCOUNTERS];  /* ranks with the counter non-zero */
    mop_jcheck_part check[MOP_NCHECKS];        /* the checks on the bounds */
    double beyond_s;                           /* checks.beyond_s, summed */
    mop_jcell flag_bins[MOP_MAX_BINS][MOP_NCHECKS]; /* flagged, by bin and check */
    size_t nbins;             /* bins of the job's configuration (same on every rank) */
    uint64_t bin_lo[MOP_MAX_BINS], bin_hi[MOP_MAX_BINS]; /* hi UINT64_MAX: open */
    mop_jcell bins[MOP_MAX_BINS];
    mop_jlist list[MOP_JS_NLISTS]; /* the name-keyed tables (mop_js_list_id) */
    char disabled_reason[256]; /* why the lowest disabled rank is ("": none is) */
} mop_job_stats;

/* One rank's totals, for the per-rank columns rank 0 gathers. */
typedef struct mop_job_row {
    int64_t rank;
    int64_t disabled;
    uint64_t transfers;
    double xfer_s, min_s, max_s, nonoverlap_s, comp_s, call_s, wall_s;
    /* computation as CPU time (mop_cpu.h; set by the runtime, NaN: not measured): the
     * measured pieces' time off the CPU, and the thread of MPI_Init's run-queue wait */
    double comp_off_cpu_s, run_delay_s;
    /* the rank's checks on the bounds (analysis/profile_checks.py's per-rank entry) */
    uint64_t in_call_calls, in_call_calls_beyond, flagged_transfers;
    double in_call_xfer_s, in_call_call_s, in_call_longest_s, flagged_xfer_s, beyond_s;
    /* what the headline and the advice name of a rank (analysis/headline.py, advice.py):
     * its host, the function with the most call time (ties: the last name; "" none), and
     * the known call site with the most (the first on ties), by the FNV-1a 64 hash of its
     * name in the statistics' site table (0: none) */
    char host[64];
    char top_fn[48];
    double top_fn_call_s;
    uint64_t busiest_site;
    double busiest_site_call_s;
    uint64_t nbins; /* its bins with transfers (mop_job_bins_of_rank), sent after the rows */
} mop_job_row;

/* One size bin of one rank with transfers, for the per-rank columns by bin. */
typedef struct mop_job_bin {
    uint64_t bin; /* index in the job's bins */
    uint64_t transfers;
    double xfer_s, min_s, max_s;
} mop_job_bin;

/* This rank's statistics from its aggregated measures (the numbers of its
 * document); disabled: none, but the rank is counted, with `reason` (why it is
 * disabled, as its document says). Returns 0, or -1 when
 * out of memory (s then holds nothing to free). */
int mop_job_stats_of_rank(mop_job_stats *s, const mop_process *p, const mop_names *names,
                          int rank, bool disabled, const char *reason);
void mop_job_row_of_rank(mop_job_row *row, const mop_process *p, const mop_names *names,
                         int rank, bool disabled, double wall_s, const char *host);
/* The rank's bins with transfers into bins (room for MOP_MAX_BINS), by
 * ascending index; returns how many. */
int mop_job_bins_of_rank(mop_job_bin *bins, const mop_process *p, bool disabled);

/* dst += src, src being the next ranks' subtree. Returns 0, or -1 when out
 * of memory (dst is then left as it was). */
int mop_job_stats_merge(mop_job_stats *dst, const mop_job_stats *src);
void mop_job_stats_free(mop_job_stats *s);

/* As bytes for a message between ranks of one job (same ABI), and back.
 * pack: malloc'ed buffer in *buf, or -1. unpack: 0, or -1 (short or
 * malformed input, out of memory: s then holds nothing to free). */
int mop_job_stats_pack(const mop_job_stats *s, unsigned char **buf, size_t *len);
int mop_job_stats_unpack(mop_job_stats *s, const unsigned char *buf, size_t len);

/* The statistics of the whole job and every rank's row (rows[r] for rank r). */
typedef struct mop_job_stats_info {
    const mop_job_row *rows;
    int nrows;
    const mop_job_bin *bins;  /* every rank's bins with transfers, rank after rank (rows' nbins) */
    const char *library_version; /* rank 0's MPI */
    double reduce_s;         /* the reduction's wall time on rank 0 */
    uint64_t largest_message; /* bytes of the largest subtree message rank 0 took */
} mop_job_stats_info;

/* The lists' shared handling, for mop_job_stats*.c only: free, append a copy
 * of name with its cell (*cap: the room, grown as needed; 0 or -1), and
 * whether every list is in name order, each name once (what merging needs). */
void mop_jlist_free(mop_jlist *l);
int mop_jlist_push(mop_jlist *l, size_t *cap, const char *name, size_t len, const mop_jcell *c);
bool mop_js_sorted(const mop_job_stats *s);

/* Writes the object (schema mpi-overlap/profile-stats v1). Returns
 * mo_json_finish's result, or -1 with errno ENOMEM before writing anything. */
int mop_job_stats_json(FILE *f, const mop_job_stats *s, const mop_job_stats_info *info);

#endif
