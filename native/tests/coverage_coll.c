/* coverage_coll.c - every collective the profiler records, for the end-to-end
 * test tests/test_profile_coll.py (2 ranks):
 *   region "blocking"     every blocking collective once
 *   region "nonblocking"  every MPI_I<coll> once: post, compute, wait
 *   region "persistent"   every MPI_<coll>_init (MPI-4, Open MPI 5): init, then
 *                         twice start, compute, wait; then free
 * Each operation has its own message size (docs/method.md, "Collectives"),
 * different where the definition differs between the root and the others, so
 * the test can check each event's size through exact size bins. Arguments
 * that MPI ignores on a rank (the send side with MPI_IN_PLACE, a non-root's
 * receive side) are given as 0 or NULL: a size read from them would show.
 * Neighbourhood collectives run on a distributed graph where each rank has
 * the other as its one in- and out-neighbour. All blocks are MPI_INT except
 * alltoallw's and neighbor_alltoallw's MPI_DOUBLE ones.
 * Usage: coverage_coll [compute_ms] (default 5: far above these transfers) */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "busy_compute.h"
#include "mpi_overlap.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PERSISTENT_COLL 1
#else
#define HAVE_PERSISTENT_COLL 0
#endif

enum mode { BLOCKING, NONBLOCKING, PERSISTENT };


static double work_s = 0.005;

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "coverage_coll: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Blocking: the call. Non-blocking: post, compute, wait. Persistent: init,
 * twice start, compute, wait, then free. */
static void finish(enum mode m, MPI_Request *req, const char *what)
{
    if (m == NONBLOCKING) {
        compute(work_s);
        check(MPI_Wait(req, MPI_STATUS_IGNORE), what);
    } else if (m == PERSISTENT) {
        for (int k = 0; k < 2; k++) {
            check(MPI_Start(req), what);
            compute(work_s);
            check(MPI_Wait(req, MPI_STATUS_IGNORE), what);
        }
        check(MPI_Request_free(req), what);
    }
}

#if HAVE_PERSISTENT_COLL
#define PERSISTENT_CALL(init, ...) init(__VA_ARGS__, MPI_INFO_NULL, &req)
#else
#define PERSISTENT_CALL(init, ...) MPI_ERR_OTHER
#endif

/* One collective in mode m: the blocking, non-blocking or persistent form with
 * the same arguments. */
