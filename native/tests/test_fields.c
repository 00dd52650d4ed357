/* test_fields.c - a benchmark's options declared as data (fields.h):
 * ranges and their messages, --quick defaults that an explicit value
 * beats, words (choice, set, ignoring case), custom rows, the benchmark's
 * own finalize after the defaults, and the document's keys in row order. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "fields.h"
#include "mo_test.h"
#include "options.h"

typedef struct params {
    long samples;
    double frac;
    int mode;
    unsigned set;
    bool flag;
    int custom;
} params;

static const char *const MODES[] = {"send", "recv", "both"};
static const int MODE_BITS[] = {1, 2, 3};
typedef struct named {
    const char *name;
    int other;
} named;
static const named SET[] = {{"Alpha", 0}, {"Beta", 1}};

static int parse_custom(void *ctx, const char *arg, char *err, size_t errlen)
{
    ((params *)ctx)->custom = arg[0] == 'y';
    if (arg[0] != 'y' && arg[0] != 'n')
        snprintf(err, errlen, "--custom: y or n");
    return arg[0] == 'y' || arg[0] == 'n' ? 0 : -1;
}

static void custom_json(mo_json *w, const void *ctx)
{
    mo_json_kv_bool(w, "custom_is_y", ((const params *)ctx)->custom);
}

static const mo_field FIELDS[] = {
    MO_FIELD_LONG_Q("samples", params, samples, 1, 100, 25, 11),
    MO_FIELD_DOUBLE_ABOVE("work-frac", params, frac, 0.0, 10.0),
    MO_FIELD_CHOICE_OF("mode", params, mode, MODES, MODE_BITS, 3, "--mode: not '%s'"),
    MO_FIELD_SET_IN("set", params, set, SET, 2, "all", true, "--set: unknown '%.*s'"),
    MO_FIELD_FLAG_OF("flag", params, flag),
    MO_FIELD_CUSTOM_OF("custom", parse_custom, custom_json),
};

static int finalized_samples;

static int own_finalize(void *ctx, bool quick, char *err, size_t errlen)
{
    (void)quick;
    finalized_samples = (int)((params *)ctx)->samples; /* the defaults come first */
    if (((params *)ctx)->frac > 5.0) {
        snprintf(err, errlen, "--work-frac too large");
        return -1;
    }
    return 0;
}

static int parse(params *p, char *err, int argc, char **argv)
{
    static mo_fields_options x;
    *p = (params){.frac = 1.0, .mode = 3};
    static mo_bench_options own;
    own = (mo_bench_options){.finalize = own_finalize, .ctx = p};
    const mo_bench_options *ext = mo_fields_wrap(&x, FIELDS, MO_NFIELDS(FIELDS), &own);
    mo_options o;
    int rc = mo_options_parse(&o, "test", "8", NULL, argc, argv, ext, err, 256);
    CHECK(mo_fields_params(ext) == p);
    mo_options_free(&o); /* what mo_bench_start() does on any verdict */
    return rc;
}

int main(void)
{
    params p;
    char err[256];

    char *a1[] = {"prog"};
    CHECK(parse(&p, err, 1, a1) == MO_OPTIONS_OK);
    CHECK(p.samples == 25 && finalized_samples == 25 && p.frac == 1.0 && p.mode == 3 && !p.flag);
    char *a2[] = {"prog", "--quick"};
    CHECK(parse(&p, err, 2, a2) == MO_OPTIONS_OK && p.samples == 11);
    char *a3[] = {"prog", "--quick", "--samples", "40", "--mode", "recv", "--set", "beta", "--flag",
                  "--custom", "y", "--work-frac", "2.5"};
    CHECK(parse(&p, err, 13, a3) == MO_OPTIONS_OK);
    CHECK(p.samples == 40 && p.mode == 2 && p.set == 2u && p.flag && p.custom == 1 && p.frac == 2.5);

    /* One line per refusal, in the benchmark's words where a row has its own. */
    static const struct {
        const char *flag, *value, *msg;
    } bad[] = {
        {"--samples", "0", "--samples: 0 is out of range [1, 100]"},
        {"--work-frac", "0", "--work-frac: must be greater than 0"},
        {"--mode", "up", "--mode: not 'up'"},
        {"--set", "alpha,gamma", "--set: unknown 'gamma'"},
        {"--custom", "maybe", "--custom: y or n"},
        {"--work-frac", "6", "--work-frac too large"},
        {"--mode", NULL, "option '--mode' requires a value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"prog", (char *)bad[i].flag, (char *)bad[i].value};
        CHECK(parse(&p, err, bad[i].value ? 3 : 2, argv) == MO_OPTIONS_ERROR);
        CHECK_STR(err, bad[i].msg);
    }

    /* The document: the rows' keys in order, words for choice and set. */
    char *a4[] = {"prog", "--set", "all", "--custom", "n"};
    static mo_fields_options x;
    p = (params){.frac = 1.0, .mode = 1};
    mo_bench_options own = {.ctx = &p};
    const mo_bench_options *ext = mo_fields_wrap(&x, FIELDS, MO_NFIELDS(FIELDS), &own);
    mo_options o;
    CHECK(mo_options_parse(&o, "test", "8", NULL, 5, a4, ext, err, sizeof err) == MO_OPTIONS_OK);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    mo_json w;
    mo_json_init(&w, f);
    mo_json_begin_object(&w);
    ext->write_json(&w, ext->ctx);
    mo_json_end_object(&w);
    CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    CHECK_STR(buf, "{\n  \"samples\": 25,\n  \"work_frac\": 1,\n  \"mode\": \"send\",\n  \"set\": [\n    \"Alpha\",\n"
                   "    \"Beta\"\n  ],\n  \"flag\": false,\n  \"custom_is_y\": false\n}\n");
    free(buf);
    mo_options_free(&o);
    return TEST_RESULT();
}
