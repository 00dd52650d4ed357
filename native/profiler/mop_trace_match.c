/* mop_trace_match.c - what matching a message with its other end needs, in
 * trace mode only (docs/profiler.md, "Message matching"): an id for every
 * communicator that is the same on all its member ranks, the MATCH event
 * after each point-to-point or collective transfer event (communicator, tag,
 * peer or root) and the STATUS event after each completion (the source and
 * tag a wildcard receive matched).
 *
 * A communicator's id is derived from its group, as world ranks, and the
 * number of communicators with that group this rank has created before it:
 * communicator creation is collective over the new group, and a program
 * creates communicators of one group in the same order on each of its
 * members, so every member derives the same id without communicating. The
 * id is kept as an attribute of the communicator (freed with it, not copied
 * by MPI_Comm_dup), and the group is written into the trace once per
 * communicator (a COMMS chunk), so that the analysis can turn a status's
 * source into a world rank. Untraced runs never reach this file: the
 * wrappers test mop_match_on first. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "mop_hot.h"
#include "fingerprint.h"
#include "mop_trace.h"
#include "mop_trace_dtype.h"
#include "mop_wrap_util.h"
#include "grow.h"

MOP_HOT_FLAG int mop_match_on;

static struct {
    mop_trace *tr;
    int keyval;
    uint64_t world_id;
    pthread_mutex_t lock; /* the group table; communicators may be created by threads */
    struct mop_group_count {
        uint64_t hash;
        uint32_t count;
    } *groups;
    size_t ngroups, cap;
} mop_m = {.keyval = MPI_KEYVAL_INVALID, .lock = PTHREAD_MUTEX_INITIALIZER};

/* Normalized peers and tags (the MPIs' constants differ). */
enum { MOP_PEER_ANY = -2, MOP_PEER_NULL = -3, MOP_TAG_ANY = -1 };

static uint64_t mop_mix(uint64_t x) /* splitmix64's finalizer */
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static int mop_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* FNV-1a of the sorted members (both groups of an intercommunicator, which
 * its two sides see swapped) and whether it is one. */
static uint64_t mop_group_hash(const int32_t *ranks, size_t n, int inter)
{
    int32_t *sorted = malloc((n ? n : 1) * sizeof *sorted);
    uint64_t h = MO_FNV1A64_OFFSET;
    if (!sorted)
        return h ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++)
        sorted[i] = ranks[i];
    qsort(sorted, n, sizeof *sorted, mop_cmp_i32);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)sorted[i];
        /* little-endian bytes, whatever the host's order */
        unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                               (unsigned char)(v >> 24)};
        h = mo_fnv1a64_update(h, le, sizeof le);
    }
    free(sorted);
    return h ^ (uint64_t)(inter ? 0x9e3779b97f4a7c15u : 0u);
}

/* The number of communicators of this group named before (0, 1, ...). */
static uint32_t mop_group_index(uint64_t hash)
{
    pthread_mutex_lock(&mop_m.lock);
    uint32_t index = UINT32_MAX;
    for (size_t i = 0; i < mop_m.ngroups; i++)
        if (mop_m.groups[i].hash == hash) {
            index = mop_m.groups[i].count++;
            break;
        }
    if (index == UINT32_MAX) {
        if (mop_m.ngroups == mop_m.cap) {
            struct mop_group_count *g = mo_grow(mop_m.groups, &mop_m.cap, sizeof *g, 16);
            if (g)
                mop_m.groups = g;
        }
        if (mop_m.ngroups < mop_m.cap)
            mop_m.groups[mop_m.ngroups++] = (struct mop_group_count){.hash = hash, .count = 1};
        index = 0;
    }
    pthread_mutex_unlock(&mop_m.lock);
    return index;
}

/* Names comm: derives its id, keeps it as an attribute, writes its group into
 * the trace. Returns the id (0 when it cannot be named). */
static uint64_t mop_comm_name(MPI_Comm comm, uint32_t flags)
{
    int inter = 0, n = 0, m = 0;
    PMPI_Comm_test_inter(comm, &inter);
    MPI_Group lg, rg = MPI_GROUP_NULL;
    if (PMPI_Comm_group(comm, &lg) != MPI_SUCCESS)
        return 0;
    PMPI_Group_size(lg, &n);
    if (inter && PMPI_Comm_remote_group(comm, &rg) == MPI_SUCCESS)
        PMPI_Group_size(rg, &m);
    int32_t *ranks = malloc(((size_t)n + (size_t)m + 1) * sizeof *ranks);
    uint64_t id = 0;
    if (ranks) {
        mop_group_world_ranks(lg, n, ranks);
        if (m)
            mop_group_world_ranks(rg, m, ranks + n);
        uint64_t hash = mop_group_hash(ranks, (size_t)n + (size_t)m, inter);
        id = mop_mix(hash + UINT64_C(0x9e3779b97f4a7c15) * (mop_group_index(hash) + 1u));
        if (id == 0)
            id = 1;
        PMPI_Comm_set_attr(comm, mop_m.keyval, (void *)(uintptr_t)id);
        mop_trace_comm(mop_m.tr, id, flags | (inter ? MOP_TRACE_COMM_INTER : 0), ranks,
                       (uint32_t)n, ranks + n, (uint32_t)m);
        free(ranks);
    }
    PMPI_Group_free(&lg);
    if (rg != MPI_GROUP_NULL)
        PMPI_Group_free(&rg);
    return id;
}

