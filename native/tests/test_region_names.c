/* test_region_names.c - the process-wide table of region names
 * (mop_region_names.h), MPI-free: a name gets the next id once and the same id
 * ever after, whatever else is known; lengths, not NULs, delimit names; names
 * are kept to 63 bytes, never cut inside a UTF-8 character; past the table's
 * capacity every new name shares the last id, "(other regions)", while the
 * known ones keep theirs; threads interning the same names at once agree. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mo_test.h"
#include "mop_limits.h"
#include "mop_region_names.h"

static uint16_t intern(const char *name)
{
    return mop_region_intern(name, strlen(name));
}

static const char *name_of(uint16_t id)
{
    size_t n;
    const char *const *names = mop_region_names(&n);
    return id < n ? names[id] : "(unknown id)";
}

enum { THREADS = 4, THREAD_NAMES = 40 };
static uint16_t thread_ids[THREADS][THREAD_NAMES];

static void *intern_all(void *arg)
{
    int t = (int)(size_t)arg;
    char name[32];
    for (int k = 0; k < THREAD_NAMES; k++) {
        int i = (k * 7 + t * 13) % THREAD_NAMES; /* each thread in its own order */
        snprintf(name, sizeof name, "solver/phase-%d", i);
        thread_ids[t][i] = intern(name);
    }
    return NULL;
}

int main(void)
{
    size_t n;
    CHECK_STR(mop_region_names(&n)[0], "(no region)");
    CHECK(n == 1);

    /* New names in order, then found again. */
    CHECK(intern("halo/exchange") == 1);
    CHECK(intern("halo/interior") == 2);
    CHECK(intern("halo/exchange") == 1);
    CHECK(intern("halo/interior") == 2);
    CHECK_STR(name_of(2), "halo/interior");

    /* Lengths delimit: a prefix is another name, and a name need not end in NUL. */
    CHECK(intern("halo") == 3);
    CHECK(mop_region_intern("halo/exchange-and-more", 13) == 1);
    CHECK(mop_region_intern("halo/interior", 4) == 3);
    CHECK(intern("") == 4);
    CHECK_STR(name_of(4), "");

    /* Kept to 63 bytes: two names that differ only after them are one region. */
    char long_a[100], long_b[100];
    memset(long_a, 'a', 99);
    long_a[99] = '\0';
    memcpy(long_b, long_a, sizeof long_b);
    long_b[80] = 'b';
    uint16_t long_id = intern(long_a);
    CHECK(long_id == 5);
    CHECK(intern(long_b) == long_id);
    CHECK(strlen(name_of(long_id)) == 63);
    /* Not cut inside a character: "é" (2 bytes) straddling byte 63 is left out whole. */
    char utf8[100];
    memset(utf8, 'x', 62);
    memcpy(utf8 + 62, "\xc3\xa9tail", 7);
    uint16_t utf8_id = intern(utf8);
    CHECK(utf8_id == 6);
    CHECK(strlen(name_of(utf8_id)) == 62);

    /* Threads agree on every id, whichever order they meet the names in. */
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, intern_all, (void *)(size_t)t) == 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < THREAD_NAMES; i++) {
        char name[32];
        snprintf(name, sizeof name, "solver/phase-%d", i);
        uint16_t id = thread_ids[0][i];
        CHECK(id >= 7 && id < 7 + THREAD_NAMES);
        CHECK_STR(name_of(id), name);
        for (int t = 1; t < THREADS; t++)
            CHECK(thread_ids[t][i] == id);
    }
    mop_region_names(&n);
    CHECK(n == 7 + THREAD_NAMES);

    /* Fill the table: ids up to MOP_MAX_REGIONS - 2 are names of their own, then
     * every new name is "(other regions)"; the known names keep their ids. */
    char name[32];
    int next = (int)n;
    for (int i = 0; next < MOP_MAX_REGIONS - 1; i++, next++) {
        snprintf(name, sizeof name, "fill/%d", i);
        CHECK(intern(name) == next);
    }
    CHECK(intern("one too many") == MOP_MAX_REGIONS - 1);
    CHECK(intern("and another") == MOP_MAX_REGIONS - 1);
    CHECK_STR(name_of(MOP_MAX_REGIONS - 1), "(other regions)");
    mop_region_names(&n);
    CHECK(n == MOP_MAX_REGIONS);
    CHECK(intern("halo/exchange") == 1);
    CHECK(intern("fill/0") == 7 + THREAD_NAMES);
    snprintf(name, sizeof name, "fill/%d", MOP_MAX_REGIONS - 2 - (7 + THREAD_NAMES));
    CHECK(intern(name) == MOP_MAX_REGIONS - 2);
    return TEST_RESULT();
}
