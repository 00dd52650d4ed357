/* mop_regions.h - region names interned by the region API, for output. */
#ifndef MOP_REGIONS_H
#define MOP_REGIONS_H

#include <stddef.h>

void mpi_overlap_region_begin(const char *name);
void mpi_overlap_region_end(const char *name);

/* Names by region id (index 0 = outside every region); *n entries. */
const char *const *mop_region_names(size_t *n);

#endif
