/* mop_region_names.c - the process-wide table of region names: each name
 * interned once into an id (what region events carry), and the names by id
 * for the profile and the trace. No MPI and no event path: the region API
 * (mop_regions.c) and the output (mop_runtime.c, mop_trace_mpi.c) both use
 * it without using each other. Looking a name up takes no lock (threads
 * enter regions as often as they make MPI calls); only adding a new name
 * does.
 *
 * A lookup hashes the name into an index of ids, so it touches the same few
 * cache lines however many names there are. It used to compare the name with
 * every known one (strncmp each): a region event cost 21.5 ns with 3 names,
 * 103 with 30 and 142 with 60, and after a 4 MB sweep of the caches (what an
 * application does between two events) 59, 155 and 191 ns (2026-12-04, MPICH
 * wheel; docs/profiler.md, "Memory and cost"). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mop_limits.h"
#include "mop_region_names.h"

enum {
    MOP_REGION_NAME_MAX = 64,
    /* At most a quarter full, so a probe mostly meets the name or an empty
     * slot at once; 2 KiB of ids. */
    MOP_REGION_INDEX_BITS = 10,
    MOP_REGION_INDEX = 1 << MOP_REGION_INDEX_BITS,
};
_Static_assert(MOP_REGION_INDEX >= 4 * MOP_MAX_REGIONS, "the index stays at most a quarter full");

/* Names [1, count) are complete and never change again: a name is written
 * before its id is published in the index (release), and readers load the
 * id first (acquire), so they compare only finished names. The lock orders
 * writers. */
static pthread_mutex_t mop_regions_lock = PTHREAD_MUTEX_INITIALIZER;
static char mop_region_name_buf[MOP_MAX_REGIONS][MOP_REGION_NAME_MAX] = {
    [MOP_MAX_REGIONS - 1] = "(other regions)"};
static const char *mop_region_name_ptr[MOP_MAX_REGIONS] = {"(no region)"};
static size_t mop_region_count = 1;
/* Slot -> id (0: empty), by open addressing on mop_region_hash. */
static uint16_t mop_region_index[MOP_REGION_INDEX];

static inline uint64_t mop_region_word(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The last len % 8 bytes of a name (len bytes long) as one word: the word
 * ending at its end where it is 8 bytes or longer (one load; it overlaps the
 * word before), else its bytes one by one, never read past its end. No call
 * to memcpy or memcmp of a variable length: those were library calls that
 * made a lookup dearer than comparing with three names one by one. */
static inline uint64_t mop_region_tail(const char *p, size_t len)
{
    if (len >= 8)
        return mop_region_word(p + len - 8);
    uint64_t w = 0;
    for (size_t k = 0; k < len; k++)
        w |= (uint64_t)(unsigned char)p[k] << (8 * k);
    return w;
}

/* The name's words, each folded in by a multiply; the top bits pick the
 * slot. Names are short (at most 63 bytes): a few multiplies. */
static inline size_t mop_region_hash(const char *name, size_t len)
{
    uint64_t h = (len + 1) * 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i + 8 <= len; i += 8)
        h = (h ^ mop_region_word(name + i)) * 0xff51afd7ed558ccdULL;
    if (len % 8)
        h = (h ^ mop_region_tail(name, len)) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
    return (size_t)(h * 0x9e3779b97f4a7c15ULL >> (64 - MOP_REGION_INDEX_BITS));
}

/* Whether id's name is these len bytes. Its buffer holds zeros after the
 * name and is MOP_REGION_NAME_MAX bytes long, so whole words may be read
 * from it wherever the name has them. */
static inline bool mop_region_is(uint16_t id, const char *name, size_t len)
{
    const char *kept = mop_region_name_buf[id];
    if (kept[len] != '\0')
        return false;
    for (size_t i = 0; i + 8 <= len; i += 8)
        if (mop_region_word(kept + i) != mop_region_word(name + i))
            return false;
    return len % 8 == 0 || mop_region_tail(kept, len) == mop_region_tail(name, len);
}

/* The id of the name, 0 when it is not there; *slot: where the probe ended
 * (the name's slot, or the empty one that would take it). */
static uint16_t mop_region_find(const char *name, size_t len, size_t *slot)
{
    size_t i = mop_region_hash(name, len);
    for (;; i = (i + 1) & (MOP_REGION_INDEX - 1)) {
        uint16_t id = __atomic_load_n(&mop_region_index[i], __ATOMIC_ACQUIRE);
        if (id == 0 || mop_region_is(id, name, len)) {
            *slot = i;
            return id;
        }
    }
}

/* The name cut to what the table keeps (fewer than MOP_REGION_NAME_MAX bytes),
 * not inside a UTF-8 character: a name cut there would end in bytes that are
 * no character (the JSON writer would show U+FFFD). A character has at most 3
 * continuation bytes. */
static size_t mop_region_kept_len(const char *name, size_t len)
{
    if (len < MOP_REGION_NAME_MAX)
        return len;
    len = MOP_REGION_NAME_MAX - 1;
    for (int k = 0; k < 3 && ((unsigned char)name[len] & 0xC0) == 0x80; k++)
        len--;
    return len;
}

/* The id of a name (len bytes, not necessarily NUL-terminated); the last id
 * is shared by every name beyond the table's capacity. */
uint16_t mop_region_intern(const char *name, size_t len)
{
    len = mop_region_kept_len(name, len);
    size_t slot;
    uint16_t id = mop_region_find(name, len, &slot);
    if (id != 0)
        return id;
    pthread_mutex_lock(&mop_regions_lock);
    id = mop_region_find(name, len, &slot); /* another thread may have added it */
    size_t n = mop_region_count;            /* only changed under the lock */
    if (id == 0) {
        if (n < MOP_MAX_REGIONS - 1) {
            id = (uint16_t)n;
            memcpy(mop_region_name_buf[id], name, len);
            mop_region_name_buf[id][len] = '\0';
            mop_region_name_ptr[id] = mop_region_name_buf[id];
            __atomic_store_n(&mop_region_count, n + 1, __ATOMIC_RELEASE);
            __atomic_store_n(&mop_region_index[slot], id, __ATOMIC_RELEASE);
        } else {
            /* "(other regions)", written at compile time: never a new name.
             * Names beyond the table are not indexed: each of their events
             * takes this lock, as before. */
            id = MOP_MAX_REGIONS - 1;
            if (n == MOP_MAX_REGIONS - 1) { /* the first name that does not fit */
                mop_region_name_ptr[id] = mop_region_name_buf[id];
                __atomic_store_n(&mop_region_count, (size_t)MOP_MAX_REGIONS, __ATOMIC_RELEASE);
            }
        }
    }
    pthread_mutex_unlock(&mop_regions_lock);
    return id;
}

const char *const *mop_region_names(size_t *n)
{
    *n = __atomic_load_n(&mop_region_count, __ATOMIC_ACQUIRE);
    return mop_region_name_ptr;
}
