/* fuzz_json_string.c - libFuzzer target: the JSON writer's strings
 * (common/json.c). Any bytes, as key and as value: the document is clean
 * UTF-8 with every control character escaped (utf8_check.h). */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_input.h"
#include "json.h"
#include "utf8_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = mo_fuzz_cstring(data, size);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    mo_json w;
    mo_json_init(&w, f);
    mo_json_begin_object(&w);
    mo_json_kv_string(&w, text, text);
    mo_json_end_object(&w);
    MO_FUZZ_CHECK(mo_json_finish(&w) == 0);
    fclose(f);
    /* {"\n  <key>: <value>\n}\n": the line between the braces is the string's. */
    MO_FUZZ_CHECK(len > 6 && strncmp(buf, "{\n  \"", 5) == 0 && strcmp(buf + len - 3, "\n}\n") == 0);
    MO_FUZZ_CHECK(mo_utf8_clean((const unsigned char *)buf + 2, len - 5));
    free(buf);
    free(text);
    return 0;
}
