/* mop_places.c - the executable file mappings of the process, for naming
 * addresses by file and offset; see mop_places.h. The table is this module's
 * state, read under the runtime's lock (profiles are made one at a time). */
#define _POSIX_C_SOURCE 200809L
#include "mop_places.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"

typedef struct mop_mapping {
    uint64_t lo, hi, off;
    char *path;
} mop_mapping;

static mop_mapping *mop_maps;
static size_t mop_nmaps, mop_maps_cap;

void mop_places_load(void)
{
    for (size_t i = 0; i < mop_nmaps; i++)
        free(mop_maps[i].path);
    mop_nmaps = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4352], path[4096];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off;
        char perms[8];
        path[0] = '\0';
        /* the same lines as the rank document's "maps" (mop_output.c) */
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, path) < 4)
            continue;
        if (perms[2] != 'x' || path[0] != '/')
            continue;
        if (mop_nmaps == mop_maps_cap) {
            mop_mapping *more = mo_grow(mop_maps, &mop_maps_cap, sizeof *more, 64);
            if (!more)
                break; /* the addresses it would hold are named by their values */
            mop_maps = more;
        }
        char *copy = strdup(path);
        if (!copy)
            break;
        mop_maps[mop_nmaps++] = (mop_mapping){lo, hi, off, copy};
    }
    if (f)
        fclose(f);
}

void mop_places_each(void (*fn)(void *ctx, uint64_t lo, uint64_t hi, uint64_t off,
                                const char *path),
                     void *ctx)
{
    for (size_t i = 0; i < mop_nmaps; i++)
        fn(ctx, mop_maps[i].lo, mop_maps[i].hi, mop_maps[i].off, mop_maps[i].path);
}

void mop_place(uint64_t addr, char *buf, size_t cap)
{
    for (size_t i = 0; i < mop_nmaps; i++) {
        const mop_mapping *m = &mop_maps[i];
        if (m->lo <= addr && addr < m->hi) {
            snprintf(buf, cap, "%s+0x%llx", m->path,
                     (unsigned long long)(addr - m->lo + m->off));
            return;
        }
    }
    snprintf(buf, cap, "0x%llx", (unsigned long long)addr);
}
