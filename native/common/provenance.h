/* provenance.h - where and how a result was produced: MPI library and
 * standard version, hosts and CPU binding of every rank, MPI-related
 * environment, command line, compiler, tool version, runner metadata.
 * Without it, results from different toolchains cannot be told apart. */
#ifndef MO_PROVENANCE_H
#define MO_PROVENANCE_H

#include <mpi.h>
#include <stddef.h>

#include "json.h"
#include "options.h"

typedef struct mo_provenance {
    char date_utc[32];
    char *mpi_library_version;
    char mpi_standard_version[16];
    int ranks;
    char **hosts;        /* per rank (rank 0 only) */
    char **cpu_binding;  /* per rank (rank 0 only) */
    size_t nenv;
    char **env;          /* "NAME=VALUE" of rank 0 */
    int argc;
    char **argv;         /* copy of the command line */
    const char *compiler;
    const mo_options *opts; /* toolchain, launcher, meta */
} mo_provenance;

/* Collective over comm: gathers hosts and bindings to rank 0. Call right
 * after MPI_Init so that date_utc is the start time. Returns 0 or -1. */
int mo_provenance_collect(mo_provenance *p, MPI_Comm comm, int argc, char **argv,
                          const mo_options *opts);

/* Formats a CPU set like "0-3,8": exposed for tests. */
void mo_provenance_format_cpus(const unsigned char *cpus, int ncpus, char *buf, size_t len);

/* Writes the provenance object (value only; the caller writes the key). */
void mo_provenance_write_json(mo_json *w, const mo_provenance *p);

void mo_provenance_free(mo_provenance *p);

#endif
