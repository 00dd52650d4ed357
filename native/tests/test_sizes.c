/* test_sizes.c - size-list parsing: valid lists, ranges, suffixes, and
 * every kind of rejected input. */
#include <stdint.h>

#include "mo_test.h"
#include "sizes.h"

static void expect(const char *text, const uint64_t *want, size_t n)
{
    mo_sizes s;
    char err[256] = "";
    int rc = mo_sizes_parse(text, &s, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "parse '%s' failed: %s\n", text, err);
        mo_test_failures++;
        return;
    }
    CHECK(s.n == n);
    for (size_t i = 0; i < n && i < s.n; i++)
        if (s.v[i] != want[i]) {
            fprintf(stderr, "'%s'[%zu] = %llu, want %llu\n", text, i, (unsigned long long)s.v[i],
                    (unsigned long long)want[i]);
            mo_test_failures++;
        }
    mo_sizes_free(&s);
}

static void reject(const char *text, const char *needle)
{
    mo_sizes s;
    char err[256] = "";
    CHECK(mo_sizes_parse(text, &s, err, sizeof err) == -1);
    CHECK(s.n == 0 && s.v == NULL);
    if (!strstr(err, needle)) {
        fprintf(stderr, "'%s': message [%s] lacks [%s]\n", text, err, needle);
        mo_test_failures++;
    }
    CHECK(strchr(err, '\n') == NULL);
}

int main(void)
{
    expect("8", (uint64_t[]){8}, 1);
    expect("64,8,8,0", (uint64_t[]){0, 8, 64}, 3);
    expect("1k,2K,1m,1M,1g", (uint64_t[]){1024, 2048, 1048576, 1073741824}, 4);
    expect("0:16", (uint64_t[]){0, 1, 2, 4, 8, 16}, 6);
    expect("1:1", (uint64_t[]){1}, 1);
    expect("3:20", (uint64_t[]){4, 8, 16}, 3);
    expect("0:0", (uint64_t[]){0}, 1);
    expect("1k:4k,100", (uint64_t[]){100, 1024, 2048, 4096}, 4);
    expect("0:4M", (uint64_t[]){0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
                                16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152,
                                4194304}, 24);
    expect("16777216g", (uint64_t[]){18014398509481984ull}, 1);

    reject("", "empty");
    reject("8,,16", "empty item");
    reject("8,", "empty item");
    reject("-8", "negative");
    reject("0:-8", "negative");
    reject("abc", "expected a number");
    reject("12x", "unexpected 'x'");
    reject("1kb", "trailing");
    reject("99999999999999999999", "too large");
    reject("17179869184g", "too large");
    reject("16:8", "smaller");
    reject("5:7", "no power of two");
    reject(":8", "missing number");
    reject("8:", "missing number");
    reject(" 8", "expected a number");
    return TEST_RESULT();
}
