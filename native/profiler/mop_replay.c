/* mop_replay.c - test driver for the processing module: reads the replay
 * text format of docs/profiler.md from stdin (times in ns), feeds the events
 * to mop_process exactly as the runtime would, and prints the closed
 * transfers and the profile object as JSON. The property tests compare it
 * with an independent Python implementation.
 *
 * Two settings make the runtime's other forms of the same stream, which must
 * give the same document (but for the events counter):
 * MOP_REPLAY_FUSE=1 records each ENTER, BEGIN, EXIT whose BEGIN has the
 * ENTER's time as ENTER, POST, as the wrappers of a post do (mop_event.h);
 * MOP_REPLAY_BATCH=k hands the events over k at a time, as a queue of k
 * events would; MOP_REPLAY_BATCH=k1,k2,... in batches of those sizes in turn,
 * as a queue processed partly while its thread waits (mop_idle.h) and partly
 * when full is. MOP_REPLAY_OBSERVE=0 runs the engine without an observer, as
 * the runtime does (the transfers array then stays empty): the profile must be
 * the observed run's, though completions then take the engine's short path
 * (mop_end_fast), which an observer turns off. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mop_process.h"
#include "mop_profile_json.h"
#include "grow.h"

typedef struct replay_names {
    char *names[MOP_MAX_FN];
    size_t n;
} replay_names;

static uint16_t replay_intern(replay_names *t, const char *name, size_t cap)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0)
            return (uint16_t)i;
    if (t->n == cap) {
        fprintf(stderr, "mop_replay: too many names\n");
        exit(2);
    }
    t->names[t->n] = strdup(name);
    return (uint16_t)t->n++;
}

typedef struct replay_ctx {
    mo_json *w;
    replay_names *fns, *regions;
} replay_ctx;

/* A parts point of the intra class, as a table's `parts` line gives it. */
static int replay_add_parts(mop_xfer_table *t, uint64_t bytes, double o_s, double o_r)
{
    mop_xfer_curve *c[2] = {&t->parts[MOP_XFER_INTRA].o_s, &t->parts[MOP_XFER_INTRA].o_r};
    double v[2] = {o_s, o_r};
    for (int k = 0; k < 2; k++) {
        if (c[k]->npoints == c[k]->cap) {
            mop_xfer_point *np = mo_grow(c[k]->points, &c[k]->cap, sizeof *np, 8);
            if (!np)
                return -1;
            c[k]->points = np;
        }
        size_t i = c[k]->npoints;
        if (i > 0 && c[k]->points[i - 1].bytes >= bytes)
            return -1; /* ascending sizes, as in a table file */
        c[k]->points[i] = (mop_xfer_point){.bytes = bytes, .seconds = v[k]};
        c[k]->npoints++;
    }
    return 0;
}

/* The MOP_PART_* of a function name (mop_runtime.c sets the same by id). */
static uint8_t replay_part_of(const char *fn)
{
    static const char *const sends[] = {"MPI_Send", "MPI_Bsend", "MPI_Rsend",
                                        "MPI_Send_c", "MPI_Bsend_c", "MPI_Rsend_c"};
    static const char *const recvs[] = {"MPI_Recv", "MPI_Mrecv", "MPI_Recv_c", "MPI_Mrecv_c"};
    for (size_t i = 0; i < sizeof sends / sizeof sends[0]; i++)
        if (strcmp(fn, sends[i]) == 0)
            return MOP_PART_EAGER_SEND;
    for (size_t i = 0; i < sizeof recvs / sizeof recvs[0]; i++)
        if (strcmp(fn, recvs[i]) == 0)
            return MOP_PART_RECV;
    return MOP_PART_WHOLE;
}

static const char *const replay_kind_names[] = {"send",     "recv",     "null", "unknown",
                                                 "rma-send", "rma-recv", "greq"};

/* MOP_REPLAY_FUSE: ENTER, BEGIN (at the ENTER's time), EXIT -> ENTER, POST
 * (at the EXIT's time) in place; returns the new length. */
