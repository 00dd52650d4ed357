/* xfer_table_file.h - transfer-time table files for the unit tests that read
 * them (test_xfer_table.c, test_bounds.c): an empty temporary file, and a
 * table of a given format version (a fixed head, then the test's body)
 * written there and loaded into a fresh table. */
#ifndef MO_XFER_TABLE_FILE_H
#define MO_XFER_TABLE_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mo_test.h"
#include "mop_xfer_table.h"

/* The lines after "mpi-overlap-xfer-table <version>": what the tests expect
 * of machine_fp and toolchain_key, and part of the bytes the hash covers. */
#define XFER_TEST_HEAD                                   \
    "created x\nmachine 0123456789abcdef cpu=X;ncpu=2\n" \
    "toolchain fedcba9876543210 MPICH Version: 5\n"

/* Creates an empty file from the mkstemp template `path` (ends in XXXXXX). */
static inline void xfer_temp_file(char *path)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
}

/* Writes a table file: "mpi-overlap-xfer-table <version>", the head, body. */
static inline void xfer_write_file(const char *path, int version, const char *body)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "mpi-overlap-xfer-table %d\n%s%s", version, XFER_TEST_HEAD, body);
    fclose(f);
}

/* Writes a table file and loads it into *t (initialized here): the loader's
 * result, its reason in err (emptied first, so a stale one cannot pass). */
static inline int xfer_load_text(mop_xfer_table *t, const char *path, int version,
                                 const char *body, char *err, size_t errlen)
{
    xfer_write_file(path, version, body);
    mop_xfer_table_init(t);
    err[0] = '\0';
    return mop_xfer_table_load(t, path, err, errlen);
}

#endif
