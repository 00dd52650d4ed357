/* test_xthread.c - requests completed on another thread than the one that
 * posted them (docs/profiler.md, "Threads"), without MPI:
 *   - the owner table and inboxes of mop_xthread.c: who a completion goes to,
 *     shared handles, untracked keys, inbox order; then the same driven by 8
 *     threads at once (run in the ThreadSanitizer build too: label "threads");
 *   - the engine's handling of an END another thread saw (mop_process.c),
 *     with bounds worked out by hand from the posting thread's timeline. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "mo_test.h"
#include "mop_process.h"
#include "mop_xthread.h"

/* ---- owner table and inboxes, one thread ------------------------------------ */

/* A completion as the wrappers make it: hold before the MPI call, take the
 * post after it; the thread the END goes to (0: stays with `self`). */
static uint32_t complete(uint32_t self, uint64_t key)
{
    return mop_xt_release(self, mop_xt_hold(self, key), true);
}

static void test_owner_table(void)
{
    CHECK(mop_xt_init() == 0);
    mop_xt_inbox ib[3] = {{0}};
    CHECK(mop_xt_register(&ib[0]) == 1);
    CHECK(mop_xt_register(&ib[1]) == 2);
    CHECK(mop_xt_register(&ib[2]) == 3);

    /* posted by 1, completed by 2: goes to 1, once */
    mop_xt_posted(1, 100);
    CHECK(complete(2, 100) == 1);
    CHECK(mop_xt_hold(2, 100) == 0); /* nothing outstanding any more */
    /* the handle comes back to 1 and 1 completes it itself */
    mop_xt_posted(1, 100);
    CHECK(complete(1, 100) == 0);
    CHECK(mop_xt_hold(2, 100) == 0);
    /* ... then to 2, completed by 3 */
    mop_xt_posted(2, 100);
    CHECK(complete(3, 100) == 2);

    /* A Test that finds its request not complete lets the post go: the next
     * completion takes it. */
    mop_xt_posted(1, 150);
    uint32_t ticket = mop_xt_hold(2, 150);
    CHECK(ticket != 0);
    CHECK(mop_xt_release(2, ticket, false) == 0);
    CHECK(complete(2, 150) == 1);

    /* The MPI frees a handle inside the completing call and may give it to
     * another thread's request before that call records the completion.
     * Own first: thread 1 completes its own request on handle 200 (held
     * before the MPI call, recorded after it); meanwhile thread 3 is given
     * 200 for a new request, which thread 2 completes and records first. Each
     * END goes to its own request's thread: 2's to 3, 1's stays. */
    mop_xt_posted(1, 200);
    uint32_t t1 = mop_xt_hold(1, 200); /* 1 enters its Wait; the MPI frees 200 */
    mop_xt_posted(3, 200);             /* 3's Irecv gets 200, handed to 2 */
    CHECK(complete(2, 200) == 3);      /* 2's Wait, recorded first */
    CHECK(mop_xt_release(1, t1, true) == 0);
    CHECK(mop_xt_hold(1, 200) == 0 && mop_xt_hold(2, 200) == 0);
    /* Foreign first: 2 completes 1's request on handle 210 and is held; 3
     * is given 210 and hands it to 1, which completes it: 1's END goes to 3
     * (not to 1's own, held, post), then 2's to 1. */
    mop_xt_posted(1, 210);
    uint32_t t2 = mop_xt_hold(2, 210);
    mop_xt_posted(3, 210);
    CHECK(complete(1, 210) == 3);
    CHECK(mop_xt_release(2, t2, true) == 1);
    CHECK(mop_xt_hold(3, 210) == 0);

    /* One handle shared by requests that completed at once (MPICH's
     * pre-completed sends): 1 posts it twice, 2 once. A thread with one of its
     * own outstanding takes that; others take the other threads' posts. */
    mop_xt_posted(1, 7);
    mop_xt_posted(1, 7);
    mop_xt_posted(2, 7);
    CHECK(complete(2, 7) == 0); /* 2's own */
    CHECK(complete(3, 7) == 1);
    CHECK(complete(3, 7) == 1);
    CHECK(complete(3, 7) == 0); /* all three taken: nothing held */
    CHECK(mop_xt_hold(3, 7) == 0);

    /* A query (MPI_Request_get_status) on another thread finds the poster and
     * takes nothing; the Wait that frees the handle takes it. A query prefers
     * posts not held (a held one may be an older request on the handle), but
     * finds a held one when there is no other. */
    mop_xt_posted(1, 300);
    CHECK(mop_xt_owner(2, 300) == 1);
    CHECK(mop_xt_owner(2, 300) == 1);
    CHECK(mop_xt_owner(1, 300) == 0); /* 1's own */
    uint32_t t3 = mop_xt_hold(2, 300);
    CHECK(mop_xt_owner(2, 300) == 1);
    mop_xt_posted(3, 300);
    CHECK(mop_xt_owner(2, 300) == 3);
    CHECK(mop_xt_release(2, t3, true) == 1);
    CHECK(complete(2, 300) == 3);
    CHECK(mop_xt_owner(2, 300) == 0);

    /* made-up keys (bit 63) and 0 are never routed, nor counted untracked */
    mop_xt_posted(1, UINT64_C(1) << 63 | 5);
    CHECK(mop_xt_hold(2, UINT64_C(1) << 63 | 5) == 0);
    CHECK(mop_xt_owner(2, UINT64_C(1) << 63 | 5) == 0);
    mop_xt_posted(1, 0);
    CHECK(mop_xt_hold(2, 0) == 0);
    CHECK(mop_xt_release(2, 0, true) == 0);
    CHECK(mop_xt_untracked() == 0);
    /* a thread without an id: its posts are counted, not tracked; its
     * completions of other threads' posts are routed */
    mop_xt_posted(0, 55);
    CHECK(mop_xt_untracked() == 1);
    CHECK(complete(1, 55) == 0);
    mop_xt_posted(1, 56);
    CHECK(complete(0, 56) == 1);

    /* inbox: oldest first, equal times in the order sent */
    mop_event e = {.type = MOP_EV_END, .key = 1};
    const uint64_t times[] = {30, 10, 20, 10};
    for (int i = 0; i < 4; i++) {
        e.t = times[i];
        e.arg = i + 1;
        CHECK(mop_xt_send(1, &e) == 0);
    }
    CHECK(mop_xt_send(0, &e) == -1);
    CHECK(mop_xt_send(4, &e) == -1); /* no such thread */
    mop_xt_node *n = mop_xt_take(&ib[0]);
    const int32_t want[] = {2, 4, 3, 1};
    for (int i = 0; i < 4; i++) {
        CHECK(n != NULL);
        if (!n)
            break;
        CHECK(n->ev.arg == want[i]);
        mop_xt_node *next = n->next;
        free(n);
        n = next;
    }
    CHECK(n == NULL);
    CHECK(mop_xt_take(&ib[0]) == NULL);
}

