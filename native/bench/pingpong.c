/* pingpong.c - mo_pingpong: the one-way transfer time of a message per
 * size, by blocking ping-pong, for the transfer-time table of the overlap
 * profiler (`mpi-overlap calibrate`) and as a plain latency benchmark.
 *
 * Pairs: rank 0 and the lowest other rank on rank 0's node ("intra"), and,
 * when the job spans several nodes, rank 0 and the lowest rank on another
 * node ("inter"). Node membership is MPI_Comm_split_type(SHARED). Further
 * ranks take no part and wait without spinning.
 *
 * For each pair and size: an untimed warm-up, then samples. A sample is one
 * timed block of round trips (MPI_Send then MPI_Recv on rank 0, MPI_Recv
 * then MPI_Send on the peer, MPI_BYTE, separate send and receive buffers);
 * its one-way time is the block time / round trips / 2. With every sample
 * goes the pair's CPU share: the smaller of the two ranks' thread CPU time
 * over the block divided by its wall time. MPI ranks busy-poll, so a rank
 * that kept its core has a share of about 1; a rank descheduled for part of
 * the sample has less, and the sample is too long by an amount nobody knows.
 * The peer sends its share to rank 0 after the block, outside the timed
 * region. Python (src/mpi_overlap/calibration/xfer_quality.py) keeps the undisturbed
 * samples and judges them; `one_way_s` here is the plain median of all
 * samples. Rank 0 makes every decision and sends it to the peer, so both
 * always run the same number of round trips.
 *
 * Samples are short (0.25 ms under --quick, 0.5 ms otherwise, down to one
 * round trip): on a busy machine a rank loses its core for a scheduler slice
 * (milliseconds) every few slices, and only short samples fall between two
 * such losses. The round trips per sample follow the size's fastest
 * undisturbed block so far (noise only adds time; a warm-up whose blocks
 * were all disturbed would otherwise give samples far shorter than asked).
 *
 * The sweep over the sizes is made --passes times, each pass in its own
 * shuffled order (fixed seed), and every pass adds samples to every size, so
 * a disturbance lasting a few seconds (another job, a daemon) touches a few
 * samples of many sizes instead of all samples of one size range. A visit
 * takes its share of --reps samples, and more while its share of the
 * --budget lasts (the pair's remaining budget divided by the visits still to
 * make), so cheap small sizes get many samples and the sweep takes about
 * the budget.
 *
 * With --parts-max B (calibrate passes it), every size up to B is then
 * measured in its parts, the way netgauge's PRTT and the parametrized LogP of
 * Kielmann et al. do (docs/method.md, "The transfer model's parts"):
 *   o_s  the time of a blocking MPI_Send, its receiver waiting in MPI_Recv;
 *   o_r  the time of a blocking MPI_Recv of a message that MPI_Iprobe has
 *        seen, a few transfer times after it was asked for (so an eager
 *        message has arrived; a rendezvous one moves in the call); the
 *        peer times its MPI_Send meanwhile, which says the protocol;
 *   g    the time per message of back-to-back MPI_Sends (the gap).
 * Each sample is a timed block of a few iterations with its CPU share (rank
 * 0's for the overheads, which are its own calls; the pair's for the gap),
 * as for the one-way time; Python estimates each part as the one-way time is
 * estimated and derives the latency L = one-way - o_s - o_r.
 *
 * With --stream B (calibrate passes it), each pair then times a stream:
 * a window of --stream-window messages of B bytes, rank 0 posting them all
 * with MPI_Isend, the peer having posted every receive before; the peer
 * notes when each receive completes and a sample is the time per message
 * over the window's second half (the link's pace once a burst allowance such
 * as tbf's bucket, and TCP's start, are used up in the first half). A
 * ping-pong leaves the link idle between messages, so its largest sizes can
 * fit such a bucket; LogGP's G is what a link kept busy takes per byte
 * (docs/method.md, "A busy link"). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_main.h"
#include "fingerprint.h"
#include "sizes.h"

#define BENCH "pingpong"
#define DEFAULT_SIZES "0:64M"
#define MAX_SAMPLES 1000
#define WARM_BLOCKS 3
#define DEFAULT_BUDGET_S 40.0
#define DEFAULT_BUDGET_QUICK_S 6.0
#define DEFAULT_PASSES 5
#define DEFAULT_PASSES_QUICK 3
#define MAX_PASSES 100 /* --passes' upper limit */
#define SAMPLE_MS 0.5
#define SAMPLE_MS_QUICK 0.25
#define CMD_TAG 23
#define MSG_TAG 19
#define SHARE_TAG 29
#define ACK_TAG 31
#define SENDER_TAG 37
/* Samples of each part per size (--parts-max), in PARTS_PASSES visits; then,
 * on a busy machine, more visits for the parts with fewer than PARTS_MIN_CLEAN
 * undisturbed samples, up to PARTS_MAX_SAMPLES in all. */
#define PARTS_SAMPLES 16
#define PARTS_SAMPLES_FULL 32
#define PARTS_PASSES 2
#define PARTS_MIN_CLEAN 6
#define PARTS_MAX_SAMPLES 96
/* The gap's blocks send at least this many messages back to back: fewer
 * would time the pipeline's start rather than its rate. */
#define GAP_MIN_MESSAGES 8
/* A block is undisturbed when both ranks had at least this share of its
 * wall time on a CPU (the same threshold as CLEAN_SHARE in
 * src/mpi_overlap/calibration/xfer_quality.py, which judges the samples). */
#define CLEAN_SHARE 0.9
#define SHUFFLE_SEED 0x6d6f5f70696e67u /* 'mo_ping': any fixed value */
/* The stream (--stream): samples per pair (quick, full), the window's
 * default and limits (a window of at least 4, so its second half holds 2),
 * and at most 1 GiB of receive slots (the peer posts the whole window). */
#define STREAM_SAMPLES_QUICK 5
#define STREAM_SAMPLES 9
#define STREAM_MAX_SAMPLES 16
#define DEFAULT_STREAM_WINDOW 64
#define MAX_STREAM_WINDOW 1024
#define MAX_STREAM_BUFFER (1ull << 30)

