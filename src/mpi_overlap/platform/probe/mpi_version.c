/* Toolchain probe: prints MPI_Get_library_version from rank 0, proving that the
 * toolchain can compile, link and launch an MPI program. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, rank = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_library_version(version, &len);
    if (rank == 0)
        printf("%s\n", version);
    MPI_Finalize();
    return 0;
}