/* ---- the same from 8 threads at once ------------------------------------------ */

enum { NT = 8, PER = 1000, SHARED_KEY = 424242 }; /* 8000 keys: half the table */

static pthread_barrier_t bar;
static mop_xt_inbox inboxes[NT];
static uint32_t ids[NT];
static int routed_shared[NT];
static int wrong[NT];

/* Takes thread i's inbox: ENDs from thread i+1, in the order it sent them
 * (its times grow), across takes too. Returns how many. */
static int take_all(int i, uint64_t *last)
{
    int got = 0;
    for (mop_xt_node *n = mop_xt_take(&inboxes[i]); n;) {
        if (n->ev.t < *last || n->ev.arg != (int32_t)ids[(i + 1) % NT])
            wrong[i]++;
        *last = n->ev.t;
        got++;
        mop_xt_node *next = n->next;
        free(n);
        n = next;
    }
    return got;
}

/* A fresh owner table with NT inboxes registered, their ids in ids[]. */
static void register_threads(void)
{
    CHECK(mop_xt_init() == 0);
    for (int i = 0; i < NT; i++)
        ids[i] = mop_xt_register(&inboxes[i]);
}

/* Runs fn on NT threads, each given its index, which may meet at bar, and
 * waits for them all. */
static void run_threads(void *(*fn)(void *))
{
    pthread_barrier_init(&bar, NULL, NT);
    pthread_t th[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&th[i], NULL, fn, (void *)(intptr_t)i);
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
}

/* Thread i posts PER own keys, which thread i+1 completes while thread i
 * takes its inbox now and then; even threads also post the shared key PER
 * times, which odd threads complete: every such completion must go to some
 * even thread, none twice. */
