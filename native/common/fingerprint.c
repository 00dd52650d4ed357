/* fingerprint.c - machine and toolchain keys and their FNV-1a 64 hashes;
 * see fingerprint.h. Deliberately free of MPI. */
#define _POSIX_C_SOURCE 200809L
#include "fingerprint.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FNV_PRIME UINT64_C(0x100000001b3)

uint64_t mo_fnv1a64_update(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV_PRIME;
    }
    return h;
}

uint64_t mo_fnv1a64(const char *s)
{
    return mo_fnv1a64_update(MO_FNV1A64_OFFSET, s, strlen(s));
}

void mo_fingerprint_hex(const char *key, char out[MO_FP_HEX_LEN])
{
    snprintf(out, MO_FP_HEX_LEN, "%016llx", (unsigned long long)mo_fnv1a64(key));
}

/* Only the C locale's white space: the result must not depend on a locale. */
static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

size_t mo_collapse_ws(const char *in, char *out, size_t n, size_t max_len)
{
    if (n == 0)
        return 0;
    size_t limit = n - 1 < max_len ? n - 1 : max_len;
    size_t len = 0;
    bool pending_space = false;
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        if (is_ws(*p)) {
            pending_space = len > 0;
            continue;
        }
        size_t need = pending_space ? 2 : 1;
        if (len + need > limit)
            break;
        if (pending_space)
            out[len++] = ' ';
        pending_space = false;
        out[len++] = (char)*p;
    }
    /* Do not leave half a UTF-8 character at the cut: drop trailing
     * continuation bytes and a lead byte whose sequence is incomplete. */
    size_t k = len;
    while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80)
        k--;
    if (k > 0 && ((unsigned char)out[k - 1] & 0x80)) {
        unsigned char lead = (unsigned char)out[k - 1];
        size_t want = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 1;
        if (len - (k - 1) < want)
            len = k - 1;
    }
    while (len > 0 && out[len - 1] == ' ')
        len--;
    out[len] = '\0';
    return len;
}

/* The value of the first "<name> : value" line in cpuinfo, for the first
 * name that has one (x86 "model name"; others name the model otherwise). */
static bool cpu_model(FILE *f, char *model, size_t n)
{
    static const char *const names[] = {"model name", "Processor", "cpu model", "cpu"};
    char line[1024];
    char found[sizeof names / sizeof names[0]][256];
    bool have[sizeof names / sizeof names[0]] = {false};
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        size_t klen = (size_t)(colon - line);
        while (klen > 0 && is_ws((unsigned char)line[klen - 1]))
            klen--;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (have[i] || klen != strlen(names[i]) || strncmp(line, names[i], klen) != 0)
                continue;
            if (mo_collapse_ws(colon + 1, found[i], sizeof found[i], sizeof found[i] - 1) > 0)
                have[i] = true;
        }
        if (have[0])
            break;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (have[i]) {
            snprintf(model, n, "%s", found[i]);
            return true;
        }
    return false;
}

int mo_machine_key_from(const char *cpuinfo_path, long ncpu, char *buf, size_t n)
{
    char model[256] = "";
    bool ok = false;
    FILE *f = cpuinfo_path ? fopen(cpuinfo_path, "r") : NULL;
    if (f) {
        ok = cpu_model(f, model, sizeof model);
        fclose(f);
    }
    snprintf(buf, n, "cpu=%s;ncpu=%ld", ok ? model : "unknown", ncpu);
    return ok ? 0 : -1;
}

int mo_machine_key(char *buf, size_t n)
{
    return mo_machine_key_from("/proc/cpuinfo", sysconf(_SC_NPROCESSORS_ONLN), buf, n);
}

void mo_toolchain_key(const char *library_version, char *buf, size_t n)
{
    mo_collapse_ws(library_version ? library_version : "", buf, n, MO_TOOLCHAIN_KEY_MAX);
}

void mo_fingerprints_collect(mo_fingerprints *fp, const char *library_version)
{
    mo_machine_key(fp->machine_key, sizeof fp->machine_key);
    mo_toolchain_key(library_version, fp->toolchain_key, sizeof fp->toolchain_key);
    mo_fingerprint_hex(fp->machine_key, fp->machine_fp);
    mo_fingerprint_hex(fp->toolchain_key, fp->toolchain_fp);
}

void mo_json_fingerprints(mo_json *w, const mo_fingerprints *fp)
{
    mo_json_kv_string(w, "machine_key", fp->machine_key);
    mo_json_kv_string(w, "machine_fp", fp->machine_fp);
    mo_json_kv_string(w, "toolchain_key", fp->toolchain_key);
    mo_json_kv_string(w, "toolchain_fp", fp->toolchain_fp);
}
