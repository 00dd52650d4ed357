/* mpi_overlap.h - the region API of the mpi-overlap profiler.
 *
 * Mark code sections whose overlap you want reported separately:
 *
 *     mpi_overlap_region_begin("halo");
 *     ... post, compute, wait ...
 *     mpi_overlap_region_end("halo");
 *
 * Regions nest; a transfer belongs to the innermost region open when it was
 * posted, computation and MPI call time to the innermost region open while
 * they ran. MPI_Pcontrol(0) stops monitoring and MPI_Pcontrol(1) resumes it.
 * MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE) also pauses the profiler's wrappers
 * until the next MPI_Pcontrol: the calls go straight to the MPI, so a program
 * can time stretches of itself without the profiler's cost beside stretches
 * with it. Pause with no request, region or one-sided epoch open across it,
 * in a program without threads in use (docs/profiler.md, "Settings").
 *
 * The functions are declared weak, so a program compiled with these calls
 * runs unchanged without the profiler; use the MPI_OVERLAP_REGION_* macros,
 * which do nothing when the profiler is not loaded (LD_PRELOAD or
 * -lmpi_overlap). From Fortran: call mpi_overlap_region_begin('halo'); Fortran
 * has no weak symbols, so link such a program with -lmpi_overlap
 * (docs/profiler.md, "Fortran"). */
#ifndef MPI_OVERLAP_H
#define MPI_OVERLAP_H

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_OVERLAP_PCONTROL_PAUSE (-1)

void mpi_overlap_region_begin(const char *name) __attribute__((weak));
void mpi_overlap_region_end(const char *name) __attribute__((weak));

#define MPI_OVERLAP_REGION_BEGIN(name)           \
    do {                                         \
        if (mpi_overlap_region_begin)            \
            mpi_overlap_region_begin(name);      \
    } while (0)
#define MPI_OVERLAP_REGION_END(name)             \
    do {                                         \
        if (mpi_overlap_region_end)              \
            mpi_overlap_region_end(name);        \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