/* ---- benchmark-specific options ---------------------------------------- */

typedef struct pp_params {
    double budget_s; /* target time of one pair's sweep */
    long passes;     /* sweeps over the sizes, each adding samples */
    uint64_t parts_max; /* largest size measured in its parts; 0: none */
    uint64_t stream;    /* bytes per message of the stream; 0: none */
    long stream_window; /* messages per stream sample */
} pp_params;

/* One size, written as --sizes takes it ("1M", "65536"), into *out: the
 * flags that take a single size (--parts-max, --stream). */
static int parse_one_size(const char *flag, const char *example, const char *arg,
                          uint64_t *out, char *err, size_t errlen)
{
    mo_sizes one;
    if (mo_sizes_parse(arg, &one, err, errlen) != 0)
        return -1;
    bool single = one.n == 1;
    *out = single ? one.v[0] : 0;
    mo_sizes_free(&one);
    if (!single)
        snprintf(err, errlen, "%s takes one size (e.g. %s), not '%s'", flag, example, arg);
    return single ? 0 : -1;
}

static int parse_parts_max(void *ctx, const char *arg, char *err, size_t errlen)
{
    return parse_one_size("--parts-max", "1M", arg, &((pp_params *)ctx)->parts_max, err, errlen);
}

static void parts_max_json(mo_json *w, const void *ctx)
{
    const pp_params *p = ctx;
    mo_json_kv_uint64(w, "parts_max", p->parts_max);
}

static int parse_stream(void *ctx, const char *arg, char *err, size_t errlen)
{
    return parse_one_size("--stream", "64K", arg, &((pp_params *)ctx)->stream, err, errlen);
}

static void stream_json(mo_json *w, const void *ctx)
{
    const pp_params *p = ctx;
    mo_json_kv_uint64(w, "stream", p->stream);
}

static const mo_field pp_fields[] = {
    {.name = "budget", .key = "budget_s", .kind = MO_FIELD_DOUBLE, .offset = offsetof(pp_params, budget_s),
     .dlo = 0.0, .dhi = 1e6, .by_quick = true, .def = DEFAULT_BUDGET_S, .quick = DEFAULT_BUDGET_QUICK_S},
    MO_FIELD_LONG_Q("passes", pp_params, passes, 1, MAX_PASSES, DEFAULT_PASSES, DEFAULT_PASSES_QUICK),
    MO_FIELD_CUSTOM_OF("parts-max", parse_parts_max, parts_max_json),
    MO_FIELD_CUSTOM_OF("stream", parse_stream, stream_json),
    MO_FIELD_LONG_OF("stream-window", pp_params, stream_window, 4, MAX_STREAM_WINDOW),
};

static void pp_usage(FILE *f)
{
    fprintf(f,
            "  (mo_pingpong's own defaults: --sample-ms %g, --quick %g; --min-iters 1)\n"
            "  --budget S           target seconds for one pair's sweep: sizes get more than\n"
            "                       --reps samples while their share lasts (default %g; --quick %g)\n"
            "  --passes N           sweeps over the sizes, each adding samples to every size\n"
            "                       (default %d; --quick %d)\n"
            "  --parts-max BYTES    measure every size up to BYTES in its parts: the sender's\n"
            "                       overhead o_s, the receiver's o_r, the gap g (default 0: none)\n"
            "  --stream BYTES       then time a stream of BYTES-byte messages per pair: the\n"
            "                       seconds per message of a window kept back to back (default 0:\n"
            "                       none)\n"
            "  --stream-window W    messages per stream sample (default %d, 4 to %d)\n",
            SAMPLE_MS, SAMPLE_MS_QUICK, DEFAULT_BUDGET_S, DEFAULT_BUDGET_QUICK_S, DEFAULT_PASSES,
            DEFAULT_PASSES_QUICK, DEFAULT_STREAM_WINDOW, MAX_STREAM_WINDOW);
}

/* ---- state ------------------------------------------------------------ */

/* The parts of a transfer (see the file comment), in the order of the
 * commands that measure them. */
enum { PART_OS = 0, PART_OR = 1, PART_GAP = 2, NPARTS = 3 };
static const char *const part_names[NPARTS] = {"o_s", "o_r", "g"};

typedef struct pp_part {
    size_t n;
    double samples[PARTS_MAX_SAMPLES]; /* seconds per message */
    double shares[PARTS_MAX_SAMPLES];
    /* PART_OR only: the peer's MPI_Send per message while rank 0 waited delay,
     * outside MPI, before receiving. An eager send returns without the
     * receiver taking part; one that needs the receive, or only the
     * receiver's progress, waits the delay and more: the protocol, seen
     * directly (xfer_parts.py). */
    double sender[PARTS_MAX_SAMPLES];
    double delay[PARTS_MAX_SAMPLES];
} pp_part;

typedef struct pp_size {
    uint64_t bytes;
    pp_part parts[NPARTS]; /* measured only up to --parts-max */
    long iterations; /* round trips per sample */
    size_t n;        /* samples taken */
    double *samples; /* one-way seconds, MAX_SAMPLES of room */
    double *shares;  /* per sample: the smaller of the two ranks' CPU shares */
    double best_s;   /* fastest undisturbed block so far (one-way s), 0: none yet */
    /* Where each visit's samples end (cumulative counts): the machine's state
     * can change between visits, seconds apart, by more than the samples of
     * one visit vary, and the table's intervals must see it (xfer_quality.py). */
    int nvisits;
    long visit_ends[MAX_PASSES];
    mo_stats st;
} pp_size;

/* The stream's samples (seconds per message over a window's second half)
 * with the pair's CPU share over each. */
typedef struct pp_stream {
    size_t n;
    double samples[STREAM_MAX_SAMPLES];
    double shares[STREAM_MAX_SAMPLES];
} pp_stream;

typedef struct pp_pair {
    const char *cls; /* "intra" or "inter" */
    int peer;        /* world rank of rank 0's partner */
    MPI_Comm comm;   /* rank 0 = world rank 0, rank 1 = peer */
    bool complete;
    pp_size *sizes;
    int nsizes;
    pp_stream stream;
} pp_pair;

