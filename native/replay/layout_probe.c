/* layout_probe.c - mo_layout_probe: a traced program's own datatypes timed
 * where a prediction moves their messages (docs/method.md, "The program's
 * layouts timed on the target"; src/mpi_overlap/predict/probe.py writes its
 * input and reads its output).
 *
 * Why: what a transport spends on a non-contiguous message is its own (a
 * 32 KiB face of 4096 strided doubles: 20.7 us one way on one node against
 * 7.2 contiguous, and over TCP another figure again), so a replay that moves a
 * message to another transport needs it measured there, with the program's
 * datatype and in its pattern.
 *
 * Input (text, whitespace-separated): "mo-layout-probe 1", then per case
 * "case <bytes>" and two sides, the send's and the receive's datatype:
 * "side <nvalues> <values...> <nnames> <names...>", the constructor tree as a
 * trace's DTYPES record holds it (mop_trace_dtype.c; nvalues 0: contiguous
 * MPI_BYTE; a name "-": none). The datatype is built again from the tree.
 *
 * Measure, on 2 ranks, per case: both ranks post MPI_Irecv (receive side),
 * MPI_Isend (send side) to each other and MPI_Waitall: one exchange; and the
 * same bytes as MPI_BYTE, contiguous, each exchange after a sweep over the
 * arrays the datatypes span (sweep(), untimed). Samples of the two
 * alternate (a disturbance touches both alike); a sample is the mean of a
 * block of exchanges, each timed with MPI_Wtime, the figure the median of the
 * samples; the MPI_Isend call in each exchange is timed too (its median
 * block mean). Rank 0 writes one JSON object per line: {"case": i, "bytes": B,
 * "layout_s": .., "contiguous_s": .., "layout_post_s": .., "contiguous_post_s":
 * .., "samples": n} or {"case": i, "error": ".."} where the tree cannot be
 * built again. */
#include <inttypes.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

enum { MAX_VALUES = 4096, MAX_NAMES = 256, NAME_BYTES = 64, SAMPLES_MAX = 64 };

/* The trace's node kinds (mop_trace_dtype.c). */
enum { NAMED = 0, DUP, CONTIGUOUS, VECTOR, HVECTOR, INDEXED, HINDEXED, INDEXED_BLOCK,
       HINDEXED_BLOCK, STRUCT, SUBARRAY, DARRAY, RESIZED };

typedef struct side {
    int64_t v[MAX_VALUES];
    int nv;
    char names[MAX_NAMES][NAME_BYTES];
    int nnames;
} side;

typedef struct tree_reader {
    const side *s;
    int pos;
    int named;
    const char *error;
} tree_reader;

