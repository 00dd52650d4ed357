/* work.c - the work loop and its calibration; see work.h. */
#include "work.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "timer.h"

volatile uint64_t mo_work_sink;

/* Limits from the specification of the harness. */
#define CV_LIMIT 0.03
#define DRIFT_LIMIT 0.05
#define LINEARITY_TOLERANCE 0.10
enum { MAX_SAMPLES = 101, LINEARITY_SAMPLES = 5 };

uint64_t mo_work(uint64_t units)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ units;
    for (uint64_t i = 0; i < units; i++) {
        /* 16 LCG steps, each followed by an xor-shift: the shift makes the
         * chain non-affine, so it cannot be collapsed into one multiply-add,
         * and every step depends on the previous one (no parallelism). */
        for (int k = 0; k < 16; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            x ^= x >> 29;
        }
        /* Opaque to the optimizer: x may have changed, so no closed form,
         * no vectorization and no hoisting across units. */
        __asm__ volatile("" : "+r"(x));
    }
    mo_work_sink = x;
    return x;
}

static double time_units_ns(uint64_t units)
{
    uint64_t t0 = mo_timer_now_ns();
    mo_work(units);
    uint64_t t1 = mo_timer_now_ns();
    return (double)(t1 - t0);
}

static double median_time_ns(uint64_t units, int reps)
{
    double t[MAX_SAMPLES];
    for (int i = 0; i < reps; i++)
        t[i] = time_units_ns(units);
    return mo_stats_median(t, (size_t)reps);
}

static void add_warning(mo_work_calib *c, const char *fmt, ...)
{
    if (c->nwarnings >= MO_WORK_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->warnings[c->nwarnings++], MO_WORK_WARNING_LEN, fmt, ap);
    va_end(ap);
}

/* Rate in units/us of `samples` timings of `units`, median. */
static double measure_rate(uint64_t units, int samples, double *rates)
{
    for (int i = 0; i < samples; i++) {
        double ns = time_units_ns(units);
        rates[i] = ns > 0 ? (double)units / (ns / 1000.0) : NAN;
    }
    return mo_stats_median(rates, (size_t)samples);
}

int mo_work_calibrate(mo_work_calib *c, double target_ms, int samples)
{
    c->nwarnings = 0;
    c->recheck_units_per_us = NAN;
    c->drift = NAN;
    c->stable = false;
    if (samples < 1)
        samples = 1;
    if (samples > MAX_SAMPLES)
        samples = MAX_SAMPLES;

    /* Grow the unit count until one run is long enough (>= target/4) to be
     * timed well, then scale it to the target. Running it also warms the
     * CPU up from any low-frequency idle state. */
    const double target_ns = target_ms * 1e6;
    uint64_t units = 64;
    double ns = 0.0;
    for (;;) {
        ns = median_time_ns(units, 3);
        if (ns >= target_ns / 4 || units > (UINT64_MAX >> 4))
            break;
        units *= 2;
    }
    if (ns <= 0)
        return -1;
    units = (uint64_t)llround((double)units * target_ns / ns);
    if (units < 1)
        units = 1;
    c->calib_units = units;

    double rates[MAX_SAMPLES];
    c->units_per_us = measure_rate(units, samples, rates);
    if (!(c->units_per_us > 0) || !isfinite(c->units_per_us))
        return -1;
    mo_stats_summarize(rates, (size_t)samples, &c->calibration);

    double cv = c->calibration.n > 1 ? c->calibration.stdev / c->calibration.mean : 0.0;
    c->stable = cv <= CV_LIMIT;
    if (!c->stable)
        add_warning(c, "work calibration unstable: coefficient of variation %.1f %% > %.0f %%",
                    100.0 * cv, 100.0 * CV_LIMIT);

    /* The method subtracts work time from loop time, which presumes that
     * work time is proportional to units; check that once. */
    double t1 = median_time_ns(units, LINEARITY_SAMPLES);
    double t2 = median_time_ns(2 * units, LINEARITY_SAMPLES);
    c->linearity = t1 > 0 ? t2 / t1 : NAN;
    if (!(fabs(c->linearity - 2.0) <= 2.0 * LINEARITY_TOLERANCE))
        add_warning(c, "work loop not linear: time(2N)/time(N) = %.3f (expected 2 +/- %.0f %%)",
                    c->linearity, 100.0 * LINEARITY_TOLERANCE);
    return 0;
}

void mo_work_recheck(mo_work_calib *c)
{
    double rates[MAX_SAMPLES];
    int samples = c->calibration.n > 0 && c->calibration.n <= MAX_SAMPLES ? (int)c->calibration.n : 11;
    c->recheck_units_per_us = measure_rate(c->calib_units, samples, rates);
    c->drift = c->recheck_units_per_us / c->units_per_us - 1.0;
    if (!(fabs(c->drift) <= DRIFT_LIMIT)) {
        c->stable = false;
        add_warning(c, "work rate drifted by %+.1f %% during the run (limit %.0f %%): CPU frequency or load changed",
                    100.0 * c->drift, 100.0 * DRIFT_LIMIT);
    }
}
