/* stats.c - summary statistics; see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of an already sorted array. */
static double sorted_median(const double *s, size_t n)
{
    if (n == 0)
        return NAN;
    if (n % 2)
        return s[n / 2];
    return 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

void mo_stats_summarize_or_nan(const double *x, size_t n, mo_stats *out)
{
    if (mo_stats_summarize(x, n, out) != 0) {
        out->n = n;
        out->min = out->median = out->mean = out->max = NAN;
        out->stdev = out->ci95_low = out->ci95_high = NAN;
    }
}

double mo_stats_median(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    /* Sort a copy: callers keep their samples in measurement order. */
    double *s = malloc(n * sizeof *s);
    if (!s)
        return NAN;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double m = sorted_median(s, n);
    free(s);
    return m;
}

/* t_{0.975, df} for df = 1..30, exact to the digits shown. */
static const double t95_table[30] = {
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
    2.446911851,  2.364624252, 2.306004135, 2.262157163, 2.228138852,
    2.200985160,  2.178812830, 2.160368656, 2.144786688, 2.131449546,
    2.119905299,  2.109815578, 2.100922040, 2.093024054, 2.085963447,
    2.079613845,  2.073873068, 2.068657610, 2.063898562, 2.059538553,
    2.055529439,  2.051830516, 2.048407142, 2.045229642, 2.042272456,
};

double mo_stats_t95(size_t df)
{
    if (df == 0)
        return NAN;
    if (df <= 30)
        return t95_table[df - 1];
    /* Cornish-Fisher expansion of the t quantile around the normal one;
     * its error is below 1e-6 for df > 30. */
    const double z = 1.959963984540054;
    double v = (double)df;
    double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v) +
           (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * v * v * v * v);
}

int mo_stats_summarize(const double *x, size_t n, mo_stats *out)
{
    out->n = n;
    if (n == 0) {
        out->min = out->median = out->mean = out->max = NAN;
        out->stdev = out->ci95_low = out->ci95_high = NAN;
        return 0;
    }
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);

    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / (double)n;
    /* Two-pass variance: numerically safe for samples with a large mean. */
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (s[i] - mean) * (s[i] - mean);

    out->min = s[0];
    out->max = s[n - 1];
    out->median = sorted_median(s, n);
    out->mean = mean;
    if (n < 2) {
        /* A single sample says nothing about spread: stdev is undefined. */
        out->stdev = NAN;
        out->ci95_low = out->ci95_high = mean;
    } else {
        out->stdev = sqrt(ss / (double)(n - 1));
        double half = mo_stats_t95(n - 1) * out->stdev / sqrt((double)n);
        out->ci95_low = mean - half;
        out->ci95_high = mean + half;
    }
    free(s);
    return 0;
}
