/* mop_process.h - the data-processing module (Shet et al., §2.4.2): consumes
 * one thread's events in order and keeps the per-process measures up to date:
 * the five measures of §2.2 plus non-overlapped time, broken down by size
 * bin, MPI function and region, and a counter for everything it could not
 * attribute. Pure C, no MPI; the runtime and the replay driver both use it. */
#ifndef MOP_PROCESS_H
#define MOP_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mop_acc.h"
#include "mop_bounds.h"
#include "mop_checks.h"
#include "mop_event.h"
#include "mop_limits.h"
#include "mop_requests.h"
#include "mop_sites.h"
#include "mop_xfer_table.h"

typedef struct mop_fn_acc {
    mop_acc x;
    uint64_t calls;
    uint64_t call_ticks;
} mop_fn_acc;

typedef struct mop_region_acc {
    mop_acc x;
    uint64_t comp_ticks, call_ticks;
} mop_region_acc;

/* Everything counted rather than attributed; see docs/profiler.md. */
#define MOP_COUNTERS(X)        \
    X(events)                  \
    X(flushes)                 \
    X(idle_steps)              \
    X(pick_epochs)             \
    X(pick_trials)             \
    X(pick_idle_epochs)        \
    X(nested_calls)            \
    X(unmonitored_transfers)   \
    X(handle_reused)           \
    X(handle_shared)           \
    X(proc_null)               \
    X(cancelled)               \
    X(start_unknown)           \
    X(freed_active)            \
    X(free_unknown)            \
    X(inactive_completions)    \
    X(grequest_completions)    \
    X(unfinished)              \
    X(region_mismatch)         \
    X(region_overflow)         \
    X(table_extrapolated)      \
    X(inter_node_transfers)    \
    X(inter_as_intra)          /* derived at output (mop_runtime.c) */ \
    X(coll_size_extrapolated)  \
    X(coll_nb_as_blocking)     \
    X(coll_uncalibrated)       \
    X(xfer_exceeds_span)       \
    X(xfer_exceeds_call)       \
    X(out_of_memory)           \
    X(rma_other_thread)        \
    X(rma_freed_pending)       \
    X(cross_thread_completions) \
    X(cross_thread_untracked)  \
    X(site_overflow)           \
    X(pair_overflow)

typedef struct mop_counters {
#define MOP_COUNTER_FIELD(name) uint64_t name;
    MOP_COUNTERS(MOP_COUNTER_FIELD)
#undef MOP_COUNTER_FIELD
} mop_counters;

/* One closed transfer, for observers (replay, traces). */
typedef struct mop_transfer {
    bool has_key;
    uint64_t key;
    int64_t bytes;
    mop_kind kind;
    uint16_t fn, region;
    uint16_t post_site, end_site; /* mop_sites ids (MOP_SITE_UNKNOWN: not seen) */
    bool polled;     /* an MPI_Test-family call came between its post and completion */
    int32_t peer;    /* the event's arg: peer world rank (-1 unknown), or a collective's comm size */
    /* Ticks of XFER_BEGIN and XFER_END, 0 where not observed (begin-only: no
     * end; end-only: no begin); an in-call transfer has its call's enter as both. */
    uint64_t t_begin, t_end;
    /* The part of b.xfer_s its call must hold (the in-call check): 0 for all of
     * it, else the sender's or receiver's overhead of an eager blocking send or
     * receive (docs/method.md, "The transfer model's parts"). */
    double need_s;
    mop_bounds b;
} mop_transfer;

/* What a function's in-call point-to-point transfers are in the transfer
 * model's parts (mop_process_config.part_fns). */
enum {
    MOP_PART_WHOLE = 0,     /* the call holds the whole transfer */
    MOP_PART_EAGER_SEND = 1, /* MPI_Send, Bsend, Rsend: o_s in the call, the rest after it */
    MOP_PART_RECV = 2,      /* MPI_Recv, Mrecv: o_r in the call when the data had arrived */
};

/* An eager blocking send's tail: the part of its transfer after its call
 * returned, len ticks from the call's exit; accounted when it has ended, with
 * the computation inside it as its overlap (docs/method.md). */
typedef struct mop_tail {
    mop_transfer tr;
    size_t bin;
    uint64_t len;      /* ticks */
    uint64_t start;    /* the call's exit; 0 while the call is open */
    uint64_t comp;     /* computation ticks inside [start, start + len] so far */
} mop_tail;

#define MOP_MAX_TAILS 16

typedef void (*mop_transfer_fn)(void *ctx, const mop_transfer *tr);

