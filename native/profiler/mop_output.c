/* mop_output.c - writes one rank's profile document; see mop_output.h. */
#define _POSIX_C_SOURCE 200809L
#include "mop_output.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "mop_places.h"

/* Every address naming a call site, a chain's frames included (read once: a
 * chain's frames come from a locked table), into addr; their count. */
static size_t mop_site_addresses(const mop_sites *s, const mop_names *names, uint64_t *addr,
                                 size_t cap)
{
    size_t n = 0;
    for (uint16_t i = 1; i < s->nsite && n < cap; i++) {
        int k = names->frames ? names->frames(s->site[i].addr, addr + n, (int)(cap - n)) : 0;
        if (k == 0)
            addr[n++] = s->site[i].addr;
        else
            n += (size_t)k;
    }
    return n;
}

static bool mop_holds_any(const uint64_t *addr, size_t n, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < n; i++)
        if (addr[i] >= lo && addr[i] < hi)
            return true;
    return false;
}

/* The process's executable file mappings that hold a call site, from
 * /proc/self/maps, read when the profile is written (so libraries loaded after
 * MPI_Init are in): what turns a call site's address into a file and an offset
 * in it, ASLR and PIE included (docs/profiler.md, "Call sites"). Only those
 * with a site: a process maps dozens of libraries, and the profile stays small.
 * An empty array where /proc is missing. */
typedef struct mop_maps_ctx {
    mo_json *w;
    const uint64_t *addr;
    size_t naddr;
} mop_maps_ctx;

static void mop_map_json(void *ctx, uint64_t lo, uint64_t hi, uint64_t off, const char *path)
{
    const mop_maps_ctx *c = ctx;
    if (!mop_holds_any(c->addr, c->naddr, lo, hi))
        return;
    char buf[32];
    mo_json_begin_object(c->w);
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)lo);
    mo_json_kv_string(c->w, "start", buf);
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)hi);
    mo_json_kv_string(c->w, "end", buf);
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)off);
    mo_json_kv_string(c->w, "offset", buf);
    mo_json_kv_string(c->w, "path", path);
    mo_json_end_object(c->w);
}

static void mop_maps_json(mo_json *w, const mop_sites *sites, const mop_names *names)
{
    /* large; profiles are written one at a time (the runtime's lock, or one thread) */
    static uint64_t addr[MOP_MAX_SITES * MOP_SITE_FRAMES];
    mop_maps_ctx ctx = {w, addr, mop_site_addresses(sites, names, addr,
                                                    sizeof addr / sizeof addr[0])};
    mo_json_key(w, "maps");
    mo_json_begin_array(w);
    mop_places_each(mop_map_json, &ctx); /* as mop_places_load read them last */
    mo_json_end_array(w);
}

double mop_output_off_cpu_s(const mop_output_cpu *c, double s_per_tick)
{
    double off = (double)c->sums.piece_ticks * s_per_tick - (double)c->sums.piece_cpu_ns * 1e-9;
    return off > 0 ? off : 0.0;
}

/* The "cpu" object (schema profile-rank-v1, docs/profiler.md "Computation as
 * CPU time"). */
static void mop_cpu_json(mo_json *w, const mop_output_cpu *c, double s_per_tick)
{
    mo_json_key(w, "cpu");
    mo_json_begin_object(w);
    mo_json_kv_string(w, "clock", "CLOCK_THREAD_CPUTIME_ID");
    if (c->read_ns > 0)
        mo_json_kv_double(w, "read_ns", c->read_ns);
    if (c->min_piece_s > 0)
        mo_json_kv_double(w, "min_piece_s", c->min_piece_s);
    else
        mo_json_kv_double(w, "min_piece_s", NAN); /* null: reads off */
    mo_json_kv_uint64(w, "reads", c->sums.reads);
    mo_json_kv_uint64(w, "pieces", c->sums.pieces);
    mo_json_kv_uint64(w, "pieces_bounded", c->sums.pieces_bounded);
    mo_json_kv_double(w, "pieces_s", (double)c->sums.piece_ticks * s_per_tick);
    mo_json_kv_double(w, "pieces_cpu_s", (double)c->sums.piece_cpu_ns * 1e-9);
    mo_json_kv_double(w, "off_cpu_s", mop_output_off_cpu_s(c, s_per_tick));
    if (c->sched) {
        mo_json_kv_double(w, "thread_cpu_s", c->thread_cpu_s);
        mo_json_kv_double(w, "run_delay_s", c->run_delay_s);
    } else {
        mo_json_kv_double(w, "thread_cpu_s", NAN); /* null: not available */
        mo_json_kv_double(w, "run_delay_s", NAN);
    }
    mo_json_end_object(w);
}

void mop_output_rank_path(char *path, size_t cap, const char *outdir, int rank)
{
    snprintf(path, cap, "%s/profile.rank-%d.json", outdir, rank);
}

/* The document into f: indented, or on one line (a JSON Lines record).
 * Returns mo_json_finish's result. */
