/* mop_wrap_p2p_special.c - point-to-point wrappers written by hand because
 * what they must record does not follow from their parameter kinds (the
 * generator, gen_wrappers.py, skips every function defined here):
 *
 * - MPI_Isendrecv, MPI_Isendrecv_replace (and _c): one request carries two
 *   transfers, a send and a receive. They are pushed as BEGIN + JOIN with the
 *   request's key, so that the engine ends both at the request's completion
 *   (one Wait closes two transfers) without taking the second for a handle
 *   the MPI shares among requests (docs/method.md, "Where the events go").
 * - MPI_Mprobe, MPI_Improbe: move no data, but the message they match fixes
 *   the peer and the size of the later MPI_Mrecv/MPI_Imrecv, which name
 *   neither a source nor a communicator (needed to turn the source into a
 *   world rank). The calling thread remembers them per message handle.
 * - MPI_Mrecv (_c): a blocking receive (INCALL), size and source from its
 *   status, the communicator from the probe; MPI_MESSAGE_NO_PROC is a receive
 *   from MPI_PROC_NULL.
 * - MPI_Imrecv (_c): BEGIN with the request's key, the probed size and peer.
 * - MPI_Psend_init, MPI_Precv_init (MPI-4 partitioned): persistent transfers
 *   of the whole partitioned buffer (partitions x count x datatype), started
 *   by MPI_Start(all) and ended at completion like Send_init/Recv_init;
 *   MPI_Pready* and MPI_Parrived stay generated, call-only wrappers.
 * - MPI_Grequest_start: a generalized request moves no data through MPI; it
 *   is recorded (kind greq) so that its completion counts in
 *   grequest_completions instead of as an end-only transfer of unknown size.
 *
 * Functions that not every MPI declares are guarded with the MOP_HAVE_MPI_*
 * macros of the generated mop_fn_ids.h. */
#include "mop_idle.h"
#include "mop_wrap_xfer.h"

/* ---- matched messages -------------------------------------------------- */

/* MPI_Message is an int in MPICH and a pointer in Open MPI: keep its bits. */
static inline uint64_t mop_message_key(MPI_Message m)
{
    return mop_handle_bits(&m, sizeof m);
}

/* What a probe told about a message, until its receive asks. A small ring per
 * thread (no lock: a matched receive normally follows its probe in the same
 * thread); searched newest first, since an MPI reuses freed handles. A
 * receive in another thread, or after more than MOP_MATCHED newer probes,
 * finds nothing and falls back on its status (size) and its posted capacity:
 * only the peer's node class in multi-node jobs is then unknown. */
enum { MOP_MATCHED = 32 };
typedef struct mop_matched {
    uint64_t msg;
    int64_t bytes; /* -1 unknown */
    int32_t peer;  /* world rank, -1 unknown */
    MPI_Comm comm; /* for the receive's MATCH in trace mode */
    MPI_Status st;
    bool used;
} mop_matched;
static _Thread_local mop_matched mop_matched_ring[MOP_MATCHED];
static _Thread_local unsigned mop_matched_next;

static void mop_matched_note(MPI_Message msg, MPI_Comm comm, const MPI_Status *st)
{
    if (msg == MPI_MESSAGE_NO_PROC || msg == MPI_MESSAGE_NULL)
        return;
    mop_matched *m = &mop_matched_ring[mop_matched_next++ % MOP_MATCHED];
    *m = (mop_matched){.msg = mop_message_key(msg), .bytes = mop_status_bytes(st),
                       .peer = mop_world_rank(comm, st->MPI_SOURCE), .comm = comm, .st = *st,
                       .used = true};
}

