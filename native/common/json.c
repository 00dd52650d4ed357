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
    w->one_line = false;
}

void mo_json_init_line(mo_json *w, FILE *f)
{
    mo_json_init(w, f);
    w->one_line = true;
}

bool mo_json_inline(mo_json *w, bool on)
{
    bool was = w->one_line;
    w->one_line = on;
    return was;
}

static void indent(mo_json *w)
{
    if (w->one_line)
        return;
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

/* The well-formed UTF-8 sequence at p (Unicode, table 3-7): its length (1-4),
 * with *cp its code point; or, where p starts no such sequence, minus the
 * length of its maximal subpart (the bytes that could still have begun one),
 * which is replaced by one U+FFFD, as Python's errors="replace" does. A NUL
 * byte is never a continuation byte, so nothing past the terminator is read. */
static int utf8_sequence(const unsigned char *p, uint32_t *cp)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    int need;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        v = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        v = c & 0x0Fu;
        lo = c == 0xE0 ? 0xA0 : 0x80; /* no overlong forms */
        hi = c == 0xED ? 0x9F : 0xBF; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        v = c & 0x07u;
        lo = c == 0xF0 ? 0x90 : 0x80; /* no overlong forms */
        hi = c == 0xF4 ? 0x8F : 0xBF; /* nothing above U+10FFFF */
    } else {
        return -1; /* a continuation byte, C0, C1 or F5..FF: never a first byte */
    }
    for (int i = 1; i <= need; i++) {
        unsigned char b = p[i];
        if (b < lo || b > hi)
            return -i;
        v = v << 6 | (b & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = v;
    return need + 1;
}

/* A JSON string that is valid UTF-8 whatever the bytes given: names come from
 * programs (region names), the MPI library and the system (host, paths), and
 * one bad byte must not make the whole document unreadable. Control
 * characters (C0, DEL, C1) are escaped, so that neither a newline nor a
 * terminal escape sequence travels raw; invalid bytes become U+FFFD. */
static void write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp = 0;
        int n = utf8_sequence(p, &cp);
        if (n < 0) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD REPLACEMENT CHARACTER */
            p += -n;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
                fprintf(f, "\\u%04x", (unsigned)cp);
            else
                fwrite(p, 1, (size_t)n, f);
        }
        p += n;
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

void mo_json_begin_document(mo_json *w, const char *schema, int64_t version)
{
    mo_json_begin_object(w);
    mo_json_kv_string(w, "schema", schema);
    mo_json_kv_int64(w, "schema_version", version);
}
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

void mo_json_objects(mo_json *w, const char *key, const void *items, size_t size, size_t n,
                     void (*each)(mo_json *w, const void *item, const void *ctx), const void *ctx)
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (size_t i = 0; i < n; i++) {
        mo_json_begin_object(w);
        each(w, (const char *)items + i * size, ctx);
        mo_json_end_object(w);
    }
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
