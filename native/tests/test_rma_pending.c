/* test_rma_pending.c - the pending list of one-sided operations
 * (mop_rma_pending.c) and the engine's side of the one-sided event contract
 * (mop_event.h: RMA kinds, END/FREE reasons), on cases worked out by hand. */
#include <stdlib.h>

#include "mo_test.h"
#include "mop_process.h"
#include "mop_rma_pending.h"

enum { WIN_A = 0x1000, WIN_B = 0x2000 };

/* The keys in done[0..n), in any order, are exactly {a, b} (b = 0: only a). */
static int same_keys(const mop_rma_done *done, size_t n, uint64_t a, uint64_t b)
{
    if (n != (b ? 2u : 1u))
        return 0;
    if (n == 1)
        return done[0].key == a;
    return (done[0].key == a && done[1].key == b) || (done[0].key == b && done[1].key == a);
}

static void test_take_by_window_and_target(void)
{
    mop_rma_pending p;
    mop_rma_pending_init(&p, 100);
    CHECK(mop_rma_pending_add(&p, WIN_A, 0, 1, 10) == 0);
    CHECK(mop_rma_pending_add(&p, WIN_A, 1, 2, 11) == 0);
    CHECK(mop_rma_pending_add(&p, WIN_B, 1, 3, 12) == 0);
    CHECK(mop_rma_pending_add(&p, WIN_A, 1, 4, 13) == 0);
    mop_rma_done done[8];
    /* flush(1) on A: the two ops to target 1 on A, not B's */
    size_t n = mop_rma_pending_take(&p, WIN_A, 1, done, 8);
    CHECK(same_keys(done, n, 2, 4));
    CHECK(n == 2 && done[0].state == MOP_RMA_PENDING && done[1].state == MOP_RMA_PENDING);
    CHECK(mop_rma_pending_take(&p, WIN_A, 1, done, 8) == 0); /* nothing left to complete */
    /* fence on A: the rest of A */
    n = mop_rma_pending_take(&p, WIN_A, MOP_RMA_ALL_TARGETS, done, 8);
    CHECK(same_keys(done, n, 1, 0));
    CHECK(p.n == 1 && p.peak == 4);
    /* a window nobody used */
    CHECK(mop_rma_pending_take(&p, 0x3000, MOP_RMA_ALL_TARGETS, done, 8) == 0);
    n = mop_rma_pending_take(&p, WIN_B, MOP_RMA_ALL_TARGETS, done, 8);
    CHECK(same_keys(done, n, 3, 0) && p.n == 0);
    mop_rma_pending_free(&p);
}

static void test_growth_cap_and_chunks(void)
{
    mop_rma_pending p;
    mop_rma_pending_init(&p, 1000);
    for (uint64_t k = 1; k <= 1000; k++)
        CHECK(mop_rma_pending_add(&p, WIN_A, (int32_t)(k % 3), k, k) == 0);
    CHECK(mop_rma_pending_add(&p, WIN_A, 0, 1001, 1001) == -1); /* at the cap */
    CHECK(p.n == 1000 && p.cap == 1000);
    /* taken in chunks of 128: every key once */
    unsigned char seen[1001] = {0};
    mop_rma_done done[128];
    size_t n, total = 0, calls = 0;
    int dup = 0;
    do {
        n = mop_rma_pending_take(&p, WIN_A, MOP_RMA_ALL_TARGETS, done, 128);
        calls++;
        for (size_t i = 0; i < n; i++) {
            dup |= seen[done[i].key];
            seen[done[i].key] = 1;
        }
        total += n;
    } while (n == 128);
    CHECK(total == 1000 && !dup && calls == 8); /* 7 x 128 + 104 */
    CHECK(p.n == 0);
    /* room again after taking */
    CHECK(mop_rma_pending_add(&p, WIN_A, 0, 7, 1) == 0);
    mop_rma_pending_free(&p);
    /* a zero cap remembers nothing */
    mop_rma_pending_init(&p, 0);
    CHECK(mop_rma_pending_add(&p, WIN_A, 0, 1, 1) == -1);
    mop_rma_pending_free(&p);
}

