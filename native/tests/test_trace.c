/* test_trace.c - the timeline trace writer (mop_trace.c) without MPI: the
 * file it writes for a hand-made event stream of two threads, byte for byte
 * where it matters (header, chunk order, events as pushed, the engine's
 * bounds per transfer), the size cap (what fits is written, the rest
 * counted, the file stays readable), a file that is never closed (a crashed
 * rank), and a file that cannot be opened. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mo_test.h"
#include "mop_coll_ops.h"
#include "mop_trace.h"

static const char *const fn_names[] = {"MPI_Init", "MPI_Isend", "MPI_Wait", "MPI_Send"};
static const char *const region_table[] = {"(no region)", "r1"};

static const char *const *regions(size_t *n)
{
    *n = 2;
    return region_table;
}

typedef struct chunk {
    uint32_t type, thread, count, bytes;
    const unsigned char *payload;
} chunk;

typedef struct file {
    unsigned char *data;
    size_t size;
    chunk chunks[32];
    int n;
    size_t tail; /* bytes after the last whole chunk */
} file;

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static double getf64(const unsigned char *p)
{
    double v;
    memcpy(&v, p, 8);
    return v;
}

static void read_file(const char *path, file *f)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (!fp)
        return;
    f->data = malloc(1 << 20);
    f->size = fread(f->data, 1, 1 << 20, fp);
    fclose(fp);
    size_t off = MOP_TRACE_HEADER_BYTES;
    while (off + MOP_TRACE_CHUNK_BYTES <= f->size && f->n < 32) {
        chunk c = {get32(f->data + off), get32(f->data + off + 4), get32(f->data + off + 8),
                   get32(f->data + off + 12), f->data + off + MOP_TRACE_CHUNK_BYTES};
        if (off + MOP_TRACE_CHUNK_BYTES + c.bytes > f->size)
            break;
        f->chunks[f->n++] = c;
        off += MOP_TRACE_CHUNK_BYTES + c.bytes;
    }
    f->tail = f->size - off;
}

/* Thread A (index 0): Isend at 1000 (call until 2000), computes 10 us, Wait
 * from 12000 to 13000. xfer 5 us: case across-calls, max = min(10, 5) = 5 us,
 * min = 5 - (12 - 10) = 3 us (12 us from begin to end, 10 of them computing). */
static const mop_event thread_a[] = {
    {.type = MOP_EV_ENTER, .t = 1000, .id = 1},
    {.type = MOP_EV_BEGIN, .t = 1000, .key = 7, .bytes = 1024, .kind = MOP_KIND_SEND, .id = 1,
     .arg = 1},
    {.type = MOP_EV_EXIT, .t = 2000},
    {.type = MOP_EV_ENTER, .t = 12000, .id = 2},
    {.type = MOP_EV_END, .t = 13000, .key = 7, .bytes = -1},
    {.type = MOP_EV_EXIT, .t = 13000},
};
/* Thread B (index 1): a blocking 64-byte Send to rank 0 (in-call: 0 and 0),
 * then region r1. */
static const mop_event thread_b[] = {
    {.type = MOP_EV_ENTER, .t = 500, .id = 3},
    {.type = MOP_EV_INCALL, .t = 500, .bytes = 64, .kind = MOP_KIND_SEND, .id = 3, .arg = 0},
    {.type = MOP_EV_EXIT, .t = 900},
    {.type = MOP_EV_REGION_BEGIN, .t = 950, .id = 1},
    {.type = MOP_EV_REGION_END, .t = 960, .id = 1},
};
static const int owner_a = 1, owner_b = 2; /* their addresses name the threads */

enum { PATH_BYTES = 512 };

typedef struct setup {
    mop_xfer_table table;
    mop_process_config cfg;
    mop_process pa, pb;
} setup;

/* Sets up a table (5 us at every size) and the two threads' engines on tr,
 * and runs their events through it: B's, then A's. */
