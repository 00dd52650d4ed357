/* profiled_app.c - a small MPI program with one communication pattern per
 * mode, for the profiler's end-to-end tests (tests/test_profile_integration.py):
 *   post-compute-wait  Isend/Irecv, compute far longer than the transfer, Wait
 *   blocking           only Send/Recv and Sendrecv
 *   mixed              persistent requests, Waitany/Testsome, PROC_NULL, a
 *                      cancelled receive, Pcontrol off/on, nested regions
 *   no-finalize        exchanges, then exits without MPI_Finalize
 *   crash              exchanges, then rank 1 raises SIGSEGV
 *   exit-7             exchanges, says so on stdout and stderr, finalizes,
 *                      then rank 0 exits with status 7
 * Usage: profiled_app MODE [bytes] [iterations] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "busy_compute.h"
#include "mpi_overlap.h"


static void post_compute_wait(char *buf, int n, int iters, int rank, int peer)
{
    for (int i = 0; i < iters; i++) {
        MPI_Request req;
        if (rank == 0)
            MPI_Isend(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req);
        else
            MPI_Irecv(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req);
        compute(0.005);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static void blocking(char *buf, int n, int iters, int rank, int peer)
{
    for (int i = 0; i < iters; i++) {
        if (rank == 0)
            MPI_Send(buf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        compute(0.001);
        MPI_Sendrecv_replace(buf, n, MPI_BYTE, peer, 3, peer, 3, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
    }
}

static void mixed(char *buf, int n, int iters, int rank, int peer)
{
    MPI_Request pers;
    if (rank == 0)
        MPI_Send_init(buf, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &pers);
    else
        MPI_Recv_init(buf, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &pers);
    MPI_OVERLAP_REGION_BEGIN("outer");
    for (int i = 0; i < iters; i++) {
        MPI_OVERLAP_REGION_BEGIN("inner");
        MPI_Start(&pers);
        compute(0.001);
        MPI_Wait(&pers, MPI_STATUS_IGNORE);
        MPI_OVERLAP_REGION_END("inner");
        MPI_Request reqs[2];
        MPI_Isend(buf, 0, MPI_BYTE, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &reqs[0]);
        if (rank == 0)
            MPI_Isend(buf, 8, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &reqs[1]);
        else
            MPI_Irecv(buf, 8, MPI_BYTE, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &reqs[1]);
        int idx, done = 0, outcount, indices[2];
        MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
        while (!done) {
            MPI_Testsome(2, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
            done = outcount == MPI_UNDEFINED;
        }
        /* a receive that never matches, cancelled: no transfer */
        MPI_Request never;
        MPI_Irecv(buf, 8, MPI_BYTE, peer, 99, MPI_COMM_WORLD, &never);
        MPI_Cancel(&never);
        MPI_Wait(&never, MPI_STATUS_IGNORE);
        MPI_Pcontrol(0); /* not monitored: */
        if (rank == 0)
            MPI_Send(buf, n, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Pcontrol(1);
    }
    MPI_OVERLAP_REGION_END("outer");
    MPI_Request_free(&pers);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "post-compute-wait";
    int n = argc > 2 ? atoi(argv[2]) : 1 << 16;
    int iters = argc > 3 ? atoi(argv[3]) : 20;
    char *buf = calloc((size_t)n + 8, 1);
    if (size != 2 || !buf) {
        if (rank == 0)
            fprintf(stderr, "profiled_app needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank;
    if (strcmp(mode, "post-compute-wait") == 0) {
        post_compute_wait(buf, n, iters, rank, peer);
    } else if (strcmp(mode, "blocking") == 0) {
        blocking(buf, n, iters, rank, peer);
    } else if (strcmp(mode, "mixed") == 0) {
        mixed(buf, n, iters, rank, peer);
    } else if (strcmp(mode, "no-finalize") == 0) {
        post_compute_wait(buf, n, iters, rank, peer);
        MPI_Barrier(MPI_COMM_WORLD);
        free(buf);
        exit(0);
    } else if (strcmp(mode, "crash") == 0) {
        post_compute_wait(buf, n, iters, rank, peer);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            raise(SIGSEGV);
        compute(2.0); /* rank 0 is stopped by the launcher meanwhile */
    } else if (strcmp(mode, "exit-7") == 0) {
        post_compute_wait(buf, n, iters, rank, peer);
        printf("profiled_app rank %d: done on stdout\n", rank);
        fprintf(stderr, "profiled_app rank %d: done on stderr\n", rank);
        fflush(stdout);
        free(buf);
        MPI_Finalize();
        return rank == 0 ? 7 : 0;
    } else {
        if (rank == 0)
            fprintf(stderr, "profiled_app: unknown mode '%s'\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
