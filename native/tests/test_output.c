/* test_output.c - one rank's profile document (mop_output.c), MPI-free:
 * every string in it is clean UTF-8 whatever bytes a region name holds, and
 * a write that fails for lack of space (the temporary file is /dev/full)
 * returns the cause and leaves the document written before untouched. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mo_test.h"
#include "mop_output.h"
#include "utf8_check.h"

/* The file's whole content (caller frees), NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[*len] = '\0';
    return buf;
}

int main(void)
{
    char dir[] = "/tmp/mo_test_output.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    mop_xfer_table table;
    mop_xfer_table_init(&table);
    mop_process_config cfg = {.table = &table, .s_per_tick = 1e-9};
    mop_process p;
    CHECK(mop_process_init(&p, &cfg) == 0);
    /* A region with a name that is not UTF-8 and holds a terminal escape. */
    mop_event ev[] = {
        {.type = MOP_EV_REGION_BEGIN, .t = 10, .id = 1},
        {.type = MOP_EV_ENTER, .t = 20, .id = 0},
        {.type = MOP_EV_EXIT, .t = 30},
        {.type = MOP_EV_REGION_END, .t = 40, .id = 1},
    };
    mop_process_events(&p, ev, sizeof ev / sizeof ev[0]);
    static const char *const regions[] = {"(no region)", "caf\xe9 \x1b]0;title\x07"};
    static const char *const fns[] = {"MPI_\xff"};
    mop_trace_stats trace = {.wanted = false};
    mop_output_info info = {
        .status = "running", .rank = 0, .size = 1, .nodes = 1, .threads = 1,
        .library_version = "MPI\nwith\ttabs\xc3", .table = &table, .table_path = "/t\xfe",
        .clock = "monotonic", .s_per_tick = 1e-9, .wall_s = 1.0, .queue_events = 4096,
        .names = {.fn = fns, .nfn = 1, .region = regions, .nregion = 2},
        .trace = &trace,
    };
    char err[1400] = "", path[256], tmp[300];
    snprintf(path, sizeof path, "%s/profile.rank-0.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());

    CHECK(mop_output_write(dir, &info, &p, err, sizeof err) == 0);
    size_t len = 0;
    char *before = slurp(path, &len);
    CHECK(before != NULL);
    if (before) {
        /* A whole document, each of its lines clean UTF-8 (utf8_check.h). */
        CHECK(len > 3 && strcmp(before + len - 3, "}\n\n") == 0);
        CHECK(mo_utf8_clean_lines(before, len));
        CHECK(strstr(before, "\"region\": \"caf\xef\xbf\xbd \\u001b]0;title\\u0007\"") != NULL);
        CHECK(strstr(before, "\"fn\": \"MPI_\xef\xbf\xbd\"") != NULL);
        CHECK(strstr(before, "\"status\": \"running\"") != NULL);
    }

    /* Disk full: the temporary file the write goes through is /dev/full. */
    if (access("/dev/full", W_OK) != 0) {
        fprintf(stderr, "test_output: no writable /dev/full here: the disk-full case is not run\n");
    } else {
        CHECK(symlink("/dev/full", tmp) == 0);
        info.status = "complete";
        err[0] = '\0';
        CHECK(mop_output_write(dir, &info, &p, err, sizeof err) == -1);
        CHECK(strstr(err, path) != NULL && strstr(err, strerror(ENOSPC)) != NULL);
        char *after = slurp(path, &len);
        CHECK(after != NULL && before != NULL && strcmp(after, before) == 0);
        free(after);
        CHECK(access(tmp, F_OK) != 0); /* the temporary file is gone */
    }
    free(before);
    remove(path);
    remove(tmp);
    rmdir(dir);
    mop_process_free(&p);
    mop_xfer_table_free(&table);
    return TEST_RESULT();
}
