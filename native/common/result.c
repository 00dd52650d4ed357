/* result.c - writing the result document; see result.h. */
#define _POSIX_C_SOURCE 200809L
#include "result.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mo_result_warn(mo_result *r, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **n = realloc(r->warnings, (r->nwarnings + 1) * sizeof *n);
    if (!n)
        return;
    r->warnings = n;
    if ((r->warnings[r->nwarnings] = strdup(buf)))
        r->nwarnings++;
}

static void write_harness(mo_json *w, const mo_result *r)
{
    mo_json_begin_object(w);
    mo_json_key(w, "timer");
    mo_json_begin_object(w);
    mo_json_kv_string(w, "clock", r->timer->clock);
    mo_json_kv_double(w, "resolution_ns", r->timer->resolution_ns);
    mo_json_kv_double(w, "measured_tick_ns", r->timer->measured_tick_ns);
    mo_json_kv_double(w, "read_overhead_ns", r->timer->read_overhead_ns);
    mo_json_end_object(w);
    mo_json_key(w, "work");
    mo_json_begin_object(w);
    mo_json_kv_double(w, "units_per_us", r->work->units_per_us);
    mo_json_stats(w, "calibration", &r->work->calibration);
    mo_json_kv_bool(w, "stable", r->work->stable);
    mo_json_kv_double(w, "recheck_units_per_us", r->work->recheck_units_per_us);
    mo_json_kv_double(w, "drift", r->work->drift);
    mo_json_end_object(w);
    mo_json_key(w, "options");
    mo_options_write_json(w, r->opts, r->bench_opts);
    mo_json_end_object(w);
}

int mo_result_write(const mo_result *r, const char *status, mo_results_fn results,
                    const void *ctx, char *err, size_t errlen)
{
    const char *path = r->opts->output;
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    if (!tmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(tmp, n, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    mo_json w;
    mo_json_init(&w, f);
    mo_json_begin_document(&w, "mpi-overlap/result", 1);
    mo_json_kv_string(&w, "benchmark", r->benchmark);
    mo_json_kv_string(&w, "status", status);
    mo_json_key(&w, "provenance");
    mo_provenance_write_json(&w, r->provenance);
    mo_json_key(&w, "harness");
    write_harness(&w, r);
    mo_json_key(&w, "results");
    mo_json_begin_object(&w);
    results(&w, ctx);
    mo_json_end_object(&w);
    mo_json_key(&w, "warnings");
    mo_json_begin_array(&w);
    for (int i = 0; i < r->work->nwarnings; i++)
        mo_json_string(&w, r->work->warnings[i]);
    for (size_t i = 0; i < r->nwarnings; i++)
        mo_json_string(&w, r->warnings[i]);
    mo_json_end_array(&w);
    mo_json_end_object(&w);
    int bad = mo_json_finish(&w);
    int saved = errno;
    if (fclose(f) != 0 && !bad) {
        bad = -1;
        saved = errno;
    }
    if (bad) {
        snprintf(err, errlen, "cannot write '%s': %s", tmp, w.error ? "malformed document" : strerror(saved));
        remove(tmp);
        free(tmp);
        return -1;
    }
    /* rename() is atomic: readers see the old or the new file, never half. */
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
        remove(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

void mo_result_free(mo_result *r)
{
    for (size_t i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    r->warnings = NULL;
    r->nwarnings = 0;
}

void mo_progress(bool enabled, int done, int total, const char *fmt, ...)
{
    if (!enabled)
        return;
    char label[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(label, sizeof label, fmt, ap);
    va_end(ap);
    /* one write: several ranks may print to the same unbuffered stderr */
    fprintf(stderr, "@mo-progress done=%d total=%d label=%s\n", done, total, label);
    fflush(stderr);
}
