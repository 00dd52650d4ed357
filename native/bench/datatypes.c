/* datatypes.c - mo_datatypes and mo_alignment (the same source, built twice;
 * MO_ALIGNMENT selects the second): the cost of MPI derived datatypes and of
 * buffer alignment, by blocking ping-pong between world ranks 0 and 1 (seed
 * 001, derived datatypes and buffer alignment experiments).
 *
 * mo_datatypes, per payload size B (bytes that travel), the cases:
 *   contig         B bytes of MPI_BYTE, contiguous (the baseline)
 *   vector_char    MPI_Type_vector(B, 1, 2, MPI_CHAR)      (stride 2)
 *   vector_int     MPI_Type_vector(B/4, 1, 2, MPI_INT)
 *   vector_double  MPI_Type_vector(B/8, 1, 2, MPI_DOUBLE)
 *   indexed        MPI_Type_indexed of MPI_CHAR, block lengths 1,3,2,7,5,4
 *                  repeating, each block followed by a gap of its length
 *   struct         MPI_Type_create_struct {int; double; char} resized to the
 *                  C struct's extent (24 bytes, 13 of payload: padding skipped)
 *   pack_mpi       the vector_int data: MPI_Pack + MPI_PACKED send, receive
 *                  + MPI_Unpack (both in the timed loop)
 *   pack_loop      the same data packed/unpacked by a plain C loop, MPI_BYTE
 * mo_alignment, per size: vector_int with both buffers at byte offsets 0-7
 * from a page boundary, and contig at offsets 0, 1, 8, 63, 64, 4096, 4097.
 *
 * A sample is one timed block of `iterations` round trips; its one-way time
 * is block / iterations / 2. Samples are taken round-robin over the cases
 * of a size (case 1 sample 1, case 2 sample 1, ..., case 1 sample 2, ...),
 * so that a disturbance touches all cases alike and ratios between cases
 * measured side by side are fair.
 *
 * Validation (in the benchmark): the payload is a byte pattern defined in
 * pack order (byte j = j % 251 + 1, never 0) scattered into the send buffer
 * with MPI_Unpack. Before each case's first sample both ranks zero their
 * receive buffers; after it each packs its receive buffer with the case's
 * layout and compares to the pattern, and checks that every byte outside
 * the layout is still 0 (the gaps). pack_mpi and pack_loop also record a
 * checksum (FNV-1a) of their packed buffers: the same bytes must move. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_main.h"

#ifdef MO_ALIGNMENT
#define BENCH "alignment"
#define DEFAULT_SIZES "1K,64K,1M"
#else
#define BENCH "datatypes"
#define DEFAULT_SIZES "64,256,1K,64K,256K,1M"
#endif
#define MAX_SAMPLES 200
#define MSG_TAG 31
#define MAX_OFFSET 4097
#define MAX_SIZE (512 << 20)
#define STRUCT_PAYLOAD 13 /* int + double + char */

typedef enum {
    K_CONTIG,
    K_VEC_CHAR,
    K_VEC_INT,
    K_VEC_DOUBLE,
    K_INDEXED,
    K_STRUCT,
    K_PACK_MPI,
    K_PACK_LOOP
} dt_kind;

static const char *const KIND_NAMES[] = {"contig",  "vector_char", "vector_int", "vector_double",
                                         "indexed", "struct",      "pack_mpi",   "pack_loop"};

typedef struct dt_elem {
    int i;
    double d;
    char c;
} dt_elem;

typedef struct dt_case {
    dt_kind kind;
    size_t offset;    /* bytes from a page boundary, both buffers */
    char label[48];   /* e.g. "vector_int" or "vector_int+3" */
    /* per size, set up by setup_case */
    MPI_Datatype type; /* the layout (count 1); MPI_DATATYPE_NULL for contig */
    uint64_t payload; /* bytes that travel */
    size_t extent;    /* bytes the layout spans */
    long iterations;
    size_t n;
    double samples[MAX_SAMPLES];
    mo_stats st;
    bool valid;
    uint64_t checksum; /* packed buffer (pack cases), else 0 */
    bool has_checksum;
} dt_case;

typedef struct dt_size {
    uint64_t bytes;
    dt_case *cases; /* ncases, results per size */
} dt_size;

typedef struct dt_state {
    const mo_options *opts;
    int ncases;
    dt_case *tmpl; /* kinds and offsets */
    dt_size *sizes;
    int nsizes;
    unsigned char *sbuf, *rbuf, *packs, *packr, *pattern, *scratch;
    size_t bufbytes;
} dt_state;

/* ---- layouts ---------------------------------------------------------- */

