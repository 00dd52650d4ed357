/* mop_event.h - the fixed-size record the wrappers push for every event
 * (docs/profiler.md, "Events"); 32 bytes so a queue of them stays small. */
#ifndef MOP_EVENT_H
#define MOP_EVENT_H

#include <stdint.h>

typedef enum mop_event_type {
    MOP_EV_ENTER = 1,
    MOP_EV_EXIT,
    MOP_EV_BEGIN,
    MOP_EV_END,
    MOP_EV_INCALL,
    MOP_EV_PINIT,
    MOP_EV_START,
    MOP_EV_FREE,
    MOP_EV_REGION_BEGIN,
    MOP_EV_REGION_END,
    MOP_EV_PCONTROL,
    /* Another transfer carried by the request of the BEGIN just pushed with the
     * same key (MPI_Isendrecv: a send and a receive on one request); it ends
     * when that request completes. Fields as for BEGIN. */
    MOP_EV_JOIN,
    /* Trace mode only (MPI_OVERLAP_TRACE; docs/profiler.md, "Message matching"):
     * what matching a message with its other end needs, which the transfer
     * event has no room for. The engine ignores both.
     * MATCH follows the transfer event (BEGIN, JOIN, INCALL, PINIT) of a
     * point-to-point message or a collective in its thread's stream (the
     * latest such event before it): t as that event's, key = communicator id
     * (mop_trace_match.c; 0 unknown), bytes = tag (-1 MPI_ANY_TAG) or, for a
     * collective, its root (-1 none), arg = peer rank in the communicator as
     * the call named it (-2 MPI_ANY_SOURCE, -3 MPI_PROC_NULL), kind = a
     * mop_match_flags. */
    MOP_EV_MATCH,
    /* STATUS follows every completion (END) the wrappers record: t and key as
     * the END's, bytes = the status's MPI_TAG, arg = its MPI_SOURCE (a rank of
     * the request's communicator): what a receive from MPI_ANY_SOURCE or with
     * MPI_ANY_TAG matched. Meaningless for sends. */
    MOP_EV_STATUS,
    /* A non-blocking post's BEGIN and its call's EXIT in one event (Isend,
     * Irecv, ...: the generated point-to-point posts), pushed instead of the two
     * when nothing was recorded between the call's ENTER and its end, the
     * program is not threaded and no trace is written: t = the EXIT's time;
     * the BEGIN's time is the ENTER's, the event before it; the other fields
     * as BEGIN's. One push and one event less per post (docs/profiler.md,
     * "Memory and cost"). Never in a trace. */
    MOP_EV_POST,
} mop_event_type;

/* The kind field of MATCH events. */
enum mop_match_flags {
    MOP_MATCH_FROM_STATUS = 1, /* peer and tag are the status's (blocking receives) */
    MOP_MATCH_COLL = 2,        /* a collective: bytes is its root */
};

typedef enum mop_kind {
    MOP_KIND_SEND = 0,
    MOP_KIND_RECV = 1,
    MOP_KIND_NULL = 2,    /* moves no data (MPI_PROC_NULL) */
    MOP_KIND_UNKNOWN = 3, /* end-only transfers */
    /* One-sided operations (mop_wrap_rma.c): data from origin to target
     * (Put, Accumulate) or from target to origin (Get and the operations that
     * fetch a result); kind & 3 is SEND or RECV. Kinds of their own because
     * their size is exact: the engine replaces a receive's posted capacity by
     * the size its completion reports, but MPIs leave an RMA request's status
     * empty (Open MPI 5 reports count 0). */
    MOP_KIND_RMA_SEND = 4,
    MOP_KIND_RMA_RECV = 5,
    MOP_KIND_GREQ = 6,    /* a generalized request (MPI_Grequest_start): its
                           * completion is counted, it is no data transfer */
    /* Collectives: MOP_KIND_COLL + op (blocking) or MOP_KIND_COLL +
     * MOP_COLL_NB_OFFSET + op (non-blocking, persistent), ops in
     * mop_coll_ops.h. For them the event's `arg` is the communicator size
     * (not a peer) and `bytes` the collective's message size as defined in
     * docs/method.md ("Collectives"). */
    MOP_KIND_COLL = 16,
} mop_kind;


typedef struct mop_event {
    uint64_t t;      /* ticks */
    uint64_t key;    /* request handle bits; MOP_RMA_KEY_BIT set: a one-sided
                        operation's key, made by mop_wrap_rma.c; for ENTER: the
                        call site, the return address into the program (0:
                        not known; docs/profiler.md, "Call sites") */
    int64_t bytes;   /* -1 = unknown */
    uint8_t type;    /* mop_event_type */
    uint8_t kind;    /* mop_kind; for END: mop_end_reason | mop_end_flags; FREE: reason */
    uint16_t id;     /* function id (ENTER, BEGIN, INCALL, PINIT) or region id */
    int32_t arg;     /* peer world rank (-1 unknown), or the Pcontrol level; for
                        END and FREE: <= 0, or when another thread than the posting
                        one saw it, > 0: that thread (mop_xthread.h) */
} mop_event;

/* Handles never have bit 63 set (MPICH's and Intel MPI's are 32-bit
 * integers, Open MPI's user-space pointers), so keys with it cannot collide
 * with a request's. */
#define MOP_RMA_KEY_BIT (UINT64_C(1) << 63)

/* The kind field of END and FREE events: why the transfer closes. */
typedef enum mop_end_reason {
    MOP_END_COMPLETED = 0,
    MOP_END_CANCELLED = 1,        /* END: the request was cancelled: no transfer */
    MOP_END_RMA_OTHER_THREAD = 2, /* END: completed by another thread's synchronization
                                     call, stamped at this thread's next one-sided call */
    MOP_END_RMA_WIN_FREED = 3,    /* END: still pending when its window was freed */
    MOP_FREE_UNTRACKED = 4,       /* FREE: a one-sided operation the wrappers could not
                                     remember (list full, out of memory): begin-only */
} mop_end_reason;

/* A flag or'ed into an END event's reason. */
enum mop_end_flags {
    MOP_END_QUERY = 0x80, /* MPI_Request_get_status*: the transfer is complete but
                           * the handle stays valid; a later Wait/Test/free of it
                           * closes nothing again */
};
#define MOP_END_REASON(kind) ((kind) & 0x7f)

#endif
