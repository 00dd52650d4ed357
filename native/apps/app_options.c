/* app_options.c - the mini-apps' shared options; see app_options.h. */
#define _POSIX_C_SOURCE 200809L
#include "app_options.h"

#include <stdio.h>

app_common app_common_init(const app_defaults *d)
{
    return (app_common){.modes = (1u << d->nmodes) - 1, .seed = 1};
}

int app_common_parse(app_common *c, const app_defaults *d, int code, const char *arg, char *err, size_t errlen)
{
    switch (code) {
    case APP_OPT_MODES: return app_parse_names("modes", arg, d->mode_names, d->nmodes, &c->modes, err, errlen);
    case APP_OPT_GRID:
    case APP_OPT_LOCAL: return app_parse_extent(&c->extent, code == APP_OPT_LOCAL, arg, d->max_grid, err, errlen);
    case APP_OPT_ITERATIONS:
        c->iterations_set = true;
        return mo_options_parse_long("iterations", arg, 1, 1000000, &c->iterations, err, errlen);
    case APP_OPT_SEED: return mo_options_parse_long("seed", arg, 0, 0x7fffffffL, &c->seed, err, errlen);
    case APP_OPT_PROFILER_AB:
        return mo_options_parse_long("profiler-ab", arg, 0, 1000000, &c->profiler_ab, err, errlen);
    }
    return 1;
}

int app_common_finalize(app_common *c, const app_defaults *d, bool quick, char *err, size_t errlen)
{
    if (app_finish_extent(&c->extent, quick ? d->grid_quick : d->grid, err, errlen))
        return -1;
    if (!c->iterations_set)
        c->iterations = quick ? d->iterations_quick : d->iterations;
    return 0;
}

void app_common_json(mo_json *w, const app_common *c, const app_defaults *d)
{
    mo_options_json_set(w, "modes", d->mode_names, d->nmodes, c->modes);
    app_json_extent(w, &c->extent);
    mo_json_kv_int64(w, "iterations", c->iterations);
    mo_json_kv_int64(w, "profiler_ab", c->profiler_ab);
}
