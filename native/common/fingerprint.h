/* fingerprint.h - what a transfer-time table was measured on: a machine
 * key (CPU model and count) and a toolchain key (the MPI library version
 * string), each hashed to a 16-hex-digit FNV-1a 64 fingerprint. A table is
 * only valid for the machine and MPI library it was measured with.
 *
 * No MPI here: the benchmarks pass the string of MPI_Get_library_version,
 * the profiler library the one of PMPI_Get_library_version, and both must
 * derive the same keys from it. */
#ifndef MO_FINGERPRINT_H
#define MO_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* Longest toolchain key in characters (bytes), after whitespace collapsing. */
enum { MO_TOOLCHAIN_KEY_MAX = 200 };
/* Buffer sizes that always suffice. */
enum { MO_FP_HEX_LEN = 17, MO_MACHINE_KEY_LEN = 320, MO_TOOLCHAIN_KEY_LEN = MO_TOOLCHAIN_KEY_MAX + 1 };

/* FNV-1a, 64 bit: the offset basis to start from, then n bytes at p hashed
 * into h (continuing a hash over several pieces). */
#define MO_FNV1A64_OFFSET UINT64_C(0xcbf29ce484222325)
uint64_t mo_fnv1a64_update(uint64_t h, const void *p, size_t n);

/* FNV-1a, 64 bit, over the bytes of s up to its NUL. */
uint64_t mo_fnv1a64(const char *s);

/* The fingerprint of a key: mo_fnv1a64(key) as 16 lower-case hex digits. */
void mo_fingerprint_hex(const char *key, char out[MO_FP_HEX_LEN]);

/* Copies in to out (at most max_len bytes plus NUL, and no more than
 * n - 1) with every run of whitespace collapsed to one space and none at
 * either end. A cut never splits a UTF-8 sequence. Returns strlen(out). */
size_t mo_collapse_ws(const char *in, char *out, size_t n, size_t max_len);

/* "cpu=<model name>;ncpu=<online CPUs>", the model from /proc/cpuinfo with
 * whitespace collapsed; "cpu=unknown;ncpu=N" when it cannot be read.
 * Returns 0, or -1 when the fallback was used (buf is filled either way). */
int mo_machine_key(char *buf, size_t n);

/* The same from a given cpuinfo file and CPU count (for tests). */
int mo_machine_key_from(const char *cpuinfo_path, long ncpu, char *buf, size_t n);

/* The MPI library version string with runs of whitespace collapsed to one
 * space, trimmed, and cut to MO_TOOLCHAIN_KEY_MAX characters. */
void mo_toolchain_key(const char *library_version, char *buf, size_t n);

/* Both keys of this machine and MPI library, and their fingerprints. */
typedef struct mo_fingerprints {
    char machine_key[MO_MACHINE_KEY_LEN], toolchain_key[MO_TOOLCHAIN_KEY_LEN];
    char machine_fp[MO_FP_HEX_LEN], toolchain_fp[MO_FP_HEX_LEN];
} mo_fingerprints;

/* Fills fp: mo_machine_key(), mo_toolchain_key(library_version) and the
 * fingerprints of both. */
void mo_fingerprints_collect(mo_fingerprints *fp, const char *library_version);

/* Writes "machine_key", "machine_fp", "toolchain_key", "toolchain_fp" (in
 * that order) into the object open in w. */
void mo_json_fingerprints(mo_json *w, const mo_fingerprints *fp);

#endif
