/* test_checks.c - the checks on the bounds (mop_checks.h), driven through
 * the event processing with synthetic events, MPI-free: in-call transfers
 * judged against their call's time (one at a time, since a call's transfers
 * may run concurrently), across-calls transfers against begin -> end, the
 * per-rank "beyond the wall clock" sums, what stays unchecked, the merge of
 * threads and the JSON. Expected values are worked out by hand from the
 * table below (ticks are nanoseconds). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mo_test.h"
#include "mop_process.h"
#include "mop_profile_json.h"

enum { FN_SEND = 1, FN_RECV, FN_SENDRECV, FN_ISEND, FN_WAIT };
static const char *const fn_names[] = {"-", "MPI_Send", "MPI_Recv", "MPI_Sendrecv",
                                       "MPI_Isend", "MPI_Wait"};
static const char *const region_names[] = {"(none)"};

static mop_event ev(mop_event_type type, uint64_t t, uint64_t key, int64_t bytes, int kind,
                    uint16_t id)
{
    return (mop_event){.t = t, .key = key, .bytes = bytes, .type = (uint8_t)type,
                       .kind = (uint8_t)kind, .id = id, .arg = -1};
}

#define ENTER(t, fn) ev(MOP_EV_ENTER, t, 0, 0, 0, fn)
#define EXIT(t) ev(MOP_EV_EXIT, t, 0, 0, 0, 0)
#define INCALL(t, bytes, kind, fn) ev(MOP_EV_INCALL, t, 0, bytes, kind, fn)
#define PCONTROL(t_, level) ((mop_event){.type = MOP_EV_PCONTROL, .t = (t_), .arg = (level)})

/* The table of every test: 2 us at 0 B, 10 us at 4 KiB, linear between:
 * 1 KiB 4 us, 2 KiB 6 us. Ticks are nanoseconds. */
static mop_xfer_table table;
static const mop_process_config cfg = {.table = &table, .s_per_tick = 1e-9};

static void start(mop_process *p)
{
    CHECK(mop_process_init(p, &cfg) == 0);
}

