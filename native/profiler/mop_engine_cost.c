/* mop_engine_cost.c - what the profiler's event processing (mop_process)
 * costs per call and per transfer, without MPI and without launch noise.
 *
 * The 2-rank message-rate measure of the profiler's cost (bench
 * profiler-overhead, mo_msgrate) scatters by 10 ns and more from one run to
 * the next on a shared VM, and it mixes the wrappers' clock reads, the
 * processing and where MPI lets it hide. This driver times the processing
 * alone, to a fraction of a ns, on the stream a message-rate loop's receiving
 * rank records: per window, W posts (ENTER + POST, as the wrappers push them),
 * the Waitall's ENTER, its W ENDs and its EXIT. Its forms:
 * - distinct handles: a handle per request (receives, MPICH and Open MPI);
 * - shared handle: every request on one handle (sends completed at once:
 *   MPICH's lightweight requests, Open MPI's static completed request);
 * - calls only: the same calls with no transfer (ENTER, EXIT), whose cost
 *   per call is the part of a transfer's that is the call's.
 * Each is processed in batches of --batch events (4096: a full queue; 4 or 16:
 * steps while waiting, mop_idle.h), the best of --reps runs of 64 windows;
 * --form times one of them (under valgrind --tool=callgrind, say, whose
 * instruction counts do not scatter).
 * Prints one JSON object; docs/profiler.md, "Memory and cost", gives figures. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "mop_process.h"

enum { WINDOW = 64, WINDOWS = 64 };
enum { FN_IRECV = 1, FN_WAITALL = 2 };
enum stream_form { DISTINCT, SHARED, CALLS_ONLY, NFORMS };
static const char *const form_names[NFORMS] = {"distinct_handles", "shared_handle",
                                               "calls_only"};

typedef struct cost_options {
    size_t batch;
    int reps;
    bool callsites;
    int only; /* a stream_form, or -1: all */
} cost_options;

/* Request i's handle in a window: spaced like pointers into a free list, or
 * one for all. */
static uint64_t stream_handle(enum stream_form form, int i)
{
    return 0x7f0000001000u + (form == SHARED ? 0u : 256u * (unsigned)i);
}

