/* mop_xfer_table.h - the a-priori transfer-time table (xfer_time per message
 * size, for rank pairs on one node and on different nodes, and per
 * collective operation and communicator size) that the bounds need: parsed
 * from the versioned text file `mpi-overlap calibrate` writes, checked
 * against this machine's and MPI's fingerprints, interpolated.
 * Pure C, no MPI. */
#ifndef MOP_XFER_TABLE_H
#define MOP_XFER_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mop_coll_ops.h"

#define MOP_XFER_TABLE_FORMAT "mpi-overlap-xfer-table"
/* Version 2 added the `coll` lines, version 3 the quality verdict (the
 * `verdict` line, per-point quality, `unmeasured` sizes) and the closing
 * `end` line, version 4 each point's interval and the transfer model's parts
 * (`parts` and `eager_limit` lines). Versions 1 (point-to-point only; its
 * collectives fall back as described below) and 2 are still read, as
 * unverified tables; version 3 as a table without parts. */
#define MOP_XFER_TABLE_VERSION 4
#define MOP_XFER_TABLE_OLDEST_VERSION 1

/* The table's quality verdict (src/mpi_overlap/calibration/xfer_quality.py): a suspect
 * table is refused unless forced; versions 1-2 have none (unverified). */
enum {
    MOP_XFER_UNVERIFIED = 0,
    MOP_XFER_OK = 1,
    MOP_XFER_NOISY = 2,
    MOP_XFER_SUSPECT = 3,
};

enum { MOP_XFER_INTRA = 0, MOP_XFER_INTER = 1, MOP_XFER_NCLASSES = 2 };

/* Collective ops as the table keys them: mop_coll_op, plus MOP_COLL_NB_OFFSET
 * for the non-blocking (and persistent) ones, i.e. kind - MOP_KIND_COLL. */
enum { MOP_XFER_NCOLL_OPS = 2 * MOP_COLL_NOPS };

typedef struct mop_xfer_point {
    uint64_t bytes;
    double seconds;
} mop_xfer_point;

/* One size -> seconds curve (ascending bytes). */
typedef struct mop_xfer_curve {
    mop_xfer_point *points;
    size_t npoints, cap;
} mop_xfer_curve;

/* A collective's curve, measured with communicators of comm_size ranks. */
typedef struct mop_xfer_series {
    int op; /* 0 .. MOP_XFER_NCOLL_OPS - 1 */
    int comm_size;
    mop_xfer_curve curve;
} mop_xfer_series;

/* The transfer model's parts of one class (docs/method.md, "The transfer
 * model's parts"): the sender's and the receiver's overhead per size, and
 * the largest size up to which every size with parts moved eagerly. */
typedef struct mop_xfer_parts {
    mop_xfer_curve o_s, o_r; /* seconds, at the sizes with parts */
    bool has_eager;          /* false: no parts, or no size was eager */
    uint64_t eager_limit;
} mop_xfer_parts;

typedef struct mop_xfer_table {
    mop_xfer_curve p2p[MOP_XFER_NCLASSES]; /* by MOP_XFER_INTRA / MOP_XFER_INTER */
    mop_xfer_parts parts[MOP_XFER_NCLASSES];
    mop_xfer_series *coll; /* in the order first seen; few (ops x comm sizes) */
    size_t ncoll, coll_cap;
    int version; /* of the file loaded; 0 when built in memory */
    char machine_fp[17], toolchain_fp[17];
    char machine_key[320], toolchain_key[320];
    int verdict;               /* MOP_XFER_UNVERIFIED .. MOP_XFER_SUSPECT */
    char verdict_reason[320];  /* as in the file, cut to fit */
    char created[40];          /* the `created` time stamp, "" when none */
    char hash[17];             /* FNV-1a 64 of the file's bytes, 16 hex digits */
} mop_xfer_table;

/* What a lookup had to do besides interpolating between measured points;
 * the engine counts each (docs/profiler.md, "Transfer-time table"). */
