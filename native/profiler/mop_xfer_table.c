/* mop_xfer_table.c - parse, hold and interpolate the transfer-time table;
 * the file format is written by src/mpi_overlap/xfer_table.py. */
#define _POSIX_C_SOURCE 200809L
#include "mop_xfer_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mop_xfer_table_init(mop_xfer_table *t)
{
    memset(t, 0, sizeof *t);
}

void mop_xfer_table_free(mop_xfer_table *t)
{
    for (int c = 0; c < MOP_XFER_NCLASSES; c++)
        free(t->points[c]);
    mop_xfer_table_init(t);
}

int mop_xfer_table_add(mop_xfer_table *t, int cls, uint64_t bytes, double seconds)
{
    size_t n = t->npoints[cls], i = n;
    mop_xfer_point *p = t->points[cls];
    while (i > 0 && p[i - 1].bytes > bytes)
        i--;
    if (i > 0 && p[i - 1].bytes == bytes) {
        p[i - 1].seconds = seconds;
        return 0;
    }
    if (n == t->cap[cls]) {
        size_t cap = t->cap[cls] ? 2 * t->cap[cls] : 64;
        mop_xfer_point *np = realloc(p, cap * sizeof *np);
        if (!np)
            return -1;
        t->points[cls] = p = np;
        t->cap[cls] = cap;
    }
    memmove(p + i + 1, p + i, (n - i) * sizeof *p);
    p[i] = (mop_xfer_point){bytes, seconds};
    t->npoints[cls] = n + 1;
    return 0;
}

/* "machine <fp> <key...>": copies fp and the rest of the line. */
static void mop_parse_stamp(const char *rest, char *fp, size_t fplen, char *key, size_t keylen)
{
    size_t i = 0;
    while (*rest == ' ')
        rest++;
    while (rest[i] && rest[i] != ' ' && i + 1 < fplen) {
        fp[i] = rest[i];
        i++;
    }
    fp[i] = '\0';
    rest += i;
    while (*rest == ' ')
        rest++;
    snprintf(key, keylen, "%s", rest);
}

int mop_xfer_table_load(mop_xfer_table *t, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open transfer-time table %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    bool header = false;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        char word[64];
        unsigned long long bytes;
        double secs;
        int version;
        if (!header) {
            if (sscanf(line, "%63s %d", word, &version) != 2 ||
                strcmp(word, MOP_XFER_TABLE_FORMAT) != 0) {
                snprintf(err, errlen, "%s is not an mpi-overlap transfer-time table", path);
                rc = -1;
                break;
            }
            if (version != MOP_XFER_TABLE_VERSION) {
                snprintf(err, errlen, "%s has table format version %d; this profiler reads %d "
                         "(run mpi-overlap calibrate again)", path, version, MOP_XFER_TABLE_VERSION);
                rc = -1;
                break;
            }
            header = true;
        } else if (strncmp(line, "machine ", 8) == 0) {
            mop_parse_stamp(line + 8, t->machine_fp, sizeof t->machine_fp, t->machine_key,
                            sizeof t->machine_key);
        } else if (strncmp(line, "toolchain ", 10) == 0) {
            mop_parse_stamp(line + 10, t->toolchain_fp, sizeof t->toolchain_fp,
                            t->toolchain_key, sizeof t->toolchain_key);
        } else if (sscanf(line, "%63s %llu %lg", word, &bytes, &secs) == 3 &&
                   (strcmp(word, "intra") == 0 || strcmp(word, "inter") == 0)) {
            if (!(secs >= 0.0)) {
                snprintf(err, errlen, "%s:%d: negative or invalid time", path, lineno);
                rc = -1;
                break;
            }
            int cls = word[1] == 'n' && word[2] == 't' && word[3] == 'r' ? MOP_XFER_INTRA
                                                                        : MOP_XFER_INTER;
            if (mop_xfer_table_add(t, cls, (uint64_t)bytes, secs) != 0) {
                snprintf(err, errlen, "out of memory reading %s", path);
                rc = -1;
                break;
            }
        }
        /* other lines (created, toolchain_name, ranks ...) are for people */
    }
    if (rc == 0 && !header) {
        snprintf(err, errlen, "%s is empty", path);
        rc = -1;
    }
    if (rc == 0 && t->npoints[MOP_XFER_INTRA] == 0) {
        snprintf(err, errlen, "%s has no intra-node transfer times", path);
        rc = -1;
    }
    fclose(f);
    return rc;
}

double mop_xfer_table_lookup(const mop_xfer_table *t, int cls, uint64_t bytes,
                             bool *extrapolated)
{
    if (t->npoints[cls] == 0)
        cls = MOP_XFER_INTRA;
    const mop_xfer_point *p = t->points[cls];
    size_t n = t->npoints[cls];
    *extrapolated = false;
    if (n == 0)
        return 0.0;
    if (bytes <= p[0].bytes)
        return p[0].seconds;
    if (bytes > p[n - 1].bytes) {
        *extrapolated = true;
        if (n == 1)
            return p[0].seconds;
        double slope = (p[n - 1].seconds - p[n - 2].seconds) /
                       (double)(p[n - 1].bytes - p[n - 2].bytes);
        if (slope < 0.0) /* noise in the last two points must not make big messages faster */
            slope = 0.0;
        return p[n - 1].seconds + slope * (double)(bytes - p[n - 1].bytes);
    }
    size_t lo = 0, hi = n - 1; /* p[lo].bytes < bytes <= p[hi].bytes */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].bytes < bytes)
            lo = mid;
        else
            hi = mid;
    }
    double frac = (double)(bytes - p[lo].bytes) / (double)(p[hi].bytes - p[lo].bytes);
    return p[lo].seconds + frac * (p[hi].seconds - p[lo].seconds);
}
