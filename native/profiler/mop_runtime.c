/* mop_runtime.c - the profiler's life cycle inside one MPI process: set-up
 * after MPI_Init (table, fingerprints, bins, clock, node layout), per-thread
 * state, processing full queues, and writing the rank's profile document at
 * MPI_Finalize - or, marked incomplete, at exit without MPI_Finalize, on a
 * fatal signal or at MPI_Abort, and periodically while running (a thread of
 * its own) so that even a killed program leaves its last snapshot. All
 * process-wide mutable state of the profiler lives in this file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mop_hot.h"
#include "mop_runtime.h"
#include "timer.h"

#include <errno.h>
#if defined(__GLIBC__)
#include <execinfo.h>
#endif
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "fingerprint.h"
#include "json.h"
#include "mop_fn_ids.h"
#include "mop_gather.h"
#include "mop_idle_pick.h"
#include "mop_output.h"
#include "mop_places.h"
#include "mop_process.h"
#include "mop_reduce.h"
#include "mop_region_names.h"
#include "mop_trace.h"
#include "mop_peers.h"
#include "mop_xfer_table.h"

MOP_HOT_FLAG volatile int mop_active;
MOP_HOT_FLAG int mop_xt_on;
MOP_HOT_FLAG int mop_post_fusion;
MOP_HOT_FLAG int mop_idle_waits;
_Thread_local mop_thread *mop_tls __attribute__((tls_model("initial-exec")));
/* Set while this thread holds the process lock or its own thread lock, so a
 * fatal signal arriving then does not wait for a lock its own thread holds. */
static _Thread_local volatile sig_atomic_t mop_in_lock __attribute__((tls_model("initial-exec")));

typedef struct mop_thread_private {
    pthread_mutex_t lock; /* taken by the owner to process, by others to read */
    mop_process proc;
    struct mop_thread_private *next;
    mop_thread *th;
    bool final_done;      /* the final write-out processed this thread's queue */
    /* The processing path's trials (MPI_OVERLAP_IDLE=auto): events processed
     * since the last epoch ended. */
    mop_idle_pick pick;
    uint32_t pick_events;
} mop_thread_private;

/* Where a thread's queue is processed (MPI_OVERLAP_IDLE, read at MPI_Init):
 * when full only, also while calls wait (mop_idle.h), or picked by each
 * thread's trials (mop_idle_pick.h). */
typedef enum { MOP_IDLE_NEVER, MOP_IDLE_ALWAYS, MOP_IDLE_AUTO } mop_idle_mode;
static mop_idle_mode mop_idle_setting;

/* Its destructor processes an exiting thread's queue (mop_thread_gone). */
static pthread_key_t mop_thread_key;

/* ---- process-wide state ------------------------------------------------ */
static struct {
    pthread_mutex_t lock;   /* threads list, output */
    mop_thread_private *threads;
    mop_xfer_table table;
    mop_process_config cfg;
    uint64_t bin_edges[MOP_MAX_BIN_EDGES];
    uint8_t *peer_remote;
    int rank, size, nodes;
    char outdir[1024];
    char table_path[1024];
    bool table_forced;
    double s_per_tick;
    double clock_read_ns;   /* what one mop_now() costs here (mop_clock_read_cost) */
    /* The library's own time once per launch (issue 40: the cost's parts): in
     * MPI_Init after PMPI_Init (table, clock, call sites, node layout), and in
     * MPI_Finalize from its entry to the final document (the last queue's
     * processing, the mappings). stop_ns: the monotonic time MPI_Finalize
     * entered; 0 before. */
    double start_s;
    uint64_t stop_ns;
    /* Computation as CPU time (mop_cpu.h): one read of the thread's CPU clock, the
     * threshold it sets (0: off), and the thread of MPI_Init's scheduler figures
     * at MPI_Init (sched_ok: the kernel gives them). */
    double cpu_read_ns, cpu_min_s;
    int main_tid;
    bool sched_ok;
    uint64_t sched_cpu0_ns, sched_delay0_ns;
    uint64_t t_start;
    mop_clock_anchor anchor_start;
    double snapshot_interval_s;
    bool written_final;
    bool write_failed;      /* a write failed and was reported (only the first is) */
    bool rank_file_written; /* profile.rank-N.json is on disk (a snapshot or more) */
    bool disabled;          /* profiling is off on this rank: its document says why */
    bool keep_rank_files;   /* besides the job file (MPI_OVERLAP_PER_RANK, mop_gather.h) */
    bool job_file;          /* every rank takes part in the job file's gather */
    /* the job file holds every rank's document (MPI_OVERLAP_JOB_DOCUMENTS; by
     * default for small jobs); otherwise the job's statistics alone stand for
     * them (mop_reduce.h) */
    bool job_documents;
    /* The snapshot thread (mop_watch_*): it waits on watch_wake under
     * watch_lock for snapshot_interval_s, or until watch_stop. */
    pthread_mutex_t watch_lock;
    pthread_cond_t watch_wake;
    pthread_t watch_thread;
    pid_t watch_pid;        /* the process whose thread it is; 0: none running */
    bool watch_stop;
    char status_reason[512];
    char library_version[MPI_MAX_LIBRARY_VERSION_STRING];
} mop_g = {.lock = PTHREAD_MUTEX_INITIALIZER, .watch_lock = PTHREAD_MUTEX_INITIALIZER, .rank = -1};

/* The rank's timeline trace (MPI_OVERLAP_TRACE); processing goes through it. */
static mop_trace mop_trace_g = MOP_TRACE_INITIALIZER;

/* One line on stderr, from one rank. */
__attribute__((format(printf, 1, 2))) static void mop_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpi-overlap: rank %d: ", mop_g.rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- the hot path's choices, switched off for measuring ------------------ */

static mop_requests_tuning mop_reqs_tuning;

/* MPI_OVERLAP_NO_OPT: choices of the hot path switched off, so that bench
 * profiler-overhead can measure each against the plain way on the machine at
 * hand (docs/profiler.md, "Memory and cost"): a comma-separated list of
 * status (received sizes through PMPI_Get_count), load (the request table
 * grows at half full, not a quarter), lookup (the engine keeps its last
 * table lookup only, not the one before it too) and runs (a transfer's bounds
 * go to its cells at once, not through a run: mop_xfer_run). The switches are read here,
 * once, and cost the hot path nothing. Sets the table's tuning; returns whether
 * statuses may be read directly. An unknown word is said and ignored. */
