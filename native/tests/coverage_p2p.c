/* coverage_p2p.c - every point-to-point completion path once per region, for
 * the profiler's coverage test (tests/test_profile_completion.py), which
 * checks the profile against counts worked out by hand from this file.
 *
 * Both ranks run the same code against each other, so both profiles must be
 * the same. Each path runs in its own region (include/mpi_overlap.h), `reps`
 * times; the non-blocking ones compute `work_ms` of calibrated work (mo_work)
 * between post and completion, far longer than the transfer. Every message
 * sent in a region is received in it, so that no region's receive (above all
 * the MPI_ANY_SOURCE/MPI_ANY_TAG one) can match another's message. No
 * collective is used: whether collectives are transfers is not this test's
 * business. Paths the MPI's header lacks (MPI-4 Isendrecv and partitioned,
 * MPI-4.1 Request_get_status_all/any/some, the large-count _c forms) are left
 * out, with their regions.
 *
 * Usage: coverage_p2p [bytes (multiple of 4, default 65536)] [reps (2)]
 *                     [work_ms (5)] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_overlap.h"
#include "work.h"

/* MPICH 4.0 declares status arrays as MPI_Status[] and MPI_STATUSES_IGNORE as
 * (MPI_Status *)1, which GCC 12 takes for a region of size 0. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define COV_MPI4 1 /* Isendrecv, partitioned communication (Open MPI 5 says MPI 3.1) */
#endif
#if MPI_VERSION >= 4
#define COV_LARGE_COUNT 1 /* MPI_*_c (not in Open MPI 5) */
#endif
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define COV_MPI41 1 /* Request_get_status_all/any/some */
#endif

enum { ANY_BYTES = 1000, ANY_CAPACITY = 4000, PARTS = 4 };

/* Tags: one per message of a region; TAG_NEVER is never sent. */
enum { T_WAIT = 10, T_TEST, T_WAITANY, T_TESTANY, T_WAITSOME, T_TESTSOME, T_WAITALL,
       T_TESTALL, T_ANY, T_PERS, T_PART, T_FREE, T_ZERO, T_ZERO2, T_ZERO3, T_SR, T_SRR,
       T_ISR, T_ISRR, T_M1, T_M2, T_GS, T_GSA, T_NW, T_LC1, T_LC2, T_LC3, T_LC4, T_TRUNC,
       T_NEVER = 999 };
/* The truncation path: a small (eager) message, so that the send completes
 * even though the receive fails (Open MPI's rendezvous sender waits forever
 * for a receiver that failed). Both sizes are in the any_source bin. */
enum { TRUNC_CAPACITY = 600, TRUNC_SENT = 616 };

static int rank, peer, nbytes;
static double work_ms;
static mo_work_calib calib;
static char *sbuf, *rbuf, *rbuf2, *fbuf;

