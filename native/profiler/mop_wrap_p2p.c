/* mop_wrap_p2p.c - PMPI wrappers of point-to-point communication.
 * Event placement (docs/method.md, "Where the events go"): a blocking call
 * moves its message inside the call (XFER_BEGIN and XFER_END in one call:
 * the source's first case); a non-blocking or persistent one begins at its
 * posting call's CALL_ENTER and ends at the CALL_EXIT of the call that
 * returns its completion (mop_wrap_completion.c). */
#include "mop_wrap_util.h"

/* An event of `type` for a message of count x dt with `peer` of comm. */
#define MOP_MESSAGE(type, name, key, kind, peer, count, dt)                      \
    mop_push_event(th, type, t0, key, mop_bytes(count, dt), mop_peer_kind(peer, kind), \
                   MOP_FN_##name, mop_world_rank(comm, peer))

#define MOP_BLOCKING(name, kind, peer, count, dt, call)                          \
    MOP_WRAP(name, call, call, MOP_MESSAGE(MOP_EV_INCALL, name, 0, kind, peer, count, dt))
#define MOP_NONBLOCKING(name, kind, peer, count, dt, call)                       \
    MOP_WRAP(name, call, call,                                                    \
             MOP_MESSAGE(MOP_EV_BEGIN, name, mop_key(*request), kind, peer, count, dt))
#define MOP_PERSISTENT(name, kind, peer, count, dt, call)                        \
    MOP_WRAP(name, call, call,                                                    \
             MOP_MESSAGE(MOP_EV_PINIT, name, mop_key(*request), kind, peer, count, dt))

/* The receive half of a blocking call: its size from the status (the posted
 * capacity when the status has none), its peer the actual source. */
static inline void mop_recv_incall(mop_thread *th, uint64_t t0, uint16_t fn, int source,
                                   const MPI_Status *st, int count, MPI_Datatype dt,
                                   MPI_Comm comm)
{
    int64_t bytes = source == MPI_PROC_NULL ? 0 : mop_status_bytes(st);
    mop_push_event(th, MOP_EV_INCALL, t0, 0, bytes >= 0 ? bytes : mop_bytes(count, dt),
                   mop_peer_kind(source, MOP_KIND_RECV), fn,
                   mop_world_rank(comm, st->MPI_SOURCE));
}

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
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    MOP_WRAP(MPI_Recv, PMPI_Recv(buf, count, datatype, source, tag, comm, status),
             PMPI_Recv(buf, count, datatype, source, tag, comm, st),
             mop_recv_incall(th, t0, MOP_FN_MPI_Recv, source, st, count, datatype, comm))
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    MOP_WRAP(MPI_Sendrecv,
             PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, status),
             PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, st),
             MOP_MESSAGE(MOP_EV_INCALL, MPI_Sendrecv, 0, MOP_KIND_SEND, dest, sendcount,
                         sendtype);
             mop_recv_incall(th, t0, MOP_FN_MPI_Sendrecv, source, st, recvcount, recvtype,
                             comm))
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MOP_WRAP(MPI_Sendrecv_replace,
             PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                   status),
             PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                   status),
             MOP_MESSAGE(MOP_EV_INCALL, MPI_Sendrecv_replace, 0, MOP_KIND_SEND, dest, count,
                         datatype);
             MOP_MESSAGE(MOP_EV_INCALL, MPI_Sendrecv_replace, 0, MOP_KIND_RECV, source, count,
                         datatype))
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

/* Start and Request_free name a request MPI may reset: keep its key first. */
int MPI_Start(MPI_Request *request)
{
    uint64_t key = mop_key(*request);
    MOP_WRAP(MPI_Start, PMPI_Start(request), PMPI_Start(request),
             mop_push_event(th, MOP_EV_START, t0, key, -1, MOP_KIND_SEND, 0, -1))
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    /* persistent handles stay as they were */
    MOP_WRAP(MPI_Startall, PMPI_Startall(count, array_of_requests),
             PMPI_Startall(count, array_of_requests),
             for (int i = 0; i < count; i++)
                 mop_push_event(th, MOP_EV_START, t0, mop_key(array_of_requests[i]), -1,
                                MOP_KIND_SEND, 0, -1))
}

int MPI_Request_free(MPI_Request *request)
{
    uint64_t key = mop_key(*request);
    MOP_WRAP(MPI_Request_free, PMPI_Request_free(request), PMPI_Request_free(request),
             mop_push_event(th, MOP_EV_FREE, t0, key, -1, MOP_KIND_SEND, 0, -1))
}
