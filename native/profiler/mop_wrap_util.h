/* mop_wrap_util.h - small helpers the hand-written PMPI wrappers share:
 * request handles as 64-bit keys, message sizes in bytes, received sizes
 * and cancellation from statuses, peers as world ranks, and MOP_WRAP, the
 * shape of a wrapper that records a transfer. */
#ifndef MOP_WRAP_UTIL_H
#define MOP_WRAP_UTIL_H

#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "mop_fn_ids.h"
#include "mop_peers.h"
#include "mop_runtime.h"

/* A handle's bits as a 64-bit key: handles are ints in MPICH and pointers in
 * Open MPI (requests, messages, windows alike). */
static inline uint64_t mop_handle_bits(const void *handle, size_t size)
{
    uint64_t k = 0;
    memcpy(&k, handle, size < sizeof k ? size : sizeof k);
    return k;
}

static inline uint64_t mop_key(MPI_Request r)
{
    return mop_handle_bits(&r, sizeof r);
}

/* Bytes of one element of dt, -1 when not known (MPI_DATATYPE_NULL, or a
 * size that does not fit an int). The predefined types most messages use
 * have the size of their C type by the standard's C binding, so they skip
 * the library call, which every post paid (about 2 ns each, measured;
 * docs/profiler.md, "Memory and cost"). */
static inline int64_t mop_type_size(MPI_Datatype dt)
{
    if (dt == MPI_BYTE || dt == MPI_CHAR || dt == MPI_UNSIGNED_CHAR)
        return 1;
    if (dt == MPI_DOUBLE)
        return (int64_t)sizeof(double);
    if (dt == MPI_INT)
        return (int64_t)sizeof(int);
    int size = 0;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS || size < 0)
        return -1;
    return size;
}

static inline int64_t mop_bytes(MPI_Count count, MPI_Datatype dt)
{
    int64_t size = mop_type_size(dt);
    return size < 0 ? -1 : (int64_t)count * size;
}

/* The byte count a status holds, read from the MPI's own fields where its
 * mpi.h is known to lay them out so (-1 elsewhere): PMPI_Get_count cost 41
 * instructions per received message on Open MPI 5 and 94 on MPICH 5
 * (callgrind, mo_msgrate; docs/profiler.md, "Memory and cost"). Used only
 * once mop_status_layout_check has compared it with PMPI_Get_count
 * (mop_status_direct). */
#if defined(OPEN_MPI)
#define MOP_STATUS_HAS_COUNT 1
static inline int64_t mop_status_count_field(const MPI_Status *st)
{
    return st->_ucount > (size_t)INT64_MAX ? -1 : (int64_t)st->_ucount;
}
#elif defined(MPICH)
#define MOP_STATUS_HAS_COUNT 1
static inline int64_t mop_status_count_field(const MPI_Status *st)
{
    /* MPICH's MPIR_STATUS_GET_COUNT: bit 0 of the high word is the
     * cancelled flag. */
    return (int64_t)((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32 |
                     (unsigned)st->count_lo);
}
#else
#define MOP_STATUS_HAS_COUNT 0
static inline int64_t mop_status_count_field(const MPI_Status *st)
{
    (void)st;
    return -1;
}
#endif

/* 1 once mop_status_layout_check (at MPI_Init) found mop_status_count_field
 * to agree with PMPI_Get_count on statuses the MPI itself filled. */
extern int mop_status_direct;

/* Received bytes of a completed receive, -1 when not known. Only a receive's
 * size is read from its status (the engine keeps the posted size of every
 * other request), and MPI always writes a completed receive's source: a rank,
 * or MPI_PROC_NULL with count 0. So a status whose source is still
 * MPI_UNDEFINED, as the wrappers fill their own statuses before the call
 * (mop_status_unset), was not a receive's: MPICH leaves a send's status
 * untouched. Neither case calls PMPI_Get_count, which cost 6.5 ns per
 * Irecv+Isend pair (docs/profiler.md, "Memory and cost"). */
static inline int64_t mop_status_bytes(const MPI_Status *st)
{
    if (st->MPI_SOURCE == MPI_UNDEFINED)
        return -1;
    if (st->MPI_SOURCE == MPI_PROC_NULL) /* also Open MPI's sends */
        return 0;
    if (__builtin_expect(mop_status_direct, 1)) {
        /* As PMPI_Get_count with MPI_BYTE: a count above INT_MAX is MPI_UNDEFINED. */
        int64_t n = mop_status_count_field(st);
        return n > INT_MAX ? -1 : n;
    }
    int n = MPI_UNDEFINED;
    if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED)
        return -1;
    return n;
}