static bool mop_no_opt_setup(void)
{
    mop_reqs_tuning = MOP_REQUESTS_TUNED;
    mop_g.cfg.reqs_tuning = &mop_reqs_tuning;
    const char *list = getenv("MPI_OVERLAP_NO_OPT");
    bool status = true;
    for (const char *w = list; w && *w;) {
        size_t n = strcspn(w, ",");
        if (n == 6 && strncmp(w, "status", n) == 0)
            status = false;
        else if (n == 4 && strncmp(w, "load", n) == 0)
            mop_reqs_tuning.load_shift = 1;
        else if (n == 6 && strncmp(w, "lookup", n) == 0)
            mop_g.cfg.one_lookup = true;
        else if (n == 4 && strncmp(w, "runs", n) == 0)
            mop_g.cfg.no_runs = true;
        else if (n > 0 && mop_g.rank == 0)
            mop_note("MPI_OVERLAP_NO_OPT: '%.*s' is not one of status, load, lookup, runs; ignored", (int)n,
                     w);
        w += n + (w[n] == ',');
    }
    return status;
}

/* MPI_OVERLAP_IDLE: "0" processes the queue only when full, "1" also while
 * calls wait, "auto" lets each thread pick by trials on its own pace
 * (mop_idle_pick.h). Never while a trace is written: its chunks would become a
 * few events each. The default is "0", the plain path, as issue 40 asks where
 * no adaptive rule beats it on every machine measured. A fixed "1" was the
 * default once and cost MPICH 440 ns more a message on a fresh 2-core VM where
 * it had saved 38 on another. "auto" was the default from 2026-12-01: on two
 * such VMs it saved MPICH 25-30 ns a message against "0" and Open MPI 14-16;
 * on a third (2026-12-03) it cost 2-4 ns more than "0" with both MPIs (Open MPI
 * +3.4 [+1.3, +5.6] over 16 pairs), its trials' price where the idle path is
 * dearer and, with Open MPI, where both paths cost about the same. bench
 * profiler-overhead's idle launch, now at "auto", says on every machine what
 * it would give there (docs/profiler.md, "Memory and cost"). */
#define MOP_IDLE_DEFAULT MOP_IDLE_NEVER
static mop_idle_mode mop_idle_mode_of(const char *value, bool tracing)
{
    if (tracing)
        return MOP_IDLE_NEVER;
    if (!value || !*value)
        return MOP_IDLE_DEFAULT;
    if (strcmp(value, "0") == 0)
        return MOP_IDLE_NEVER;
    if (strcmp(value, "1") == 0)
        return MOP_IDLE_ALWAYS;
    if (strcmp(value, "auto") == 0)
        return MOP_IDLE_AUTO;
    if (mop_g.rank == 0)
        mop_note("MPI_OVERLAP_IDLE: '%s' is not one of 0, 1, auto; the default is used", value);
    return MOP_IDLE_DEFAULT;
}

/* ---- clock anchor --------------------------------------------------------- */

/* The profiler's clock against CLOCK_REALTIME, the tightest of a few tries
 * (async-signal-safe: also taken when a fatal signal writes the profile). */
static mop_clock_anchor mop_anchor_now(void)
{
    mop_clock_anchor best = {0, 0.0, 0.0};
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        struct timespec ts;
        uint64_t a = mop_now();
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t b = mop_now();
        if (b - a < best_gap) {
            best_gap = b - a;
            best.ticks = a + (b - a) / 2;
            best.realtime_s = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
        }
    }
    best.uncertainty_s = (double)best_gap * mop_g.s_per_tick / 2;
    return best;
}

/* ---- threads ------------------------------------------------------------- */

/* The record of this thread while paused (mop_pause), with mop_tls cleared. */
static _Thread_local mop_thread *mop_paused __attribute__((tls_model("initial-exec")));

bool mop_pause(mop_thread *th)
{
    if (mop_xt_on) {
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            mop_note("MPI_Pcontrol(%d) pauses only a program without threads in use; taken as "
                     "MPI_Pcontrol(0)", MOP_PCONTROL_PAUSE);
        return false;
    }
    mop_paused = th;
    mop_tls = NULL;
    return true;
}

mop_thread *mop_unpause(void)
{
    mop_thread *th = mop_paused;
    if (th) {
        mop_paused = NULL;
        mop_tls = th;
    }
    return th;
}

mop_thread *mop_thread_attach(void)
{
    if (mop_paused) /* every wrapper of a paused thread comes here: no new record */
        return NULL;
    /* On a cache line, as q is within it: calloc's 16-byte alignment (an mmap'd
     * block's header) put every other 32-byte event across two lines, a split
     * store on every such push. Aligned, the message-rate loop costs 1.7 ns a
     * message less on MPICH (median of 8 pairs, 6 lower) and 0.3 on Open MPI
     * (10 pairs), 2026-12-04. */
    mop_thread *th = NULL;
    if (posix_memalign((void **)&th, MOP_LINE, sizeof *th) != 0)
        th = NULL;
    else
        memset(th, 0, sizeof *th);
    mop_thread_private *pv = calloc(1, sizeof *pv);
    if (!th || !pv || mop_process_init(&pv->proc, &mop_g.cfg) != 0) {
        free(th);
        free(pv);
        return NULL; /* this thread's calls go unobserved */
    }
    pthread_mutex_init(&pv->lock, NULL);
    mop_cpu_init(&th->cpu);
    mop_idle_pick_init(&pv->pick);
    th->idle = mop_idle_setting == MOP_IDLE_ALWAYS;
    pv->th = th;
    th->priv = pv;
    th->xt_id = mop_xt_on ? mop_xt_register(&th->inbox) : 0;
    /* Registration is the one place a new thread takes the process lock. */
    pthread_mutex_lock(&mop_g.lock);
    pv->next = mop_g.threads;
    mop_g.threads = pv;
    pthread_mutex_unlock(&mop_g.lock);
    mop_tls = th;
    pthread_setspecific(mop_thread_key, th);
    return th;
}

/* The events of th's queue not processed yet, q[done, n), and their number;
 * with th's lock held (n is read with acquire: another thread may read it). */
static const mop_event *mop_unprocessed(const mop_thread *th, uint32_t *n)
{
    *n = __atomic_load_n(&th->n, __ATOMIC_ACQUIRE) - th->done;
    return th->q + th->done;
}

