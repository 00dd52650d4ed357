/* mop_peers.h - a message's peer as a world rank: what picks the intra- or
 * inter-node transfer time in a job spanning nodes, and what matches a
 * traced message with its other end. Translated only when one of them needs
 * it (mop_need_peers, set once at MPI_Init by the runtime), so that other
 * jobs pay nothing for it on the hot path; then through a table per
 * communicator or window, made at its first message and freed with it. */
#ifndef MOP_PEERS_H
#define MOP_PEERS_H

#include <mpi.h>
#include <stdint.h>

/* 1 when peers' world ranks are needed: the job spans several nodes, or a
 * timeline trace is written (set once at MPI_Init). */
extern int mop_need_peers;

int32_t mop_world_rank_slow(MPI_Comm comm, int peer);
/* The world ranks of g's n members in rank order into out (-1: not in
 * MPI_COMM_WORLD, or no memory for the translation). */
void mop_group_world_ranks(MPI_Group g, int n, int32_t *out);
/* World rank of rank `target` of win's group (-1: not known). */
int32_t mop_win_world_rank_slow(MPI_Win win, int target);

/* World rank of rank `peer` of comm, or -1 when only one node is in the job
 * and no trace is written (then the transfer-time class never depends on the
 * peer, and nothing is paid for it on the hot path). */
static inline int32_t mop_world_rank(MPI_Comm comm, int peer)
{
    return __builtin_expect(mop_need_peers, 0) ? mop_world_rank_slow(comm, peer) : -1;
}

/* The same for rank `target` of win's group. */
static inline int32_t mop_win_world_rank(MPI_Win win, int target)
{
    return __builtin_expect(mop_need_peers, 0) ? mop_win_world_rank_slow(win, target) : -1;
}

#endif
