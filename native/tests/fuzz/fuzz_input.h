/* fuzz_input.h - what the fuzz targets share: the input as a C string (up to
 * its first NUL byte: the parsers read C strings), and the check that fails a
 * run the way libFuzzer records (abort: the input is kept as a crash). */
#ifndef MO_FUZZ_INPUT_H
#define MO_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