typedef struct pp_state {
    const mo_options *opts;
    const pp_params *params;
    const mo_provenance *prov;
    unsigned char *buf; /* page-aligned, two halves of the largest size, touched */
    size_t half;        /* offset of the receive half */
    unsigned char *stream_buf; /* --stream: a slot per message of the window, touched */
    MPI_Request *stream_reqs;  /* a window of them */
    uint64_t start_ns;
    int ranks, nodes;
    pp_pair pairs[2];
    int npairs;
    int my_pair;        /* index into pairs when this rank is a peer; -1 */
    mo_fingerprints fp;
} pp_state;

/* ---- the timed loop (both ranks of a pair) ------------------------------ */

enum { CMD_QUIT = 0, CMD_RUN = 1, CMD_STREAM = 2, CMD_PART = 3 /* + PART_*: CMD_PART + NPARTS - 1 */ };

typedef struct pp_cmd {
    int64_t op, size, iterations;
} pp_cmd;
_Static_assert(sizeof(pp_cmd) == 3 * sizeof(int64_t), "pp_cmd is sent as packed int64s");

/* This thread's CPU time: a rank that was descheduled during a sample got
 * less CPU time than the sample's wall time (MPI ranks busy-poll, so an
 * undisturbed rank has about 100 %). */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The end of a timed block that began at wall time t0 and CPU time c0: this
 * rank's CPU share of it in *mine; the peer sends its share to rank 0, which
 * gets it in *peer (outside the timed region). Returns the block's wall ns. */
static double block_end(MPI_Comm comm, int rank, uint64_t t0, uint64_t c0, double *mine,
                        double *peer)
{
    uint64_t t1 = mo_timer_now_ns();
    uint64_t c1 = thread_cpu_ns();
    double wall = (double)(t1 - t0);
    *mine = wall > 0 ? (double)(c1 - c0) / wall : 1.0;
    *peer = 0.0;
    if (rank != 0)
        MPI_Send(mine, 1, MPI_DOUBLE, 0, SHARE_TAG, comm);
    else
        MPI_Recv(peer, 1, MPI_DOUBLE, 1, SHARE_TAG, comm, MPI_STATUS_IGNORE);
    return wall;
}

/* Runs `iters` round trips of n bytes. On rank 0 of the pair returns the
 * one-way time in seconds and in *share the smaller of the two ranks' CPU
 * shares (CPU time / wall time) over the timed block; the peer sends its
 * share to rank 0 after the block, outside the timed region, and returns 0. */
static double run_block(MPI_Comm comm, int rank, unsigned char *sbuf, unsigned char *rbuf, int n,
                        int64_t iters, double *share)
{
    /* Untimed: the peer receives the command about a latency after rank 0
     * sent it; without this the first round trip would include that gap. */
    MPI_Barrier(comm);
    /* CPU clock read outside the wall clock's: the CPU interval holds the
     * wall interval, so an undisturbed rank's share is >= 1 up to rounding. */
    uint64_t c0 = thread_cpu_ns();
    uint64_t t0 = mo_timer_now_ns();
    if (rank == 0) {
        for (int64_t i = 0; i < iters; i++) {
            MPI_Send(sbuf, n, MPI_BYTE, 1, MSG_TAG, comm);
            MPI_Recv(rbuf, n, MPI_BYTE, 1, MSG_TAG, comm, MPI_STATUS_IGNORE);
        }
    } else {
        for (int64_t i = 0; i < iters; i++) {
            MPI_Recv(rbuf, n, MPI_BYTE, 0, MSG_TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_BYTE, 0, MSG_TAG, comm);
        }
    }
    double mine, peer;
    double wall = block_end(comm, rank, t0, c0, &mine, &peer);
    if (rank != 0)
        return 0.0;
    *share = mine < peer ? mine : peer;
    return wall / 1e9 / (double)iters / 2.0;
}

/* Busy-waits until the wall clock passes t_ns: outside MPI, so that an eager
 * message can arrive without the receiver taking part. */
static void spin_until(uint64_t t_ns)
{
    while (mo_timer_now_ns() < t_ns)
        ;
}

/* Runs `iters` iterations of one part (PART_*) of n bytes. On rank 0 returns
 * the part's seconds per message and in *share the CPU share that says
 * whether it was disturbed (rank 0's for o_s and o_r, the pair's for g); the
 * peer returns 0. delay_ns (rank 0, PART_OR): how long
 * rank 0 waits after asking for the message before it receives it; *sender
 * (rank 0, PART_OR): the peer's MPI_Send per message meanwhile. */
