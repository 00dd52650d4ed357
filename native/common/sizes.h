/* sizes.h - parsing of message-size lists given on the command line, e.g.
 * "0,8,1k,64K" or "0:4M" (0 and the powers of two up to 4 MiB). */
#ifndef MO_SIZES_H
#define MO_SIZES_H

#include <stddef.h>
#include <stdint.h>

typedef struct mo_sizes {
    uint64_t *v; /* sorted, unique */
    size_t n;
} mo_sizes;

/* Grammar: LIST = ITEM { "," ITEM }; ITEM = NUM | NUM ":" NUM;
 * NUM = digits [k|K|m|M|g|G] (binary multiples: 1024, 1024^2, 1024^3).
 * A:B is every power of two p with max(A,1) <= p <= B, plus 0 when A is 0.
 * Returns 0 and fills *out (free with mo_sizes_free), or -1 with a one-line
 * message in err (out is then empty). */
int mo_sizes_parse(const char *text, mo_sizes *out, char *err, size_t errlen);

void mo_sizes_free(mo_sizes *s);

#endif
