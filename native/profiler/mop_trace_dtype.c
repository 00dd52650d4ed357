/* mop_trace_dtype.c - datatype layouts in trace mode (mop_trace_dtype.h;
 * docs/profiler.md, "Datatype layouts").
 *
 * Why: a message of 32 KiB in strided faces costs a transport far more than
 * 32 KiB in one block (4096 strided doubles: 20.7 us one way on one node
 * against 7.2 contiguous, docs/method.md),
 * and a trace that records bytes only cannot tell a prediction which messages
 * those are. What: the datatype's constructor tree as MPI_Type_get_envelope /
 * MPI_Type_get_contents give it, recursively, in a DTYPES chunk, once per
 * datatype. The id is kept as an attribute of the datatype (its own keyval):
 * freed with it, so a handle the MPI hands out again after MPI_Type_free is
 * described again rather than taken for the old one. Predefined types that are
 * not one block (MPI_DOUBLE_INT and the other pair types) cannot be relied on
 * to take attributes and are never freed: a small table keeps theirs.
 *
 * Untraced runs never reach this file (the wrappers test mop_need_peers, and
 * only a trace sets mop_dtype_start's state). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "mop_trace_dtype.h"

/* Bounds on one description: a datatype whose tree is larger (a struct of
 * thousands of blocks) is written cut, and says so (MOP_TRACE_DTYPE_CUT). */
enum { MOP_DTYPE_MAX_VALUES = 4096, MOP_DTYPE_MAX_DEPTH = 16, MOP_DTYPE_MAX_NAMED = 32 };

/* The node kinds as the trace writes them: MPI's combiner constants differ
 * between MPIs. */
enum mop_dtype_node {
    MOP_DT_NAMED = 0,
    MOP_DT_DUP = 1,
    MOP_DT_CONTIGUOUS = 2,
    MOP_DT_VECTOR = 3,
    MOP_DT_HVECTOR = 4,
    MOP_DT_INDEXED = 5,
    MOP_DT_HINDEXED = 6,
    MOP_DT_INDEXED_BLOCK = 7,
    MOP_DT_HINDEXED_BLOCK = 8,
    MOP_DT_STRUCT = 9,
    MOP_DT_SUBARRAY = 10,
    MOP_DT_DARRAY = 11,
    MOP_DT_RESIZED = 12,
    MOP_DT_OTHER = 99, /* a combiner this file does not know: no contents */
};

typedef struct mop_named_layout {
    MPI_Datatype dt;
    uint16_t id;
} mop_named_layout;

static struct {
    mop_trace *tr;
    int keyval;
    pthread_mutex_t lock; /* next and named: messages may be posted by threads */
    uint16_t next;        /* the last id given */
    mop_named_layout named[MOP_DTYPE_MAX_NAMED];
    size_t nnamed;
} mop_d = {.keyval = MPI_KEYVAL_INVALID, .lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct mop_dbuf {
    int64_t *v;
    size_t n, cap;
    char *names;
    size_t nb, ncap;
    bool cut;
} mop_dbuf;

static void mop_put(mop_dbuf *b, int64_t x)
{
    if (b->cut)
        return;
    if (b->n == b->cap) {
        int64_t *more = b->n < MOP_DTYPE_MAX_VALUES ? mo_grow(b->v, &b->cap, sizeof *more, 64)
                                                    : NULL;
        if (!more) {
            b->cut = true;
            return;
        }
        b->v = more;
    }
    b->v[b->n++] = x;
}

static void mop_put_name(mop_dbuf *b, const char *s)
{
    size_t len = strlen(s) + 1;
    while (!b->cut && b->nb + len > b->ncap) {
        char *more = mo_grow(b->names, &b->ncap, 1, 256);
        if (!more)
            b->cut = true;
        else
            b->names = more;
    }
    if (b->cut)
        return;
    memcpy(b->names + b->nb, s, len);
    b->nb += len;
}

static int64_t mop_node_kind(int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_NAMED: return MOP_DT_NAMED;
    case MPI_COMBINER_DUP: return MOP_DT_DUP;
    case MPI_COMBINER_CONTIGUOUS: return MOP_DT_CONTIGUOUS;
    case MPI_COMBINER_VECTOR: return MOP_DT_VECTOR;
    case MPI_COMBINER_HVECTOR: return MOP_DT_HVECTOR;
    case MPI_COMBINER_INDEXED: return MOP_DT_INDEXED;
    case MPI_COMBINER_HINDEXED: return MOP_DT_HINDEXED;
    case MPI_COMBINER_INDEXED_BLOCK: return MOP_DT_INDEXED_BLOCK;
    case MPI_COMBINER_HINDEXED_BLOCK: return MOP_DT_HINDEXED_BLOCK;
    case MPI_COMBINER_STRUCT: return MOP_DT_STRUCT;
    case MPI_COMBINER_SUBARRAY: return MOP_DT_SUBARRAY;
    case MPI_COMBINER_DARRAY: return MOP_DT_DARRAY;
    case MPI_COMBINER_RESIZED: return MOP_DT_RESIZED;
    default: return MOP_DT_OTHER;
    }
}

/* One node and, depth first, its children: NAMED as (kind, size) with its
 * name in the names; OTHER as (kind, 0, 0, 0); the others as (kind, ni, na,
 * nd, ints..., addresses...) followed by their nd children, MPI_Type_get_contents'
 * arrays as they are, but a subarray's or darray's order. */
