/* json.c - streaming JSON writer; see json.h. */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void mo_json_init(mo_json *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->count[0] = 0;
    w->in_object[0] = false;
    w->after_key = false;
    w->error = false;
}

static void indent(mo_json *w)
{
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->f);
}

/* Separator and indentation before a value (or key) at the current level. */
static void before_value(mo_json *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth > 0 && w->in_object[w->depth])
        w->error = true; /* value in an object without a key */
    if (w->depth == 0 && w->count[0] > 0)
        w->error = true; /* second top-level value */
    if (w->count[w->depth]++ > 0)
        fputc(',', w->f);
    if (w->depth > 0)
        indent(w);
}

static void begin(mo_json *w, bool object)
{
    before_value(w);
    fputc(object ? '{' : '[', w->f);
    if (w->depth + 1 >= MO_JSON_MAX_DEPTH) {
        w->error = true;
        return;
    }
    w->depth++;
    w->in_object[w->depth] = object;
    w->count[w->depth] = 0;
}

static void end(mo_json *w, bool object)
{
    if (w->depth == 0 || w->in_object[w->depth] != object || w->after_key) {
        w->error = true;
        return;
    }
    int n = w->count[w->depth];
    w->depth--;
    if (n > 0)
        indent(w);
    fputc(object ? '}' : ']', w->f);
}

void mo_json_begin_object(mo_json *w) { begin(w, true); }
void mo_json_end_object(mo_json *w) { end(w, true); }
void mo_json_begin_array(mo_json *w) { begin(w, false); }
void mo_json_end_array(mo_json *w) { end(w, false); }

static void write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            /* Other control characters must be escaped; bytes >= 0x80 are
             * passed through (UTF-8 stays UTF-8). */
            if (*p < 0x20)
                fprintf(f, "\\u%04x", (unsigned)*p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void mo_json_key(mo_json *w, const char *key)
{
    if (w->depth == 0 || !w->in_object[w->depth] || w->after_key) {
        w->error = true;
        return;
    }
    if (w->count[w->depth]++ > 0)
        fputc(',', w->f);
    indent(w);
    write_escaped(w->f, key);
    fputs(": ", w->f);
    w->after_key = true;
}

void mo_json_string(mo_json *w, const char *s)
{
    if (!s) {
        mo_json_null(w);
        return;
    }
    before_value(w);
    write_escaped(w->f, s);
}

void mo_json_int64(mo_json *w, int64_t v)
{
    before_value(w);
    fprintf(w->f, "%" PRId64, v);
}

void mo_json_uint64(mo_json *w, uint64_t v)
{
    before_value(w);
    fprintf(w->f, "%" PRIu64, v);
}

void mo_json_double(mo_json *w, double v)
{
    /* JSON has no NaN or Infinity; null means "no value". */
    if (!isfinite(v)) {
        mo_json_null(w);
        return;
    }
    before_value(w);
    fprintf(w->f, "%.17g", v);
}

void mo_json_bool(mo_json *w, bool v)
{
    before_value(w);
    fputs(v ? "true" : "false", w->f);
}

void mo_json_null(mo_json *w)
{
    before_value(w);
    fputs("null", w->f);
}

void mo_json_kv_string(mo_json *w, const char *key, const char *s) { mo_json_key(w, key); mo_json_string(w, s); }
void mo_json_kv_int64(mo_json *w, const char *key, int64_t v) { mo_json_key(w, key); mo_json_int64(w, v); }
void mo_json_kv_uint64(mo_json *w, const char *key, uint64_t v) { mo_json_key(w, key); mo_json_uint64(w, v); }
void mo_json_kv_double(mo_json *w, const char *key, double v) { mo_json_key(w, key); mo_json_double(w, v); }
void mo_json_kv_bool(mo_json *w, const char *key, bool v) { mo_json_key(w, key); mo_json_bool(w, v); }

void mo_json_stats(mo_json *w, const char *key, const mo_stats *s)
{
    mo_json_key(w, key);
    mo_json_begin_object(w);
    mo_json_kv_uint64(w, "n", (uint64_t)s->n);
    mo_json_kv_double(w, "min", s->min);
    mo_json_kv_double(w, "median", s->median);
    mo_json_kv_double(w, "mean", s->mean);
    mo_json_kv_double(w, "max", s->max);
    mo_json_kv_double(w, "stdev", s->stdev);
    mo_json_kv_double(w, "ci95_low", s->ci95_low);
    mo_json_kv_double(w, "ci95_high", s->ci95_high);
    mo_json_end_object(w);
}

void mo_json_kv_doubles(mo_json *w, const char *key, const double *v, size_t n)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (size_t i = 0; i < n; i++)
        mo_json_double(w, v[i]);
    mo_json_end_array(w);
}

int mo_json_finish(mo_json *w)
{
    if (w->depth != 0 || w->after_key || w->count[0] != 1)
        w->error = true;
    else
        fputc('\n', w->f);
    if (fflush(w->f) != 0 || ferror(w->f))
        w->error = true;
    return w->error ? -1 : 0;
}
