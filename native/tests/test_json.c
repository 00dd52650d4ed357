/* test_json.c - the JSON writer's exact output: escaping, nesting, numbers;
 * strings that are not UTF-8 or hold control characters. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "json.h"
#include "mo_test.h"
#include "utf8_check.h"

/* The document of one string value, as written (caller frees). */
static char *json_string_doc(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mo_json w;
    mo_json_init(&w, f);
    mo_json_string(&w, s);
    CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    return buf;
}

/* Whether the string's document is clean UTF-8 (utf8_check.h). */
static bool json_string_clean(const char *s)
{
    char *doc = json_string_doc(s);
    bool ok = mo_utf8_clean_lines(doc, strlen(doc));
    free(doc);
    return ok;
}

/* Bytes that are not UTF-8 become U+FFFD, one per maximal subpart (the
 * replacement Python's bytes.decode("utf-8", "replace") makes, so the
 * profile's names match the trace reader's); control characters are
 * escaped; valid UTF-8 passes unchanged. */
static void test_strings_are_utf8(void)
{
    static const struct { const char *in, *out; } cases[] = {
        {"\xff", "\"\xef\xbf\xbd\"\n"},
        {"a\xc3", "\"a\xef\xbf\xbd\"\n"},                          /* cut after its lead byte */
        {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"\n"},              /* overlong '/' */
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"\n"}, /* a surrogate */
        {"\xf4\x90\x80\x80",                                        /* above U+10FFFF */
         "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"\n"},
        {"\xe2\x82" "A", "\"\xef\xbf\xbd" "A\"\n"},                 /* one U+FFFD for E2 82 */
        {"\xf0\x9f\x98", "\"\xef\xbf\xbd\"\n"},                     /* cut 4-byte sequence */
        {"\x7f\xc2\x85\x1b[31m", "\"\\u007f\\u0085\\u001b[31m\""   /* DEL, NEL, ESC */
                                  "\n"},
        {"\xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9", "\"\xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9\"\n"},
        {"line\nbreak\rtab\t", "\"line\\nbreak\\rtab\\t\"\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *doc = json_string_doc(cases[i].in);
        CHECK_STR(doc, cases[i].out);
        free(doc);
    }
    /* Every string of one and two bytes, and pseudo-random ones of up to 6
     * bytes weighted towards the bytes UTF-8 cares about: clean output. */
    int bad = 0;
    char s[8];
    for (int a = 1; a < 256; a++) {
        s[0] = (char)a;
        s[1] = '\0';
        bad += !json_string_clean(s);
        for (int b = 1; b < 256; b++) {
            s[1] = (char)b;
            s[2] = '\0';
            bad += !json_string_clean(s);
        }
    }
    static const unsigned char pick[] = {0x01, 0x1b, 0x22, 0x41, 0x5c, 0x7f, 0x80, 0x8f, 0x90,
                                         0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed,
                                         0xef, 0xf0, 0xf4, 0xf5, 0xff};
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = 1 + (size_t)(x % 6);
        for (size_t k = 0; k < n; k++)
            s[k] = (char)pick[(x >> (8 + 5 * k)) % sizeof pick];
        s[n] = '\0';
        bad += !json_string_clean(s);
    }
    CHECK(bad == 0);
}

/* One member per item for mo_json_objects(): the item plus the context. */
static void write_item(mo_json *w, const void *item, const void *ctx)
{
    mo_json_kv_int64(w, "v", *(const int *)item + *(const int *)ctx);
}

int main(void)
{
    test_strings_are_utf8();

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mo_json w;
    mo_json_init(&w, f);
    mo_json_begin_object(&w);
    mo_json_kv_string(&w, "s", "a\"b\\c\n\t\x01\x1f/\xc3\xa9");
    mo_json_kv_int64(&w, "i", -42);
    mo_json_kv_uint64(&w, "u", 18446744073709551615ull);
    mo_json_kv_double(&w, "d", 0.5);
    mo_json_kv_double(&w, "nan", NAN);
    mo_json_kv_double(&w, "inf", -INFINITY);
    mo_json_kv_bool(&w, "t", true);
    mo_json_key(&w, "n");
    mo_json_null(&w);
    mo_json_key(&w, "a");
    mo_json_begin_array(&w);
    mo_json_int64(&w, 1);
    mo_json_begin_object(&w);
    mo_json_end_object(&w);
    mo_json_begin_array(&w);
    mo_json_end_array(&w);
    mo_json_string(&w, NULL);
    mo_json_end_array(&w);
    mo_stats st = {.n = 1, .min = 1, .median = 1, .mean = 1, .max = 1, .stdev = NAN, .ci95_low = 1, .ci95_high = 1};
    mo_json_stats(&w, "st", &st);
    mo_json_end_object(&w);
    CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    CHECK_STR(buf,
              "{\n"
              "  \"s\": \"a\\\"b\\\\c\\n\\t\\u0001\\u001f/\xc3\xa9\",\n"
              "  \"i\": -42,\n"
              "  \"u\": 18446744073709551615,\n"
              "  \"d\": 0.5,\n"
              "  \"nan\": null,\n"
              "  \"inf\": null,\n"
              "  \"t\": true,\n"
              "  \"n\": null,\n"
              "  \"a\": [\n"
              "    1,\n"
              "    {},\n"
              "    [],\n"
              "    null\n"
              "  ],\n"
              "  \"st\": {\n"
              "    \"n\": 1,\n"
              "    \"min\": 1,\n"
              "    \"median\": 1,\n"
              "    \"mean\": 1,\n"
              "    \"max\": 1,\n"
              "    \"stdev\": null,\n"
              "    \"ci95_low\": 1,\n"
              "    \"ci95_high\": 1\n"
              "  }\n"
              "}\n");
    free(buf);

    /* %.17g round-trips doubles. */
    f = open_memstream(&buf, &len);
    mo_json_init(&w, f);
    mo_json_double(&w, 0.1);
    CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    CHECK(strtod(buf, NULL) == 0.1);
    free(buf);

    /* An array of objects, one per item, with the caller's context. */
    f = open_memstream(&buf, &len);
    mo_json_init(&w, f);
    mo_json_begin_object(&w);
    const int items[3] = {4, 5, 6};
    const int offset = 10;
    mo_json_objects(&w, "none", items, sizeof items[0], 0, write_item, &offset);
    mo_json_objects(&w, "items", items, sizeof items[0], 3, write_item, &offset);
    mo_json_end_object(&w);
    CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    CHECK(strcmp(buf, "{\n  \"none\": [],\n  \"items\": [\n    {\n      \"v\": 14\n    },\n    {\n"
                      "      \"v\": 15\n    },\n    {\n      \"v\": 16\n    }\n  ]\n}\n") == 0);
    free(buf);

    /* Misuse is reported: unbalanced nesting, value without key. */
    f = open_memstream(&buf, &len);
    mo_json_init(&w, f);
    mo_json_begin_object(&w);
    mo_json_int64(&w, 1);
    mo_json_end_object(&w);
    CHECK(mo_json_finish(&w) == -1);
    fclose(f);
    free(buf);
    f = open_memstream(&buf, &len);
    mo_json_init(&w, f);
    mo_json_begin_array(&w);
    CHECK(mo_json_finish(&w) == -1);
    fclose(f);
    free(buf);
    return TEST_RESULT();
}
