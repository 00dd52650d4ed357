/* mop_regions.h - the region API's C entry points (include/mpi_overlap.h);
 * the names by id are in mop_region_names.h. */
#ifndef MOP_REGIONS_H
#define MOP_REGIONS_H

#include <stddef.h>

void mpi_overlap_region_begin(const char *name);
void mpi_overlap_region_end(const char *name);

#endif
