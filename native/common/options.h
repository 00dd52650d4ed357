/* options.h - the one set of command-line flags shared by every benchmark,
 * plus a hook through which a benchmark adds its own long options. Parsing
 * is pure (no MPI): every rank parses the same argv and reaches the same
 * verdict, so an error needs no communication to be handled everywhere. */
#ifndef MO_OPTIONS_H
#define MO_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "json.h"
#include "sizes.h"

/* Benchmark-specific options use getopt codes from here on. */
enum { MO_OPT_BENCH_FIRST = 1000 };

typedef struct mo_bench_options {
    /* Extra long options, terminated by an all-zero entry; .val must be
     * >= MO_OPT_BENCH_FIRST and .flag NULL. */
    const struct option *longopts;
    /* Handles one extra option; returns 0, or -1 with a message in err. */
    int (*parse)(void *ctx, int code, const char *arg, char *err, size_t errlen);
    /* Called after parsing: applies defaults that depend on --quick and
     * checks cross-option constraints; returns 0 or -1 with err. */
    int (*finalize)(void *ctx, bool quick, char *err, size_t errlen);
    void (*usage)(FILE *f);                            /* help lines */
    void (*write_json)(mo_json *w, const void *ctx);  /* key/value pairs */
    void *ctx;
} mo_bench_options;

typedef struct mo_options {
    char *sizes_spec;        /* as given (or the benchmark's default) */
    mo_sizes sizes;
    long reps;               /* samples per measurement point */
    long warmup;             /* untimed iterations per size */
    double sample_ms;        /* target duration of one timed sample */
    long min_iters, max_iters;
    long iters;              /* fixed iterations per sample, 0 = automatic */
    char *output;            /* JSON result file (rank 0) */
    double time_limit_s;     /* 0 = none */
    bool quick, progress, verbose;
    /* --sample-ms, --min-iters were given (a benchmark may have its own defaults) */
    bool sample_ms_set, min_iters_set;
    char *toolchain, *launcher; /* from --meta toolchain=..., launcher=... */
    size_t nmeta;
    char **meta_keys, **meta_values;
} mo_options;

enum { MO_OPTIONS_OK = 0, MO_OPTIONS_HELP = 1, MO_OPTIONS_ERROR = 2 };

/* Parses argv (which is not modified). On MO_OPTIONS_ERROR, err holds a
 * one-line description. Without --sizes the sizes are quick_sizes under
 * --quick (when not NULL), else default_sizes. ext may be NULL. */
int mo_options_parse(mo_options *o, const char *bench, const char *default_sizes,
                     const char *quick_sizes, int argc, char **argv, const mo_bench_options *ext,
                     char *err, size_t errlen);

void mo_options_usage(FILE *f, const char *bench, const char *default_sizes,
                      const mo_bench_options *ext);

/* Writes every option in force, after defaults, as one JSON object. */
void mo_options_write_json(mo_json *w, const mo_options *o, const mo_bench_options *ext);

void mo_options_free(mo_options *o);

/* Strict numeric parsing for option values (whole string, in range). */
int mo_options_parse_long(const char *name, const char *arg, long min, long max, long *out,
                          char *err, size_t errlen);
int mo_options_parse_double(const char *name, const char *arg, double min, double max,
                            double *out, char *err, size_t errlen);

/* arg, a comma-separated list of names[0..n-1] (n <= 32; compared ignoring
 * ASCII case with nocase) or the word `all` (every name; always exact), as
 * a bit set in *out. Returns 0, or -1 with the first unknown item in (*bad,
 * *badlen) for the caller's message (*out untouched). */
int mo_options_parse_set(const char *arg, const char *const *names, int n, const char *all, bool nocase,
                         unsigned *out, const char **bad, int *badlen);

/* The inverse for a result document: "key": [the names of the bits set]. */
void mo_options_json_set(mo_json *w, const char *key, const char *const *names, int n, unsigned set);

#endif
