/* matching_app.c - messages that only MPI's own matching rules pair correctly,
 * for tests/test_trace_matching.py (`profile --trace` on 2 ranks, then
 * src/mpi_overlap/trace/match.py). Every logical message has a size of its
 * own (100, 200, ... bytes), so a test can tell a right pairing from a wrong
 * one by the sizes at both ends:
 *   tags       rank 0 sends tag 1 (100 B) then tag 2 (200 B); rank 1 receives
 *              tag 2 first (Irecv) and tag 1 second (Recv)
 *   wildcards  tags 5, 6, 7 (300, 400, 500 B) into three MPI_ANY_SOURCE /
 *              MPI_ANY_TAG Irecvs, and one blocking wildcard Recv (550 B)
 *   comms      tag 1 again on a split communicator with the ranks reversed
 *              (600 B) and on a duplicate of MPI_COMM_WORLD (700 B), received
 *              in the opposite order of the sends
 *   sendrecv   MPI_Sendrecv both ways, tag 9 (800 B each way)
 *   persistent MPI_Send_init/MPI_Recv_init, tag 10 (900 B), started twice
 *   collectives MPI_Barrier on the split communicator, MPI_Allreduce, and
 *              MPI_Bcast from rank 1
 * 11 messages from rank 0 to rank 1 and 1 back: 12 pairs. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "two_ranks.h"

static char buf[8][1024];

int main(int argc, char **argv)
{
    int rank = two_ranks_init(&argc, &argv, "matching_app");
    int peer = 1 - rank;
    MPI_Comm split, dup;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &split); /* rank 0 is rank 1 of split */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int split_peer = rank == 0 ? 0 : 1;               /* the other rank, in split */
    MPI_Request r[4];

    /* tags */
    if (rank == 0) {
        MPI_Isend(buf[0], 100, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(buf[1], 200, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    } else {
        MPI_Irecv(buf[1], 1024, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &r[0]);
        MPI_Recv(buf[0], 1024, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    }

    /* wildcards */
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            MPI_Send(buf[i], 300 + 100 * i, MPI_BYTE, peer, 5 + i, MPI_COMM_WORLD);
        MPI_Send(buf[3], 550, MPI_BYTE, peer, 11, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < 3; i++)
            MPI_Irecv(buf[i], 1024, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[i]);
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        MPI_Recv(buf[3], 1024, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }

    /* comms */
    if (rank == 0) {
        MPI_Isend(buf[0], 600, MPI_BYTE, split_peer, 1, split, &r[0]);
        MPI_Isend(buf[1], 700, MPI_BYTE, peer, 1, dup, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    } else {
        MPI_Irecv(buf[1], 1024, MPI_BYTE, peer, 1, dup, &r[1]);
        MPI_Irecv(buf[0], 1024, MPI_BYTE, split_peer, 1, split, &r[0]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }

    /* sendrecv */
    MPI_Sendrecv(buf[0], 800, MPI_BYTE, peer, 9, buf[1], 1024, MPI_BYTE, peer, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    /* persistent */
    MPI_Request pers;
    if (rank == 0)
        MPI_Send_init(buf[2], 900, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &pers);
    else
        MPI_Recv_init(buf[2], 1024, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &pers);
    for (int i = 0; i < 2; i++) {
        MPI_Start(&pers);
        MPI_Wait(&pers, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&pers);

    /* collectives */
    MPI_Barrier(split);
    int x = rank, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(buf[4], 64, MPI_BYTE, 1, MPI_COMM_WORLD);

    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return sum == 1 ? 0 : 1;
}
