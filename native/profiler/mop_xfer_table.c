/* mop_xfer_table.c - parse, hold and interpolate the transfer-time table;
 * the file format is written by src/mpi_overlap/calibration/xfer_table.py. */
#define _POSIX_C_SOURCE 200809L
#include "mop_xfer_table.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "grow.h"

void mop_xfer_table_init(mop_xfer_table *t)
{
    memset(t, 0, sizeof *t);
}

void mop_xfer_table_free(mop_xfer_table *t)
{
    for (int c = 0; c < MOP_XFER_NCLASSES; c++) {
        free(t->p2p[c].points);
        free(t->parts[c].o_s.points);
        free(t->parts[c].o_r.points);
    }
    for (size_t i = 0; i < t->ncoll; i++)
        free(t->coll[i].curve.points);
    free(t->coll);
    mop_xfer_table_init(t);
}

/* Inserts into a sorted curve; a repeated size replaces the time. */
static int mop_curve_add(mop_xfer_curve *c, uint64_t bytes, double seconds)
{
    size_t n = c->npoints, i = n;
    mop_xfer_point *p = c->points;
    while (i > 0 && p[i - 1].bytes > bytes)
        i--;
    if (i > 0 && p[i - 1].bytes == bytes) {
        p[i - 1].seconds = seconds;
        return 0;
    }
    if (n == c->cap) {
        mop_xfer_point *np = mo_grow(p, &c->cap, sizeof *np, 64);
        if (!np)
            return -1;
        c->points = p = np;
    }
    memmove(p + i + 1, p + i, (n - i) * sizeof *p);
    p[i] = (mop_xfer_point){bytes, seconds};
    c->npoints = n + 1;
    return 0;
}

int mop_xfer_table_add(mop_xfer_table *t, int cls, uint64_t bytes, double seconds)
{
    return mop_curve_add(&t->p2p[cls], bytes, seconds);
}

int mop_xfer_table_add_coll(mop_xfer_table *t, int op, int comm_size, uint64_t bytes,
                            double seconds)
{
    if (op < 0 || op >= MOP_XFER_NCOLL_OPS || comm_size < 1)
        return -1;
    mop_xfer_series *s = NULL;
    for (size_t i = 0; i < t->ncoll && !s; i++)
        if (t->coll[i].op == op && t->coll[i].comm_size == comm_size)
            s = &t->coll[i];
    if (!s) {
        if (t->ncoll == t->coll_cap) {
            mop_xfer_series *ns = mo_grow(t->coll, &t->coll_cap, sizeof *ns, 16);
            if (!ns)
                return -1;
            t->coll = ns;
        }
        s = &t->coll[t->ncoll++];
        *s = (mop_xfer_series){.op = op, .comm_size = comm_size};
    }
    return mop_curve_add(&s->curve, bytes, seconds);
}

/* "i" + name for the non-blocking ops: string-literal concatenation keeps the
 * names in one place (mop_coll_ops.h). */
static const char *const mop_coll_names[MOP_XFER_NCOLL_OPS] = {
#define MOP_COLL_NAME(id, name) name,
    MOP_COLL_OPS(MOP_COLL_NAME)
#undef MOP_COLL_NAME
#define MOP_COLL_NB_NAME(id, name) "i" name,
    MOP_COLL_OPS(MOP_COLL_NB_NAME)
#undef MOP_COLL_NB_NAME
};

const char *mop_coll_op_name(int op)
{
    return op >= 0 && op < MOP_XFER_NCOLL_OPS ? mop_coll_names[op] : NULL;
}

int mop_coll_op_parse(const char *name)
{
    for (int op = 0; op < MOP_XFER_NCOLL_OPS; op++)
        if (strcmp(name, mop_coll_names[op]) == 0)
            return op;
    return -1;
}

/* A time a table line may hold: not negative, not NaN, not infinite (the
 * interpolations, and the size model between communicator sizes, would turn
 * inf into NaN); 1e9 s is far beyond any transfer. */
static bool mop_valid_secs(double secs)
{
    return secs >= 0.0 && secs <= 1e9;
}

/* "coll <op> <comm size> <bytes> <seconds>"; 0, or -1 with err. An op this
 * profiler does not know is skipped: a table may come from a version that
 * times more operations, and no event of this profiler can ask for it. */
