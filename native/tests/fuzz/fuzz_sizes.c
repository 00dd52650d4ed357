/* fuzz_sizes.c - libFuzzer target: the size-list parser (common/sizes.c).
 * Any input: no crash, no sanitizer report; accepted lists are sorted and
 * unique, refused ones come with a message. */
#include "fuzz_input.h"
#include "sizes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = mo_fuzz_cstring(data, size);
    char err[256] = "";
    mo_sizes s;
    if (mo_sizes_parse(text, &s, err, sizeof err) == 0) {
        MO_FUZZ_CHECK(s.n > 0);
        for (size_t i = 1; i < s.n; i++)
            MO_FUZZ_CHECK(s.v[i - 1] < s.v[i]);
        mo_sizes_free(&s);
    } else {
        MO_FUZZ_CHECK(err[0] != '\0' && s.v == NULL && s.n == 0);
    }
    free(text);
    return 0;
}
