/* app_main.c - the mini-apps' shared start, mode loop and end; see app_main.h. */
#define _POSIX_C_SOURCE 200809L
#include "app_main.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

bool app_run_start(app_run *r, const mo_bench_spec *spec, const char *benchmark, const app_extent *extent,
                   int argc, char **argv, int *exit_status)
{
    MPI_Init(&argc, &argv);
    memset(r, 0, sizeof *r);
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    r->name = spec->program;
    if (!mo_bench_start(&r->opts, spec, argc, argv, exit_status))
        return false;
    r->prov_rc = mo_provenance_collect(&r->prov, MPI_COMM_WORLD, argc, argv, &r->opts);
    r->doc = (mo_result){benchmark, &r->prov, &r->timer, &r->work, &r->opts, spec->ext, 0, NULL};
    if (app_grid_init_extent(&r->grid, MPI_COMM_WORLD, extent, r->err, sizeof r->err) != 0) {
        *exit_status = app_run_end(r, 2, r->err);
        return false;
    }
    return true;
}

int app_run_ready(app_run *r, bool have, double calib_ms, int calib_samples, void (*calibrated)(void *app),
                  void *app, mo_results_fn results, const char *what)
{
    int verdict[2] = {have, 1}, all[2];
    if (r->rank == 0 && have) {
        verdict[1] = mo_bench_probe(r->prov_rc, &r->timer, &r->work, calib_ms, calib_samples, r->err, sizeof r->err);
        if (verdict[1] && calibrated)
            calibrated(app);
        verdict[1] = verdict[1] && mo_result_write(&r->doc, "running", results, app, r->err, sizeof r->err) == 0;
    }
    MPI_Allreduce(verdict, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all[0] && all[1])
        return 0;
    if (all[1])
        snprintf(r->err, sizeof r->err, "cannot allocate the %zu-point %s on every rank", r->grid.total, what);
    return 2;
}

int app_count_modes(unsigned modes)
{
    int n = 0;
    for (; modes; modes >>= 1)
        n += (int)(modes & 1u);
    return n;
}

/* The index of the i-th chosen mode (i < app_count_modes(modes)). */
static int nth_mode(unsigned modes, int i)
{
    int m = 0;
    for (;; m++)
        if (((modes >> m) & 1u) && i-- == 0)
            return m;
}

int app_run_modes(app_run *r, unsigned modes, const char *const *names, app_mode_fn run, void *app,
                  mo_results_fn results)
{
    const int n = app_count_modes(modes);
    for (int i = 0; i < n; i++) {
        /* Rank 0 names the mode, so that every rank runs the same one even if
         * the others' option parsing ever differed. */
        int mode = r->rank == 0 ? nth_mode(modes, i) : 0;
        MPI_Bcast(&mode, 1, MPI_INT, 0, MPI_COMM_WORLD);
        mo_progress(r->opts.progress, i, n, "%s", names[mode]);
        run(r, app, i, mode);
        if (r->rank == 0 && mo_result_write(&r->doc, "running", results, app, r->err, sizeof r->err) != 0)
            fprintf(stderr, "mo_%s: warning: %s\n", r->name, r->err);
    }
    mo_progress(r->opts.progress, n, n, "done");
    if (r->rank != 0)
        return 0;
    mo_work_recheck(&r->work);
    return mo_result_complete(&r->doc, r->name, results, app) == 0 ? 0 : 1;
}

int app_run_end(app_run *r, int status, const char *msg)
{
    app_grid_free(&r->grid);
    return mo_bench_end(r->rank, r->name, &r->doc, &r->prov, &r->opts, status, msg);
}
