/* mop_wrap_rma.c - PMPI wrappers of one-sided communication (MPI RMA): the
 * communication calls (Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 * Compare_and_swap, their request-based R* forms and large-count _c variants)
 * and the synchronization calls that complete them (Win_flush*, Win_unlock*,
 * Win_fence, Win_complete, and Win_free, which must find none pending).
 *
 * Written by hand, not generated: what completes a one-sided operation is not
 * in the operation's own parameters (no request, unless it is an R* form) but
 * a later synchronization call on its window, which names a target or the
 * whole window; pairing them needs the state kept here.
 *
 * Event placement (docs/method.md, "One-sided communication"): each operation
 * is a transfer that begins at its call (XFER_BEGIN at CALL_ENTER) and ends
 * (XFER_END) at the CALL_EXIT of the first call that guarantees its
 * completion at the origin: for the R* forms the Wait/Test that completes
 * their request (keyed by the request, exactly like MPI_Isend, ended by
 * mop_wrap_completion.c); for the others a synchronization call on their
 * window covering their target. Those get a synthetic key (MOP_RMA_KEY_BIT |
 * a per-thread count) and wait in the calling thread's pending list
 * (mop_rma_pending.c) until then.
 *
 * Threads: each thread keeps its own list; a synchronization call also marks
 * the matching operations other threads posted before it, and their owner
 * ends them (counted in rma_other_thread) at its own next one-sided call,
 * since only the owner may push into its event queue. Other threads' lists
 * are only looked at when more than one thread has used one-sided calls. */
#include <pthread.h>
#include <stdlib.h>

#include "mop_rma_pending.h"
#include "mop_wrap_util.h"

/* Pending operations per thread at most (32 bytes each): far above any
 * epoch we know of, low enough that unseen synchronization cannot exhaust
 * memory. Beyond it operations are closed as begin-only and counted. */
enum { MOP_RMA_MAX_PENDING = 1 << 20, MOP_RMA_CHUNK = 128 };

typedef struct mop_rma_thread {
    pthread_mutex_t lock; /* pending: owner and other threads' synchronization calls */
    mop_rma_pending pending;
    uint64_t next_key;    /* owner only */
    int has_marked;       /* atomic: another thread marked some of ours */
    struct mop_rma_thread *next;
} mop_rma_thread;

static pthread_mutex_t mop_rma_threads_lock = PTHREAD_MUTEX_INITIALIZER; /* the list */
static mop_rma_thread *mop_rma_threads;
static int mop_rma_nthreads; /* atomic: threads with a list */
static pthread_key_t mop_rma_exit_key;
static pthread_once_t mop_rma_once = PTHREAD_ONCE_INIT;
static int mop_rma_exit_key_ok;
static _Thread_local mop_rma_thread *mop_rma_self;

/* A thread ends: forget its list. Its transfers still open stay open in its
 * bounds engine and are closed as begin-only (unfinished) at the end. */
static void mop_rma_thread_exit(void *arg)
{
    mop_rma_thread *rt = arg;
    pthread_mutex_lock(&mop_rma_threads_lock);
    for (mop_rma_thread **pp = &mop_rma_threads; *pp; pp = &(*pp)->next)
        if (*pp == rt) {
            *pp = rt->next;
            break;
        }
    __atomic_fetch_sub(&mop_rma_nthreads, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mop_rma_threads_lock);
    mop_rma_pending_free(&rt->pending);
    pthread_mutex_destroy(&rt->lock);
    free(rt);
    mop_rma_self = NULL; /* a later destructor's one-sided call starts a new list */
}

static void mop_rma_make_key(void)
{
    mop_rma_exit_key_ok = pthread_key_create(&mop_rma_exit_key, mop_rma_thread_exit) == 0;
}

/* The calling thread's list, created on first use; NULL when out of memory. */
static mop_rma_thread *mop_rma_thread_self(void)
{
    if (__builtin_expect(mop_rma_self != NULL, 1))
        return mop_rma_self;
    pthread_once(&mop_rma_once, mop_rma_make_key);
    mop_rma_thread *rt = calloc(1, sizeof *rt);
    if (!rt)
        return NULL;
    pthread_mutex_init(&rt->lock, NULL);
    mop_rma_pending_init(&rt->pending, MOP_RMA_MAX_PENDING);
    if (mop_rma_exit_key_ok)
        pthread_setspecific(mop_rma_exit_key, rt);
    pthread_mutex_lock(&mop_rma_threads_lock);
    rt->next = mop_rma_threads;
    mop_rma_threads = rt;
    __atomic_fetch_add(&mop_rma_nthreads, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mop_rma_threads_lock);
    mop_rma_self = rt;
    return rt;
}