static double run_part(MPI_Comm comm, int rank, int part, unsigned char *sbuf, unsigned char *rbuf,
                       int n, int64_t iters, int64_t delay_ns, double *share, double *sender)
{
    MPI_Barrier(comm);
    uint64_t c0 = thread_cpu_ns();
    uint64_t t0 = mo_timer_now_ns();
    uint64_t timed = 0; /* PART_OS, PART_OR: the calls' own time */
    char token = 0;
    if (rank == 0) {
        for (int64_t i = 0; i < iters; i++) {
            if (part == PART_OS) {
                uint64_t a = mo_timer_now_ns();
                MPI_Send(sbuf, n, MPI_BYTE, 1, MSG_TAG, comm);
                timed += mo_timer_now_ns() - a;
                MPI_Recv(&token, 0, MPI_BYTE, 1, ACK_TAG, comm, MPI_STATUS_IGNORE);
            } else if (part == PART_OR) {
                /* The wait first, outside MPI, so that the peer's send (timed
                 * for the protocol) has no help from this rank: a send that
                 * needs the receiver's progress, not only its receive, waits
                 * too (Open MPI 4.1's vader above btl_vader_max_inline_send,
                 * 256 B: its MPI_Send of 1 KiB returned at once beside a
                 * polling receiver and took 4.5 ms beside a computing one).
                 * Then received only once MPI has its envelope (a peer slow
                 * to send would otherwise be timed too). */
                uint64_t asked = mo_timer_now_ns();
                MPI_Send(&token, 0, MPI_BYTE, 1, ACK_TAG, comm);
                spin_until(asked + (uint64_t)delay_ns);
                for (int there = 0; !there;)
                    MPI_Iprobe(1, MSG_TAG, comm, &there, MPI_STATUS_IGNORE);
                uint64_t a = mo_timer_now_ns();
                MPI_Recv(rbuf, n, MPI_BYTE, 1, MSG_TAG, comm, MPI_STATUS_IGNORE);
                timed += mo_timer_now_ns() - a;
            } else {
                MPI_Send(sbuf, n, MPI_BYTE, 1, MSG_TAG, comm);
            }
        }
        if (part == PART_GAP) {
            timed = mo_timer_now_ns() - t0; /* the sends alone, not the closing ack */
            MPI_Recv(&token, 0, MPI_BYTE, 1, ACK_TAG, comm, MPI_STATUS_IGNORE);
        }
    } else {
        for (int64_t i = 0; i < iters; i++) {
            if (part == PART_OS) {
                MPI_Recv(rbuf, n, MPI_BYTE, 0, MSG_TAG, comm, MPI_STATUS_IGNORE);
                MPI_Send(&token, 0, MPI_BYTE, 0, ACK_TAG, comm);
            } else if (part == PART_OR) {
                MPI_Recv(&token, 0, MPI_BYTE, 0, ACK_TAG, comm, MPI_STATUS_IGNORE);
                uint64_t a = mo_timer_now_ns();
                MPI_Send(sbuf, n, MPI_BYTE, 0, MSG_TAG, comm);
                timed += mo_timer_now_ns() - a;
            } else {
                MPI_Recv(rbuf, n, MPI_BYTE, 0, MSG_TAG, comm, MPI_STATUS_IGNORE);
            }
        }
        if (part == PART_GAP)
            MPI_Send(&token, 0, MPI_BYTE, 0, ACK_TAG, comm);
    }
    double mine, peer;
    block_end(comm, rank, t0, c0, &mine, &peer);
    if (part == PART_OR) { /* after the block: untimed */
        double per_message = (double)timed / 1e9 / (double)iters;
        if (rank != 0)
            MPI_Send(&per_message, 1, MPI_DOUBLE, 0, SENDER_TAG, comm);
        else
            MPI_Recv(sender, 1, MPI_DOUBLE, 1, SENDER_TAG, comm, MPI_STATUS_IGNORE);
    }
    if (rank != 0)
        return 0.0;
    /* The overheads are rank 0's own calls: its share alone says whether they were
     * disturbed (the peer idles in MPI meanwhile, and on a busy machine an MPI that
     * yields there gives its core away without delaying them). The gap needs both. */
    *share = part == PART_GAP && peer < mine ? peer : mine;
    return (double)timed / 1e9 / (double)iters;
}

/* Runs one window of the stream: w messages of n bytes from rank 0 to the
 * peer, every receive posted before the window starts (each into its own
 * slot), the sends posted back to back. The peer notes when each receive
 * completes; the sample is the time per message between the completions of
 * the first half's last message and the window's last, the link's pace after
 * what a burst allowance lets through at once (the first half's). On rank 0
 * returns that and in *share the pair's CPU share over the window; the peer
 * sends both after the window, untimed, and returns 0. */
static double run_stream(const pp_state *st, MPI_Comm comm, int rank, int n, int w, double *share)
{
    unsigned char *const buf = st->stream_buf;
    MPI_Request *const reqs = st->stream_reqs;
    const size_t slot = n > 0 ? (size_t)n : 1;
    const int half = w / 2;
    double per_message = 0.0;
    char token = 0;
    if (rank != 0)
        for (int j = 0; j < w; j++)
            MPI_Irecv(buf + (size_t)j * slot, n, MPI_BYTE, 0, MSG_TAG, comm, &reqs[j]);
    MPI_Barrier(comm);
    uint64_t c0 = thread_cpu_ns();
    uint64_t t0 = mo_timer_now_ns();
    if (rank == 0) {
        for (int j = 0; j < w; j++)
            MPI_Isend(buf + (size_t)j * slot, n, MPI_BYTE, 1, MSG_TAG, comm, &reqs[j]);
        MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
        MPI_Recv(&token, 0, MPI_BYTE, 1, ACK_TAG, comm, MPI_STATUS_IGNORE);
    } else {
        uint64_t mid = t0;
        for (int j = 0; j < w; j++) {
            MPI_Wait(&reqs[j], MPI_STATUS_IGNORE);
            if (j == half - 1)
                mid = mo_timer_now_ns();
        }
        per_message = (double)(mo_timer_now_ns() - mid) / 1e9 / (double)(w - half);
        MPI_Send(&token, 0, MPI_BYTE, 0, ACK_TAG, comm);
    }
    double mine, peer;
    block_end(comm, rank, t0, c0, &mine, &peer);
    if (rank != 0) {
        MPI_Send(&per_message, 1, MPI_DOUBLE, 0, SENDER_TAG, comm);
        return 0.0;
    }
    MPI_Recv(&per_message, 1, MPI_DOUBLE, 1, SENDER_TAG, comm, MPI_STATUS_IGNORE);
    *share = mine < peer ? mine : peer;
    return per_message;
}

/* Rank 0: tells the peer what to run, runs it, returns one-way seconds and
 * the pair's CPU share in *share. */
static double block(const pp_state *st, const pp_pair *p, uint64_t size, long iterations,
                    double *share)
{
    pp_cmd c = {CMD_RUN, (int64_t)size, iterations};
    MPI_Send(&c, 3, MPI_INT64_T, 1, CMD_TAG, p->comm);
    return run_block(p->comm, 0, st->buf, st->buf + st->half, (int)size, iterations, share);
}

/* The peer: follows rank 0's commands until told to quit. It waits for the
 * first one quietly (the other pair may be measured meanwhile), then in a
 * blocking receive, so that it answers at once. */