static void test_marks_from_other_threads(void)
{
    mop_rma_pending p;
    mop_rma_pending_init(&p, 100);
    mop_rma_pending_add(&p, WIN_A, 1, 1, 10); /* posted (returned) at t = 10 */
    mop_rma_pending_add(&p, WIN_A, 1, 2, 20);
    mop_rma_pending_add(&p, WIN_A, 0, 3, 5);
    mop_rma_pending_add(&p, WIN_B, 1, 4, 5);
    /* another thread's flush(1) on A entered at t = 15: only key 1 was posted
     * before it (key 2 may have been issued after the flush began) */
    CHECK(mop_rma_pending_mark(&p, WIN_A, 1, 15, MOP_RMA_OTHER_THREAD) == 1);
    CHECK(p.marked == 1);
    /* marking again changes nothing: the first reason stays */
    CHECK(mop_rma_pending_mark(&p, WIN_A, 1, 15, MOP_RMA_WIN_FREED) == 0);
    /* another thread frees B */
    CHECK(mop_rma_pending_mark(&p, WIN_B, MOP_RMA_ALL_TARGETS, 100, MOP_RMA_WIN_FREED) == 1);
    CHECK(p.marked == 2);
    mop_rma_done done[8];
    size_t n = mop_rma_pending_take_marked(&p, done, 8);
    CHECK(same_keys(done, n, 1, 4));
    for (size_t i = 0; i < n; i++)
        CHECK(done[i].state == (done[i].key == 1 ? MOP_RMA_OTHER_THREAD : MOP_RMA_WIN_FREED));
    CHECK(p.marked == 0 && p.n == 2);
    CHECK(mop_rma_pending_take_marked(&p, done, 8) == 0);
    /* a marked op the owner's own synchronization finds keeps its reason */
    CHECK(mop_rma_pending_mark(&p, WIN_A, MOP_RMA_ALL_TARGETS, 100, MOP_RMA_OTHER_THREAD) == 2);
    n = mop_rma_pending_take(&p, WIN_A, 0, done, 8);
    CHECK(same_keys(done, n, 3, 0) && done[0].state == MOP_RMA_OTHER_THREAD);
    CHECK(p.marked == 1 && p.n == 1);
    mop_rma_pending_free(&p);
}

/* ---- the engine's side ------------------------------------------------------ */

static mop_transfer last;
static int ntransfers;

static void on_transfer(void *ctx, const mop_transfer *tr)
{
    (void)ctx;
    last = *tr;
    ntransfers++;
}

static void ev(mop_process *p, mop_event_type type, uint64_t t, uint64_t key, int64_t bytes,
               int kind, uint16_t id)
{
    mop_event e = {.t = t, .key = key, .bytes = bytes, .type = (uint8_t)type,
                   .kind = (uint8_t)kind, .id = id, .arg = -1};
    mop_process_event(p, &e);
}

/* A one-sided op posted in a call [t, t+1us], computation 10 us, then a
 * synchronization call [t+11us, t+13us] that ends it with `reason`. */
static void op_then_sync(mop_process *p, uint64_t t, uint64_t key, int kind, int reason)
{
    ev(p, MOP_EV_ENTER, t, 0, 0, 0, 7);
    ev(p, MOP_EV_BEGIN, t, key, 65536, kind, 7);
    ev(p, MOP_EV_EXIT, t + 1000, 0, 0, 0, 0);
    ev(p, MOP_EV_ENTER, t + 11000, 0, 0, 0, 9);
    ev(p, MOP_EV_END, t + 13000, key, -1, reason, 0);
    ev(p, MOP_EV_EXIT, t + 13000, 0, 0, 0, 0);
}

