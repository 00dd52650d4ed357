/* mop_coll_size.h - a collective's message size (the `bytes` of its event)
 * and communicator size (its `arg`), as defined in docs/method.md
 * ("Collectives"): the per-process block, always from arguments that are
 * significant on the calling rank, so MPI_IN_PLACE never makes it read an
 * ignored send argument. The generated wrappers (gen_wrappers.py) call the
 * variant that fits the declared types: plain int count arrays, or MPI_Count
 * ones (the large-count MPI_*_c functions, suffix _c here too). Sizes are -1
 * when a datatype's size is not known. Needs MPI. */
#ifndef MOP_COLL_SIZE_H
#define MOP_COLL_SIZE_H

#include <mpi.h>
#include <stdint.h>

/* Internal to the library: direct calls, not through the PLT. */
#pragma GCC visibility push(hidden)

/* The communicator size for the event's arg: the remote group's size for
 * an intercommunicator (the group a rooted or all-to-all collective
 * exchanges with). */
int32_t mop_coll_comm_size(MPI_Comm comm);

/* The fixed-count collectives (bcast, reduce, allreduce, scan, exscan,
 * reduce_scatter_block, allgather, alltoall, neighbor_allgather,
 * neighbor_alltoall) are count x size(dt): mop_bytes of mop_wrap_util.h. */

/* Gather/scatter: the root's block (root_count x root_type) on the root,
 * the others' (count x type) elsewhere; 0 on an intercommunicator's
 * non-root process of the root group (root == MPI_PROC_NULL). */
int64_t mop_coll_rooted_bytes(MPI_Comm comm, int root, MPI_Count root_count,
                              MPI_Datatype root_type, MPI_Count count, MPI_Datatype type);

/* Gatherv/scatterv: on the root sum(root_counts[0..n)) x size(root_type) / n
 * (n = mop_coll_comm_size), elsewhere count x size(type). */
int64_t mop_coll_rooted_v_bytes(MPI_Comm comm, int root, int32_t n, const int root_counts[],
                                MPI_Datatype root_type, MPI_Count count, MPI_Datatype type);
int64_t mop_coll_rooted_v_bytes_c(MPI_Comm comm, int root, int32_t n,
                                  const MPI_Count root_counts[], MPI_Datatype root_type,
                                  MPI_Count count, MPI_Datatype type);

/* Allgatherv/alltoallv: sum(counts[0..n)) x size(dt) / n (0 when n <= 0). */
int64_t mop_coll_v_bytes(int32_t n, const int counts[], MPI_Datatype dt);
int64_t mop_coll_v_bytes_c(int32_t n, const MPI_Count counts[], MPI_Datatype dt);

/* Alltoallw: sum_i(counts[i] x size(types[i])) / n (0 when n <= 0). */
int64_t mop_coll_w_bytes(int32_t n, const int counts[], const MPI_Datatype types[]);
int64_t mop_coll_w_bytes_c(int32_t n, const MPI_Count counts[], const MPI_Datatype types[]);

/* Reduce_scatter: counts[my rank] x size(dt). */
int64_t mop_coll_mine_bytes(MPI_Comm comm, const int counts[], MPI_Datatype dt);
int64_t mop_coll_mine_bytes_c(MPI_Comm comm, const MPI_Count counts[], MPI_Datatype dt);

/* The neighbourhood v and w forms: the sums above over the in-neighbours of
 * comm's topology, divided by their number (0 when there are none). */
int64_t mop_coll_neighbor_v_bytes(MPI_Comm comm, const int counts[], MPI_Datatype dt);
int64_t mop_coll_neighbor_v_bytes_c(MPI_Comm comm, const MPI_Count counts[], MPI_Datatype dt);
int64_t mop_coll_neighbor_w_bytes(MPI_Comm comm, const int counts[], const MPI_Datatype types[]);
int64_t mop_coll_neighbor_w_bytes_c(MPI_Comm comm, const MPI_Count counts[],
                                    const MPI_Datatype types[]);

/* The in-degree (out = 0: how many receive blocks a neighbourhood collective
 * has) or out-degree of comm's Cartesian, graph or distributed graph
 * topology; -1 without one or when the MPI cannot tell. */
int mop_coll_degree(MPI_Comm comm, int out);

#pragma GCC visibility pop

#endif
