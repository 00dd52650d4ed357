/* mop_trace.c - writes one rank's timeline trace; the format and the rules
 * (cap, crash safety) are in mop_trace.h and docs/profiler.md. */
#define _POSIX_C_SOURCE 200809L
#include "mop_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mop_xfer_table.h"

_Static_assert(sizeof(mop_event) == MOP_TRACE_EVENT_BYTES, "events are written as they are");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the trace format is little-endian and events are written as in memory");

/* ---- low-level writing (called with tr->lock held) ------------------------ */

static void mop_put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void mop_put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static void mop_putf64(unsigned char *p, double v)
{
    memcpy(p, &v, 8);
}

/* Stops writing for good: the reason is kept for the profile document. */
static void mop_trace_fail(mop_trace *tr, const char *what, int err)
{
    if (!tr->st.error[0])
        snprintf(tr->st.error, sizeof tr->st.error, "%s %s: %s", what, tr->st.file,
                 strerror(err));
    if (tr->fd >= 0)
        close(tr->fd);
    tr->fd = -1;
}

/* Writes all of iov (one writev in the normal case). */
static int mop_writev_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

static int mop_write_chunk_raw(mop_trace *tr, uint32_t type, uint32_t thread, uint32_t count,
                               const void *payload, size_t bytes)
{
    unsigned char h[MOP_TRACE_CHUNK_BYTES];
    mop_put32(h, type);
    mop_put32(h + 4, thread);
    mop_put32(h + 8, count);
    mop_put32(h + 12, (uint32_t)bytes);
    struct iovec iov[2] = {{h, sizeof h}, {(void *)payload, bytes}};
    if (mop_writev_all(tr->fd, iov, bytes ? 2 : 1) != 0) {
        mop_trace_fail(tr, "cannot write", errno);
        return -1;
    }
    tr->st.bytes += sizeof h + bytes;
    return 0;
}

static bool mop_writing(const mop_trace *tr)
{
    return tr->fd >= 0 && !tr->finished && !tr->st.truncated;
}

/* count fixed-size records of one thread: as many as the cap allows; the
 * rest are counted in *dropped and end the trace (truncated). */
static void mop_write_records(mop_trace *tr, uint32_t type, uint32_t thread, const void *recs,
                              size_t count, size_t rec_bytes, uint64_t *written,
                              uint64_t *dropped)
{
    if (count == 0 || tr->finished)
        return;
    size_t fit = 0;
    if (mop_writing(tr)) {
        uint64_t room = tr->st.cap_bytes > tr->st.bytes ? tr->st.cap_bytes - tr->st.bytes : 0;
        uint64_t max = room > MOP_TRACE_CHUNK_BYTES ? (room - MOP_TRACE_CHUNK_BYTES) / rec_bytes
                                                    : 0;
        fit = count < max ? count : (size_t)max;
        if (fit < count)
            tr->st.truncated = true;
        if (fit && mop_write_chunk_raw(tr, type, thread, (uint32_t)fit, recs,
                                       fit * rec_bytes) != 0)
            fit = 0;
    }
    *written += fit;
    *dropped += count - fit;
}

/* A names chunk for ids [from, to) of names; all or nothing under the cap. */
static void mop_write_names(mop_trace *tr, uint32_t type, const char *const *names, size_t from,
                            size_t to)
{
    size_t bytes = 0;
    uint32_t count = 0;
    for (size_t i = from; i < to; i++)
        if (names[i])
            bytes += 4 + strlen(names[i]) + 1;
    if (bytes == 0 || !mop_writing(tr))
        return;
    if (tr->st.bytes + MOP_TRACE_CHUNK_BYTES + bytes > tr->st.cap_bytes) {
        tr->st.truncated = true;
        return;
    }
    unsigned char *buf = malloc(bytes), *p = buf;
    if (!buf) {
        mop_trace_fail(tr, "out of memory for", ENOMEM);
        return;
    }
    for (size_t i = from; i < to; i++) {
        if (!names[i])
            continue;
        size_t len = strlen(names[i]) + 1;
        mop_put32(p, (uint32_t)i);
        memcpy(p + 4, names[i], len);
        p += 4 + len;
        count++;
    }
    mop_write_chunk_raw(tr, type, 0, count, buf, bytes);
    free(buf);
}

/* Region names that appeared since the last chunk, before events use them. */
static void mop_write_new_regions(mop_trace *tr)
{
    if (!tr->region_names)
        return;
    size_t n = 0;
    const char *const *names = tr->region_names(&n);
    if (n > tr->regions_written && mop_writing(tr)) {
        mop_write_names(tr, MOP_TRACE_REGION_NAMES, names, tr->regions_written, n);
        if (mop_writing(tr))
            tr->regions_written = n;
    }
}

