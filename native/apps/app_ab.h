/* app_ab.h - the profiler's cost inside one launch (--profiler-ab N): the
 * timed iterations go in blocks of N, alternately with the overlap profiler
 * paused (MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE): its wrappers pass every
 * call straight to the MPI) and running. Launches here draw a pace for their
 * whole length (docs/profiler.md, "Memory and cost"), which widens any
 * comparison of launches; blocks milliseconds apart in one launch
 * share it. The iteration times the apps record already say the rest: the
 * analysis sums them per block (analysis/block_pairs.py).
 * Without the profiler MPI_Pcontrol does nothing and both kinds of block run
 * alike. */
#ifndef MO_APP_AB_H
#define MO_APP_AB_H

#include <stdbool.h>

/* Whether block b (0-based) has the profiler paused: pairs (0, 1), (2, 3), ...
 * hold one block of each kind, the paused one second in even pairs and first
 * in odd ones (running, paused, paused, running, running, ...), so a steady
 * drift of the pace adds as much to either kind. The analysis repeats this
 * rule (src/mpi_overlap/analysis/block_pairs.py: block_paused). */
static inline bool app_ab_paused(long block)
{
    return ((block ^ (block >> 1)) & 1) != 0;
}

/* Before timed iteration `it` (from 0) of blocks of `block_len` iterations
 * (0: no blocks, nothing done): pauses or resumes the profiler where a block
 * starts that differs from the last; *paused holds the state (false before
 * the first iteration). Outside the iteration's time, so the switch's own call
 * is in neither kind of block. */
void app_ab_step(long block_len, long it, bool *paused);

/* After the timed iterations: the profiler resumed if paused. */
void app_ab_end(bool *paused);

#endif