static const int INDEXED_BLOCKS[] = {1, 3, 2, 7, 5, 4};
#define N_INDEXED_BLOCKS ((int)(sizeof INDEXED_BLOCKS / sizeof INDEXED_BLOCKS[0]))

/* The layout of case c carrying about `bytes` bytes (its payload may be a
 * few bytes less when the element does not divide it). */
static int make_type(dt_case *c, uint64_t bytes)
{
    c->type = MPI_DATATYPE_NULL;
    switch (c->kind) {
    case K_CONTIG:
        c->payload = bytes;
        c->extent = bytes;
        return 0;
    case K_VEC_CHAR:
    case K_VEC_INT:
    case K_VEC_DOUBLE:
    case K_PACK_MPI:
    case K_PACK_LOOP: {
        MPI_Datatype base = c->kind == K_VEC_CHAR ? MPI_CHAR : c->kind == K_VEC_DOUBLE ? MPI_DOUBLE : MPI_INT;
        int esz = c->kind == K_VEC_CHAR ? 1 : c->kind == K_VEC_DOUBLE ? 8 : 4;
        int n = (int)(bytes / (uint64_t)esz);
        c->payload = (uint64_t)n * (uint64_t)esz;
        c->extent = n > 0 ? (size_t)(2 * n - 1) * (size_t)esz : 0;
        if (n == 0) {
            MPI_Type_contiguous(0, MPI_CHAR, &c->type);
        } else {
            MPI_Type_vector(n, 1, 2, base, &c->type);
        }
        break;
    }
    case K_INDEXED: {
        int cap = (int)bytes + 1, nb = 0, disp = 0;
        int *len = malloc((size_t)cap * sizeof *len), *dsp = malloc((size_t)cap * sizeof *dsp);
        if (!len || !dsp) {
            free(len);
            free(dsp);
            return -1;
        }
        uint64_t left = bytes;
        for (int k = 0; left > 0; k++) {
            int l = INDEXED_BLOCKS[k % N_INDEXED_BLOCKS];
            if ((uint64_t)l > left)
                l = (int)left;
            len[nb] = l;
            dsp[nb] = disp;
            nb++;
            disp += 2 * l; /* the block, then a gap of its length */
            left -= (uint64_t)l;
        }
        c->payload = bytes;
        c->extent = nb > 0 ? (size_t)(dsp[nb - 1] + len[nb - 1]) : 0;
        MPI_Type_indexed(nb, len, dsp, MPI_CHAR, &c->type);
        free(len);
        free(dsp);
        break;
    }
    case K_STRUCT: {
        int bl[3] = {1, 1, 1};
        MPI_Aint disp[3] = {offsetof(dt_elem, i), offsetof(dt_elem, d), offsetof(dt_elem, c)};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, one, resized;
        MPI_Type_create_struct(3, bl, disp, types, &one);
        MPI_Type_create_resized(one, 0, (MPI_Aint)sizeof(dt_elem), &resized);
        MPI_Type_free(&one);
        int n = (int)(bytes / STRUCT_PAYLOAD);
        c->payload = (uint64_t)n * STRUCT_PAYLOAD;
        c->extent = (size_t)n * sizeof(dt_elem);
        MPI_Type_contiguous(n, resized, &c->type);
        MPI_Type_free(&resized);
        break;
    }
    }
    MPI_Type_commit(&c->type);
    return 0;
}