static int mop_output_doc(FILE *f, const mop_output_info *info, const mop_process *p,
                          bool one_line)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    mo_json w;
    if (one_line)
        mo_json_init_line(&w, f);
    else
        mo_json_init(&w, f);
    mo_json_begin_document(&w, "mpi-overlap/profile-rank", 1);
    mo_json_kv_string(&w, "tool_version", MO_VERSION);
    mo_json_kv_string(&w, "status", info->status);
    mo_json_kv_string(&w, "reason", info->reason);
    mo_json_kv_int64(&w, "rank", info->rank);
    mo_json_kv_int64(&w, "size", info->size);
    mo_json_kv_int64(&w, "nodes", info->nodes);
    mo_json_kv_string(&w, "host", host);
    mo_json_kv_int64(&w, "pid", (int64_t)getpid());
    mo_json_kv_int64(&w, "threads", info->threads);
    mo_json_kv_string(&w, "mpi_library_version", info->library_version);
    mo_json_key(&w, "table");
    mo_json_begin_object(&w);
    mo_json_kv_string(&w, "path", info->table_path[0] ? info->table_path : NULL);
    mo_json_kv_string(&w, "machine_fp", info->table->machine_fp);
    mo_json_kv_string(&w, "toolchain_fp", info->table->toolchain_fp);
    mo_json_kv_bool(&w, "forced", info->table_forced);
    mo_json_kv_string(&w, "hash", info->table->hash[0] ? info->table->hash : NULL);
    mo_json_kv_string(&w, "created", info->table->created[0] ? info->table->created : NULL);
    mo_json_kv_string(&w, "verdict", mop_xfer_verdict_name(info->table->verdict));
    mo_json_end_object(&w);
    mo_json_key(&w, "clock");
    mo_json_begin_object(&w);
    mo_json_kv_string(&w, "source", info->clock);
    mo_json_kv_double(&w, "s_per_tick", info->s_per_tick);
    if (info->clock_read_ns > 0)
        mo_json_kv_double(&w, "read_ns", info->clock_read_ns);
    mo_json_key(&w, "anchors");
    mo_json_begin_array(&w);
    for (int i = 0; i < 2; i++) {
        if (info->anchors[i].ticks == 0)
            continue;
        mo_json_begin_object(&w);
        mo_json_kv_uint64(&w, "ticks", info->anchors[i].ticks);
        mo_json_kv_double(&w, "realtime_s", info->anchors[i].realtime_s);
        mo_json_kv_double(&w, "uncertainty_s", info->anchors[i].uncertainty_s);
        mo_json_end_object(&w);
    }
    mo_json_end_array(&w);
    mo_json_end_object(&w);
    mo_json_kv_double(&w, "wall_s", info->wall_s);
    if (info->start_s > 0) {
        mo_json_key(&w, "library_s");
        mo_json_begin_object(&w);
        mo_json_kv_double(&w, "init", info->start_s);
        if (info->stop_s > 0)
            mo_json_kv_double(&w, "finalize", info->stop_s);
        mo_json_end_object(&w);
    }
    if (info->cpu)
        mop_cpu_json(&w, info->cpu, info->s_per_tick);
    mo_json_kv_int64(&w, "queue_events", info->queue_events);
    if (info->count_only)
        mo_json_kv_string(&w, "processing", "off");
    if (info->trace && info->trace->wanted) {
        mo_json_key(&w, "trace");
        mop_trace_stats_json(&w, info->trace);
    }
    mop_maps_json(&w, &p->sites, &info->names);
    mo_json_key(&w, "profile");
    mop_profile_json(&w, p, &info->names);
    mo_json_end_object(&w);
    return mo_json_finish(&w);
}

int mop_output_line(const mop_output_info *info, const mop_process *p, char **line,
                    size_t *len)
{
    *line = NULL;
    *len = 0;
    FILE *f = open_memstream(line, len);
    if (!f)
        return -1;
    int bad = mop_output_doc(f, info, p, true) != 0;
    if (fclose(f) != 0 || bad) {
        free(*line);
        *line = NULL;
        *len = 0;
        return -1;
    }
    return 0;
}

/* What goes into a rank's file (mop_write_doc). */
typedef struct mop_doc_source {
    const mop_output_info *info; /* a document to write, or */
    const mop_process *p;
    const char *text;            /* one already written */
    size_t len;
} mop_doc_source;

static int mop_write_doc(FILE *f, const void *ctx)
{
    const mop_doc_source *src = ctx;
    /* the files have always ended in an empty line; kept, for readers that compare bytes */
    return src->info ? mop_output_doc(f, src->info, src->p, false) != 0 || fputc('\n', f) == EOF
                     : fwrite(src->text, 1, src->len, f) != src->len;
}

int mop_output_write_whole(const char *path, int (*write)(FILE *f, const void *ctx),
                           const void *ctx, char *err, size_t errlen)
{
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    errno = 0;
    int bad = write(f, ctx) != 0;
    int why = bad ? errno : 0;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        why = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        why = errno;
    }
    if (bad) {
        snprintf(err, errlen, "cannot write %s: %s", path, why ? strerror(why) : "write error");
        remove(tmp);
        return -1;
    }
    return 0;
}

int mop_output_write(const char *outdir, const mop_output_info *info, const mop_process *p,
                     char *err, size_t errlen)
{
    char path[1200];
    mop_output_rank_path(path, sizeof path, outdir, info->rank);
    mop_doc_source src = {.info = info, .p = p};
    return mop_output_write_whole(path, mop_write_doc, &src, err, errlen);
}

int mop_output_write_text(const char *outdir, int rank, const char *text, size_t len,
                          char *err, size_t errlen)
{
    char path[1200];
    mop_output_rank_path(path, sizeof path, outdir, rank);
    mop_doc_source src = {.text = text, .len = len};
    return mop_output_write_whole(path, mop_write_doc, &src, err, errlen);
}
