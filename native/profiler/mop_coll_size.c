/* mop_coll_size.c - a collective's message size and communicator size for its
 * transfer event (definitions in mop_coll_size.h and docs/method.md,
 * "Collectives"). Called by the generated collective wrappers after the call
 * returned, outside the time the call is charged with. */
#include "mop_coll_size.h"

#include "mop_wrap_util.h"

int32_t mop_coll_comm_size(MPI_Comm comm)
{
    int inter = 0, size = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return -1;
    int rc = inter ? PMPI_Comm_remote_size(comm, &size) : PMPI_Comm_size(comm, &size);
    return rc == MPI_SUCCESS ? size : -1;
}

/* 1 on the root, 0 on the others, -1 on an intercommunicator's process that
 * takes no part (MPI_PROC_NULL as root). On an intercommunicator the root
 * passes MPI_ROOT and the other group the root's rank, so a rank >= 0 names
 * the root only within an intracommunicator. */
static int mop_is_root(MPI_Comm comm, int root)
{
    if (root == MPI_ROOT)
        return 1;
    if (root == MPI_PROC_NULL)
        return -1;
    int inter = 0, rank = -1;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

int64_t mop_coll_rooted_bytes(MPI_Comm comm, int root, MPI_Count root_count,
                              MPI_Datatype root_type, MPI_Count count, MPI_Datatype type)
{
    int r = mop_is_root(comm, root);
    if (r < 0)
        return 0;
    return r ? mop_bytes(root_count, root_type) : mop_bytes(count, type);
}

int mop_coll_degree(MPI_Comm comm, int out)
{
    int topo = MPI_UNDEFINED;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return -1;
    if (topo == MPI_CART) {
        /* two neighbours per dimension, MPI_PROC_NULL ones included: their
         * blocks are in the buffers all the same */
        int ndims = 0;
        return PMPI_Cartdim_get(comm, &ndims) == MPI_SUCCESS ? 2 * ndims : -1;
    }
    if (topo == MPI_GRAPH) {
        int rank = 0, n = 0;
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
            PMPI_Graph_neighbors_count(comm, rank, &n) != MPI_SUCCESS)
            return -1;
        return n;
    }
    if (topo == MPI_DIST_GRAPH) {
        int in = 0, outd = 0, weighted = 0;
        if (PMPI_Dist_graph_neighbors_count(comm, &in, &outd, &weighted) != MPI_SUCCESS)
            return -1;
        return out ? outd : in;
    }
    return -1;
}

/* The array forms, once for int counts and once for MPI_Count counts
 * (suffix _c). A count of 0 contributes nothing whatever its datatype, so its
 * datatype is not asked (it may be MPI_DATATYPE_NULL). n <= 0 (no topology
 * for the neighbourhood forms) is 0 bytes. */
#define MOP_COLL_ARRAY_FORMS(sfx, count_t)                                            \
    int64_t mop_coll_v_bytes##sfx(int32_t n, const count_t counts[], MPI_Datatype dt)  \
    {                                                                                 \
        if (n <= 0)                                                                   \
            return 0;                                                                 \
        int64_t sum = 0;                                                              \
        for (int32_t i = 0; i < n; i++)                                               \
            sum += (int64_t)counts[i];                                                \
        if (sum == 0)                                                                 \
            return 0;                                                                 \
        int64_t size = mop_type_size(dt);                                             \
        return size < 0 ? -1 : sum * size / n;                                        \
    }                                                                                 \
                                                                                      \
    int64_t mop_coll_w_bytes##sfx(int32_t n, const count_t counts[],                  \
                                  const MPI_Datatype types[])                         \
    {                                                                                 \
        if (n <= 0)                                                                   \
            return 0;                                                                 \
        int64_t sum = 0;                                                              \
        for (int32_t i = 0; i < n; i++) {                                             \
            if (counts[i] == 0)                                                       \
                continue;                                                             \
            int64_t size = mop_type_size(types[i]);                                   \
            if (size < 0)                                                             \
                return -1;                                                            \
            sum += (int64_t)counts[i] * size;                                         \
        }                                                                             \
        return sum / n;                                                               \
    }                                                                                 \
                                                                                      \
    int64_t mop_coll_rooted_v_bytes##sfx(MPI_Comm comm, int root, int32_t n,          \
                                         const count_t root_counts[],                 \
                                         MPI_Datatype root_type, MPI_Count count,     \
                                         MPI_Datatype type)                           \
    {                                                                                 \
        int r = mop_is_root(comm, root);                                              \
        if (r < 0)                                                                    \
            return 0;                                                                 \
        return r ? mop_coll_v_bytes##sfx(n, root_counts, root_type)                   \
                 : mop_bytes(count, type);                                            \
    }                                                                                 \
                                                                                      \
    int64_t mop_coll_mine_bytes##sfx(MPI_Comm comm, const count_t counts[],           \
                                     MPI_Datatype dt)                                 \
    {                                                                                 \
        int rank = 0;                                                                 \
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)                               \
            return -1;                                                                \
        return mop_bytes(counts[rank], dt);                                           \
    }                                                                                 \
                                                                                      \
    int64_t mop_coll_neighbor_v_bytes##sfx(MPI_Comm comm, const count_t counts[],     \
                                           MPI_Datatype dt)                           \
    {                                                                                 \
        return mop_coll_v_bytes##sfx(mop_coll_degree(comm, 0), counts, dt);           \
    }                                                                                 \
                                                                                      \
    int64_t mop_coll_neighbor_w_bytes##sfx(MPI_Comm comm, const count_t counts[],     \
                                           const MPI_Datatype types[])                \
    {                                                                                 \
        return mop_coll_w_bytes##sfx(mop_coll_degree(comm, 0), counts, types);        \
    }

MOP_COLL_ARRAY_FORMS(, int)
MOP_COLL_ARRAY_FORMS(_c, MPI_Count)
