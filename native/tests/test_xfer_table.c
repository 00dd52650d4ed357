/* test_xfer_table.c - the transfer-time table's collective series (format
 * version 2): op names, lookup with its fallbacks and their flags, reading
 * version 1 and 2 files, the parts of version 4, refusing bad lines, and the engine picking the
 * series from an event's kind and communicator size (its lookup cache must
 * tell series apart). Expected values are hand-computed from the points. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mo_test.h"
#include "mop_process.h"
#include "mop_xfer_table.h"
#include "xfer_table_file.h"

enum { BCAST = MOP_COLL_BCAST, IBCAST = MOP_COLL_NB_OFFSET + MOP_COLL_BCAST };

static void test_op_names(void)
{
    CHECK_STR(mop_coll_op_name(MOP_COLL_BARRIER), "barrier");
    CHECK_STR(mop_coll_op_name(BCAST), "bcast");
    CHECK_STR(mop_coll_op_name(IBCAST), "ibcast");
    CHECK_STR(mop_coll_op_name(MOP_COLL_NB_OFFSET + MOP_COLL_NEIGHBOR_ALLTOALLW),
              "ineighbor_alltoallw");
    CHECK(mop_coll_op_name(-1) == NULL && mop_coll_op_name(MOP_XFER_NCOLL_OPS) == NULL);
    for (int op = 0; op < MOP_XFER_NCOLL_OPS; op++)
        CHECK(mop_coll_op_parse(mop_coll_op_name(op)) == op);
    CHECK(mop_coll_op_parse("ireduce_scatter_block") ==
          MOP_COLL_NB_OFFSET + MOP_COLL_REDUCE_SCATTER_BLOCK);
    CHECK(mop_coll_op_parse("intra") == -1 && mop_coll_op_parse("") == -1);
    /* Kinds travel in 8 bits. */
    CHECK(MOP_KIND_COLL + MOP_XFER_NCOLL_OPS - 1 < 256);
}

/* bcast on 2 ranks: 0 B 2 us, 1 KiB 4 us, 2 KiB 8 us; on 4 ranks: 0 B 3 us,
 * 1 KiB 6 us; on 8 ranks: 0 B 5 us. p2p intra: 0 B 1 us, 1 KiB 3 us. */
static void fill(mop_xfer_table *t)
{
    mop_xfer_table_init(t);
    CHECK(mop_xfer_table_add(t, MOP_XFER_INTRA, 0, 1e-6) == 0);
    CHECK(mop_xfer_table_add(t, MOP_XFER_INTRA, 1024, 3e-6) == 0);
    CHECK(mop_xfer_table_add_coll(t, BCAST, 2, 1024, 4e-6) == 0); /* out of order */
    CHECK(mop_xfer_table_add_coll(t, BCAST, 2, 0, 2e-6) == 0);
    CHECK(mop_xfer_table_add_coll(t, BCAST, 2, 2048, 8e-6) == 0);
    CHECK(mop_xfer_table_add_coll(t, BCAST, 4, 0, 3e-6) == 0);
    CHECK(mop_xfer_table_add_coll(t, BCAST, 4, 1024, 6e-6) == 0);
    CHECK(mop_xfer_table_add_coll(t, BCAST, 8, 0, 5e-6) == 0);
    CHECK(mop_xfer_table_add_coll(t, BCAST, 8, 0, 5e-6) == 0); /* repeated: replaces */
}

/* One collective lookup: its time (to 1e-18 s) and exactly its flags; a macro,
 * so that a failure names the line of the case. */
#define CHECK_COLL(t, op, comm_size, bytes, want, want_flags)                        \
    do {                                                                           \
        unsigned f_;                                                               \
        CHECK_NEAR(mop_xfer_table_lookup_coll((t), (op), (comm_size), (bytes), &f_), \
                   (want), 1e-18);                                                 \
        CHECK(f_ == (want_flags));                                                 \
    } while (0)

