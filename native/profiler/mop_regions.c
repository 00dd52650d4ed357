/* mop_regions.c - the region API (include/mpi_overlap.h) for C and Fortran:
 * each begin/end is an event in the calling thread's queue, so it is ordered
 * with that thread's MPI calls; the event carries the name's id from the
 * process-wide name table (mop_region_names.c). */
#include <stddef.h>
#include <string.h>

#include "mop_region_names.h"
#include "mop_regions.h"
#include "mop_runtime.h"

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