static void serve(const pp_state *st, const pp_pair *p)
{
    for (bool first = true;; first = false) {
        pp_cmd c;
        if (first) {
            MPI_Request req;
            MPI_Irecv(&c, 3, MPI_INT64_T, 0, CMD_TAG, p->comm, &req);
            mo_quiet_wait(&req);
        } else {
            MPI_Recv(&c, 3, MPI_INT64_T, 0, CMD_TAG, p->comm, MPI_STATUS_IGNORE);
        }
        if (c.op == CMD_QUIT)
            return;
        if (c.op == CMD_STREAM)
            run_stream(st, p->comm, 1, (int)c.size, (int)c.iterations, NULL);
        else if (c.op >= CMD_PART)
            run_part(p->comm, 1, (int)(c.op - CMD_PART), st->buf, st->buf + st->half, (int)c.size,
                     c.iterations, 0, NULL, NULL);
        else
            run_block(p->comm, 1, st->buf, st->buf + st->half, (int)c.size, c.iterations, NULL);
    }
}

/* ---- the method (rank 0) ------------------------------------------------ */

/* Notes a block's one-way time: the fastest undisturbed block of a size so
 * far estimates its time per round trip (noise only adds time). */
static void note_block(pp_size *sz, double one_way, double share)
{
    if (share >= CLEAN_SHARE && one_way > 0 && (sz->best_s <= 0 || one_way < sz->best_s))
        sz->best_s = one_way;
}

/* One visit of a size: warm-up, then at least min_samples samples, more
 * while share_s lasts, at most max_samples (and MAX_SAMPLES in all). The
 * iterations per sample follow the size's fastest undisturbed block so far
 * (see the file comment). */
static void measure_visit(const pp_state *st, const pp_pair *p, pp_size *sz, double share_s,
                          long min_samples, long max_samples)
{
    const mo_options *o = st->opts;
    const uint64_t t_start = mo_timer_now_ns();

    /* Warm-up: first contact (connection set-up, registration, page
     * mapping; caches after the other sizes) in one round trip, then the
     * rest of --warmup in up to WARM_BLOCKS blocks, together about one
     * sample's time. Without an undisturbed block yet, the fastest block
     * estimates the time per round trip. */
    double est = 0.0, share = 0.0;
    if (o->warmup > 0 || o->iters == 0)
        est = block(st, p, sz->bytes, 1, &share);
    if (o->warmup > 1) {
        double cap = ceil(o->sample_ms / 1000.0 / (2.0 * (est > 0 ? est : 1e-6)));
        long more = o->warmup - 1;
        if ((double)more > cap)
            more = cap < 1 ? 1 : (long)cap;
        long nblocks = more < WARM_BLOCKS ? more : WARM_BLOCKS;
        for (long b = 0; b < nblocks; b++) {
            double t = block(st, p, sz->bytes, more / nblocks, &share);
            note_block(sz, t, share);
            if (b == 0 || t < est)
                est = t;
        }
    }
    if (sz->n == 0 || sz->best_s > 0)
        sz->iterations = mo_round_trips(o, sz->best_s > 0 ? sz->best_s : est);

    for (long taken = 0; taken < max_samples && sz->n < MAX_SAMPLES; taken++) {
        if (taken >= min_samples && (double)(mo_timer_now_ns() - t_start) / 1e9 >= share_s)
            break;
        double t = block(st, p, sz->bytes, sz->iterations, &sz->shares[sz->n]);
        sz->samples[sz->n] = t;
        double before = sz->best_s;
        note_block(sz, t, sz->shares[sz->n]);
        sz->n++;
        /* The first undisturbed sample of a size whose warm-up was all
         * disturbed: samples of the right length from now on. */
        if (before <= 0 && sz->best_s > 0)
            sz->iterations = mo_round_trips(o, sz->best_s);
    }
    long first = sz->nvisits > 0 ? sz->visit_ends[sz->nvisits - 1] : 0;
    if ((long)sz->n > first && sz->nvisits < MAX_PASSES)
        sz->visit_ends[sz->nvisits++] = (long)sz->n;
    mo_stats_summarize_or_nan(sz->samples, sz->n, &sz->st);
}

/* ---- output ----------------------------------------------------------- */

/* One of "pairs". */
static void write_pair(mo_json *w, const void *item, const void *ctx)
{
    const pp_pair *p = item;
    const pp_state *st = ctx;
    mo_json_kv_string(w, "class", p->cls);
    mo_json_key(w, "ranks");
    mo_json_begin_array(w);
    mo_json_int64(w, 0);
    mo_json_int64(w, p->peer);
    mo_json_end_array(w);
    mo_json_key(w, "hosts");
    mo_json_begin_array(w);
    const char *const *hosts = (const char *const *)st->prov->hosts;
    mo_json_string(w, hosts && hosts[0] ? hosts[0] : "unknown");
    mo_json_string(w, hosts && hosts[p->peer] ? hosts[p->peer] : "unknown");
    mo_json_end_array(w);
    mo_json_kv_bool(w, "complete", p->complete);
    mo_json_key(w, "sizes");
    mo_json_begin_array(w);
    for (int j = 0; j < p->nsizes; j++) {
        const pp_size *sz = &p->sizes[j];
        if (sz->n == 0) /* not visited yet (shuffled order) */
            continue;
        mo_json_begin_object(w);
        mo_json_kv_uint64(w, "bytes", sz->bytes);
        mo_json_kv_double(w, "one_way_s", sz->st.median);
        mo_json_kv_int64(w, "samples", (int64_t)sz->n);
        mo_json_kv_int64(w, "iterations", sz->iterations);
        mo_json_kv_double(w, "min_s", sz->st.min);
        mo_json_kv_double(w, "mean_s", sz->st.mean);
        mo_json_kv_double(w, "max_s", sz->st.max);
        mo_json_kv_double(w, "ci_lo_s", sz->st.ci95_low);
        mo_json_kv_double(w, "ci_hi_s", sz->st.ci95_high);
        mo_json_kv_doubles(w, "samples_s", sz->samples, sz->n);
        mo_json_kv_doubles(w, "cpu_share", sz->shares, sz->n);
        mo_json_key(w, "visit_ends");
        mo_json_begin_array(w);
        for (int v = 0; v < sz->nvisits; v++)
            mo_json_int64(w, sz->visit_ends[v]);
        mo_json_end_array(w);
        if (sz->parts[PART_OS].n > 0) {
            mo_json_key(w, "parts");
            mo_json_begin_object(w);
            for (int k = 0; k < NPARTS; k++) {
                const pp_part *pt = &sz->parts[k];
                mo_json_key(w, part_names[k]);
                mo_json_begin_object(w);
                mo_json_kv_doubles(w, "samples_s", pt->samples, pt->n);
                mo_json_kv_doubles(w, "cpu_share", pt->shares, pt->n);
                if (k == PART_OR) {
                    mo_json_kv_doubles(w, "sender_s", pt->sender, pt->n);
                    mo_json_kv_doubles(w, "delay_s", pt->delay, pt->n);
                }
                mo_json_end_object(w);
            }
            mo_json_end_object(w);
        }
        mo_json_end_object(w);
    }
    mo_json_end_array(w);
    if (p->stream.n > 0) {
        mo_json_key(w, "stream");
        mo_json_begin_object(w);
        mo_json_kv_uint64(w, "bytes", st->params->stream);
        mo_json_kv_int64(w, "window", st->params->stream_window);
        mo_json_kv_doubles(w, "samples_s", p->stream.samples, p->stream.n);
        mo_json_kv_doubles(w, "cpu_share", p->stream.shares, p->stream.n);
        mo_json_end_object(w);
    }
}

