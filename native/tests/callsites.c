/* callsites.c - a program whose call sites are known by construction, for
 * tests/test_callsites.py (docs/profiler.md, "Call sites"). 2 ranks, each
 * exchanging 1 KiB with the other:
 *
 *   path A  A_ITERS times: MPI_Irecv and MPI_Isend on the lines marked
 *           "site: irecv-a" and "site: isend-a", a little computation, one
 *           MPI_Waitall ("site: waitall-a") for both;
 *   path B  B_ITERS times: the same pair posted from other lines ("irecv-b",
 *           "isend-b"), completed by two MPI_Wait calls ("wait-send-b",
 *           "wait-recv-b");
 *   blocking  SR_ITERS MPI_Sendrecv calls ("sendrecv"): a send and a receive
 *           each, posted and completed in that call;
 *   path C  C_ITERS times: two MPI_Irecv ("irecv-c1", "irecv-c2") and two
 *           MPI_Isend made by one helper ("isend-helper") called from two lines
 *           ("helper-call-1", "helper-call-2"), completed by two MPI_Waitall
 *           ("waitall-c-send", "waitall-c-recv"). With one frame per site the
 *           helper's sends are one site; with --callsite-depth 2, two chains.
 *
 * So each rank has the pairs irecv-a -> waitall-a and isend-a -> waitall-a
 * (A_ITERS transfers each), isend-b -> wait-send-b and irecv-b -> wait-recv-b
 * (B_ITERS each), sendrecv -> sendrecv (2 * SR_ITERS), irecv-c1 and irecv-c2
 * -> waitall-c-recv (C_ITERS each) and isend-helper -> waitall-c-send
 * (2 * C_ITERS; C_ITERS per helper call line at depth 2). The test finds the
 * marked lines in this file, so editing it keeps the test right. Built with
 * -g -O0 (native/tests/CMakeLists.txt): every call stays on its own line. */
#include <mpi.h>

enum { N = 128, A_ITERS = 5, B_ITERS = 3, SR_ITERS = 2, C_ITERS = 2 };

static double send_buf[N], recv_buf[N], recv_buf2[N];
static volatile double sink;

static void compute(void)
{
    double x = 0;
    for (int i = 0; i < 20000; i++)
        x += (double)i * 1e-9;
    sink = x;
}

static void path_a(int peer)
{
    MPI_Request req[2];
    MPI_Irecv(recv_buf, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &req[0]); /* site: irecv-a */
    MPI_Isend(send_buf, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &req[1]); /* site: isend-a */
    compute();
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE); /* site: waitall-a */
}

static void path_b(int peer)
{
    MPI_Request rr, sr;
    MPI_Irecv(recv_buf, N, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &rr); /* site: irecv-b */
    MPI_Isend(send_buf, N, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &sr); /* site: isend-b */
    compute();
    MPI_Wait(&sr, MPI_STATUS_IGNORE); /* site: wait-send-b */
    MPI_Wait(&rr, MPI_STATUS_IGNORE); /* site: wait-recv-b */
}

static void isend_helper(int peer, int tag, MPI_Request *req)
{
    MPI_Isend(send_buf, N, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, req); /* site: isend-helper */
}

static void path_c(int peer)
{
    MPI_Request rr[2], sr[2];
    MPI_Irecv(recv_buf, N, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, &rr[0]); /* site: irecv-c1 */
    MPI_Irecv(recv_buf2, N, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, &rr[1]); /* site: irecv-c2 */
    isend_helper(peer, 4, &sr[0]); /* site: helper-call-1 */
    isend_helper(peer, 5, &sr[1]); /* site: helper-call-2 */
    compute();
    MPI_Waitall(2, sr, MPI_STATUSES_IGNORE); /* site: waitall-c-send */
    MPI_Waitall(2, rr, MPI_STATUSES_IGNORE); /* site: waitall-c-recv */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    for (int i = 0; i < A_ITERS; i++)
        path_a(peer);
    for (int i = 0; i < B_ITERS; i++)
        path_b(peer);
    for (int i = 0; i < C_ITERS; i++)
        path_c(peer);
    for (int i = 0; i < SR_ITERS; i++)
        MPI_Sendrecv(send_buf, N, MPI_DOUBLE, peer, 3, recv_buf, N, MPI_DOUBLE, peer, 3, /* site: sendrecv */
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
