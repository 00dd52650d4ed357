/* critical_path_app.c - a transfer whose hiding cannot shorten the run, for
 * tests/test_predict_gains_app.py (issue 36, "Advice gains from replay"): rank 0
 * posts a 1 MiB MPI_Isend and waits for it at once (no computation between:
 * the profile advises moving computation there), while rank 1 computes, then
 * receives it with MPI_Recv and computes again. Rank 1 is the critical path:
 * rank 0's MPI_Wait only waits for rank 1's MPI_Recv, so hiding rank 0's
 * transfer shortens rank 0's wait and not the run. Both end in an MPI_Barrier
 * after rank 1's last computation: MPI_Finalize's recorded enter comes after
 * the profiler's end clock exchange, a collective, so a rank's last gap holds
 * its wait for the others (docs/method.md, "Advice gains from replay"); the
 * barrier keeps that wait in an MPI call, where the replay models it.
 *
 * Usage: critical_path_app [reps (5)] [compute ms per phase (10)] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdlib.h>

#include "busy_compute.h"

enum { BYTES = 1 << 20 };

static char buf[BYTES];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    double phase_s = (argc > 2 ? atof(argv[2]) : 10.0) * 1e-3;
    if (size != 2 || reps < 1 || phase_s < 0) {
        if (rank == 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_Finalize();
        return 2;
    }
    for (int i = 0; i < reps; i++) {
        if (rank == 0) {
            MPI_Request req;
            MPI_Isend(buf, BYTES, MPI_CHAR, 1, i, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            compute(phase_s);
            MPI_Recv(buf, BYTES, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            compute(phase_s);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
