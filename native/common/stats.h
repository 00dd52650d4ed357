/* stats.h - summary statistics of repeated samples (median for robust
 * decisions, mean with a Student-t 95 % confidence interval for reporting). */
#ifndef MO_STATS_H
#define MO_STATS_H

#include <stddef.h>

typedef struct mo_stats {
    size_t n;
    double min, median, mean, max;
    double stdev;               /* sample standard deviation (n - 1) */
    double ci95_low, ci95_high; /* 95 % CI of the mean; [mean, mean] when n < 2 */
} mo_stats;

/* Summarizes x[0..n-1] without modifying it. With n == 0 every field but
 * n is NaN (written as null in JSON). Returns 0, or -1 if out of memory. */
int mo_stats_summarize(const double *x, size_t n, mo_stats *out);

/* The same where running out of memory is no error: out->n is then n and
 * every other field NaN (null in JSON), as for no samples. */
void mo_stats_summarize_or_nan(const double *x, size_t n, mo_stats *out);

/* Median of x[0..n-1] without modifying it; NaN when n == 0. */
double mo_stats_median(const double *x, size_t n);

/* Two-sided 95 % Student-t quantile (t_{0.975, df}); df >= 1. */
double mo_stats_t95(size_t df);

#endif