static inline uint64_t mop_win_bits(MPI_Win w)
{
    return mop_handle_bits(&w, sizeof w);
}


/* END events for operations taken from a list, at t. `completed` is the
 * reason of those still pending (this thread's call completed them). */
static void mop_rma_push_ends(mop_thread *th, uint64_t t, const mop_rma_done *done, size_t n,
                              mop_end_reason completed)
{
    for (size_t i = 0; i < n; i++) {
        mop_end_reason why = done[i].state == MOP_RMA_OTHER_THREAD ? MOP_END_RMA_OTHER_THREAD
                             : done[i].state == MOP_RMA_WIN_FREED  ? MOP_END_RMA_WIN_FREED
                                                                   : completed;
        mop_push_event(th, MOP_EV_END, t, done[i].key, -1, (mop_kind)why, 0, 0);
    }
}

/* Operations other threads completed or freed for us since our last
 * one-sided call end now, at t (later than their true end: the bounds stay
 * valid, only looser). */
static void mop_rma_drain_marked(mop_thread *th, mop_rma_thread *rt, uint64_t t)
{
    if (!rt || !__atomic_load_n(&rt->has_marked, __ATOMIC_ACQUIRE))
        return;
    mop_rma_done done[MOP_RMA_CHUNK];
    size_t n;
    do {
        pthread_mutex_lock(&rt->lock);
        n = mop_rma_pending_take_marked(&rt->pending, done, MOP_RMA_CHUNK);
        if (rt->pending.marked == 0)
            __atomic_store_n(&rt->has_marked, 0, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&rt->lock);
        /* pushed outside the lock: a push may process the queue */
        mop_rma_push_ends(th, t, done, n, MOP_END_COMPLETED);
    } while (n == MOP_RMA_CHUNK);
}

/* A one-sided operation without a request was posted between t0 and t1. */
static void mop_rma_posted(mop_thread *th, uint64_t t0, uint64_t t1, uint16_t fn, MPI_Win win,
                           int target, int64_t bytes, mop_kind kind)
{
    mop_rma_thread *rt = mop_rma_thread_self();
    if (target == MPI_PROC_NULL) { /* moves nothing, needs no synchronization */
        mop_push_event(th, MOP_EV_INCALL, t0, 0, 0, MOP_KIND_NULL, fn, -1);
    } else {
        uint64_t key = MOP_RMA_KEY_BIT; /* never a pending one's: those count from 1 */
        int tracked = -1;
        if (rt) {
            pthread_mutex_lock(&rt->lock);
            uint64_t k = MOP_RMA_KEY_BIT | ++rt->next_key;
            tracked = mop_rma_pending_add(&rt->pending, mop_win_bits(win), target, k, t1);
            pthread_mutex_unlock(&rt->lock);
            if (tracked == 0)
                key = k;
        }
        mop_push_event(th, MOP_EV_BEGIN, t0, key, bytes, kind, fn,
                       mop_win_world_rank(win, target));
        if (tracked != 0) /* no synchronization call will find it: begin-only */
            mop_push_event(th, MOP_EV_FREE, t1, key, -1, (mop_kind)MOP_FREE_UNTRACKED, 0, 0);
    }
    mop_rma_drain_marked(th, rt, t1);
}

/* A request-based operation: a transfer keyed by its request, like MPI_Isend. */
static void mop_rma_requested(mop_thread *th, uint64_t t0, uint64_t t1, uint16_t fn,
                              MPI_Win win, int target, int64_t bytes, mop_kind kind,
                              MPI_Request req)
{
    mop_push_event(th, MOP_EV_BEGIN, t0, mop_key(req), bytes, mop_peer_kind(target, kind), fn,
                   mop_win_world_rank(win, target));
    mop_rma_drain_marked(th, mop_rma_thread_self(), t1);
}

/* A synchronization call that entered at t0 and returned at t1 completed
 * (or, for Win_free, found) the operations on win to target. */