static void test_engine_contract(void)
{
    mop_xfer_table t;
    mop_xfer_table_init(&t);
    mop_xfer_table_add(&t, MOP_XFER_INTRA, 0, 1e-6);
    mop_xfer_table_add(&t, MOP_XFER_INTRA, 65536, 5e-6);
    mop_process_config cfg = {.table = &t, .s_per_tick = 1e-9, .on_transfer = on_transfer};
    mop_process p;
    CHECK(mop_process_init(&p, &cfg) == 0);
    const uint64_t K = MOP_RMA_KEY_BIT;

    /* A Get ended by its window's synchronization: case 2, max = min(10, 5) us,
     * min = 5 - (13 - 10) = 2 us, its size kept (not a receive's capacity). */
    op_then_sync(&p, 0, K | 1, MOP_KIND_RMA_RECV, MOP_END_COMPLETED);
    CHECK(ntransfers == 1);
    CHECK(last.b.kase == MOP_CASE_ACROSS && last.bytes == 65536 && last.kind == MOP_KIND_RMA_RECV);
    CHECK_NEAR(last.b.max_s, 5e-6, 1e-15);
    CHECK_NEAR(last.b.min_s, 2e-6, 1e-15);
    /* The completion of an R* request reports 0 bytes (Open MPI): size kept. */
    ev(&p, MOP_EV_ENTER, 100000, 0, 0, 0, 8);
    ev(&p, MOP_EV_BEGIN, 100000, 0x55, 65536, MOP_KIND_RMA_RECV, 8);
    ev(&p, MOP_EV_EXIT, 101000, 0, 0, 0, 0);
    ev(&p, MOP_EV_ENTER, 111000, 0, 0, 0, 10);
    ev(&p, MOP_EV_END, 113000, 0x55, 0, MOP_END_COMPLETED, 0);
    ev(&p, MOP_EV_EXIT, 113000, 0, 0, 0, 0);
    CHECK(ntransfers == 2 && last.bytes == 65536);
    /* Completed by another thread: counted, still a transfer with both ends. */
    op_then_sync(&p, 200000, K | 2, MOP_KIND_RMA_SEND, MOP_END_RMA_OTHER_THREAD);
    CHECK(ntransfers == 3 && last.b.kase == MOP_CASE_ACROSS);
    CHECK(p.counters.rma_other_thread == 1);
    /* Still pending at MPI_Win_free: counted, ended there. */
    op_then_sync(&p, 300000, K | 3, MOP_KIND_RMA_SEND, MOP_END_RMA_WIN_FREED);
    CHECK(ntransfers == 4 && last.b.kase == MOP_CASE_ACROSS);
    CHECK(p.counters.rma_freed_pending == 1);
    /* Untracked (list full): begin-only [0, xfer], counted as out_of_memory,
     * not as an MPI_Request_free of an active request. */
    ev(&p, MOP_EV_ENTER, 400000, 0, 0, 0, 7);
    ev(&p, MOP_EV_BEGIN, 400000, K, 65536, MOP_KIND_RMA_SEND, 7);
    ev(&p, MOP_EV_FREE, 401000, K, -1, MOP_FREE_UNTRACKED, 0);
    ev(&p, MOP_EV_EXIT, 401000, 0, 0, 0, 0);
    CHECK(ntransfers == 5 && last.b.kase == MOP_CASE_BEGIN_ONLY);
    CHECK_NEAR(last.b.max_s, 5e-6, 1e-15);
    CHECK(p.counters.out_of_memory == 1 && p.counters.freed_active == 0);
    CHECK(p.cases[MOP_CASE_ACROSS] == 4 && p.cases[MOP_CASE_END_ONLY] == 0);
    mop_process_finish(&p);
    CHECK(p.counters.unfinished == 0 && p.reqs.count == 0);
    mop_process_free(&p);
    mop_xfer_table_free(&t);
}

int main(void)
{
    test_take_by_window_and_target();
    test_growth_cap_and_chunks();
    test_marks_from_other_threads();
    test_engine_contract();
    return TEST_RESULT();
}