/* The probe's record of msg, forgotten once taken; {-1, -1} when none. */
static mop_matched mop_matched_take(uint64_t msg)
{
    for (unsigned i = 1; i <= MOP_MATCHED; i++) {
        mop_matched *m = &mop_matched_ring[(mop_matched_next - i) % MOP_MATCHED];
        if (m->used && m->msg == msg) {
            mop_matched found = *m; /* used: it was found */
            m->used = false;
            return found;
        }
    }
    return (mop_matched){.bytes = -1, .peer = -1, .comm = MPI_COMM_NULL};
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    MOP_STATUS_OR_OWN(st, status);
    MOP_WRAP(MPI_Mprobe, PMPI_Mprobe(source, tag, comm, message, status),
             (mop_idle_until_message(th, source, tag, comm),
              PMPI_Mprobe(source, tag, comm, message, st)),
             mop_matched_note(*message, comm, st))
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    MOP_STATUS_OR_OWN(st, status);
    MOP_WRAP(MPI_Improbe, PMPI_Improbe(source, tag, comm, flag, message, status),
             PMPI_Improbe(source, tag, comm, flag, message, st),
             if (*flag) mop_matched_note(*message, comm, st))
}

/* The blocking receive of a matched message: the received size from the
 * status, else the probed one, else the posted capacity. */
static void mop_mrecv_incall(mop_thread *th, uint64_t t0, uint16_t fn, uint64_t msg, int no_proc,
                             const MPI_Status *st, int64_t capacity)
{
    mop_matched m = mop_matched_take(msg);
    int64_t bytes = mop_status_bytes(st); /* 0 for MPI_MESSAGE_NO_PROC (source MPI_PROC_NULL) */
    if (bytes < 0)
        bytes = m.bytes >= 0 ? m.bytes : capacity;
    mop_push_event(th, MOP_EV_INCALL, t0, 0, bytes, no_proc ? MOP_KIND_NULL : MOP_KIND_RECV, fn,
                   m.peer);
    /* The message was matched by its probe, whose communicator and status
     * say what it was (unknown communicator: the probe was not seen). */
    mop_match_status(th, t0, m.comm, m.used ? &m.st : st);
}

/* The non-blocking one: BEGIN with the probed size (the completion's status
 * replaces it, as for any receive). */
static void mop_imrecv_begin(mop_thread *th, uint64_t t0, uint16_t fn, uint64_t msg, int no_proc,
                             uint64_t key, int64_t capacity)
{
    mop_matched m = mop_matched_take(msg);
    int64_t bytes = no_proc ? 0 : (m.bytes >= 0 ? m.bytes : capacity);
    mop_push_event(th, MOP_EV_BEGIN, t0, key, bytes, no_proc ? MOP_KIND_NULL : MOP_KIND_RECV, fn,
                   m.peer);
    if (m.used)
        mop_match_status(th, t0, m.comm, &m.st);
    else
        mop_match(th, t0, MPI_COMM_NULL, MPI_ANY_SOURCE, MPI_ANY_TAG);
}

#define MOP_MRECV(name, count)                                                   \
    MOP_STATUS_OR_OWN(st, status);                                                \
    uint64_t msg = mop_message_key(*message);                                     \
    int no_proc = *message == MPI_MESSAGE_NO_PROC;                                \
    MOP_WRAP(name, P##name(buf, count, datatype, message, status),                \
             P##name(buf, count, datatype, message, st),                          \
             mop_mrecv_incall(th, t0, MOP_FN_##name, msg, no_proc, st,            \
                              mop_bytes(count, datatype)))

#define MOP_IMRECV(name, count)                                                  \
    uint64_t msg = mop_message_key(*message);                                     \
    int no_proc = *message == MPI_MESSAGE_NO_PROC;                                \
    MOP_WRAP(name, P##name(buf, count, datatype, message, request),               \
             P##name(buf, count, datatype, message, request),                     \
             mop_imrecv_begin(th, t0, MOP_FN_##name, msg, no_proc, mop_key(*request), \
                              mop_bytes(count, datatype)))

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status)
{
    MOP_MRECV(MPI_Mrecv, count)
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request)
{
    MOP_IMRECV(MPI_Imrecv, count)
}

