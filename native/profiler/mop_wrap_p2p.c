/* mop_wrap_p2p.c - the hand-written PMPI wrappers of point-to-point
 * communication: only the request-management calls that the generator
 * (gen_wrappers.py) has no rule for. The transfers themselves (Send, Recv,
 * Sendrecv(_replace), Isend..., *_init and their large-count _c variants) are
 * recorded by generated wrappers (mop_wrap_generated.c, built from
 * mop_wrap_xfer.h). A persistent request's transfer begins at MPI_Start(all)
 * and ends at the CALL_EXIT of the call that returns its completion
 * (mop_wrap_completion.c); MPI_Request_free drops it. */
#include "mop_wrap_util.h"

/* Hand-written: the request is an INOUT argument that MPI may write, so its
 * key is read before the call; and the START event names no message (size and
 * peer were recorded at the *_init call), which no transfer rule describes. */
int MPI_Start(MPI_Request *request)
{
    uint64_t key = mop_key(*request);
    MOP_WRAP(MPI_Start, PMPI_Start(request), PMPI_Start(request),
             mop_push_event(th, MOP_EV_START, t0, key, -1, MOP_KIND_SEND, 0, -1))
}

/* Hand-written: one START event per request of an array, read after the
 * call (persistent handles stay as they were). */
int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    MOP_WRAP(MPI_Startall, PMPI_Startall(count, array_of_requests),
             PMPI_Startall(count, array_of_requests),
             for (int i = 0; i < count; i++)
                 mop_push_event(th, MOP_EV_START, t0, mop_key(array_of_requests[i]), -1,
                                MOP_KIND_SEND, 0, -1))
}

/* Hand-written: MPI sets *request to MPI_REQUEST_NULL, so the key is read
 * before the call, and the request's post is held then (mop_hold_req: the MPI may
 * give the freed handle to another thread's request before the call returns);
 * a FREE event, which a rule for transfers does not make. */
int MPI_Request_free(MPI_Request *request)
{
    uint64_t key = mop_key(*request);
    uint32_t ticket = 0;
    MOP_WRAP(MPI_Request_free, PMPI_Request_free(request),
             (ticket = mop_hold_req(th, key), PMPI_Request_free(request)),
             mop_push_end(th, MOP_EV_FREE, t0, key, -1, MOP_KIND_SEND, ticket))
}
