/* app_ab.c - blocks of iterations with and without the profiler; see app_ab.h. */
#include "app_ab.h"

#include <mpi.h>

#include "mpi_overlap.h"

static void set_paused(bool want, bool *paused)
{
    if (want != *paused) {
        /* Any level ends a pause; 1 resumes monitoring as well. */
        MPI_Pcontrol(want ? MPI_OVERLAP_PCONTROL_PAUSE : 1);
        *paused = want;
    }
}

void app_ab_step(long block_len, long it, bool *paused)
{
    if (block_len > 0 && it % block_len == 0)
        set_paused(app_ab_paused(it / block_len), paused);
}

void app_ab_end(bool *paused)
{
    set_paused(false, paused);
}
