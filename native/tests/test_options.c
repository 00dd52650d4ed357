/* test_options.c - common flag parsing: defaults, --quick, explicit values
 * winning over --quick, --meta routing, and one-line errors. */
#include <stdlib.h>

#include "mo_test.h"
#include "options.h"

static int parse(mo_options *o, char *err, int argc, char **argv)
{
    return mo_options_parse(o, "test", "0:8", NULL, argc, argv, NULL, err, 256);
}

int main(void)
{
    mo_options o;
    char err[256];

    char *a1[] = {"prog"};
    CHECK(parse(&o, err, 1, a1) == MO_OPTIONS_OK);
    CHECK(o.reps == 7 && o.warmup == 20 && o.sample_ms == 10.0 && o.iters == 0);
    CHECK(o.min_iters == 4 && o.max_iters == 100000 && o.time_limit_s == 0);
    CHECK(o.sizes.n == 5);
    CHECK_STR(o.output, "mo_test.json");
    CHECK_STR(o.toolchain, "unknown");
    mo_options_free(&o);

    char *a2[] = {"prog", "--reps", "9", "--quick", "--meta", "toolchain=mpich", "--meta", "x=1=2",
                  "--meta", "launcher=mpiexec -n 2", "--output", "o.json", "-v", "--sizes", "1k"};
    CHECK(parse(&o, err, 15, a2) == MO_OPTIONS_OK);
    CHECK(o.reps == 9 && o.sample_ms == 3.0 && o.quick && o.verbose);
    CHECK_STR(o.toolchain, "mpich");
    CHECK_STR(o.launcher, "mpiexec -n 2");
    CHECK(o.nmeta == 1);
    if (o.nmeta == 1) {
        CHECK_STR(o.meta_keys[0], "x");
        CHECK_STR(o.meta_values[0], "1=2");
    }
    CHECK(o.sizes.n == 1 && o.sizes.v[0] == 1024);
    CHECK_STR(a2[1], "--reps"); /* argv not permuted */
    mo_options_free(&o);

    struct { int argc; char *argv[4]; const char *msg; } bad[] = {
        {2, {"prog", "--bogus"}, "unknown option '--bogus'"},
        {2, {"prog", "-x"}, "unknown option '-x'"},
        {3, {"prog", "--reps", "0"}, "--reps: 0 is out of range"},
        {3, {"prog", "--reps", "abc"}, "--reps: 'abc' is not an integer"},
        {3, {"prog", "--warmup", "-1"}, "--warmup: -1 is out of range"},
        {3, {"prog", "--sample-ms", "nan"}, "--sample-ms: 'nan' is not a number"},
        {2, {"prog", "--reps"}, "option '--reps' requires a value"},
        {3, {"prog", "--sizes", "1,,2"}, "empty item"},
        {3, {"prog", "--meta", "novalue"}, "--meta: expected KEY=VALUE"},
        {2, {"prog", "stray"}, "unexpected argument 'stray'"},
        {4, {"prog", "--min-iters", "10", "--max-iters"}, "option '--max-iters' requires a value"},
    };
    char *a3[] = {"prog", "--min-iters", "10", "--max-iters", "5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(&o, err, bad[i].argc, bad[i].argv);
        CHECK(rc == MO_OPTIONS_ERROR);
        if (!strstr(err, bad[i].msg)) {
            fprintf(stderr, "case %zu: [%s] lacks [%s]\n", i, err, bad[i].msg);
            mo_test_failures++;
        }
        mo_options_free(&o);
    }
    CHECK(parse(&o, err, 5, a3) == MO_OPTIONS_ERROR);
    CHECK(strstr(err, "larger than") != NULL);
    mo_options_free(&o);

    char *a4[] = {"prog", "--help"};
    CHECK(parse(&o, err, 2, a4) == MO_OPTIONS_HELP);
    mo_options_free(&o);

    /* Name sets: items, the `all` word (exact), case only with nocase, the first unknown item. */
    static const char *const names[] = {"red", "green", "blue"};
    unsigned set = 99;
    const char *item = NULL;
    int itemlen = -1;
    CHECK(mo_options_parse_set("blue,red", names, 3, "all", false, &set, &item, &itemlen) == 0 && set == 5u);
    CHECK(mo_options_parse_set("green,all", names, 3, "all", false, &set, &item, &itemlen) == 0 && set == 7u);
    CHECK(mo_options_parse_set("GREEN", names, 3, "all", true, &set, &item, &itemlen) == 0 && set == 2u);
    set = 99;
    CHECK(mo_options_parse_set("red,GREEN,x", names, 3, "all", false, &set, &item, &itemlen) == -1 && set == 99u);
    CHECK(itemlen == 5 && item && strncmp(item, "GREEN", 5) == 0);
    CHECK(mo_options_parse_set("ALL", names, 3, "all", true, &set, &item, &itemlen) == -1);
    CHECK(mo_options_parse_set("red,", names, 3, "all", false, &set, &item, &itemlen) == -1 && itemlen == 0);
    return TEST_RESULT();
}