static void setup_run(setup *s, mop_trace *tr)
{
    mop_xfer_table_init(&s->table);
    mop_xfer_table_add(&s->table, MOP_XFER_INTRA, 0, 5e-6);
    s->cfg = (mop_process_config){.table = &s->table, .s_per_tick = 1e-9};
    mop_trace_configure(tr, &s->cfg);
    CHECK(mop_process_init(&s->pa, &s->cfg) == 0);
    CHECK(mop_process_init(&s->pb, &s->cfg) == 0);
    mop_trace_thread(tr, &owner_a);
    mop_trace_process(tr, &owner_b, &s->pb, thread_b, sizeof thread_b / sizeof thread_b[0]);
    mop_trace_process(tr, &owner_a, &s->pa, thread_a, sizeof thread_a / sizeof thread_a[0]);
    mop_trace_finish(tr, &owner_a, &s->pa);
    mop_trace_finish(tr, &owner_b, &s->pb);
}

static void setup_free(setup *s)
{
    mop_process_free(&s->pa);
    mop_process_free(&s->pb);
    mop_xfer_table_free(&s->table);
}

static const mop_trace_info info = {
    .rank = 1, .size = 2, .s_per_tick = 1e-9, .clock_tsc = false,
    .sync_ticks = 123456, .sync_s = 0.25, .sync_rtt_s = 4e-6,
    .fn_names = fn_names, .nfn = 4, .region_names = regions,
};

/* Opens tr on dir/name with that size cap; path gets the whole name (for
 * read_file and unlink). Returns mop_trace_open's result. */
static int open_in(mop_trace *tr, char path[PATH_BYTES], const char *dir, const char *name,
                   uint64_t cap)
{
    snprintf(path, PATH_BYTES, "%s/%s", dir, name);
    return mop_trace_open(tr, path, cap, &info);
}

/* The two threads' events in a trace with room for all: dir/name. */
static void trace_all(mop_trace *tr, setup *s, char path[PATH_BYTES], const char *dir,
                      const char *name)
{
    CHECK(open_in(tr, path, dir, name, 1u << 20) == 0);
    setup_run(s, tr);
}