static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    uint32_t self = ids[i];
    for (int j = 0; j < PER; j++) {
        mop_xt_posted(self, (uint64_t)(i + 1) * 1000000 + (uint64_t)j);
        if (i % 2 == 0)
            mop_xt_posted(self, SHARED_KEY);
    }
    pthread_barrier_wait(&bar);
    int prev = (i + NT - 1) % NT, got = 0;
    uint64_t last = 0;
    for (int j = 0; j < PER; j++) {
        if (j % 16 == 0)
            got += take_all(i, &last); /* while thread i+1 sends */
        uint64_t key = (uint64_t)(prev + 1) * 1000000 + (uint64_t)j;
        uint32_t to = complete(self, key);
        if (to != ids[prev]) {
            wrong[i]++;
            continue;
        }
        mop_event e = {.type = MOP_EV_END, .t = (uint64_t)j, .key = key, .arg = (int32_t)self};
        if (mop_xt_send(to, &e) != 0)
            wrong[i]++;
        if (i % 2 == 1) {
            uint32_t o = complete(self, SHARED_KEY);
            if (o != 0 && (o - 1) % 2 == 0)
                routed_shared[i]++;
            else
                wrong[i]++;
        }
    }
    pthread_barrier_wait(&bar);
    got += take_all(i, &last); /* the rest */
    if (got != PER)
        wrong[i]++;
    return NULL;
}

static void test_owner_table_threads(void)
{
    register_threads();
    run_threads(worker);
    int shared = 0;
    for (int i = 0; i < NT; i++) {
        CHECK(wrong[i] == 0);
        shared += routed_shared[i];
    }
    CHECK(shared == NT / 2 * PER);
    CHECK(mop_xt_hold(ids[1], SHARED_KEY) == 0); /* none left */
    CHECK(mop_xt_untracked() == 0);
}

/* ---- handles reused at once, from 8 threads ----------------------------------- */

/* An MPI's request pool in miniature: RU_HANDLES handles on a LIFO free list,
 * so that a handle freed by one thread's completion is the next one posted.
 * Each thread posts RU_PER requests; every other one it completes itself, the
 * others it hands to the next thread. A completion holds its post, "frees"
 * the handle (back to the pool, where another thread may post it at once),
 * yields now and then to widen the window, and only then takes the post:
 * its END must go to the thread that posted this request, every time. */
enum { RU_HANDLES = NT, RU_PER = 20000, RU_KEY0 = 5000 };

static pthread_mutex_t ru_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t ru_pool[RU_HANDLES];
static int ru_free;
static uint32_t ru_poster[RU_HANDLES];     /* the request on handle i: who posted it */
static uint64_t ru_mailbox[NT];            /* a handle handed to thread i; 0: empty */
static int ru_handed;                      /* hand-offs completed, all threads */
static int ru_wrong[NT], ru_cross[NT];

static void ru_serve(int i, unsigned *n);

static uint64_t ru_post(int i, unsigned *n)
{
    for (;;) {
        pthread_mutex_lock(&ru_lock);
        uint64_t h = ru_free ? ru_pool[--ru_free] : 0;
        if (h)
            ru_poster[h - RU_KEY0] = ids[i];
        pthread_mutex_unlock(&ru_lock);
        if (h) {
            mop_xt_posted(ids[i], h);
            return h;
        }
        ru_serve(i, n); /* every handle outstanding: maybe one is handed to us */
        sched_yield();
    }
}

static void ru_complete(int i, uint64_t h, unsigned n)
{
    uint32_t ticket = mop_xt_hold(ids[i], h);
    pthread_mutex_lock(&ru_lock);
    uint32_t poster = ru_poster[h - RU_KEY0];
    ru_pool[ru_free++] = h; /* freed: the next post may get it */
    pthread_mutex_unlock(&ru_lock);
    if (n % 4 == 0)
        sched_yield();
    uint32_t to = mop_xt_release(ids[i], ticket, true);
    if (to != (poster == ids[i] ? 0 : poster))
        ru_wrong[i]++;
    if (to)
        ru_cross[i]++;
}

/* Completes what the previous thread handed to thread i, if anything. */
static void ru_serve(int i, unsigned *n)
{
    uint64_t h = __atomic_exchange_n(&ru_mailbox[i], 0, __ATOMIC_ACQUIRE);
    if (h) {
        ru_complete(i, h, (*n)++);
        __atomic_fetch_add(&ru_handed, 1, __ATOMIC_RELEASE);
    }
}

