/* json.h - a small streaming JSON writer to a FILE*. A nesting stack keeps
 * track of commas and indentation so callers only state structure. */
#ifndef MO_JSON_H
#define MO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats.h"

enum { MO_JSON_MAX_DEPTH = 32 };

typedef struct mo_json {
    FILE *f;
    int depth;
    bool in_object[MO_JSON_MAX_DEPTH]; /* object (keys expected) or array */
    int count[MO_JSON_MAX_DEPTH];      /* items written at each level */
    bool after_key;                    /* a key was written, value pending */
    bool error;                        /* misuse or nesting overflow */
    bool one_line;                     /* no newlines or indentation (JSON Lines) */
} mo_json;

void mo_json_init(mo_json *w, FILE *f);
/* The same document on one line, for a JSON Lines file: mo_json_finish ends
 * it with the line's newline. */
void mo_json_init_line(mo_json *w, FILE *f);
/* Writes what follows without newlines or indentation (on) or as before;
 * returns the previous setting. For long arrays of numbers in an indented
 * document: one line each instead of one line per number. */
bool mo_json_inline(mo_json *w, bool on);
void mo_json_begin_object(mo_json *w);
/* A document's opening: its object, "schema" and "schema_version" (the model
 * of that name and version in src/mpi_overlap reads it). */
void mo_json_begin_document(mo_json *w, const char *schema, int64_t version);
void mo_json_end_object(mo_json *w);
void mo_json_begin_array(mo_json *w);
void mo_json_end_array(mo_json *w);
void mo_json_key(mo_json *w, const char *key);
/* NULL writes null. Any bytes give valid UTF-8: those that are not become
 * U+FFFD; control characters (C0, DEL, C1) are escaped. Keys likewise. */
void mo_json_string(mo_json *w, const char *s);
void mo_json_int64(mo_json *w, int64_t v);
void mo_json_uint64(mo_json *w, uint64_t v);
void mo_json_double(mo_json *w, double v); /* %.17g; NaN/Inf -> null */
void mo_json_bool(mo_json *w, bool v);
void mo_json_null(mo_json *w);

/* key + value shorthands for objects. */
void mo_json_kv_string(mo_json *w, const char *key, const char *s);
void mo_json_kv_int64(mo_json *w, const char *key, int64_t v);
void mo_json_kv_uint64(mo_json *w, const char *key, uint64_t v);
void mo_json_kv_double(mo_json *w, const char *key, double v);
void mo_json_kv_bool(mo_json *w, const char *key, bool v);
/* key: [v[0], ..., v[n - 1]] (each as mo_json_double). */
void mo_json_kv_doubles(mo_json *w, const char *key, const double *v, size_t n);

/* "key": an array of one object per item (n items of size bytes from
 * items), each object's members written by each(w, item, ctx). */
void mo_json_objects(mo_json *w, const char *key, const void *items, size_t size, size_t n,
                     void (*each)(mo_json *w, const void *item, const void *ctx), const void *ctx);

/* "key": {n, min, median, mean, max, stdev, ci95_low, ci95_high} */
void mo_json_stats(mo_json *w, const char *key, const mo_stats *s);

/* Ends the document: 0 when it is complete and well-formed and the stream
 * had no error, -1 otherwise. */
int mo_json_finish(mo_json *w);

#endif