static void fail(const char *what)
{
    fprintf(stderr, "coverage_p2p: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(int ok, const char *what)
{
    if (!ok)
        fail(what);
}

/* Calibrated computation with no MPI call inside. */
static void work(double ms)
{
    mo_work((uint64_t)(calib.units_per_us * 1000.0 * ms) + 1);
}

/* A send to and a receive from the peer, posted; reqs[0] = send, [1] = recv. */
static void post_pair(MPI_Request reqs[2], int tag)
{
    MPI_Isend(sbuf, nbytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(rbuf, nbytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &reqs[1]);
}

static void received(const MPI_Status *st, int want, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    check(n == want && st->MPI_SOURCE == peer, what);
}

/* ---- Wait/Test and their any/some/all forms ---------------------------- */

static void path_wait(void)
{
    MPI_Request r[2];
    MPI_Status st;
    post_pair(r, T_WAIT);
    work(work_ms);
    MPI_Wait(&r[0], &st);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
}

/* A completion call of MPI_Test's form: MPI_Test, or get_status below. */
typedef int (*poll_fn)(MPI_Request *, int *, MPI_Status *);

/* Polls a post_pair with `poll` until the receive is done (its size checked,
 * `what` naming the failure), then the send. */
static void poll_pair(MPI_Request r[2], poll_fn poll, const char *what)
{
    MPI_Status st;
    int flag = 0;
    while (!flag)
        poll(&r[1], &flag, &st);
    received(&st, nbytes, what);
    for (flag = 0; !flag;)
        poll(&r[0], &flag, MPI_STATUS_IGNORE);
}

static void path_test(void)
{
    MPI_Request r[2];
    post_pair(r, T_TEST);
    work(work_ms);
    poll_pair(r, MPI_Test, "Test: received size");
}

static void path_waitany(void)
{
    MPI_Request r[2];
    MPI_Status st;
    int idx;
    post_pair(r, T_WAITANY);
    work(work_ms);
    MPI_Waitany(2, r, &idx, &st);
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
    MPI_Waitany(2, r, &idx, &st); /* both null now */
    check(idx == MPI_UNDEFINED, "Waitany on null requests: index MPI_UNDEFINED");
}

static void path_testany(void)
{
    MPI_Request r[2];
    MPI_Status st;
    int idx, flag, done = 0;
    post_pair(r, T_TESTANY);
    work(work_ms);
    while (done < 2) {
        MPI_Testany(2, r, &idx, &flag, &st);
        done += flag && idx != MPI_UNDEFINED;
    }
    MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE);
    check(flag && idx == MPI_UNDEFINED, "Testany on null requests: flag, MPI_UNDEFINED");
}

static void path_waitsome(void)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int out, idx[2], done = 0;
    post_pair(r, T_WAITSOME);
    work(work_ms);
    while (done < 2) {
        MPI_Waitsome(2, r, &out, idx, st);
        done += out;
    }
    MPI_Waitsome(2, r, &out, idx, st);
    check(out == MPI_UNDEFINED, "Waitsome on null requests: outcount MPI_UNDEFINED");
}

static void path_testsome(void)
{
    MPI_Request r[2];
    int out = 0, idx[2];
    post_pair(r, T_TESTSOME);
    work(work_ms);
    while (out != MPI_UNDEFINED)
        MPI_Testsome(2, r, &out, idx, MPI_STATUSES_IGNORE);
}

static void path_waitall(void)
{
    MPI_Request r[2];
    post_pair(r, T_WAITALL);
    work(work_ms);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
}

static void path_testall(void)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int flag = 0;
    post_pair(r, T_TESTALL);
    work(work_ms);
    while (!flag)
        MPI_Testall(2, r, &flag, st);
    received(&st[1], nbytes, "Testall: received size");
}

/* A receive from any source with any tag, posted for more than arrives, its
 * status ignored: the size must come from the profiler's own status. */
static void path_any_source(void)
{
    MPI_Request r[2];
    MPI_Irecv(rbuf, ANY_CAPACITY, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(sbuf, ANY_BYTES, MPI_BYTE, peer, T_ANY, MPI_COMM_WORLD, &r[0]);
    work(work_ms);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
}

/* ---- persistent and partitioned ------------------------------------------ */

static void path_persistent(void)
{
    MPI_Request r[2];
    MPI_Send_init(sbuf, nbytes, MPI_BYTE, peer, T_PERS, MPI_COMM_WORLD, &r[0]);
    MPI_Recv_init(rbuf, nbytes, MPI_BYTE, peer, T_PERS, MPI_COMM_WORLD, &r[1]);
    MPI_Start(&r[0]);
    MPI_Start(&r[1]);
    work(work_ms);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Startall(2, r);
    work(work_ms);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE); /* inactive: completes at once, moves nothing */
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
}

#ifdef COV_MPI4
static void path_partitioned(void)
{
    MPI_Request r[2];
    MPI_Count part = nbytes / PARTS;
    int flag = 0, list[2] = {0, 1};
    MPI_Psend_init(sbuf, PARTS, part, MPI_BYTE, peer, T_PART, MPI_COMM_WORLD, MPI_INFO_NULL,
                   &r[0]);
    MPI_Precv_init(rbuf, PARTS, part, MPI_BYTE, peer, T_PART, MPI_COMM_WORLD, MPI_INFO_NULL,
                   &r[1]);
    MPI_Startall(2, r);
    for (int i = 0; i < PARTS; i++)
        MPI_Pready(i, r[0]);
    work(work_ms);
    while (!flag)
        MPI_Parrived(r[1], PARTS - 1, &flag);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MPI_Start(&r[0]);
    MPI_Start(&r[1]);
    MPI_Pready_list(2, list, r[0]);
    MPI_Pready_range(2, PARTS - 1, r[0]);
    work(work_ms);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
}
#endif

