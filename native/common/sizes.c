/* sizes.c - size-list parsing; see sizes.h. */
#include "sizes.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"

typedef struct size_list {
    uint64_t *v;
    size_t n, cap;
} size_list;

static int push(size_list *l, uint64_t x)
{
    if (l->n == l->cap) {
        uint64_t *v = mo_grow(l->v, &l->cap, sizeof *v, 32);
        if (!v)
            return -1;
        l->v = v;
    }
    l->v[l->n++] = x;
    return 0;
}

/* Parses NUM from [s, end) (whole range must be consumed). */
static int parse_num(const char *s, const char *end, uint64_t *out, const char *item,
                     char *err, size_t errlen)
{
    if (s == end) {
        snprintf(err, errlen, "invalid size '%s': missing number", item);
        return -1;
    }
    if (*s == '-') {
        snprintf(err, errlen, "invalid size '%s': sizes cannot be negative", item);
        return -1;
    }
    uint64_t v = 0;
    const char *p = s;
    for (; p < end && isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            snprintf(err, errlen, "invalid size '%s': number too large", item);
            return -1;
        }
        v = v * 10 + d;
    }
    if (p == s) {
        snprintf(err, errlen, "invalid size '%s': expected a number", item);
        return -1;
    }
    uint64_t mult = 1;
    if (p < end) {
        switch (*p) {
        case 'k': case 'K': mult = 1024ull; break;
        case 'm': case 'M': mult = 1024ull * 1024; break;
        case 'g': case 'G': mult = 1024ull * 1024 * 1024; break;
        default:
            snprintf(err, errlen, "invalid size '%s': unexpected '%c' (suffixes: k, m, g)", item, *p);
            return -1;
        }
        p++;
    }
    if (p != end) {
        snprintf(err, errlen, "invalid size '%s': trailing characters after the suffix", item);
        return -1;
    }
    if (v != 0 && mult > UINT64_MAX / v) {
        snprintf(err, errlen, "invalid size '%s': number too large", item);
        return -1;
    }
    *out = v * mult;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Parses one item [s, end) and appends its sizes. */
static int parse_item(const char *s, const char *end, size_list *l, char *err, size_t errlen)
{
    char item[128];
    size_t len = (size_t)(end - s);
    snprintf(item, sizeof item, "%.*s", (int)(len < 100 ? len : 100), s);
    if (len == 0) {
        snprintf(err, errlen, "invalid size list: empty item");
        return -1;
    }
    const char *colon = memchr(s, ':', len);
    if (!colon) {
        uint64_t v;
        if (parse_num(s, end, &v, item, err, errlen))
            return -1;
        return push(l, v) ? (snprintf(err, errlen, "out of memory"), -1) : 0;
    }
    uint64_t a, b;
    if (parse_num(s, colon, &a, item, err, errlen) || parse_num(colon + 1, end, &b, item, err, errlen))
        return -1;
    if (b < a) {
        snprintf(err, errlen, "invalid size range '%s': end is smaller than start", item);
        return -1;
    }
    size_t before = l->n;
    if (a == 0 && push(l, 0))
        goto oom;
    uint64_t lo = a > 0 ? a : 1;
    for (uint64_t p = 1;; p <<= 1) {
        if (p >= lo && p <= b && push(l, p))
            goto oom;
        if (p > b / 2 || p == (1ull << 63))
            break;
    }
    if (l->n == before) {
        snprintf(err, errlen, "invalid size range '%s': contains no power of two", item);
        return -1;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int mo_sizes_parse(const char *text, mo_sizes *out, char *err, size_t errlen)
{
    out->v = NULL;
    out->n = 0;
    if (!text || !*text) {
        snprintf(err, errlen, "invalid size list: empty");
        return -1;
    }
    size_list l = {0};
    const char *s = text;
    for (;;) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        if (parse_item(s, end, &l, err, errlen)) {
            free(l.v);
            return -1;
        }
        if (!comma)
            break;
        s = comma + 1;
    }
    qsort(l.v, l.n, sizeof *l.v, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++)
        if (k == 0 || l.v[i] != l.v[k - 1])
            l.v[k++] = l.v[i];
    out->v = l.v;
    out->n = k;
    return 0;
}

void mo_sizes_free(mo_sizes *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
