/* grow.h - one rule for the heap arrays that grow as they are appended to (size
 * lists, the transfer table's points and series, held checks, job-stats lists,
 * trace groups, mapped files): the first growth makes `first` slots, each later
 * one doubles. Header-only: the MPI-free engine and the benchmarks both use it. */
#ifndef MO_GROW_H
#define MO_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* items (NULL or from malloc) reallocated to the next capacity; *cap updated
 * only on success. NULL when there is no memory (or the size would overflow):
 * items and *cap are then as they were, still valid. */
static inline void *mo_grow(void *items, size_t *cap, size_t elem_size, size_t first)
{
    size_t n = *cap ? 2 * *cap : first;
    if (n < *cap || n > SIZE_MAX / elem_size)
        return NULL;
    void *more = realloc(items, n * elem_size);
    if (more)
        *cap = n;
    return more;
}

#endif
