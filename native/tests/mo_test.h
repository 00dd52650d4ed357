/* mo_test.h - minimal assertion macros for the unit tests: print what
 * failed and where, keep going, and make main() return non-zero. */
#ifndef MO_TEST_H
#define MO_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int mo_test_failures;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            mo_test_failures++;                                                  \
        }                                                                        \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                    \
    do {                                                                         \
        double a_ = (a), b_ = (b);                                               \
        if (!(fabs(a_ - b_) <= (tol))) {                                         \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, %s = %.17g\n", \
                    __FILE__, __LINE__, #a, a_, #b, b_);                         \
            mo_test_failures++;                                                  \
        }                                                                        \
    } while (0)

#define CHECK_STR(a, b)                                                          \
    do {                                                                         \
        const char *a_ = (a), *b_ = (b);                                         \
        if (strcmp(a_, b_) != 0) {                                               \
            fprintf(stderr, "%s:%d: CHECK_STR failed:\n  got:      [%s]\n  expected: [%s]\n", \
                    __FILE__, __LINE__, a_, b_);                                 \
            mo_test_failures++;                                                  \
        }                                                                        \
    } while (0)

#define TEST_RESULT() (mo_test_failures ? (fprintf(stderr, "%d failure(s)\n", mo_test_failures), 1) : 0)

#endif