#define COLL(m, blocking, nonblocking, init, ...)                                        \
    do {                                                                                 \
        MPI_Request req = MPI_REQUEST_NULL;                                              \
        int rc_ = (m) == BLOCKING      ? blocking(__VA_ARGS__)                          \
                  : (m) == NONBLOCKING ? nonblocking(__VA_ARGS__, &req)                 \
                                       : PERSISTENT_CALL(init, __VA_ARGS__);            \
        check(rc_, #blocking);                                                           \
        finish(m, &req, #blocking);                                                      \
    } while (0)

static int sbuf[2048], rbuf[2048];

static void run_all(enum mode m, int rank, MPI_Comm graph)
{
    const MPI_Comm w = MPI_COMM_WORLD;
    const int root = rank == 0;

    COLL(m, MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, w);
    COLL(m, MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, rbuf, 100, MPI_INT, 0, w);
    COLL(m, MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, root ? MPI_IN_PLACE : sbuf, rbuf, 101,
         MPI_INT, MPI_SUM, 0, w);
    COLL(m, MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, MPI_IN_PLACE, rbuf, 102, MPI_INT,
         MPI_SUM, w);
    COLL(m, MPI_Scan, MPI_Iscan, MPI_Scan_init, sbuf, rbuf, 103, MPI_INT, MPI_SUM, w);
    COLL(m, MPI_Exscan, MPI_Iexscan, MPI_Exscan_init, sbuf, rbuf, 104, MPI_INT, MPI_SUM, w);
    COLL(m, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init,
         sbuf, rbuf, 105, MPI_INT, MPI_SUM, w);
    static const int rs_counts[2] = {106, 108};
    COLL(m, MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, sbuf, rbuf,
         rs_counts, MPI_INT, MPI_SUM, w);
    COLL(m, MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, MPI_IN_PLACE, 0, MPI_INT, rbuf,
         110, MPI_INT, w);
    COLL(m, MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, sbuf, 111, MPI_INT, rbuf, 111,
         MPI_INT, w);
    COLL(m, MPI_Neighbor_allgather, MPI_Ineighbor_allgather, MPI_Neighbor_allgather_init, sbuf,
         112, MPI_INT, rbuf, 112, MPI_INT, graph);
    COLL(m, MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, MPI_Neighbor_alltoall_init, sbuf, 113,
         MPI_INT, rbuf, 113, MPI_INT, graph);

    /* rooted at rank 0, which works in place */
    if (root)
        COLL(m, MPI_Gather, MPI_Igather, MPI_Gather_init, MPI_IN_PLACE, 0, MPI_INT, rbuf, 114,
             MPI_INT, 0, w);
    else
        COLL(m, MPI_Gather, MPI_Igather, MPI_Gather_init, sbuf, 114, MPI_INT, NULL, 0, MPI_INT,
             0, w);
    static const int gv_counts[2] = {116, 120}, gv_displs[2] = {0, 116};
    if (root)
        COLL(m, MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, MPI_IN_PLACE, 0, MPI_INT, rbuf,
             gv_counts, gv_displs, MPI_INT, 0, w);
    else
        COLL(m, MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, sbuf, 120, MPI_INT, NULL, NULL,
             NULL, MPI_INT, 0, w);
    if (root)
        COLL(m, MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, sbuf, 122, MPI_INT, MPI_IN_PLACE,
             0, MPI_INT, 0, w);
    else
        COLL(m, MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, NULL, 0, MPI_INT, rbuf, 122,
             MPI_INT, 0, w);
    static const int sv_counts[2] = {124, 128}, sv_displs[2] = {0, 124};
    if (root)
        COLL(m, MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, sbuf, sv_counts, sv_displs,
             MPI_INT, MPI_IN_PLACE, 0, MPI_INT, 0, w);
    else
        COLL(m, MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, NULL, NULL, NULL, MPI_INT,
             rbuf, 128, MPI_INT, 0, w);

    static const int agv_counts[2] = {130, 134}, agv_displs[2] = {0, 130};
    COLL(m, MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, MPI_IN_PLACE, 0, MPI_INT, rbuf,
         agv_counts, agv_displs, MPI_INT, w);
    /* counts[i][j]: what rank i sends to rank j */
    static const int a2av[2][2] = {{136, 138}, {140, 142}};
    const int a2av_send[2] = {a2av[rank][0], a2av[rank][1]};
    const int a2av_recv[2] = {a2av[0][rank], a2av[1][rank]};
    const int a2av_sd[2] = {0, a2av_send[0]}, a2av_rd[2] = {0, a2av_recv[0]};
    COLL(m, MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, sbuf, a2av_send, a2av_sd,
         MPI_INT, rbuf, a2av_recv, a2av_rd, MPI_INT, w);
    /* rank 0 sends ints (144 to itself, 148 to rank 1), rank 1 doubles (73 to
     * rank 0, 75 to itself); displacements in bytes */
    static const int a2aw_send[2][2] = {{144, 148}, {73, 75}};
    const MPI_Datatype a2aw_stype = rank == 0 ? MPI_INT : MPI_DOUBLE;
    const MPI_Datatype a2aw_stypes[2] = {a2aw_stype, a2aw_stype};
    const MPI_Datatype a2aw_rtypes[2] = {MPI_INT, MPI_DOUBLE};
    const int a2aw_scount[2] = {a2aw_send[rank][0], a2aw_send[rank][1]};
    const int a2aw_rcount[2] = {a2aw_send[0][rank], a2aw_send[1][rank]};
    const int a2aw_sd[2] = {0, rank == 0 ? 144 * 4 : 73 * 8};
    const int a2aw_rd[2] = {0, a2aw_rcount[0] * 4};
    COLL(m, MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, sbuf, a2aw_scount, a2aw_sd,
         a2aw_stypes, rbuf, a2aw_rcount, a2aw_rd, a2aw_rtypes, w);

    /* one neighbour, the other rank */
    const int nagv_send = rank == 0 ? 152 : 156;
    const int nagv_recv[1] = {rank == 0 ? 156 : 152}, zero[1] = {0};
    COLL(m, MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, MPI_Neighbor_allgatherv_init,
         sbuf, nagv_send, MPI_INT, rbuf, nagv_recv, zero, MPI_INT, graph);
    const int na2av_send[1] = {rank == 0 ? 160 : 164}, na2av_recv[1] = {rank == 0 ? 164 : 160};
    COLL(m, MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, MPI_Neighbor_alltoallv_init, sbuf,
         na2av_send, zero, MPI_INT, rbuf, na2av_recv, zero, MPI_INT, graph);
    /* rank 0 sends 170 ints and receives 84 doubles, rank 1 the reverse */
    const int na2aw_send[1] = {rank == 0 ? 170 : 84}, na2aw_recv[1] = {rank == 0 ? 84 : 170};
    const MPI_Datatype na2aw_stype[1] = {rank == 0 ? MPI_INT : MPI_DOUBLE};
    const MPI_Datatype na2aw_rtype[1] = {rank == 0 ? MPI_DOUBLE : MPI_INT};
    const MPI_Aint azero[1] = {0};
    COLL(m, MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, MPI_Neighbor_alltoallw_init, sbuf,
         na2aw_send, azero, na2aw_stype, rbuf, na2aw_recv, azero, na2aw_rtype, graph);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "coverage_coll needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 1)
        work_s = atof(argv[1]) / 1000.0;
    for (int i = 0; i < 2048; i++)
        sbuf[i] = i;
    int other = 1 - rank;
    /* weights rather than MPI_UNWEIGHTED, a pointer constant that gcc's
     * access checks take for an empty array with Open MPI's header */
    int weight = 1;
    MPI_Comm graph;
    check(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &other, &weight, 1, &other, &weight,
                                         MPI_INFO_NULL, 0, &graph),
          "MPI_Dist_graph_create_adjacent");

    MPI_OVERLAP_REGION_BEGIN("blocking");
    run_all(BLOCKING, rank, graph);
    MPI_OVERLAP_REGION_END("blocking");
    MPI_OVERLAP_REGION_BEGIN("nonblocking");
    run_all(NONBLOCKING, rank, graph);
    MPI_OVERLAP_REGION_END("nonblocking");
    if (HAVE_PERSISTENT_COLL) {
        MPI_OVERLAP_REGION_BEGIN("persistent");
        run_all(PERSISTENT, rank, graph);
        MPI_OVERLAP_REGION_END("persistent");
    }
    if (rank == 0)
        printf("coverage_coll: persistent collectives %s\n", HAVE_PERSISTENT_COLL ? "yes" : "no");
    MPI_Comm_free(&graph);
    MPI_Finalize();
    return 0;
}