static void test_coll_lookup(void)
{
    mop_xfer_table t;
    fill(&t);
    unsigned f;
    CHECK(t.ncoll == 3);
    CHECK(mop_xfer_table_add_coll(&t, MOP_XFER_NCOLL_OPS, 2, 0, 1.0) == -1);
    CHECK(mop_xfer_table_add_coll(&t, BCAST, 0, 0, 1.0) == -1);

    /* exact comm size: interpolation, first point below, last slope above */
    CHECK_COLL(&t, BCAST, 2, 512, 3e-6, 0);
    CHECK_COLL(&t, BCAST, 2, 1536, 6e-6, 0);
    CHECK_COLL(&t, BCAST, 2, 4096, 16e-6, MOP_XFER_EXTRAPOLATED);
    CHECK_COLL(&t, BCAST, 4, 512, 4.5e-6, 0);

    /* Other comm sizes: bcast grows like log2 p (docs/method.md). Between two
     * calibrated sizes linear in log2 p: 3 ranks, 0 B, between 2 (2 us) and 4
     * (3 us): 2 + log2(3/2) us; 5 ranks, 1 KiB between 4 (6 us) and 8 (5 us:
     * one point, 1 KiB beyond it, so extrapolated): falling as the data does. */
    const unsigned M = MOP_XFER_COLL_SIZE_MODELLED;
    CHECK_COLL(&t, BCAST, 3, 0, (2 + log2(1.5)) * 1e-6, M);
    CHECK_COLL(&t, BCAST, 5, 1024, (6 - log2(5.0 / 4)) * 1e-6, M | MOP_XFER_EXTRAPOLATED);
    CHECK_COLL(&t, BCAST, 7, 512, (4.5 + 0.5 * log2(7.0 / 4)) * 1e-6, M | MOP_XFER_EXTRAPOLATED);
    /* beyond them, the slope of the two nearest: 100 ranks from 4 (3 us) and 8
     * (5 us), 2 us per doubling; 1 rank from 2 (4 us at 1 KiB) and 4 (6 us) */
    CHECK_COLL(&t, BCAST, 100, 0, (5 + 2 * log2(100.0 / 8)) * 1e-6, M);
    CHECK_COLL(&t, BCAST, 1, 1024, 2e-6, M);

    /* a size no communicator has (a malformed stream): the nearest series, no model */
    CHECK_COLL(&t, BCAST, 0, 0, 2e-6, M);

    /* ibcast without series: bcast's, flagged (6 ranks: between 4 and 8) */
    CHECK_COLL(&t, IBCAST, 2, 512, 3e-6, MOP_XFER_COLL_NB_AS_BLOCKING);
    CHECK_COLL(&t, IBCAST, 6, 0, (3 + 2 * log2(1.5)) * 1e-6, MOP_XFER_COLL_NB_AS_BLOCKING | M);
    /* ... and its own series once it has one: a single size, so the nearest */
    CHECK(mop_xfer_table_add_coll(&t, IBCAST, 2, 0, 7e-6) == 0);
    CHECK_COLL(&t, IBCAST, 2, 0, 7e-6, 0);
    CHECK_COLL(&t, IBCAST, 8, 0, 7e-6, M);

    /* alltoall moves p blocks: linear in p. 2 ranks 10 us, 4 ranks 40 us: 3
     * ranks 25 us, 8 ranks 40 + 4 * 15 us, 1 rank 10 - 15 us, so 0 (never
     * below); its non-blocking op as the blocking one. Falling data never
     * extrapolates down: allgather 2 ranks 9 us, 4 ranks 8 us -> 16 ranks
     * 8 us, 1 rank 9 us (slope 0 below too) */
    const int ALLTOALL = MOP_COLL_ALLTOALL, ALLGATHER = MOP_COLL_ALLGATHER;
    CHECK(mop_xfer_table_add_coll(&t, ALLTOALL, 2, 0, 10e-6) == 0);
    CHECK(mop_xfer_table_add_coll(&t, ALLTOALL, 4, 0, 40e-6) == 0);
    CHECK_COLL(&t, ALLTOALL, 3, 0, 25e-6, M);
    CHECK_COLL(&t, ALLTOALL, 8, 0, 100e-6, M);
    CHECK_COLL(&t, ALLTOALL, 1, 0, 0.0, M);
    CHECK(mop_xfer_table_lookup_coll(&t, ALLTOALL, 1, 0, &f) == 0.0); /* exactly: clamped */
    CHECK_COLL(&t, MOP_COLL_NB_OFFSET + ALLTOALL, 3, 0, 25e-6, M | MOP_XFER_COLL_NB_AS_BLOCKING);
    CHECK(mop_xfer_table_add_coll(&t, ALLGATHER, 2, 0, 9e-6) == 0);
    CHECK(mop_xfer_table_add_coll(&t, ALLGATHER, 4, 0, 8e-6) == 0);
    CHECK_COLL(&t, ALLGATHER, 16, 0, 8e-6, M);
    CHECK_COLL(&t, ALLGATHER, 1, 0, 9e-6, M);
    /* a neighbourhood collective's cost is its topology's: the nearest size */
    const int NBR = MOP_COLL_NEIGHBOR_ALLTOALL;
    CHECK(mop_xfer_table_add_coll(&t, NBR, 2, 0, 4e-6) == 0);
    CHECK(mop_xfer_table_add_coll(&t, NBR, 8, 0, 6e-6) == 0);
    CHECK_COLL(&t, NBR, 4, 0, 4e-6, M);
    CHECK_COLL(&t, NBR, 6, 0, 6e-6, M);

    /* an op without any series (nor its blocking op): intra p2p of the same bytes */
    CHECK_COLL(&t, MOP_COLL_ALLREDUCE, 2, 512, 2e-6, MOP_XFER_COLL_UNCALIBRATED);
    CHECK_COLL(&t, MOP_COLL_NB_OFFSET + MOP_COLL_ALLREDUCE, 2, 2048, 5e-6,
               MOP_XFER_COLL_UNCALIBRATED | MOP_XFER_EXTRAPOLATED);
    mop_xfer_table_free(&t);
    CHECK(t.ncoll == 0 && t.coll == NULL);
}