/* Contiguous MPI_BYTE stands in for the contig case's layout. */
static void layout(const dt_case *c, MPI_Datatype *type, int *count)
{
    if (c->type == MPI_DATATYPE_NULL) {
        *type = MPI_BYTE;
        *count = (int)c->payload;
    } else {
        *type = c->type;
        *count = 1;
    }
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- the timed loop (both ranks) --------------------------------------- */

static void pack_loop_ints(const unsigned char *strided, unsigned char *packed, size_t n)
{
    const int *s = (const void *)strided;
    int *d = (void *)packed;
    for (size_t k = 0; k < n; k++)
        d[k] = s[2 * k];
}

static void unpack_loop_ints(const unsigned char *packed, unsigned char *strided, size_t n)
{
    const int *s = (const void *)packed;
    int *d = (void *)strided;
    for (size_t k = 0; k < n; k++)
        d[2 * k] = s[k];
}

/* One exchange direction: send from sb with the case's method. */
static void send_one(dt_state *st, const dt_case *c, unsigned char *sb, int peer, MPI_Comm comm)
{
    MPI_Datatype t;
    int count;
    if (c->kind == K_PACK_MPI) {
        int pos = 0;
        MPI_Pack(sb, 1, c->type, st->packs, (int)st->bufbytes, &pos, comm);
        MPI_Send(st->packs, pos, MPI_PACKED, peer, MSG_TAG, comm);
    } else if (c->kind == K_PACK_LOOP) {
        /* The buffers of the int cases are 4-byte aligned (offset 0). */
        pack_loop_ints(sb, st->packs, (size_t)c->payload / 4);
        MPI_Send(st->packs, (int)c->payload, MPI_BYTE, peer, MSG_TAG, comm);
    } else {
        layout(c, &t, &count);
        MPI_Send(sb, count, t, peer, MSG_TAG, comm);
    }
}

static void recv_one(dt_state *st, const dt_case *c, unsigned char *rb, int peer, MPI_Comm comm)
{
    MPI_Datatype t;
    int count;
    if (c->kind == K_PACK_MPI) {
        int pos = 0;
        MPI_Recv(st->packr, (int)st->bufbytes, MPI_PACKED, peer, MSG_TAG, comm, MPI_STATUS_IGNORE);
        MPI_Unpack(st->packr, (int)st->bufbytes, &pos, rb, 1, c->type, comm);
    } else if (c->kind == K_PACK_LOOP) {
        MPI_Recv(st->packr, (int)c->payload, MPI_BYTE, peer, MSG_TAG, comm, MPI_STATUS_IGNORE);
        unpack_loop_ints(st->packr, rb, (size_t)c->payload / 4);
    } else {
        layout(c, &t, &count);
        MPI_Recv(rb, count, t, peer, MSG_TAG, comm, MPI_STATUS_IGNORE);
    }
}

/* iters round trips; one-way seconds on rank 0, 0 on rank 1. */
static double run_block(dt_state *st, const dt_case *c, MPI_Comm comm, int rank, long iters)
{
    unsigned char *sb = st->sbuf + c->offset, *rb = st->rbuf + c->offset;
    MPI_Barrier(comm);
    uint64_t t0 = mo_timer_now_ns();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            send_one(st, c, sb, 1, comm);
            recv_one(st, c, rb, 1, comm);
        } else {
            recv_one(st, c, rb, 0, comm);
            send_one(st, c, sb, 0, comm);
        }
    }
    uint64_t t1 = mo_timer_now_ns();
    return rank == 0 ? (double)(t1 - t0) / 1e9 / (double)iters / 2.0 : 0.0;
}

/* Scatters the pattern into a zeroed send buffer at the case's offset. */
static void prepare_send(dt_state *st, const dt_case *c, MPI_Comm comm)
{
    MPI_Datatype t;
    int count, pos = 0;
    memset(st->sbuf, 0, st->bufbytes);
    layout(c, &t, &count);
    MPI_Unpack(st->pattern, (int)st->bufbytes, &pos, st->sbuf + c->offset, count, t, comm);
}

/* The receiver's check: the payload is the pattern, the rest still 0. */
static bool check_recv(dt_state *st, const dt_case *c, MPI_Comm comm)
{
    MPI_Datatype t;
    int count, pos = 0;
    layout(c, &t, &count);
    MPI_Pack(st->rbuf + c->offset, count, t, st->scratch, (int)st->bufbytes, &pos, comm);
    if ((uint64_t)pos != c->payload || memcmp(st->scratch, st->pattern, c->payload) != 0)
        return false;
    /* Gaps: zero the payload bytes of a copy; nothing non-zero may remain. */
    memcpy(st->scratch, st->rbuf, st->bufbytes);
    memset(st->packr, 0, c->payload);
    pos = 0;
    MPI_Unpack(st->packr, (int)st->bufbytes, &pos, st->scratch + c->offset, count, t, comm);
    for (size_t i = 0; i < st->bufbytes; i++)
        if (st->scratch[i] != 0)
            return false;
    return true;
}

/* Both ranks: every case of one size, samples round-robin. Returns 0, or
 * -1 when out of memory (on either rank: agreed). */
