/* points.c - a kernel's planned and measured points; see points.h. */
#include "points.h"

#include <stdlib.h>

int mo_points_plan(mo_points *p, int n, size_t item)
{
    p->v = calloc(n > 0 ? (size_t)n : 1, item);
    p->item = item;
    p->npoints = 0;
    p->ntotal = p->v ? n : 0;
    return p->v ? 0 : -1;
}

void *mo_points_at(const mo_points *p, int i)
{
    return (char *)p->v + (size_t)i * p->item;
}

void *mo_points_next(mo_points *p)
{
    return mo_points_at(p, p->npoints++);
}

void mo_points_json(mo_json *w, const mo_points *p,
                    void (*each)(mo_json *w, const void *item, const void *ctx), const void *ctx)
{
    mo_json_kv_int64(w, "points_planned", p->ntotal);
    mo_json_objects(w, "points", p->v, p->item, (size_t)p->npoints, each, ctx);
}

void mo_points_free(mo_points *p, void (*fini)(void *point))
{
    for (int i = 0; p->v && fini && i < p->ntotal; i++)
        fini(mo_points_at(p, i));
    free(p->v);
    p->v = NULL;
    p->npoints = p->ntotal = 0;
}
