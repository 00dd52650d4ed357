/* bench_util.c - MPI plumbing shared by the benchmarks; see bench_util.h. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "bench_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int mo_bench_finish(int rank, const char *program, int status, const char *msg)
{
    if (msg && rank == 0) {
        fprintf(stderr, "mo_%s: error: %s\n", program, msg);
        fflush(stderr);
    }
    MPI_Finalize();
    return status;
}

/* While rank 0 calibrates the work loop, while one pair is measured and
 * another waits for its turn, or while ranks >= 2 idle, a peer polling in a
 * blocking call would take CPU time from the measured rank (on a machine
 * with few cores that visibly slows the work loop). */
void mo_quiet_wait(MPI_Request *req)
{
    int done = 0;
    struct timespec nap = {0, 1000000};
    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&nap, NULL);
    }
}

void mo_quiet_barrier(MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    mo_quiet_wait(&req);
}

/* A cpu_binding entry naming exactly one CPU ("3", not "0-3", "0,2" or
 * "unknown"). */
static bool single_cpu(const char *list)
{
    return list && *list && !strpbrk(list, ",-") && strcmp(list, "unknown") != 0;
}

/* Unbound ranks may be moved between CPUs or share one for a while; on
 * small machines that shows up as bimodal loop and round-trip times. Say so
 * in the result rather than leave it to be guessed from the samples. */
void mo_warn_if_unbound(mo_result *doc, const mo_provenance *p, int rank_a, int rank_b)
{
    if (!p->cpu_binding || rank_a < 0 || rank_b < 0 || rank_a >= p->ranks || rank_b >= p->ranks)
        return;
    const char *a = p->cpu_binding[rank_a], *b = p->cpu_binding[rank_b];
    if (single_cpu(a) && single_cpu(b) && strcmp(a, b) != 0)
        return;
    mo_result_warn(doc, "ranks %d and %d are not each bound to one distinct CPU (cpu_binding '%s', '%s'): "
                        "the OS may move or co-schedule them, which makes timings noisy; bind them "
                        "(e.g. mpiexec -bind-to core)", rank_a, rank_b, a ? a : "?", b ? b : "?");
}
