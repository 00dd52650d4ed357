/* mop_peers.c - world ranks of peers (mop_peers.h): the translation from a
 * communicator's or a window's rank, paid only by jobs that need it.
 *
 * A communicator's (or window's) whole translation is made once, at its first
 * message, and kept as an attribute of it: one world rank per member, freed
 * with it. Translating each message's peer on its own took a group query, a
 * translation and two group frees per message, which was most of the cost per
 * message of a job spanning nodes (docs/profiler.md, "Memory and cost"). */
#include "mop_hot.h"
#include "mop_peers.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

MOP_HOT_FLAG int mop_need_peers;

/* The world rank of each rank of a group, in rank order. */
typedef struct mop_peer_table {
    int n;
    int32_t world[];
} mop_peer_table;

static int mop_comm_keyval = MPI_KEYVAL_INVALID;
static int mop_win_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t mop_keyvals_once = PTHREAD_ONCE_INIT;
/* Held while a table is made and attached, so that two threads' first
 * messages on one communicator attach one table: a second attach would free
 * the first while the other thread may be reading it. */
static pthread_mutex_t mop_tables_lock = PTHREAD_MUTEX_INITIALIZER;
/* Tables deleted so far (with their communicator or window): a freed handle
 * may name a new communicator at once, so a deletion ends every thread's
 * remembered table (mop_last_table). */
static unsigned mop_tables_deleted;

/* The last table this thread used: a program sends most messages on the
 * communicator of the message before, and PMPI_Comm_get_attr costs 7 ns with
 * MPICH and 11 ns with Open MPI (measured; docs/profiler.md, "Memory and cost"). */
typedef struct mop_remembered_table {
    const void *home; /* the mop_table_home it came from */
    uint64_t handle;
    unsigned deleted; /* mop_tables_deleted when it was remembered */
    struct mop_peer_table *t;
} mop_remembered_table;
static _Thread_local mop_remembered_table mop_last_table __attribute__((tls_model("initial-exec")));

static int mop_comm_table_delete(MPI_Comm comm, int keyval, void *table, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    __atomic_fetch_add(&mop_tables_deleted, 1, __ATOMIC_RELEASE);
    free(table);
    return MPI_SUCCESS;
}

static int mop_win_table_delete(MPI_Win win, int keyval, void *table, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    __atomic_fetch_add(&mop_tables_deleted, 1, __ATOMIC_RELEASE);
    free(table);
    return MPI_SUCCESS;
}

/* Made at the first translation (after MPI_Init, as keyvals must be). A
 * duplicate communicator does not inherit the table: it makes its own at its
 * first message. */
static void mop_keyvals_create(void)
{
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, mop_comm_table_delete, &mop_comm_keyval,
                                NULL) != MPI_SUCCESS)
        mop_comm_keyval = MPI_KEYVAL_INVALID;
    if (PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, mop_win_table_delete, &mop_win_keyval,
                               NULL) != MPI_SUCCESS)
        mop_win_keyval = MPI_KEYVAL_INVALID;
}

void mop_group_world_ranks(MPI_Group g, int n, int32_t *out)
{
    MPI_Group wg;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *in = malloc((size_t)n * sizeof *in);
    int *res = malloc((size_t)n * sizeof *res);
    if (in && res) {
        for (int i = 0; i < n; i++)
            in[i] = i;
        PMPI_Group_translate_ranks(g, n, in, wg, res);
        for (int i = 0; i < n; i++)
            out[i] = res[i] == MPI_UNDEFINED ? -1 : res[i];
    } else {
        for (int i = 0; i < n; i++)
            out[i] = -1;
    }
    free(in);
    free(res);
    PMPI_Group_free(&wg);
}

/* g's translation into world ranks; NULL without memory. Its size is stored
 * last, with release, and read with acquire (mop_peer_lookup): another thread
 * may find the table through the MPI attribute, outside mop_tables_lock, and
 * an MPI need not order its attribute calls in a way ThreadSanitizer sees
 * (thread_stress under TSan once read a table another thread was filling). */
static mop_peer_table *mop_peer_table_of(MPI_Group g)
{
    int n = 0;
    PMPI_Group_size(g, &n);
    n = n > 0 ? n : 0;
    mop_peer_table *t = malloc(sizeof *t + (size_t)n * sizeof t->world[0]);
    if (!t)
        return NULL;
    mop_group_world_ranks(g, n, t->world);
    __atomic_store_n(&t->n, n, __ATOMIC_RELEASE);
    return t;
}

static int32_t mop_peer_lookup(const mop_peer_table *t, int peer)
{
    return t && peer < __atomic_load_n(&t->n, __ATOMIC_ACQUIRE) ? t->world[peer] : -1;
}

