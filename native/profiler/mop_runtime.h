/* mop_runtime.h - what every PMPI wrapper needs from the profiler's runtime:
 * the calling thread's state (NULL while the profiler is not active: before
 * MPI_Init, after MPI_Finalize, or when disabled), the clock, and the
 * inline pushes of events into the thread's fixed-size queue. The queue is
 * handed to mop_process when full (Shet et al. §2.4.2), so a wrapper costs two
 * clock reads and a few stores. A push takes no lock: the queue belongs to its
 * thread (docs/profiler.md, "Threads"). */
#ifndef MOP_RUNTIME_H
#define MOP_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "mop_clock.h"
#include "mop_cpu.h"
#include "mop_event.h"
#include "mop_stacks.h"
#include "mop_xthread.h"

enum { MOP_QUEUE_EVENTS = 4096 };
/* A cache line: the thread's record starts on one, and so does its queue. */
enum { MOP_LINE = 64 };

/* Processing while the program waits (mop_idle.h): a call that may wait
 * works on the queue once MOP_IDLE_BACKLOG events are waiting there. */
enum { MOP_IDLE_BACKLOG = 16 };

typedef struct mop_thread {
    /* Events in q. Written only by the owning thread outside its lock, with
     * release after the event itself, so that the final write-out (which may
     * run on another thread: exit, signal) reads whole events up to it. */
    uint32_t n;
    /* Events of q already processed while the thread waited (mop_idle_step):
     * the next processing starts at q[done]. Written by the owner under its
     * lock; done <= n. */
    uint32_t done;
    /* Times q was processed (and emptied): with n, tells a post's wrapper
     * whether anything was pushed since its ENTER (mop_post_mark). */
    uint32_t flushes;
    /* 1 while calls that wait process the queue (mop_idle.h): set at MPI_Init
     * from MPI_OVERLAP_IDLE, or epoch by epoch by the thread's trials
     * (mop_idle_pick.h). Beside n: mop_idle_worth reads both. */
    uint32_t idle;
    struct mop_thread_private *priv; /* processing state, owned by mop_runtime.c */
    uint32_t xt_id;                  /* id in mop_xthread (0: not registered) */
    /* The call site a Fortran entry point saw (its return address into the
     * program), for the C wrapper it calls next: that wrapper's own return
     * address is inside this library (mop_fortran.h). 0: none. */
    uint64_t f_site;
    /* The computation between its calls as CPU time (mop_cpu.h). */
    mop_cpu cpu;
    _Alignas(MOP_LINE) mop_event q[MOP_QUEUE_EVENTS]; /* two events a line, none across two */
    char xt_pad[64]; /* the inbox is written by other threads: not q's cache line */
    mop_xt_inbox inbox; /* ENDs of this thread's requests seen by other threads */
} mop_thread;

/* Set by the runtime: 1 while events are collected (read with acquire: a
 * thread that sees 1 sees the set-up made before it). */
extern volatile int mop_active;
/* The calling thread's record. Declared initial-exec here too, not only where it
 * is defined: without it every other file compiled a general-dynamic access,
 * which the linker relaxed into three loads (the thread pointer from %fs:0,
 * the offset, the variable) where initial-exec needs two (the offset, then the
 * variable at %fs). Measured on a cold loop (4 MB sweep, then a region,
 * Irecv + Isend + Waitall): -6 ns an iteration by the median of 8 pairs, within
 * their spread (docs/profiler.md, "Memory and cost", cold calls). */
extern _Thread_local mop_thread *mop_tls __attribute__((tls_model("initial-exec")));
/* 1 when MPI may be called from several threads (MPI_THREAD_SERIALIZED or
 * MULTIPLE): posts and completions then go through the owner table. */
extern int mop_xt_on;
/* 1 when a post may be recorded as ENTER + POST (mop_event.h): no threads
 * (their ENDs may be drained into the queue at any push) and no trace (its
 * readers know BEGIN and EXIT). Set at MPI_Init. */
extern int mop_post_fusion;
/* 1 while the Wait family may also test before waiting (set at MPI_Init where
 * the queue may be processed while waiting at all: not with a trace, whose
 * chunks would become a few events each, nor MPI_OVERLAP_IDLE=0); 0 once the
 * program has set an error handler (mop_idle.h). */
extern int mop_idle_waits;

/* After PMPI_Init(_thread) succeeded: reads the settings, loads and checks the
 * table, starts collecting (init_fn: the function id of the init call, site:
 * its call site). */
