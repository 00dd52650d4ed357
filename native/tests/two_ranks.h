/* two_ranks.h - the start of the test programs that run on exactly 2 ranks:
 * MPI_Init, then this rank, or one line and exit status 2 on any other size. */
#ifndef TWO_RANKS_H
#define TWO_RANKS_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int two_ranks_init(int *argc, char ***argv, const char *program)
{
    MPI_Init(argc, argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "%s: needs exactly 2 ranks\n", program);
        MPI_Finalize();
        exit(2);
    }
    return rank;
}

#endif
