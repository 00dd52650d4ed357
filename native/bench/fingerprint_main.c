/* fingerprint_main.c - mo_fingerprint: prints the machine and toolchain
 * keys and fingerprints of this machine and of the MPI library it is linked
 * with, as one JSON object on stdout:
 *   {"machine_key", "machine_fp", "toolchain_key", "toolchain_fp"}
 * The Python side uses it to find the fitting transfer-time table before it
 * launches anything. MPI_Get_library_version may be called before MPI_Init
 * (MPI-3), so this runs as a plain program, without a launcher. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "fingerprint.h"
#include "json.h"

int main(int argc, char **argv)
{
    if (argc > 1) {
        FILE *f = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ? stdout : stderr;
        fputs("usage: mo_fingerprint\n"
              "prints {\"machine_key\", \"machine_fp\", \"toolchain_key\", \"toolchain_fp\"} as JSON\n",
              f);
        if (f == stderr)
            fprintf(stderr, "mo_fingerprint: error: unexpected argument '%s'\n", argv[1]);
        return f == stdout ? 0 : 2;
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS) {
        fprintf(stderr, "mo_fingerprint: error: MPI_Get_library_version failed\n");
        return 1;
    }
    lib[len >= 0 && len <= MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING] = '\0';

    mo_fingerprints fp;
    mo_fingerprints_collect(&fp, lib);

    mo_json w;
    mo_json_init(&w, stdout);
    mo_json_begin_object(&w);
    mo_json_fingerprints(&w, &fp);
    mo_json_end_object(&w);
    if (mo_json_finish(&w) != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "mo_fingerprint: error: cannot write to stdout\n");
        return 1;
    }
    return 0;
}
