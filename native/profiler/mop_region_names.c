/* mop_region_names.c - the process-wide table of region names: each name
 * interned once into an id (what region events carry), and the names by id
 * for the profile and the trace. No MPI and no event path: the region API
 * (mop_regions.c) and the output (mop_runtime.c, mop_trace_mpi.c) both use
 * it without using each other. Looking a name up takes no lock (threads
 * enter regions as often as they make MPI calls); only adding a new name
 * does. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "mop_process.h"
#include "mop_region_names.h"

enum { MOP_REGION_NAME_MAX = 64 };

/* Names [1, count) are complete and never change again: a name is written
 * before count is raised past it (release), and readers load count first
 * (acquire), so they compare only finished names. The lock orders writers. */
static pthread_mutex_t mop_regions_lock = PTHREAD_MUTEX_INITIALIZER;
static char mop_region_name_buf[MOP_MAX_REGIONS][MOP_REGION_NAME_MAX] = {
    [MOP_MAX_REGIONS - 1] = "(other regions)"};
static const char *mop_region_name_ptr[MOP_MAX_REGIONS] = {"(no region)"};
static size_t mop_region_count = 1;

/* The id of the name among the first n, 0 when it is not there. */
static uint16_t mop_region_find(const char *name, size_t len, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (strncmp(mop_region_name_buf[i], name, len) == 0 &&
            mop_region_name_buf[i][len] == '\0')
            return (uint16_t)i;
    return 0;
}

/* The id of a name (len bytes, not necessarily NUL-terminated); the last id
 * is shared by every name beyond the table's capacity. */
uint16_t mop_region_intern(const char *name, size_t len)
{
    if (len >= MOP_REGION_NAME_MAX) {
        len = MOP_REGION_NAME_MAX - 1;
        /* Not inside a UTF-8 character: a name cut there would end in bytes
         * that are no character (the JSON writer would show U+FFFD). A
         * character has at most 3 continuation bytes. */
        for (int k = 0; k < 3 && ((unsigned char)name[len] & 0xC0) == 0x80; k++)
            len--;
    }
    uint16_t id = mop_region_find(name, len, __atomic_load_n(&mop_region_count, __ATOMIC_ACQUIRE));
    if (id != 0)
        return id;
    pthread_mutex_lock(&mop_regions_lock);
    size_t n = mop_region_count; /* only changed under the lock */
    id = mop_region_find(name, len, n); /* another thread may have added it */
    if (id == 0) {
        if (n < MOP_MAX_REGIONS - 1) {
            id = (uint16_t)n;
            memcpy(mop_region_name_buf[id], name, len);
            mop_region_name_buf[id][len] = '\0';
            mop_region_name_ptr[id] = mop_region_name_buf[id];
            __atomic_store_n(&mop_region_count, n + 1, __ATOMIC_RELEASE);
        } else {
            /* "(other regions)", written at compile time: never a new name */
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
