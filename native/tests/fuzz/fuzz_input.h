/* fuzz_input.h - what the fuzz targets share: the input as a C string (up to
 * its first NUL byte: the parsers read C strings), the check that fails a
 * run the way libFuzzer records (abort: the input is kept as a crash), and
 * the check of a JSON document written from fuzzed strings. */
#ifndef MO_FUZZ_INPUT_H
#define MO_FUZZ_INPUT_H

#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "utf8_check.h"

static inline char *mo_fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#define MO_FUZZ_CHECK(cond)                                                            \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* write(w, ctx) writes one JSON value: the document must be complete, and
 * clean UTF-8 with every control character escaped (utf8_check.h). */
static inline void mo_fuzz_check_json(void (*write)(mo_json *w, const void *ctx), const void *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    mo_json w;
    mo_json_init(&w, f);
    write(&w, ctx);
    MO_FUZZ_CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    MO_FUZZ_CHECK(mo_utf8_clean_lines(buf, len));
    free(buf);
}

#endif
