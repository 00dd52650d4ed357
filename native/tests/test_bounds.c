/* test_bounds.c - the bounds engine and the request table on cases worked
 * out by hand from the source's formulas (Shet et al. §2.2). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "mo_test.h"
#include "mop_bounds.h"
#include "mop_requests.h"
#include "mop_xfer_table.h"
#include "xfer_table_file.h"

static void test_three_cases(void)
{
    mop_clock c;
    mop_clock_init(&c);
    /* post at 0 inside a 1 us call, compute 10 us, wait 2 us; xfer 5 us */
    CHECK(mop_clock_enter(&c, 0) == 0);
    mop_mark m = mop_clock_mark(&c, 0);
    CHECK(mop_clock_exit(&c, 1000) == 1000);
    CHECK(mop_clock_enter(&c, 11000) == 10000);
    mop_bounds b = mop_bounds_close(&c, &m, 13000, 5e-6, 1e-9);
    CHECK(b.kase == MOP_CASE_ACROSS);
    CHECK_NEAR(b.max_s, 5e-6, 1e-15);       /* min(10, 5) */
    CHECK_NEAR(b.min_s, 2e-6, 1e-15);       /* 5 - (13 - 10) */
    /* not enough computation: xfer 20 us -> max = comp, min = 20 - 3 > max: cut */
    b = mop_bounds_close(&c, &m, 13000, 20e-6, 1e-9);
    CHECK_NEAR(b.max_s, 10e-6, 1e-15);
    CHECK_NEAR(b.min_s, 10e-6, 1e-15);
    CHECK(b.clamped);
    /* library time longer than the transfer: min 0 */
    b = mop_bounds_close(&c, &m, 13000, 2e-6, 1e-9);
    CHECK_NEAR(b.min_s, 0.0, 1e-15);
    CHECK_NEAR(b.max_s, 2e-6, 1e-15);
    /* begin and end in one call */
    mop_mark m2 = mop_clock_mark(&c, 11000);
    b = mop_bounds_close(&c, &m2, 13000, 5e-6, 1e-9);
    CHECK(b.kase == MOP_CASE_IN_CALL && b.min_s == 0.0 && b.max_s == 0.0);
    b = mop_bounds_one_event(MOP_CASE_END_ONLY, 3e-6);
    CHECK(b.min_s == 0.0 && b.max_s == 3e-6);
    CHECK_STR(mop_case_name(MOP_CASE_BEGIN_ONLY), "begin-only");
}

static void test_nested_calls_and_splits(void)
{
    mop_clock c;
    mop_clock_init(&c);
    mop_clock_enter(&c, 0);
    CHECK(mop_clock_enter(&c, 10) == 0); /* nested */
    CHECK(mop_clock_exit(&c, 20) == 0);
    CHECK(mop_clock_exit(&c, 30) == 30);
    CHECK(mop_clock_split(&c, 50) == 20);
    CHECK(mop_clock_enter(&c, 100) == 50);
    CHECK(c.cum_comp == 70);
    CHECK(mop_clock_split(&c, 120) == 0); /* inside a call: nothing computed */
}

static void test_requests_reuse_and_growth(mop_requests_tuning tune)
{
    mop_requests r;
    CHECK(mop_requests_init(&r, 4) == 0);
    mop_requests_tune(&r, tune);
    for (uint64_t k = 1; k <= 1000; k++) {
        mop_req *q = mop_requests_get(&r, k * 0x1000);
        q->flags = MOP_REQ_ACTIVE;
        q->bytes = (int64_t)k;
    }
    CHECK(r.count == 1000);
    for (uint64_t k = 1; k <= 1000; k += 2)
        mop_requests_remove(&r, mop_requests_find(&r, k * 0x1000));
    CHECK(r.count == 500);
    bool ok = true;
    for (uint64_t k = 1; k <= 1000; k++) {
        mop_req *q = mop_requests_find(&r, k * 0x1000);
        ok &= (k % 2 == 0) ? (q && q->bytes == (int64_t)k) : (q == NULL);
    }
    CHECK(ok);
    size_t n = 0;
    uint64_t *keys = mop_requests_active_keys(&r, &n);
    CHECK(n == 500 && keys[0] == 2 * 0x1000 && keys[499] == 1000 * 0x1000);
    free(keys);
    /* The same handle again after removal is a fresh entry. */
    mop_req *q = mop_requests_get(&r, 1 * 0x1000);
    CHECK(q && q->flags == 0);
    CHECK(r.peak == 1000);
    mop_requests_free(&r);
}

/* A window of requests on one shared handle (MPICH's and Open MPI's completed
 * eager sends) leaves oldest first, each removal moving the next entry up; a
 * window of Open MPI receive requests (pointers 768 bytes apart, which the
 * hash once put in clusters of three) is found and removed whole, in posting
 * order, windows after windows. */
