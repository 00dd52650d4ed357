/* fuzz_options.c - libFuzzer target: the benchmarks' command-line parser
 * (common/options.c) with one benchmark-specific option. The input is the
 * argument vector, arguments separated by NUL bytes. Any input: no crash, no
 * sanitizer report, no leak; an accepted command line's options are within
 * their documented ranges and write a clean JSON object; a refused one comes
 * with a message. */
#include "fuzz_input.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 64, OPT_WINDOW = MO_OPT_BENCH_FIRST, OPT_OPS };

typedef struct fuzz_ctx {
    long window;
    unsigned ops;
} fuzz_ctx;

static const char *const op_names[] = {"bcast", "reduce", "allreduce", "barrier"};

static int fuzz_parse(void *vctx, int code, const char *arg, char *err, size_t errlen)
{
    fuzz_ctx *ctx = vctx;
    if (code == OPT_WINDOW)
        return mo_options_parse_long("window", arg, 1, 4096, &ctx->window, err, errlen);
    const char *bad = NULL;
    int badlen = 0;
    if (mo_options_parse_set(arg, op_names, 4, "all", true, &ctx->ops, &bad, &badlen) != 0) {
        snprintf(err, errlen, "--ops: unknown operation '%.*s'", badlen, bad);
        return -1;
    }
    return 0;
}

static int fuzz_finalize(void *vctx, bool quick, char *err, size_t errlen)
{
    fuzz_ctx *ctx = vctx;
    (void)quick;
    if (ctx->window == 0)
        ctx->window = 64;
    (void)err;
    (void)errlen;
    return 0;
}

static void fuzz_json(mo_json *w, const void *vctx)
{
    const fuzz_ctx *ctx = vctx;
    mo_json_kv_int64(w, "window", ctx->window);
    mo_options_json_set(w, "ops", op_names, 4, ctx->ops);
}

typedef struct fuzz_written {
    const mo_options *o;
    const mo_bench_options *ext;
} fuzz_written;

static void write_options(mo_json *w, const void *vctx)
{
    const fuzz_written *x = vctx;
    mo_options_write_json(w, x->o, x->ext);
}

static const struct option fuzz_longopts[] = {
    {"window", required_argument, NULL, OPT_WINDOW},
    {"ops", required_argument, NULL, OPT_OPS},
    {NULL, 0, NULL, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* argv[0], then the input's NUL-separated pieces. */
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 2] = {"mo_fuzz"};
    int argc = 1;
    for (size_t i = 0; i <= size && argc <= MAX_ARGS; argc++) {
        argv[argc] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;

    fuzz_ctx ctx = {0};
    mo_bench_options ext = {.longopts = fuzz_longopts, .parse = fuzz_parse,
                            .finalize = fuzz_finalize, .write_json = fuzz_json, .ctx = &ctx};
    mo_options o;
    char err[512] = "";
    int rc = mo_options_parse(&o, "fuzz", "0:1k", "8", argc, argv, &ext, err, sizeof err);
    if (rc == MO_OPTIONS_OK) {
        MO_FUZZ_CHECK(o.reps >= 1 && o.reps <= 100000 && o.min_iters <= o.max_iters);
        MO_FUZZ_CHECK(o.sample_ms >= 1e-3 && o.sample_ms <= 1e6 && o.sizes.n > 0);
        MO_FUZZ_CHECK(o.output && o.output[0] && o.toolchain && o.launcher);
        const fuzz_written written = {&o, &ext};
        mo_fuzz_check_json(write_options, &written);
    } else if (rc == MO_OPTIONS_ERROR) {
        MO_FUZZ_CHECK(err[0] != '\0');
    } else {
        MO_FUZZ_CHECK(rc == MO_OPTIONS_HELP);
    }
    mo_options_free(&o);
    free(text);
    return 0;
}
