/* work.h - the calibrated "application work" that is overlapped with
 * communication: a dependent integer chain whose duration scales linearly
 * with its unit count and which the optimizer can neither remove, vectorize
 * nor replace by a closed form. */
#ifndef MO_WORK_H
#define MO_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include "stats.h"

/* The only global mutable state in mo_common: mo_work() stores its result
 * here (volatile) so that the computation has an observable effect. */
extern volatile uint64_t mo_work_sink;

/* Performs `units` units of work; returns the chain's final value, which
 * depends on units (and is also stored to mo_work_sink). */
uint64_t mo_work(uint64_t units);

enum { MO_WORK_MAX_WARNINGS = 4, MO_WORK_WARNING_LEN = 200 };

typedef struct mo_work_calib {
    double units_per_us;          /* median rate over the calibration samples */
    mo_stats calibration;         /* units/us of each calibration sample */
    uint64_t calib_units;         /* units per calibration sample (~target ms) */
    bool stable;                  /* CV <= 3 %, |drift| <= 5 % */
    double linearity;             /* time(2N) / time(N), ideally 2 */
    double recheck_units_per_us;  /* NaN until mo_work_recheck() */
    double drift;                 /* recheck / units_per_us - 1, NaN until then */
    int nwarnings;
    char warnings[MO_WORK_MAX_WARNINGS][MO_WORK_WARNING_LEN];
} mo_work_calib;

/* Calibrates the rate: picks a unit count taking ~target_ms, times it
 * `samples` times, and checks stability and linearity. Returns 0, or -1 if
 * the rate could not be measured. */
int mo_work_calibrate(mo_work_calib *c, double target_ms, int samples);

/* Measures the rate again (end of run) and records drift; |drift| > 5 %
 * marks the calibration unstable and adds a warning. */
void mo_work_recheck(mo_work_calib *c);

#endif