static void test_counting(void)
{
    static mop_process p;
    start(&p);
    const mop_event e[] = {
        /* MPI_Send of 1 KiB (4 us) in a 10 us call: fits */
        ENTER(0, FN_SEND), INCALL(0, 1024, MOP_KIND_SEND, FN_SEND), EXIT(10000),
        /* MPI_Recv of 4 KiB (10 us) in a 3 us call: flagged, 7 us too long */
        ENTER(20000, FN_RECV), INCALL(20000, 4096, MOP_KIND_RECV, FN_RECV), EXIT(23000),
        /* MPI_Sendrecv, 2 KiB out (6 us) and 1 KiB in (4 us), in 5 us: the
         * send is flagged (1 us); the receive fits. Their sum (10 us) would
         * claim 5 us beyond the call, but the two may run at once: the call
         * is short of its longest transfer by 1 us only. */
        ENTER(30000, FN_SENDRECV), INCALL(30000, 2048, MOP_KIND_SEND, FN_SENDRECV),
        INCALL(30000, 1024, MOP_KIND_RECV, FN_SENDRECV), EXIT(35000),
        /* MPI_Isend of 4 KiB (10 us), 1 us computation, MPI_Wait: begin ->
         * end 3 us: across calls, flagged 7 us (and xfer_exceeds_span) */
        ENTER(40000, FN_ISEND), ev(MOP_EV_BEGIN, 40000, 9, 4096, MOP_KIND_SEND, FN_ISEND),
        EXIT(41000), ENTER(42000, FN_WAIT), ev(MOP_EV_END, 43000, 9, -1, 0, 0), EXIT(43000),
        /* MPI_Isend of 0 B (2 us), begin -> end 11 us: fits */
        ENTER(50000, FN_ISEND), ev(MOP_EV_BEGIN, 50000, 10, 0, MOP_KIND_SEND, FN_ISEND),
        EXIT(50500), ENTER(60000, FN_WAIT), ev(MOP_EV_END, 61000, 10, -1, 0, 0), EXIT(61000),
        /* a receive of 4 KiB in a call nested in a 20 us one: judged against
         * the outermost call, it fits */
        ENTER(70000, FN_SEND), ENTER(70100, FN_RECV),
        INCALL(70100, 4096, MOP_KIND_RECV, FN_RECV), EXIT(70200), EXIT(90000),
        /* while monitoring is off: in no measure, in no check */
        PCONTROL(95000, 0), ENTER(96000, FN_RECV),
        INCALL(96000, 4096, MOP_KIND_RECV, FN_RECV), EXIT(96001), PCONTROL(97000, 1),
        /* the program ends inside a call holding an in-call transfer: unchecked */
        ENTER(100000, FN_SEND), INCALL(100000, 0, MOP_KIND_SEND, FN_SEND),
    };
    mop_process_events(&p, e, sizeof e / sizeof e[0]);
    mop_process_finish(&p);

    const mop_checks *c = &p.checks;
    CHECK(p.counters.unmonitored_transfers == 1);
    CHECK(c->transfers[MOP_CHECK_IN_CALL] == 5);
    CHECK_NEAR(c->xfer_s[MOP_CHECK_IN_CALL], 34e-6, 1e-15); /* 4 + 10 + 6 + 4 + 10 */
    CHECK(c->calls == 4);
    CHECK(c->call_ticks == 10000 + 3000 + 5000 + 20000);
    CHECK_NEAR(c->longest_s, 30e-6, 1e-15); /* 4 + 10 + 6 + 10 */
    CHECK(c->flagged[MOP_CHECK_IN_CALL].transfers == 2);
    CHECK_NEAR(c->flagged[MOP_CHECK_IN_CALL].xfer_s, 16e-6, 1e-15);
    CHECK_NEAR(c->flagged[MOP_CHECK_IN_CALL].excess_s, 8e-6, 1e-15);
    CHECK(c->calls_beyond == 2);
    CHECK_NEAR(c->beyond_s, 8e-6, 1e-15); /* 7 (Recv) + 1 (Sendrecv's longest) */
    CHECK(p.counters.xfer_exceeds_call == 2);

    CHECK(c->transfers[MOP_CHECK_ACROSS] == 2);
    CHECK_NEAR(c->xfer_s[MOP_CHECK_ACROSS], 12e-6, 1e-15);
    CHECK(c->flagged[MOP_CHECK_ACROSS].transfers == 1);
    CHECK(p.counters.xfer_exceeds_span == 1);
    CHECK_NEAR(c->flagged[MOP_CHECK_ACROSS].xfer_s, 10e-6, 1e-15);
    CHECK_NEAR(c->flagged[MOP_CHECK_ACROSS].excess_s, 7e-6, 1e-15);
    CHECK_NEAR(mop_checks_beyond_s(c), 15e-6, 1e-15);
    CHECK(mop_checks_unchecked(c) == 1);

    /* per function and size bin (powers of two: 4 KiB is bin 13, 2 KiB 12) */
    CHECK(c->by_fn[FN_RECV][MOP_CHECK_IN_CALL].transfers == 1);
    CHECK_NEAR(c->by_fn[FN_RECV][MOP_CHECK_IN_CALL].excess_s, 7e-6, 1e-15);
    CHECK(c->by_fn[FN_SENDRECV][MOP_CHECK_IN_CALL].transfers == 1);
    CHECK_NEAR(c->by_fn[FN_SENDRECV][MOP_CHECK_IN_CALL].xfer_s, 6e-6, 1e-15);
    CHECK(c->by_fn[FN_SEND][MOP_CHECK_IN_CALL].transfers == 0);
    CHECK(c->by_fn[FN_ISEND][MOP_CHECK_ACROSS].transfers == 1);
    CHECK(c->by_fn[FN_ISEND][MOP_CHECK_IN_CALL].transfers == 0);
    CHECK(c->by_bin[13][MOP_CHECK_IN_CALL].transfers == 1);
    CHECK(c->by_bin[13][MOP_CHECK_ACROSS].transfers == 1);
    CHECK(c->by_bin[12][MOP_CHECK_IN_CALL].transfers == 1);
    CHECK(c->by_bin[11][MOP_CHECK_IN_CALL].transfers == 0);

    /* two threads of one rank: every figure doubles */
    static mop_process agg;
    start(&agg);
    mop_process_merge(&agg, &p);
    mop_process_merge(&agg, &p);
    CHECK(agg.checks.calls == 8 && agg.checks.calls_beyond == 4);
    CHECK(agg.checks.flagged[MOP_CHECK_IN_CALL].transfers == 4);
    CHECK(agg.checks.by_fn[FN_RECV][MOP_CHECK_IN_CALL].transfers == 2);
    CHECK_NEAR(mop_checks_beyond_s(&agg.checks), 30e-6, 1e-15);
    CHECK(mop_checks_unchecked(&agg.checks) == 2);
    CHECK(agg.counters.xfer_exceeds_call == 4);
    mop_process_free(&agg);

    /* the JSON: totals, and one row per (function or bin, check) flagged */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mo_json w;
    mo_json_init(&w, f);
    mop_names names = {.fn = fn_names, .nfn = sizeof fn_names / sizeof fn_names[0],
                       .region = region_names, .nregion = 1};
    mop_profile_json(&w, &p, &names);
    CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    size_t k = 0; /* without the writer's indentation (no name here has a space) */
    for (size_t i = 0; i < len; i++)
        if (buf[i] != ' ' && buf[i] != '\n')
            buf[k++] = buf[i];
    buf[k] = '\0';
    CHECK(strstr(buf, "\"checks\":{\"in_call\":{\"transfers\":5,") != NULL);
    CHECK(strstr(buf, "\"calls\":4,") != NULL);
    CHECK(strstr(buf, "\"calls_beyond\":2,") != NULL);
    CHECK(strstr(buf, "\"unchecked\":1}") != NULL);
    CHECK(strstr(buf, "{\"fn\":\"MPI_Isend\",\"check\":\"across-calls\",\"transfers\":1,") !=
          NULL);
    CHECK(strstr(buf, "{\"fn\":\"MPI_Recv\",\"check\":\"in-call\",\"transfers\":1,") != NULL);
    CHECK(strstr(buf, "{\"fn\":\"MPI_Sendrecv\",\"check\":\"in-call\",\"transfers\":1,") != NULL);
    CHECK(strstr(buf, "\"fn\":\"MPI_Send\",\"check\"") == NULL);
    CHECK(strstr(buf, "{\"lo\":4096,\"hi\":8192,\"check\":\"in-call\",\"transfers\":1,") != NULL);
    CHECK(strstr(buf, "{\"lo\":4096,\"hi\":8192,\"check\":\"across-calls\",\"transfers\":1,") !=
          NULL);
    CHECK(strstr(buf, "\"xfer_exceeds_call\":2") != NULL);
    free(buf);
    mop_process_free(&p);
}

