/* mop_xfer_table.h - the a-priori transfer-time table (xfer_time per message
 * size, for rank pairs on one node and on different nodes) that the bounds
 * need: parsed from the versioned text file `mpi-overlap calibrate` writes,
 * checked against this machine's and MPI's fingerprints, interpolated.
 * Pure C, no MPI. */
#ifndef MOP_XFER_TABLE_H
#define MOP_XFER_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOP_XFER_TABLE_FORMAT "mpi-overlap-xfer-table"
#define MOP_XFER_TABLE_VERSION 1

enum { MOP_XFER_INTRA = 0, MOP_XFER_INTER = 1, MOP_XFER_NCLASSES = 2 };

typedef struct mop_xfer_point {
    uint64_t bytes;
    double seconds;
} mop_xfer_point;

typedef struct mop_xfer_table {
    mop_xfer_point *points[MOP_XFER_NCLASSES]; /* ascending bytes */
    size_t npoints[MOP_XFER_NCLASSES];
    size_t cap[MOP_XFER_NCLASSES];
    char machine_fp[17], toolchain_fp[17];
    char machine_key[320], toolchain_key[320];
} mop_xfer_table;

void mop_xfer_table_init(mop_xfer_table *t);
void mop_xfer_table_free(mop_xfer_table *t);

/* Adds a point (keeps the class sorted; a repeated size replaces the time).
 * Returns 0, or -1 when out of memory. */
int mop_xfer_table_add(mop_xfer_table *t, int cls, uint64_t bytes, double seconds);

/* Reads a table file. Returns 0, or -1 with a one-line reason in err. */
int mop_xfer_table_load(mop_xfer_table *t, const char *path, char *err, size_t errlen);

/* xfer_time for a message: linear between neighbouring sizes, the first
 * point's time below it, the last segment's slope beyond the last point
 * (*extrapolated set then). A class with no points falls back to intra. */
double mop_xfer_table_lookup(const mop_xfer_table *t, int cls, uint64_t bytes,
                             bool *extrapolated);

#endif