/* The predefined types a tree may name, by MPI_Type_get_name's standard names. */
static MPI_Datatype named_type(const char *name)
{
#define NAMED_TYPE(t)              \
    if (strcmp(name, #t) == 0)     \
        return t;
    NAMED_TYPE(MPI_CHAR) NAMED_TYPE(MPI_SIGNED_CHAR) NAMED_TYPE(MPI_UNSIGNED_CHAR)
    NAMED_TYPE(MPI_BYTE) NAMED_TYPE(MPI_SHORT) NAMED_TYPE(MPI_UNSIGNED_SHORT) NAMED_TYPE(MPI_INT)
    NAMED_TYPE(MPI_UNSIGNED) NAMED_TYPE(MPI_LONG) NAMED_TYPE(MPI_UNSIGNED_LONG)
    NAMED_TYPE(MPI_LONG_LONG_INT) NAMED_TYPE(MPI_LONG_LONG) NAMED_TYPE(MPI_UNSIGNED_LONG_LONG)
    NAMED_TYPE(MPI_FLOAT) NAMED_TYPE(MPI_DOUBLE) NAMED_TYPE(MPI_LONG_DOUBLE)
    NAMED_TYPE(MPI_WCHAR) NAMED_TYPE(MPI_C_BOOL) NAMED_TYPE(MPI_INT8_T) NAMED_TYPE(MPI_INT16_T)
    NAMED_TYPE(MPI_INT32_T) NAMED_TYPE(MPI_INT64_T) NAMED_TYPE(MPI_UINT8_T)
    NAMED_TYPE(MPI_UINT16_T) NAMED_TYPE(MPI_UINT32_T) NAMED_TYPE(MPI_UINT64_T)
    NAMED_TYPE(MPI_AINT) NAMED_TYPE(MPI_COUNT) NAMED_TYPE(MPI_OFFSET)
    NAMED_TYPE(MPI_C_COMPLEX) NAMED_TYPE(MPI_C_FLOAT_COMPLEX) NAMED_TYPE(MPI_C_DOUBLE_COMPLEX)
    NAMED_TYPE(MPI_FLOAT_INT) NAMED_TYPE(MPI_DOUBLE_INT) NAMED_TYPE(MPI_LONG_INT)
    NAMED_TYPE(MPI_2INT) NAMED_TYPE(MPI_SHORT_INT) NAMED_TYPE(MPI_LONG_DOUBLE_INT)
    NAMED_TYPE(MPI_PACKED)
#undef NAMED_TYPE
    return MPI_DATATYPE_NULL;
}

static bool take(tree_reader *r, int64_t *out)
{
    if (r->pos >= r->s->nv) {
        r->error = "the tree ends early";
        return false;
    }
    *out = r->s->v[r->pos++];
    return true;
}

/* A committed-later datatype built from the node at r->pos (MPI_DATATYPE_NULL
 * and r->error where it cannot be), and whether the caller must free it. */
static MPI_Datatype build(tree_reader *r, bool *owned)
{
    int64_t kind;
    *owned = false;
    if (!take(r, &kind))
        return MPI_DATATYPE_NULL;
    if (kind == NAMED) {
        int64_t size;
        if (!take(r, &size))
            return MPI_DATATYPE_NULL;
        const char *name = r->named < r->s->nnames ? r->s->names[r->named] : "-";
        r->named++;
        MPI_Datatype dt = named_type(name);
        if (dt == MPI_DATATYPE_NULL) { /* a type this MPI names otherwise: its bytes */
            MPI_Type_contiguous((int)size, MPI_BYTE, &dt);
            *owned = true;
        }
        return dt;
    }
    int64_t ni, na, nd;
    if (!take(r, &ni) || !take(r, &na) || !take(r, &nd))
        return MPI_DATATYPE_NULL;
    if (ni < 0 || na < 0 || nd < 0 || ni > MAX_VALUES || na > MAX_VALUES || nd > MAX_VALUES) {
        r->error = "a node with bad counts";
        return MPI_DATATYPE_NULL;
    }
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *addrs = malloc(((size_t)na + 1) * sizeof *addrs);
    MPI_Datatype *kids = malloc(((size_t)nd + 1) * sizeof *kids);
    bool *own = calloc((size_t)nd + 1, sizeof *own);
    MPI_Datatype out = MPI_DATATYPE_NULL;
    int64_t x;
    int built = 0;
    if (!ints || !addrs || !kids || !own) {
        r->error = "out of memory";
        goto done;
    }
    for (int64_t i = 0; i < ni; i++) {
        if (!take(r, &x))
            goto done;
        ints[i] = (int)x;
    }
    for (int64_t i = 0; i < na; i++) {
        if (!take(r, &x))
            goto done;
        addrs[i] = (MPI_Aint)x;
    }
    for (; built < nd; built++) {
        kids[built] = build(r, &own[built]);
        if (kids[built] == MPI_DATATYPE_NULL)
            goto done;
    }
    int rc = MPI_ERR_TYPE;
    switch (kind) {
    case DUP: rc = nd == 1 ? MPI_Type_dup(kids[0], &out) : rc; break;
    case CONTIGUOUS: rc = ni == 1 && nd == 1 ? MPI_Type_contiguous(ints[0], kids[0], &out) : rc; break;
    case VECTOR:
        rc = ni == 3 && nd == 1 ? MPI_Type_vector(ints[0], ints[1], ints[2], kids[0], &out) : rc;
        break;
    case HVECTOR:
        rc = ni == 2 && na == 1 && nd == 1
                 ? MPI_Type_create_hvector(ints[0], ints[1], addrs[0], kids[0], &out) : rc;
        break;
    case INDEXED:
        rc = ni >= 1 && ni == 1 + 2 * (int64_t)ints[0] && nd == 1
                 ? MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], kids[0], &out) : rc;
        break;
    case HINDEXED:
        rc = ni >= 1 && ni == 1 + (int64_t)ints[0] && na == ints[0] && nd == 1
                 ? MPI_Type_create_hindexed(ints[0], ints + 1, addrs, kids[0], &out) : rc;
        break;
    case INDEXED_BLOCK:
        rc = ni >= 2 && ni == 2 + (int64_t)ints[0] && nd == 1
                 ? MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, kids[0], &out) : rc;
        break;
    case HINDEXED_BLOCK:
        rc = ni == 2 && na == ints[0] && nd == 1
                 ? MPI_Type_create_hindexed_block(ints[0], ints[1], addrs, kids[0], &out) : rc;
        break;
    case STRUCT:
        rc = ni >= 1 && ni == 1 + (int64_t)ints[0] && na == ints[0] && nd == ints[0]
                 ? MPI_Type_create_struct(ints[0], ints + 1, addrs, kids, &out) : rc;
        break;
    case SUBARRAY:
        if (ni >= 1 && ni == 2 + 3 * (int64_t)ints[0] && nd == 1) {
            int n = ints[0];
            int order = ints[1 + 3 * n] ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
            rc = MPI_Type_create_subarray(n, ints + 1, ints + 1 + n, ints + 1 + 2 * n, order,
                                          kids[0], &out);
        }
        break;
    case RESIZED:
        rc = na == 2 && nd == 1 ? MPI_Type_create_resized(kids[0], addrs[0], addrs[1], &out) : rc;
        break;
    default: r->error = "a constructor the probe does not build (darray or another)"; break;
    }
    if (rc != MPI_SUCCESS) {
        out = MPI_DATATYPE_NULL;
        if (!r->error)
            r->error = "the MPI refused the constructor's arguments";
    } else {
        *owned = true;
    }