static void write_results(mo_json *w, const void *ctx)
{
    const pp_state *st = ctx;
    mo_json_objects(w, "pairs", st->pairs, sizeof *st->pairs, (size_t)st->npairs, write_pair, st);
    mo_json_kv_int64(w, "ranks", st->ranks);
    mo_json_kv_int64(w, "nodes", st->nodes);
    mo_json_fingerprints(w, &st->fp);
}

static void pp_teardown(mo_bench *b, void *ctx)
{
    pp_state *st = ctx;
    (void)b;
    for (int k = 0; k < st->npairs; k++)
        if (st->pairs[k].comm != MPI_COMM_NULL)
            MPI_Comm_free(&st->pairs[k].comm);
    for (int i = 0; i < st->npairs; i++) {
        if (!st->pairs[i].sizes)
            continue;
        for (int j = 0; j < st->pairs[i].nsizes; j++) {
            free(st->pairs[i].sizes[j].samples);
            free(st->pairs[i].sizes[j].shares);
        }
        free(st->pairs[i].sizes);
    }
    free(st->buf);
    free(st->stream_buf);
    free(st->stream_reqs);
}

/* ---- main ------------------------------------------------------------- */

/* splitmix64: the shuffle's generator (fixed seed, so a run's order of
 * visits can be reproduced). */
