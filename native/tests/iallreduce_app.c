/* iallreduce_app.c - an ordinary MPI program that knows nothing of the
 * profiler (no region API, no profiler header): each iteration posts an
 * MPI_Iallreduce, computes for a while and waits for it. Profiled unmodified
 * by tests/test_profile_coll.py, e.g. under Debian's Open MPI.
 * Usage: iallreduce_app [doubles] [iterations] [compute_ms] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "busy_compute.h"


int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int iters = argc > 2 ? atoi(argv[2]) : 10;
    double work_s = (argc > 3 ? atof(argv[3]) : 2.0) / 1000.0;
    double *in = malloc((size_t)(n > 0 ? n : 1) * sizeof *in);
    double *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    if (!in || !out || n < 0 || iters < 0) {
        fprintf(stderr, "iallreduce_app: bad arguments or out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < n; i++)
        in[i] = rank + 1;
    for (int it = 0; it < iters; it++) {
        MPI_Request req;
        MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        compute(work_s);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        /* the sum of 1..size */
        if (n > 0 && out[0] != size * (size + 1) / 2.0) {
            fprintf(stderr, "iallreduce_app: wrong sum %g\n", out[0]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (rank == 0)
        printf("iallreduce_app: %d x MPI_Iallreduce of %d doubles on %d ranks\n", iters, n,
               size);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