/* The queue, all processed, starts over at its head; with th's lock held. */
static void mop_queue_restart(mop_thread *th)
{
    th->flushes++;
    th->done = 0;
    __atomic_store_n(&th->n, 0, __ATOMIC_RELEASE);
}

/* Processes up to `limit` of the queued events into the thread's engine, from
 * where the last processing stopped; once all are processed the queue starts
 * over at its head, which stays in cache. `idle`: a step while the thread waits
 * (counted as one; one that finds nothing, the queue flushed meanwhile by a
 * call made inside the test, is none). With pv->lock held. After the final
 * write-out nothing is processed again (that one took the queue). Returns
 * whether any events remain. */
static bool mop_process_queue(mop_thread_private *pv, uint32_t limit, bool idle)
{
    uint32_t n;
    const mop_event *e = mop_unprocessed(pv->th, &n);
    uint32_t k = n > limit ? limit : n;
    if (!pv->final_done && (k > 0 || !idle)) {
        mop_trace_process(&mop_trace_g, pv->th, &pv->proc, e, k);
        pv->proc.counters.idle_steps += idle;
    }
    if (k < n) {
        pv->th->done += k;
        return true;
    }
    mop_queue_restart(pv->th);
    return false;
}

/* With MPI_OVERLAP_IDLE=auto, each MOP_PICK_EPOCH events the owning thread
 * processed end an epoch of its trials, which set its path (mop_idle_pick.h);
 * with pv->lock held. Counted where the events are processed, not where they
 * are pushed, so the push path pays nothing: the processing lags the pushes
 * by at most a queue on the plain path and by a few events on the idle one. */
static void mop_pick_count(mop_thread_private *pv, uint64_t processed)
{
    pv->pick_events += (uint32_t)processed;
    if (pv->pick_events < MOP_PICK_EPOCH)
        return;
    pv->pick_events -= MOP_PICK_EPOCH;
    pv->th->idle = (uint32_t)mop_idle_pick_epoch(&pv->pick, mop_now());
    pv->proc.counters.pick_epochs = pv->pick.epochs;
    pv->proc.counters.pick_trials = pv->pick.trials;
    pv->proc.counters.pick_idle_epochs = pv->pick.idle_epochs;
}

/* Takes the thread's lock and processes up to `limit` queued events (the
 * owning thread: a full queue, a step while it waits, its exit). */
static bool mop_process_locked(mop_thread *th, uint32_t limit, bool idle)
{
    mop_thread_private *pv = th->priv;
    mop_in_lock = 1;
    pthread_mutex_lock(&pv->lock);
    uint64_t before = pv->proc.counters.events;
    bool more = mop_process_queue(pv, limit, idle);
    if (mop_idle_setting == MOP_IDLE_AUTO)
        mop_pick_count(pv, pv->proc.counters.events - before);
    pthread_mutex_unlock(&pv->lock);
    mop_in_lock = 0;
    return more;
}

bool mop_idle_step(mop_thread *th, uint32_t chunk)
{
    return mop_process_locked(th, chunk, true);
}

void mop_flush(mop_thread *th)
{
    mop_process_locked(th, UINT32_MAX, false);
}

/* ---- requests completed on another thread (mop_xthread.h) ----------------- */

int mop_xt_route(mop_thread *th, mop_event_type type, uint64_t t, uint64_t key, int64_t bytes,
                 int kind, uint32_t ticket)
{
    /* A query (MPI_Request_get_status*) leaves the handle valid and holds
     * nothing: its Wait, Test or free comes later and takes the post. */
    bool query = type == MOP_EV_END && (kind & MOP_END_QUERY);
    uint32_t owner = query ? mop_xt_owner(th->xt_id, key) : mop_xt_release(th->xt_id, ticket, true);
    if (owner == 0)
        return 0;
    /* `arg` (-1 for END, FREE) names the completing thread when the event
     * goes to the posting one (> 0; one without an id counts as
     * MOP_XT_MAX_THREADS + 1). */
    mop_event ev = {.type = (uint8_t)type, .t = t, .key = key, .bytes = bytes,
                    .kind = (uint8_t)kind, .id = 0,
                    .arg = th->xt_id ? (int32_t)th->xt_id : MOP_XT_MAX_THREADS + 1};
    return mop_xt_send(owner, &ev) == 0;
}

void mop_xt_drain(mop_thread *th)
{
    mop_xt_node *n = mop_xt_take(&th->inbox);
    while (n) {
        if (th->n == MOP_QUEUE_EVENTS)
            mop_flush(th);
        th->q[th->n] = n->ev;
        mop_commit(th);
        mop_xt_node *next = n->next;
        free(n);
        n = next;
    }
}

/* Processes what other threads sent to pv's thread and it never took (it
 * pushed nothing since, or it has exited); with pv->lock held. */
static void mop_process_inbox(mop_thread_private *pv)
{
    mop_xt_node *n = mop_xt_take(&pv->th->inbox);
    while (n) {
        mop_trace_process(&mop_trace_g, pv->th, &pv->proc, &n->ev, 1);
        mop_xt_node *next = n->next;
        free(n);
        n = next;
    }
}

/* pthread key destructor: a thread that ends processes its queue, so that
 * snapshots include it, and its engine knows it computes no more. */
static void mop_thread_gone(void *arg)
{
    mop_thread *th = arg;
    if (!__atomic_load_n(&mop_active, __ATOMIC_ACQUIRE))
        return; /* after MPI_Finalize: the final write-out took everything */
    mop_xt_drain(th);
    mop_flush(th);
    mop_in_lock = 1;
    pthread_mutex_lock(&th->priv->lock);
    mop_process_thread_exit(&th->priv->proc, mop_now());
    pthread_mutex_unlock(&th->priv->lock);
    mop_in_lock = 0;
}

/* ---- output ---------------------------------------------------------------- */

/* Adds to agg what pv's thread measured so far, the events still in its
 * queue included, without changing the thread's state: they are processed on
 * a copy of its engine (and not into the timeline trace: the owner writes
 * them there when it processes them). With pv->lock held. The owner empties
 * its queue only under that lock and otherwise only appends past n (released
 * after the event), so q[0, n) stays as read; its pushes pay nothing for
 * this. The queue's ENDs from other threads not yet taken are left out. */