static int measure_size(dt_state *st, dt_size *sz, MPI_Comm comm, int rank)
{
    const mo_options *o = st->opts;
    int ok = 1;
    for (int k = 0; k < st->ncases; k++) {
        dt_case *c = &sz->cases[k];
        *c = st->tmpl[k];
        if (make_type(c, sz->bytes) != 0)
            ok = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        return -1;
    /* First visit: validation sample, warm-up, iterations. */
    for (int k = 0; k < st->ncases; k++) {
        dt_case *c = &sz->cases[k];
        prepare_send(st, c, comm);
        memset(st->rbuf, 0, st->bufbytes);
        run_block(st, c, comm, rank, 1);
        int valid = check_recv(st, c, comm);
        MPI_Allreduce(MPI_IN_PLACE, &valid, 1, MPI_INT, MPI_MIN, comm);
        c->valid = valid != 0;
        if (c->kind == K_PACK_MPI || c->kind == K_PACK_LOOP) {
            /* rank 0's packed send buffer of the last exchange */
            c->checksum = fnv1a(st->packs, c->payload);
            c->has_checksum = true;
        }
        /* Two warm-up blocks (both ranks run them: a fixed count); the
         * faster one estimates the time per round trip on rank 0. */
        double est = 0;
        long warm = o->warmup > 2 ? (o->warmup - 1) / 2 : 1;
        for (int b = 0; b < 2; b++) {
            double t = run_block(st, c, comm, rank, warm);
            if (b == 0 || t < est)
                est = t;
        }
        long it = mo_round_trips(o, est);
        int64_t it64 = it;
        MPI_Bcast(&it64, 1, MPI_INT64_T, 0, comm);
        c->iterations = (long)it64;
    }
    long reps = o->reps < MAX_SAMPLES ? o->reps : MAX_SAMPLES;
    for (long r = 0; r < reps; r++) {
        for (int k = 0; k < st->ncases; k++) {
            dt_case *c = &sz->cases[k];
            prepare_send(st, c, comm);
            c->samples[c->n++] = run_block(st, c, comm, rank, c->iterations);
        }
    }
    for (int k = 0; k < st->ncases; k++) {
        dt_case *c = &sz->cases[k];
        if (rank == 0 && mo_stats_summarize(c->samples, c->n, &c->st) != 0)
            return -1;
        if (c->type != MPI_DATATYPE_NULL)
            MPI_Type_free(&c->type);
    }
    return 0;
}

/* ---- output ----------------------------------------------------------- */

/* One of "cases". */
static void write_case(mo_json *w, const void *item, const void *ctx)
{
    const dt_case *c = item;
    (void)ctx;
    mo_json_kv_string(w, "case", c->label);
    mo_json_kv_string(w, "kind", KIND_NAMES[c->kind]);
    mo_json_kv_int64(w, "offset", (int64_t)c->offset);
    mo_json_kv_uint64(w, "payload_bytes", c->payload);
    mo_json_kv_uint64(w, "extent_bytes", c->extent);
    mo_json_kv_int64(w, "iterations", c->iterations);
    mo_json_kv_bool(w, "valid", c->valid);
    if (c->has_checksum) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)c->checksum);
        mo_json_kv_string(w, "packed_checksum", hex);
    } else {
        mo_json_kv_string(w, "packed_checksum", NULL);
    }
    mo_json_kv_double(w, "one_way_s", c->st.median);
    mo_json_stats(w, "time", &c->st);
    mo_json_kv_doubles(w, "samples_s", c->samples, c->n);
}

/* One of "sizes". */
static void write_size(mo_json *w, const void *item, const void *ctx)
{
    const dt_size *sz = item;
    const dt_state *st = ctx;
    mo_json_kv_uint64(w, "bytes", sz->bytes);
    mo_json_objects(w, "cases", sz->cases, sizeof *sz->cases, (size_t)st->ncases, write_case, NULL);
}

static void write_results(mo_json *w, const void *ctx)
{
    const dt_state *st = ctx;
    mo_json_kv_string(w, "mode", BENCH);
    mo_json_kv_int64(w, "struct_extent", (int64_t)sizeof(dt_elem));
    mo_json_kv_int64(w, "struct_payload", STRUCT_PAYLOAD);
    mo_json_objects(w, "sizes", st->sizes, sizeof *st->sizes, (size_t)st->nsizes, write_size, st);
}

/* ---- main ------------------------------------------------------------- */

static int build_cases(dt_state *st)
{
#ifdef MO_ALIGNMENT
    static const size_t contig_offsets[] = {0, 1, 8, 63, 64, 4096, 4097};
    const int nc = (int)(sizeof contig_offsets / sizeof contig_offsets[0]);
    st->ncases = 8 + nc;
    st->tmpl = calloc((size_t)st->ncases, sizeof *st->tmpl);
    if (!st->tmpl)
        return -1;
    for (int k = 0; k < 8; k++) {
        st->tmpl[k].kind = K_VEC_INT;
        st->tmpl[k].offset = (size_t)k;
    }
    for (int k = 0; k < nc; k++) {
        st->tmpl[8 + k].kind = K_CONTIG;
        st->tmpl[8 + k].offset = contig_offsets[k];
    }
    for (int k = 0; k < st->ncases; k++)
        snprintf(st->tmpl[k].label, sizeof st->tmpl[k].label, "%s+%zu", KIND_NAMES[st->tmpl[k].kind],
                 st->tmpl[k].offset);
#else
    st->ncases = 8;
    st->tmpl = calloc((size_t)st->ncases, sizeof *st->tmpl);
    if (!st->tmpl)
        return -1;
    for (int k = 0; k < st->ncases; k++) {
        st->tmpl[k].kind = (dt_kind)k;
        snprintf(st->tmpl[k].label, sizeof st->tmpl[k].label, "%s", KIND_NAMES[k]);
    }
#endif
    return 0;
}