/* ---- requests freed, cancelled, or on MPI_PROC_NULL ---------------------- */

/* A send freed while active (its end is never seen), received by a blocking
 * receive. fbuf is only ever sent from, so the send may finish any time. */
static void path_free_active(void)
{
    MPI_Request r;
    MPI_Isend(fbuf, nbytes, MPI_BYTE, peer, T_FREE, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    check(r == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
    MPI_Recv(rbuf, nbytes, MPI_BYTE, peer, T_FREE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Receives that nothing matches, cancelled: completed by Wait, then by Test. */
static void path_cancel(void)
{
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MPI_Irecv(rbuf, nbytes, MPI_BYTE, peer, T_NEVER, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    check(flag, "cancelled receive (Wait)");
    MPI_Irecv(rbuf, nbytes, MPI_BYTE, peer, T_NEVER, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    for (flag = 0; !flag;)
        MPI_Test(&r, &flag, &st);
    MPI_Test_cancelled(&st, &flag);
    check(flag, "cancelled receive (Test)");
}

static void path_proc_null(void)
{
    MPI_Request r[2];
    MPI_Status st;
    MPI_Message msg;
    int flag = 0;
    MPI_Isend(sbuf, nbytes, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(rbuf, nbytes, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MPI_Send(sbuf, nbytes, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Recv(rbuf, nbytes, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    check(st.MPI_SOURCE == MPI_PROC_NULL, "Recv from MPI_PROC_NULL");
    MPI_Sendrecv(sbuf, nbytes, MPI_BYTE, MPI_PROC_NULL, 0, rbuf, nbytes, MPI_BYTE, MPI_PROC_NULL,
                 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    check(msg == MPI_MESSAGE_NO_PROC, "Mprobe of MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC");
    MPI_Mrecv(rbuf, nbytes, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
    check(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe of MPI_PROC_NULL");
    MPI_Imrecv(rbuf, nbytes, MPI_BYTE, &msg, &r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
#ifdef COV_MPI4
    MPI_Isendrecv(sbuf, nbytes, MPI_BYTE, MPI_PROC_NULL, 0, rbuf, nbytes, MPI_BYTE, MPI_PROC_NULL,
                  0, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
#endif
}

/* Zero-byte messages, non-blocking then blocking (rank 0 sends first). */
/* Errors returned instead of fatal, and a receive too small for its message:
 * Waitall returns MPI_ERR_IN_STATUS; the receive completed in error
 * (MPI_ERR_TRUNCATE), the send completed or, still pending, is waited for. */
static void path_err_in_status(void)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int cls = -1, rcls = -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Irecv(rbuf, TRUNC_CAPACITY, MPI_BYTE, peer, T_TRUNC, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(sbuf, TRUNC_SENT, MPI_BYTE, peer, T_TRUNC, MPI_COMM_WORLD, &r[0]);
    work(work_ms);
    int rc = MPI_Waitall(2, r, st);
    MPI_Error_class(rc, &rcls);
    MPI_Error_class(st[1].MPI_ERROR, &cls);
    check(rcls == MPI_ERR_IN_STATUS && cls == MPI_ERR_TRUNCATE,
          "Waitall of a truncated receive: MPI_ERR_IN_STATUS, MPI_ERR_TRUNCATE");
    /* Open MPI returns at the first failure: the send may still be pending */
    MPI_Error_class(st[0].MPI_ERROR, &cls);
    if (cls == MPI_ERR_PENDING)
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void path_zero_bytes(void)
{
    MPI_Request r[2];
    MPI_Isend(sbuf, 0, MPI_BYTE, peer, T_ZERO, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(rbuf, 0, MPI_BYTE, peer, T_ZERO, MPI_COMM_WORLD, &r[1]);
    work(work_ms);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    for (int turn = 0; turn < 2; turn++) {
        if (turn == rank)
            MPI_Send(sbuf, 0, MPI_BYTE, peer, T_ZERO2 + turn, MPI_COMM_WORLD);
        else
            MPI_Recv(rbuf, 0, MPI_BYTE, peer, T_ZERO2 + turn, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* ---- two transfers in one call or on one request ------------------------- */

static void path_sendrecv(void)
{
    MPI_Sendrecv(sbuf, nbytes, MPI_BYTE, peer, T_SR, rbuf, nbytes, MPI_BYTE, peer, T_SR,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv_replace(rbuf, nbytes, MPI_BYTE, peer, T_SRR, peer, T_SRR, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
}

#ifdef COV_MPI4
static void path_isendrecv(void)
{
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MPI_Isendrecv(sbuf, nbytes, MPI_BYTE, peer, T_ISR, rbuf, nbytes, MPI_BYTE, peer, T_ISR,
                  MPI_COMM_WORLD, &r);
    work(work_ms);
    MPI_Wait(&r, &st);
    received(&st, nbytes, "Isendrecv: received size");
    MPI_Isendrecv_replace(rbuf, nbytes, MPI_BYTE, peer, T_ISRR, peer, T_ISRR, MPI_COMM_WORLD, &r);
    work(work_ms);
    while (!flag)
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
}
#endif

/* ---- matched probes --------------------------------------------------------- */

/* An Isend to the peer (its request in *s), and the peer's message of that
 * tag matched here with Mprobe (its status in *st, or MPI_STATUS_IGNORE). */
static MPI_Message isend_mprobe(int tag, MPI_Request *s, MPI_Status *st)
{
    MPI_Message msg;
    MPI_Isend(sbuf, nbytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, s);
    MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &msg, st);
    return msg;
}

/* The same, matched with Improbe, called until the message is there. */
static MPI_Message isend_improbe(int tag, MPI_Request *s)
{
    MPI_Message msg;
    int flag = 0;
    MPI_Isend(sbuf, nbytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, s);
    while (!flag)
        MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
    return msg;
}

static void path_mprobe(void)
{
    MPI_Request s[2], r;
    MPI_Status st;
    MPI_Message msg = isend_mprobe(T_M1, &s[0], &st);
    received(&st, nbytes, "Mprobe: probed size");
    MPI_Mrecv(rbuf, nbytes, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    msg = isend_improbe(T_M2, &s[1]);
    MPI_Imrecv(rbuf2, nbytes, MPI_BYTE, &msg, &r);
    work(work_ms);
    MPI_Wait(&r, &st);
    received(&st, nbytes, "Imrecv: received size");
    MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
}

#ifdef COV_LARGE_COUNT
/* The large-count forms of the hand-written wrappers: Mrecv_c and Imrecv_c of
 * probed messages, Isendrecv_c and Isendrecv_replace_c. */
static void path_large_count(void)
{
    MPI_Request s[2], r;
    MPI_Count n = nbytes;
    MPI_Message msg = isend_mprobe(T_LC1, &s[0], MPI_STATUS_IGNORE);
    MPI_Mrecv_c(rbuf, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    msg = isend_improbe(T_LC2, &s[1]);
    MPI_Imrecv_c(rbuf2, n, MPI_BYTE, &msg, &r);
    work(work_ms);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
    MPI_Isendrecv_c(sbuf, n, MPI_BYTE, peer, T_LC3, rbuf, n, MPI_BYTE, peer, T_LC3,
                    MPI_COMM_WORLD, &r);
    work(work_ms);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Isendrecv_replace_c(rbuf, n, MPI_BYTE, peer, T_LC4, peer, T_LC4, MPI_COMM_WORLD, &r);
    work(work_ms);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}
#endif

/* ---- requests the profiler did not create ----------------------------------- */

static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    /* PMPI_: these would be MPI calls nested in the completing call (counted
     * in nested_calls), which is not what this path checks. */
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* Generalized requests, completed by the program: through Wait, then Test. */
static void path_grequest(void)
{
    MPI_Request g;
    int flag = 0;
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &g);
    MPI_Grequest_complete(g);
    MPI_Wait(&g, MPI_STATUS_IGNORE);
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &g);
    MPI_Test(&g, &flag, MPI_STATUS_IGNORE);
    check(!flag, "generalized request incomplete before Grequest_complete");
    MPI_Grequest_complete(g);
    while (!flag)
        MPI_Test(&g, &flag, MPI_STATUS_IGNORE);
}

/* A receive posted behind the profiler's back (PMPI_Irecv): its completion is
 * all the profiler sees. */
static void path_nonwrapped(void)
{
    MPI_Request r;
    PMPI_Irecv(rbuf, nbytes, MPI_BYTE, peer, T_NW, MPI_COMM_WORLD, &r);
    MPI_Send(sbuf, nbytes, MPI_BYTE, peer, T_NW, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* ---- Request_get_status: complete, not freed --------------------------------- */

/* MPI_Request_get_status in MPI_Test's form, for poll_pair. */
static int get_status(MPI_Request *r, int *flag, MPI_Status *st)
{
    return MPI_Request_get_status(*r, flag, st);
}

static void path_get_status(void)
{
    MPI_Request r[2];
    int flag = 0;
    post_pair(r, T_GS);
    work(work_ms);
    poll_pair(r, get_status, "Request_get_status: received size");
    MPI_Request_get_status(r[1], &flag, MPI_STATUS_IGNORE); /* again: closes nothing */
    check(flag, "Request_get_status again");
    work(work_ms);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
}

#ifdef COV_MPI41
static void path_get_status_all(void)
{
    MPI_Request r[2];
    MPI_Status st;
    int flag = 0, idx, out, idxs[2];
    post_pair(r, T_GSA);
    work(work_ms);
    while (!flag)
        MPI_Request_get_status_all(2, r, &flag, MPI_STATUSES_IGNORE);
    MPI_Request_get_status_any(2, r, &idx, &flag, &st);
    check(flag && idx != MPI_UNDEFINED, "Request_get_status_any after _all");
    MPI_Request_get_status_some(2, r, &out, idxs, MPI_STATUSES_IGNORE);
    check(out == 2, "Request_get_status_some after _all");
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
}
#endif

typedef struct path {
    const char *region;
    void (*run)(void);
} path;

static const path paths[] = {
    {"wait", path_wait},
    {"test", path_test},
    {"waitany", path_waitany},
    {"testany", path_testany},
    {"waitsome", path_waitsome},
    {"testsome", path_testsome},
    {"waitall", path_waitall},
    {"testall", path_testall},
    {"any_source", path_any_source},
    {"persistent", path_persistent},
#ifdef COV_MPI4
    {"partitioned", path_partitioned},
#endif
    {"free_active", path_free_active},
    {"cancel", path_cancel},
    {"proc_null", path_proc_null},
    {"err_in_status", path_err_in_status},
    {"zero_bytes", path_zero_bytes},
    {"sendrecv", path_sendrecv},
#ifdef COV_MPI4
    {"isendrecv", path_isendrecv},
#endif
    {"mprobe", path_mprobe},
#ifdef COV_LARGE_COUNT
    {"large_count", path_large_count},
#endif
    {"grequest", path_grequest},
    {"nonwrapped", path_nonwrapped},
    {"get_status", path_get_status},
#ifdef COV_MPI41
    {"get_status_all", path_get_status_all},
#endif
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nbytes = argc > 1 ? atoi(argv[1]) : 1 << 16;
    int reps = argc > 2 ? atoi(argv[2]) : 2;
    work_ms = argc > 3 ? atof(argv[3]) : 5.0;
    if (size != 2 || nbytes < ANY_CAPACITY || nbytes % PARTS != 0 || reps < 1 ||
        !(work_ms > 0)) {
        if (rank == 0)
            fprintf(stderr, "coverage_p2p: needs 2 ranks, bytes >= %d and a multiple of %d, "
                            "reps >= 1, work_ms > 0\n", ANY_CAPACITY, PARTS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - rank;
    sbuf = calloc((size_t)nbytes, 1);
    rbuf = calloc((size_t)nbytes, 1);
    rbuf2 = calloc((size_t)nbytes, 1);
    fbuf = calloc((size_t)nbytes, 1);
    if (!sbuf || !rbuf || !rbuf2 || !fbuf)
        fail("out of memory");
    if (mo_work_calibrate(&calib, 1.0, 5) != 0)
        fail("work calibration failed");
    for (int rep = 0; rep < reps; rep++) {
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            MPI_OVERLAP_REGION_BEGIN(paths[i].region);
            paths[i].run();
            MPI_OVERLAP_REGION_END(paths[i].region);
        }
    }
    if (rank == 0) {
        printf("coverage_p2p: %d reps of", reps);
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
            printf(" %s", paths[i].region);
        printf("\n");
    }
    free(sbuf);
    free(rbuf);
    free(rbuf2);
    free(fbuf);
    MPI_Finalize();
    return 0;
}
