/* mop_wrap_xfer.h - the pieces the generated transfer-recording wrappers
 * (gen_wrappers.py -> mop_wrap_generated.c) are made of, on top of MOP_WRAP
 * (mop_wrap_util.h): one event per point-to-point message, the receive half
 * of a blocking call sized from its status, and one event per collective
 * with its kind, message size and communicator size (mop_coll_size.h).
 * Event placement: docs/method.md ("Where the events go", "Collectives"). */
#ifndef MOP_WRAP_XFER_H
#define MOP_WRAP_XFER_H

#include "mop_coll_ops.h"
#include "mop_coll_size.h"
#include "mop_wrap_util.h"

/* An event of `type` for a message of count x dt with rank `peer` of comm
 * and `tag`: kind SEND or RECV, or NULL for MPI_PROC_NULL; arg = the peer's
 * world rank where needed (jobs spanning nodes, traces: mop_message_slow, which
 * also pushes the MATCH of a trace), else -1. Inside MOP_WRAP only. A BEGIN,
 * the one transfer of its call, becomes a POST with the call's exit time when
 * nothing was pushed since the ENTER (mop_post_fusable; the wrapper then pushes
 * no EXIT). */
#define MOP_MESSAGE(type, name, key, kind, peer, tag, count, dt, comm)           \
    MOP_MESSAGE_AS(type, (type) == MOP_EV_BEGIN, name, key, kind, peer, tag, count, dt, comm)

/* MOP_MESSAGE, `fuse`: whether a BEGIN may become a POST (not when another
 * event of the call follows it, as Isendrecv's JOIN does). */
#define MOP_MESSAGE_AS(type, fuse, name, key, kind, peer, tag, count, dt, comm)  \
    do {                                                                          \
        bool mop_post = (fuse) && mop_post_fusable(th, mop_mark);                 \
        mop_event_type mop_type = mop_post ? MOP_EV_POST : (type);                \
        uint64_t mop_t = mop_post ? t1 : t0;                                      \
        if (__builtin_expect(mop_need_peers, 0))                                  \
            mop_message_slow(th, mop_type, mop_t, key, mop_bytes(count, dt),      \
                             mop_peer_kind(peer, kind), MOP_FN_##name, comm, peer, \
                             tag, NULL, dt);                                      \
        else                                                                      \
            mop_push_event(th, mop_type, mop_t, key, mop_bytes(count, dt),        \
                           mop_peer_kind(peer, kind), MOP_FN_##name, -1);         \
        mop_fused |= mop_post;                                                    \
    } while (0)

/* The receive half of a blocking call: its size from the status (the posted
 * capacity when the status has none), its peer the actual source (the
 * status is ours when the caller passed MPI_STATUS_IGNORE). Always inlined:
 * GCC otherwise stops inlining it into MPI_Sendrecv, which cost 12 ns a call
 * (measured). */
__attribute__((always_inline)) static inline void mop_recv_incall(
    mop_thread *th, uint64_t t0, uint16_t fn, int source, const MPI_Status *st, MPI_Count count,
    MPI_Datatype dt, MPI_Comm comm)
{
    int64_t bytes = mop_status_bytes(st); /* 0 from MPI_PROC_NULL (its status says so) */
    if (bytes < 0)
        bytes = mop_bytes(count, dt);
    mop_kind kind = mop_peer_kind(source, MOP_KIND_RECV);
    if (__builtin_expect(mop_need_peers, 0))
        mop_message_slow(th, MOP_EV_INCALL, t0, 0, bytes, kind, fn, comm, st->MPI_SOURCE,
                         st->MPI_TAG, st, dt);
    else
        mop_push_event(th, MOP_EV_INCALL, t0, 0, bytes, kind, fn, -1);
}

/* A collective's kind: blocking, or non-blocking and persistent (one op). */
#define MOP_KIND_COLL_OP(op) ((mop_kind)(MOP_KIND_COLL + MOP_COLL_##op))
#define MOP_KIND_COLL_NB_OP(op) ((mop_kind)(MOP_KIND_COLL + MOP_COLL_NB_OFFSET + MOP_COLL_##op))

/* A collective's event: arg = the communicator size (remote size for an
 * intercommunicator), available to `bytes` as mop_n; root -1 when it has
 * none. In trace mode its MATCH follows. */
#define MOP_COLLECTIVE(type, name, key, kind, comm, root, bytes)                 \
    do {                                                                          \
        int32_t mop_n = mop_coll_comm_size(comm);                                 \
        mop_push_event(th, type, t0, key, bytes, kind, MOP_FN_##name, mop_n);     \
        mop_match_coll(th, t0, comm, root);                                       \
    } while (0)

#endif