static int mop_parse_coll(mop_xfer_table *t, const char *line, const char *path, int lineno,
                          char *err, size_t errlen)
{
    char name[64];
    long long comm_size;
    unsigned long long bytes;
    double secs;
    int used = 0;
    if (sscanf(line, "coll %63s %lld %llu %lg %n", name, &comm_size, &bytes, &secs, &used) != 4 ||
        line[used] != '\0' || comm_size < 1 || comm_size > INT32_MAX) {
        snprintf(err, errlen, "%s:%d: expected 'coll <op> <comm size> <bytes> <seconds>'", path,
                 lineno);
        return -1;
    }
    if (!mop_valid_secs(secs)) {
        snprintf(err, errlen, "%s:%d: negative or invalid time", path, lineno);
        return -1;
    }
    int op = mop_coll_op_parse(name);
    if (op < 0)
        return 0;
    if (mop_xfer_table_add_coll(t, op, (int)comm_size, (uint64_t)bytes, secs) != 0) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
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

static const char *const mop_verdict_names[] = {"unverified", "ok", "noisy", "suspect"};

const char *mop_xfer_verdict_name(int verdict)
{
    return verdict >= MOP_XFER_UNVERIFIED && verdict <= MOP_XFER_SUSPECT ? mop_verdict_names[verdict]
                                                                        : "unknown";
}

/* "verdict <word> <reason...>"; 0, or -1 for an unknown word. */
static int mop_parse_verdict(mop_xfer_table *t, const char *rest)
{
    size_t n = strcspn(rest, " ");
    for (int v = MOP_XFER_UNVERIFIED; v <= MOP_XFER_SUSPECT; v++) {
        if (strlen(mop_verdict_names[v]) == n && strncmp(rest, mop_verdict_names[v], n) == 0) {
            t->verdict = v;
            rest += n;
            while (*rest == ' ')
                rest++;
            snprintf(t->verdict_reason, sizeof t->verdict_reason, "%.319s", rest);
            return 0;
        }
    }
    return -1;
}

/* A point line "<class> <bytes> <seconds>", in version 3 optionally followed
 * by "<verdict> <estimate_s> <spread> <undisturbed> <samples>", in version 4
 * by those and "<lo_s> <hi_s>" (for people and for mpi-overlap; checked for
 * form only). Returns 0, or -1 with err. */
static int mop_parse_point(mop_xfer_table *t, const char *line, int version, const char *path,
                           int lineno, char *err, size_t errlen)
{
    char word[16], verdict[16];
    unsigned long long bytes, n, m;
    double secs, est, spread;
    int used = 0, used_q = 0;
    const char *num = line + strcspn(line, " ");
    while (*num == ' ')
        num++;
    if (!isdigit((unsigned char)*num) || /* %llu would take "-1" */
        sscanf(line, "%15s %llu %lg %n", word, &bytes, &secs, &used) != 3) {
        snprintf(err, errlen, "%s:%d: expected '<class> <bytes> <seconds>'", path, lineno);
        return -1;
    }
    const char *rest = line + used;
    double lo, hi;
    int used_i = 0;
    if (*rest != '\0' &&
        (version < 3 || sscanf(rest, "%15s %lg %lg %llu %llu %n", verdict, &est, &spread, &n, &m, &used_q) != 5 ||
         (rest[used_q] != '\0' && /* version 4: the estimate's interval */
          (version < 4 || sscanf(rest + used_q, "%lg %lg %n", &lo, &hi, &used_i) != 2 ||
           rest[used_q + used_i] != '\0')))) {
        snprintf(err, errlen, "%s:%d: unexpected text after '<class> <bytes> <seconds>'", path, lineno);
        return -1;
    }
    if (!mop_valid_secs(secs)) {
        snprintf(err, errlen, "%s:%d: negative or invalid time", path, lineno);
        return -1;
    }
    int cls = strcmp(word, "intra") == 0 ? MOP_XFER_INTRA : MOP_XFER_INTER;
    if (mop_xfer_table_add(t, cls, (uint64_t)bytes, secs) != 0) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    return 0;
}

/* "<class> ..." of a version-4 line: the class, or -1. */
static int mop_parse_class(const char *word)
{
    return strcmp(word, "intra") == 0 ? MOP_XFER_INTRA
           : strcmp(word, "inter") == 0 ? MOP_XFER_INTER : -1;
}

/* "parts <class> <bytes> <eager|rendezvous> <o_s> <lo> <hi> <o_r> <lo> <hi>
 * <g> <lo> <hi>": the overheads' estimates go into the class's curves (the
 * rest is for people and for mpi-overlap). Returns 0, or -1 with err. */
static int mop_parse_parts(mop_xfer_table *t, const char *line, const char *path, int lineno,
                           char *err, size_t errlen)
{
    char cls_word[16], protocol[16];
    unsigned long long bytes;
    double v[9];
    int used = 0;
    const char *num = line + 6 + strcspn(line + 6, " ");
    while (*num == ' ')
        num++;
    int cls = -1;
    if (!isdigit((unsigned char)*num) ||
        sscanf(line + 6, "%15s %llu %15s %lg %lg %lg %lg %lg %lg %lg %lg %lg %n", cls_word, &bytes,
               protocol, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &used) != 12 ||
        line[6 + used] != '\0' || (cls = mop_parse_class(cls_word)) < 0 ||
        (strcmp(protocol, "eager") != 0 && strcmp(protocol, "rendezvous") != 0)) {
        snprintf(err, errlen, "%s:%d: expected 'parts <class> <bytes> <eager|rendezvous>' and nine "
                 "times", path, lineno);
        return -1;
    }
    for (int i = 0; i < 9; i++) {
        if (!mop_valid_secs(v[i])) {
            snprintf(err, errlen, "%s:%d: negative or invalid time", path, lineno);
            return -1;
        }
    }
    if (mop_curve_add(&t->parts[cls].o_s, (uint64_t)bytes, v[0]) != 0 ||
        mop_curve_add(&t->parts[cls].o_r, (uint64_t)bytes, v[3]) != 0) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    return 0;
}

/* "eager_limit <class> <bytes|none>". Returns 0, or -1 with err. */
static int mop_parse_eager_limit(mop_xfer_table *t, const char *line, const char *path, int lineno,
                                 char *err, size_t errlen)
{
    char cls_word[16], limit[32];
    int used = 0, cls = -1;
    unsigned long long bytes = 0;
    if (sscanf(line + 12, "%15s %31s %n", cls_word, limit, &used) != 2 || line[12 + used] != '\0' ||
        (cls = mop_parse_class(cls_word)) < 0 ||
        (strcmp(limit, "none") != 0 &&
         (!isdigit((unsigned char)limit[0]) || sscanf(limit, "%llu", &bytes) != 1))) {
        snprintf(err, errlen, "%s:%d: expected 'eager_limit <class> <bytes|none>'", path, lineno);
        return -1;
    }
    t->parts[cls].has_eager = strcmp(limit, "none") != 0;
    t->parts[cls].eager_limit = (uint64_t)bytes;
    return 0;
}

/* One line of the file after the first; 0, 1 after `end`, or -1 with err. */
static int mop_parse_line(mop_xfer_table *t, char *line, const char *path, int lineno,
                          char *err, size_t errlen)
{
    if (line[0] == '\0' || line[0] == '#')
        return 0;
    if (strncmp(line, "coll ", 5) == 0)
        return mop_parse_coll(t, line, path, lineno, err, errlen);
    if (strncmp(line, "intra ", 6) == 0 || strncmp(line, "inter ", 6) == 0)
        return mop_parse_point(t, line, t->version, path, lineno, err, errlen);
    if (t->version >= 4 && strncmp(line, "parts ", 6) == 0)
        return mop_parse_parts(t, line, path, lineno, err, errlen);
    if (t->version >= 4 && strncmp(line, "eager_limit ", 12) == 0)
        return mop_parse_eager_limit(t, line, path, lineno, err, errlen);
    if (strncmp(line, "machine ", 8) == 0) {
        mop_parse_stamp(line + 8, t->machine_fp, sizeof t->machine_fp, t->machine_key,
                        sizeof t->machine_key);
        return 0;
    }
    if (strncmp(line, "toolchain ", 10) == 0) {
        mop_parse_stamp(line + 10, t->toolchain_fp, sizeof t->toolchain_fp, t->toolchain_key,
                        sizeof t->toolchain_key);
        return 0;
    }
    if (strncmp(line, "created ", 8) == 0) {
        snprintf(t->created, sizeof t->created, "%.39s", line + 8);
        return 0;
    }
    if (t->version >= 3 && strncmp(line, "verdict ", 8) == 0) {
        if (mop_parse_verdict(t, line + 8) == 0)
            return 0;
        snprintf(err, errlen, "%s:%d: unknown verdict (known: ok, noisy, suspect, unverified)", path,
                 lineno);
        return -1;
    }
    if (t->version >= 3 && strcmp(line, "end") == 0)
        return 1;
    /* other lines (toolchain_name, ranks, unmeasured, load, source) are for people
     * and for mpi-overlap, which checks them */
    return 0;
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
    bool header = false, ended = false;
    uint64_t hash = MO_FNV1A64_OFFSET;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        hash = mo_fnv1a64_update(hash, line, len);
        if (len == 0 || line[len - 1] != '\n') {
            if (feof(f))
                snprintf(err, errlen, "transfer-time table %s is cut short: its last line has no end "
                         "of line (run mpi-overlap calibrate again)", path);
            else
                snprintf(err, errlen, "%s:%d: line longer than %zu characters", path, lineno,
                         sizeof line - 2);
            rc = -1;
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (ended) {
            if (line[0] != '\0' && line[0] != '#') {
                snprintf(err, errlen, "%s:%d: text after 'end'", path, lineno);
                rc = -1;
            }
            continue;
        }
        if (!header) {
            char word[64];
            int version;
            if (line[0] == '\0' || line[0] == '#')
                continue;
            if (sscanf(line, "%63s %d", word, &version) != 2 ||
                strcmp(word, MOP_XFER_TABLE_FORMAT) != 0) {
                snprintf(err, errlen, "%s is not an mpi-overlap transfer-time table", path);
                rc = -1;
                break;
            }
            if (version < MOP_XFER_TABLE_OLDEST_VERSION || version > MOP_XFER_TABLE_VERSION) {
                snprintf(err, errlen, "%s has table format version %d; this profiler reads %d to %d "
                         "(run mpi-overlap calibrate again)", path, version,
                         MOP_XFER_TABLE_OLDEST_VERSION, MOP_XFER_TABLE_VERSION);
                rc = -1;
                break;
            }
            t->version = version;
            if (version >= 3)
                t->verdict = -1; /* the `verdict` line is required */
            header = true;
            continue;
        }
        int r = mop_parse_line(t, line, path, lineno, err, errlen);
        if (r < 0)
            rc = -1;
        else if (r == 1)
            ended = true;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "cannot read transfer-time table %s", path);
        rc = -1;
    }
    if (rc == 0 && !header) {
        snprintf(err, errlen, "%s is empty", path);
        rc = -1;
    }
    if (rc == 0 && t->version >= 3 && t->verdict < 0) {
        snprintf(err, errlen, "transfer-time table %s has no 'verdict' line", path);
        rc = -1;
    }
    if (rc == 0 && t->version >= 3 && !ended) {
        snprintf(err, errlen, "transfer-time table %s is cut short (no 'end' line; run mpi-overlap "
                 "calibrate again)", path);
        rc = -1;
    }
    /* Which classes a job needs is the runtime's check (mop_runtime.c): a job
     * with one rank per node needs no intra-node times. */
    if (rc == 0 && t->p2p[MOP_XFER_INTRA].npoints == 0 && t->p2p[MOP_XFER_INTER].npoints == 0) {
        snprintf(err, errlen, "%s has no point-to-point transfer times", path);
        rc = -1;
    }
    snprintf(t->hash, sizeof t->hash, "%016llx", (unsigned long long)hash);
    fclose(f);
    return rc;
}