/* ---- opening ---------------------------------------------------------------- */

static void mop_write_kind_names(mop_trace *tr)
{
    const char *names[MOP_KIND_COLL + MOP_XFER_NCOLL_OPS] = {
        [MOP_KIND_SEND] = "send", [MOP_KIND_RECV] = "recv",
        [MOP_KIND_NULL] = "null", [MOP_KIND_UNKNOWN] = "unknown",
        [MOP_KIND_RMA_SEND] = "rma-send", [MOP_KIND_RMA_RECV] = "rma-recv",
        [MOP_KIND_GREQ] = "greq"};
    for (int op = 0; op < MOP_XFER_NCOLL_OPS; op++) /* "bcast" ... "ibcast" ... */
        names[MOP_KIND_COLL + op] = mop_coll_op_name(op);
    mop_write_names(tr, MOP_TRACE_KIND_NAMES, names, 0, sizeof names / sizeof names[0]);
}

int mop_trace_open(mop_trace *tr, const char *path, uint64_t cap_bytes,
                   const mop_trace_info *info)
{
    pthread_mutex_lock(&tr->lock);
    tr->st.wanted = true;
    const char *slash = strrchr(path, '/');
    snprintf(tr->st.file, sizeof tr->st.file, "%s", slash ? slash + 1 : path);
    tr->st.cap_bytes = cap_bytes;
    tr->region_names = info->region_names;
    tr->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (tr->fd < 0) {
        mop_trace_fail(tr, "cannot open", errno);
        pthread_mutex_unlock(&tr->lock);
        return -1;
    }
    tr->st.open = true;
    unsigned char h[MOP_TRACE_HEADER_BYTES] = {0};
    memcpy(h, MOP_TRACE_MAGIC, 8);
    mop_put32(h + 8, MOP_TRACE_VERSION);
    mop_put32(h + 12, MOP_TRACE_BYTE_ORDER);
    mop_put32(h + 16, (uint32_t)info->rank);
    mop_put32(h + 20, (uint32_t)info->size);
    mop_putf64(h + 24, info->s_per_tick);
    mop_put64(h + 32, info->sync_ticks);
    mop_putf64(h + 40, info->sync_s);
    mop_putf64(h + 48, info->sync_rtt_s);
    mop_put32(h + 56, info->clock_tsc ? 0 : 1);
    uint16_t sizes[2] = {MOP_TRACE_EVENT_BYTES, MOP_TRACE_TRANSFER_BYTES};
    memcpy(h + 60, sizes, 4);
    /* The header is written whatever the cap: without it nothing is readable. */
    struct iovec iov = {h, sizeof h};
    if (mop_writev_all(tr->fd, &iov, 1) != 0) {
        mop_trace_fail(tr, "cannot write", errno);
        pthread_mutex_unlock(&tr->lock);
        return -1;
    }
    tr->st.bytes = sizeof h;
    mop_write_names(tr, MOP_TRACE_FN_NAMES, info->fn_names, 0, info->fn_names ? info->nfn : 0);
    mop_write_kind_names(tr);
    pthread_mutex_unlock(&tr->lock);
    return 0;
}

/* ---- threads ----------------------------------------------------------------- */

static uint32_t mop_thread_index_locked(mop_trace *tr, const void *owner)
{
    if (tr->finished)
        return UINT32_MAX;
    for (uint32_t i = 0; i < tr->st.threads; i++)
        if (tr->owners[i] == owner)
            return i;
    if (tr->st.threads == tr->cap_owners) {
        uint32_t cap = tr->cap_owners ? 2 * tr->cap_owners : 16;
        const void **o = realloc(tr->owners, cap * sizeof *o);
        if (!o)
            return UINT32_MAX; /* written as thread "unknown" */
        tr->owners = o;
        tr->cap_owners = cap;
    }
    tr->owners[tr->st.threads] = owner;
    return tr->st.threads++;
}

uint32_t mop_trace_thread(mop_trace *tr, const void *owner)
{
    pthread_mutex_lock(&tr->lock);
    uint32_t i = mop_thread_index_locked(tr, owner);
    pthread_mutex_unlock(&tr->lock);
    return i;
}

/* ---- transfers ------------------------------------------------------------------- */

void mop_trace_pack_transfer(unsigned char *out, const mop_transfer *t)
{
    memset(out, 0, MOP_TRACE_TRANSFER_BYTES);
    mop_put64(out, t->t_begin);
    mop_put64(out + 8, t->t_end);
    mop_put64(out + 16, t->has_key ? t->key : 0);
    mop_put64(out + 24, (uint64_t)t->bytes);
    mop_putf64(out + 32, t->b.xfer_s);
    mop_putf64(out + 40, t->b.min_s);
    mop_putf64(out + 48, t->b.max_s);
    mop_put32(out + 56, (uint32_t)t->peer);
    memcpy(out + 60, &t->fn, 2);
    memcpy(out + 62, &t->region, 2);
    out[64] = (unsigned char)t->kind;
    out[65] = (unsigned char)t->b.kase;
    out[66] = (unsigned char)((t->has_key ? MOP_TRACE_HAS_KEY : 0) |
                              (t->b.clamped ? MOP_TRACE_CLAMPED : 0));
}