/* Marks one of the wrappers' own statuses as not written yet (mop_status_bytes);
 * returns it. */
static inline MPI_Status *mop_status_unset(MPI_Status *st)
{
    st->MPI_SOURCE = MPI_UNDEFINED;
    return st;
}

/* Declares `st`, the status a wrapped call writes: the caller's, or ours
 * (marked unset) when the caller passes MPI_STATUS_IGNORE, so that a receive's
 * size and source can still be read. Ours is marked only when it is used: the
 * store is on every Wait and Test otherwise. */
#define MOP_STATUS_OR_OWN(st, status)                                            \
    MPI_Status mop_own_status;                                                    \
    MPI_Status *st = (status) == MPI_STATUS_IGNORE ? mop_status_unset(&mop_own_status) \
                                                   : (status)

/* What completions must also read from a status, as bits of one word so that
 * the common case tests one load (mop_wrap_completion.c). */
enum {
    MOP_STATUS_CANCEL = 1, /* the program has called MPI_Cancel */
    MOP_STATUS_TRACE = 2,  /* a trace is written: a STATUS event per completion */
};
extern int mop_status_needs;

/* Whether a completed request was cancelled, given mop_status_needs. Only a
 * request the program cancelled can be, so completions skip the query until
 * MPI_Cancel is used. */
static inline int mop_status_cancelled(int needs, const MPI_Status *st)
{
    int flag = 0;
    if (__builtin_expect(needs & MOP_STATUS_CANCEL, 0))
        PMPI_Test_cancelled(st, &flag);
    return flag;
}

/* 1 while a timeline trace is written (set once at MPI_Init by
 * mop_match_start, mop_trace_match.c): the wrappers then also record what
 * matching each message with its other end needs, as MATCH and STATUS events
 * (mop_event.h), and name the communicators they create. A trace also sets
 * mop_need_peers, so point-to-point messages reach the MATCH on the path that
 * is slow anyway (mop_message_slow), and untraced one-node runs test no more
 * flags per message than before; completions test it in mop_status_needs. */
extern int mop_match_on;

void mop_match_slow(mop_thread *th, uint64_t t, MPI_Comm comm, int peer, int tag, int flags);
void mop_status_slow(mop_thread *th, uint64_t t, uint64_t key, const MPI_Status *st);
void mop_comm_created_slow(MPI_Comm comm);
/* A point-to-point event when mop_need_peers is set: the peer as a world rank,
 * then, in trace mode, its MATCH (from the status when st is not NULL), with
 * the layout of its datatype dt (mop_trace_dtype.h). */
void mop_message_slow(mop_thread *th, mop_event_type type, uint64_t t, uint64_t key,
                      int64_t bytes, mop_kind kind, uint16_t fn, MPI_Comm comm, int peer,
                      int tag, const MPI_Status *st, MPI_Datatype dt);

/* MATCH for the point-to-point event just pushed: its communicator, the peer
 * and tag as the call named them (hand-written wrappers whose peer is known
 * otherwise). */
static inline void mop_match(mop_thread *th, uint64_t t, MPI_Comm comm, int peer, int tag)
{
    if (__builtin_expect(mop_match_on, 0))
        mop_match_slow(th, t, comm, peer, tag, 0);
}

/* MATCH for a blocking receive: the source and tag its status reports. */
static inline void mop_match_status(mop_thread *th, uint64_t t, MPI_Comm comm,
                                    const MPI_Status *st)
{
    if (__builtin_expect(mop_match_on, 0))
        mop_match_slow(th, t, comm, st->MPI_SOURCE, st->MPI_TAG, MOP_MATCH_FROM_STATUS);
}

/* MATCH for a collective: its communicator and root (-1: none). */
static inline void mop_match_coll(mop_thread *th, uint64_t t, MPI_Comm comm, int root)
{
    if (__builtin_expect(mop_match_on, 0))
        mop_match_slow(th, t, comm, -1, root, MOP_MATCH_COLL);
}