/* comm's id: its attribute, else named now (at its first use: its creation
 * was not seen). */
static uint64_t mop_comm_id(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return mop_m.world_id;
    if (comm == MPI_COMM_NULL)
        return 0;
    void *v = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, mop_m.keyval, &v, &flag) == MPI_SUCCESS && flag)
        return (uint64_t)(uintptr_t)v;
    return mop_comm_name(comm, MOP_TRACE_COMM_LAZY);
}

void mop_comm_created_slow(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return;
    void *v = NULL;
    int flag = 0;
    /* MPI_Comm_get_parent returns the same communicator each time: named once. */
    if (PMPI_Comm_get_attr(comm, mop_m.keyval, &v, &flag) == MPI_SUCCESS && flag)
        return;
    mop_comm_name(comm, 0);
}

static int32_t mop_norm_peer(int peer)
{
    if (peer == MPI_ANY_SOURCE)
        return MOP_PEER_ANY;
    if (peer == MPI_PROC_NULL)
        return MOP_PEER_NULL;
    return peer;
}

/* The MATCH event; its id: the message's datatype layout (0 for a collective,
 * and where it is one block or not known). */
static void mop_match_push(mop_thread *th, uint64_t t, MPI_Comm comm, int peer, int tag,
                           int flags, uint16_t layout)
{
    bool coll = (flags & MOP_MATCH_COLL) != 0; /* tag is its root, it has no peer */
    int64_t tag_or_root = coll || tag != MPI_ANY_TAG ? tag : MOP_TAG_ANY;
    mop_push_event(th, MOP_EV_MATCH, t, mop_comm_id(comm), tag_or_root, (mop_kind)flags,
                   layout, coll ? -1 : mop_norm_peer(peer));
}

void mop_match_slow(mop_thread *th, uint64_t t, MPI_Comm comm, int peer, int tag, int flags)
{
    mop_match_push(th, t, comm, peer, tag, flags, 0);
}

void mop_message_slow(mop_thread *th, mop_event_type type, uint64_t t, uint64_t key,
                      int64_t bytes, mop_kind kind, uint16_t fn, MPI_Comm comm, int peer,
                      int tag, const MPI_Status *st, MPI_Datatype dt)
{
    mop_push_event(th, type, t, key, bytes, kind, fn, mop_world_rank_slow(comm, peer));
    if (mop_match_on)
        mop_match_push(th, t, comm, peer, tag, st ? MOP_MATCH_FROM_STATUS : 0,
                       mop_dtype_layout(dt));
}

void mop_status_slow(mop_thread *th, uint64_t t, uint64_t key, const MPI_Status *st)
{
    mop_push_event(th, MOP_EV_STATUS, t, key, st->MPI_TAG, (mop_kind)0, 0,
                   mop_norm_peer(st->MPI_SOURCE));
}

void mop_match_start(mop_trace *tr, int rank, int size)
{
    (void)rank;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &mop_m.keyval,
                                NULL) != MPI_SUCCESS)
        return; /* no ids: no MATCH events, messages are not matched */
    mop_m.tr = tr;
    int32_t *ranks = malloc((size_t)size * sizeof *ranks);
    if (!ranks)
        return;
    for (int r = 0; r < size; r++)
        ranks[r] = r;
    uint64_t hash = mop_group_hash(ranks, (size_t)size, 0);
    mop_m.world_id = mop_mix(hash + UINT64_C(0x9e3779b97f4a7c15) * (mop_group_index(hash) + 1u));
    if (mop_m.world_id == 0)
        mop_m.world_id = 1;
    mop_trace_comm(tr, mop_m.world_id, 0, ranks, (uint32_t)size, NULL, 0);
    free(ranks);
    mop_dtype_start(tr);
    mop_match_on = 1; /* the trace's mop_need_peers = 1 leads messages to mop_message_slow */
    __atomic_fetch_or(&mop_status_needs, MOP_STATUS_TRACE, __ATOMIC_RELAXED);
}