enum { MOP_TRACE_BATCH = 64 };

/* The transfers closed while one thread's events are processed, collected
 * on the processing thread's stack and written as chunks of that thread. */
typedef struct mop_trace_batch {
    mop_trace *tr;
    uint32_t thread;
    size_t n;
    unsigned char recs[MOP_TRACE_BATCH][MOP_TRACE_TRANSFER_BYTES];
} mop_trace_batch;

static _Thread_local mop_trace_batch *mop_trace_current;

static void mop_batch_write(mop_trace_batch *b)
{
    if (b->n == 0)
        return;
    pthread_mutex_lock(&b->tr->lock);
    mop_write_records(b->tr, MOP_TRACE_TRANSFERS, b->thread, b->recs, b->n,
                      MOP_TRACE_TRANSFER_BYTES, &b->tr->st.transfers,
                      &b->tr->st.dropped_transfers);
    pthread_mutex_unlock(&b->tr->lock);
    b->n = 0;
}

void mop_trace_on_transfer(void *ctx, const mop_transfer *t)
{
    mop_trace *tr = ctx;
    mop_trace_batch *b = mop_trace_current;
    if (!b || b->tr != tr) { /* processed outside mop_trace_process: no thread to file it under */
        pthread_mutex_lock(&tr->lock);
        if (!tr->finished)
            tr->st.dropped_transfers++;
        pthread_mutex_unlock(&tr->lock);
        return;
    }
    mop_trace_pack_transfer(b->recs[b->n++], t);
    if (b->n == MOP_TRACE_BATCH)
        mop_batch_write(b);
}

void mop_trace_configure(mop_trace *tr, mop_process_config *cfg)
{
    cfg->on_transfer = mop_trace_on_transfer;
    cfg->on_transfer_ctx = tr;
}

/* ---- processing ---------------------------------------------------------------- */

/* Registers the thread and writes its events; returns its index. */
static uint32_t mop_trace_events(mop_trace *tr, const void *owner, const mop_event *e, size_t n)
{
    pthread_mutex_lock(&tr->lock);
    uint32_t thread = mop_thread_index_locked(tr, owner);
    if (n && !tr->finished) {
        mop_write_new_regions(tr);
        mop_write_records(tr, MOP_TRACE_EVENTS, thread, e, n, MOP_TRACE_EVENT_BYTES,
                          &tr->st.events, &tr->st.dropped_events);
    }
    pthread_mutex_unlock(&tr->lock);
    return thread;
}

void mop_trace_process(mop_trace *tr, const void *owner, mop_process *p, const mop_event *e,
                       size_t n)
{
    if (!tr || !tr->st.open) {
        mop_process_events(p, e, n);
        return;
    }
    mop_trace_batch b = {.tr = tr, .thread = mop_trace_events(tr, owner, e, n)};
    mop_trace_batch *outer = mop_trace_current;
    mop_trace_current = &b;
    mop_process_events(p, e, n);
    mop_batch_write(&b);
    mop_trace_current = outer;
}

void mop_trace_finish(mop_trace *tr, const void *owner, mop_process *p)
{
    if (!tr || !tr->st.open) {
        mop_process_finish(p);
        return;
    }
    mop_trace_batch b = {.tr = tr, .thread = mop_trace_thread(tr, owner)};
    mop_trace_batch *outer = mop_trace_current;
    mop_trace_current = &b;
    mop_process_finish(p);
    mop_batch_write(&b);
    mop_trace_current = outer;
}

/* ---- closing ------------------------------------------------------------------- */

/* A small record that reading the trace needs (a communicator, a datatype): one
 * chunk written whenever the file is, cap or not (without it the messages that use it
 * cannot be matched or described); frees p. */
static void mop_write_uncapped(mop_trace *tr, uint32_t type, unsigned char *p, size_t bytes)
{
    pthread_mutex_lock(&tr->lock);
    if (tr->fd >= 0 && !tr->finished)
        mop_write_chunk_raw(tr, type, 0, 1, p, bytes);
    pthread_mutex_unlock(&tr->lock);
    free(p);
}