/* A request completed by another thread while the posting one is still in
 * its posting call (docs/profiler.md, "Threads"): the END is stamped after
 * that call's exit, so the transfer is judged against enter -> its END, not
 * against the call alone. */
static void test_late_foreign_end(void)
{
    static mop_process p;
    start(&p);
    mop_event end = ev(MOP_EV_END, 215000, 5, -1, 0, 0);
    end.arg = 2; /* seen by thread 2 */
    const mop_event e[] = {
        ENTER(200000, FN_ISEND), ev(MOP_EV_BEGIN, 200000, 5, 4096, MOP_KIND_SEND, FN_ISEND),
        end, EXIT(201000),
    };
    mop_process_events(&p, e, sizeof e / sizeof e[0]);
    mop_process_finish(&p);
    CHECK(p.cases[MOP_CASE_IN_CALL] == 1);
    CHECK(p.checks.transfers[MOP_CHECK_IN_CALL] == 1);
    CHECK(p.checks.call_ticks == 15000);
    CHECK(p.checks.flagged[MOP_CHECK_IN_CALL].transfers == 0);
    CHECK(p.checks.beyond_s == 0.0);
    mop_process_free(&p);
}

/* A correct table on sequential blocking calls that last at least their
 * transfer: nothing is flagged, nothing is beyond the wall clock. */
static void test_no_false_alarm(void)
{
    static mop_process p;
    start(&p);
    uint64_t now = 0;
    for (int i = 0; i < 100; i++) {
        int64_t bytes = (int64_t)(i * 41) % 4097;
        /* each transfer takes at most 10 us (4 KiB), both together 12 us */
        const mop_event e[] = {
            ENTER(now, FN_SENDRECV), INCALL(now, bytes, MOP_KIND_SEND, FN_SENDRECV),
            INCALL(now, 4096 - bytes, MOP_KIND_RECV, FN_SENDRECV), EXIT(now + 10001),
        };
        mop_process_events(&p, e, sizeof e / sizeof e[0]);
        now += 20000;
    }
    mop_process_finish(&p);
    CHECK(p.checks.transfers[MOP_CHECK_IN_CALL] == 200);
    CHECK(p.checks.flagged[MOP_CHECK_IN_CALL].transfers == 0);
    CHECK(p.checks.calls == 100 && p.checks.calls_beyond == 0);
    CHECK(mop_checks_beyond_s(&p.checks) == 0.0);
    /* the two transfers of each call together exceed it; that is no alarm */
    CHECK(p.checks.xfer_s[MOP_CHECK_IN_CALL] > (double)p.checks.call_ticks * 1e-9);
    mop_process_free(&p);
}

/* A snapshot processes a copy of the state further and frees it (mop_runtime.c):
 * the copy must own its held transfers, or freeing it would free the
 * original's (use after free under ASan on the original's next call). */
static void test_copy_is_deep(void)
{
    static mop_process p, copy;
    start(&p);
    const mop_event open_call[] = {ENTER(0, FN_SENDRECV),
                                   INCALL(0, 4096, MOP_KIND_SEND, FN_SENDRECV)};
    mop_process_events(&p, open_call, 2); /* one transfer held, call still open */
    CHECK(p.checks.nheld == 1);
    CHECK(mop_process_copy(&copy, &p) == 0);
    CHECK(copy.checks.held != p.checks.held);
    const mop_event more[] = {INCALL(0, 4096, MOP_KIND_RECV, FN_SENDRECV), EXIT(20000)};
    mop_process_events(&copy, more, 2);
    mop_process_free(&copy);
    mop_process_events(&p, more, 2); /* the original goes on as if nothing happened */
    CHECK(p.checks.transfers[MOP_CHECK_IN_CALL] == 2);
    mop_process_free(&p);
}

int main(void)
{
    mop_xfer_table_init(&table);
    mop_xfer_table_add(&table, MOP_XFER_INTRA, 0, 2e-6);
    mop_xfer_table_add(&table, MOP_XFER_INTRA, 4096, 10e-6);
    test_counting();
    test_late_foreign_end();
    test_no_false_alarm();
    test_copy_is_deep();
    mop_xfer_table_free(&table);
    return TEST_RESULT();
}
