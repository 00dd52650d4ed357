/* mop_fortran.h - what the Fortran entry points (mop_fortran.c and the
 * generated mop_fortran_generated.c) share: the addresses of the Fortran
 * sentinels (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE, ...) and the
 * values of .TRUE./.FALSE., recorded by a Fortran routine compiled with the
 * MPI's own mpif.h (mop_fortran_sentinels.f90), scratch arrays for converted
 * handles and statuses, and the macro that defines one shim under every
 * common Fortran name mangling.
 *
 * Each shim converts its arguments with the MPI's f2c/c2f functions and calls
 * the C MPI_ function, which is this library's C wrapper: events are recorded
 * there only, so a Fortran call is recorded once whether the MPI's own
 * Fortran bindings call MPI_ (MPICH) or PMPI_ (Open MPI). */
#ifndef MOP_FORTRAN_H
#define MOP_FORTRAN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "mop_runtime.h"

/* Integer arrays (counts, displacements, ranks, indices) are passed to C
 * unconverted, as every MPI's own Fortran bindings do where the sizes agree. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "the Fortran shims need MPI_Fint to be a C int");

typedef struct mop_f_state {
    const void *in_place, *bottom, *status_ignore, *statuses_ignore, *errcodes_ignore;
    int status_size; /* MPI_STATUS_SIZE: the stride of a Fortran status array */
    MPI_Fint true_value, false_value;
    int ready;
} mop_f_state;

extern mop_f_state mop_f;

/* Records the sentinels (once; any thread may get here first). */
void mop_f_setup(void);

/* At the start of every shim: the sentinels, and the shim's call site (its
 * return address into the program) for the C wrapper it calls, whose own
 * return address is in this shim (mop_enter takes it). A shim whose C function
 * has no wrapper (address arithmetic) leaves it for the next wrapper entered:
 * in a Fortran program that is the next shim's, which sets its own first. */
static inline void mop_f_enter_at(uint64_t site)
{
    if (__builtin_expect(!__atomic_load_n(&mop_f.ready, __ATOMIC_ACQUIRE), 0))
        mop_f_setup();
    mop_thread *th = mop_tls;
    if (th)
        th->f_site = site;
}
#define mop_f_enter() mop_f_enter_at(MOP_CALLER())

/* A choice buffer: the Fortran MPI_IN_PLACE / MPI_BOTTOM are variables whose
 * addresses the program passes; C has its own constants for them. */
static inline void *mop_f_buf(void *p)
{
    if (p == mop_f.in_place)
        return MPI_IN_PLACE;
    if (p == mop_f.bottom)
        return MPI_BOTTOM;
    return p;
}

static inline int mop_f_status_ignored(const MPI_Fint *st)
{
    return (const void *)st == mop_f.status_ignore;
}

static inline int mop_f_statuses_ignored(const MPI_Fint *st)
{
    return (const void *)st == mop_f.statuses_ignore;
}

static inline MPI_Fint mop_f_logical(int c)
{
    return c ? mop_f.true_value : mop_f.false_value;
}

static inline int mop_f_from_logical(MPI_Fint f)
{
    return f != mop_f.false_value;
}

/* Index out: Fortran counts from 1. */
static inline MPI_Fint mop_f_index(int c)
{
    return c == MPI_UNDEFINED || c < 0 ? c : c + 1;
}

/* Scratch for n elements of `elem` bytes: `stack` (room for MOP_F_STACK) when
 * they fit, else the heap; NULL when out of memory. n <= 0 gets `stack`. */
enum { MOP_F_STACK = 64 };
void *mop_f_scratch(void *stack, int n, size_t elem);
void mop_f_release(void *p, const void *stack);

/* How many peers an array argument of a (neighbourhood) collective on comm
 * has: MOP_F_PEERS_ALL = comm size (remote size of an intercommunicator);
 * MOP_F_PEERS_IN / _OUT = in/out-degree of its virtual topology. -1 when it
 * cannot be told. */
enum { MOP_F_PEERS_ALL, MOP_F_PEERS_IN, MOP_F_PEERS_OUT };
int mop_f_peers(MPI_Comm comm, int which);

