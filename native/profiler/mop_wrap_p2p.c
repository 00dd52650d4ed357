/* mop_wrap_p2p.c - PMPI wrappers of point-to-point communication.
 * Event placement (docs/method.md, "Where the events go"): a blocking call
 * moves its message inside the call (XFER_BEGIN and XFER_END in one call:
 * the source's first case); a non-blocking or persistent one begins at its
 * posting call's CALL_ENTER and ends at the CALL_EXIT of the call that
 * returns its completion (mop_wrap_completion.c). */
#include "mop_wrap_util.h"

#define MOP_BLOCKING(name, kind, peer, count, dt, call)                          \
    mop_thread *th = mop_self();                                                  \
    if (!th)                                                                      \
        return call;                                                              \
    uint64_t t0 = mop_now();                                                      \
    mop_enter(th, MOP_FN_##name, t0);                                             \
    int rc = call;                                                                \
    uint64_t t1 = mop_now();                                                      \
    mop_incall(th, t0, mop_bytes(count, dt), mop_peer_kind(peer, kind), MOP_FN_##name, \
               mop_world_rank(comm, peer));                                       \
    mop_exit(th, t1);                                                             \
    return rc;

#define MOP_NONBLOCKING(name, kind, peer, count, dt, call)                       \
    mop_thread *th = mop_self();                                                  \
    if (!th)                                                                      \
        return call;                                                              \
    uint64_t t0 = mop_now();                                                      \
    mop_enter(th, MOP_FN_##name, t0);                                             \
    int rc = call;                                                                \
    uint64_t t1 = mop_now();                                                      \
    if (rc == MPI_SUCCESS)                                                        \
        mop_begin(th, t0, mop_key(*request), mop_bytes(count, dt),                \
                  mop_peer_kind(peer, kind), MOP_FN_##name, mop_world_rank(comm, peer)); \
    mop_exit(th, t1);                                                             \
    return rc;

#define MOP_PERSISTENT(name, kind, peer, count, dt, call)                        \
    mop_thread *th = mop_self();                                                  \
    if (!th)                                                                      \
        return call;                                                              \
    uint64_t t0 = mop_now();                                                      \
    mop_enter(th, MOP_FN_##name, t0);                                             \
    int rc = call;                                                                \
    uint64_t t1 = mop_now();                                                      \
    if (rc == MPI_SUCCESS)                                                        \
        mop_simple(th, MOP_EV_PINIT, t0, mop_key(*request), mop_bytes(count, dt), \
                   mop_peer_kind(peer, kind), MOP_FN_##name, mop_world_rank(comm, peer)); \
    mop_exit(th, t1);                                                             \
    return rc;

/* ---- blocking ---------------------------------------------------------- */

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MOP_BLOCKING(MPI_Send, MOP_KIND_SEND, dest, count, datatype,
                 PMPI_Send(buf, count, datatype, dest, tag, comm))
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MOP_BLOCKING(MPI_Ssend, MOP_KIND_SEND, dest, count, datatype,
                 PMPI_Ssend(buf, count, datatype, dest, tag, comm))
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MOP_BLOCKING(MPI_Bsend, MOP_KIND_SEND, dest, count, datatype,
                 PMPI_Bsend(buf, count, datatype, dest, tag, comm))
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MOP_BLOCKING(MPI_Rsend, MOP_KIND_SEND, dest, count, datatype,
                 PMPI_Rsend(buf, count, datatype, dest, tag, comm))
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Recv, t0);
    int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, st);
    uint64_t t1 = mop_now();
    if (rc == MPI_SUCCESS) {
        int64_t bytes = source == MPI_PROC_NULL ? 0 : mop_status_bytes(st);
        mop_incall(th, t0, bytes >= 0 ? bytes : mop_bytes(count, datatype),
                   mop_peer_kind(source, MOP_KIND_RECV), MOP_FN_MPI_Recv,
                   mop_world_rank(comm, st->MPI_SOURCE));
    }
    mop_exit(th, t1);
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Sendrecv, t0);
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, st);
    uint64_t t1 = mop_now();
    if (rc == MPI_SUCCESS) {
        mop_incall(th, t0, mop_bytes(sendcount, sendtype), mop_peer_kind(dest, MOP_KIND_SEND),
                   MOP_FN_MPI_Sendrecv, mop_world_rank(comm, dest));
        int64_t bytes = source == MPI_PROC_NULL ? 0 : mop_status_bytes(st);
        mop_incall(th, t0, bytes >= 0 ? bytes : mop_bytes(recvcount, recvtype),
                   mop_peer_kind(source, MOP_KIND_RECV), MOP_FN_MPI_Sendrecv,
                   mop_world_rank(comm, st->MPI_SOURCE));
    }
    mop_exit(th, t1);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                     status);
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Sendrecv_replace, t0);
    int rc = PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                   status);
    uint64_t t1 = mop_now();
    if (rc == MPI_SUCCESS) {
        int64_t bytes = mop_bytes(count, datatype);
        mop_incall(th, t0, bytes, mop_peer_kind(dest, MOP_KIND_SEND), MOP_FN_MPI_Sendrecv_replace,
                   mop_world_rank(comm, dest));
        mop_incall(th, t0, bytes, mop_peer_kind(source, MOP_KIND_RECV),
                   MOP_FN_MPI_Sendrecv_replace, mop_world_rank(comm, source));
    }
    mop_exit(th, t1);
    return rc;
}