static void dt_teardown(mo_bench *b, void *ctx)
{
    dt_state *st = ctx;
    (void)b;
    for (int i = 0; i < st->nsizes; i++)
        free(st->sizes[i].cases);
    free(st->sizes);
    free(st->tmpl);
    free(st->sbuf);
    free(st->rbuf);
    free(st->packs);
    free(st->packr);
    free(st->pattern);
    free(st->scratch);
}

/* Buffers span 2 x the largest size, and MPI_Pack takes an int length. */
static int check_sizes(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    (void)ctx;
    if (o->sizes.v[o->sizes.n - 1] > (uint64_t)MAX_SIZE) {
        snprintf(err, errlen, "sizes above %d bytes are not supported (buffers span twice the size)",
                 MAX_SIZE);
        return -1;
    }
    return 0;
}

/* Ranks 0 and 1 take part: the cases, and buffers for the largest layout. */
static void dt_setup(mo_bench *b, void *ctx)
{
    dt_state *st = ctx;
    const mo_options *o = &b->opts;
    st->opts = o;
    const int member = b->rank < 2;
    /* Buffers: the largest layout spans under 2 x largest size (indexed:
     * block + equal gap; struct: 24/13 < 2), plus the largest offset. */
    const uint64_t largest = o->sizes.v[o->sizes.n - 1];
    st->bufbytes = 2 * (size_t)largest + MAX_OFFSET + 64;
    int ok = build_cases(st) == 0;
    if (member && ok) {
        st->sbuf = mo_page_alloc(st->bufbytes);
        st->rbuf = mo_page_alloc(st->bufbytes);
        st->packs = mo_page_alloc(st->bufbytes);
        st->packr = mo_page_alloc(st->bufbytes);
        st->pattern = malloc(st->bufbytes);
        st->scratch = malloc(st->bufbytes);
        st->sizes = calloc(o->sizes.n, sizeof *st->sizes);
        ok = st->sbuf && st->rbuf && st->packs && st->packr && st->pattern && st->scratch && st->sizes;
        for (size_t i = 0; ok && i < o->sizes.n; i++) {
            st->sizes[i].cases = calloc((size_t)st->ncases, sizeof *st->sizes[i].cases);
            ok = st->sizes[i].cases != NULL;
        }
        if (ok) {
            for (size_t j = 0; j < st->bufbytes; j++)
                st->pattern[j] = (unsigned char)(j % 251 + 1);
            memset(st->packs, 0, st->bufbytes);
            memset(st->packr, 0, st->bufbytes);
        }
    }
    b->have = ok;
    /* Both warnings here, the binding one first (.unbound_peer would add it second). */
    if (b->rank == 0) {
        mo_warn_if_unbound(&b->doc, &b->prov, 0, 1);
        if (b->nranks > 2)
            mo_result_warn(&b->doc, "%d ranks: only ranks 0 and 1 take part", b->nranks);
    }
    snprintf(b->no_alloc, sizeof b->no_alloc, "cannot allocate %zu-byte buffers", st->bufbytes);
    b->ready.no_alloc = b->no_alloc;
    b->ready.quiet = true;
    b->ready.no_work_loop = true;
}

static int dt_one_point(mo_bench *b, void *ctx, int i, char *label, size_t labellen)
{
    dt_state *st = ctx;
    st->sizes[i].bytes = b->opts.sizes.v[i];
    if (measure_size(st, &st->sizes[i], b->comm, b->rank) != 0)
        return MO_POINT_OOM;
    st->nsizes++;
    snprintf(label, labellen, "%llu B", (unsigned long long)st->sizes[i].bytes);
    return MO_POINT_OK;
}

int main(int argc, char **argv)
{
    static dt_state st;
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, NULL, 2, true, check_sizes, NULL}, .pair = true,
        .results = write_results, .state = &st, .setup = dt_setup, .teardown = dt_teardown,
        .mode = MO_BENCH_LOCKSTEP, .unit = "sizes", .npoints = mo_bench_nsizes, .point = dt_one_point,
        .clock_at_loop = true,
    };
    return mo_bench_main(argc, argv, &k);
}
