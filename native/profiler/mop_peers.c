/* mop_peers.c - world ranks of peers (mop_peers.h): the translation from a
 * communicator's rank, paid only by jobs that need it. */
#include "mop_peers.h"

int mop_need_peers;

int32_t mop_world_rank_slow(MPI_Comm comm, int peer)
{
    if (peer < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return peer;
    /* Only jobs spanning nodes pay for the translation. */
    MPI_Group g, wg;
    int out = MPI_UNDEFINED;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if ((inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
        return -1;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, 1, &peer, wg, &out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    return out == MPI_UNDEFINED ? -1 : out;
}
