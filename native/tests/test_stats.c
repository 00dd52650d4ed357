/* test_stats.c - summary statistics against hand-computed values. */
#include "mo_test.h"
#include "stats.h"

int main(void)
{
    mo_stats s;

    /* Odd count, unsorted input: median is the middle value; input kept. */
    double odd[5] = {5, 1, 4, 2, 3};
    CHECK(mo_stats_summarize(odd, 5, &s) == 0);
    CHECK(s.n == 5);
    CHECK_NEAR(s.median, 3, 0);
    CHECK_NEAR(s.mean, 3, 1e-15);
    CHECK_NEAR(s.min, 1, 0);
    CHECK_NEAR(s.max, 5, 0);
    CHECK_NEAR(s.stdev, sqrt(2.5), 1e-15);
    /* t(0.975, 4) = 2.776445105; half width = t * sqrt(2.5) / sqrt(5) */
    CHECK_NEAR(s.ci95_high - s.mean, 2.776445105 * sqrt(2.5) / sqrt(5.0), 1e-9);
    CHECK_NEAR(s.ci95_low, 3 - 2.776445105 * sqrt(0.5), 1e-9);
    CHECK(odd[0] == 5 && odd[1] == 1 && odd[2] == 4 && odd[3] == 2 && odd[4] == 3);

    /* Even count: median is the mean of the two middle values. */
    double even[4] = {10, 1, 7, 2};
    CHECK(mo_stats_summarize(even, 4, &s) == 0);
    CHECK_NEAR(s.median, 4.5, 0);
    CHECK_NEAR(s.mean, 5, 1e-15);
    CHECK_NEAR(s.stdev, sqrt(54.0 / 3.0), 1e-12);
    CHECK(even[0] == 10 && even[1] == 1 && even[2] == 7 && even[3] == 2);
    CHECK_NEAR(mo_stats_median(even, 4), 4.5, 0);

    /* n = 2: t(0.975, 1) = 12.706. */
    double two[2] = {1, 3};
    mo_stats_summarize(two, 2, &s);
    CHECK_NEAR(s.stdev, sqrt(2.0), 1e-15);
    CHECK_NEAR(s.ci95_high, 2 + 12.706204736 * sqrt(2.0) / sqrt(2.0), 1e-8);
    CHECK_NEAR(s.ci95_low, 2 - 12.706204736, 1e-8);

    /* n = 31 (df 30, last table entry): values 0..30. */
    double v31[31];
    for (int i = 0; i < 31; i++)
        v31[i] = 30 - i;
    mo_stats_summarize(v31, 31, &s);
    CHECK_NEAR(s.mean, 15, 1e-12);
    CHECK_NEAR(s.median, 15, 0);
    double sd = sqrt(31.0 * 32.0 / 12.0); /* variance of 0..n-1 with n-1 divisor: n(n+1)/12 */
    CHECK_NEAR(s.stdev, sd, 1e-12);
    CHECK_NEAR(s.ci95_high, 15 + 2.042272456 * sd / sqrt(31.0), 1e-8);

    /* Beyond the table: the approximation against known quantiles. */
    CHECK_NEAR(mo_stats_t95(40), 2.021075390, 1e-6);
    CHECK_NEAR(mo_stats_t95(60), 2.000297822, 1e-6);
    CHECK_NEAR(mo_stats_t95(120), 1.979930405, 1e-6);
    CHECK_NEAR(mo_stats_t95(31), 2.039513446, 1e-6);
    CHECK(mo_stats_t95(30) > mo_stats_t95(31));

    /* n = 1: CI collapses to the mean; stdev undefined. */
    double one[1] = {7};
    mo_stats_summarize(one, 1, &s);
    CHECK(s.n == 1 && s.median == 7 && s.ci95_low == 7 && s.ci95_high == 7);
    CHECK(isnan(s.stdev));

    /* n = 0: everything undefined. */
    mo_stats_summarize(one, 0, &s);
    CHECK(s.n == 0 && isnan(s.mean) && isnan(s.median));
    return TEST_RESULT();
}
