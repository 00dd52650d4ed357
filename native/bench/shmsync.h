/* shmsync.h - flags in node-shared memory that tell one rank that another has
 * done something, without any MPI call. The matching and waitany benchmarks
 * time a receive "once the message has arrived": the sender sets a flag after
 * its send returned, the receiver spins on it (yielding the core, so that an
 * oversubscribed run still makes progress) and only then starts its clock. An
 * MPI message or barrier in its place would pass through the very matching
 * queues being measured.
 *
 * The flags live in an MPI_Win_allocate_shared window over MPI_COMM_WORLD
 * (one cache line per rank and slot), so every rank must be on one node;
 * mo_shm_open() says so otherwise. Accessed with GCC/Clang __atomic builtins
 * (sequentially consistent), which is what the MPI shared-memory model leaves
 * to the language. */
#ifndef MO_SHMSYNC_H
#define MO_SHMSYNC_H
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

enum { MO_SHM_SLOTS = 4, MO_SHM_LINE = 64 };

typedef struct mo_shm {
    MPI_Win win;
    volatile unsigned char *base; /* rank r, slot s at (r * MO_SHM_SLOTS + s) * MO_SHM_LINE */
} mo_shm;

static inline int64_t *mo_shm_flag(const mo_shm *s, int rank, int slot)
{
    return (int64_t *)(void *)(s->base + ((size_t)rank * MO_SHM_SLOTS + (size_t)slot) * MO_SHM_LINE);
}

static inline void mo_shm_set(const mo_shm *s, int rank, int slot, int64_t v)
{
    __atomic_store_n(mo_shm_flag(s, rank, slot), v, __ATOMIC_SEQ_CST);
}

static inline int64_t mo_shm_get(const mo_shm *s, int rank, int slot)
{
    return __atomic_load_n(mo_shm_flag(s, rank, slot), __ATOMIC_SEQ_CST);
}

/* Spins (yielding) until flag (rank, slot) reaches at least v. */
static inline void mo_shm_wait(const mo_shm *s, int rank, int slot, int64_t v)
{
    while (mo_shm_get(s, rank, slot) < v)
        sched_yield();
}

/* Collective over MPI_COMM_WORLD. Returns 0, or -1 with err when the ranks
 * are not all on one node or the window cannot be allocated. */
static inline int mo_shm_open(mo_shm *s, char *err, size_t errlen)
{
    MPI_Comm node;
    int wsize, nsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    int ok = nsize == wsize, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    if (!all) {
        snprintf(err, errlen, "needs every rank on one node (the arrival flags are in shared memory)");
        return -1;
    }
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Aint bytes = wrank == 0 ? (MPI_Aint)wsize * MO_SHM_SLOTS * MO_SHM_LINE : 0;
    void *mine = NULL;
    if (MPI_Win_allocate_shared(bytes, MO_SHM_LINE, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &s->win) !=
        MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Win_allocate_shared failed");
        return -1;
    }
    MPI_Aint size;
    int disp;
    void *base = NULL;
    MPI_Win_shared_query(s->win, 0, &size, &disp, &base);
    s->base = base;
    if (wrank == 0)
        for (int i = 0; i < wsize * MO_SHM_SLOTS; i++)
            mo_shm_set(s, i / MO_SHM_SLOTS, i % MO_SHM_SLOTS, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

static inline void mo_shm_close(mo_shm *s)
{
    MPI_Win_free(&s->win);
}

/* Online cores of the node, for the oversubscription flag (a rank's own
 * affinity mask may be one core when the launcher binds). */
static inline int mo_node_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
#endif
