/* app_main.h - what the mini-apps (mo_halo, mo_cg) share around their own
 * modes: the start of main() (MPI, options, provenance, the result document,
 * the 3-D grid), the loop over the chosen modes (progress lines, the running
 * document after each mode, the complete one at the end) and the end. Each
 * app keeps its options, buffers, per-mode measurement and results writer.
 * Not mo_bench_main() (whose .measure hook could stand for the point loop, as
 * threads_procs does): the apps have no time limit, their progress lines name
 * the mode about to run, and their readiness vote skips the probe on a rank
 * that could not allocate; moving them would change those. */
#ifndef MO_APP_MAIN_H
#define MO_APP_MAIN_H

#include <stdbool.h>

#include "bench_util.h"
#include "grid.h"
#include "options.h"
#include "provenance.h"
#include "result.h"
#include "timer.h"
#include "work.h"

/* One app's run; lives in main's frame (doc points into it). */
typedef struct app_run {
    int rank;          /* in MPI_COMM_WORLD */
    const char *name;  /* spec.program: "mo_<name>: ..." lines */
    mo_options opts;
    mo_provenance prov;
    int prov_rc;       /* mo_provenance_collect's, for mo_bench_probe */
    mo_timer_info timer;
    mo_work_calib work;
    mo_result doc;
    app_grid grid;
    char err[512];
} app_run;

/* MPI_Init, the options of spec (the app's own in spec->ext, which fill
 * *extent), provenance, the document of `benchmark` and the grid of *extent.
 * Returns true to go on; false when main() should `return *exit_status`
 * (--help, bad options, or a grid that cannot be made: all said on rank 0). */
bool app_run_start(app_run *r, const mo_bench_spec *spec, const char *benchmark, const app_extent *extent,
                   int argc, char **argv, int *exit_status);

/* The vote before the modes, collective: have says whether this rank's
 * buffers came; rank 0, when its did, probes the timer, calibrates the work
 * loop (calib_ms, calib_samples), hands the calibration to calibrated(app)
 * (may be NULL) and writes the running document (results from app).
 * Returns 0 to run the modes, else 2 with the reason in r->err on rank 0:
 * its probe's or write's, or "cannot allocate the <points>-point <what> on
 * every rank". */
int app_run_ready(app_run *r, bool have, double calib_ms, int calib_samples, void (*calibrated)(void *app),
                  void *app, mo_results_fn results, const char *what);

/* How many modes the bit set `modes` chooses. */
int app_count_modes(unsigned modes);

/* Runs one chosen mode (collective; mode: its index in the app's names). */
typedef void (*app_mode_fn)(app_run *r, void *app, int i, int mode);

/* Every chosen mode of `modes` in turn, in index order: rank 0 names it to
 * the others, a progress line, run(), rank 0 writes the running document
 * (results from app); then the work loop's recheck and the complete document.
 * Collective. Returns this rank's status (0; 1 when the document could not
 * be completed). */
int app_run_modes(app_run *r, unsigned modes, const char *const *names, app_mode_fn run, void *app,
                  mo_results_fn results);

/* Frees the grid and ends through mo_bench_end(); returns the exit status. */
int app_run_end(app_run *r, int status, const char *msg);

#endif