void mop_trace_comm(mop_trace *tr, uint64_t id, uint32_t flags, const int32_t *local, uint32_t n,
                    const int32_t *remote, uint32_t m)
{
    size_t bytes = 24 + 4 * ((size_t)n + m);
    unsigned char *p = malloc(bytes);
    if (!p)
        return;
    mop_put64(p, id);
    mop_put32(p + 8, flags);
    mop_put32(p + 12, n);
    mop_put32(p + 16, m);
    mop_put32(p + 20, 0);
    if (n)
        memcpy(p + 24, local, 4 * (size_t)n);
    if (m)
        memcpy(p + 24 + 4 * (size_t)n, remote, 4 * (size_t)m);
    mop_write_uncapped(tr, MOP_TRACE_COMMS, p, bytes);
}

void mop_trace_dtype(mop_trace *tr, uint32_t id, uint32_t flags, const int64_t shape[4],
                     const int64_t *values, uint32_t n, const char *names, uint32_t name_bytes)
{
    size_t padded = ((size_t)name_bytes + 7) & ~(size_t)7;
    size_t bytes = 48 + 8 * (size_t)n + padded;
    unsigned char *p = calloc(1, bytes);
    if (!p)
        return;
    mop_put32(p, id);
    mop_put32(p + 4, flags);
    mop_put32(p + 8, n);
    mop_put32(p + 12, name_bytes);
    for (int i = 0; i < 4; i++)
        mop_put64(p + 16 + 8 * i, (uint64_t)shape[i]);
    for (uint32_t i = 0; i < n; i++)
        mop_put64(p + 48 + 8 * (size_t)i, (uint64_t)values[i]);
    if (name_bytes)
        memcpy(p + 48 + 8 * (size_t)n, names, name_bytes);
    mop_write_uncapped(tr, MOP_TRACE_DTYPES, p, bytes);
}

void mop_trace_set_end_sync(mop_trace *tr, uint64_t ticks, double s, double rtt_s)
{
    pthread_mutex_lock(&tr->lock);
    tr->end_ticks = ticks;
    tr->end_s = s;
    tr->end_rtt_s = rtt_s;
    pthread_mutex_unlock(&tr->lock);
}

/* END: u64 events, dropped events, transfers, dropped transfers, cap, bytes
 * before END; u32 truncated, u32 threads; u64 end_sync_ticks, f64
 * end_sync_s, f64 end_sync_rtt_s (< 0: none). */
void mop_trace_close(mop_trace *tr)
{
    pthread_mutex_lock(&tr->lock);
    if (tr->fd >= 0 && !tr->finished) {
        unsigned char p[MOP_TRACE_END_BYTES] = {0};
        mop_put64(p, tr->st.events);
        mop_put64(p + 8, tr->st.dropped_events);
        mop_put64(p + 16, tr->st.transfers);
        mop_put64(p + 24, tr->st.dropped_transfers);
        mop_put64(p + 32, tr->st.cap_bytes);
        mop_put64(p + 40, tr->st.bytes);
        mop_put32(p + 48, tr->st.truncated);
        mop_put32(p + 52, tr->st.threads);
        mop_put64(p + 56, tr->end_ticks);
        mop_putf64(p + 64, tr->end_s);
        mop_putf64(p + 72, tr->end_rtt_s);
        if (mop_write_chunk_raw(tr, MOP_TRACE_END, 0, 0, p, sizeof p) == 0) {
            tr->st.closed = true;
            if (close(tr->fd) != 0 && !tr->st.error[0])
                snprintf(tr->st.error, sizeof tr->st.error, "cannot close %s: %s",
                         tr->st.file, strerror(errno));
            tr->fd = -1;
        }
    }
    tr->finished = true;
    free(tr->owners);
    tr->owners = NULL;
    tr->cap_owners = 0;
    pthread_mutex_unlock(&tr->lock);
}

void mop_trace_get_stats(mop_trace *tr, mop_trace_stats *out)
{
    pthread_mutex_lock(&tr->lock);
    *out = tr->st;
    pthread_mutex_unlock(&tr->lock);
}

void mop_trace_stats_json(mo_json *w, const mop_trace_stats *s)
{
    mo_json_begin_object(w);
    mo_json_kv_string(w, "file", s->open ? s->file : NULL);
    mo_json_kv_uint64(w, "cap_bytes", s->cap_bytes);
    mo_json_kv_uint64(w, "bytes", s->bytes);
    mo_json_kv_uint64(w, "events", s->events);
    mo_json_kv_uint64(w, "transfers", s->transfers);
    mo_json_kv_uint64(w, "dropped_events", s->dropped_events);
    mo_json_kv_uint64(w, "dropped_transfers", s->dropped_transfers);
    mo_json_kv_bool(w, "truncated", s->truncated);
    mo_json_kv_bool(w, "closed", s->closed);
    mo_json_kv_uint64(w, "threads", s->threads);
    mo_json_kv_string(w, "error", s->error[0] ? s->error : NULL);
    mo_json_end_object(w);
}
