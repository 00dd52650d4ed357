/* mop_limits.h - the fixed sizes of the profiler's breakdowns, shared by the
 * event processing (mop_process.h) and the checks on the bounds
 * (mop_checks.h): nothing in them grows with the run's length. */
#ifndef MOP_LIMITS_H
#define MOP_LIMITS_H

enum {
    MOP_MAX_FN = 1024,       /* function ids */
    MOP_MAX_REGIONS = 256,   /* region ids; 0 = outside every region */
    MOP_REGION_DEPTH = 64,
    MOP_MAX_BIN_EDGES = 64,
    MOP_POW2_BINS = 65,      /* [0,1) and [2^k, 2^(k+1)) for k < 64 */
    /* size bins of either kind: powers of two, or up to 64 edges + 1 */
    MOP_MAX_BINS = MOP_POW2_BINS > MOP_MAX_BIN_EDGES + 1 ? MOP_POW2_BINS : MOP_MAX_BIN_EDGES + 1,
};

#endif
