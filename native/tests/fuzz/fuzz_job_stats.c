/* fuzz_job_stats.c - libFuzzer target: the job's statistics as another rank
 * sends them (mop_job_stats_unpack, profiler/mop_job_stats.c). Any input: no
 * crash, no sanitizer report; an accepted message merges into itself, packs
 * again to the same length and writes as JSON. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_input.h"
#include "mop_job_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mop_job_stats s, copy; /* large */
    if (mop_job_stats_unpack(&s, data, size) != 0)
        return 0;
    unsigned char *buf = NULL;
    size_t len = 0;
    MO_FUZZ_CHECK(mop_job_stats_pack(&s, &buf, &len) == 0 && len <= size);
    MO_FUZZ_CHECK(mop_job_stats_unpack(&copy, buf, len) == 0);
    free(buf);
    if (mop_job_stats_merge(&s, &copy) == 0) {
        FILE *f = fopen("/dev/null", "w");
        mop_job_stats_info info = {.rows = NULL, .nrows = 0};
        if (f) {
            mop_job_stats_json(f, &s, &info);
            fclose(f);
        }
    }
    mop_job_stats_free(&copy);
    mop_job_stats_free(&s);
    return 0;
}