void mop_runtime_start(uint16_t init_fn, uint64_t site);
/* Before PMPI_Finalize (called from site): processes what is queued, writes
 * the rank's profile. */
void mop_runtime_stop(uint64_t site);
/* Before PMPI_Abort (called from site): writes the rank's profile, status
 * incomplete, with the error code in its reason. */
void mop_runtime_abort(int errorcode, uint64_t site);
/* At MPI_Init, once profiling is on: whether received sizes may be read from
 * statuses directly rather than through PMPI_Get_count (mop_wrap_util.h,
 * mop_status_bytes; defined in mop_wrap_completion.c). */
void mop_status_layout_check(void);
/* Whether mop_runtime_start ran (profiling on or not): the Fortran MPI_INIT
 * starts the runtime only when the MPI's Fortran binding did not reach the C
 * MPI_Init wrapper. */
bool mop_runtime_started(void);
/* Counts, in the calling thread's profile, memory a wrapper could not get
 * (counter out_of_memory). */
void mop_note_out_of_memory(void);

/* Creates the calling thread's state on its first event; NULL while the
 * thread is paused (mop_pause). */
mop_thread *mop_thread_attach(void);
/* MPI_OVERLAP_PCONTROL_PAUSE of include/mpi_overlap.h, which the library does
 * not include: its weak declarations would make the region API's definitions
 * weak. A test pauses through the public name (tests/test_profiler_pause.py). */
#define MOP_PCONTROL_PAUSE (-1)
/* MPI_Pcontrol(MOP_PCONTROL_PAUSE): the wrappers pass the calling thread's
 * calls straight to the MPI, recording nothing, until its next MPI_Pcontrol,
 * so that a program can time stretches of itself without the profiler's cost
 * beside stretches with it, in one launch (docs/profiler.md, "Memory and
 * cost": "The cost inside one launch"). Only a program without threads in
 * use: mop_pause refuses otherwise, with one line on stderr (another thread's
 * completions would go to a paused thread's queue). th is the caller's
 * record; it is put aside and mop_tls cleared, so mop_self finds none and the
 * wrappers' own path pays nothing for the feature when no thread is paused. */
bool mop_pause(mop_thread *th);
/* Ends the calling thread's pause: its record, or NULL when it was not paused. */
mop_thread *mop_unpause(void);
/* Processes and empties the calling thread's queue. */
void mop_flush(mop_thread *th);
/* One step of processing while the calling thread waits in MPI (mop_idle.h):
 * processes up to `chunk` queued events; the queue starts over once all are
 * processed. Returns whether any remain. */
bool mop_idle_step(mop_thread *th, uint32_t chunk);
/* Moves the ENDs in the calling thread's inbox into its queue. */
void mop_xt_drain(mop_thread *th);
/* An END or FREE (threads in use): sends it to the thread that posted the
 * request when that is another one: the post held by `ticket` (mop_xt_hold), or
 * for a query END (MOP_END_QUERY, no ticket) the one the table finds. Returns
 * 1 when sent, 0 when it belongs to this thread's queue. */
int mop_xt_route(mop_thread *th, mop_event_type type, uint64_t t, uint64_t key, int64_t bytes,
                 int kind, uint32_t ticket);

/* Whether a call about to wait should first work on the queue. */
static inline bool mop_idle_worth(const mop_thread *th)
{
    return __builtin_expect(th->n - th->done >= MOP_IDLE_BACKLOG, 0) && th->idle;
}

static inline mop_thread *mop_self(void)
{
    if (__builtin_expect(!__atomic_load_n(&mop_active, __ATOMIC_ACQUIRE), 0))
        return NULL;
    mop_thread *th = mop_tls;
    return __builtin_expect(th != NULL, 1) ? th : mop_thread_attach();
}

/* The slot for the next event; mop_commit makes it count. ENDs that other
 * threads saw for this thread's requests go in first: they happened before
 * what is pushed now. Only threaded programs can have any, so the others do
 * not load the inbox (a cache line of its own) on every push. */
static inline mop_event *mop_push(mop_thread *th)
{
    if (__builtin_expect(mop_xt_on, 0) &&
        __atomic_load_n(&th->inbox.head, __ATOMIC_RELAXED) != NULL)
        mop_xt_drain(th);
    if (__builtin_expect(th->n == MOP_QUEUE_EVENTS, 0))
        mop_flush(th);
    return &th->q[th->n];
}

static inline void mop_commit(mop_thread *th)
{
    __atomic_store_n(&th->n, th->n + 1, __ATOMIC_RELEASE);
}

