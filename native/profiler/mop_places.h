/* mop_places.h - where an address is, as the job's statistics name call
 * sites (mop_job_stats.h): "<path>+0x<file offset>" of the executable file
 * mapping of /proc/self/maps that holds it, the offset computed as the
 * analysis computes it from a rank document's "maps" (address - start +
 * mapping offset; profiling/callsites.py), so both name a site alike; the
 * same for every rank running the object, whatever ASLR did. */
#ifndef MOP_PLACES_H
#define MOP_PLACES_H

#include <stddef.h>
#include <stdint.h>

/* Reads the process's executable file mappings (again: libraries come and
 * go). Where /proc is missing, none: every address is named by its value. */
void mop_places_load(void);

/* Into buf: "<path>+0x<offset>", or "0x<address>" where no mapping holds it. */
void mop_place(uint64_t addr, char *buf, size_t cap);

/* Calls fn for each mapping loaded, in /proc/self/maps order: [lo, hi), the
 * file offset of lo, and the file's path. */
void mop_places_each(void (*fn)(void *ctx, uint64_t lo, uint64_t hi, uint64_t off,
                                const char *path),
                     void *ctx);

#endif