done:
    for (int i = 0; i < built; i++)
        if (own[i])
            MPI_Type_free(&kids[i]);
    free(ints);
    free(addrs);
    free(kids);
    free(own);
    return out;
}

/* The side's datatype, committed, and its count for `bytes` (MPI_BYTE x bytes
 * for a contiguous side); MPI_DATATYPE_NULL with *error where not. */
static MPI_Datatype side_type(const side *s, int64_t bytes, int *count, bool *owned,
                              const char **error)
{
    *owned = false;
    if (s->nv == 0) {
        *count = (int)bytes;
        return MPI_BYTE;
    }
    tree_reader r = {.s = s};
    MPI_Datatype dt = build(&r, owned);
    if (dt == MPI_DATATYPE_NULL) {
        *error = r.error ? r.error : "cannot build the datatype";
        return dt;
    }
    int size = 0;
    MPI_Type_size(dt, &size);
    if (size <= 0 || bytes % size != 0) {
        *error = "the message's bytes are not a whole number of its datatype";
        if (*owned)
            MPI_Type_free(&dt);
        return MPI_DATATYPE_NULL;
    }
    *count = (int)(bytes / size);
    if (*owned)
        MPI_Type_commit(&dt);
    return dt;
}

/* The bytes count x dt reaches from its buffer's address: [lo, hi), lo <= 0
 * (a datatype may reach below its buffer's address, a negative lower bound). */
static void reach(MPI_Datatype dt, int count, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_get_extent(dt, &lb, &extent);
    MPI_Type_get_true_extent(dt, &tlb, &textent);
    MPI_Aint last = count > 0 ? (MPI_Aint)(count - 1) * extent : 0;
    MPI_Aint a = tlb + (last < 0 ? last : 0), b = tlb + textent + (last > 0 ? last : 0);
    *lo = a < 0 ? a : 0;
    *hi = b > 0 ? b : 0;
}

