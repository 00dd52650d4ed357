/* known_answer.c - programs whose waiting and overlap are known by
 * construction, for the two-sided analysis (tests/test_known_answer.py;
 * docs/method.md, "Both ends of a message", "Waiting"). 2 ranks; MODE:
 *
 *   late-sender  ITERS times: a barrier; rank 1 computes 5 ms, then sends
 *                4 KiB with MPI_Send; rank 0 posts MPI_Recv at once. Rank 0
 *                waits about 5 ms in each MPI_Recv for a send posted late;
 *                none of it is transfer, none of it overlaps computation.
 *   early-data   ITERS times: a barrier; rank 1 computes 0.5 ms, then sends
 *                4 KiB with MPI_Send (eager: it returns at once); rank 0
 *                computes 5 ms, then calls MPI_Recv. The data moved while
 *                rank 0 computed: only the last copy can be inside MPI_Recv.
 *   idle         rank 0 computes 300 ms; rank 1 waits for it in MPI_Barrier.
 *
 * A third argument gives the message's bytes instead of 4 KiB (at most 4 KiB).
 *
 * Each rank writes what it measured itself (MPI_Wtime around its own calls,
 * which the profiler does not see) as one JSON object to
 * known_answer.rank-<rank>.json in the working directory (a file, not stdout,
 * where a launcher may interleave the ranks' lines): rank 0 its MPI_Recv
 * times, rank 1 its computation and MPI_Send times, in seconds, one per
 * iteration. A test compares the profile with
 * these, so that a busy machine shows up as a disturbed program rather than
 * as a wrong profile. The computation is busy_compute.h's wall-clock loop. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "busy_compute.h"

enum { KA_BYTES = 4096 };
static char ka_buf[KA_BYTES];
/* The message's bytes (the third argument, at most KA_BYTES): an MPI that sends 4 KiB by
 * rendezvous is asked the early-data question at a size it sends eagerly. */
static int ka_bytes = KA_BYTES;

enum { KA_MAX_ITERS = 1000 };

typedef struct ka_series {
    const char *name;
    int n;
    double v[KA_MAX_ITERS];
} ka_series;

static ka_series ka_recv = {.name = "recv_s"}, ka_comp = {.name = "compute_s"},
                 ka_send = {.name = "send_s"};

static void ka_add(ka_series *s, double v)
{
    if (s->n < KA_MAX_ITERS)
        s->v[s->n++] = v;
}

/* {"rank": r, "mode": m, "<name>": [v, ...], ...} into known_answer.rank-<r>.json */
static void ka_print(int rank, const char *mode, ka_series *const *series, int n)
{
    char path[64];
    snprintf(path, sizeof path, "known_answer.rank-%d.json", rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    fprintf(f, "{\"rank\": %d, \"mode\": \"%s\"", rank, mode);
    for (int k = 0; k < n; k++) {
        fprintf(f, ", \"%s\": [", series[k]->name);
        for (int i = 0; i < series[k]->n; i++)
            fprintf(f, "%s%.9f", i ? ", " : "", series[k]->v[i]);
        fprintf(f, "]");
    }
    fprintf(f, "}\n");
    fclose(f);
}

/* Rank 1 computes `before_send` s then sends; rank 0 computes `before_recv` s
 * then receives. */
static void ka_exchange(const char *mode, int rank, int iters, double before_send,
                        double before_recv)
{
    for (int i = 0; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            double t0 = MPI_Wtime();
            compute(before_send);
            double t1 = MPI_Wtime();
            MPI_Send(ka_buf, ka_bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
            ka_add(&ka_comp, t1 - t0);
            ka_add(&ka_send, MPI_Wtime() - t1);
        } else if (rank == 0) {
            compute(before_recv);
            double t0 = MPI_Wtime();
            MPI_Recv(ka_buf, ka_bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ka_add(&ka_recv, MPI_Wtime() - t0);
        }
    }
    if (rank == 0)
        ka_print(rank, mode, (ka_series *[]){&ka_recv}, 1);
    else if (rank == 1)
        ka_print(rank, mode, (ka_series *[]){&ka_comp, &ka_send}, 2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    int iters = argc > 2 ? atoi(argv[2]) : 10;
    ka_bytes = argc > 3 ? atoi(argv[3]) : KA_BYTES;
    int ok = size == 2 && iters > 0 && iters <= KA_MAX_ITERS && ka_bytes >= 0 && ka_bytes <= KA_BYTES;
    if (ok && strcmp(mode, "late-sender") == 0) {
        ka_exchange(mode, rank, iters, 0.005, 0.0);
    } else if (ok && strcmp(mode, "early-data") == 0) {
        ka_exchange(mode, rank, iters, 0.0005, 0.005);
    } else if (ok && strcmp(mode, "idle") == 0) {
        ka_series t = {.name = rank == 0 ? "compute_s" : "barrier_s"};
        double t0 = MPI_Wtime();
        if (rank == 0)
            compute(0.3);
        MPI_Barrier(MPI_COMM_WORLD);
        ka_add(&t, MPI_Wtime() - t0);
        ka_print(rank, mode, (ka_series *[]){&t}, 1);
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 known_answer late-sender|early-data|idle "
                            "[iterations [bytes]]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Finalize();
    return 0;
}
