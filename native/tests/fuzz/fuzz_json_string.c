/* fuzz_json_string.c - libFuzzer target: the JSON writer's strings
 * (common/json.c). Any bytes, as key and as value: the document is clean
 * UTF-8 with every control character escaped (utf8_check.h). */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_pair(mo_json *w, const void *text)
{
    mo_json_begin_object(w);
    mo_json_kv_string(w, text, text);
    mo_json_end_object(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = mo_fuzz_cstring(data, size);
    mo_fuzz_check_json(write_pair, text);
    free(text);
    return 0;
}