enum {
    MOP_XFER_EXTRAPOLATED = 1u << 0,       /* size beyond the curve's last point */
    MOP_XFER_COLL_SIZE_MODELLED = 1u << 1, /* no series for this comm size: from the
                                            * other sizes' (mop_xfer_table_lookup_coll) */
    MOP_XFER_COLL_NB_AS_BLOCKING = 1u << 2, /* non-blocking op without series: blocking one's */
    MOP_XFER_COLL_UNCALIBRATED = 1u << 3,  /* no series for the op: intra-node p2p time */
};

void mop_xfer_table_init(mop_xfer_table *t);
void mop_xfer_table_free(mop_xfer_table *t);

/* Adds a point (keeps the class sorted; a repeated size replaces the time).
 * Returns 0, or -1 when out of memory. */
int mop_xfer_table_add(mop_xfer_table *t, int cls, uint64_t bytes, double seconds);

/* Adds a point to the series (op, comm_size), creating it; as above. Returns
 * 0, or -1 when out of memory or op / comm_size is out of range. */
int mop_xfer_table_add_coll(mop_xfer_table *t, int op, int comm_size, uint64_t bytes,
                            double seconds);

/* The table file's name of an op ("bcast", "ibcast"), NULL when out of range. */
const char *mop_coll_op_name(int op);
/* The op of a name as above, -1 when unknown. */
int mop_coll_op_parse(const char *name);

/* "ok", "noisy", "suspect", "unverified". */
const char *mop_xfer_verdict_name(int verdict);

/* Reads a table file (versions MOP_XFER_TABLE_OLDEST_VERSION ..
 * MOP_XFER_TABLE_VERSION). A file cut short (a last line without its end of
 * line; in version 3 no `end` line) is refused, as is any malformed line.
 * Returns 0, or -1 with a one-line reason in err. */
int mop_xfer_table_load(mop_xfer_table *t, const char *path, char *err, size_t errlen);

/* Whether the table has point-to-point times of class `cls` (a missing
 * inter class falls back to intra in the lookup: the caller counts that). */
bool mop_xfer_table_has_class(const mop_xfer_table *t, int cls);

/* xfer_time for a message: linear between neighbouring sizes, the first
 * point's time below it, the last segment's slope beyond the last point
 * (*extrapolated set then). A class with no points falls back to intra. */
double mop_xfer_table_lookup(const mop_xfer_table *t, int cls, uint64_t bytes,
                             bool *extrapolated);

/* Whether a point-to-point message of `bytes` in class `cls` moves eagerly
 * by the table's parts (bytes <= the class's eager limit; a class without
 * parts falls back to the other one as in mop_xfer_table_lookup). If so,
 * *o_s and *o_r get the sender's and the receiver's overhead there, linear
 * between the sizes with parts and each not above `xfer_s` (the one-way
 * time: a part of a transfer does not outlast it). */
bool mop_xfer_table_eager(const mop_xfer_table *t, int cls, uint64_t bytes, double xfer_s,
                          double *o_s, double *o_r);

/* xfer_time of a collective (op as in MOP_XFER_NCOLL_OPS) of `bytes` (the
 * per-process block) on a communicator of comm_size ranks: the op's series
 * for that comm size, else a model over its other sizes: linear in log2 p
 * (trees: barrier, broadcasts, reductions, scans) or in p (ops that move p
 * blocks: gathers, scatters, all-to-alls, reduce-scatters) between the two
 * calibrated sizes around comm_size, beyond them the slope of the two
 * nearest (not negative, the result not below 0); with a single calibrated
 * size, or for a neighbourhood collective, the nearest size's series (ties:
 * the larger). A non-blocking op without any series uses its blocking op's;
 * an op without any series the intra-node point-to-point time. Within a
 * series as mop_xfer_table_lookup. *flags gets the MOP_XFER_* bits of what
 * it did (docs/method.md, "Collective transfer times"). */
double mop_xfer_table_lookup_coll(const mop_xfer_table *t, int op, int comm_size,
                                  uint64_t bytes, unsigned *flags);

#endif