static void *ru_worker(void *arg)
{
    int i = (int)(intptr_t)arg, next = (i + 1) % NT;
    unsigned n = (unsigned)i;
    pthread_barrier_wait(&bar);
    for (int j = 0; j < RU_PER; j++) {
        uint64_t h = ru_post(i, &n);
        if (j % 2 == 0) {
            ru_complete(i, h, n++);
        } else {
            uint64_t empty = 0;
            while (!__atomic_compare_exchange_n(&ru_mailbox[next], &empty, h, false,
                                                __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
                empty = 0;
                ru_serve(i, &n); /* the thread we wait for may wait for us */
                sched_yield();
            }
        }
        ru_serve(i, &n);
    }
    while (__atomic_load_n(&ru_handed, __ATOMIC_ACQUIRE) < NT * RU_PER / 2) {
        ru_serve(i, &n);
        sched_yield();
    }
    return NULL;
}

static void test_owner_table_reuse_threads(void)
{
    register_threads();
    for (int h = 0; h < RU_HANDLES; h++)
        ru_pool[h] = RU_KEY0 + (uint64_t)h;
    ru_free = RU_HANDLES;
    run_threads(ru_worker);
    int wrong = 0, cross = 0;
    for (int i = 0; i < NT; i++) {
        wrong += ru_wrong[i];
        cross += ru_cross[i];
    }
    CHECK(wrong == 0);
    CHECK(cross == NT * RU_PER / 2); /* exactly the hand-offs */
    for (int h = 0; h < RU_HANDLES; h++) /* nothing outstanding, nothing held */
        CHECK(mop_xt_hold(ids[0], RU_KEY0 + (uint64_t)h) == 0);
    CHECK(mop_xt_untracked() == 0);
}

/* ---- the engine: an END seen by another thread ----------------------------- */

typedef struct seen {
    int n;
    mop_transfer tr[8];
} seen;

static void on_transfer(void *ctx, const mop_transfer *tr)
{
    seen *s = ctx;
    if (s->n < 8)
        s->tr[s->n++] = *tr;
}

static void ev(mop_process *p, mop_event_type type, uint64_t t, uint64_t key, int32_t arg)
{
    mop_event e = {.type = (uint8_t)type, .t = t, .key = key, .bytes = 1024,
                   .kind = MOP_KIND_SEND, .id = 1, .arg = arg};
    mop_process_event(p, &e);
}

/* An engine whose table has a 1024-byte intra-node transfer of 5 us, its
 * transfers going to s, with one request posted (engine_open). */
typedef struct engine {
    mop_xfer_table table;
    seen s;
    mop_process p;
} engine;

static void engine_open(engine *g)
{
    mop_xfer_table_init(&g->table);
    CHECK(mop_xfer_table_add(&g->table, MOP_XFER_INTRA, 1024, 5e-6) == 0);
    g->s = (seen){0};
    mop_process_config cfg = {.table = &g->table, .s_per_tick = 1e-9, .on_transfer = on_transfer,
                              .on_transfer_ctx = &g->s};
    CHECK(mop_process_init(&g->p, &cfg) == 0);
    /* Times in ns: the posting thread posts request 9 at 0, in a call it
     * leaves at 1000, then computes. */
    ev(&g->p, MOP_EV_ENTER, 0, 0, 0);
    ev(&g->p, MOP_EV_BEGIN, 0, 9, -1);
    ev(&g->p, MOP_EV_EXIT, 1000, 0, 0);
}

/* Finishes the engine, which must hold no unfinished transfer, and frees it. */
static void engine_close(engine *g)
{
    mop_process_finish(&g->p);
    CHECK(g->p.counters.unfinished == 0);
    mop_process_free(&g->p);
    mop_xfer_table_free(&g->table);
}

/* Request 9 of engine_open(), completed by another thread at 8000: across
 * threads, computation 7 us, library time 1 us of the 8 us span -> max =
 * min(7, 5) = 5 us, min = 5 - 1 = 4 us. */
static void check_first(const seen *s)
{
    CHECK(s->n == 1 && s->tr[0].b.kase == MOP_CASE_ACROSS);
    CHECK_NEAR(s->tr[0].b.max_s, 5e-6, 1e-15);
    CHECK_NEAR(s->tr[0].b.min_s, 4e-6, 1e-15);
}

static void test_engine_foreign_end(void)
{
    engine g;
    engine_open(&g);
    mop_process *p = &g.p;
    const seen *s = &g.s;
    ev(p, MOP_EV_END, 8000, 9, 2); /* thread 2 completes the request */
    check_first(s);
    /* No call was made here at 8000: the next call ends 10 us of computation. */
    ev(p, MOP_EV_ENTER, 11000, 0, 0);
    CHECK(p->comp_ticks == 10000);
    CHECK(p->fns[1].calls == 1);
    /* Completed elsewhere while the posting call is still open: in one call. */
    ev(p, MOP_EV_BEGIN, 11000, 10, -1);
    ev(p, MOP_EV_END, 11500, 10, 3);
    ev(p, MOP_EV_EXIT, 12000, 0, 0);
    CHECK(s->n == 2 && s->tr[1].b.kase == MOP_CASE_IN_CALL);
    CHECK(s->tr[1].b.min_s == 0.0 && s->tr[1].b.max_s == 0.0);
    /* Completed elsewhere while this thread is in another call (20000-30000):
     * computation 12000-20000 = 8 us, span 14 us -> max 5, min max(0, 5 - 6) = 0. */
    ev(p, MOP_EV_ENTER, 12000, 0, 0);
    ev(p, MOP_EV_BEGIN, 12000, 11, -1);
    ev(p, MOP_EV_EXIT, 12000, 0, 0);
    ev(p, MOP_EV_ENTER, 20000, 0, 0);
    ev(p, MOP_EV_END, 26000, 11, 2);
    ev(p, MOP_EV_EXIT, 30000, 0, 0);
    CHECK(s->n == 3 && s->tr[2].b.kase == MOP_CASE_ACROSS);
    CHECK_NEAR(s->tr[2].b.max_s, 5e-6, 1e-15);
    CHECK_NEAR(s->tr[2].b.min_s, 0.0, 1e-15);
    /* The posting thread ended at 33000: completed at 70000, only 3 us of
     * computation count (30000-33000) -> max 3; span 40 us -> min 0. */
    ev(p, MOP_EV_ENTER, 30000, 0, 0);
    ev(p, MOP_EV_BEGIN, 30000, 12, -1);
    ev(p, MOP_EV_EXIT, 30000, 0, 0);
    mop_process_thread_exit(p, 33000);
    ev(p, MOP_EV_END, 70000, 12, 2);
    CHECK(s->n == 4 && s->tr[3].b.kase == MOP_CASE_ACROSS);
    CHECK_NEAR(s->tr[3].b.max_s, 3e-6, 1e-15);
    CHECK_NEAR(s->tr[3].b.min_s, 0.0, 1e-15);
    /* one this thread never posted: end-only, as on its own thread */
    ev(p, MOP_EV_END, 71000, 13, 2);
    CHECK(s->n == 5 && s->tr[4].b.kase == MOP_CASE_END_ONLY);
    CHECK(p->counters.cross_thread_completions == 5);
    CHECK(p->cases[MOP_CASE_ACROSS] == 3 && p->cases[MOP_CASE_IN_CALL] == 1);
    CHECK(p->cases[MOP_CASE_BEGIN_ONLY] == 0);
    engine_close(&g);
}

/* Another thread sees the request complete with MPI_Request_get_status, then
 * frees it with MPI_Wait: one transfer, closed at the query, counted once. */
static void test_engine_foreign_query(void)
{
    engine g;
    engine_open(&g);
    mop_process *p = &g.p;
    const seen *s = &g.s;
    mop_event q = {.type = MOP_EV_END, .t = 8000, .key = 9, .bytes = 1024,
                   .kind = MOP_END_QUERY, .arg = 2};
    mop_process_event(p, &q);
    q.t = 9000;
    q.kind = 0;
    mop_process_event(p, &q);
    check_first(s); /* closed at 8000, as in the test above */
    CHECK(p->counters.cross_thread_completions == 1);
    CHECK(p->cases[MOP_CASE_END_ONLY] == 0);
    engine_close(&g);
}

int main(void)
{
    test_owner_table();
    test_owner_table_threads();
    test_owner_table_reuse_threads();
    test_engine_foreign_end();
    test_engine_foreign_query();
    return TEST_RESULT();
}
