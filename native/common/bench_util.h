/* bench_util.h - the MPI plumbing every benchmark's main() shares: leaving
 * with one error line and no MPI_Abort, waiting without spinning a core,
 * and warning when the measuring ranks are not pinned. */
#ifndef MO_BENCH_UTIL_H
#define MO_BENCH_UTIL_H

#include <mpi.h>

#include "provenance.h"
#include "result.h"

/* Every rank leaves through here: if msg is not NULL, rank 0 prints
 * "mo_<program>: error: <msg>" (one line on stderr); then MPI_Finalize.
 * program is the name without "mo_" (as given to mo_options_parse).
 * Returns status, for `return mo_bench_finish(...)` from main(). */
int mo_bench_finish(int rank, const char *program, int status, const char *msg);

/* Completes a request without spinning a core: polls with MPI_Test and
 * sleeps 1 ms between polls. */
void mo_quiet_wait(MPI_Request *req);

/* A barrier over comm that waits like mo_quiet_wait(). */
void mo_quiet_barrier(MPI_Comm comm);

/* On rank 0 (the only one holding p->cpu_binding): adds a warning to doc
 * unless rank_a and rank_b are each bound to one CPU, and not the same one.
 * Does nothing without bindings or if either rank is not in p. */
void mo_warn_if_unbound(mo_result *doc, const mo_provenance *p, int rank_a, int rank_b);

#endif