/* The outermost calls since the last flush whose sums go to one set of cells
 * (function, region, call site): their number and times are summed here and
 * added to the cells (eight sums: the call and computation times, the
 * function's calls and time, the region's call and computation time, the
 * site's calls and time) when the next call goes to other cells or the batch ends
 * (mop_process_events), instead of into each on every call. Integer sums, so
 * the totals are the same however they are grouped, and a caller never sees
 * a batch's sums here. The key is what picks the cells: the ENTER's function
 * id and call-site address, as the last outermost call had them; a region
 * event clears it. */
#define MOP_RUN_NONE UINT32_MAX
typedef struct mop_call_run {
    uint32_t id;     /* the ENTER's function id, MOP_RUN_NONE: no key */
    uint64_t addr;   /* its call-site address (the ENTER's key) */
    uint16_t fn, region, site; /* the cells */
    uint8_t test_inc; /* 1: the function is of the Test family (cfg.test_fns, call sites on) */
    uint64_t calls, call_ticks, comp_ticks; /* monitored calls only */
} mop_call_run;

/* Transfers that go to one set of breakdown cells (size bin, function,
 * region, call-site pair), their bounds summed here and added to the cells
 * and the total when the run gives way to other cells, or before the cells
 * are read (mop_process_settle), instead of into five cells on every
 * transfer: a message-rate loop's transfers mostly share their cells. A
 * transfer to other cells goes to them directly, and takes the run only when
 * the one before it went to its cells directly too (mop_record_bounds): of
 * transfers that take turns (a Waitall completing receives and sends posted
 * in pairs) one kind keeps the run, where giving way on every change cost
 * 3.8 ns a transfer more than no run at all (mop_engine_cost). Not flushed at
 * a batch's end: the sums are floating-point, so their grouping must depend
 * only on the event stream, never on how it was cut into batches
 * (tests/test_bounds_property.py: plain and batched streams give the same
 * document, number for number). */
typedef struct mop_xfer_run {
    uint64_t key;   /* mop_xfer_run_key of the cells; any value while empty */
    mop_acc x;      /* x.transfers == 0: empty */
    uint64_t polled; /* of them, polled between post and completion */
    bool missed;    /* the transfer before went to its cells directly */
} mop_xfer_run;

typedef struct mop_process_config {
    const mop_xfer_table *table;
    double s_per_tick;
    const uint64_t *bin_edges; /* NULL: powers of two */
    size_t nbin_edges;
    const uint8_t *peer_remote; /* per world rank: 1 = other node; NULL: all one node */
    int npeers;
    bool callsites;              /* keep the call-site tables (mop_sites.h) */
    /* Per function id, 1 for the MPI_Test family (Test, Testall, Testany,
     * Testsome): the pairs count the transfers polled between post and
     * completion. NULL: none known (replays). */
    const uint8_t *test_fns;
    /* Per function id, a MOP_PART_* (NULL: all whole, as without parts). */
    const uint8_t *part_fns;
    mop_transfer_fn on_transfer; /* optional */
    void *on_transfer_ctx;
    /* The request table's choices; NULL: MOP_REQUESTS_TUNED (mop_requests.h). */
    const mop_requests_tuning *reqs_tuning;
    /* Events are counted, not processed (MPI_OVERLAP_PROCESS=0): what the
     * wrappers and the queue cost without the engine, measured beside the
     * whole library by bench profiler-overhead. Nothing is measured then. */
    bool count_only;
    /* Only the last table lookup is kept, not the one before it too
     * (MPI_OVERLAP_NO_OPT=lookup: the plain way, to measure against). */
    bool one_lookup;
    /* Every transfer's bounds go to its five cells at once, never through a
     * run (MPI_OVERLAP_NO_OPT=runs: the plain way; read only when a transfer
     * misses the run, which then every transfer does). */
    bool no_runs;
} mop_process_config;

/* A table lookup, keyed on the size and the curve (class for point-to-point,
 * or collective op and communicator size), with what was derived from it. */
typedef struct mop_lookup {
    int64_t bytes; /* -1: none yet */
    int cls;
    int coll_op;       /* -1: point-to-point */
    int32_t comm_size; /* collectives only; 0 otherwise */
    double xfer_s;
    unsigned flags;    /* MOP_XFER_* of that lookup */
    uint8_t bin;       /* the size bin of bytes (MOP_MAX_BINS <= 256) */
    /* The transfer model's parts at a point-to-point size, looked up when
     * first needed (mop_last_eager): MOP_PARTS_*. */
    uint8_t parts;
    double o_s, o_r;
} mop_lookup;