static void mop_rma_synced(mop_thread *th, uint64_t t0, uint64_t t1, MPI_Win win, int target,
                           mop_end_reason completed)
{
    mop_rma_thread *rt = mop_rma_thread_self();
    uint64_t w = mop_win_bits(win);
    if (rt) {
        mop_rma_done done[MOP_RMA_CHUNK];
        size_t n;
        do {
            pthread_mutex_lock(&rt->lock);
            n = mop_rma_pending_take(&rt->pending, w, target, done, MOP_RMA_CHUNK);
            pthread_mutex_unlock(&rt->lock);
            mop_rma_push_ends(th, t1, done, n, completed);
        } while (n == MOP_RMA_CHUNK);
    }
    if (__atomic_load_n(&mop_rma_nthreads, __ATOMIC_RELAXED) > 1) {
        mop_rma_state state = completed == MOP_END_RMA_WIN_FREED ? MOP_RMA_WIN_FREED
                                                                 : MOP_RMA_OTHER_THREAD;
        pthread_mutex_lock(&mop_rma_threads_lock);
        for (mop_rma_thread *o = mop_rma_threads; o; o = o->next) {
            if (o == rt)
                continue;
            pthread_mutex_lock(&o->lock);
            if (mop_rma_pending_mark(&o->pending, w, target, t0, state) > 0)
                __atomic_store_n(&o->has_marked, 1, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&o->lock);
        }
        pthread_mutex_unlock(&mop_rma_threads_lock);
    }
    mop_rma_drain_marked(th, rt, t1);
}

/* ---- shapes ---------------------------------------------------------------- */

/* An operation of count x dt bytes between this process and `target`. */
#define MOP_RMA_OP(name, kind, count, dt, call)                                   \
    MOP_WRAP(name, call, call,                                                    \
             mop_rma_posted(th, t0, t1, MOP_FN_##name, win, target_rank,          \
                            mop_bytes(count, dt), kind))
#define MOP_RMA_REQ(name, kind, count, dt, call)                                  \
    MOP_WRAP(name, call, call,                                                    \
             mop_rma_requested(th, t0, t1, MOP_FN_##name, win, target_rank,       \
                               mop_bytes(count, dt), kind, *request))
#define MOP_RMA_SYNC(name, target, call)                                          \
    MOP_WRAP(name, call, call, mop_rma_synced(th, t0, t1, win, target, MOP_END_COMPLETED))

/* ---- communication calls ------------------------------------------------------
 * Put and Accumulate move origin data to the target (RMA_SEND); Get moves
 * target data into the origin buffer (RMA_RECV), and so do the operations
 * that return a result (Get_accumulate, Fetch_and_op, Compare_and_swap): what
 * completes them at the origin is the result's arrival in the result buffer,
 * and their size is the result's (the origin buffer is ignored with
 * MPI_NO_OP, and is the same size otherwise). */

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win)
{
    MOP_RMA_OP(MPI_Put, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
               PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, win))
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    MOP_RMA_OP(MPI_Get, MOP_KIND_RMA_RECV, origin_count, origin_datatype,
               PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, win))
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    MOP_RMA_OP(MPI_Accumulate, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
               PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank,
                               target_disp, target_count, target_datatype, op, win))
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    MOP_RMA_OP(MPI_Get_accumulate, MOP_KIND_RMA_RECV, result_count, result_datatype,
               PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                   result_count, result_datatype, target_rank, target_disp,
                                   target_count, target_datatype, op, win))
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    MOP_RMA_OP(MPI_Fetch_and_op, MOP_KIND_RMA_RECV, 1, datatype,
               PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp,
                                 op, win))
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win)
{
    MOP_RMA_OP(MPI_Compare_and_swap, MOP_KIND_RMA_RECV, 1, datatype,
               PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype,
                                     target_rank, target_disp, win))
}

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Rput, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
                PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, win, request))
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Rget, MOP_KIND_RMA_RECV, origin_count, origin_datatype,
                PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, win, request))
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Raccumulate, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
                PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                 target_disp, target_count, target_datatype, op, win, request))
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Rget_accumulate, MOP_KIND_RMA_RECV, result_count, result_datatype,
                PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                     result_count, result_datatype, target_rank, target_disp,
                                     target_count, target_datatype, op, win, request))
}

/* ---- large-count variants (MPI-4), where the header declares them ---------- */

#ifdef MOP_HAVE_MPI_Put_c
int MPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win)
{
    MOP_RMA_OP(MPI_Put_c, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
               PMPI_Put_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, win))
}
#endif

#ifdef MOP_HAVE_MPI_Get_c
int MPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win)
{
    MOP_RMA_OP(MPI_Get_c, MOP_KIND_RMA_RECV, origin_count, origin_datatype,
               PMPI_Get_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, win))
}
#endif