/* The MPI's own Fortran entry point `name` (lower case, no mangling: "waitall"),
 * its PMPI_ form in any mangling, or NULL. Used when a shim cannot get memory
 * for its conversions: the call then goes to the MPI unconverted (counted as
 * out_of_memory; under MPIs whose Fortran bindings call PMPI_ it is not
 * observed). */
void *mop_f_mpi_entry(const char *name);
/* Out of memory with no fallback: the MPI error MPI_ERR_NO_MEM, raised on
 * MPI_COMM_WORLD as the MPI itself would. */
int mop_f_no_memory(const char *name);

/* One shim under the manglings compilers use for external names: lower case
 * with one underscore (gfortran, ifort/ifx, nvfortran, flang), two
 * (g77-style -fsecond-underscore), none (xlf), and upper case (Cray, some
 * Windows compilers). */
#define MOP_F_ALIAS(impl, sym) extern __typeof__(impl) sym __attribute__((alias(#impl)));
#define MOP_F_ENTRY(impl, lower, upper)                                               \
    MOP_F_ALIAS(impl, lower##_) MOP_F_ALIAS(impl, lower##__) MOP_F_ALIAS(impl, lower) \
    MOP_F_ALIAS(impl, upper)

/* mpi_f08. Its entry points are Fortran routines of the MPI's own, named
 * mpi_<name>_f08_ by the compilers the Debian MPIs are built with; each MPI
 * routes them differently (docs/profiler.md, "Fortran"):
 *
 * Open MPI 4: every MPI_X_f08 passes its arguments unchanged to the routine
 * behind the mpif.h entry mpi_x_ (derived-type handles are their one integer,
 * buffers plain addresses, TYPE(MPI_Status) the integer status layout, the
 * sentinels the same variables), which calls PMPI_; only ierror is OPTIONAL
 * (NULL when absent, which every shim accepts). So the mpif.h shims serve as
 * they are (MOP_F08_OMPI_ENTRY).
 *
 * MPICH 4.0: routines with a choice buffer (mpi_x_f08ts_, C descriptors) call
 * the C MPI_ functions and so reach the C wrappers; the others (mpi_x_f08_)
 * call PMPI_ directly. They take handles as their integer, LOGICALs and ierror
 * as mpif.h does, and TYPE(MPI_Status) as the C struct MPI_F08_status: those
 * without a status are served by the mpif.h shim, those with one by a variant
 * converting with MPI_Status_f082c / c2f08 (MOP_F08_MPICH_ENTRY).
 *
 * Other MPIs' mpi_f08 entry points are not known here, so nothing is defined
 * under their names. */
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION == 4
#define MOP_F08_OMPI4 1
#define MOP_F08_OMPI_ENTRY(impl, lower) MOP_F_ALIAS(impl, lower##_f08_)
#else
#define MOP_F08_OMPI4 0
#define MOP_F08_OMPI_ENTRY(impl, lower)
#endif

#if defined(MPICH_NUMVERSION) && !defined(OPEN_MPI) && !defined(I_MPI_VERSION) && \
    MPICH_NUMVERSION >= 40000000 && MPICH_NUMVERSION < 40100000
#define MOP_F08_MPICH4 1
#define MOP_F08_MPICH_ENTRY(impl, lower) MOP_F_ALIAS(impl, lower##_f08_)

static inline int mop_f08_status_ignored(const MPI_F08_status *st)
{
    return st == MPI_F08_STATUS_IGNORE;
}

static inline int mop_f08_statuses_ignored(const MPI_F08_status *st)
{
    return st == MPI_F08_STATUSES_IGNORE;
}

/* The MPI's own mpi_f08 routine `name` (its PMPI form), or NULL. */
void *mop_f08_mpi_entry(const char *name);
#else
#define MOP_F08_MPICH4 0
#define MOP_F08_MPICH_ENTRY(impl, lower)
#endif

/* MPI_INIT, MPI_FINALIZE...: one routine serves all. */
#define MOP_F08_ENTRY(impl, lower) MOP_F08_OMPI_ENTRY(impl, lower) MOP_F08_MPICH_ENTRY(impl, lower)

#endif