static void test_table_files(void)
{
    char path[] = "/tmp/mop_coll_table_XXXXXX";
    xfer_temp_file(path);
    mop_xfer_table t;
    char err[512];

    /* version 2 with coll lines (comments and unknown ops skipped) */
    static const char v2[] = "# class bytes seconds\nintra 0 1e-6\nintra 1024 3e-6\n"
                             "# coll op comm_size bytes seconds\n"
                             "coll bcast 2 0 2e-6\ncoll bcast 2 1024 4e-6\n"
                             "coll ibcast 2 1024 9e-6\ncoll barrier 4 0 1.5e-6\n"
                             "coll ialltoall_future 2 0 1e-6\n";
    CHECK(xfer_load_text(&t, path, 2, v2, err, sizeof err) == 0);
    CHECK(t.version == 2 && t.ncoll == 3 && t.p2p[MOP_XFER_INTRA].npoints == 2);
    CHECK_COLL(&t, BCAST, 2, 256, 2.5e-6, 0);
    CHECK_COLL(&t, IBCAST, 2, 0, 9e-6, 0);
    CHECK_COLL(&t, MOP_COLL_BARRIER, 2, 0, 1.5e-6, MOP_XFER_COLL_SIZE_MODELLED);
    mop_xfer_table_free(&t);

    /* version 1 (p2p only) is still read; its collectives fall back */
    CHECK(xfer_load_text(&t, path, 1, "intra 0 1e-6\nintra 1024 3e-6\n", err, sizeof err) == 0);
    CHECK(t.version == 1 && t.ncoll == 0);
    CHECK_COLL(&t, IBCAST, 2, 512, 2e-6, MOP_XFER_COLL_UNCALIBRATED);
    mop_xfer_table_free(&t);

    /* versions outside 1..4 are refused, naming both */
    CHECK(xfer_load_text(&t, path, 5, "intra 0 1e-6\n", err, sizeof err) == -1);
    CHECK(strstr(err, "version 5") != NULL && strstr(err, "reads 1 to 4") != NULL);
    mop_xfer_table_free(&t);

    /* version 4: each point's interval, the parts and the eager limit. Eager up
     * to 4 KiB: o_s interpolated between the sizes with parts, never above the
     * one-way time asked with; above the limit, and for a class without parts
     * (inter falls back to intra's, as its lookup), as the limit says. */
    static const char v4[] = "verdict ok fine\nintra 0 2e-6 ok 2e-6 0.1 30 40 1.9e-6 2.1e-6\n"
                             "intra 4096 4e-6 ok 4e-6 0.1 30 40 3.9e-6 4.2e-6\n"
                             "intra 65536 14e-6\n"
                             "parts intra 0 eager 3e-7 2e-7 4e-7 1e-7 1e-7 2e-7 7e-7 6e-7 8e-7\n"
                             "parts intra 4096 eager 1e-6 9e-7 1.1e-6 2e-7 2e-7 3e-7 7e-7 6e-7 8e-7\n"
                             "parts intra 65536 rendezvous 13e-6 12e-6 14e-6 12e-6 11e-6 13e-6 "
                             "14e-6 13e-6 15e-6\n"
                             "eager_limit intra 4096\nend\n";
    CHECK(xfer_load_text(&t, path, 4, v4, err, sizeof err) == 0);
    {
        double o_s = 0, o_r = 0;
        CHECK(mop_xfer_table_eager(&t, MOP_XFER_INTRA, 2048, 3e-6, &o_s, &o_r));
        CHECK_NEAR(o_s, 6.5e-7, 1e-18);
        CHECK_NEAR(o_r, 1.5e-7, 1e-18);
        CHECK(mop_xfer_table_eager(&t, MOP_XFER_INTRA, 4096, 5e-7, &o_s, &o_r));
        CHECK_NEAR(o_s, 5e-7, 1e-18); /* not above the one-way time */
        CHECK(!mop_xfer_table_eager(&t, MOP_XFER_INTRA, 4097, 5e-6, &o_s, &o_r));
        CHECK(mop_xfer_table_eager(&t, MOP_XFER_INTER, 0, 1e-5, &o_s, &o_r));
        CHECK_NEAR(o_s, 3e-7, 1e-18);
    }
    mop_xfer_table_free(&t);
    /* a stream line (mpi-overlap's replay reads it) is skipped: the table
     * loads, its points and parts as without it */
    static const char v4_stream[] = "verdict ok fine\nintra 0 2e-6\nintra 65536 14e-6\n"
                                    "parts intra 0 eager 3e-7 2e-7 4e-7 1e-7 1e-7 2e-7 7e-7 6e-7 8e-7\n"
                                    "eager_limit intra 0\n"
                                    "# stream class bytes window seconds_per_message lo hi undisturbed samples\n"
                                    "stream intra 65536 32 2.1e-05 2e-05 2.2e-05 5 5\nend\n";
    CHECK(xfer_load_text(&t, path, 4, v4_stream, err, sizeof err) == 0);
    CHECK(t.p2p[MOP_XFER_INTRA].npoints == 2 && t.ncoll == 0);
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTRA, 65536, &(bool){false}), 14e-6, 1e-18);
    CHECK(mop_xfer_table_eager(&t, MOP_XFER_INTRA, 0, 2e-6, &(double){0}, &(double){0}));
    mop_xfer_table_free(&t);
    /* a version-3 table has no parts: nothing is eager */
    CHECK(xfer_load_text(&t, path, 3, "verdict ok fine\nintra 0 2e-6\nend\n", err, sizeof err) == 0);
    CHECK(!mop_xfer_table_eager(&t, MOP_XFER_INTRA, 0, 2e-6, &(double){0}, &(double){0}));
    mop_xfer_table_free(&t);
    /* no size eager */
    static const char v4_rendezvous[] =
        "verdict ok fine\nintra 0 2e-6\n"
        "parts intra 0 rendezvous 2e-6 2e-6 2e-6 2e-6 2e-6 2e-6 2e-6 2e-6 2e-6\n"
        "eager_limit intra none\nend\n";
    CHECK(xfer_load_text(&t, path, 4, v4_rendezvous, err, sizeof err) == 0);
    CHECK(!mop_xfer_table_eager(&t, MOP_XFER_INTRA, 0, 2e-6, &(double){0}, &(double){0}));
    mop_xfer_table_free(&t);

    /* version 3: the verdict, point quality, unmeasured sizes and `end` */
    static const char v3[] = "verdict suspect suspect at 4 B (off the fit)\nload busy\n"
                             "source /runs/x\nintra 0 1e-6 ok 1e-6 0.05 12 20\n"
                             "intra 1024 3e-6 suspect 5e-6 0.1 30 40\n"
                             "unmeasured intra 4096 0 4\ncoll bcast 2 0 2e-6\nend\n";
    CHECK(xfer_load_text(&t, path, 3, v3, err, sizeof err) == 0);
    CHECK(t.version == 3 && t.verdict == MOP_XFER_SUSPECT && t.ncoll == 1);
    CHECK(strcmp(t.verdict_reason, "suspect at 4 B (off the fit)") == 0);
    CHECK(strcmp(mop_xfer_verdict_name(t.verdict), "suspect") == 0);
    CHECK(strcmp(t.created, "x") == 0 && t.p2p[MOP_XFER_INTRA].npoints == 2);
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTRA, 512, &(bool){false}), 2e-6, 1e-18);
    /* the content hash is FNV-1a 64 of the file's bytes, as Python's content_hash */
    char text[1024];
    snprintf(text, sizeof text, "mpi-overlap-xfer-table 3\n%s%s", XFER_TEST_HEAD, v3);
    uint64_t h = 0xcbf29ce484222325u;
    for (const char *c = text; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3u;
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)h);
    CHECK(strcmp(t.hash, want) == 0);
    mop_xfer_table_free(&t);
    /* older versions have no verdict: unverified */
    CHECK(xfer_load_text(&t, path, 2, "intra 0 1e-6\n", err, sizeof err) == 0);
    CHECK(t.verdict == MOP_XFER_UNVERIFIED && strlen(t.hash) == 16);
    CHECK(strcmp(mop_xfer_verdict_name(t.verdict), "unverified") == 0);
    mop_xfer_table_free(&t);

    /* files cut short and malformed lines: one line each */
    static const struct {
        int version;
        const char *body, *fragment;
    } broken[] = {
        {3, "verdict ok fine\nintra 0 1e-6\n", "no 'end' line"},
        {3, "verdict ok fine\nintra 0 1e-6\nend\nintra 1 2e-6\n", "text after 'end'"},
        {3, "intra 0 1e-6\nend\n", "no 'verdict' line"},
        {3, "verdict great\nintra 0 1e-6\nend\n", "unknown verdict"},
        {3, "verdict ok fine\nintra 0 1e-6 ok 1e-6 0.1 3\nend\n", "unexpected text"},
        {2, "intra 0 1e-6\nintra 1024 3e", "cut short"},    /* cut mid-line */
        {2, "intra 0 1e-6 ok 1e-6 0.1 3 4\n", "unexpected text"}, /* v3 fields in v2 */
        {2, "intra -1 1e-6\n", "expected '<class> <bytes> <seconds>'"},
        {2, "intra 0 -1e-6\n", "negative or invalid time"},
        {3, "verdict ok fine\nintra 0 1e-6 ok 1e-6 0.1 3 4 1e-6 2e-6\nend\n", "unexpected text"},
        {4, "verdict ok fine\nintra 0 1e-6 ok 1e-6 0.1 3 4 1e-6\nend\n", "unexpected text"},
        {4, "verdict ok fine\nintra 0 1e-6\nparts intra 0 eager 1 1 1\nend\n", "expected 'parts"},
        {4, "verdict ok fine\nintra 0 1e-6\nparts other 0 eager 1 1 1 1 1 1 1 1 1\nend\n",
         "expected 'parts"},
        {4, "verdict ok fine\nintra 0 1e-6\nparts intra 0 lazy 1 1 1 1 1 1 1 1 1\nend\n",
         "expected 'parts"},
        {4, "verdict ok fine\nintra 0 1e-6\nparts intra 0 eager 1 1 1 -1 1 1 1 1 1\nend\n",
         "negative or invalid time"},
        {4, "verdict ok fine\nintra 0 1e-6\neager_limit intra x\nend\n", "expected 'eager_limit"},
        {4, "verdict ok fine\nintra 0 1e-6\neager_limit intra -4\nend\n", "expected 'eager_limit"},
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        CHECK(xfer_load_text(&t, path, broken[i].version, broken[i].body, err, sizeof err) == -1);
        if (strstr(err, broken[i].fragment) == NULL)
            fprintf(stderr, "broken case %zu: err = [%s]\n", i, err);
        CHECK(strstr(err, broken[i].fragment) != NULL && strchr(err, '\n') == NULL);
        mop_xfer_table_free(&t);
    }
    /* a line longer than the reader's buffer is refused, not split */
    char longline[1500];
    memset(longline, '#', sizeof longline - 2);
    longline[sizeof longline - 2] = '\n';
    longline[sizeof longline - 1] = '\0';
    char body[1600];
    snprintf(body, sizeof body, "intra 0 1e-6\n%s", longline);
    CHECK(xfer_load_text(&t, path, 2, body, err, sizeof err) == -1);
    CHECK(strstr(err, "longer than") != NULL);
    mop_xfer_table_free(&t);

    /* malformed coll lines: one line naming file and line */
    static const char *const bad[] = {
        "coll bcast 2 0\n",          /* a field missing */
        "coll bcast 0 0 1e-6\n",     /* comm size < 1 */
        "coll bcast x 0 1e-6\n",     /* not a number */
        "coll bcast 2 0 1e-6 7\n",   /* trailing field */
        "coll bcast 2 0 -1e-6\n",    /* negative time */
        "coll bcast 2 0 nan\n",      /* invalid time */
        "coll bcast 2 0 inf\n",      /* no time at all (the size model would give NaN) */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char body[128];
        snprintf(body, sizeof body, "intra 0 1e-6\n%s", bad[i]);
        CHECK(xfer_load_text(&t, path, 2, body, err, sizeof err) == -1);
        char where[600];
        snprintf(where, sizeof where, "%s:6:", path);
        if (strstr(err, where) == NULL)
            fprintf(stderr, "case %zu: err = [%s]\n", i, err);
        CHECK(strstr(err, where) != NULL && strchr(err, '\n') == NULL);
        mop_xfer_table_free(&t);
    }
    remove(path);
}

