/* mop_trace.h - the timeline trace of one rank (docs/profiler.md, "Timeline
 * traces"): every event of every thread, and every transfer with the bounds
 * the engine computed for it, written as they are processed into a compact
 * binary file that `mpi-overlap trace` turns into a Perfetto timeline.
 *
 * The file is a 64-byte header followed by chunks; each chunk is written
 * with one system call when a thread's queue is processed, so a rank that
 * dies keeps everything up to its last flush. A size cap stops the writing
 * (what is not written is counted); an END chunk closes a finished file.
 * Pure C (no MPI): the runtime supplies the clock alignment, and the unit
 * test drives it alone. */
#ifndef MOP_TRACE_H
#define MOP_TRACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "mop_event.h"
#include "mop_process.h"

/* ---- the format (little-endian; every field at a fixed offset) ---------- */
#define MOP_TRACE_MAGIC "MOPTRACE"
enum {
    /* 2: MATCH and STATUS events, COMMS chunks (what message matching needs);
     * 3: a MATCH's id is the message's datatype layout, DTYPES chunks; files of
     * versions 1 and 2 are still read. */
    MOP_TRACE_VERSION = 3,
    MOP_TRACE_BYTE_ORDER = 0x01020304, /* reads 04 03 02 01 on a little-endian file */
    MOP_TRACE_HEADER_BYTES = 64,
    MOP_TRACE_CHUNK_BYTES = 16,     /* u32 type, u32 thread, u32 count, u32 payload bytes */
    MOP_TRACE_EVENT_BYTES = 32,     /* a mop_event as it is in memory */
    MOP_TRACE_TRANSFER_BYTES = 72,  /* see mop_trace_pack_transfer */
    MOP_TRACE_END_BYTES = 80,
};

/* Header: magic[8], u32 version, u32 byte order, i32 rank, i32 size,
 * f64 s_per_tick, u64 sync_ticks, f64 sync_s, f64 sync_rtt_s, u32 clock
 * (0 tsc, 1 monotonic), u16 event bytes, u16 transfer bytes. (sync_ticks,
 * sync_s): this rank's clock read sync_ticks when rank 0's timeline read
 * sync_s seconds; sync_rtt_s is the round trip that measured it (< 0: no
 * measurement). */

typedef enum mop_trace_chunk {
    MOP_TRACE_FN_NAMES = 1,     /* count x (u32 id, NUL-terminated name) */
    MOP_TRACE_KIND_NAMES = 2,   /* same, for transfer kinds */
    MOP_TRACE_REGION_NAMES = 3, /* same, for region ids; written as regions appear */
    MOP_TRACE_EVENTS = 4,       /* count x 32-byte mop_event of thread `thread` */
    MOP_TRACE_TRANSFERS = 5,    /* count x 72-byte transfer of thread `thread` */
    MOP_TRACE_END = 6,          /* 80 bytes: the file was closed; see mop_trace_close */
    /* count x one communicator: u64 id, u32 flags (mop_trace_comm_flags), u32
     * local size n, u32 remote size m (0: an intracommunicator), u32 0, then
     * i32 world ranks of its n local ranks and of its m remote ones, in rank
     * order. Written when the communicator is first known (mop_trace_match.c). */
    MOP_TRACE_COMMS = 7,
    /* one datatype layout: u32 id, u32 flags (mop_trace_dtype_flags), u32 n,
     * u32 name bytes b, i64 size, extent, true lower bound, true extent, then n
     * i64 values (its constructor tree, mop_trace_dtype.c) and b bytes of the
     * NUL-terminated names of its predefined types in the tree's order, padded
     * to 8 bytes. Written when a message first uses it. */
    MOP_TRACE_DTYPES = 8,
} mop_trace_chunk;

/* Flags of a DTYPES record. */
enum mop_trace_dtype_flags {
    MOP_TRACE_DTYPE_CUT = 1, /* the tree is cut short (too large, or a query failed) */
};

/* Flags of a COMMS record. */
enum mop_trace_comm_flags {
    MOP_TRACE_COMM_INTER = 1, /* an intercommunicator */
    /* Its creation was not seen (MPI_Comm_idup, a binding that calls PMPI_
     * directly): named at its first use, so its id may differ between ranks. */
    MOP_TRACE_COMM_LAZY = 2,
};

/* Transfer flags (byte 66 of a transfer record). */
enum {
    MOP_TRACE_HAS_KEY = 1,
    MOP_TRACE_CLAMPED = 2,
};

/* ---- the writer ------------------------------------------------------------ */

typedef struct mop_trace_info {
    int rank, size;
    double s_per_tick;
    bool clock_tsc;
    uint64_t sync_ticks;
    double sync_s, sync_rtt_s;
    const char *const *fn_names; /* id -> name; NULL entries skipped */
    size_t nfn;
    /* The region table as it is now (id -> name, n ids); NULL: no regions. */
    const char *const *(*region_names)(size_t *n);
} mop_trace_info;

typedef struct mop_trace_stats {
    bool wanted;     /* a trace was asked for */
    bool open;       /* the file is (or was) open */
    bool closed;     /* the END chunk is written */
    bool truncated;  /* the cap was reached */
    char file[256];  /* the file's name (no directory) */
    char error[300]; /* why no trace or why writing stopped; empty if none */
    uint64_t cap_bytes, bytes;
    uint64_t events, transfers;                 /* written */
    uint64_t dropped_events, dropped_transfers; /* not written: cap or error */
    uint32_t threads;
} mop_trace_stats;