static void test_format(const char *dir)
{
    char path[PATH_BYTES];
    mop_trace tr = MOP_TRACE_INITIALIZER;
    setup s;
    trace_all(&tr, &s, path, dir, "trace.rank-1.mopt");
    mop_trace_set_end_sync(&tr, 999999, 1.5, 3e-6);
    mop_trace_close(&tr);
    mop_trace_stats st;
    mop_trace_get_stats(&tr, &st);
    CHECK(st.closed && !st.truncated && st.error[0] == '\0');
    CHECK(st.events == 11 && st.transfers == 2 && st.dropped_events == 0);
    CHECK(st.threads == 2);
    CHECK_STR(st.file, "trace.rank-1.mopt");

    file f;
    read_file(path, &f);
    CHECK(f.size == st.bytes);
    CHECK(memcmp(f.data, "MOPTRACE", 8) == 0);
    CHECK(get32(f.data + 8) == MOP_TRACE_VERSION && get32(f.data + 12) == 0x01020304);
    CHECK(get32(f.data + 16) == 1 && get32(f.data + 20) == 2);
    CHECK(getf64(f.data + 24) == 1e-9);
    CHECK(get64(f.data + 32) == 123456 && getf64(f.data + 40) == 0.25);
    CHECK(getf64(f.data + 48) == 4e-6 && get32(f.data + 56) == 1);
    CHECK(f.data[60] == 32 && f.data[62] == 72);

    /* fn names, kind names, region names (before the first events), B's
     * events and transfer, A's events and transfer, END; nothing after */
    CHECK(f.n == 8 && f.tail == 0);
    if (f.n != 8)
        return;
    CHECK(f.chunks[0].type == MOP_TRACE_FN_NAMES && f.chunks[0].count == 4);
    CHECK(get32(f.chunks[0].payload) == 0);
    CHECK_STR((const char *)f.chunks[0].payload + 4, "MPI_Init");
    CHECK(f.chunks[1].type == MOP_TRACE_KIND_NAMES);
    /* 4 point-to-point kinds, 2 one-sided, generalized requests, 22 blocking
     * and 22 non-blocking collectives */
    CHECK(f.chunks[1].count == 7 + 2 * MOP_COLL_NOPS);
    CHECK(f.chunks[2].type == MOP_TRACE_REGION_NAMES && f.chunks[2].count == 2);
    CHECK(f.chunks[2].bytes == (4 + 12) + (4 + 3));
    CHECK(f.chunks[3].type == MOP_TRACE_EVENTS && f.chunks[3].thread == 1 &&
          f.chunks[3].count == 5 && f.chunks[3].bytes == 5 * 32);
    CHECK(memcmp(f.chunks[3].payload, thread_b, sizeof thread_b) == 0);
    CHECK(f.chunks[4].type == MOP_TRACE_TRANSFERS && f.chunks[4].thread == 1 &&
          f.chunks[4].count == 1);
    const unsigned char *x = f.chunks[4].payload;
    CHECK(get64(x) == 500 && get64(x + 8) == 500); /* in-call: the call's enter twice */
    CHECK(get64(x + 24) == 64 && getf64(x + 32) == 5e-6);
    CHECK(getf64(x + 40) == 0.0 && getf64(x + 48) == 0.0);
    CHECK(get32(x + 56) == 0 && x[60] == 3 && x[64] == MOP_KIND_SEND);
    CHECK(x[65] == MOP_CASE_IN_CALL && x[66] == 0);
    CHECK(f.chunks[5].type == MOP_TRACE_EVENTS && f.chunks[5].thread == 0 &&
          f.chunks[5].count == 6);
    CHECK(memcmp(f.chunks[5].payload, thread_a, sizeof thread_a) == 0);
    CHECK(f.chunks[6].type == MOP_TRACE_TRANSFERS && f.chunks[6].thread == 0 &&
          f.chunks[6].count == 1);
    x = f.chunks[6].payload;
    CHECK(get64(x) == 1000 && get64(x + 8) == 13000 && get64(x + 16) == 7);
    CHECK(get64(x + 24) == 1024);
    CHECK_NEAR(getf64(x + 40), 3e-6, 1e-15);
    CHECK_NEAR(getf64(x + 48), 5e-6, 1e-15);
    CHECK(get32(x + 56) == 1 && x[60] == 1 && x[65] == MOP_CASE_ACROSS);
    CHECK(x[66] == MOP_TRACE_HAS_KEY);
    const chunk *end = &f.chunks[7];
    CHECK(end->type == MOP_TRACE_END && end->bytes == 80);
    CHECK(get64(end->payload) == 11 && get64(end->payload + 8) == 0);
    CHECK(get64(end->payload + 16) == 2 && get64(end->payload + 24) == 0);
    CHECK(get64(end->payload + 32) == 1u << 20);
    CHECK(get64(end->payload + 40) == f.size - 16 - 80);
    CHECK(get32(end->payload + 48) == 0 && get32(end->payload + 52) == 2);
    CHECK(get64(end->payload + 56) == 999999 && getf64(end->payload + 64) == 1.5);
    CHECK(getf64(end->payload + 72) == 3e-6);

    /* after the close nothing is written or counted */
    mop_trace_process(&tr, &owner_a, &s.pa, thread_a, 1);
    mop_trace_get_stats(&tr, &st);
    CHECK(st.events == 11 && st.dropped_events == 0 && st.bytes == f.size);

    /* the engine saw every event: the trace only watches */
    CHECK(s.pa.total.transfers == 1 && s.pb.total.transfers == 1);
    free(f.data);
    setup_free(&s);
    unlink(path);
}

/* The one chunk of `type` in f, which must also end with its END chunk (the
 * records written after the close are not there); NULL, and a failed check,
 * where there is not exactly one. */
static const chunk *only_chunk(const file *f, uint32_t type)
{
    const chunk *one = NULL;
    int found = 0;
    for (int i = 0; i < f->n; i++)
        if (f->chunks[i].type == type) {
            one = &f->chunks[i];
            found++;
        }
    CHECK(found == 1);
    CHECK(f->n > 0 && f->chunks[f->n - 1].type == MOP_TRACE_END);
    return found == 1 ? one : NULL;
}