static void mop_snapshot_thread(mop_process *agg, const mop_thread_private *pv)
{
    static mop_process copy; /* large; used under mop_g.lock only */
    uint32_t n;
    const mop_event *queued = mop_unprocessed(pv->th, &n);
    if (pv->final_done || n == 0 || mop_process_copy(&copy, &pv->proc) != 0) {
        mop_process_merge(agg, &pv->proc); /* out of memory: what was processed */
        return;
    }
    copy.cfg.on_transfer = NULL;
    uint64_t flushes = copy.counters.flushes;
    mop_process_events(&copy, queued, n);
    copy.counters.flushes = flushes; /* the queue was not flushed */
    mop_process_merge(agg, &copy);
    mop_process_free(&copy);
}

/* Sums every thread into one process. When `final`, events still queued
 * (and ENDs other threads sent that were not taken yet) are processed and open
 * transfers closed first. Other threads should be quiet then (MPI_Finalize),
 * but at exit or on a signal they may still push: their count is read with
 * acquire and only the owner writes it, so what is processed is whole events;
 * what they push afterwards is lost. Returns the number of threads. */
static int mop_aggregate(mop_process *agg, bool final)
{
    int threads = 0;
    mop_process_init(agg, &mop_g.cfg);
    for (mop_thread_private *pv = mop_g.threads; pv; pv = pv->next, threads++) {
        pthread_mutex_lock(&pv->lock);
        if (final && !pv->final_done) {
            uint32_t n;
            const mop_event *queued = mop_unprocessed(pv->th, &n);
            mop_trace_process(&mop_trace_g, pv->th, &pv->proc, queued, n);
            mop_process_inbox(pv);
            mop_trace_finish(&mop_trace_g, pv->th, &pv->proc);
            pv->final_done = true;
        }
        if (final)
            mop_process_merge(agg, &pv->proc);
        else
            mop_snapshot_thread(agg, pv);
        pthread_mutex_unlock(&pv->lock);
    }
    return threads;
}

/* The final document for the job file (mop_gather.h), on one line, and the
 * rank's statistics and row for the job's reduction (mop_reduce.h), all made
 * from the same measures. */
typedef struct mop_job_doc {
    char *line;
    size_t len;
    mop_job_stats stats;
    bool has_stats; /* false: out of memory */
    mop_job_row row;
    mop_job_bin bins[MOP_MAX_BINS]; /* row.nbins of them */
} mop_job_doc;

/* The computation's CPU time so far, every thread's pieces summed (with
 * mop_g.lock held: the threads list), and the scheduler's figures for the
 * thread of MPI_Init since MPI_Init (read by its task id: the snapshot thread
 * or a signal may be the one writing). */
static mop_output_cpu mop_cpu_figures(void)
{
    mop_output_cpu c = {.read_ns = mop_g.cpu_read_ns, .min_piece_s = mop_g.cpu_min_s};
    for (mop_thread_private *pv = mop_g.threads; pv; pv = pv->next)
        mop_cpu_add(&c.sums, &pv->th->cpu);
    uint64_t on = 0, delay = 0;
    if (mop_g.sched_ok && mop_schedstat(mop_g.main_tid, &on, &delay) == 0 &&
        on >= mop_g.sched_cpu0_ns && delay >= mop_g.sched_delay0_ns) {
        c.sched = true;
        c.thread_cpu_s = (double)(on - mop_g.sched_cpu0_ns) * 1e-9;
        c.run_delay_s = (double)(delay - mop_g.sched_delay0_ns) * 1e-9;
    }
    return c;
}

/* Writes the rank's document as profile.rank-N.json; or, given `job`, puts
 * it there on one line (and writes the file too where per-rank files are
 * kept). A disabled rank's document, written at MPI_Init, is made again for
 * the job file. */
static void mop_emit_profile(const char *status, mop_job_doc *job)
{
    if (mop_g.rank < 0)
        return;
    mop_in_lock = 1;
    pthread_mutex_lock(&mop_g.lock);
    bool final = strcmp(status, "running") != 0;
    if (mop_g.written_final && !(job && mop_g.disabled)) {
        pthread_mutex_unlock(&mop_g.lock);
        mop_in_lock = 0;
        return;
    }
    uint64_t t_end = mop_now();
    static mop_process agg; /* large; never on a possibly small signal stack */
    int threads = mop_aggregate(&agg, final);
    agg.counters.cross_thread_untracked += mop_xt_untracked();
    agg.counters.site_overflow += mop_stack_overflow(); /* chains the table had no room for */
    /* A table without an inter class prices every inter-node transfer as intra
     * (mop_xfer_table_lookup): derived here, not tested per transfer. */
    agg.counters.inter_as_intra = mop_xfer_table_has_class(&mop_g.table, MOP_XFER_INTER)
                                      ? 0 : agg.counters.inter_node_transfers;
    /* One read of the process's mappings per profile: the document's "maps" and
     * the statistics' site names come from the same table, so they name sites alike. */
    mop_places_load();
    mop_trace_stats trace;
    if (final)
        mop_trace_close(&mop_trace_g);
    mop_trace_get_stats(&mop_trace_g, &trace);
    size_t nregions = 0;
    const char *const *regions = mop_region_names(&nregions);
    mop_output_cpu cpu = mop_cpu_figures();
    mop_output_info info = {
        .status = status,
        .reason = mop_g.status_reason[0] ? mop_g.status_reason : NULL,
        .rank = mop_g.rank, .size = mop_g.size, .nodes = mop_g.nodes,
        .threads = threads,
        .library_version = mop_g.library_version,
        .table = &mop_g.table, .table_path = mop_g.table_path, .table_forced = mop_g.table_forced,
        .clock = mop_use_tsc ? "tsc" : "monotonic", .s_per_tick = mop_g.s_per_tick,
        .clock_read_ns = mop_g.clock_read_ns,
        .anchors = {mop_g.anchor_start, mop_anchor_now()},
        .wall_s = (double)(t_end - mop_g.t_start) * mop_g.s_per_tick,
        .queue_events = MOP_QUEUE_EVENTS,
        .count_only = mop_g.cfg.count_only,
        .names = {.fn = mop_fn_names, .nfn = mop_fn_count, .region = regions, .nregion = nregions,
                  .frames = mop_stack_frames, .place = mop_place},
        .trace = &trace,
        .cpu = mop_g.disabled ? NULL : &cpu,
        .start_s = mop_g.disabled ? 0.0 : mop_g.start_s,
        .stop_s = final && mop_g.stop_ns ? (double)(mo_timer_now_ns() - mop_g.stop_ns) / 1e9
                                         : 0.0,
    };
    char err[1400];
    if (job && mop_output_line(&info, &agg, &job->line, &job->len) != 0)
        mop_note("out of memory for the job file: this rank writes profile.rank-%d.json",
                 mop_g.rank);
    if (job) {
        job->has_stats = mop_job_stats_of_rank(&job->stats, &agg, &info.names, mop_g.rank,
                                               mop_g.disabled, info.reason) == 0;
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        mop_job_row_of_rank(&job->row, &agg, &info.names, mop_g.rank, mop_g.disabled,
                            info.wall_s, host);
        job->row.nbins = (uint64_t)mop_job_bins_of_rank(job->bins, &agg, mop_g.disabled);
        if (!mop_g.disabled) {
            /* NaN (null): reads off, so nothing was measured */
            job->row.comp_off_cpu_s =
                cpu.min_piece_s > 0 ? mop_output_off_cpu_s(&cpu, info.s_per_tick) : NAN;
            job->row.run_delay_s = cpu.sched ? cpu.run_delay_s : NAN;
        }
    }
    /* One line per rank: a full disk would otherwise repeat it every snapshot. */
    if (!job || !job->line || mop_g.keep_rank_files) {
        if (mop_output_write(mop_g.outdir, &info, &agg, err, sizeof err) == 0)
            mop_g.rank_file_written = true;
        else if (!mop_g.write_failed) {
            mop_g.write_failed = true;
            mop_note("%s; the last profile written, if any, stays (later failures are not "
                     "reported)", err);
        }
    }
    mop_process_free(&agg);
    if (final)
        mop_g.written_final = true;
    pthread_mutex_unlock(&mop_g.lock);
    mop_in_lock = 0;
}

