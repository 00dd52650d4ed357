/* peers_app.c - a message's peer named through every kind of handle, for
 * tests/test_trace_peers.py (`profile --trace` on 2 ranks): the profiler must
 * record the other rank's world rank for each message rank 0 sends or puts.
 *   split      a communicator with the ranks reversed (world rank 0 is its rank 1)
 *   reused     that communicator freed, then one in world order: an MPI may give
 *              the new one the freed handle, whose translation must not be kept
 *   inter      an intercommunicator of the two ranks (peer 0 of its remote group)
 *   windows    a window on a reversed communicator, freed, then one on a
 *              communicator in world order (MPI_Put to the other rank in each)
 * On stdout, rank 0 says whether the second communicator and the second window
 * got the freed handles (for a person reading the test's log). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "two_ranks.h"

static char buf[4][1024];

/* A handle's bits (ints in MPICH, pointers in Open MPI), to tell whether an
 * MPI gave a new object a freed one's handle. */
static unsigned long long handle_bits(const void *handle, size_t size)
{
    unsigned long long bits = 0;
    memcpy(&bits, handle, size < sizeof bits ? size : sizeof bits);
    return bits;
}

/* Rank 0 sends `bytes` to rank `to` of comm; rank 1 receives from `from`. */
static void one_message(MPI_Comm comm, int rank, int to, int from, int bytes)
{
    MPI_Request r;
    if (rank == 0) {
        MPI_Isend(buf[0], bytes, MPI_BYTE, to, 1, comm, &r);
    } else {
        MPI_Irecv(buf[1], bytes, MPI_BYTE, from, 1, comm, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* Rank 0 puts `bytes` into rank `target` of a window over comm. Returns the
 * window's handle bits (freed on return). */
static unsigned long long one_put(MPI_Comm comm, int rank, int target, int bytes)
{
    MPI_Win win;
    MPI_Win_create(buf[2], sizeof buf[2], 1, MPI_INFO_NULL, comm, &win);
    unsigned long long bits = handle_bits(&win, sizeof win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        MPI_Put(buf[3], bytes, MPI_BYTE, target, 0, bytes, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    return bits;
}


int main(int argc, char **argv)
{
    int rank = two_ranks_init(&argc, &argv, "peers_app");
    MPI_Comm reversed, forward, inter;

    /* split: rank 0 sends to rank 0 of `reversed`, rank 1 receives from its rank 1 */
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed);
    unsigned long long reversed_bits = handle_bits(&reversed, sizeof reversed);
    one_message(reversed, rank, 0, 1, 100);
    MPI_Comm_free(&reversed);

    /* reused: ranks as in MPI_COMM_WORLD */
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &forward);
    int reused = handle_bits(&forward, sizeof forward) == reversed_bits;
    one_message(forward, rank, 1, 0, 200);

    /* inter: one rank on each side */
    MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 1 - rank, 7, &inter);
    one_message(inter, rank, 0, 0, 300);
    MPI_Comm_free(&inter);

    /* windows: on a reversed communicator (target 0), then on `forward` (target 1) */
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed);
    unsigned long long first_win = one_put(reversed, rank, 0, 400);
    unsigned long long second_win = one_put(forward, rank, 1, 500);
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&forward);

    if (rank == 0)
        printf("peers_app: communicator handle reused %s, window handle reused %s\n",
               reused ? "yes" : "no", first_win == second_win ? "yes" : "no");
    MPI_Finalize();
    return 0;
}
