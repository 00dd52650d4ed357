/* bench_main.c - the one main() of the benchmarks; see bench_main.h. */
#define _POSIX_C_SOURCE 200809L
#include "bench_main.h"
#include "shmsync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mo_bench_running(mo_bench *b)
{
    char err[512];
    if (mo_result_write(&b->doc, "running", b->results, b->state, err, sizeof err) != 0)
        fprintf(stderr, "mo_%s: warning: %s\n", b->program, err);
}

size_t mo_bench_largest(const mo_bench *b)
{
    const uint64_t largest = b->opts.sizes.v[b->opts.sizes.n - 1];
    return largest > 0 ? (size_t)largest : 1;
}

int mo_bench_pair_allocated(mo_bench *b, int pair_rank, bool have, size_t bytes)
{
    int mine = have, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, b->comm);
    if (all)
        return 0;
    if (pair_rank != 0)
        return 1;
    fprintf(stderr, "mo_%s: error: cannot allocate %zu-byte message buffers\n", b->program, bytes);
    return -1;
}

void mo_bench_pair_buffers(mo_bench *b, unsigned char **sbuf, unsigned char **rbuf)
{
    const size_t bytes = mo_bench_largest(b);
    if (b->comm != MPI_COMM_NULL) {
        *sbuf = mo_page_alloc(bytes);
        *rbuf = mo_page_alloc(bytes);
        b->have = *sbuf && *rbuf;
        if (b->have) {
            memset(*sbuf, b->rank + 1, bytes);
            memset(*rbuf, 0, bytes);
        }
    }
    snprintf(b->no_alloc, sizeof b->no_alloc, "cannot allocate %zu-byte message buffers", bytes);
    b->ready.no_alloc = b->no_alloc;
}

void mo_pair_points_setup(mo_bench *b, mo_pair_points *pp, size_t item, size_t nscratch,
                          int (*init)(void *point, uint64_t bytes, void *arg), void (*fini)(void *point),
                          void *arg)
{
    pp->fini = fini;
    mo_bench_pair_buffers(b, &pp->sbuf, &pp->rbuf);
    const mo_sizes *sz = &b->opts.sizes;
    if (b->comm != MPI_COMM_NULL) {
        MPI_Comm_rank(b->comm, &pp->rank);
        pp->scratch = malloc(nscratch * sizeof *pp->scratch);
        b->have = b->have && pp->scratch;
    }
    if (b->rank == 0) {
        bool ok = mo_points_plan(&pp->points, (int)sz->n, item) == 0;
        for (int i = 0; ok && i < pp->points.ntotal; i++)
            ok = init(mo_points_at(&pp->points, i), sz->v[i], arg) == 0;
        b->have = b->have && ok;
    }
    /* rank 1 measures each point too, into one of its own */
    pp->points.ntotal = (int)sz->n;
    b->ready.unbound_peer = 1;
}

void *mo_pair_point(const mo_pair_points *pp, int i, void *local)
{
    return pp->rank == 0 ? mo_points_at(&pp->points, i) : local;
}

void mo_pair_point_done(mo_pair_points *pp, int i, uint64_t bytes, char *label, size_t labellen)
{
    pp->points.npoints = i + 1;
    snprintf(label, labellen, "%llu B", (unsigned long long)bytes);
}

void mo_pair_points_free(mo_pair_points *pp)
{
    mo_points_free(&pp->points, pp->fini);
    free(pp->scratch);
    free(pp->sbuf);
    free(pp->rbuf);
    /* a second call finds nothing to free again */
    pp->scratch = NULL;
    pp->sbuf = pp->rbuf = NULL;
}

int mo_bench_nsizes(const mo_bench *b, const void *state)
{
    (void)state;
    return (int)b->opts.sizes.n;
}

int mo_bench_conclude(mo_bench *b, bool oom, const char *unit, void (*finish)(mo_bench *b, void *state),
                      bool recheck_work)
{
    if (oom) {
        fprintf(stderr, "mo_%s: error: out of memory\n", b->program);
        return -1;
    }
    if (b->time_up)
        mo_result_warn(&b->doc, "time limit of %g s reached: measured %d of %d %s", b->opts.time_limit_s,
                       b->done, b->total, unit);
    if (finish)
        finish(b, b->state);
    if (recheck_work)
        mo_work_recheck(&b->work);
    return mo_result_complete(&b->doc, b->program, b->results, b->state);
}

/* Rank 0 decides whether the time is up; lockstep ranks learn it from rank
 * 0, so that all stop at the same point. */
static bool time_is_up(const mo_bench *b, const mo_bench_kernel *k, uint64_t t0)
{
    int up = b->rank == 0 && mo_time_up(&b->opts, t0);
    if (k->mode == MO_BENCH_LOCKSTEP)
        MPI_Bcast(&up, 1, MPI_INT, 0, b->comm);
    return up != 0;
}

/* Every point in turn until the time limit; rank 0 reports each one (a
 * progress line, the running document). Returns this rank's status. */
