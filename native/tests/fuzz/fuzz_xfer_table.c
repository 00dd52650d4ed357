/* fuzz_xfer_table.c - libFuzzer target: the transfer-time table parser
 * (profiler/mop_xfer_table.c), through its file interface: the input is the
 * file. Any input: no crash, no sanitizer report, no leak; a refused table
 * comes with a message; a loaded one answers lookups for every class, a few
 * collectives and sizes from 0 to the largest. */
#define _GNU_SOURCE /* memfd_create */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "mop_xfer_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An in-memory file (the parser takes a path): a disk file costs ms a run. */
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("mo_fuzz_xfer_table", 0);
        if (fd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    mop_xfer_table t;
    mop_xfer_table_init(&t);
    char err[512] = "";
    if (mop_xfer_table_load(&t, path, err, sizeof err) == 0) {
        static const uint64_t sizes[] = {0, 1, 7, 4096, 1u << 20, UINT64_MAX / 2, UINT64_MAX};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            for (int cls = 0; cls < MOP_XFER_NCLASSES; cls++) {
                bool extrapolated = false;
                (void)mop_xfer_table_lookup(&t, cls, sizes[i], &extrapolated);
            }
            for (int op = 0; op < MOP_XFER_NCOLL_OPS; op += 7) {
                unsigned flags = 0;
                (void)mop_xfer_table_lookup_coll(&t, op, 2, sizes[i], &flags);
                (void)mop_xfer_table_lookup_coll(&t, op, 1 << 20, sizes[i], &flags);
            }
        }
    } else {
        MO_FUZZ_CHECK(err[0] != '\0');
    }
    mop_xfer_table_free(&t);
    return 0;
}