/* The arrays a program's datatypes are cut from, which its computation sweeps
 * between exchanges: a message's data is then not in the nearest caches when
 * it is sent. Before each timed exchange (the contiguous ones too), each rank
 * writes a byte per cache line of both (untimed). */
typedef struct arrays {
    unsigned char *send, *recv;
    size_t send_bytes, recv_bytes;
} arrays;

static void sweep(const arrays *a)
{
    for (size_t i = 0; i < a->send_bytes; i += 64)
        a->send[i]++;
    for (size_t i = 0; i < a->recv_bytes; i += 64)
        a->recv[i]++;
}

/* One block's means per exchange: the exchange, and the MPI_Isend call in it
 * (whether the MPI packs a layout in the post or later, in the completing
 * call, decides when its data can leave: predict/probe.py). */
typedef struct timing {
    double exchange_s, post_s;
} timing;

static timing exchange_block(int peer, void *sbuf, void *rbuf, int scount, MPI_Datatype sdt,
                             int rcount, MPI_Datatype rdt, int iters, const arrays *swept)
{
    MPI_Request req[2];
    MPI_Barrier(MPI_COMM_WORLD);
    double t[2] = {0, 0};
    for (int i = 0; i < iters; i++) {
        sweep(swept);
        double t0 = MPI_Wtime();
        MPI_Irecv(rbuf, rcount, rdt, peer, 7, MPI_COMM_WORLD, &req[0]);
        double t1 = MPI_Wtime();
        MPI_Isend(sbuf, scount, sdt, peer, 7, MPI_COMM_WORLD, &req[1]);
        t[1] += MPI_Wtime() - t1;
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        t[0] += MPI_Wtime() - t0;
    }
    t[0] /= iters;
    t[1] /= iters;
    double worst[2] = {0, 0}; /* both ranks: the slower one's means */
    MPI_Allreduce(t, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return (timing){worst[0], worst[1]};
}

static bool read_side(FILE *in, side *s)
{
    char word[32];
    if (fscanf(in, "%31s %d", word, &s->nv) != 2 || strcmp(word, "side") != 0 || s->nv < 0 ||
        s->nv > MAX_VALUES)
        return false;
    for (int i = 0; i < s->nv; i++)
        if (fscanf(in, "%" SCNd64, &s->v[i]) != 1)
            return false;
    if (fscanf(in, "%d", &s->nnames) != 1 || s->nnames < 0 || s->nnames > MAX_NAMES)
        return false;
    for (int i = 0; i < s->nnames; i++)
        if (fscanf(in, "%63s", s->names[i]) != 1)
            return false;
    return true;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *input = NULL, *output = NULL;
    int samples = 11;
    double sample_s = 0.005;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--input") == 0)
            input = argv[i + 1];
        else if (strcmp(argv[i], "--output") == 0)
            output = argv[i + 1];
        else if (strcmp(argv[i], "--samples") == 0)
            samples = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sample-ms") == 0)
            sample_s = atof(argv[i + 1]) / 1e3;
    }
    if (size != 2 || !input || !output || samples < 1 || samples > SAMPLES_MAX ||
        !(sample_s > 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 mo_layout_probe --input FILE --output FILE "
                            "[--samples N (1-%d)] [--sample-ms X]\n", SAMPLES_MAX);
        MPI_Finalize();
        return 2;
    }
    FILE *in = fopen(input, "r");
    char magic[32];
    int version = 0;
    if (!in || fscanf(in, "%31s %d", magic, &version) != 2 ||
        strcmp(magic, "mo-layout-probe") != 0 || version != 1) {
        if (rank == 0)
            fprintf(stderr, "mo_layout_probe: %s: not a probe input\n", input);
        MPI_Finalize();
        return 2;
    }
    FILE *out = rank == 0 ? fopen(output, "w") : NULL;
    if (rank == 0 && !out) {
        fprintf(stderr, "mo_layout_probe: cannot write %s\n", output);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static side sides[2];
    int peer = 1 - rank;
    char word[32];
    long long bytes;
    /* as many cases as the input holds: how many to time is predict/probe.py's choice */
    for (int c = 0; fscanf(in, "%31s %lld", word, &bytes) == 2; c++) {
        if (strcmp(word, "case") != 0 || bytes < 0 || !read_side(in, &sides[0]) ||
            !read_side(in, &sides[1])) {
            if (rank == 0)
                fprintf(stderr, "mo_layout_probe: %s: case %d is damaged\n", input, c);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        int scount = 0, rcount = 0;
        bool sown = false, rown = false;
        const char *error = NULL;
        MPI_Datatype sdt = side_type(&sides[0], bytes, &scount, &sown, &error);
        MPI_Datatype rdt = sdt == MPI_DATATYPE_NULL
                               ? MPI_DATATYPE_NULL
                               : side_type(&sides[1], bytes, &rcount, &rown, &error);
        if (sdt == MPI_DATATYPE_NULL || rdt == MPI_DATATYPE_NULL) {
            if (out)
                fprintf(out, "{\"case\": %d, \"error\": \"%s\"}\n", c, error);
            if (sown)
                MPI_Type_free(&sdt);
            continue;
        }
        MPI_Aint slo, shi, rlo, rhi;
        reach(sdt, scount, &slo, &shi);
        reach(rdt, rcount, &rlo, &rhi);
        size_t sspan = (size_t)(shi - slo) + 64, rspan = (size_t)(rhi - rlo) + 64;
        size_t cspan = (size_t)bytes + 64;
        unsigned char *sarr = calloc(1, sspan), *rarr = calloc(1, rspan);
        unsigned char *cs = calloc(1, cspan), *cr = calloc(1, cspan);
        /* each datatype's buffer address: its array's start less its lowest reach */
        unsigned char *sbuf = sarr ? sarr - slo : NULL, *rbuf = rarr ? rarr - rlo : NULL;
        double lay[SAMPLES_MAX], con[SAMPLES_MAX], lay_post[SAMPLES_MAX], con_post[SAMPLES_MAX];
        if (!sbuf || !rbuf || !cs || !cr) {
            fprintf(stderr, "mo_layout_probe: out of memory for case %d\n", c);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        memset(sarr, 1, sspan); /* written pages, not the zero page that calloc maps */
        memset(cs, 1, cspan);
        const arrays swept = {sarr, rarr, sspan, rspan};
        /* a block long enough for sample_s, from a first timing */
        exchange_block(peer, sbuf, rbuf, scount, sdt, rcount, rdt, 5, &swept);
        double once =
            exchange_block(peer, sbuf, rbuf, scount, sdt, rcount, rdt, 20, &swept).exchange_s;
        int iters = once > 0 ? (int)(sample_s / once) : 1000;
        iters = iters < 4 ? 4 : iters > 100000 ? 100000 : iters;
        for (int k = 0; k < samples; k++) {
            timing l = exchange_block(peer, sbuf, rbuf, scount, sdt, rcount, rdt, iters, &swept);
            timing n = exchange_block(peer, cs, cr, (int)bytes, MPI_BYTE, (int)bytes, MPI_BYTE,
                                      iters, &swept);
            lay[k] = l.exchange_s;
            lay_post[k] = l.post_s;
            con[k] = n.exchange_s;
            con_post[k] = n.post_s;
        }
        const size_t n = (size_t)samples;
        if (out)
            fprintf(out, "{\"case\": %d, \"bytes\": %lld, \"layout_s\": %.9g, "
                         "\"contiguous_s\": %.9g, \"layout_post_s\": %.9g, "
                         "\"contiguous_post_s\": %.9g, \"samples\": %d, \"iterations\": %d}\n",
                    c, bytes, mo_stats_median(lay, n), mo_stats_median(con, n),
                    mo_stats_median(lay_post, n), mo_stats_median(con_post, n), samples, iters);
        free(sarr);
        free(rarr);
        free(cs);
        free(cr);
        if (sown)
            MPI_Type_free(&sdt);
        if (rown)
            MPI_Type_free(&rdt);
    }
    fclose(in);
    if (out)
        fclose(out);
    MPI_Finalize();
    return 0;
}