#ifdef MOP_HAVE_MPI_Mrecv_c
int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Status *status)
{
    MOP_MRECV(MPI_Mrecv_c, count)
}
#endif

#ifdef MOP_HAVE_MPI_Imrecv_c
int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Request *request)
{
    MOP_IMRECV(MPI_Imrecv_c, count)
}
#endif

/* ---- Isendrecv: two transfers on one request --------------------------- */

/* The send as BEGIN, the receive as JOIN, both with the request's key (the
 * BEGIN stays one: the JOIN must come before the call's EXIT). */
#define MOP_PAIR_BEGIN(name, sendcount, sendtype, recvcount, recvtype)           \
    MOP_MESSAGE_AS(MOP_EV_BEGIN, false, name, mop_key(*request), MOP_KIND_SEND, dest, \
                   sendtag, sendcount, sendtype, comm);                           \
    MOP_MESSAGE(MOP_EV_JOIN, name, mop_key(*request), MOP_KIND_RECV, source, recvtag, \
                recvcount, recvtype, comm)

#define MOP_ISENDRECV(name)                                                      \
    MOP_WRAP(name,                                                                \
             P##name(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, \
                     recvtype, source, recvtag, comm, request),                   \
             P##name(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, \
                     recvtype, source, recvtag, comm, request),                   \
             MOP_PAIR_BEGIN(name, sendcount, sendtype, recvcount, recvtype))

#define MOP_ISENDRECV_REPLACE(name)                                              \
    MOP_WRAP(name,                                                                \
             P##name(buf, count, datatype, dest, sendtag, source, recvtag, comm, request), \
             P##name(buf, count, datatype, dest, sendtag, source, recvtag, comm, request), \
             MOP_PAIR_BEGIN(name, count, datatype, count, datatype))

#ifdef MOP_HAVE_MPI_Isendrecv
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Request *request)
{
    MOP_ISENDRECV(MPI_Isendrecv)
}
#endif

#ifdef MOP_HAVE_MPI_Isendrecv_replace
int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    MOP_ISENDRECV_REPLACE(MPI_Isendrecv_replace)
}
#endif

#ifdef MOP_HAVE_MPI_Isendrecv_c
int MPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    MOP_ISENDRECV(MPI_Isendrecv_c)
}
#endif

#ifdef MOP_HAVE_MPI_Isendrecv_replace_c
int MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Request *request)
{
    MOP_ISENDRECV_REPLACE(MPI_Isendrecv_replace_c)
}
#endif

/* ---- partitioned (MPI-4) ------------------------------------------------ */

/* The whole buffer is one persistent transfer: partitions x count x datatype.
 * From the first one on, the waits make no tests first (mop_idle.h). */
#define MOP_PARTITIONED(name, kind, peer)                                        \
    mop_idle_waits_off();                                                         \
    MOP_WRAP(name,                                                                \
             P##name(buf, partitions, count, datatype, peer, tag, comm, info, request), \
             P##name(buf, partitions, count, datatype, peer, tag, comm, info, request), \
             MOP_MESSAGE(MOP_EV_PINIT, name, mop_key(*request), kind, peer, tag,  \
                         (MPI_Count)partitions * count, datatype, comm))

#ifdef MOP_HAVE_MPI_Psend_init
int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    MOP_PARTITIONED(MPI_Psend_init, MOP_KIND_SEND, dest)
}
#endif

#ifdef MOP_HAVE_MPI_Precv_init
int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                   int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    MOP_PARTITIONED(MPI_Precv_init, MOP_KIND_RECV, source)
}
#endif

/* ---- generalized requests ----------------------------------------------- */

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request)
{
    MOP_WRAP(MPI_Grequest_start,
             PMPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request),
             PMPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request),
             mop_push_event(th, MOP_EV_BEGIN, t0, mop_key(*request), 0, MOP_KIND_GREQ,
                            MOP_FN_MPI_Grequest_start, -1))
}
