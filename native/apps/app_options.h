/* app_options.h - the options both mini-apps take: --modes (--mode), --grid,
 * --local, --iterations, --seed and --profiler-ab, with each app's names, limits and
 * defaults. Each app adds its own options after APP_OPT_FIRST and keeps its
 * usage text (the wording differs). */
#ifndef MO_APP_OPTIONS_H
#define MO_APP_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "grid.h"
#include "json.h"
#include "options.h"

typedef struct app_common {
    unsigned modes;  /* bit set over the app's mode names */
    app_extent extent;
    bool iterations_set;
    long iterations, seed;
    long profiler_ab; /* --profiler-ab: iterations per block (app_ab.h), 0: none */
} app_common;

/* One app's names, limits and defaults for them. */
typedef struct app_defaults {
    const char *const *mode_names;
    int nmodes;
    long max_grid;                     /* per axis */
    int grid, grid_quick;              /* cube edge without --grid/--local */
    long iterations, iterations_quick; /* without --iterations */
} app_defaults;

/* The option codes; an app's own follow from APP_OPT_FIRST. */
enum { APP_OPT_MODES = MO_OPT_BENCH_FIRST, APP_OPT_GRID, APP_OPT_LOCAL, APP_OPT_ITERATIONS, APP_OPT_SEED, APP_OPT_PROFILER_AB,
       APP_OPT_FIRST };

/* The shared entries of an app's getopt_long table. */
#define APP_COMMON_LONGOPTS                                                                                      \
    {"modes", required_argument, NULL, APP_OPT_MODES}, {"mode", required_argument, NULL, APP_OPT_MODES},         \
        {"grid", required_argument, NULL, APP_OPT_GRID}, {"local", required_argument, NULL, APP_OPT_LOCAL},      \
        {"iterations", required_argument, NULL, APP_OPT_ITERATIONS}, {"seed", required_argument, NULL, APP_OPT_SEED}, \
        {"profiler-ab", required_argument, NULL, APP_OPT_PROFILER_AB}

/* The usage lines of the options every app has the same words for. */
#define APP_PROFILER_AB_USAGE                                                                 \
    "  --profiler-ab N      time the iterations in blocks of N, alternately with the overlap\n" \
    "                       profiler paused and running: its cost inside one launch\n"        \
    "                       (default 0: no blocks)\n"

/* The default values before parsing: all modes, seed 1. */
app_common app_common_init(const app_defaults *d);

/* One shared option into c. Returns 0, -1 with one line in err, or 1 when
 * code is not a shared option's (the app parses it). */
int app_common_parse(app_common *c, const app_defaults *d, int code, const char *arg, char *err, size_t errlen);

/* After parsing: the grid and the iterations (--quick's defaults when
 * quick). Returns 0, or -1 with one line in err. */
int app_common_finalize(app_common *c, const app_defaults *d, bool quick, char *err, size_t errlen);

/* Into the document's options: "modes", the extent, "iterations" and
 * "profiler_ab" (an app writes its own next, then "seed"). */
void app_common_json(mo_json *w, const app_common *c, const app_defaults *d);

#endif
