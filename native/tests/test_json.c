/* test_json.c - the JSON writer's exact output: escaping, nesting, numbers. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "json.h"
#include "mo_test.h"

int main(void)
{
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
