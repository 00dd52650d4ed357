/* mop_coll_ops.h - the collective operations the profiler tells apart, shared
 * by the wrappers (which put the op into a transfer's kind), the bounds engine
 * and the transfer-time table (which keeps one calibrated series per op and
 * communicator size). Pure C, no MPI.
 *
 * An op names the operation and whether it was posted non-blocking: MPI_Bcast
 * and MPI_Ibcast are timed separately because implementations run them with
 * different algorithms (an NBC schedule is often slower than the blocking
 * tuned path). Persistent collectives (MPI_Bcast_init) use the non-blocking op.
 * The order is part of the table format only through the names, never the
 * numbers, so ops may be added anywhere. */
#ifndef MOP_COLL_OPS_H
#define MOP_COLL_OPS_H

#define MOP_COLL_OPS(X)                 \
    X(BARRIER, "barrier")               \
    X(BCAST, "bcast")                   \
    X(GATHER, "gather")                 \
    X(GATHERV, "gatherv")               \
    X(SCATTER, "scatter")               \
    X(SCATTERV, "scatterv")             \
    X(ALLGATHER, "allgather")           \
    X(ALLGATHERV, "allgatherv")         \
    X(ALLTOALL, "alltoall")             \
    X(ALLTOALLV, "alltoallv")           \
    X(ALLTOALLW, "alltoallw")           \
    X(REDUCE, "reduce")                 \
    X(ALLREDUCE, "allreduce")           \
    X(REDUCE_SCATTER, "reduce_scatter") \
    X(REDUCE_SCATTER_BLOCK, "reduce_scatter_block") \
    X(SCAN, "scan")                     \
    X(EXSCAN, "exscan")                 \
    X(NEIGHBOR_ALLGATHER, "neighbor_allgather")   \
    X(NEIGHBOR_ALLGATHERV, "neighbor_allgatherv") \
    X(NEIGHBOR_ALLTOALL, "neighbor_alltoall")     \
    X(NEIGHBOR_ALLTOALLV, "neighbor_alltoallv")   \
    X(NEIGHBOR_ALLTOALLW, "neighbor_alltoallw")

typedef enum mop_coll_op {
#define MOP_COLL_OP_ENUM(id, name) MOP_COLL_##id,
    MOP_COLL_OPS(MOP_COLL_OP_ENUM)
#undef MOP_COLL_OP_ENUM
    MOP_COLL_NOPS
} mop_coll_op;

/* A collective transfer's kind (mop_event.kind, mop_kind): MOP_KIND_COLL +
 * op for a blocking collective, MOP_KIND_COLL + MOP_COLL_NOPS + op for a
 * non-blocking or persistent one. Below 256: kinds travel in 8 bits. */
enum { MOP_COLL_NB_OFFSET = MOP_COLL_NOPS };

#endif
