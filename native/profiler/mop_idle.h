/* mop_idle.h - the profiler's processing moved into time the program spends
 * waiting in MPI anyway. A call that may block (MPI_Wait, _Waitall, _Waitany,
 * _Waitsome, MPI_Recv, MPI_Probe, MPI_Mprobe) first asks MPI without blocking
 * whether it would return now (MPI_Test*, MPI_Iprobe: what the blocking call
 * does in its own loop); while not, it processes a few of the thread's queued events
 * (mop_idle_step) and asks again; then it makes the blocking call, unless a
 * test already completed it. Only on a thread whose path this is (th->idle:
 * MPI_OVERLAP_IDLE=1, or its trials' pick, mop_idle_pick.h) and with a
 * backlog (mop_idle_worth): a call that does not wait pays one comparison. The work is the same, but it no longer
 * stops the program at the next full queue, where on a message-rate loop it
 * stalled the other rank too (docs/profiler.md, "Memory and cost").
 *
 * The tests are the standard's non-blocking forms of the same call, with the
 * same arguments; a test that completes (or fails) stands for the call. Not
 * MPI_Sendrecv or collectives: their peers may be waiting for them.
 *
 * A test is not always what the wait does, so the waits stop testing first
 * (mop_idle_waits_off) once the program
 * - sets an error handler (MPI_Comm_set_errhandler and the like: their
 *   generated wrappers say so): an MPI may raise a request's error in a test
 *   on another handler than in the wait (MPICH 5 aborts in MPI_Testall on the
 *   truncated receive that MPI_Waitall returns as MPI_ERR_IN_STATUS under
 *   MPI_ERRORS_RETURN);
 * - creates a partitioned request (MPI_Psend_init, MPI_Precv_init): MPICH 5's
 *   MPI_Testall fails on the ones MPI_Waitall completes.
 * Found by tests/test_profile_completion.py. The receives' and probes' MPI_Iprobe
 * involves no request and stays. */
#ifndef MOP_IDLE_H
#define MOP_IDLE_H

#include <mpi.h>

#include "mop_runtime.h"

/* Events processed between two tests. Small, so that the wait ends at most a
 * few events' processing after it could have; MPICH's receiver must also keep
 * draining its shared-memory cells, or its sender stalls. Open MPI's tests
 * cost about twice MPICH's (an MPI_Iprobe 80 ns against 37, an MPI_Testall of
 * 64 receives 1.4 us against 0.7, here), and it did best with more work
 * between them. Measured on mo_msgrate, 8 B, window 64 (docs/profiler.md,
 * "Memory and cost"). */
#ifdef OPEN_MPI
enum { MOP_IDLE_CHUNK = 16 };
#else
enum { MOP_IDLE_CHUNK = 4 };
#endif

/* Tests (`test`, which sets *rc) until `over`, processing a chunk of the
 * queue after each test that finds the wait not over: returns 1 from the
 * enclosing function when a test completed the call (or failed), 0 once
 * nothing is left to process (the blocking call is then still to make). */
#define MOP_IDLE_UNTIL(th, test, over)                     \
    do {                                                   \
        test;                                              \
        if (over)                                          \
            return 1;                                      \
    } while (mop_idle_step(th, MOP_IDLE_CHUNK));           \
    return 0

static inline void mop_idle_waits_off(void)
{
    __atomic_store_n(&mop_idle_waits, 0, __ATOMIC_RELAXED);
}

/* Whether a Wait-family call should work on the queue before waiting
 * (mop_idle_worth, unless the waits may no longer test). */
static inline bool mop_idle_wait_worth(const mop_thread *th)
{
    return mop_idle_worth(th) && __atomic_load_n(&mop_idle_waits, __ATOMIC_RELAXED);
}

/* Each is called only when mop_idle_worth(th), and returns as MOP_IDLE_UNTIL. */

static inline int mop_idle_wait(mop_thread *th, MPI_Request *req, MPI_Status *st, int *rc)
{
    int flag = 0;
    MOP_IDLE_UNTIL(th, *rc = PMPI_Test(req, &flag, st), *rc != MPI_SUCCESS || flag);
}

static inline int mop_idle_waitall(mop_thread *th, int count, MPI_Request reqs[],
                                   MPI_Status st[], int *rc)
{
    int flag = 0;
    MOP_IDLE_UNTIL(th, *rc = PMPI_Testall(count, reqs, &flag, st), *rc != MPI_SUCCESS || flag);
}

static inline int mop_idle_waitany(mop_thread *th, int count, MPI_Request reqs[], int *index,
                                   MPI_Status *st, int *rc)
{
    int flag = 0;
    MOP_IDLE_UNTIL(th, *rc = PMPI_Testany(count, reqs, index, &flag, st),
                   *rc != MPI_SUCCESS || flag);
}

/* Testsome completing nothing says outcount 0; MPI_UNDEFINED (no active
 * request) is Waitsome's answer too. */
static inline int mop_idle_waitsome(mop_thread *th, int count, MPI_Request reqs[],
                                    int *outcount, int indices[], MPI_Status st[], int *rc)
{
    MOP_IDLE_UNTIL(th, *rc = PMPI_Testsome(count, reqs, outcount, indices, st),
                   *rc != MPI_SUCCESS || *outcount != 0);
}

/* MPI_Iprobe only looks: the receive still matches the message. */
static inline int mop_idle_probe(mop_thread *th, int source, int tag, MPI_Comm comm)
{
    int flag = 0, rc;
    MOP_IDLE_UNTIL(th, rc = PMPI_Iprobe(source, tag, comm, &flag, MPI_STATUS_IGNORE),
                   rc != MPI_SUCCESS || flag);
}

/* MPI_Recv, MPI_Probe (generated) and MPI_Mprobe: works on the backlog until a
 * matching message is there. */
static inline void mop_idle_until_message(mop_thread *th, int source, int tag, MPI_Comm comm)
{
    if (mop_idle_worth(th))
        (void)mop_idle_probe(th, source, tag, comm);
}

#endif