/* A communicator's record: id, flags, sizes, then the members' world ranks. */
static void test_comms(const char *dir)
{
    char path[PATH_BYTES];
    mop_trace tr = MOP_TRACE_INITIALIZER;
    CHECK(open_in(&tr, path, dir, "comms.mopt", 1u << 20) == 0);
    const int32_t local[] = {3, 1}, remote[] = {0};
    mop_trace_comm(&tr, 0xabcdef0123456789u, MOP_TRACE_COMM_INTER, local, 2, remote, 1);
    mop_trace_close(&tr);
    mop_trace_comm(&tr, 1, 0, local, 2, NULL, 0); /* after the close: nothing */
    file f;
    read_file(path, &f);
    const chunk *c = only_chunk(&f, MOP_TRACE_COMMS);
    if (c) {
        CHECK(c->count == 1 && c->bytes == 24 + 3 * 4);
        CHECK(get64(c->payload) == 0xabcdef0123456789u);
        CHECK(get32(c->payload + 8) == MOP_TRACE_COMM_INTER);
        CHECK(get32(c->payload + 12) == 2 && get32(c->payload + 16) == 1);
        CHECK(get32(c->payload + 24) == 3 && get32(c->payload + 28) == 1);
        CHECK(get32(c->payload + 32) == 0);
    }
    free(f.data);
    unlink(path);
}

/* A datatype's record: id, flags, counts, shape, the tree's values, then the
 * names padded to 8 bytes (the layout vector(4, 2, 5) of MPI_DOUBLE). */
static void test_dtypes(const char *dir)
{
    char path[PATH_BYTES];
    mop_trace tr = MOP_TRACE_INITIALIZER;
    CHECK(open_in(&tr, path, dir, "dtypes.mopt", 1u << 20) == 0);
    const int64_t shape[4] = {64, 136, 0, 136};
    const int64_t tree[] = {3, 3, 0, 1, 4, 2, 5, 0, 8};
    const char names[] = "MPI_DOUBLE"; /* 11 bytes with its NUL */
    mop_trace_dtype(&tr, 7, 0, shape, tree, 9, names, sizeof names);
    mop_trace_close(&tr);
    mop_trace_dtype(&tr, 8, 0, shape, tree, 9, names, sizeof names); /* closed: nothing */
    file f;
    read_file(path, &f);
    const chunk *c = only_chunk(&f, MOP_TRACE_DTYPES);
    if (c) {
        CHECK(c->count == 1 && c->bytes == 48 + 9 * 8 + 16);
        CHECK(get32(c->payload) == 7 && get32(c->payload + 4) == 0);
        CHECK(get32(c->payload + 8) == 9 && get32(c->payload + 12) == sizeof names);
        CHECK(get64(c->payload + 16) == 64 && get64(c->payload + 24) == 136);
        CHECK(get64(c->payload + 32) == 0 && get64(c->payload + 40) == 136);
        for (int k = 0; k < 9; k++)
            CHECK(get64(c->payload + 48 + 8 * k) == (uint64_t)tree[k]);
        CHECK_STR((const char *)c->payload + 48 + 72, "MPI_DOUBLE");
        CHECK(c->payload[48 + 72 + 11] == 0 && c->payload[48 + 72 + 15] == 0);
    }
    free(f.data);
    unlink(path);
}