static void mop_describe(mop_dbuf *b, MPI_Datatype dt, int depth)
{
    int ni = 0, na = 0, nd = 0, combiner = 0;
    if (depth > MOP_DTYPE_MAX_DEPTH ||
        PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS) {
        b->cut = true;
        return;
    }
    int64_t kind = mop_node_kind(combiner);
    if (kind == MOP_DT_NAMED) {
        int size = 0, len = 0;
        char name[MPI_MAX_OBJECT_NAME + 1];
        PMPI_Type_size(dt, &size);
        if (PMPI_Type_get_name(dt, name, &len) != MPI_SUCCESS || len < 0 ||
            len > MPI_MAX_OBJECT_NAME)
            len = 0;
        name[len] = '\0';
        mop_put(b, kind);
        mop_put(b, size);
        mop_put_name(b, name);
        return;
    }
    if (kind == MOP_DT_OTHER) {
        mop_put(b, kind);
        mop_put(b, 0);
        mop_put(b, 0);
        mop_put(b, 0);
        return;
    }
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *addrs = malloc(((size_t)na + 1) * sizeof *addrs);
    MPI_Datatype *types = malloc(((size_t)nd + 1) * sizeof *types);
    if (ints && addrs && types &&
        PMPI_Type_get_contents(dt, ni, na, nd, ints, addrs, types) == MPI_SUCCESS) {
        mop_put(b, kind);
        mop_put(b, ni);
        mop_put(b, na);
        mop_put(b, nd);
        /* the array order of a subarray or darray (its last integer) as 0 (C) or 1
         * (Fortran): MPI's constants differ between MPIs */
        if ((kind == MOP_DT_SUBARRAY || kind == MOP_DT_DARRAY) && ni > 0)
            ints[ni - 1] = ints[ni - 1] == MPI_ORDER_FORTRAN;
        for (int i = 0; i < ni; i++)
            mop_put(b, ints[i]);
        for (int i = 0; i < na; i++)
            mop_put(b, (int64_t)addrs[i]);
        for (int i = 0; i < nd; i++) {
            mop_describe(b, types[i], depth + 1);
            /* get_contents hands out new handles for the derived ones: ours to free */
            int cni, cna, cnd, ccomb;
            if (PMPI_Type_get_envelope(types[i], &cni, &cna, &cnd, &ccomb) == MPI_SUCCESS &&
                ccomb != MPI_COMBINER_NAMED)
                PMPI_Type_free(&types[i]);
        }
    } else {
        b->cut = true;
    }
    free(ints);
    free(addrs);
    free(types);
}

void mop_dtype_start(mop_trace *tr)
{
    if (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &mop_d.keyval,
                                NULL) != MPI_SUCCESS)
        return; /* no ids: every message's layout reads 0, unknown */
    mop_d.tr = tr;
}

/* The id kept for a predefined dt (0: none yet). */
static uint16_t mop_known_named(MPI_Datatype dt)
{
    uint16_t id = 0;
    pthread_mutex_lock(&mop_d.lock);
    for (size_t i = 0; i < mop_d.nnamed; i++)
        if (mop_d.named[i].dt == dt)
            id = mop_d.named[i].id;
    pthread_mutex_unlock(&mop_d.lock);
    return id;
}

/* A new id for dt, kept; 0 when the ids have run out or a named type's table
 * is full. */
static uint16_t mop_keep(MPI_Datatype dt, bool named)
{
    uint16_t id = 0;
    pthread_mutex_lock(&mop_d.lock);
    if (mop_d.next < UINT16_MAX && (!named || mop_d.nnamed < MOP_DTYPE_MAX_NAMED)) {
        id = ++mop_d.next;
        if (named)
            mop_d.named[mop_d.nnamed++] = (mop_named_layout){.dt = dt, .id = id};
    }
    pthread_mutex_unlock(&mop_d.lock);
    if (id && !named)
        PMPI_Type_set_attr(dt, mop_d.keyval, (void *)(uintptr_t)id);
    return id;
}

/* An attribute value that says "contiguous": a derived type's check is then
 * one attribute lookup per message, as an id's is. */
#define MOP_DTYPE_CONTIGUOUS ((uintptr_t)1 << 16)

uint16_t mop_dtype_layout(MPI_Datatype dt)
{
    if (!mop_d.tr || dt == MPI_DATATYPE_NULL || dt == MPI_BYTE || dt == MPI_CHAR ||
        dt == MPI_DOUBLE || dt == MPI_INT)
        return 0;
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    bool named = combiner == MPI_COMBINER_NAMED;
    if (!named) {
        void *v = NULL;
        int flag = 0;
        if (PMPI_Type_get_attr(dt, mop_d.keyval, &v, &flag) == MPI_SUCCESS && flag)
            return (uint16_t)(uintptr_t)v; /* MOP_DTYPE_CONTIGUOUS reads 0 */
    }
    int size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    if (PMPI_Type_size(dt, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &true_lb, &true_extent) != MPI_SUCCESS)
        return 0;
    /* one block, and copies that abut: count x dt is contiguous */
    if ((MPI_Aint)size == true_extent && true_extent == extent) {
        if (!named)
            PMPI_Type_set_attr(dt, mop_d.keyval, (void *)MOP_DTYPE_CONTIGUOUS);
        return 0;
    }
    uint16_t id = named ? mop_known_named(dt) : 0;
    if (id)
        return id;
    id = mop_keep(dt, named);
    if (!id)
        return 0;
    mop_dbuf b = {0};
    mop_describe(&b, dt, 0);
    const int64_t shape[4] = {size, (int64_t)extent, (int64_t)true_lb, (int64_t)true_extent};
    mop_trace_dtype(mop_d.tr, id, b.cut ? MOP_TRACE_DTYPE_CUT : 0, shape, b.v, (uint32_t)b.n,
                    b.names, (uint32_t)b.nb);
    free(b.v);
    free(b.names);
    return id;
}