/* Where a handle kind keeps its table: a communicator's or a window's attribute. */
typedef struct mop_table_home {
    size_t handle_size; /* sizeof(MPI_Comm) or sizeof(MPI_Win) */
    /* The attached table, or NULL when none is. */
    mop_peer_table *(*attached)(const void *handle);
    /* Attaches t; false when it cannot be. */
    bool (*attach)(const void *handle, mop_peer_table *t);
    /* The handle's translation, made now; NULL when it cannot be. */
    mop_peer_table *(*make)(const void *handle);
} mop_table_home;

static mop_peer_table *mop_comm_attached(const void *handle)
{
    void *v = NULL;
    int flag = 0;
    if (mop_comm_keyval == MPI_KEYVAL_INVALID ||
        PMPI_Comm_get_attr(*(const MPI_Comm *)handle, mop_comm_keyval, &v, &flag) != MPI_SUCCESS)
        return NULL;
    return flag ? v : NULL;
}

static bool mop_comm_attach(const void *handle, mop_peer_table *t)
{
    return mop_comm_keyval != MPI_KEYVAL_INVALID &&
           PMPI_Comm_set_attr(*(const MPI_Comm *)handle, mop_comm_keyval, t) == MPI_SUCCESS;
}

/* The group a communicator's peer ranks name: an intercommunicator's remote one. */
static mop_peer_table *mop_comm_make(const void *handle)
{
    MPI_Comm comm = *(const MPI_Comm *)handle;
    int inter = 0;
    MPI_Group g;
    PMPI_Comm_test_inter(comm, &inter);
    if ((inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
        return NULL;
    mop_peer_table *t = mop_peer_table_of(g);
    PMPI_Group_free(&g);
    return t;
}

static mop_peer_table *mop_win_attached(const void *handle)
{
    void *v = NULL;
    int flag = 0;
    if (mop_win_keyval == MPI_KEYVAL_INVALID ||
        PMPI_Win_get_attr(*(const MPI_Win *)handle, mop_win_keyval, &v, &flag) != MPI_SUCCESS)
        return NULL;
    return flag ? v : NULL;
}

static bool mop_win_attach(const void *handle, mop_peer_table *t)
{
    return mop_win_keyval != MPI_KEYVAL_INVALID &&
           PMPI_Win_set_attr(*(const MPI_Win *)handle, mop_win_keyval, t) == MPI_SUCCESS;
}

static mop_peer_table *mop_win_make(const void *handle)
{
    MPI_Group g;
    if (PMPI_Win_get_group(*(const MPI_Win *)handle, &g) != MPI_SUCCESS)
        return NULL;
    mop_peer_table *t = mop_peer_table_of(g);
    PMPI_Group_free(&g);
    return t;
}

static const mop_table_home mop_comm_home = {sizeof(MPI_Comm), mop_comm_attached, mop_comm_attach,
                                             mop_comm_make};
static const mop_table_home mop_win_home = {sizeof(MPI_Win), mop_win_attached, mop_win_attach,
                                            mop_win_make};

/* World rank of rank `peer` of the handle's group, from its attached table,
 * made and attached at its first use. */
static int32_t mop_world_rank_via(const mop_table_home *home, const void *handle, int peer)
{
    uint64_t bits = 0; /* handles are ints (MPICH) or pointers (Open MPI) */
    memcpy(&bits, handle, home->handle_size < sizeof bits ? home->handle_size : sizeof bits);
    unsigned deleted = __atomic_load_n(&mop_tables_deleted, __ATOMIC_ACQUIRE);
    mop_remembered_table *last = &mop_last_table;
    if (last->t && last->home == home && last->handle == bits && last->deleted == deleted)
        return mop_peer_lookup(last->t, peer);
    pthread_once(&mop_keyvals_once, mop_keyvals_create);
    mop_peer_table *t = home->attached(handle);
    if (!t) {
        pthread_mutex_lock(&mop_tables_lock);
        t = home->attached(handle); /* another thread may have attached it meanwhile */
        if (!t) {
            t = home->make(handle);
            if (t && !home->attach(handle, t)) {
                int32_t world = mop_peer_lookup(t, peer);
                free(t); /* not kept: made again next time */
                pthread_mutex_unlock(&mop_tables_lock);
                return world;
            }
        }
        pthread_mutex_unlock(&mop_tables_lock);
    }
    if (t)
        *last = (mop_remembered_table){.home = home, .handle = bits, .deleted = deleted, .t = t};
    return mop_peer_lookup(t, peer);
}

int32_t mop_world_rank_slow(MPI_Comm comm, int peer)
{
    if (peer < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return peer;
    return mop_world_rank_via(&mop_comm_home, &comm, peer);
}

int32_t mop_win_world_rank_slow(MPI_Win win, int target)
{
    if (target < 0)
        return -1;
    return mop_world_rank_via(&mop_win_home, &win, target);
}