/* The curve's time at `bytes` (see mop_xfer_table_lookup). */
static double mop_curve_lookup(const mop_xfer_curve *c, uint64_t bytes, bool *extrapolated)
{
    const mop_xfer_point *p = c->points;
    size_t n = c->npoints;
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

bool mop_xfer_table_has_class(const mop_xfer_table *t, int cls)
{
    return t->p2p[cls].npoints > 0;
}

bool mop_xfer_table_eager(const mop_xfer_table *t, int cls, uint64_t bytes, double xfer_s,
                          double *o_s, double *o_r)
{
    if (t->p2p[cls].npoints == 0) /* as mop_xfer_table_lookup prices it */
        cls = cls == MOP_XFER_INTRA ? MOP_XFER_INTER : MOP_XFER_INTRA;
    const mop_xfer_parts *p = &t->parts[cls];
    if (!p->has_eager || bytes > p->eager_limit || p->o_s.npoints == 0 || p->o_r.npoints == 0)
        return false;
    bool ex;
    double s = mop_curve_lookup(&p->o_s, bytes, &ex), r = mop_curve_lookup(&p->o_r, bytes, &ex);
    *o_s = s < xfer_s ? s : xfer_s;
    *o_r = r < xfer_s ? r : xfer_s;
    return true;
}

double mop_xfer_table_lookup(const mop_xfer_table *t, int cls, uint64_t bytes,
                             bool *extrapolated)
{
    /* A class the table lacks is priced with the other one (the runtime counts
     * inter_as_intra; it refuses a job whose ranks share a node without intra). */
    if (t->p2p[cls].npoints == 0)
        cls = cls == MOP_XFER_INTRA ? MOP_XFER_INTER : MOP_XFER_INTRA;
    return mop_curve_lookup(&t->p2p[cls], bytes, extrapolated);
}

/* The op's series with comm_size ranks, else the nearest comm size (ties:
 * the larger, which moves at least as much data); NULL when the op has none. */
static const mop_xfer_series *mop_find_series(const mop_xfer_table *t, int op, int comm_size)
{
    const mop_xfer_series *best = NULL;
    long long best_d = 0;
    for (size_t i = 0; i < t->ncoll; i++) {
        const mop_xfer_series *s = &t->coll[i];
        if (s->op != op || s->curve.npoints == 0)
            continue;
        long long d = llabs((long long)s->comm_size - comm_size);
        if (!best || d < best_d || (d == best_d && s->comm_size > best->comm_size)) {
            best = s;
            best_d = d;
        }
    }
    return best;
}

/* How an op's time grows with the communicator size p, for sizes without a
 * series of their own (docs/method.md, "Collective transfer times"): with the
 * message size defined per process, the rooted, all-to-all and gather-like
 * ops move p blocks (linear in p), the reductions, broadcasts, scans and the
 * barrier run as trees or recursive doubling (log p); a neighbourhood
 * collective's cost follows its topology's degree, not p: no model. */
typedef enum mop_coll_growth { MOP_GROW_NONE, MOP_GROW_LOG, MOP_GROW_LINEAR } mop_coll_growth;

static mop_coll_growth mop_coll_growth_of(int op)
{
    switch (op >= MOP_COLL_NB_OFFSET ? op - MOP_COLL_NB_OFFSET : op) {
    case MOP_COLL_GATHER: case MOP_COLL_GATHERV: case MOP_COLL_SCATTER: case MOP_COLL_SCATTERV:
    case MOP_COLL_ALLGATHER: case MOP_COLL_ALLGATHERV: case MOP_COLL_ALLTOALL:
    case MOP_COLL_ALLTOALLV: case MOP_COLL_ALLTOALLW: case MOP_COLL_REDUCE_SCATTER:
    case MOP_COLL_REDUCE_SCATTER_BLOCK:
        return MOP_GROW_LINEAR;
    case MOP_COLL_NEIGHBOR_ALLGATHER: case MOP_COLL_NEIGHBOR_ALLGATHERV:
    case MOP_COLL_NEIGHBOR_ALLTOALL: case MOP_COLL_NEIGHBOR_ALLTOALLV:
    case MOP_COLL_NEIGHBOR_ALLTOALLW:
        return MOP_GROW_NONE;
    default:
        return MOP_GROW_LOG;
    }
}

static double mop_growth_x(mop_coll_growth g, int comm_size)
{
    return g == MOP_GROW_LINEAR ? (double)comm_size : log2((double)comm_size);
}

/* The two calibrated sizes of the op that the size model interpolates or
 * extrapolates from: the ones just below and above comm_size when there are
 * both (*between set), else the two nearest on its one side; *a is the
 * smaller. NULL when the op has fewer than two sizes. One pass: the two
 * largest sizes under comm_size and the two smallest over it. */
static void mop_model_pair(const mop_xfer_table *t, int op, int comm_size,
                           const mop_xfer_series **a, const mop_xfer_series **b, bool *between)
{
    const mop_xfer_series *lo[2] = {NULL, NULL}, *hi[2] = {NULL, NULL}; /* nearest first */
    for (size_t i = 0; i < t->ncoll; i++) {
        const mop_xfer_series *s = &t->coll[i];
        if (s->op != op || s->curve.npoints == 0 || s->comm_size == comm_size)
            continue;
        const mop_xfer_series **side = s->comm_size < comm_size ? lo : hi;
        int d = abs(s->comm_size - comm_size);
        if (!side[0] || d < abs(side[0]->comm_size - comm_size)) {
            side[1] = side[0];
            side[0] = s;
        } else if (!side[1] || d < abs(side[1]->comm_size - comm_size)) {
            side[1] = s;
        }
    }
    *between = lo[0] && hi[0];
    *a = *between ? lo[0] : lo[0] ? lo[1] : hi[0];
    *b = *between ? hi[0] : lo[0] ? lo[0] : hi[1];
}

/* The time of `bytes` on comm_size ranks from the op's series of other
 * sizes (the op has some, none of comm_size): linear in the growth's x
 * between the two calibrated sizes around it; beyond the calibrated sizes,
 * the slope of the two nearest, never falling with p (noise between two
 * sizes must not make larger communicators faster) nor below 0; with one
 * size, or an op without a model, the nearest series' time. */
static double mop_coll_size_model(const mop_xfer_table *t, int op, int comm_size, uint64_t bytes,
                                  bool *ex)
{
    mop_coll_growth g = mop_coll_growth_of(op);
    const mop_xfer_series *a = NULL, *b = NULL;
    bool between = false;
    if (g != MOP_GROW_NONE && comm_size >= 1) /* < 1: no x of a real size */
        mop_model_pair(t, op, comm_size, &a, &b, &between);
    if (!a || !b)
        return mop_curve_lookup(&mop_find_series(t, op, comm_size)->curve, bytes, ex);
    bool ex_a, ex_b;
    double ta = mop_curve_lookup(&a->curve, bytes, &ex_a);
    double tb = mop_curve_lookup(&b->curve, bytes, &ex_b);
    *ex = ex_a || ex_b;
    double xa = mop_growth_x(g, a->comm_size), xb = mop_growth_x(g, b->comm_size);
    double x = mop_growth_x(g, comm_size);
    double slope = (tb - ta) / (xb - xa);
    if (between)
        return ta + slope * (x - xa);
    if (slope < 0.0)
        slope = 0.0;
    double secs = x > xb ? tb + slope * (x - xb) : ta - slope * (xa - x);
    return secs > 0.0 ? secs : 0.0;
}

double mop_xfer_table_lookup_coll(const mop_xfer_table *t, int op, int comm_size,
                                  uint64_t bytes, unsigned *flags)
{
    bool ex = false;
    double secs;
    *flags = 0;
    const mop_xfer_series *s = mop_find_series(t, op, comm_size);
    if (!s && op >= MOP_COLL_NB_OFFSET && op < MOP_XFER_NCOLL_OPS) {
        op -= MOP_COLL_NB_OFFSET;
        s = mop_find_series(t, op, comm_size);
        if (s)
            *flags |= MOP_XFER_COLL_NB_AS_BLOCKING;
    }
    if (s && s->comm_size == comm_size) {
        secs = mop_curve_lookup(&s->curve, bytes, &ex);
    } else if (s) {
        *flags |= MOP_XFER_COLL_SIZE_MODELLED;
        secs = mop_coll_size_model(t, op, comm_size, bytes, &ex);
    } else {
        *flags |= MOP_XFER_COLL_UNCALIBRATED;
        secs = mop_xfer_table_lookup(t, MOP_XFER_INTRA, bytes, &ex);
    }
    if (ex)
        *flags |= MOP_XFER_EXTRAPOLATED;
    return secs;
}