static void test_requests_shared_and_strided(mop_requests_tuning tune)
{
    mop_requests r;
    CHECK(mop_requests_init(&r, 16) == 0);
    mop_requests_tune(&r, tune);
    const uint64_t shared = 0x7f330917d6e0;
    bool ok = true;
    for (int w = 0; w < 3; w++) {
        for (int j = 0; j < 64; j++) {
            mop_req *slot = mop_requests_find(&r, shared);
            mop_req *e = slot ? mop_requests_share(&r, slot) : mop_requests_get(&r, shared);
            CHECK(e != NULL);
            e->bytes = j;
        }
        for (int j = 0; j < 64; j++) {
            uint64_t k = 0x5631eae3a1c0 - (uint64_t)j * 768;
            mop_req *e = mop_requests_get(&r, k);
            ok &= e != NULL && !(e->flags & MOP_REQ_ACTIVE);
            if (e) {
                e->flags = MOP_REQ_ACTIVE;
                e->bytes = 1000 + j;
            }
        }
        ok &= r.count == 128;
        for (int j = 0; j < 64; j++) {
            mop_req *slot = mop_requests_find(&r, shared);
            ok &= slot != NULL && slot->bytes == j;
            if (slot)
                mop_requests_remove(&r, slot);
            uint64_t k = 0x5631eae3a1c0 - (uint64_t)j * 768;
            mop_req *e = mop_requests_find(&r, k);
            ok &= e != NULL && e->bytes == 1000 + j;
            if (e)
                mop_requests_remove(&r, e);
        }
        ok &= r.count == 0 && mop_requests_find(&r, shared) == NULL;
    }
    CHECK(ok);
    CHECK(r.peak == 128);
    mop_requests_free(&r);
}

static void test_table_lookup(void)
{
    mop_xfer_table t;
    mop_xfer_table_init(&t);
    bool ex;
    mop_xfer_table_add(&t, MOP_XFER_INTRA, 1024, 2e-6);
    mop_xfer_table_add(&t, MOP_XFER_INTRA, 0, 1e-6);
    mop_xfer_table_add(&t, MOP_XFER_INTRA, 2048, 4e-6);
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTRA, 0, &ex), 1e-6, 1e-18);
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTRA, 512, &ex), 1.5e-6, 1e-18);
    CHECK(!ex);
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTRA, 4096, &ex), 8e-6, 1e-18);
    CHECK(ex);
    /* no inter-node points: falls back to intra */
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTER, 1024, &ex), 2e-6, 1e-18);
    mop_xfer_table_free(&t);
    /* only inter-node points (one rank per node calibrated): intra falls back to inter */
    mop_xfer_table_init(&t);
    mop_xfer_table_add(&t, MOP_XFER_INTER, 0, 5e-6);
    mop_xfer_table_add(&t, MOP_XFER_INTER, 1024, 9e-6);
    CHECK(!mop_xfer_table_has_class(&t, MOP_XFER_INTRA) && mop_xfer_table_has_class(&t, MOP_XFER_INTER));
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTRA, 1024, &ex), 9e-6, 1e-18);
    CHECK_NEAR(mop_xfer_table_lookup(&t, MOP_XFER_INTER, 512, &ex), 7e-6, 1e-18);
    mop_xfer_table_free(&t);
}

static void test_table_file(void)
{
    char path[] = "/tmp/mop_table_XXXXXX";
    xfer_temp_file(path);
    mop_xfer_table t;
    char err[256];
    CHECK(xfer_load_text(&t, path, 1,
                         "# class bytes seconds\nintra 0 1e-6\nintra 64 2e-6\ninter 0 5e-6\n", err,
                         sizeof err) == 0);
    CHECK_STR(t.machine_fp, "0123456789abcdef");
    CHECK_STR(t.toolchain_key, "MPICH Version: 5");
    CHECK(t.p2p[MOP_XFER_INTRA].npoints == 2 && t.p2p[MOP_XFER_INTER].npoints == 1);
    mop_xfer_table_free(&t);

    /* a table of one rank per node has inter times only: it loads (which classes a
     * job needs is the runtime's check); one without any point-to-point time does not */
    CHECK(xfer_load_text(&t, path, 1, "inter 0 5e-6\n", err, sizeof err) == 0);
    CHECK(t.p2p[MOP_XFER_INTRA].npoints == 0 && t.p2p[MOP_XFER_INTER].npoints == 1);
    mop_xfer_table_free(&t);
    CHECK(xfer_load_text(&t, path, 1, "coll bcast 2 0 2e-6\n", err, sizeof err) == -1);
    CHECK(strstr(err, "no point-to-point transfer times") != NULL);
    mop_xfer_table_free(&t);

    FILE *f = fopen(path, "w");
    fputs("mpi-overlap-xfer-table 5\n", f); /* newer than this profiler */
    fclose(f);
    mop_xfer_table_init(&t);
    CHECK(mop_xfer_table_load(&t, path, err, sizeof err) == -1);
    CHECK(strstr(err, "version 5") != NULL);
    mop_xfer_table_free(&t);
    remove(path);
    CHECK(mop_xfer_table_load(&t, path, err, sizeof err) == -1);
}

int main(void)
{
    test_three_cases();
    test_nested_calls_and_splits();
    /* The table's choices (MPI_OVERLAP_NO_OPT switches each off) change its
     * cost, never what it holds. */
    const mop_requests_tuning tunings[] = {MOP_REQUESTS_TUNED, {.load_shift = 1}};
    for (size_t i = 0; i < sizeof tunings / sizeof tunings[0]; i++) {
        test_requests_reuse_and_growth(tunings[i]);
        test_requests_shared_and_strided(tunings[i]);
    }
    test_table_lookup();
    test_table_file();
    return TEST_RESULT();
}
