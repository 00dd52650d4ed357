/* idle_waits.c - every call that processes the profiler's queue while it
 * waits (native/profiler/mop_idle.h), made to wait, for
 * tests/test_profile_idle.py: rank 1 receives, rank 0 sends each message
 * SLEEP_MS late, so that rank 1's call finds it not there yet and works on its
 * queue in between (a backlog is made first: calls that record events). Rank 1
 * checks what each call returns: the data, the statuses (source, tag, count),
 * Waitany's index and Waitsome's indices, MPI_Probe's status and MPI_Mprobe's
 * message; a wrong answer exits with status 1.
 * Each path runs in its own region (include/mpi_overlap.h), `reps` times.
 *
 * Usage: idle_waits [reps (2)] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_overlap.h"
#include "two_ranks.h"

enum { BYTES = 64, SLEEP_MS = 20, BACKLOG_CALLS = 16, MAXMSG = 3 };
enum { T_WAIT = 1, T_WAIT_IGNORE, T_WAITALL, T_WAITANY, T_WAITSOME, T_RECV, T_PROBE, T_MPROBE };

static int rank;
static int payload[MAXMSG][BYTES / sizeof(int)];

static void fail(const char *what)
{
    fprintf(stderr, "idle_waits: rank %d: %s\n", rank, what);
    exit(1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Message i of a path: its words say tag and i. */
static void fill(int tag, int i, int *buf)
{
    for (size_t k = 0; k < BYTES / sizeof(int); k++)
        buf[k] = tag * 1000 + i * 100 + (int)k;
}

static void expect_message(int tag, int i, const int *buf, const MPI_Status *st)
{
    int want[BYTES / sizeof(int)];
    fill(tag, i, want);
    if (memcmp(buf, want, sizeof want) != 0)
        fail("wrong data");
    if (!st)
        return;
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != 0 || st->MPI_TAG != tag || count != BYTES)
        fail("wrong status");
}

/* Rank 0: message i of tag, late. */
static void send_late(int tag, int i)
{
    int buf[BYTES / sizeof(int)];
    fill(tag, i, buf);
    sleep_ms(SLEEP_MS);
    MPI_Send(buf, BYTES, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
}

/* Rank 1: calls that record events, so that the queue holds a backlog. */
static void backlog(void)
{
    int r;
    for (int i = 0; i < BACKLOG_CALLS; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
}

static void post(int tag, int n, MPI_Request *reqs)
{
    memset(payload, 0, sizeof payload);
    for (int i = 0; i < n; i++)
        MPI_Irecv(payload[i], BYTES, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &reqs[i]);
    backlog();
}

/* Messages of one tag arrive in the order sent, so receive i holds message i. */
static void receive(int tag)
{
    MPI_Request reqs[MAXMSG];
    MPI_Status sts[MAXMSG];
    int index = -1, outcount = 0, indices[MAXMSG], done[MAXMSG] = {0};
    switch (tag) {
    case T_WAIT:
        post(tag, 1, reqs);
        MPI_Wait(&reqs[0], &sts[0]);
        expect_message(tag, 0, payload[0], &sts[0]);
        break;
    case T_WAIT_IGNORE:
        post(tag, 1, reqs);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        expect_message(tag, 0, payload[0], NULL);
        break;
    case T_WAITALL:
        post(tag, MAXMSG, reqs);
        MPI_Waitall(MAXMSG, reqs, sts);
        for (int i = 0; i < MAXMSG; i++)
            expect_message(tag, i, payload[i], &sts[i]);
        break;
    case T_WAITANY: /* two receives, completed one at a time */
        post(tag, 2, reqs);
        for (int k = 0; k < 2; k++) {
            MPI_Waitany(2, reqs, &index, &sts[0]);
            if (index != k || reqs[k] != MPI_REQUEST_NULL)
                fail("wrong Waitany index");
            expect_message(tag, k, payload[k], &sts[0]);
        }
        MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE);
        if (index != MPI_UNDEFINED)
            fail("Waitany without active requests did not say MPI_UNDEFINED");
        break;
    case T_WAITSOME: /* two receives, until both are in */
        post(tag, 2, reqs);
        for (int got = 0; got < 2; got += outcount) {
            MPI_Waitsome(2, reqs, &outcount, indices, sts);
            if (outcount < 1 || outcount > 2 - got)
                fail("wrong Waitsome count");
            for (int k = 0; k < outcount; k++) {
                if (indices[k] < 0 || indices[k] > 1 || done[indices[k]]++)
                    fail("wrong Waitsome index");
                expect_message(tag, indices[k], payload[indices[k]], &sts[k]);
            }
        }
        break;
    case T_RECV:
        memset(payload, 0, sizeof payload);
        backlog();
        MPI_Recv(payload[0], BYTES, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &sts[0]);
        expect_message(tag, 0, payload[0], &sts[0]);
        break;
    case T_PROBE: { /* the probe's status names the message the receive then takes */
        int count = -1;
        memset(payload, 0, sizeof payload);
        backlog();
        MPI_Probe(0, tag, MPI_COMM_WORLD, &sts[0]);
        MPI_Get_count(&sts[0], MPI_BYTE, &count);
        if (sts[0].MPI_SOURCE != 0 || sts[0].MPI_TAG != tag || count != BYTES)
            fail("wrong MPI_Probe status");
        MPI_Recv(payload[0], BYTES, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &sts[1]);
        expect_message(tag, 0, payload[0], &sts[1]);
        break;
    }
    case T_MPROBE: {
        MPI_Message msg = MPI_MESSAGE_NULL;
        memset(payload, 0, sizeof payload);
        backlog();
        MPI_Mprobe(0, tag, MPI_COMM_WORLD, &msg, &sts[0]);
        if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC)
            fail("MPI_Mprobe matched no message");
        MPI_Mrecv(payload[0], BYTES, MPI_BYTE, &msg, &sts[1]);
        expect_message(tag, 0, payload[0], &sts[1]);
        break;
    }
    }
}

static const struct {
    const char *region;
    int tag, messages;
} paths[] = {
    {"wait", T_WAIT, 1},         {"wait_ignore", T_WAIT_IGNORE, 1},
    {"waitall", T_WAITALL, MAXMSG}, {"waitany", T_WAITANY, 2},
    {"waitsome", T_WAITSOME, 2}, {"recv", T_RECV, 1},
    {"probe", T_PROBE, 1},       {"mprobe", T_MPROBE, 1},
};

int main(int argc, char **argv)
{
    rank = two_ranks_init(&argc, &argv, "idle_waits");
    int reps = argc > 1 ? atoi(argv[1]) : 2;
    for (int r = 0; r < reps; r++) {
        for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
            MPI_OVERLAP_REGION_BEGIN(paths[p].region);
            if (rank == 0)
                for (int i = 0; i < paths[p].messages; i++)
                    send_late(paths[p].tag, i);
            else
                receive(paths[p].tag);
            MPI_OVERLAP_REGION_END(paths[p].region);
        }
    }
    MPI_Finalize();
    return 0;
}