/* A communicator-creating call returned rc and comm (generated wrappers). */
static inline void mop_comm_created(int rc, MPI_Comm comm)
{
    if (__builtin_expect(mop_match_on, 0) && rc == MPI_SUCCESS)
        mop_comm_created_slow(comm);
}

static inline mop_kind mop_peer_kind(int peer, mop_kind kind)
{
    return peer == MPI_PROC_NULL ? MOP_KIND_NULL : kind;
}

/* The shape of the transfer wrappers: straight through while the profiler is
 * off; otherwise CALL_ENTER, the call, `record` (the transfer's events, only
 * when the call succeeded: a failed call moved nothing), CALL_EXIT. `record`
 * sees th, t0, t1 and rc, and mop_mark, where the queue stood after the ENTER;
 * a post that records its BEGIN and EXIT as one POST event (MOP_MESSAGE) sets
 * mop_fused, and no EXIT follows (the CPU-time accounting, mop_cpu.h, sees its
 * time all the same). `off` is the call made when the profiler is off (the
 * caller's own status arguments, where `call` passes ours). */
#define MOP_WRAP(name, off, call, record)                                        \
    mop_thread *th = mop_self();                                                  \
    if (!th)                                                                      \
        return off;                                                               \
    uint64_t t0 = mop_now();                                                      \
    mop_enter(th, MOP_FN_##name, t0, MOP_CALLER());                               \
    __attribute__((unused)) uint64_t mop_mark = mop_post_mark(th);                \
    bool mop_fused = false;                                                       \
    int rc = call;                                                                \
    uint64_t t1 = mop_now();                                                      \
    if (rc == MPI_SUCCESS) {                                                      \
        record;                                                                   \
    }                                                                             \
    if (!mop_fused)                                                               \
        mop_exit(th, t1);                                                         \
    else /* the POST stands for the EXIT */                                       \
        mop_cpu_exit(&th->cpu, t1);                                               \
    return rc;

/* Before a call that may complete or free request `key`: with threads in
 * use, holds the request's post in the owner table (mop_xthread.h: before the
 * call, because the MPI may give a freed handle to another thread's new
 * request at once; MPI_REQUEST_NULL has none). Returns the ticket for the
 * request's mop_push_end, or for mop_unhold when it did not complete; 0
 * (nothing held) without threads. */
static inline uint32_t mop_hold_req(mop_thread *th, uint64_t key)
{
    return __builtin_expect(mop_xt_on, 0) && key != mop_key(MPI_REQUEST_NULL)
               ? mop_xt_hold(th->xt_id, key)
               : 0;
}

/* Handles that are saved before a completion call (which may overwrite them
 * with MPI_REQUEST_NULL), with room on the stack for the common case; with
 * threads in use, also the tickets of their holds (mop_hold_req), so that
 * each completion's END goes to the thread that posted its request. */
enum { MOP_STACK_REQS = 64 };
typedef struct mop_saved_reqs {
    uint64_t stack_keys[MOP_STACK_REQS];
    MPI_Status stack_st[MOP_STACK_REQS];
    uint32_t stack_tickets[MOP_STACK_REQS];
    uint64_t *keys;
    MPI_Status *st;     /* our statuses when the caller ignores them */
    uint32_t *tickets;  /* NULL: none held (no threads, a query, no memory) */
    int n;              /* tickets' length */
} mop_saved_reqs;

/* Returns 0, or -1 when memory for a long array is not available (then the
 * call goes through unobserved, and its completions show up as end-less
 * transfers, counted). `hold`: the call may complete or free the requests
 * (not a query); their posts are held when threads are in use. */
int mop_saved_reqs_init(mop_saved_reqs *s, mop_thread *th, int n, const MPI_Request *reqs,
                        int need_status, int hold);
/* Lets go of the holds that no END took (keeps them when the call `failed`
 * without reporting completions), and frees the arrays. */
void mop_saved_reqs_free(mop_saved_reqs *s, mop_thread *th, int failed);

/* The ticket of request i's hold, which its END takes (0: none). */
static inline uint32_t mop_saved_ticket(mop_saved_reqs *s, int i)
{
    if (__builtin_expect(s->tickets == NULL, 1))
        return 0;
    uint32_t ticket = s->tickets[i];
    s->tickets[i] = 0;
    return ticket;
}

#endif