/* ---- the engine -------------------------------------------------------- */

typedef struct seen {
    double xfer[16];
    int kind[16];
    int n;
} seen;

static void on_transfer(void *ctx, const mop_transfer *tr)
{
    seen *s = ctx;
    if (s->n < 16) {
        s->xfer[s->n] = tr->b.xfer_s;
        s->kind[s->n] = (int)tr->kind;
        s->n++;
    }
}

static mop_event ev(mop_event_type type, uint64_t t, uint64_t key, int64_t bytes, int kind,
                    int32_t arg)
{
    return (mop_event){.t = t, .key = key, .bytes = bytes, .type = (uint8_t)type,
                       .kind = (uint8_t)kind, .id = 1, .arg = arg};
}

static void test_engine_series(void)
{
    mop_xfer_table t;
    fill(&t);
    seen s = {0};
    mop_process_config cfg = {.table = &t, .s_per_tick = 1e-9, .on_transfer = on_transfer,
                              .on_transfer_ctx = &s};
    static mop_process p;
    CHECK(mop_process_init(&p, &cfg) == 0);
    const int bcast = MOP_KIND_COLL + BCAST, ibcast = MOP_KIND_COLL + IBCAST;
    /* One size throughout, so that only kind and comm size tell the lookups
     * apart: a cache keyed on bytes alone would repeat the first answer. */
    const mop_event e[] = {
        ev(MOP_EV_ENTER, 0, 0, 0, 0, 0),
        ev(MOP_EV_INCALL, 1, 0, 1024, bcast, 2),          /* 4 us */
        ev(MOP_EV_INCALL, 2, 0, 1024, bcast, 4),          /* 6 us */
        ev(MOP_EV_INCALL, 3, 0, 1024, bcast, 3),          /* 3 ranks: 4 + 2 log2(3/2) us */
        ev(MOP_EV_INCALL, 4, 0, 1024, MOP_KIND_SEND, 1),  /* p2p: 3 us */
        ev(MOP_EV_INCALL, 5, 0, 1024, ibcast, 2),         /* as bcast: 4 us */
        ev(MOP_EV_INCALL, 6, 0, 1024, MOP_KIND_COLL + MOP_COLL_ALLREDUCE, 2), /* p2p: 3 us */
        ev(MOP_EV_INCALL, 7, 0, 4096, bcast, 2),          /* extrapolated: 16 us */
        ev(MOP_EV_EXIT, 8, 0, 0, 0, 0),
        /* a non-blocking one across calls: posted at 10 ns, 1 us in MPI,
         * 10 us of computation, 1 us in the completing call */
        ev(MOP_EV_ENTER, 10, 0, 0, 0, 0),
        ev(MOP_EV_BEGIN, 10, 77, 1024, ibcast, 4),        /* as bcast on 4: 6 us */
        ev(MOP_EV_EXIT, 1010, 0, 0, 0, 0),
        ev(MOP_EV_ENTER, 11010, 0, 0, 0, 0),
        ev(MOP_EV_END, 12010, 77, -1, 0, 0),
        ev(MOP_EV_EXIT, 12010, 0, 0, 0, 0),
    };
    mop_process_events(&p, e, sizeof e / sizeof e[0]);
    mop_process_finish(&p);
    const double want[] = {4e-6, 6e-6, (4 + 2 * log2(1.5)) * 1e-6, 3e-6, 4e-6, 3e-6, 16e-6, 6e-6};
    CHECK(s.n == 8);
    for (int i = 0; i < 8 && i < s.n; i++)
        CHECK_NEAR(s.xfer[i], want[i], 1e-18);
    CHECK(s.kind[7] == ibcast);
    CHECK(p.counters.coll_size_extrapolated == 1);
    CHECK(p.counters.coll_nb_as_blocking == 2);
    CHECK(p.counters.coll_uncalibrated == 1);
    CHECK(p.counters.table_extrapolated == 1);
    CHECK(p.cases[MOP_CASE_IN_CALL] == 7 && p.cases[MOP_CASE_ACROSS] == 1);
    /* across calls: computation 10 us >= xfer 6 us -> max 6 us; MPI time
     * between begin and end 2 us -> min 6 - 2 = 4 us */
    CHECK_NEAR(p.total.max_s, 6e-6, 1e-15);
    CHECK_NEAR(p.total.min_s, 4e-6, 1e-15);
    mop_process_free(&p);
    mop_xfer_table_free(&t);
}

int main(void)
{
    test_op_names();
    test_coll_lookup();
    test_table_files();
    test_engine_series();
    return TEST_RESULT();
}
