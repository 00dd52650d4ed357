/* utf8_check.h - an independent check of the JSON writer's strings, for its
 * unit test and its fuzz target: the text is well-formed UTF-8 (decoded by
 * the generic bit pattern, then overlong forms, surrogates and code points
 * above U+10FFFF refused) and holds no raw control character (C0, DEL, C1). */
#ifndef MO_UTF8_CHECK_H
#define MO_UTF8_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool mo_utf8_clean(const unsigned char *s, size_t n)
{
    static const uint32_t min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || i + len > n)
            return false;
        uint32_t cp = len == 1 ? c : (uint32_t)(c & (0x7F >> len));
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3Fu);
        }
        if (cp < min_of_len[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
            return false;
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
            return false;
        i += len;
    }
    return true;
}

/* Whether text[0, n) is whole lines, each clean: a JSON document, whose only
 * raw newlines are the writer's own (indentation, the end). */
static inline bool mo_utf8_clean_lines(const char *text, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] != '\n')
            continue;
        if (!mo_utf8_clean((const unsigned char *)text + start, i - start))
            return false;
        start = i + 1;
    }
    return n > 0 && start == n;
}

#endif