static void mop_write_profile(const char *status)
{
    mop_emit_profile(status, NULL);
}

/* At MPI_Finalize: the final document into the job file, through rank 0
 * (mop_gather.h); every rank that started takes part, a disabled one too,
 * since rank 0 waits for every rank. After the program's last call, so its
 * cost is outside every measure; rank 0's file says what it took. */
static void mop_write_job_profile(const char *status)
{
    if (!mop_g.job_file) {
        mop_write_profile(status);
        return;
    }
    static mop_job_doc job; /* large (the statistics: 50 KB); MPI_Finalize comes once */
    memset(&job, 0, sizeof job);
    mop_emit_profile(status, &job);
    unsigned flags = mop_g.rank_file_written ? MOP_GATHER_HAS_RANK_FILE : 0;
    char err[1400];
    int rc = 1; /* 1: the document is in no job file */
    if (mop_g.job_documents) {
        rc = mop_gather_job(mop_g.outdir, mop_g.rank, mop_g.size, job.line, job.len, flags,
                            mop_g.keep_rank_files, err, sizeof err);
        if (rc < 0)
            mop_note("%s", err);
    }
    /* The job's statistics, reduced in a tree to rank 0: after the gather, so
     * neither delays the other's ranks, and both after the last user call. */
    int reduced = mop_reduce_job(mop_g.outdir, mop_g.rank, mop_g.size,
                                 job.has_stats ? &job.stats : NULL, &job.row, job.bins,
                                 mop_g.library_version, err, sizeof err);
    if (reduced < 0 || (reduced > 0 && mop_g.rank == 0))
        mop_note("%s", err);
    if (!mop_g.job_documents && reduced == 0) {
        /* the statistics stand for the documents: the snapshot goes, as the gather's would */
        if (mop_g.rank_file_written && !mop_g.keep_rank_files) {
            mop_output_rank_path(err, sizeof err, mop_g.outdir, mop_g.rank);
            unlink(err);
        }
        rc = 0;
    }
    /* Not in the job file, not written yet, and no statistics stand for it: its own file. */
    if (rc != 0 && job.line && !mop_g.keep_rank_files &&
        mop_output_write_text(mop_g.outdir, mop_g.rank, job.line, job.len, err, sizeof err) != 0)
        mop_note("%s", err);
    free(job.line);
}

/* The program ends without MPI_Finalize: the first of exit and a fatal
 * signal (on any thread) stops collecting and writes the profile. The reason
 * is set under the lock that a concurrent snapshot reads it under. */
static void mop_write_incomplete(const char *reason)
{
    if (!__atomic_exchange_n(&mop_active, 0, __ATOMIC_ACQ_REL))
        return;
    mop_in_lock = 1;
    pthread_mutex_lock(&mop_g.lock);
    snprintf(mop_g.status_reason, sizeof mop_g.status_reason, "%s", reason);
    pthread_mutex_unlock(&mop_g.lock);
    mop_in_lock = 0;
    mop_write_profile("incomplete");
}

/* ---- the snapshot thread ------------------------------------------------------ */

/* Every snapshot_interval_s it writes the profile with status `running`, so
 * that a rank killed while it makes no MPI call (idle, computing, asleep)
 * leaves its last state too. It calls no MPI function and takes only the
 * locks a snapshot takes. A push never waits for it; a thread whose queue is
 * full waits to process it while the snapshot reads that thread (once a
 * period at most). */
static void *mop_watch_main(void *arg)
{
    (void)arg;
    double period = mop_g.snapshot_interval_s;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&mop_g.watch_lock);
    while (!mop_g.watch_stop) {
        double at = (double)next.tv_sec + (double)next.tv_nsec * 1e-9 + period;
        next.tv_sec = (time_t)at;
        next.tv_nsec = (long)((at - (double)next.tv_sec) * 1e9);
        int rc = 0;
        while (!mop_g.watch_stop && rc == 0)
            rc = pthread_cond_timedwait(&mop_g.watch_wake, &mop_g.watch_lock, &next);
        if (mop_g.watch_stop || rc != ETIMEDOUT)
            break;
        pthread_mutex_unlock(&mop_g.watch_lock);
        mop_write_profile("running"); /* does nothing once the final profile is written */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
            next = now; /* a slow write: the next one a whole period after it */
        pthread_mutex_lock(&mop_g.watch_lock);
    }
    pthread_mutex_unlock(&mop_g.watch_lock);
    return NULL;
}

