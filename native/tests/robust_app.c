/* robust_app.c - an MPI program (exactly 2 ranks) for the profiler's
 * robustness tests: what a rank leaves behind when it is killed while idle,
 * when it calls MPI_Abort, when its region names are not UTF-8, and the
 * snapshot thread working beside busy threads. Modes:
 *   idle SECONDS        EXCHANGES rounds of Irecv + Isend + Waitall (2
 *                       transfers each, region "exchange"); then rank 1 sleeps
 *                       SECONDS without an MPI call; MPI_Barrier; MPI_Finalize
 *                       (tests/test_profile_robust.py SIGKILLs rank 1 asleep)
 *   abort CODE SECONDS  the same exchange; rank 0 sleeps SECONDS, then
 *                       MPI_Abort(MPI_COMM_WORLD, CODE); rank 1 waits in
 *                       MPI_Barrier
 *   names               one MPI_Barrier inside each region of names() (bytes
 *                       that are not UTF-8, control characters, a newline, a
 *                       name longer than the profiler keeps)
 *   churn SECONDS       MPI_THREAD_MULTIPLE: NTHREADS threads per rank
 *                       exchange with their peer thread for about SECONDS
 *                       (rank 0's threads decide when to stop and tell their
 *                       peers in the data), so queues fill and are processed
 *                       while the snapshot thread copies them; then each rank
 *                       checks that its profile file (MPI_OVERLAP_OUTDIR) is a
 *                       snapshot written meanwhile (status "running"). The
 *                       ctest runs it linked to libmpi_overlap, also under
 *                       ThreadSanitizer (native/tests/CMakeLists.txt).
 *   pause               the exchange 4 times: running, paused by
 *                       MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE), resumed by
 *                       MPI_Pcontrol(1), paused again and MPI_Finalize while
 *                       paused (tests/test_profile_robust.py)
 *   pause-threads       the same under MPI_THREAD_MULTIPLE, where the profiler
 *                       refuses to pause and takes the pauses as MPI_Pcontrol(0)
 * Exit status 0, or 1 with a line on stderr (bad usage, bad data, no
 * snapshot). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_overlap.h"

enum { EXCHANGES = 10, BYTES = 1024, NTHREADS = 4 };

static int g_rank;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleeps the whole time, signals or not; no MPI call. */
static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        continue;
}

static int fail(const char *what)
{
    fprintf(stderr, "robust_app: rank %d: %s\n", g_rank, what);
    return 1;
}

static void exchange(void)
{
    static char sbuf[BYTES], rbuf[BYTES];
    int peer = 1 - g_rank;
    MPI_OVERLAP_REGION_BEGIN("exchange");
    for (int i = 0; i < EXCHANGES; i++) {
        MPI_Request req[2];
        MPI_Irecv(rbuf, BYTES, MPI_CHAR, peer, i, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(sbuf, BYTES, MPI_CHAR, peer, i, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    MPI_OVERLAP_REGION_END("exchange");
}

/* tests/test_profile_robust.py expects each name as Python's
 * bytes.decode("utf-8", "replace") gives it (the last cut at 63 bytes, on a
 * character boundary). */
static const char *const names[] = {
    "caf\xe9",                 /* Latin-1 */
    "esc\x1b[31mred\x07",      /* a terminal colour and a bell */
    "two\nlines",
    "caf\xc3\xa9",             /* valid UTF-8 */
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", /* 35 x e-acute: 70 bytes */
};

static void regions_with_odd_names(void)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        MPI_OVERLAP_REGION_BEGIN(names[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OVERLAP_REGION_END(names[i]);
    }
}

/* ---- churn ------------------------------------------------------------------ */

static double g_churn_s;
static int g_churn_errors;

static void *churn_thread(void *arg)
{
    int t = (int)(size_t)arg, peer = 1 - g_rank;
    char sbuf[BYTES] = {0}, rbuf[BYTES];
    double end = now_s() + g_churn_s;
    for (int go = 1, i = 0; go; i++) {
        if (g_rank == 0)
            sbuf[0] = (char)(now_s() < end); /* 0: this is the last round */
        sbuf[1] = (char)(i & 0x7f);
        MPI_Request req[2];
        MPI_Irecv(rbuf, BYTES, MPI_CHAR, peer, t, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(sbuf, BYTES, MPI_CHAR, peer, t, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        if (rbuf[1] != (char)(i & 0x7f))
            __atomic_add_fetch(&g_churn_errors, 1, __ATOMIC_RELAXED);
        go = g_rank == 0 ? sbuf[0] : rbuf[0];
    }
    return NULL;
}

/* Whether this rank's profile file is a snapshot (status "running"). */
static int snapshot_seen(const char *path)
{
    char doc[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    return strstr(doc, "\"status\": \"running\"") != NULL;
}

static int churn(void)
{
    /* Not one a killed earlier run left: only a snapshot of this run counts. */
    const char *dir = getenv("MPI_OVERLAP_OUTDIR");
    char path[1100];
    snprintf(path, sizeof path, "%s/profile.rank-%d.json", dir && *dir ? dir : ".", g_rank);
    remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        if (pthread_create(&th[t], NULL, churn_thread, (void *)(size_t)t) != 0)
            return fail("cannot start a thread");
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    if (__atomic_load_n(&g_churn_errors, __ATOMIC_RELAXED))
        return fail("received data out of order");
    if (!snapshot_seen(path))
        return fail("no snapshot (status \"running\") was written while the threads ran");
    return 0;
}

/* ---- pause ------------------------------------------------------------------ */

static void exchanges_paused_and_not(void)
{
    exchange();
    MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE);
    exchange();
    MPI_Pcontrol(1);
    exchange();
    MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE);
    exchange(); /* and MPI_Finalize while paused */
}

/* ---- main ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int provided = MPI_THREAD_SINGLE;
    int want = strcmp(mode, "churn") == 0 || strcmp(mode, "pause-threads") == 0 ? MPI_THREAD_MULTIPLE
                                                                                : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, want, &provided);
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = 0;
    if (size != 2) {
        rc = fail("needs exactly 2 ranks");
    } else if (strcmp(mode, "idle") == 0 && argc == 3) {
        exchange();
        if (g_rank == 1)
            sleep_s(atof(argv[2]));
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "abort") == 0 && argc == 4) {
        exchange();
        if (g_rank == 0) {
            sleep_s(atof(argv[3]));
            MPI_Abort(MPI_COMM_WORLD, atoi(argv[2]));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "names") == 0 && argc == 2) {
        regions_with_odd_names();
    } else if (strcmp(mode, "churn") == 0 && argc == 3) {
        g_churn_s = atof(argv[2]);
        rc = provided == MPI_THREAD_MULTIPLE ? churn() : fail("no MPI_THREAD_MULTIPLE");
    } else if (strcmp(mode, "pause") == 0 && argc == 2) {
        exchanges_paused_and_not();
    } else if (strcmp(mode, "pause-threads") == 0 && argc == 2) {
        if (provided == MPI_THREAD_MULTIPLE)
            exchanges_paused_and_not();
        else
            rc = fail("no MPI_THREAD_MULTIPLE");
    } else {
        rc = fail("usage: robust_app idle SECONDS | abort CODE SECONDS | names | churn SECONDS | "
                  "pause | pause-threads");
    }
    MPI_Finalize();
    return rc;
}
