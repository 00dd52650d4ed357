/* mop_region_names.h - the process-wide table of region names
 * (mop_region_names.c): interned ids for the region events, names by id for
 * output. */
#ifndef MOP_REGION_NAMES_H
#define MOP_REGION_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The id of a name (len bytes, not necessarily NUL-terminated); the last id
 * is shared by every name beyond the table's capacity. */
uint16_t mop_region_intern(const char *name, size_t len);

/* Names by region id (index 0 = outside every region); *n entries. */
const char *const *mop_region_names(size_t *n);

#endif
