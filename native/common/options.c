/* options.c - common command-line flags; see options.h. */
#define _POSIX_C_SOURCE 200809L
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_SIZES = 256, OPT_REPS, OPT_WARMUP, OPT_SAMPLE_MS, OPT_MIN_ITERS, OPT_MAX_ITERS,
    OPT_ITERS, OPT_OUTPUT, OPT_META, OPT_TIME_LIMIT, OPT_QUICK, OPT_PROGRESS,
};

static const struct option common_longopts[] = {
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"reps", required_argument, NULL, OPT_REPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"sample-ms", required_argument, NULL, OPT_SAMPLE_MS},
    {"min-iters", required_argument, NULL, OPT_MIN_ITERS},
    {"max-iters", required_argument, NULL, OPT_MAX_ITERS},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"meta", required_argument, NULL, OPT_META},
    {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
};
enum { N_COMMON = sizeof common_longopts / sizeof common_longopts[0] };

/* Defaults; --quick lowers the ones marked, unless given explicitly. */
#define DEF_REPS 7
#define DEF_REPS_QUICK 4
#define DEF_WARMUP 20
#define DEF_SAMPLE_MS 10.0
#define DEF_SAMPLE_MS_QUICK 3.0
#define DEF_MIN_ITERS 4
#define DEF_MAX_ITERS 100000