static int point_loop(mo_bench *b, const mo_bench_kernel *k)
{
    const bool lead = k->mode == MO_BENCH_LEAD;
    if (lead && b->rank != 0) {
        if (k->run_cmd)
            mo_cmd_serve(b->ctl, k->run_cmd, k->state);
        else
            k->serve(b, k->state);
        return 0;
    }
    if (!lead && b->comm == MPI_COMM_NULL)
        return 0;
    const uint64_t t0 = k->clock_at_loop ? mo_timer_now_ns() : b->start_ns;
    b->total = k->planned ? *k->planned : k->npoints(b, k->state);
    bool oom = false;
    for (int i = 0; i < b->total; i++) {
        if (time_is_up(b, k, t0)) {
            b->time_up = true;
            break;
        }
        char label[96] = "";
        int r = k->point(b, k->state, i, label, sizeof label);
        if (r == MO_POINT_OOM) {
            oom = true;
            break;
        }
        b->done++;
        if (b->rank == 0) {
            mo_progress(b->opts.progress, b->done, b->total, "%s", label);
            mo_bench_running(b);
        }
        if (r == MO_POINT_LAST) {
            b->time_up = true;
            break;
        }
    }
    if (lead && k->quit)
        k->quit(b, k->state);
    else if (lead && k->run_cmd)
        mo_cmd_quit(b->ctl);
    if (b->rank != 0)
        return 0;
    return mo_bench_conclude(b, oom, k->unit, k->finish, k->recheck_work);
}

/* A kernel's own measure(); with run_cmd, the ranks but 0 that reach it
 * serve rank 0's commands instead (over the pair, or b->ctl) until its
 * mo_cmd_quit(). */
static int own_measure(mo_bench *b, const mo_bench_kernel *k)
{
    if (k->run_cmd && b->rank != 0) {
        mo_cmd_serve(k->pair ? b->comm : b->ctl, k->run_cmd, k->state);
        return 0;
    }
    return k->measure(b, k->state);
}

/* Every rank: the kernel's teardown, then its shared flags and the communicators it was given. */
static void teardown(mo_bench *b, const mo_bench_kernel *k)
{
    if (k->teardown)
        k->teardown(b, k->state);
    if (k->pair_points)
        mo_pair_points_free(k->pair_points);
    if (k->shm && b->have_shm > 0)
        mo_shm_close(k->shm);
    if (k->pair && b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    if (b->ctl != MPI_COMM_NULL)
        MPI_Comm_free(&b->ctl);
}

/* Every rank parses the same options and takes part in the same votes, so
 * all leave together; only rank 0 prints an error (mo_bench_end). */
int mo_bench_main(int argc, char **argv, const mo_bench_kernel *k)
{
    /* A kernel that needs a thread level names it from argv before MPI is
     * up (its full parse, with its messages, follows in mo_bench_start). */
    int provided = MPI_THREAD_SINGLE;
    if (k->thread_level)
        MPI_Init_thread(&argc, &argv, k->thread_level(argc, argv), &provided);
    else
        MPI_Init(&argc, &argv);
    mo_bench b;
    memset(&b, 0, sizeof b);
    b.provided = provided;
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.nranks);
    b.start_ns = mo_timer_now_ns();
    b.argc = argc;
    b.argv = argv;
    b.program = k->spec.program;
    b.spec = k->spec;
    if (k->fields)
        b.spec.ext = mo_fields_wrap(&b.fields, k->fields, k->nfields, k->spec.ext);
    b.results = k->results;
    b.state = k->state;
    int exit_status;
    if (!mo_bench_start(&b.opts, &b.spec, argc, argv, &exit_status))
        return exit_status;
    if (k->configure)
        k->configure(&b, k->state);
    int prov_rc = mo_provenance_collect(&b.prov, MPI_COMM_WORLD, argc, argv, &b.opts);
    b.doc = (mo_result){k->benchmark ? k->benchmark : k->spec.program, &b.prov, &b.timer, &b.work, &b.opts,
                        b.spec.ext, 0, NULL};

    /* Set-up on every rank; then rank 0 probes, calibrates and writes the
     * running document, and every rank learns whether all of that worked. */
    b.have = 1;
    b.have_shm = -1;
    b.comm = MPI_COMM_NULL;
    b.ctl = MPI_COMM_NULL;
    if (k->commands || (k->run_cmd && !k->pair))
        MPI_Comm_dup(MPI_COMM_WORLD, &b.ctl);
    if (k->pair)
        MPI_Comm_split(MPI_COMM_WORLD, b.rank < 2 ? 0 : MPI_UNDEFINED, b.rank, &b.comm);
    b.ready.calib_samples = 5;
    if (k->shm)
        b.have_shm = mo_shm_open(k->shm, b.err, sizeof b.err) == 0;
    k->setup(&b, k->state);
    b.ready.prov_rc = prov_rc;
    b.ready.timer = &b.timer;
    b.ready.work = &b.work;
    b.ready.results = k->results;
    b.ready.ctx = k->state;
    bool ready = b.have_shm < 0 ? mo_bench_ready(&b.doc, &b.ready, b.have, b.err, sizeof b.err)
                                : mo_bench_ready_shm(&b.doc, &b.ready, b.have, b.have_shm, b.err, sizeof b.err);
    if (!ready) {
        teardown(&b, k);
        return mo_bench_end(b.rank, b.program, &b.doc, &b.prov, &b.opts, 2, b.err);
    }

    int status = k->start ? k->start(&b, k->state) : 0;
    if (status == 1) {
        status = 0;
    } else if (status == 0) {
        status = k->measure ? own_measure(&b, k) : point_loop(&b, k);
        if (b.rank == 0 && k->verbose_done && b.opts.verbose)
            printf("mo_%s: done in %.1f s\n", b.program, (double)(mo_timer_now_ns() - b.start_ns) / 1e9);
    }
    mo_quiet_barrier(MPI_COMM_WORLD);
    teardown(&b, k);
    return mo_bench_end(b.rank, b.program, &b.doc, &b.prov, &b.opts, status == 0 ? 0 : 1, NULL);
}
