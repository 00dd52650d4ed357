/* test_idle_pick.c - the processing path's trials (mop_idle_pick.h), MPI-free,
 * with epochs whose lengths the test sets per path: a dearer idle path costs
 * one epoch a trial and is never kept; a cheaper one is kept after winning
 * every pair; a steady drift of the program's pace alone never picks it; the
 * holds between trials grow while trials agree and start over when one
 * changes the pick. */
#include <stdint.h>

#include "mo_test.h"
#include "mop_idle_pick.h"

typedef struct run {
    mop_idle_pick p;
    uint64_t now;
    int path;
    char seq[4096]; /* the path of each epoch: 'i' or 'p' */
    int n;
} run;

static void start(run *r)
{
    mop_idle_pick_init(&r->p);
    r->now = 1000;
    r->path = mop_idle_pick_epoch(&r->p, r->now);
    r->n = 0;
}

/* One epoch on the current path lasting `plain` or `idle` ticks. */
static void epoch(run *r, uint64_t plain, uint64_t idle)
{
    r->seq[r->n++] = r->path == MOP_PATH_IDLE ? 'i' : 'p';
    r->seq[r->n] = 0;
    r->now += r->path == MOP_PATH_IDLE ? idle : plain;
    r->path = mop_idle_pick_epoch(&r->p, r->now);
}

static void epochs(run *r, int n, uint64_t plain, uint64_t idle)
{
    for (int i = 0; i < n; i++)
        epoch(r, plain, idle);
}

static int count(const run *r, char c, int from)
{
    int k = 0;
    for (int i = from; i < r->n; i++)
        k += r->seq[i] == c;
    return k;
}

static void test_dearer_idle_costs_one_epoch_a_trial(void)
{
    run r;
    start(&r);
    epochs(&r, 2000, 1000, 7000);
    /* warm-up on plain, then each trial's first epoch on idle, lost */
    CHECK(r.seq[0] == 'p' && r.seq[1] == 'p' && r.seq[2] == 'i' && r.seq[3] == 'p');
    CHECK((uint64_t)count(&r, 'i', 0) == r.p.trials);
    CHECK(r.p.idle_epochs == r.p.trials);
    CHECK(r.p.kept == MOP_PATH_PLAIN && r.path == MOP_PATH_PLAIN);
    /* holds doubling from 16 to 1024: 2000 epochs take 8 trials, not 2000 / 16 */
    CHECK(r.p.trials >= 5 && r.p.trials <= 9);
    CHECK(r.p.epochs == 2000);
}

static void test_cheaper_idle_is_kept_after_every_pair(void)
{
    run r;
    start(&r);
    epochs(&r, 2 + 2 * MOP_PICK_PAIRS, 1000, 900);
    CHECK_STR(r.seq, "ppippiip"); /* warm-up, then ABBA: i p, p i, i p */
    CHECK(r.path == MOP_PATH_IDLE && r.p.kept == MOP_PATH_IDLE);
    int before = r.n;
    epochs(&r, MOP_PICK_HOLD_MIN - 1, 1000, 900);
    CHECK(count(&r, 'i', before) == MOP_PICK_HOLD_MIN - 1);
    epochs(&r, 1000, 1000, 900);
    CHECK(r.path == MOP_PATH_IDLE);
    /* past the first trial, only the trials' plain epochs are not idle */
    CHECK(count(&r, 'p', 8) == (int)(r.p.trials - 1) * MOP_PICK_PAIRS);
}

static void test_one_lost_pair_keeps_plain(void)
{
    run r;
    start(&r);
    epochs(&r, 2, 1000, 1000);
    epoch(&r, 1000, 900); /* pair 0: idle 900 */
    epoch(&r, 1000, 900); /*         plain 1000: won */
    epoch(&r, 1000, 900); /* pair 1: plain 1000 */
    epoch(&r, 1000, 900); /*         idle 900: won */
    epoch(&r, 800, 900);  /* pair 2: idle 900 */
    epoch(&r, 800, 900);  /*         plain 800: lost */
    CHECK_STR(r.seq, "ppippiip");
    CHECK(r.path == MOP_PATH_PLAIN && r.p.kept == MOP_PATH_PLAIN && r.p.trials == 1);
    CHECK(r.p.hold == r.p.hold_len && r.p.hold_len == MOP_PICK_HOLD_MIN);
}

/* Equal paths on a program that slows down (or speeds up) steadily: of the
 * first two pairs, idle first then plain first, one sees idle faster and the
 * other slower. */
static void test_a_drift_alone_never_picks_idle(void)
{
    for (int sign = -1; sign <= 1; sign += 2) {
        run r;
        start(&r);
        for (int64_t i = 0; i < 3000; i++) {
            uint64_t len = (uint64_t)(4000000 + sign * i * 1000);
            epoch(&r, len, len);
        }
        CHECK(r.p.kept == MOP_PATH_PLAIN);
        CHECK(r.p.idle_epochs <= 2 * r.p.trials);
    }
}

/* A program whose idle path turns dearer keeps it until the next trial, then
 * drops it and holds the plain path HOLD_MIN epochs. */
static void test_a_change_is_seen_at_the_next_trial(void)
{
    run r;
    start(&r);
    epochs(&r, 500, 1000, 900);
    CHECK(r.p.kept == MOP_PATH_IDLE);
    uint64_t trials = r.p.trials;
    uint32_t left = r.p.hold;
    epochs(&r, (int)left + 2, 1000, 3000);
    CHECK(r.p.trials == trials + 1);
    CHECK(r.p.kept == MOP_PATH_PLAIN && r.p.hold_len == MOP_PICK_HOLD_MIN);
}

int main(void)
{
    test_dearer_idle_costs_one_epoch_a_trial();
    test_cheaper_idle_is_kept_after_every_pair();
    test_one_lost_pair_keeps_plain();
    test_a_drift_alone_never_picks_idle();
    test_a_change_is_seen_at_the_next_trial();
    return TEST_RESULT();
}