typedef struct mop_trace {
    pthread_mutex_t lock;
    int fd;
    mop_trace_stats st;
    size_t regions_written;
    const char *const *(*region_names)(size_t *n);
    const void **owners; /* thread index -> the runtime's handle of that thread */
    uint32_t cap_owners;
    bool finished; /* mop_trace_close ran: nothing more is written or registered */
    /* End-of-run clock alignment, written into the END chunk. */
    uint64_t end_ticks;
    double end_s, end_rtt_s;
} mop_trace;

#define MOP_TRACE_INITIALIZER {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .end_rtt_s = -1.0}

/* Opens `path` (truncating it) and writes the header and name tables.
 * Returns 0, or -1 with the reason in tr->st.error (the program goes on
 * untraced). cap_bytes: the most bytes of header and chunks written (the END
 * chunk may exceed it by MOP_TRACE_END_BYTES + MOP_TRACE_CHUNK_BYTES). */
int mop_trace_open(mop_trace *tr, const char *path, uint64_t cap_bytes,
                   const mop_trace_info *info);

/* The index of a thread (its handle `owner`): 0, 1, ... in order of first
 * sight; the runtime names the thread that called MPI_Init first. */
uint32_t mop_trace_thread(mop_trace *tr, const void *owner);

/* Processes n events of one thread in p, as mop_process_events does, after
 * writing them, and writes the transfers they close. Without an open trace
 * it is mop_process_events. p's config must have on_transfer =
 * mop_trace_on_transfer with ctx = tr (mop_trace_configure). */
void mop_trace_process(mop_trace *tr, const void *owner, mop_process *p, const mop_event *e,
                       size_t n);
/* mop_process_finish, writing the begin-only transfers it closes. */
void mop_trace_finish(mop_trace *tr, const void *owner, mop_process *p);

/* Points cfg's on_transfer at the trace (before threads copy the config). */
void mop_trace_configure(mop_trace *tr, mop_process_config *cfg);
void mop_trace_on_transfer(void *ctx, const mop_transfer *t);

/* Writes one COMMS record (see MOP_TRACE_COMMS); nothing once closed. */
void mop_trace_comm(mop_trace *tr, uint64_t id, uint32_t flags, const int32_t *local, uint32_t n,
                    const int32_t *remote, uint32_t m);

/* Writes one DTYPES record (see MOP_TRACE_DTYPES); nothing once closed.
 * shape: size, extent, true lower bound, true extent. */
void mop_trace_dtype(mop_trace *tr, uint32_t id, uint32_t flags, const int64_t shape[4],
                     const int64_t *values, uint32_t n, const char *names, uint32_t name_bytes);

/* The clock alignment measured at the end of the run (for the END chunk). */
void mop_trace_set_end_sync(mop_trace *tr, uint64_t ticks, double s, double rtt_s);

/* Writes the END chunk and closes the file; later events are ignored (and
 * not counted). Frees what the trace holds. */
void mop_trace_close(mop_trace *tr);

/* A consistent copy of the counters. */
void mop_trace_get_stats(mop_trace *tr, mop_trace_stats *out);

/* The "trace" object of the profile document. */
void mop_trace_stats_json(mo_json *w, const mop_trace_stats *s);

/* Serializes one transfer record (MOP_TRACE_TRANSFER_BYTES): u64 t_begin,
 * u64 t_end, u64 key, i64 bytes, f64 xfer_s, f64 min_s, f64 max_s, i32 peer,
 * u16 fn, u16 region, u8 kind, u8 case, u8 flags, 5 bytes zero. */
void mop_trace_pack_transfer(unsigned char *out, const mop_transfer *t);

/* ---- the runtime's side (mop_trace_mpi.c, in libmpi_overlap only) -------- */

/* At MPI_Init, once the clock is set up, on every rank (collective when
 * MPI_OVERLAP_TRACE asks for a trace): measures this rank's clock against
 * rank 0's. Returns whether a trace is wanted. */
bool mop_trace_sync_start(double s_per_tick);
/* Once profiling is on: opens <outdir>/trace.rank-<rank>.mopt (cap from
 * MPI_OVERLAP_TRACE_CAP), points cfg's on_transfer at it and turns on the
 * recording of what message matching needs (mop_match_start). Returns whether
 * a trace is written: the wrappers must then name every message's peer by its
 * world rank (the runtime's mop_need_peers). */
bool mop_trace_start(mop_trace *tr, mop_process_config *cfg, const char *outdir, int rank,
                     int size, double s_per_tick, bool clock_tsc);
/* At MPI_Finalize on every rank (collective when the start was): measures the
 * clocks again, so the converter corrects the ranks' rates as well. */
void mop_trace_sync_end(mop_trace *tr);

/* mop_trace_match.c: once the trace is open, names MPI_COMM_WORLD and sets
 * mop_match_on (mop_wrap_util.h), so that the wrappers record MATCH and
 * STATUS events and communicators as they are created. */
void mop_match_start(mop_trace *tr, int rank, int size);

#endif