int mo_options_parse_long(const char *name, const char *arg, long min, long max, long *out,
                          char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end != '\0' || errno == ERANGE) {
        snprintf(err, errlen, "--%s: '%s' is not an integer", name, arg);
        return -1;
    }
    if (v < min || v > max) {
        snprintf(err, errlen, "--%s: %ld is out of range [%ld, %ld]", name, v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int mo_options_parse_double(const char *name, const char *arg, double min, double max,
                            double *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        snprintf(err, errlen, "--%s: '%s' is not a number", name, arg);
        return -1;
    }
    if (v < min || v > max) {
        snprintf(err, errlen, "--%s: %g is out of range [%g, %g]", name, v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int set_string(char **dst, const char *src, char *err, size_t errlen)
{
    char *s = strdup(src);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    free(*dst);
    *dst = s;
    return 0;
}

static int add_meta(mo_options *o, const char *arg, char *err, size_t errlen)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        snprintf(err, errlen, "--meta: expected KEY=VALUE, got '%s'", arg);
        return -1;
    }
    size_t klen = (size_t)(eq - arg);
    if (klen == strlen("toolchain") && strncmp(arg, "toolchain", klen) == 0)
        return set_string(&o->toolchain, eq + 1, err, errlen);
    if (klen == strlen("launcher") && strncmp(arg, "launcher", klen) == 0)
        return set_string(&o->launcher, eq + 1, err, errlen);
    /* A repeated key replaces the earlier value (JSON objects want unique keys). */
    for (size_t i = 0; i < o->nmeta; i++)
        if (strlen(o->meta_keys[i]) == klen && strncmp(o->meta_keys[i], arg, klen) == 0)
            return set_string(&o->meta_values[i], eq + 1, err, errlen);
    char **k = realloc(o->meta_keys, (o->nmeta + 1) * sizeof *k);
    if (k)
        o->meta_keys = k;
    char **v = realloc(o->meta_values, (o->nmeta + 1) * sizeof *v);
    if (v)
        o->meta_values = v;
    if (!k || !v || !(o->meta_keys[o->nmeta] = strndup(arg, klen)))
        goto oom;
    if (!(o->meta_values[o->nmeta] = strdup(eq + 1))) {
        free(o->meta_keys[o->nmeta]);
        goto oom;
    }
    o->nmeta++;
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

static const char *opt_name(int code)
{
    for (size_t i = 0; i < N_COMMON; i++)
        if (common_longopts[i].val == code)
            return common_longopts[i].name;
    return "?";
}

int mo_options_parse(mo_options *o, const char *bench, const char *default_sizes,
                     const char *quick_sizes, int argc,
                     char **argv, const mo_bench_options *ext, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->reps = -1;
    o->warmup = DEF_WARMUP;
    o->sample_ms = -1.0;
    o->min_iters = DEF_MIN_ITERS;
    o->max_iters = DEF_MAX_ITERS;
    err[0] = '\0';

    /* getopt_long permutes argv; work on a copy so the caller's argv (the
     * recorded command line) stays as given. */
    size_t next = 0;
    while (ext && ext->longopts && ext->longopts[next].name)
        next++;
    struct option *longopts = calloc(N_COMMON + next + 1, sizeof *longopts);
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!longopts || !args) {
        free(longopts);
        free(args);
        snprintf(err, errlen, "out of memory");
        return MO_OPTIONS_ERROR;
    }
    memcpy(longopts, common_longopts, sizeof common_longopts);
    if (next)
        memcpy(longopts + N_COMMON, ext->longopts, next * sizeof *longopts);
    memcpy(args, argv, (size_t)argc * sizeof *args);

    int rc = MO_OPTIONS_OK;
    bool reps_set = false, sample_set = false;
    opterr = 0;  /* we print our own single-line messages, on rank 0 only */
    optind = 0;  /* glibc: full re-initialization, so parsing can be repeated */
    int c;
    while (rc == MO_OPTIONS_OK && (c = getopt_long(argc, args, ":hv", longopts, NULL)) != -1) {
        const char *arg = optarg;
        int bad = 0;
        switch (c) {
        case 'h': rc = MO_OPTIONS_HELP; break;
        case 'v': o->verbose = true; break;
        case OPT_QUICK: o->quick = true; break;
        case OPT_PROGRESS: o->progress = true; break;
        case OPT_SIZES: bad = set_string(&o->sizes_spec, arg, err, errlen); break;
        case OPT_REPS:
            bad = mo_options_parse_long("reps", arg, 1, 100000, &o->reps, err, errlen);
            reps_set = true;
            break;
        case OPT_WARMUP: bad = mo_options_parse_long("warmup", arg, 0, LONG_MAX / 2, &o->warmup, err, errlen); break;
        case OPT_SAMPLE_MS:
            bad = mo_options_parse_double("sample-ms", arg, 1e-3, 1e6, &o->sample_ms, err, errlen);
            sample_set = true;
            break;
        case OPT_MIN_ITERS:
            bad = mo_options_parse_long("min-iters", arg, 1, LONG_MAX / 2, &o->min_iters, err, errlen);
            o->min_iters_set = true;
            break;
        case OPT_MAX_ITERS: bad = mo_options_parse_long("max-iters", arg, 1, LONG_MAX / 2, &o->max_iters, err, errlen); break;
        case OPT_ITERS: bad = mo_options_parse_long("iters", arg, 0, LONG_MAX / 2, &o->iters, err, errlen); break;
        case OPT_OUTPUT:
            if (!*arg) {
                snprintf(err, errlen, "--output: empty file name");
                bad = -1;
            } else {
                bad = set_string(&o->output, arg, err, errlen);
            }
            break;
        case OPT_META: bad = add_meta(o, arg, err, errlen); break;
        case OPT_TIME_LIMIT: bad = mo_options_parse_double("time-limit", arg, 0, 1e9, &o->time_limit_s, err, errlen); break;
        case ':':
            if (optopt >= MO_OPT_BENCH_FIRST || (optopt >= OPT_SIZES && optopt <= OPT_PROGRESS) || optopt == 0)
                snprintf(err, errlen, "option '%s' requires a value", args[optind - 1]);
            else
                snprintf(err, errlen, "option '-%c' requires a value", optopt);
            bad = -1;
            break;
        case '?':
            if (optopt && optopt < 256)
                snprintf(err, errlen, "unknown option '-%c'", optopt);
            else
                snprintf(err, errlen, "unknown option '%s'", args[optind - 1]);
            bad = -1;
            break;
        default:
            if (c >= MO_OPT_BENCH_FIRST && ext && ext->parse)
                bad = ext->parse(ext->ctx, c, arg, err, errlen);
            else {
                snprintf(err, errlen, "internal error: unhandled option %d (%s)", c, opt_name(c));
                bad = -1;
            }
        }
        if (bad)
            rc = MO_OPTIONS_ERROR;
    }
    if (rc == MO_OPTIONS_OK && optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", args[optind]);
        rc = MO_OPTIONS_ERROR;
    }
    free(args);
    free(longopts);
    if (rc != MO_OPTIONS_OK)
        return rc;

    /* Defaults that depend on --quick, then derived values and checks. */
    if (!reps_set)
        o->reps = o->quick ? DEF_REPS_QUICK : DEF_REPS;
    o->sample_ms_set = sample_set;
    if (!sample_set)
        o->sample_ms = o->quick ? DEF_SAMPLE_MS_QUICK : DEF_SAMPLE_MS;
    if (o->min_iters > o->max_iters) {
        snprintf(err, errlen, "--min-iters (%ld) is larger than --max-iters (%ld)", o->min_iters, o->max_iters);
        return MO_OPTIONS_ERROR;
    }
    if (!o->sizes_spec && set_string(&o->sizes_spec,
                                     o->quick && quick_sizes ? quick_sizes : default_sizes, err,
                                     errlen))
        return MO_OPTIONS_ERROR;
    if (mo_sizes_parse(o->sizes_spec, &o->sizes, err, errlen))
        return MO_OPTIONS_ERROR;
    if (!o->output) {
        char name[256];
        snprintf(name, sizeof name, "mo_%s.json", bench);
        if (set_string(&o->output, name, err, errlen))
            return MO_OPTIONS_ERROR;
    }
    if ((!o->toolchain && set_string(&o->toolchain, "unknown", err, errlen)) ||
        (!o->launcher && set_string(&o->launcher, "unknown", err, errlen)))
        return MO_OPTIONS_ERROR;
    if (ext && ext->finalize && ext->finalize(ext->ctx, o->quick, err, errlen))
        return MO_OPTIONS_ERROR;
    return MO_OPTIONS_OK;
}

void mo_options_usage(FILE *f, const char *bench, const char *default_sizes,
                      const mo_bench_options *ext)
{
    fprintf(f,
            "usage: mpiexec -n 2 mo_%s [options]\n"
            "common options:\n"
            "  --sizes LIST       message sizes: comma-separated N[k|m|g] or A:B (powers of two;\n"
            "                     0 first when A is 0); default %s\n"
            "  --reps N           samples per measurement point (default %d; --quick %d)\n"
            "  --warmup N         untimed iterations per size (default %d)\n"
            "  --sample-ms X      target duration of one timed sample in ms (default %g; --quick %g)\n"
            "  --min-iters N      fewest iterations per sample (default %d)\n"
            "  --max-iters N      most iterations per sample (default %d)\n"
            "  --iters N          fixed iterations per sample, 0 = automatic (default 0)\n"
            "  --output FILE      JSON result written by rank 0 (default mo_%s.json)\n"
            "  --meta KEY=VALUE   provenance (toolchain, launcher, or free meta); repeatable\n"
            "  --time-limit S     start no new size after S seconds, 0 = none (default 0)\n"
            "  --quick            fewer, shorter samples\n"
            "  --progress         '@mo-progress done=I total=N label=L' lines on stderr\n"
            "  -v, --verbose      per-step tables on stdout\n"
            "  -h, --help         this help\n",
            bench, default_sizes, DEF_REPS, DEF_REPS_QUICK, DEF_WARMUP, DEF_SAMPLE_MS,
            DEF_SAMPLE_MS_QUICK, DEF_MIN_ITERS, DEF_MAX_ITERS, bench);
    if (ext && ext->usage) {
        fprintf(f, "%s options:\n", bench);
        ext->usage(f);
    }
}

void mo_options_write_json(mo_json *w, const mo_options *o, const mo_bench_options *ext)
{
    mo_json_begin_object(w);
    mo_json_kv_string(w, "sizes_spec", o->sizes_spec);
    mo_json_key(w, "sizes");
    mo_json_begin_array(w);
    for (size_t i = 0; i < o->sizes.n; i++)
        mo_json_uint64(w, o->sizes.v[i]);
    mo_json_end_array(w);
    mo_json_kv_int64(w, "reps", o->reps);
    mo_json_kv_int64(w, "warmup", o->warmup);
    mo_json_kv_double(w, "sample_ms", o->sample_ms);
    mo_json_kv_int64(w, "min_iters", o->min_iters);
    mo_json_kv_int64(w, "max_iters", o->max_iters);
    mo_json_kv_int64(w, "iters", o->iters);
    mo_json_kv_string(w, "output", o->output);
    mo_json_kv_double(w, "time_limit_s", o->time_limit_s);
    mo_json_kv_bool(w, "quick", o->quick);
    mo_json_kv_bool(w, "progress", o->progress);
    mo_json_kv_bool(w, "verbose", o->verbose);
    if (ext && ext->write_json)
        ext->write_json(w, ext->ctx);
    mo_json_end_object(w);
}

void mo_options_free(mo_options *o)
{
    free(o->sizes_spec);
    free(o->output);
    free(o->toolchain);
    free(o->launcher);
    for (size_t i = 0; i < o->nmeta; i++) {
        free(o->meta_keys[i]);
        free(o->meta_values[i]);
    }
    free(o->meta_keys);
    free(o->meta_values);
    mo_sizes_free(&o->sizes);
    memset(o, 0, sizeof *o);
}

static bool same_prefix(const char *a, const char *b, size_t n, bool nocase)
{
    for (size_t i = 0; i < n; i++) {
        int ca = (unsigned char)a[i], cb = (unsigned char)b[i];
        if (nocase) {
            ca = ca >= 'A' && ca <= 'Z' ? ca - 'A' + 'a' : ca;
            cb = cb >= 'A' && cb <= 'Z' ? cb - 'A' + 'a' : cb;
        }
        if (ca != cb)
            return false;
    }
    return true;
}

int mo_options_parse_set(const char *arg, const char *const *names, int n, const char *all, bool nocase,
                         unsigned *out, const char **bad, int *badlen)
{
    unsigned set = 0;
    const char *p = arg;
    for (;;) {
        const size_t len = strcspn(p, ",");
        bool known = false;
        if (strlen(all) == len && strncmp(p, all, len) == 0) {
            set |= n < 32 ? (1u << n) - 1 : ~0u;
            known = true;
        }
        for (int i = 0; i < n && !known; i++)
            if (strlen(names[i]) == len && same_prefix(p, names[i], len, nocase)) {
                set |= 1u << i;
                known = true;
            }
        if (!known) {
            *bad = p;
            *badlen = (int)len;
            return -1;
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *out = set;
    return 0;
}

void mo_options_json_set(mo_json *w, const char *key, const char *const *names, int n, unsigned set)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (int i = 0; i < n; i++)
        if (set & (1u << i))
            mo_json_string(w, names[i]);
    mo_json_end_array(w);
}
