/* points.h - a kernel's points: what it plans to measure, one result struct
 * a point, measured in order and written as the document's "points_planned"
 * and "points" (matching, polling, progress, waitany, and the pair kernels
 * through mo_pair_points), so that each keeps only what a point holds. */
#ifndef MO_POINTS_H
#define MO_POINTS_H

#include <stddef.h>

#include "json.h"

typedef struct mo_points {
    void *v;     /* ntotal zeroed items of item bytes */
    size_t item;
    int npoints; /* measured so far: the first npoints items */
    int ntotal;  /* planned: the kernel's .planned */
} mo_points;

/* Plans n zeroed points of item bytes. Returns 0, or -1 out of memory
 * (nothing planned). */
int mo_points_plan(mo_points *p, int n, size_t item);

/* Point i of the plan. */
void *mo_points_at(const mo_points *p, int i);

/* point(): the next point of the plan, counted as measured. */
void *mo_points_next(mo_points *p);

/* "points_planned": ntotal, and "points": the measured ones, each object's
 * members written by each(w, point, ctx). */
void mo_points_json(mo_json *w, const mo_points *p,
                    void (*each)(mo_json *w, const void *item, const void *ctx), const void *ctx);

/* Each planned point through fini(point) (NULL: none; it also meets points
 * the kernel never filled in, zeroed), then the plan; p is left empty. */
void mo_points_free(mo_points *p, void (*fini)(void *point));

#endif