static void mop_watch_start(void)
{
    if (!(mop_g.snapshot_interval_s > 0))
        return;
    if (mop_g.snapshot_interval_s > 1e7)
        mop_g.snapshot_interval_s = 1e7; /* ~4 months: keeps the deadline's arithmetic exact */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&mop_g.watch_wake, &ca);
    pthread_condattr_destroy(&ca);
    /* With every signal blocked: the program's signals are for its threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&mop_g.watch_thread, NULL, mop_watch_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        mop_note("no snapshots while running: cannot start their thread (%s)", strerror(rc));
        return;
    }
    __atomic_store_n(&mop_g.watch_pid, getpid(), __ATOMIC_RELEASE);
}

/* Stops and joins the snapshot thread; the first caller does (a fork's child
 * has no such thread, and does nothing). Not from a signal handler. */
static void mop_watch_stop(void)
{
    pid_t me = getpid();
    if (!__atomic_compare_exchange_n(&mop_g.watch_pid, &me, 0, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&mop_g.watch_lock);
    mop_g.watch_stop = true;
    pthread_cond_signal(&mop_g.watch_wake);
    pthread_mutex_unlock(&mop_g.watch_lock);
    pthread_join(mop_g.watch_thread, NULL);
}

static void mop_atexit(void)
{
    mop_watch_stop();
    mop_write_incomplete("the program exited without calling MPI_Finalize");
}

/* A crash's own stack on stderr, before anything else the handler does, so a
 * rank that dies of SIGSEGV in MPI or in the profiler says where (issue 39: a
 * rank ended by signal 11 once in eight kill-node runs, and no core was caught
 * again). Only for the signals a fault raises: SIGTERM and the like come from
 * outside and their stack says nothing. backtrace_symbols_fd writes with
 * write(2), without malloc; static functions show as library+offset, for
 * addr2line. */
static void mop_crash_stack(int sig)
{
#if defined(__GLIBC__)
    if (sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGABRT)
        return;
    char head[96];
    int n = snprintf(head, sizeof head, "mpi-overlap: rank %d: signal %d, its stack:\n",
                     mop_g.rank, sig);
    if (n > 0 && write(STDERR_FILENO, head, (size_t)n) < 0)
        return;
    void *frames[48];
    backtrace_symbols_fd(frames, backtrace(frames, 48), STDERR_FILENO);
    /* Last, because the launch's message quotes the last line of stderr. */
    n = snprintf(head, sizeof head, "mpi-overlap: rank %d: ended by signal %d (%s)\n",
                 mop_g.rank, sig, strsignal(sig));
    if (n > 0 && write(STDERR_FILENO, head, (size_t)n) < 0)
        return;
#else
    (void)sig;
#endif
}

/* backtrace() loads libgcc's unwinder on its first call, which allocates: made
 * once at set-up so that the call in a signal handler does not. */
static void mop_crash_stack_ready(void)
{
#if defined(__GLIBC__)
    void *frame[1];
    (void)backtrace(frame, 1);
#endif
}

static void mop_fatal_signal(int sig)
{
    mop_crash_stack(sig);
    /* Best effort: stdio is not async-signal-safe, but the alternative is
     * certainly losing everything; the periodic snapshot is the fallback.
     * Not when the signal interrupted this thread inside the profiler's own
     * locked section (processing its queue, writing a snapshot): taking that
     * lock again would hang the program instead of ending it. */
    if (!mop_in_lock) {
        char reason[128];
        snprintf(reason, sizeof reason, "the program was ended by signal %d (%s)", sig,
                 strsignal(sig));
        mop_write_incomplete(reason);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- set-up ---------------------------------------------------------------- */

static int mop_parse_bins(const char *s)
{
    size_t n = 0;
    uint64_t last = 0;
    while (s && *s && n < MOP_MAX_BIN_EDGES) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || v <= last)
            return -1;
        mop_g.bin_edges[n++] = last = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    mop_g.cfg.bin_edges = n ? mop_g.bin_edges : NULL;
    mop_g.cfg.nbin_edges = n;
    return 0;
}

/* Which world ranks are on another node than this one. */
static void mop_node_layout(void)
{
    MPI_Comm node;
    int node_rank = 0, *leader = NULL;
    mop_g.nodes = 1;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return;
    PMPI_Comm_rank(node, &node_rank);
    int my_leader = mop_g.rank;
    PMPI_Bcast(&my_leader, 1, MPI_INT, 0, node); /* world rank of the node's first rank */
    PMPI_Comm_free(&node);
    leader = malloc((size_t)mop_g.size * sizeof *leader);
    if (!leader)
        return;
    PMPI_Allgather(&my_leader, 1, MPI_INT, leader, 1, MPI_INT, MPI_COMM_WORLD);
    int nodes = 0;
    for (int r = 0; r < mop_g.size; r++)
        nodes += leader[r] == r;
    mop_g.nodes = nodes;
    if (nodes > 1) {
        mop_g.peer_remote = calloc((size_t)mop_g.size, 1);
        if (mop_g.peer_remote)
            for (int r = 0; r < mop_g.size; r++)
                mop_g.peer_remote[r] = leader[r] != my_leader;
        mop_g.cfg.peer_remote = mop_g.peer_remote;
        mop_g.cfg.npeers = mop_g.size;
        mop_need_peers = mop_g.peer_remote != NULL;
    }
    free(leader);
}

/* Loads and checks the table; returns 0, or -1 with mop_g.status_reason set. */
static int mop_table_setup(void)
{
    const char *path = getenv("MPI_OVERLAP_TABLE");
    const char *force = getenv("MPI_OVERLAP_FORCE_TABLE");
    mop_g.table_forced = force && *force && strcmp(force, "0") != 0;
    if (!path || !*path) {
        snprintf(mop_g.status_reason, sizeof mop_g.status_reason,
                 "no transfer-time table: set MPI_OVERLAP_TABLE (mpi-overlap calibrate makes "
                 "one; mpi-overlap profile finds or makes it)");
        return -1;
    }
    snprintf(mop_g.table_path, sizeof mop_g.table_path, "%s", path);
    char err[400];
    if (mop_xfer_table_load(&mop_g.table, path, err, sizeof err) != 0) {
        snprintf(mop_g.status_reason, sizeof mop_g.status_reason, "%s", err);
        return -1;
    }
    /* A table needs the classes the job's transfers use (issue 39): intra-node
     * times only where a node holds two ranks or more (the job's layout is known:
     * mop_node_layout ran first); a missing inter class is priced as intra and
     * counted (inter_as_intra). */
    if (!mop_xfer_table_has_class(&mop_g.table, MOP_XFER_INTRA) && mop_g.nodes < mop_g.size) {
        snprintf(mop_g.status_reason, sizeof mop_g.status_reason,
                 "%s has no intra-node transfer times, and %d ranks share %d node(s) here; "
                 "calibrate with two ranks on one node (mpi-overlap calibrate -n 2), or let "
                 "mpi-overlap profile measure it", path, mop_g.size, mop_g.nodes);
        return -1;
    }
    mo_fingerprints fp;
    mo_fingerprints_collect(&fp, mop_g.library_version);
    const char *what = NULL, *table_key = NULL, *ours = NULL;
    if (strcmp(fp.machine_fp, mop_g.table.machine_fp) != 0) {
        what = "machine";
        table_key = mop_g.table.machine_key;
        ours = fp.machine_key;
    } else if (strcmp(fp.toolchain_fp, mop_g.table.toolchain_fp) != 0) {
        what = "MPI library";
        table_key = mop_g.table.toolchain_key;
        ours = fp.toolchain_key;
    }
    if (what && !mop_g.table_forced) {
        snprintf(mop_g.status_reason, sizeof mop_g.status_reason,
                 "transfer-time table %s was made for another %s ('%.120s', this is '%.120s'); "
                 "calibrate here, or set MPI_OVERLAP_FORCE_TABLE=1 to use it anyway",
                 path, what, table_key, ours);
        return -1;
    }
    /* A table whose own measurement says it cannot be trusted would give
     * bounds that look certain and are not (docs/method.md). */
    if (mop_g.table.verdict == MOP_XFER_SUSPECT && !mop_g.table_forced) {
        snprintf(mop_g.status_reason, sizeof mop_g.status_reason,
                 "transfer-time table %s is marked suspect (%.160s); measure it again when the "
                 "machine is quieter (mpi-overlap calibrate), or set MPI_OVERLAP_FORCE_TABLE=1 to "
                 "use it anyway", path, mop_g.table.verdict_reason);
        return -1;
    }
    return 0;
}

void mop_runtime_start(uint16_t init_fn, uint64_t site)
{
    const uint64_t entered_ns = mo_timer_now_ns();
    const char *off = getenv("MPI_OVERLAP_DISABLE");
    PMPI_Comm_rank(MPI_COMM_WORLD, &mop_g.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &mop_g.size);
    int len = 0;
    PMPI_Get_library_version(mop_g.library_version, &len);
    const char *outdir = getenv("MPI_OVERLAP_OUTDIR");
    snprintf(mop_g.outdir, sizeof mop_g.outdir, "%s", outdir && *outdir ? outdir : ".");
    mop_node_layout(); /* collective: every rank must take part */
    bool disabled_here = off && *off && strcmp(off, "0") != 0;
    /* The job file needs every rank at MPI_Finalize (rank 0 waits for each):
     * where MPI_OVERLAP_DISABLE is set on some ranks only, no rank gathers. */
    /* The documents too where MPI_OVERLAP_JOB_DOCUMENTS says so (unset: small
     * jobs only, as per-rank files); off on any rank, off on every one: every
     * rank must take the same part in the gather. */
    const char *docs = getenv("MPI_OVERLAP_JOB_DOCUMENTS");
    int here[2] = {!disabled_here, docs && *docs ? strcmp(docs, "0") != 0
                                                 : mop_g.size <= MOP_RANK_FILES_UP_TO};
    int all[2] = {0, 0};
    PMPI_Allreduce(here, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    mop_g.job_file = all[0] != 0;
    mop_g.job_documents = all[1] != 0;
    if (disabled_here)
        return;
    if (mop_no_opt_setup()) /* received sizes read from statuses (mop_wrap_util.h) */
        mop_status_layout_check();
    /* Per-rank files besides the job file: 1 always, 0 never; by default
     * for small jobs only (docs/profiler.md, "Many ranks"). */
    const char *per_rank = getenv("MPI_OVERLAP_PER_RANK");
    mop_g.keep_rank_files = per_rank && *per_rank ? strcmp(per_rank, "0") != 0
                                                  : mop_g.size <= MOP_RANK_FILES_UP_TO;
    mop_g.s_per_tick = mop_clock_setup();
    mop_g.clock_read_ns = mop_clock_read_cost();
    mop_g.cpu_read_ns = mop_cpu_read_cost();
    mop_g.cpu_min_s = mop_cpu_setup(mop_g.cpu_read_ns, mop_g.s_per_tick);
    mop_g.main_tid = (int)gettid();
    mop_g.sched_ok = mop_schedstat(0, &mop_g.sched_cpu0_ns, &mop_g.sched_delay0_ns) == 0;
    mop_trace_sync_start(mop_g.s_per_tick); /* collective: before a rank can drop out below */
    /* Requests can be completed on another thread than the one that posted
     * them only where several threads may call MPI. */
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    mop_xt_on = level >= MPI_THREAD_SERIALIZED && mop_xt_init() == 0;
    pthread_key_create(&mop_thread_key, mop_thread_gone);
    mop_g.cfg.s_per_tick = mop_g.s_per_tick;
    mop_g.cfg.table = &mop_g.table;
    /* Call sites are kept unless MPI_OVERLAP_CALLSITES=0 (docs/profiler.md,
     * "Call sites"): the off setting exists to measure what they cost. */
    /* The Test family, for the pairs' "polled" (mop_process.h). */
    static uint8_t test_fns[MOP_MAX_FN];
    test_fns[MOP_FN_MPI_Test] = test_fns[MOP_FN_MPI_Testall] = 1;
    test_fns[MOP_FN_MPI_Testany] = test_fns[MOP_FN_MPI_Testsome] = 1;
    mop_g.cfg.test_fns = test_fns;
    /* The blocking sends that may return before their transfer is done, and
     * the blocking receives (docs/method.md, "The transfer model's parts");
     * MPI_Ssend waits for its receiver, MPI_Sendrecv for both: whole. */
    static uint8_t part_fns[MOP_MAX_FN];
    part_fns[MOP_FN_MPI_Send] = part_fns[MOP_FN_MPI_Bsend] = MOP_PART_EAGER_SEND;
    part_fns[MOP_FN_MPI_Rsend] = MOP_PART_EAGER_SEND;
    part_fns[MOP_FN_MPI_Recv] = part_fns[MOP_FN_MPI_Mrecv] = MOP_PART_RECV;
#if defined(MOP_HAVE_MPI_Send_c) && defined(MOP_HAVE_MPI_Bsend_c) && defined(MOP_HAVE_MPI_Rsend_c)
    part_fns[MOP_FN_MPI_Send_c] = part_fns[MOP_FN_MPI_Bsend_c] = MOP_PART_EAGER_SEND;
    part_fns[MOP_FN_MPI_Rsend_c] = MOP_PART_EAGER_SEND;
#endif
#if defined(MOP_HAVE_MPI_Recv_c) && defined(MOP_HAVE_MPI_Mrecv_c)
    part_fns[MOP_FN_MPI_Recv_c] = part_fns[MOP_FN_MPI_Mrecv_c] = MOP_PART_RECV;
#endif
    mop_g.cfg.part_fns = part_fns;
    /* MPI_OVERLAP_PROCESS=0: events counted, not processed (mop_process_config):
     * bench profiler-overhead's launch that splits the cost in the run. */
    const char *process = getenv("MPI_OVERLAP_PROCESS");
    mop_g.cfg.count_only = process && strcmp(process, "0") == 0;
    const char *sites = getenv("MPI_OVERLAP_CALLSITES");
    mop_g.cfg.callsites = !(sites && strcmp(sites, "0") == 0);
    if (mop_g.cfg.callsites)
        mop_stacks_init(); /* --callsite-depth: MPI_OVERLAP_CALLSITE_DEPTH */
    const char *snap = getenv("MPI_OVERLAP_SNAPSHOT_S");
    mop_g.snapshot_interval_s = snap ? atof(snap) : 10.0; /* <= 0 (or not a number): none */
    if (mop_parse_bins(getenv("MPI_OVERLAP_BINS")) != 0) {
        snprintf(mop_g.status_reason, sizeof mop_g.status_reason,
                 "MPI_OVERLAP_BINS must be ascending byte counts separated by commas, "
                 "e.g. 1024,65536");
        mop_note("%s", mop_g.status_reason);
        mop_g.disabled = true;
        mop_write_profile("disabled"); /* the reason reaches the report, not only a terminal */
        return;
    }
    if (mop_table_setup() != 0) {
        if (mop_g.rank == 0)
            mop_note("profiling is off: %s", mop_g.status_reason);
        mop_g.disabled = true;
        mop_write_profile("disabled");
        return;
    }
    mop_g.t_start = mop_now();
    mop_g.anchor_start = mop_anchor_now();
    atexit(mop_atexit);
    mop_crash_stack_ready();
    const int fatal[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old;
        /* A handler the program installed is its own business: leave it. */
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            signal(fatal[i], mop_fatal_signal);
    }
    /* Traced messages are matched by their peers' world ranks, which the
     * wrappers otherwise translate only in jobs spanning nodes, their
     * communicators and tags. */
    bool tracing = mop_trace_start(&mop_trace_g, &mop_g.cfg, mop_g.outdir, mop_g.rank,
                                   mop_g.size, mop_g.s_per_tick, mop_use_tsc);
    if (tracing)
        mop_need_peers = 1;
    mop_post_fusion = !mop_xt_on && !tracing;
    /* Without processing, the queue is only counted when full: no trials to pick by. */
    mop_idle_setting = mop_g.cfg.count_only ? MOP_IDLE_NEVER
                                            : mop_idle_mode_of(getenv("MPI_OVERLAP_IDLE"), tracing);
    mop_idle_waits = mop_idle_setting != MOP_IDLE_NEVER;
    __atomic_store_n(&mop_active, 1, __ATOMIC_RELEASE);
    mop_thread *th = mop_self();
    if (th) {
        mop_trace_thread(&mop_trace_g, th); /* thread 0 of the trace: the one of MPI_Init */
        mop_enter(th, init_fn, mop_g.t_start, site); /* before it, the clock was not set up */
        mop_exit(th, mop_now());
    }
    /* Set before the watch thread exists: its snapshots read it (mop_emit_profile),
     * and written after its start it raced with them (TSan, snapshot_thread test).
     * The thread's start is then not in start_s: tens of microseconds. */
    mop_g.start_s = (double)(mo_timer_now_ns() - entered_ns) / 1e9;
    mop_watch_start();
}

uint64_t mop_enter_site_slow(mop_thread *th, uint64_t site)
{
    if (th->f_site) {
        site = th->f_site;
        th->f_site = 0;
    }
    return mop_stack_depth > 1 ? mop_stack_site(site) : site;
}

bool mop_runtime_started(void)
{
    return mop_g.rank >= 0;
}

void mop_note_out_of_memory(void)
{
    mop_thread *th = mop_self();
    if (!th)
        return;
    pthread_mutex_lock(&th->priv->lock);
    th->priv->proc.counters.out_of_memory++;
    pthread_mutex_unlock(&th->priv->lock);
}

void mop_runtime_stop(uint64_t site)
{
    mop_g.stop_ns = mo_timer_now_ns();
    mop_trace_sync_end(&mop_trace_g); /* collective, like the start's */
    mop_watch_stop();
    if (mop_g.disabled) {
        mop_write_job_profile("disabled");
        return;
    }
    if (!__atomic_load_n(&mop_active, __ATOMIC_ACQUIRE))
        return;
    mop_unpause(); /* a program that finalizes while paused */
    mop_thread *th = mop_self();
    if (th) { /* Finalize's own call: its time is MPI time */
        mop_enter(th, MOP_FN_MPI_Finalize, mop_now(), site);
        mop_exit(th, mop_now());
    }
    if (!__atomic_exchange_n(&mop_active, 0, __ATOMIC_ACQ_REL))
        return; /* a fatal signal on another thread wrote the profile meanwhile */
    pthread_mutex_lock(&mop_g.lock);
    mop_g.status_reason[0] = '\0';
    pthread_mutex_unlock(&mop_g.lock);
    mop_write_job_profile("complete");
}

void mop_runtime_abort(int errorcode, uint64_t site)
{
    if (!__atomic_load_n(&mop_active, __ATOMIC_ACQUIRE))
        return;
    mop_unpause();
    mop_thread *th = mop_self();
    if (th) { /* the call is counted; it never returns */
        mop_enter(th, MOP_FN_MPI_Abort, mop_now(), site);
        mop_exit(th, mop_now());
    }
    mop_watch_stop();
    char reason[96];
    snprintf(reason, sizeof reason, "the program called MPI_Abort (error code %d)", errorcode);
    mop_write_incomplete(reason);
}
