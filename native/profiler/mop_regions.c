/* mop_regions.c - the region API (include/mpi_overlap.h) for C and Fortran:
 * names are interned once into process-wide ids, and each begin/end is an
 * event in the calling thread's queue, so it is ordered with that thread's MPI
 * calls. Looking a name up takes no lock (threads enter regions as often as
 * they make MPI calls); only adding a new name does. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "mop_process.h"
#include "mop_regions.h"
#include "mop_runtime.h"

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
static uint16_t mop_region_intern(const char *name, size_t len)
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

static void mop_region_event(mop_event_type type, const char *name, size_t len)
{
    mop_thread *th = mop_self();
    if (!th || !name)
        return;
    uint64_t t = mop_now();
    mop_push_event(th, type, t, 0, 0, MOP_KIND_SEND, mop_region_intern(name, len), 0);
}

void mpi_overlap_region_begin(const char *name)
{
    mop_region_event(MOP_EV_REGION_BEGIN, name, name ? strlen(name) : 0);
}

void mpi_overlap_region_end(const char *name)
{
    mop_region_event(MOP_EV_REGION_END, name, name ? strlen(name) : 0);
}

/* Fortran: character arguments come with a hidden length (size_t since
 * gfortran 8 and in ifx); trailing blanks are not part of the name. */
static size_t mop_fortran_len(const char *name, size_t len)
{
    while (len > 0 && name[len - 1] == ' ')
        len--;
    return len;
}

void mpi_overlap_region_begin_(const char *name, size_t len);
void mpi_overlap_region_end_(const char *name, size_t len);
void mpi_overlap_region_begin__(const char *name, size_t len);
void mpi_overlap_region_end__(const char *name, size_t len);
void MPI_OVERLAP_REGION_BEGIN(const char *name, size_t len);
void MPI_OVERLAP_REGION_END(const char *name, size_t len);

void mpi_overlap_region_begin_(const char *name, size_t len)
{
    mop_region_event(MOP_EV_REGION_BEGIN, name, mop_fortran_len(name, len));
}

void mpi_overlap_region_end_(const char *name, size_t len)
{
    mop_region_event(MOP_EV_REGION_END, name, mop_fortran_len(name, len));
}

void mpi_overlap_region_begin__(const char *name, size_t len)
{
    mpi_overlap_region_begin_(name, len);
}

void mpi_overlap_region_end__(const char *name, size_t len)
{
    mpi_overlap_region_end_(name, len);
}

void MPI_OVERLAP_REGION_BEGIN(const char *name, size_t len)
{
    mpi_overlap_region_begin_(name, len);
}

void MPI_OVERLAP_REGION_END(const char *name, size_t len)
{
    mpi_overlap_region_end_(name, len);
}