typedef struct mop_process {
    mop_process_config cfg;
    mop_clock clock;
    mop_requests reqs;
    bool monitoring;
    bool call_monitored;  /* monitoring at the open call's enter */
    /* The open outermost call's cells (function, call site, region, Test
     * flag) and the sums held for the run of calls that share them. */
    mop_call_run run;
    mop_xfer_run xrun; /* transfers' sums held for their cells */
    uint16_t test_calls;  /* outermost Test-family calls so far, mod 2^16 (cfg.test_fns) */
    /* cfg.test_fns copied (all 0 without it): one load per call, no test of
     * the pointer. */
    uint8_t fn_is_test[MOP_MAX_FN];
    /* Per function, the address its last outermost call came from and that site:
     * a function is mostly called from one place at a time, so most calls skip
     * the site table's hash (measured: docs/profiler.md, "Memory and cost"). */
    uint64_t fn_site_addr[MOP_MAX_FN];
    uint16_t fn_site_id[MOP_MAX_FN];
    uint16_t region_stack[MOP_REGION_DEPTH];
    int region_depth;     /* may exceed MOP_REGION_DEPTH: overflowed levels count */
    /* the five measures + breakdowns */
    mop_acc total;
    uint64_t comp_ticks, call_ticks;
    uint64_t cases[MOP_NCASES];
    mop_acc bins[MOP_MAX_BINS];
    mop_fn_acc fns[MOP_MAX_FN];
    mop_region_acc regions[MOP_MAX_REGIONS];
    mop_sites sites;
    mop_counters counters;
    mop_checks checks; /* the checks on the bounds (mop_checks.h) */
    /* Eager blocking sends' tails still running (mop_tail). */
    mop_tail tails[MOP_MAX_TAILS];
    int ntails;
    /* When the thread ended (0: running); see mop_process_thread_exit. */
    uint64_t t_thread_end;
    /* The time of the latest ENTER (nested ones too): a POST event's begin
     * time, since its ENTER is the event just before it (mop_event.h). */
    uint64_t t_last_enter;
    /* The last table lookup: consecutive transfers mostly have one size. */
    mop_lookup last;
    /* The last lookup was a one-node point-to-point one with no counter to
     * bump: a transfer of last.bytes on one node needs none (mop_xfer_time). */
    bool last_plain;
    /* The lookup before the last, for a size that comes back: a message-rate
     * loop alternates its messages' size with its acknowledgement's, and each
     * came back to the table's search twice a window (mop_xfer_time_slow). */
    mop_lookup prev;
} mop_process;

enum { MOP_PARTS_UNKNOWN = 0, MOP_PARTS_EAGER = 1, MOP_PARTS_NONE = 2 };

/* Returns 0, or -1 when out of memory. The config's pointers must outlive p. */
int mop_process_init(mop_process *p, const mop_process_config *cfg);
void mop_process_free(mop_process *p);
/* dst (uninitialized) becomes an independent copy of src, to be processed on
 * and freed on its own: a snapshot of a thread that goes on. Returns 0, or -1
 * when out of memory (dst then holds nothing to free). */
int mop_process_copy(mop_process *dst, const mop_process *src);

void mop_process_event(mop_process *p, const mop_event *e);
void mop_process_events(mop_process *p, const mop_event *e, size_t n);

/* End of the program: open transfers become begin-only, and every sum is in
 * its cell (mop_process_settle). */
void mop_process_finish(mop_process *p);

/* The transfers' sums still held for their cells (mop_xfer_run) go to them:
 * the cells, the total and the call-site pairs are whole only after this (or
 * mop_process_finish). It fixes the grouping of floating-point sums, so a
 * process that goes on after it may differ in the last bits from one that did
 * not: to read one that goes on, settle a copy (mop_process_copy), or merge it
 * (mop_process_merge adds src's held sums to dst's cells, src unchanged). */
void mop_process_settle(mop_process *p);

/* The thread whose events p processes ended at t: for completions other
 * threads report later, it computed nothing after t. */
void mop_process_thread_exit(mop_process *p, uint64_t t);

/* Adds src's measures into dst (threads of one rank), its held transfers'
 * sums included, and settles dst; same config. */
void mop_process_merge(mop_process *dst, const mop_process *src);

size_t mop_process_nbins(const mop_process *p);
/* [lo, hi) of bin i; hi = UINT64_MAX for the last. */
void mop_process_bin_range(const mop_process *p, size_t i, uint64_t *lo, uint64_t *hi);

#endif
