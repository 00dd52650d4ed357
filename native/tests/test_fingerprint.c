/* test_fingerprint.c - FNV-1a 64 test vectors, whitespace collapsing and
 * truncation of the toolchain key, and the machine key from a cpuinfo file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fingerprint.h"
#include "mo_test.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(void)
{
    /* Reference vectors of FNV-1a 64 (Fowler/Noll/Vo test suite). */
    CHECK(mo_fnv1a64("") == 0xcbf29ce484222325ull);
    CHECK(mo_fnv1a64("a") == 0xaf63dc4c8601ec8cull);
    CHECK(mo_fnv1a64("foobar") == 0x85944171f73967e8ull);
    char hex[MO_FP_HEX_LEN];
    mo_fingerprint_hex("", hex);
    CHECK_STR(hex, "cbf29ce484222325");
    mo_fingerprint_hex("a", hex);
    CHECK_STR(hex, "af63dc4c8601ec8c");

    char buf[MO_TOOLCHAIN_KEY_LEN];
    mo_toolchain_key("  MPICH Version:\t4.3.0\nMPICH Release date:  x \n\n", buf, sizeof buf);
    CHECK_STR(buf, "MPICH Version: 4.3.0 MPICH Release date: x");
    mo_toolchain_key("", buf, sizeof buf);
    CHECK_STR(buf, "");
    mo_toolchain_key(" \n\t ", buf, sizeof buf);
    CHECK_STR(buf, "");
    mo_toolchain_key(NULL, buf, sizeof buf);
    CHECK_STR(buf, "");

    /* Cut at 200 characters; no space left at the cut. */
    char lng[600];
    for (int i = 0; i < 300; i++) {
        lng[2 * i] = 'x';
        lng[2 * i + 1] = i == 99 ? '\n' : (i % 10 == 9 ? ' ' : 'y');
    }
    lng[599] = '\0';
    mo_toolchain_key(lng, buf, sizeof buf);
    CHECK(strlen(buf) <= MO_TOOLCHAIN_KEY_MAX);
    CHECK(strlen(buf) >= MO_TOOLCHAIN_KEY_MAX - 1);
    CHECK(buf[strlen(buf) - 1] != ' ');
    CHECK(strchr(buf, '\n') == NULL);
    /* A small buffer cuts earlier, still NUL-terminated. */
    char small[8];
    mo_toolchain_key("Open MPI v5.0.11", small, sizeof small);
    CHECK_STR(small, "Open MP");

    /* A cut never splits a UTF-8 character ("é" = C3 A9). */
    char out[8];
    CHECK(mo_collapse_ws("abcdef\xc3\xa9", out, sizeof out, 7) == 6);
    CHECK_STR(out, "abcdef");
    CHECK(mo_collapse_ws("abcde\xc3\xa9z", out, sizeof out, 7) == 7);
    CHECK_STR(out, "abcde\xc3\xa9");

    /* Machine key from a cpuinfo file. */
    char path[] = "/tmp/mo_test_cpuinfo_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    char key[MO_MACHINE_KEY_LEN];
    write_file(path, "processor\t: 0\nvendor_id\t: GenuineIntel\n"
                     "model name\t: Intel(R)  Xeon(R)   CPU @ 2.20GHz \n"
                     "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n");
    CHECK(mo_machine_key_from(path, 2, key, sizeof key) == 0);
    CHECK_STR(key, "cpu=Intel(R) Xeon(R) CPU @ 2.20GHz;ncpu=2");
    write_file(path, "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n");
    CHECK(mo_machine_key_from(path, 4, key, sizeof key) == -1);
    CHECK_STR(key, "cpu=unknown;ncpu=4");
    unlink(path);
    CHECK(mo_machine_key_from("/nonexistent/cpuinfo", 8, key, sizeof key) == -1);
    CHECK_STR(key, "cpu=unknown;ncpu=8");

    /* The real machine: always filled, never with a newline. */
    mo_machine_key(key, sizeof key);
    CHECK(strncmp(key, "cpu=", 4) == 0);
    CHECK(strstr(key, ";ncpu=") != NULL);
    CHECK(strchr(key, '\n') == NULL);
    return TEST_RESULT();
}