/* The return address of the wrapper this expands in: the call site, one
 * register or stack read (no stack walk; docs/profiler.md, "Call sites"). */
#define MOP_CALLER() ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* The call site when it is not the wrapper's return address: a Fortran entry
 * point's (th->f_site), or a chain of frames (--callsite-depth, mop_stacks.h). */
uint64_t mop_enter_site_slow(mop_thread *th, uint64_t site);

/* ENTER of an MPI call made from `site` (MOP_CALLER() of the wrapper), or from
 * the Fortran call site that led to it, or the chain of frames that did. */
static inline void mop_enter(mop_thread *th, uint16_t fn, uint64_t t, uint64_t site)
{
    if (__builtin_expect(th->f_site != 0 || mop_stack_depth > 1, 0))
        site = mop_enter_site_slow(th, site);
    mop_cpu_enter(&th->cpu, t);
    mop_event *e = mop_push(th);
    e->type = MOP_EV_ENTER;
    e->t = t;
    e->key = site;
    e->id = fn;
    mop_commit(th);
}

static inline void mop_exit(mop_thread *th, uint64_t t)
{
    mop_cpu_exit(&th->cpu, t);
    mop_event *e = mop_push(th);
    e->type = MOP_EV_EXIT;
    e->t = t;
    mop_commit(th);
}

/* Any other event: transfers (BEGIN at the posting call's enter, END at the
 * completing call's exit, INCALL), persistent requests, regions, Pcontrol.
 * The END or FREE of a request goes through mop_push_end. */
static inline void mop_push_event(mop_thread *th, mop_event_type type, uint64_t t,
                                  uint64_t key, int64_t bytes, mop_kind kind, uint16_t id,
                                  int32_t arg)
{
    mop_event *e = mop_push(th);
    e->type = (uint8_t)type;
    e->t = t;
    e->key = key;
    e->bytes = bytes;
    e->kind = (uint8_t)kind;
    e->id = id;
    e->arg = arg;
    mop_commit(th);
    /* After the push: from now on another thread may send this request's END
     * here, and it must come after the BEGIN. */
    if (__builtin_expect(mop_xt_on, 0) && (type == MOP_EV_BEGIN || type == MOP_EV_START))
        mop_xt_posted(th->xt_id, key);
}

/* Where the queue stands: taken right after a call's ENTER, and again when
 * its transfer is recorded, it says whether anything was pushed in between. */
static inline uint64_t mop_post_mark(const mop_thread *th)
{
    return (uint64_t)th->flushes << 32 | th->n;
}

/* Whether a post whose ENTER left `mark` may record its BEGIN and EXIT as one
 * POST event: nothing came between, so the engine reads the BEGIN's time from
 * the ENTER just before it. */
static inline bool mop_post_fusable(const mop_thread *th, uint64_t mark)
{
    return mop_post_fusion && mop_post_mark(th) == mark;
}

/* Lets go of a hold whose request did not complete (ticket 0: nothing). */
static inline void mop_unhold(mop_thread *th, uint32_t ticket)
{
    if (__builtin_expect(ticket != 0, 0))
        mop_xt_release(th->xt_id, ticket, false);
}

/* The END (kind: mop_end flags) or FREE of a request, with the ticket of its
 * hold (mop_hold_req in mop_wrap_util.h; taken here) or 0; with threads in
 * use it goes to the thread that posted the request when another one did. */
static inline void mop_push_end(mop_thread *th, mop_event_type type, uint64_t t, uint64_t key,
                                int64_t bytes, int kind, uint32_t ticket)
{
    if (__builtin_expect(mop_xt_on, 0) && mop_xt_route(th, type, t, key, bytes, kind, ticket))
        return;
    mop_push_event(th, type, t, key, bytes, (mop_kind)kind, 0, -1);
}

/* Enter/exit bracket for wrappers with nothing else to record. FN is the
 * bare MPI name; MOP_FN_<name> ids come from the generated mop_fn_ids.h. */
#define MOP_CALL_BEGIN(name)                     \
    mop_thread *mop_th_ = mop_self();            \
    uint64_t mop_t0_ = 0;                        \
    if (mop_th_) {                               \
        mop_t0_ = mop_now();                     \
        mop_enter(mop_th_, MOP_FN_##name, mop_t0_, MOP_CALLER()); \
    }
#define MOP_CALL_END()                           \
    if (mop_th_)                                 \
        mop_exit(mop_th_, mop_now());

#endif