static uint64_t pp_next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* order[0..n-1]: a permutation of 0..n-1 (Fisher-Yates). */
static void pp_shuffle(long *order, long n, uint64_t *state)
{
    for (long i = 0; i < n; i++)
        order[i] = i;
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(pp_next_random(state) % (uint64_t)(i + 1));
        long t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Every size's sample arrays; 0, or -1 when out of memory. */
static int pp_alloc_sizes(pp_pair *p, const mo_sizes *sizes)
{
    p->sizes = calloc(sizes->n, sizeof *p->sizes);
    if (!p->sizes)
        return -1;
    p->nsizes = (int)sizes->n;
    for (size_t i = 0; i < sizes->n; i++) {
        pp_size *sz = &p->sizes[i];
        sz->bytes = sizes->v[i];
        sz->samples = malloc(MAX_SAMPLES * sizeof *sz->samples);
        sz->shares = malloc(MAX_SAMPLES * sizeof *sz->shares);
        if (!sz->samples || !sz->shares)
            return -1;
    }
    return 0;
}

/* Rank 0: one sample of a part of one size. */
static void part_sample(const pp_state *st, const pp_pair *p, pp_size *sz, int part, long iters,
                        int64_t delay_ns)
{
    pp_part *pt = &sz->parts[part];
    pp_cmd c = {CMD_PART + part, (int64_t)sz->bytes, iters};
    MPI_Send(&c, 3, MPI_INT64_T, 1, CMD_TAG, p->comm);
    double share = 0.0, sender = 0.0;
    double t = run_part(p->comm, 0, part, st->buf, st->buf + st->half, (int)sz->bytes, iters,
                        delay_ns, &share, &sender);
    pt->samples[pt->n] = t;
    pt->shares[pt->n] = share;
    pt->sender[pt->n] = sender;
    pt->delay[pt->n] = (double)delay_ns / 1e9;
    pt->n++;
}

/* The fewest undisturbed samples any part of a size has. */
static size_t parts_clean(const pp_size *sz)
{
    size_t fewest = SIZE_MAX;
    for (int k = 0; k < NPARTS; k++) {
        size_t clean = 0;
        for (size_t i = 0; i < sz->parts[k].n; i++)
            clean += sz->parts[k].shares[i] >= CLEAN_SHARE;
        if (clean < fewest)
            fewest = clean;
    }
    return fewest;
}

/* Rank 0: the parts of every size up to --parts-max, PARTS_PASSES visits
 * each in shuffled orders (as the one-way sweep, so that a burst of load
 * cannot hit one size range). A block lasts about one sample's time; the
 * receive's wait lets an eager message arrive: three one-way times and 5 us
 * (the one-way time is the size's fastest undisturbed block). Returns 0, or
 * 1 when the time limit stopped it. */
static int measure_parts(pp_state *st, pp_pair *p, uint64_t *rng)
{
    const mo_options *o = st->opts;
    const long nsizes = p->nsizes;
    const size_t want = o->quick ? PARTS_SAMPLES : PARTS_SAMPLES_FULL;
    long *order = malloc((size_t)(nsizes > 0 ? nsizes : 1) * sizeof *order);
    if (!order)
        return 0; /* the one-way times stand without their parts */
    int rc = 0;
    for (long pass = 0; pass < PARTS_PASSES && rc == 0; pass++) {
        pp_shuffle(order, nsizes, rng);
        for (long k = 0; k < nsizes; k++) {
            pp_size *sz = &p->sizes[order[k]];
            if (sz->bytes > st->params->parts_max || sz->n == 0)
                continue;
            if (mo_time_up(st->opts, st->start_ns)) {
                rc = 1;
                break;
            }
            double one_way = sz->best_s > 0 ? sz->best_s : sz->st.min;
            if (!(one_way > 0))
                one_way = 1e-6;
            long iters = mo_round_trips(o, one_way) * 2; /* a part is about half a round trip */
            long gap_iters = iters < GAP_MIN_MESSAGES ? GAP_MIN_MESSAGES : iters;
            int64_t delay_ns = (int64_t)(3.0 * one_way * 1e9) + 5000;
            size_t upto = want * (size_t)(pass + 1) / PARTS_PASSES;
            /* The last pass tops up what a busy machine left without enough
             * undisturbed samples (parts_clean), as far as the arrays reach. */
            bool last = pass == PARTS_PASSES - 1;
            while (sz->parts[PART_OS].n < PARTS_MAX_SAMPLES &&
                   (sz->parts[PART_OS].n < upto || (last && parts_clean(sz) < PARTS_MIN_CLEAN))) {
                if (mo_time_up(st->opts, st->start_ns)) {
                    rc = 1;
                    break;
                }
                part_sample(st, p, sz, PART_OS, iters, 0);
                part_sample(st, p, sz, PART_OR, iters, delay_ns);
                part_sample(st, p, sz, PART_GAP, gap_iters, 0);
            }
        }
    }
    free(order);
    return rc;
}

/* Rank 0: the stream's samples of one pair after an untimed window (the
 * first contact at its size). Returns 0, or 1 when the time limit stopped
 * it. */
static int measure_stream(pp_state *st, pp_pair *p)
{
    const int w = (int)st->params->stream_window;
    const long want = st->opts->quick ? STREAM_SAMPLES_QUICK : STREAM_SAMPLES;
    pp_cmd c = {CMD_STREAM, (int64_t)st->params->stream, w};
    for (long k = -1; k < want; k++) {
        if (mo_time_up(st->opts, st->start_ns))
            return 1;
        double share = 0.0;
        MPI_Send(&c, 3, MPI_INT64_T, 1, CMD_TAG, p->comm);
        double t = run_stream(st, p->comm, 0, (int)c.size, w, &share);
        if (k >= 0 && p->stream.n < STREAM_MAX_SAMPLES) {
            p->stream.samples[p->stream.n] = t;
            p->stream.shares[p->stream.n++] = share;
        }
    }
    return 0;
}

/* Rank 0: measures every size of one pair, --passes times, each pass in
 * its own shuffled order (so a burst of load cannot hit one size range);
 * returns 0, 1 when the time limit stopped it, -1 when out of memory. */
static int measure_pair(mo_bench *b, pp_state *st, pp_pair *p)
{
    const mo_options *o = st->opts;
    const long passes = st->params->passes;
    const long nsizes = (long)o->sizes.n;
    const uint64_t pair_start = mo_timer_now_ns();
    uint64_t rng = SHUFFLE_SEED;
    long *order = malloc((size_t)nsizes * sizeof *order);
    int rc = order && pp_alloc_sizes(p, &o->sizes) == 0 ? 0 : -1;
    for (long pass = 0; pass < passes && rc == 0; pass++) {
        mo_verbose(o, "%s pair, pass %ld of %ld\n%-12s%-12s%-9s%-14s%-14s\n", p->cls, pass + 1, passes, "bytes",
                   "iterations", "samples", "one_way_us", "min_us");
        pp_shuffle(order, nsizes, &rng);
        for (long k = 0; k < nsizes; k++) {
            if (mo_time_up(st->opts, st->start_ns)) {
                rc = 1;
                break;
            }
            pp_size *sz = &p->sizes[order[k]];
            double used = (double)(mo_timer_now_ns() - pair_start) / 1e9;
            double share = (st->params->budget_s - used) / (double)((passes - pass) * nsizes - k);
            /* After pass k, at least ceil(reps * (k + 1) / passes) samples. */
            long want = (o->reps * (pass + 1) + passes - 1) / passes - (long)sz->n;
            if (want < 0)
                want = 0;
            long most = want > MAX_SAMPLES / passes ? want : MAX_SAMPLES / passes;
            measure_visit(st, p, sz, share > 0 ? share : 0.0, want, most);
            mo_verbose(o, "%-12llu%-12ld%-9zu%-14.3f%-14.3f\n", (unsigned long long)sz->bytes, sz->iterations,
                       sz->n, sz->st.median * 1e6, sz->st.min * 1e6);
            mo_progress(o->progress, ++b->done, b->total, "%s/%llu pass %ld/%ld", p->cls,
                        (unsigned long long)sz->bytes, pass + 1, passes);
            mo_bench_running(b);
        }
    }
    free(order);
    if (rc == 0 && st->params->parts_max > 0)
        rc = measure_parts(st, p, &rng);
    if (rc == 0 && st->params->stream > 0)
        rc = measure_stream(st, p);
    p->complete = rc == 0;
    pp_cmd quit = {CMD_QUIT, 0, 0};
    MPI_Send(&quit, 3, MPI_INT64_T, 1, CMD_TAG, p->comm);
    return rc;
}

/* The stream's window of receive slots is allocated at once on the peer. */
static int pp_check(const mo_options *o, void *ctx, char *err, size_t errlen)
{
    const pp_params *p = ctx;
    (void)o;
    if (p->stream > MAX_STREAM_BUFFER / (uint64_t)p->stream_window || p->stream > (uint64_t)INT_MAX) {
        snprintf(err, errlen, "--stream-window %ld x --stream %llu bytes exceeds 1 GiB of receive slots",
                 p->stream_window, (unsigned long long)p->stream);
        return -1;
    }
    return 0;
}

/* Short samples, down to one round trip: a sample during which either rank
 * lost its core is discarded, and on a busy machine only short ones fall
 * between two preemptions (see the file comment). */
static void pp_configure(mo_bench *b, void *ctx)
{
    mo_options *o = &b->opts;
    (void)ctx;
    if (!o->sample_ms_set)
        o->sample_ms = o->quick ? SAMPLE_MS_QUICK : SAMPLE_MS;
    if (!o->min_iters_set && o->max_iters >= 1)
        o->min_iters = 1;
}

static void pp_setup(mo_bench *b, void *ctx)
{
    pp_state *st = ctx;
    const int wrank = b->rank;
    st->opts = &b->opts;
    st->prov = &b->prov;
    st->start_ns = b->start_ns;
    st->ranks = b->nranks;

    /* Node membership: the lowest world rank of each shared-memory node
     * names it; rank 0 names its own. Every rank derives the same pairs. */
    int leader = mo_node_leader();
    int cand[2] = {leader == 0 && wrank > 0 ? wrank : INT_MAX, leader != 0 ? wrank : INT_MAX};
    MPI_Allreduce(MPI_IN_PLACE, cand, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int is_leader = leader == wrank;
    MPI_Allreduce(&is_leader, &st->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const char *classes[2] = {"intra", "inter"};
    st->my_pair = -1;
    for (int k = 0; k < 2; k++) {
        if (cand[k] == INT_MAX)
            continue;
        pp_pair *p = &st->pairs[st->npairs];
        p->cls = classes[k];
        p->peer = cand[k];
        int member = wrank == 0 || wrank == p->peer;
        MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, wrank, &p->comm);
        if (wrank == p->peer)
            st->my_pair = st->npairs;
        st->npairs++;
    }

    /* Message buffers on the ranks that take part. */
    const int taking_part = wrank == 0 || st->my_pair >= 0;
    const uint64_t largest = b->opts.sizes.v[b->opts.sizes.n - 1];
    /* Separate send and receive buffers, as applications have: receiving into
     * the buffer just sent from made MPICH's 1 MiB one-way time 487 us instead
     * of 84 us here (and Open MPI's 2.6 ms instead of 0.3-0.6 ms), which would
     * put a transfer time into the table that no application sees. */
    long page = sysconf(_SC_PAGESIZE);
    const size_t pagesz = page > 0 ? (size_t)page : 4096;
    const size_t half = ((largest > 0 ? (size_t)largest : 1) + pagesz - 1) / pagesz * pagesz;
    const size_t bytes = 2 * half;
    st->half = half;
    const size_t stream_bytes =
        st->params->stream > 0 ? (size_t)st->params->stream * (size_t)st->params->stream_window : 0;
    bool stream_ok = true;
    if (taking_part) {
        st->buf = mo_page_alloc(bytes);
        if (st->buf) /* every page now, so no page faults land in timed loops */
            memset(st->buf, wrank + 1, bytes);
        if (stream_bytes > 0) {
            st->stream_buf = mo_page_alloc(stream_bytes);
            st->stream_reqs = malloc((size_t)st->params->stream_window * sizeof *st->stream_reqs);
            stream_ok = st->stream_buf && st->stream_reqs;
            if (st->stream_buf)
                memset(st->stream_buf, wrank + 1, stream_bytes);
        }
    }
    b->have = (st->buf != NULL && stream_ok) || !taking_part;
    if (wrank == 0) {
        mo_fingerprints_collect(&st->fp, b->prov.mpi_library_version);
        if (cand[0] == INT_MAX)
            mo_result_warn(&b->doc, "no other rank shares rank 0's node: no intra-node pair was measured");
    }
    snprintf(b->no_alloc, sizeof b->no_alloc, "cannot allocate %zu-byte message buffers on every rank",
             bytes + stream_bytes);
    b->ready.no_alloc = b->no_alloc;
    b->ready.unbound_peer = cand[0] == INT_MAX ? 0 : cand[0];
    b->ready.quiet = true;
    b->ready.no_work_loop = true;
}

/* Rank 0 visits every pair; each peer serves its pair. */
static int pp_measure(mo_bench *b, void *ctx)
{
    pp_state *st = ctx;
    if (b->rank != 0) {
        if (st->my_pair >= 0)
            serve(st, &st->pairs[st->my_pair]);
        return 0;
    }
    b->total = st->npairs * (int)st->params->passes * (int)b->opts.sizes.n;
    bool time_up = false, oom = false;
    for (int k = 0; k < st->npairs; k++) {
        /* A pair cut short still gets its quit command, so its peer leaves. */
        int r = time_up || oom ? 1 : measure_pair(b, st, &st->pairs[k]);
        if (time_up || oom) {
            pp_cmd quit = {CMD_QUIT, 0, 0};
            MPI_Send(&quit, 3, MPI_INT64_T, 1, CMD_TAG, st->pairs[k].comm);
        }
        time_up = time_up || r == 1;
        oom = oom || r < 0;
    }
    if (oom)
        return mo_bench_conclude(b, true, NULL, NULL, false);
    if (time_up)
        mo_result_warn(&b->doc, "time limit of %g s reached: made %d of %d (pair, pass, size) visits",
                       b->opts.time_limit_s, b->done, b->total);
    return mo_result_complete(&b->doc, BENCH, write_results, st);
}

int main(int argc, char **argv)
{
    static pp_params params = {.stream_window = DEFAULT_STREAM_WINDOW};
    static pp_state st = {.params = &params};
    static const mo_bench_options ext = {.usage = pp_usage, .ctx = &params};
    const mo_bench_kernel k = {
        .spec = {BENCH, DEFAULT_SIZES, &ext, 2, true, pp_check, NULL},
        .results = write_results, .state = &st, .configure = pp_configure, .setup = pp_setup,
        .measure = pp_measure, .verbose_done = true, .teardown = pp_teardown, MO_KERNEL_FIELDS(pp_fields),
    };
    return mo_bench_main(argc, argv, &k);
}
