/* The replay engine's pass in C (src/mpi_overlap/predict/engine.py is the reference and
 * states the rules; docs/method.md, "Predicting by replay"). MPI-free: loaded by the
 * Python package through ctypes (src/mpi_overlap/predict/native.py), which lays the
 * program out in the flat arrays below and keeps the Python pass where this library is
 * not built. Every floating-point expression is the Python pass's, in its order, so
 * the two give the same timelines to the last bit (tests/test_predict_native.py). */
#ifndef MOP_REPLAY_ENGINE_H
#define MOP_REPLAY_ENGINE_H

#include <stdint.h>

/* Bumped whenever the structures below, or mop_replay_layout's arguments
 * (replay_layout.c), or the pass's rules change: native.py refuses another version
 * (2: an eager send's post holds its o_s; 3: a link direction carries one message's
 * G s at a time, and `none` on a shared link returns no call before the model's;
 * 4: each message's wait for its direction is returned, out->link_wait). */
#define MOP_REPLAY_ABI 4

/* mop_replay's answers besides 0 (done): the caller replays with the Python pass. */
#define MOP_REPLAY_NOMEM (-1)
#define MOP_REPLAY_UNSUPPORTED (-2) /* a case the Python pass answers (an error or NaN time) */

struct mop_replay_in {
    int64_t ranks;
    const int64_t *call_off; /* ranks + 1: each rank's first call in the per-call arrays */
    const double *enter;     /* per call: recorded enter, exit (seconds) */
    const double *exit;
    const double *add;       /* per call: its residual (with operations) or its duration */
    const double *compute;   /* per call: factor on the computation after it, or NULL */
    const int64_t *op_off;   /* calls + 1: each call's first operation */
    const int32_t *op_code;  /* per operation: program.py's codes */
    const int64_t *op_idx;   /* per operation: its message or collective */
    int64_t msgs;
    const double *T, *o_s, *o_r;
    const uint8_t *eager;
    const uint8_t *hid_s, *hid_r, *at_s, *at_r; /* per message, 0/1 (engine.Change) */
    int32_t hiding, polls; /* the Change's sets are not empty (even if out of range) */
    int64_t colls;
    const int32_t *rooted;   /* per collective: 1 one-to-all, 2 all-to-one, 0 all */
    const int64_t *root;     /* per collective: its root rank, -1 none */
    const double *tcoll;     /* per collective: its time */
    const int64_t *mem_off;  /* colls + 1: each collective's first member slot */
    const int64_t *members;  /* per slot: the member's rank, in the collective's order */
    int32_t overlap;         /* 0 model, 1 none, 2 perfect */
    int32_t async_progress;  /* progress "async" */
    const int64_t *lane;     /* per message: its link direction, -1 none; NULL: no link shared */
    const double *occupy;    /* per message: the time it holds its direction (G s) */
    int64_t lanes;           /* directions (lane's values are below it) */
    const double *floor;     /* per call: no exit before it (none on a shared link), or NULL */
};

struct mop_replay_out {
    double *enter, *exit;   /* per call, NaN where not reached */
    double *send_post, *recv_post; /* per message */
    double *sync;           /* per member slot: its synchronisation time */
    int64_t *sync_order;    /* the slots in the order their synchronisation was set */
    int64_t sync_count;
    uint8_t *ended;         /* per rank */
    int64_t events;
    double *link_wait;      /* per message: its wait for its link direction (0 where it
                               shares none; NaN where its transfer never started), or NULL */
};

int mop_replay_abi(void);
int mop_replay(const struct mop_replay_in *in, struct mop_replay_out *out);

#endif