static void test_cap(const char *dir)
{
    char path[PATH_BYTES];
    /* Learn the size of header and name tables with a roomy cap first. */
    mop_trace probe = MOP_TRACE_INITIALIZER;
    CHECK(open_in(&probe, path, dir, "capped.mopt", 1u << 20) == 0);
    uint64_t names = probe.st.bytes + 16 + (4 + 12) + (4 + 3); /* + the region chunk */
    mop_trace_close(&probe);

    /* Room for the region names and 3 of B's 5 events: the rest is dropped. */
    uint64_t cap = names + 16 + 3 * 32;
    mop_trace tr = MOP_TRACE_INITIALIZER;
    CHECK(mop_trace_open(&tr, path, cap, &info) == 0);
    setup s;
    setup_run(&s, &tr);
    mop_trace_close(&tr);
    mop_trace_stats st;
    mop_trace_get_stats(&tr, &st);
    CHECK(st.truncated && st.closed);
    CHECK(st.events == 3 && st.dropped_events == 2 + 6);
    CHECK(st.transfers == 0 && st.dropped_transfers == 2);
    CHECK(st.bytes == cap + 16 + 80); /* END goes beyond the cap */
    /* the engine's figures do not depend on the cap */
    CHECK(s.pa.total.transfers == 1 && s.pb.total.transfers == 1);

    file f;
    read_file(path, &f);
    CHECK(f.size == cap + 16 + 80 && f.tail == 0);
    CHECK(f.n == 5);
    if (f.n == 5) {
        CHECK(f.chunks[3].type == MOP_TRACE_EVENTS && f.chunks[3].count == 3);
        CHECK(memcmp(f.chunks[3].payload, thread_b, 3 * 32) == 0);
        const unsigned char *e = f.chunks[4].payload;
        CHECK(f.chunks[4].type == MOP_TRACE_END);
        CHECK(get64(e) == 3 && get64(e + 8) == 8 && get64(e + 16) == 0 && get64(e + 24) == 2);
        CHECK(get64(e + 32) == cap && get32(e + 48) == 1);
        CHECK(getf64(e + 72) < 0); /* no end-of-run alignment was measured */
    }

    /* the profile's "trace" object says so */
    char jpath[512];
    snprintf(jpath, sizeof jpath, "%s/stats.json", dir);
    FILE *jf = fopen(jpath, "w");
    mo_json w;
    mo_json_init(&w, jf);
    mop_trace_stats_json(&w, &st);
    mo_json_finish(&w);
    fclose(jf);
    char buf[1024] = "";
    jf = fopen(jpath, "r");
    size_t n = fread(buf, 1, sizeof buf - 1, jf);
    buf[n] = '\0';
    fclose(jf);
    CHECK(strstr(buf, "\"truncated\": true") != NULL);
    CHECK(strstr(buf, "\"dropped_events\": 8") != NULL);
    CHECK(strstr(buf, "\"file\": \"capped.mopt\"") != NULL);
    free(f.data);
    setup_free(&s);
    unlink(path);
    unlink(jpath);
}

/* A rank that dies after its flushes: every chunk it wrote is whole. */
static void test_unclosed_file_is_readable(const char *dir)
{
    char path[PATH_BYTES];
    mop_trace tr = MOP_TRACE_INITIALIZER;
    setup s;
    trace_all(&tr, &s, path, dir, "crashed.mopt");
    file f;
    read_file(path, &f); /* no close: what a killed process leaves */
    CHECK(f.n == 7 && f.tail == 0);
    CHECK(f.n == 7 && f.chunks[6].type == MOP_TRACE_TRANSFERS);
    free(f.data);
    mop_trace_close(&tr);
    setup_free(&s);
    unlink(path);
}

static void test_unwritable_path(void)
{
    mop_trace tr = MOP_TRACE_INITIALIZER;
    CHECK(mop_trace_open(&tr, "/nonexistent-dir/x.mopt", 1u << 20, &info) == -1);
    CHECK(strstr(tr.st.error, "cannot open x.mopt") != NULL);
    setup s;
    setup_run(&s, &tr); /* events are still processed */
    CHECK(s.pa.total.transfers == 1 && s.pb.total.transfers == 1);
    mop_trace_close(&tr);
    CHECK(!tr.st.closed);
    setup_free(&s);
}

int main(void)
{
    char dir[] = "/tmp/mop_trace_test.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_format(dir);
    test_comms(dir);
    test_dtypes(dir);
    test_cap(dir);
    test_unclosed_file_is_readable(dir);
    test_unwritable_path();
    rmdir(dir);
    return TEST_RESULT();
}