/* ---- non-blocking ------------------------------------------------------ */

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    MOP_NONBLOCKING(MPI_Isend, MOP_KIND_SEND, dest, count, datatype,
                    PMPI_Isend(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    MOP_NONBLOCKING(MPI_Issend, MOP_KIND_SEND, dest, count, datatype,
                    PMPI_Issend(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    MOP_NONBLOCKING(MPI_Ibsend, MOP_KIND_SEND, dest, count, datatype,
                    PMPI_Ibsend(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    MOP_NONBLOCKING(MPI_Irsend, MOP_KIND_SEND, dest, count, datatype,
                    PMPI_Irsend(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    MOP_NONBLOCKING(MPI_Irecv, MOP_KIND_RECV, source, count, datatype,
                    PMPI_Irecv(buf, count, datatype, source, tag, comm, request))
}

/* ---- persistent -------------------------------------------------------- */

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    MOP_PERSISTENT(MPI_Send_init, MOP_KIND_SEND, dest, count, datatype,
                   PMPI_Send_init(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    MOP_PERSISTENT(MPI_Ssend_init, MOP_KIND_SEND, dest, count, datatype,
                   PMPI_Ssend_init(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    MOP_PERSISTENT(MPI_Bsend_init, MOP_KIND_SEND, dest, count, datatype,
                   PMPI_Bsend_init(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    MOP_PERSISTENT(MPI_Rsend_init, MOP_KIND_SEND, dest, count, datatype,
                   PMPI_Rsend_init(buf, count, datatype, dest, tag, comm, request))
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    MOP_PERSISTENT(MPI_Recv_init, MOP_KIND_RECV, source, count, datatype,
                   PMPI_Recv_init(buf, count, datatype, source, tag, comm, request))
}

int MPI_Start(MPI_Request *request)
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Start(request);
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Start, t0);
    uint64_t key = mop_key(*request);
    int rc = PMPI_Start(request);
    uint64_t t1 = mop_now();
    if (rc == MPI_SUCCESS)
        mop_simple(th, MOP_EV_START, t0, key, -1, MOP_KIND_SEND, 0, -1);
    mop_exit(th, t1);
    return rc;
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Startall(count, array_of_requests);
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Startall, t0);
    int rc = PMPI_Startall(count, array_of_requests);
    uint64_t t1 = mop_now();
    if (rc == MPI_SUCCESS) /* persistent handles stay as they were */
        for (int i = 0; i < count; i++)
            mop_simple(th, MOP_EV_START, t0, mop_key(array_of_requests[i]), -1, MOP_KIND_SEND,
                       0, -1);
    mop_exit(th, t1);
    return rc;
}

int MPI_Request_free(MPI_Request *request)
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Request_free(request);
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Request_free, t0);
    uint64_t key = mop_key(*request);
    int rc = PMPI_Request_free(request);
    uint64_t t1 = mop_now();
    if (rc == MPI_SUCCESS)
        mop_simple(th, MOP_EV_FREE, t0, key, -1, MOP_KIND_SEND, 0, -1);
    mop_exit(th, t1);
    return rc;
}