#ifdef MOP_HAVE_MPI_Accumulate_c
int MPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count,
                     MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                     MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                     MPI_Win win)
{
    MOP_RMA_OP(MPI_Accumulate_c, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
               PMPI_Accumulate_c(origin_addr, origin_count, origin_datatype, target_rank,
                                 target_disp, target_count, target_datatype, op, win))
}
#endif

#ifdef MOP_HAVE_MPI_Get_accumulate_c
int MPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void *result_addr,
                         MPI_Count result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    MOP_RMA_OP(MPI_Get_accumulate_c, MOP_KIND_RMA_RECV, result_count, result_datatype,
               PMPI_Get_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr,
                                     result_count, result_datatype, target_rank, target_disp,
                                     target_count, target_datatype, op, win))
}
#endif

#ifdef MOP_HAVE_MPI_Rput_c
int MPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Rput_c, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
                PMPI_Rput_c(origin_addr, origin_count, origin_datatype, target_rank,
                            target_disp, target_count, target_datatype, win, request))
}
#endif

#ifdef MOP_HAVE_MPI_Rget_c
int MPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Rget_c, MOP_KIND_RMA_RECV, origin_count, origin_datatype,
                PMPI_Rget_c(origin_addr, origin_count, origin_datatype, target_rank,
                            target_disp, target_count, target_datatype, win, request))
}
#endif

#ifdef MOP_HAVE_MPI_Raccumulate_c
int MPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                      MPI_Win win, MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Raccumulate_c, MOP_KIND_RMA_SEND, origin_count, origin_datatype,
                PMPI_Raccumulate_c(origin_addr, origin_count, origin_datatype, target_rank,
                                   target_disp, target_count, target_datatype, op, win,
                                   request))
}
#endif

#ifdef MOP_HAVE_MPI_Rget_accumulate_c
int MPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr,
                          MPI_Count result_count, MPI_Datatype result_datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                          MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                          MPI_Request *request)
{
    MOP_RMA_REQ(MPI_Rget_accumulate_c, MOP_KIND_RMA_RECV, result_count, result_datatype,
                PMPI_Rget_accumulate_c(origin_addr, origin_count, origin_datatype,
                                       result_addr, result_count, result_datatype,
                                       target_rank, target_disp, target_count,
                                       target_datatype, op, win, request))
}
#endif

/* ---- synchronization calls ----------------------------------------------------
 * Each ends the pending operations it completes at the origin (MPI-4.1
 * §12.5): flush and flush_local of one target, the _all forms, unlock and
 * unlock_all, fence and complete of every operation on the window. Local
 * completion (flush_local, complete, fence) is what ends a point-to-point
 * send too: the origin's buffer is free or filled; see docs/method.md. */

int MPI_Win_flush(int rank, MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_flush, rank, PMPI_Win_flush(rank, win))
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_flush_local, rank, PMPI_Win_flush_local(rank, win))
}

int MPI_Win_flush_all(MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_flush_all, MOP_RMA_ALL_TARGETS, PMPI_Win_flush_all(win))
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_flush_local_all, MOP_RMA_ALL_TARGETS, PMPI_Win_flush_local_all(win))
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_unlock, rank, PMPI_Win_unlock(rank, win))
}

int MPI_Win_unlock_all(MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_unlock_all, MOP_RMA_ALL_TARGETS, PMPI_Win_unlock_all(win))
}

int MPI_Win_fence(int mpi_assert, MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_fence, MOP_RMA_ALL_TARGETS, PMPI_Win_fence(mpi_assert, win))
}

int MPI_Win_complete(MPI_Win win)
{
    MOP_RMA_SYNC(MPI_Win_complete, MOP_RMA_ALL_TARGETS, PMPI_Win_complete(win))
}

/* A correct program completes its operations before freeing their window
 * (§12.2.5), so an operation still pending here had its completion hidden
 * from us; it certainly ended before the window went away: END at the exit,
 * counted in rma_freed_pending. The handle is read first: MPI resets it. */
int MPI_Win_free(MPI_Win *win)
{
    MPI_Win w = *win;
    MOP_WRAP(MPI_Win_free, PMPI_Win_free(win), PMPI_Win_free(win),
             mop_rma_synced(th, t0, t1, w, MOP_RMA_ALL_TARGETS, MOP_END_RMA_WIN_FREED))
}