/* The events of WINDOWS windows, times in ns from t = 1000. */
static size_t stream_fill(mop_event *ev, enum stream_form form)
{
    uint64_t t = 1000;
    size_t k = 0;
    for (int w = 0; w < WINDOWS; w++) {
        for (int i = 0; i < WINDOW; i++) {
            ev[k++] = (mop_event){.type = MOP_EV_ENTER, .t = t, .key = 0x401000, .id = FN_IRECV};
            t += 60;
            if (form == CALLS_ONLY)
                ev[k++] = (mop_event){.type = MOP_EV_EXIT, .t = t};
            else
                ev[k++] = (mop_event){.type = MOP_EV_POST, .t = t,
                                      .key = stream_handle(form, i), .bytes = 8,
                                      .kind = MOP_KIND_RECV, .id = FN_IRECV, .arg = -1};
            t += 10;
        }
        ev[k++] = (mop_event){.type = MOP_EV_ENTER, .t = t, .key = 0x402000, .id = FN_WAITALL};
        t += 2000;
        for (int i = 0; i < WINDOW && form != CALLS_ONLY; i++)
            ev[k++] = (mop_event){.type = MOP_EV_END, .t = t, .key = stream_handle(form, i),
                                  .bytes = 8};
        ev[k++] = (mop_event){.type = MOP_EV_EXIT, .t = t};
        t += 100;
    }
    return k;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best time of one pass over the stream, in s; *transfers: what the engine
 * counted (every post of a transfer form must close as a transfer). */
static int time_form(const cost_options *o, const mop_xfer_table *table, enum stream_form form,
                     double *best, uint64_t *transfers)
{
    mop_event *ev = calloc((size_t)WINDOWS * (3 * WINDOW + 2), sizeof *ev);
    mop_process proc;
    mop_process_config cfg = {.table = table, .s_per_tick = 1e-9, .callsites = o->callsites};
    if (!ev || mop_process_init(&proc, &cfg) != 0) {
        free(ev);
        return -1;
    }
    size_t n = stream_fill(ev, form);
    uint64_t span = ev[n - 1].t + 100;
    *best = 1e30;
    for (int rep = 0; rep < o->reps; rep++) {
        double t0 = now_s();
        for (size_t i = 0; i < n; i += o->batch)
            mop_process_events(&proc, ev + i, o->batch < n - i ? o->batch : n - i);
        double dt = now_s() - t0;
        *best = dt < *best ? dt : *best;
        for (size_t i = 0; i < n; i++) /* the next pass runs later on the same clock */
            ev[i].t += span;
    }
    mop_process_finish(&proc); /* the sums still held go to their cells */
    *transfers = proc.total.transfers;
    mop_process_free(&proc);
    free(ev);
    return 0;
}

static int form_of(const char *name)
{
    for (int f = 0; f < NFORMS; f++)
        if (strcmp(name, form_names[f]) == 0)
            return f;
    return -1;
}

static int usage(const char *why)
{
    fprintf(stderr, "mop_engine_cost: %s (usage: mop_engine_cost [--batch N] [--reps N] "
                    "[--callsites 0|1] [--form distinct_handles|shared_handle|calls_only])\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    cost_options o = {.batch = 4096, .reps = 300, .callsites = true, .only = -1};
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
        bool ok = end && *end == '\0' && v >= 0;
        if (strcmp(argv[i], "--batch") == 0 && ok && v >= 1 && v <= 1 << 20)
            o.batch = (size_t)v;
        else if (strcmp(argv[i], "--reps") == 0 && ok && v >= 1 && v <= 100000)
            o.reps = (int)v;
        else if (strcmp(argv[i], "--callsites") == 0 && ok && v <= 1)
            o.callsites = v == 1;
        else if (strcmp(argv[i], "--form") == 0 && i + 1 < argc && (o.only = form_of(argv[i + 1])) >= 0)
            ;
        else
            return usage(i + 1 < argc ? "bad option or value" : "option without a value");
        i++;
    }
    /* Exact entries around the 8-byte messages: the lookups are the cached
     * common case, as on a message-rate loop. */
    mop_xfer_table table;
    mop_xfer_table_init(&table);
    for (uint64_t b = 1; b <= 1 << 20; b *= 2)
        mop_xfer_table_add(&table, MOP_XFER_INTRA, b, 1e-7 + 1e-10 * (double)b);

    mo_json w;
    mo_json_init(&w, stdout);
    mo_json_begin_object(&w);
    mo_json_kv_uint64(&w, "batch", o.batch);
    mo_json_kv_int64(&w, "reps", o.reps);
    mo_json_kv_bool(&w, "callsites", o.callsites);
    mo_json_kv_int64(&w, "window", WINDOW);
    int rc = 0;
    for (int f = 0; f < NFORMS && rc == 0; f++) {
        if (o.only >= 0 && f != o.only)
            continue;
        double best;
        uint64_t transfers;
        rc = time_form(&o, &table, (enum stream_form)f, &best, &transfers);
        if (rc != 0)
            break;
        /* Per transfer for the transfer forms; per call for calls only. */
        double per = f == CALLS_ONLY ? (double)WINDOWS * (WINDOW + 1) : (double)WINDOWS * WINDOW;
        mo_json_key(&w, form_names[f]);
        mo_json_begin_object(&w);
        mo_json_kv_double(&w, f == CALLS_ONLY ? "ns_per_call" : "ns_per_transfer",
                          best * 1e9 / per);
        mo_json_kv_uint64(&w, "transfers_counted", transfers);
        mo_json_end_object(&w);
    }
    mo_json_end_object(&w);
    int wrc = mo_json_finish(&w);
    fputc('\n', stdout);
    mop_xfer_table_free(&table);
    if (rc != 0) {
        fprintf(stderr, "mop_engine_cost: out of memory\n");
        return 1;
    }
    return wrc == 0 ? 0 : 1;
}