static size_t replay_fuse_posts(mop_event *ev, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        ev[out++] = ev[i];
        if (ev[i].type == MOP_EV_ENTER && i + 2 < n && ev[i + 1].type == MOP_EV_BEGIN &&
            ev[i + 1].t == ev[i].t && ev[i + 2].type == MOP_EV_EXIT) {
            mop_event post = ev[i + 1];
            post.type = MOP_EV_POST;
            post.t = ev[i + 2].t;
            ev[out++] = post;
            i += 2;
        }
    }
    return out;
}

static size_t replay_env_size(const char *name, size_t fallback)
{
    const char *v = getenv(name);
    return v && *v ? (size_t)strtoull(v, NULL, 10) : fallback;
}

/* MOP_REPLAY_BATCH: up to 16 batch sizes, used in turn; none (0): all at once. */
static size_t replay_batches(size_t *sizes, size_t max)
{
    const char *v = getenv("MOP_REPLAY_BATCH");
    size_t n = 0;
    while (v && *v && n < max) {
        char *end;
        sizes[n] = (size_t)strtoull(v, &end, 10);
        if (end == v || sizes[n] == 0)
            break;
        n++;
        v = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void replay_on_transfer(void *vctx, const mop_transfer *tr)
{
    replay_ctx *c = vctx;
    mo_json *w = c->w;
    mo_json_begin_object(w);
    if (tr->has_key) {
        mo_json_kv_uint64(w, "key", tr->key);
    } else {
        mo_json_key(w, "key");
        mo_json_null(w);
    }
    mo_json_kv_int64(w, "bytes", tr->bytes);
    mo_json_kv_string(w, "kind", tr->kind >= MOP_KIND_COLL
                                     ? mop_coll_op_name(tr->kind - MOP_KIND_COLL)
                                     : replay_kind_names[tr->kind]);
    mo_json_kv_string(w, "fn", c->fns->names[tr->fn]);
    mo_json_kv_string(w, "region", c->regions->names[tr->region]);
    mo_json_kv_string(w, "case", mop_case_name(tr->b.kase));
    mo_json_kv_double(w, "xfer_s", tr->b.xfer_s);
    mo_json_kv_double(w, "min_s", tr->b.min_s);
    mo_json_kv_double(w, "max_s", tr->b.max_s);
    mo_json_end_object(w);
}

static int replay_kind(const char *s)
{
    for (int k = 0; k <= MOP_KIND_GREQ; k++)
        if (k != MOP_KIND_UNKNOWN && strcmp(s, replay_kind_names[k]) == 0)
            return k;
    int op = mop_coll_op_parse(s); /* a collective: "bcast", "ibcast", ... */
    if (op >= 0)
        return MOP_KIND_COLL + op;
    fprintf(stderr, "mop_replay: bad kind '%s'\n", s);
    exit(2);
}

static void replay_bad(int lineno, const char *line)
{
    fprintf(stderr, "mop_replay: line %d: cannot read '%s'\n", lineno, line);
    exit(2);
}

int main(void)
{
    static replay_names fns, regions;
    static mop_process proc;
    mop_xfer_table table;
    uint64_t edges[MOP_MAX_BIN_EDGES];
    size_t nedges = 0;
    mop_xfer_table_init(&table);
    replay_intern(&regions, "(no region)", MOP_MAX_REGIONS);

    /* Events are buffered and processed at the end, as the runtime's queue
     * does, so that table and bins lines may come anywhere. */
    size_t cap = 1024, n = 0;
    mop_event *ev = malloc(cap * sizeof *ev);
    char line[512];
    int lineno = 0;
    while (ev && fgets(line, sizeof line, stdin)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char cmd[32], a[256], b[64], c[64], c2[64], d[256];
        unsigned long long t = 0, key = 0, u = 0;
        long long bytes = 0, arg = -1;
        double secs;
        int fields = sscanf(line, "%31s", cmd);
        if (fields != 1 || cmd[0] == '#')
            continue;
        if (n == cap) {
            mop_event *ne = realloc(ev, 2 * cap * sizeof *ev);
            if (!ne)
                break;
            ev = ne;
            cap *= 2;
        }
        mop_event e = {0};
        e.arg = -1;
        if (strcmp(cmd, "table") == 0 && sscanf(line, "%*s %63s", b) == 1 &&
            strcmp(b, "coll") == 0) {
            /* table coll <op> <comm size> <bytes> <seconds>: a collective series point */
            if (sscanf(line, "%*s %*s %63s %lld %llu %lg", c, &arg, &u, &secs) != 4 ||
                mop_xfer_table_add_coll(&table, mop_coll_op_parse(c), (int)arg, u, secs) != 0)
                replay_bad(lineno, line);
            continue;
        } else if (strcmp(cmd, "table") == 0 && sscanf(line, "%*s %63s", b) == 1 &&
                   strcmp(b, "parts") == 0) {
            /* table parts <bytes> <o_s> <o_r>: the transfer model's parts (intra) */
            double o_r;
            if (sscanf(line, "%*s %*s %llu %lg %lg", &u, &secs, &o_r) != 3 ||
                replay_add_parts(&table, u, secs, o_r) != 0)
                replay_bad(lineno, line);
            continue;
        } else if (strcmp(cmd, "table") == 0 && sscanf(line, "%*s %63s", b) == 1 &&
                   strcmp(b, "eager_limit") == 0) {
            /* table eager_limit <bytes>: eager up to it (intra) */
            if (sscanf(line, "%*s %*s %llu", &u) != 1)
                replay_bad(lineno, line);
            table.parts[MOP_XFER_INTRA].has_eager = true;
            table.parts[MOP_XFER_INTRA].eager_limit = u;
            continue;
        } else if (strcmp(cmd, "table") == 0) {
            if (sscanf(line, "%*s %llu %lg", &u, &secs) != 2)
                replay_bad(lineno, line);
            mop_xfer_table_add(&table, MOP_XFER_INTRA, u, secs);
            continue;
        } else if (strcmp(cmd, "bins") == 0) {
            char *save = NULL, *tok = strtok_r(line + 4, " ", &save);
            for (; tok && nedges < MOP_MAX_BIN_EDGES; tok = strtok_r(NULL, " ", &save))
                edges[nedges++] = strtoull(tok, NULL, 10);
            continue;
        } else if (strcmp(cmd, "enter") == 0) {
            if (sscanf(line, "%*s %llu %255s", &t, a) != 2)
                replay_bad(lineno, line);
            e = (mop_event){.type = MOP_EV_ENTER, .t = t, .id = replay_intern(&fns, a, MOP_MAX_FN)};
        } else if (strcmp(cmd, "exit") == 0) {
            if (sscanf(line, "%*s %llu", &t) != 1)
                replay_bad(lineno, line);
            e = (mop_event){.type = MOP_EV_EXIT, .t = t};
        } else if (strcmp(cmd, "begin") == 0 || strcmp(cmd, "join") == 0) {
            arg = -1;
            if (sscanf(line, "%*s %llu %llu %lld %63s %255s %lld", &t, &key, &bytes, b, d, &arg) < 5)
                replay_bad(lineno, line);
            e = (mop_event){.type = cmd[0] == 'b' ? MOP_EV_BEGIN : MOP_EV_JOIN, .t = t,
                            .key = key, .bytes = bytes,
                            .kind = (uint8_t)replay_kind(b),
                            .id = replay_intern(&fns, d, MOP_MAX_FN), .arg = (int32_t)arg};
        } else if (strcmp(cmd, "end") == 0) {
            c[0] = c2[0] = '\0';
            if (sscanf(line, "%*s %llu %llu %lld %63s %63s", &t, &key, &bytes, c, c2) < 3)
                replay_bad(lineno, line);
            const char *words[2] = {c, c2};
            int flags = 0;
            for (int k = 0; k < 2 && words[k][0]; k++) {
                if (strcmp(words[k], "cancelled") == 0)
                    flags |= MOP_END_CANCELLED;
                else if (strcmp(words[k], "query") == 0)
                    flags |= MOP_END_QUERY;
                else
                    replay_bad(lineno, line);
            }
            e = (mop_event){.type = MOP_EV_END, .t = t, .key = key, .bytes = bytes,
                            .kind = (uint8_t)flags};
        } else if (strcmp(cmd, "incall") == 0) {
            arg = -1;
            if (sscanf(line, "%*s %llu %lld %63s %255s %lld", &t, &bytes, b, d, &arg) < 4)
                replay_bad(lineno, line);
            e = (mop_event){.type = MOP_EV_INCALL, .t = t, .bytes = bytes,
                            .kind = (uint8_t)replay_kind(b),
                            .id = replay_intern(&fns, d, MOP_MAX_FN), .arg = (int32_t)arg};
        } else if (strcmp(cmd, "pinit") == 0) {
            arg = -1;
            if (sscanf(line, "%*s %llu %lld %63s %255s %lld", &key, &bytes, b, d, &arg) < 4)
                replay_bad(lineno, line);
            e = (mop_event){.type = MOP_EV_PINIT, .key = key, .bytes = bytes,
                            .kind = (uint8_t)replay_kind(b),
                            .id = replay_intern(&fns, d, MOP_MAX_FN), .arg = (int32_t)arg};
        } else if (strcmp(cmd, "start") == 0 || strcmp(cmd, "free") == 0) {
            if (sscanf(line, "%*s %llu %llu", &t, &key) != 2)
                replay_bad(lineno, line);
            e = (mop_event){.type = cmd[0] == 's' ? MOP_EV_START : MOP_EV_FREE, .t = t, .key = key};
        } else if (strcmp(cmd, "region_begin") == 0 || strcmp(cmd, "region_end") == 0) {
            if (sscanf(line, "%*s %llu %255s", &t, a) != 2)
                replay_bad(lineno, line);
            e = (mop_event){.type = cmd[7] == 'b' ? MOP_EV_REGION_BEGIN : MOP_EV_REGION_END,
                            .t = t, .id = replay_intern(&regions, a, MOP_MAX_REGIONS)};
        } else if (strcmp(cmd, "pcontrol") == 0) {
            long long level;
            if (sscanf(line, "%*s %llu %lld", &t, &level) != 2)
                replay_bad(lineno, line);
            e = (mop_event){.type = MOP_EV_PCONTROL, .t = t, .arg = (int32_t)level};
        } else if (strcmp(cmd, "finish") == 0) {
            if (sscanf(line, "%*s %llu", &t) != 1)
                replay_bad(lineno, line);
            continue; /* the end: outstanding transfers are closed after the loop */
        } else {
            replay_bad(lineno, line);
        }
        ev[n++] = e;
    }
    if (!ev) {
        fprintf(stderr, "mop_replay: out of memory\n");
        return 1;
    }

    mo_json w;
    mo_json_init(&w, stdout);
    replay_ctx ctx = {.w = &w, .fns = &fns, .regions = &regions};
    static uint8_t part_fns[MOP_MAX_FN];
    for (size_t i = 0; i < fns.n; i++)
        part_fns[i] = replay_part_of(fns.names[i]);
    mop_process_config cfg = {.table = &table, .s_per_tick = 1e-9, .callsites = true,
                              .part_fns = part_fns,
                              .bin_edges = nedges ? edges : NULL, .nbin_edges = nedges,
                              .on_transfer = replay_on_transfer, .on_transfer_ctx = &ctx};
    if (!replay_env_size("MOP_REPLAY_OBSERVE", 1))
        cfg.on_transfer = NULL;
    if (mop_process_init(&proc, &cfg) != 0)
        return 1;
    mo_json_begin_object(&w);
    mo_json_key(&w, "transfers");
    mo_json_begin_array(&w);
    if (replay_env_size("MOP_REPLAY_FUSE", 0))
        n = replay_fuse_posts(ev, n);
    size_t batches[16], nbatches = replay_batches(batches, 16);
    for (size_t i = 0, b = 0; i < n; b++) {
        size_t k = nbatches ? batches[b % nbatches] : n;
        k = k < n - i ? k : n - i;
        mop_process_events(&proc, ev + i, k);
        i += k;
    }
    mop_process_finish(&proc);
    mo_json_end_array(&w);
    mo_json_key(&w, "profile");
    mop_names names = {.fn = (const char *const *)fns.names, .nfn = fns.n,
                       .region = (const char *const *)regions.names, .nregion = regions.n};
    mop_profile_json(&w, &proc, &names);
    mo_json_end_object(&w);
    int rc = mo_json_finish(&w);
    fputc('\n', stdout);
    mop_process_free(&proc);
    mop_xfer_table_free(&table);
    free(ev);
    for (size_t i = 0; i < fns.n; i++)
        free(fns.names[i]);
    for (size_t i = 0; i < regions.n; i++)
        free(regions.names[i]);
    return rc == 0 ? 0 : 1;
}
