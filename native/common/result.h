/* result.h - the result document every benchmark writes (schema
 * mpi-overlap/result v1): envelope, harness description, the benchmark's
 * own "results", warnings. The file is replaced atomically so that it can
 * be rewritten after every completed unit of work: a run that is killed
 * leaves a valid document with status "running" and what it measured.
 * Also the machine-readable progress lines for the Python runner. */
#ifndef MO_RESULT_H
#define MO_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "options.h"
#include "provenance.h"
#include "timer.h"
#include "work.h"

/* Writes the members of "results", a JSON object that mo_result_write()
 * opens and closes around them (as mo_json_objects() does for each item). */
typedef void (*mo_results_fn)(mo_json *w, const void *ctx);

typedef struct mo_result {
    const char *benchmark;           /* e.g. "overhead" */
    const mo_provenance *provenance;
    const mo_timer_info *timer;
    const mo_work_calib *work;       /* its warnings are included too */
    const mo_options *opts;
    const mo_bench_options *bench_opts;
    size_t nwarnings;
    char **warnings;                 /* the benchmark's own warnings */
} mo_result;

/* Adds a warning (printf-style) to the document. */
void mo_result_warn(mo_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes the document to opts->output via "<output>.tmp" + rename. status
 * is "running" or "complete". Returns 0, or -1 with a message in err. */
int mo_result_write(const mo_result *r, const char *status, mo_results_fn results,
                    const void *ctx, char *err, size_t errlen);

void mo_result_free(mo_result *r);

/* When enabled, prints "@mo-progress done=<i> total=<n> label=<text>" to
 * stderr, the label formatted as printf(fmt, ...) does, and flushes at once
 * (the runner reads it while we run). */
void mo_progress(bool enabled, int done, int total, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
