/* mop_profile_json.h - writes one rank's measures as the "profile" object of
 * the profile document (schema profile-rank-v1; docs/profiler.md). */
#ifndef MOP_PROFILE_JSON_H
#define MOP_PROFILE_JSON_H

#include "json.h"
#include "mop_process.h"

enum { MOP_SITE_FRAMES = 16 }; /* most frames a chain is read with */

/* Names by id; NULL entries are written as "#<id>". region_names[0] is the
 * name of "outside every region". */
typedef struct mop_names {
    const char *const *fn;
    size_t nfn;
    const char *const *region;
    size_t nregion;
    /* The frames of a call-site chain key (mop_stacks.h; at most MOP_SITE_FRAMES),
     * or NULL: no chains. */
    int (*frames)(uint64_t key, uint64_t *out, int max);
    /* Where an address is, "<path>+0x<file offset>" of the executable mapping
     * that holds it ("0x<address>" where none does), into buf; NULL: not known
     * (the sites of the job's statistics are then named by their addresses). */
    void (*place)(uint64_t addr, char *buf, size_t cap);
} mop_names;

/* Writes the value (an object) at the writer's current position. */
void mop_profile_json(mo_json *w, const mop_process *p, const mop_names *names);

#endif
