/* grid.c - the mini-applications' 3-D block decomposition, ghost exchange,
 * seeded data and decomposition-independent checksums (see grid.h). */
#include "grid.h"

#include "json.h"
#include "options.h"
#include "timer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID_TAG 700 /* + direction index: tags 700..726 */

static const int AXIS_STRIDE[3] = {1, 3, 9}; /* direction index step per axis */

uint64_t app_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void direction(int d, int out[3])
{
    out[0] = d % 3 - 1;
    out[1] = (d / 3) % 3 - 1;
    out[2] = d / 9 - 1;
}

static bool is_face(int d)
{
    int v[3];
    direction(d, v);
    return (v[0] != 0) + (v[1] != 0) + (v[2] != 0) == 1;
}

void app_grid_dims(int size, int dims[3])
{
    int d[3] = {0, 0, 0};
    MPI_Dims_create(size, 3, d);
    /* Non-increasing from MPI_Dims_create: most ranks along z, whose faces
     * are the most contiguous (rows of x), fewest along x (strided faces). */
    dims[0] = d[2];
    dims[1] = d[1];
    dims[2] = d[0];
}

int app_grid_init(app_grid *g, MPI_Comm comm, const int global[3], char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->cart = MPI_COMM_NULL;
    for (int d = 0; d < GRID_NDIR; d++) {
        g->nbr[d] = MPI_PROC_NULL;
        g->send_type[d] = g->recv_type[d] = MPI_DATATYPE_NULL;
    }
    MPI_Comm_size(comm, &g->size);
    app_grid_dims(g->size, g->dims);
    for (int a = 0; a < 3; a++) {
        g->global[a] = global[a];
        if (global[a] < g->dims[a]) {
            snprintf(err, errlen, "grid %dx%dx%d cannot be split over %dx%dx%d ranks (too few points on an axis)",
                     global[0], global[1], global[2], g->dims[0], g->dims[1], g->dims[2]);
            return -1;
        }
    }
    const int periods[3] = {0, 0, 0};
    MPI_Cart_create(comm, 3, g->dims, periods, 0, &g->cart);
    MPI_Comm_rank(g->cart, &g->rank);
    MPI_Cart_coords(g->cart, g->rank, 3, g->coords);
    for (int a = 0; a < 3; a++) {
        const long long c = g->coords[a], p = g->dims[a], n = global[a];
        g->lo[a] = (int)(c * n / p);
        g->n[a] = (int)((c + 1) * n / p) - g->lo[a];
    }
    g->sx = (size_t)g->n[0] + 2;
    g->sxy = g->sx * ((size_t)g->n[1] + 2);
    g->total = g->sxy * ((size_t)g->n[2] + 2);

    const int sizes[3] = {g->n[0] + 2, g->n[1] + 2, g->n[2] + 2};
    for (int d = 0; d < GRID_NDIR; d++) {
        if (d == GRID_SELF)
            continue;
        int v[3], c[3], sub[3], s_start[3], r_start[3];
        direction(d, v);
        bool inside = true;
        for (int a = 0; a < 3; a++) {
            c[a] = g->coords[a] + v[a];
            inside = inside && c[a] >= 0 && c[a] < g->dims[a];
            sub[a] = v[a] == 0 ? g->n[a] : 1;
            s_start[a] = v[a] < 0 ? 1 : v[a] > 0 ? g->n[a] : 1;
            r_start[a] = v[a] < 0 ? 0 : v[a] > 0 ? g->n[a] + 1 : 1;
        }
        if (!inside)
            continue;
        MPI_Cart_rank(g->cart, c, &g->nbr[d]);
        MPI_Type_create_subarray(3, sizes, sub, s_start, MPI_ORDER_FORTRAN, MPI_DOUBLE, &g->send_type[d]);
        MPI_Type_commit(&g->send_type[d]);
        MPI_Type_create_subarray(3, sizes, sub, r_start, MPI_ORDER_FORTRAN, MPI_DOUBLE, &g->recv_type[d]);
        MPI_Type_commit(&g->recv_type[d]);
    }
    return 0;
}

void app_grid_free(app_grid *g)
{
    for (int d = 0; d < GRID_NDIR; d++) {
        if (g->send_type[d] != MPI_DATATYPE_NULL)
            MPI_Type_free(&g->send_type[d]);
        if (g->recv_type[d] != MPI_DATATYPE_NULL)
            MPI_Type_free(&g->recv_type[d]);
    }
    if (g->cart != MPI_COMM_NULL)
        MPI_Comm_free(&g->cart);
}

int app_grid_post(const app_grid *g, double *u, bool diagonal, MPI_Request *reqs)
{
    int n = 0;
    for (int d = 0; d < GRID_NDIR; d++)
        if (g->nbr[d] != MPI_PROC_NULL && (diagonal || is_face(d)))
            MPI_Irecv(u, 1, g->recv_type[d], g->nbr[d], GRID_TAG + (GRID_NDIR - 1 - d), g->cart, &reqs[n++]);
    for (int d = 0; d < GRID_NDIR; d++)
        if (g->nbr[d] != MPI_PROC_NULL && (diagonal || is_face(d)))
            MPI_Isend(u, 1, g->send_type[d], g->nbr[d], GRID_TAG + d, g->cart, &reqs[n++]);
    return n;
}

void app_grid_sendrecv(const app_grid *g, double *u)
{
    for (int a = 0; a < 3; a++) {
        const int plus = GRID_SELF + AXIS_STRIDE[a], minus = GRID_SELF - AXIS_STRIDE[a];
        /* Towards +: my + face goes to the + neighbour, my - ghosts come from the - one. */
        MPI_Sendrecv(u, 1, g->nbr[plus] != MPI_PROC_NULL ? g->send_type[plus] : MPI_DOUBLE, g->nbr[plus],
                     GRID_TAG + plus, u, 1, g->nbr[minus] != MPI_PROC_NULL ? g->recv_type[minus] : MPI_DOUBLE,
                     g->nbr[minus], GRID_TAG + plus, g->cart, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u, 1, g->nbr[minus] != MPI_PROC_NULL ? g->send_type[minus] : MPI_DOUBLE, g->nbr[minus],
                     GRID_TAG + minus, u, 1, g->nbr[plus] != MPI_PROC_NULL ? g->recv_type[plus] : MPI_DOUBLE,
                     g->nbr[plus], GRID_TAG + minus, g->cart, MPI_STATUS_IGNORE);
    }
}

app_box app_grid_owned(const app_grid *g)
{
    app_box b;
    for (int a = 0; a < 3; a++) {
        b.lo[a] = 1;
        b.hi[a] = g->n[a] + 1;
    }
    return b;
}

app_box app_grid_interior(const app_grid *g)
{
    app_box b;
    for (int a = 0; a < 3; a++) {
        b.lo[a] = 2;
        b.hi[a] = g->n[a] > 2 ? g->n[a] : 2;
    }
    return b;
}

static bool box_empty(const app_box *b)
{
    return b->hi[0] <= b->lo[0] || b->hi[1] <= b->lo[1] || b->hi[2] <= b->lo[2];
}

long app_box_rows(const app_box *b)
{
    return box_empty(b) ? 0 : (long)(b->hi[1] - b->lo[1]) * (long)(b->hi[2] - b->lo[2]);
}

int app_grid_boundary(const app_grid *g, app_box boxes[6])
{
    const app_box o = app_grid_owned(g), in = app_grid_interior(g);
    if (box_empty(&in)) {
        boxes[0] = o;
        return 1;
    }
    int n = 0;
    /* The two z slabs (whole x-y planes), the two y slabs between them, the
     * two x slabs between those. */
    for (int a = 2; a >= 0; a--) {
        app_box low = o, high = o;
        for (int b = a + 1; b < 3; b++) {
            low.lo[b] = high.lo[b] = in.lo[b];
            low.hi[b] = high.hi[b] = in.hi[b];
        }
        low.hi[a] = in.lo[a];
        high.lo[a] = in.hi[a];
        boxes[n++] = low;
        boxes[n++] = high;
    }
    return n;
}

void app_grid_seed(const app_grid *g, double *u, uint64_t seed, uint64_t stream)
{
    memset(u, 0, g->total * sizeof *u);
    const uint64_t key = app_mix64(seed ^ app_mix64(stream + 0x632be59bd9b4e019ULL));
    for (int k = 1; k <= g->n[2]; k++)
        for (int j = 1; j <= g->n[1]; j++)
            for (int i = 1; i <= g->n[0]; i++) {
                const uint64_t gi = (uint64_t)(g->lo[0] + i - 1), gj = (uint64_t)(g->lo[1] + j - 1),
                               gk = (uint64_t)(g->lo[2] + k - 1);
                const uint64_t gidx = gi + (uint64_t)g->global[0] * (gj + (uint64_t)g->global[1] * gk);
                u[app_idx(g, i, j, k)] = (double)(app_mix64(key ^ gidx) >> 11) * 0x1p-53;
            }
}

void app_grid_checksum(const app_grid *g, const double *u, uint64_t *hash, double *sum)
{
    uint64_t h = 0;
    int64_t fixed = 0;
    for (int k = 1; k <= g->n[2]; k++)
        for (int j = 1; j <= g->n[1]; j++)
            for (int i = 1; i <= g->n[0]; i++) {
                const double v = u[app_idx(g, i, j, k)];
                uint64_t bits;
                memcpy(&bits, &v, sizeof bits);
                const uint64_t gi = (uint64_t)(g->lo[0] + i - 1), gj = (uint64_t)(g->lo[1] + j - 1),
                               gk = (uint64_t)(g->lo[2] + k - 1);
                const uint64_t gidx = gi + (uint64_t)g->global[0] * (gj + (uint64_t)g->global[1] * gk);
                h += app_mix64(bits ^ app_mix64(gidx));
                fixed += (int64_t)llround(v * 0x1p32);
            }
    uint64_t h_all = 0;
    int64_t fixed_all = 0;
    MPI_Reduce(&h, &h_all, 1, MPI_UINT64_T, MPI_SUM, 0, g->cart);
    MPI_Reduce(&fixed, &fixed_all, 1, MPI_INT64_T, MPI_SUM, 0, g->cart);
    *hash = h_all;
    *sum = (double)fixed_all * 0x1p-32;
}

int app_parse_names(const char *opt, const char *arg, const char *const *names, int n, unsigned *out,
                    char *err, size_t errlen)
{
    const char *bad;
    int len;
    if (mo_options_parse_set(arg, names, n, "all", false, out, &bad, &len) == 0)
        return 0;
    int used = snprintf(err, errlen, "--%s: unknown name '%.*s' (known:", opt, len, bad);
    for (int i = 0; i < n && used > 0 && (size_t)used < errlen; i++)
        used += snprintf(err + used, errlen - (size_t)used, " %s,", names[i]);
    if (used > 0 && (size_t)used < errlen)
        snprintf(err + used, errlen - (size_t)used, " all)");
    return -1;
}

/* Grid dimensions "N" or "NXxNYxNZ", each in 1..max. */
static int parse_dims(const char *opt, const char *arg, long max, int out[3], char *err, size_t errlen)
{
    long v[3];
    int n = 0;
    const char *p = arg;
    while (n < 3) {
        char *end;
        errno = 0;
        v[n] = strtol(p, &end, 10);
        if (end == p || errno != 0 || v[n] < 1 || v[n] > max)
            break;
        n++;
        p = end;
        if (*p == 'x' && n < 3) {
            p++;
            continue;
        }
        break;
    }
    if (*p != '\0' || (n != 1 && n != 3)) {
        snprintf(err, errlen, "--%s: expected N or NXxNYxNZ with each in 1..%ld, got '%s'", opt, max, arg);
        return -1;
    }
    for (int a = 0; a < 3; a++)
        out[a] = (int)(n == 1 ? v[0] : v[a]);
    return 0;
}

int app_parse_extent(app_extent *e, bool local, const char *arg, long max, char *err, size_t errlen)
{
    if (local) {
        e->local_set = true;
        return parse_dims("local", arg, max, e->local, err, errlen);
    }
    e->grid_set = true;
    return parse_dims("grid", arg, max, e->grid, err, errlen);
}

int app_finish_extent(app_extent *e, int edge, char *err, size_t errlen)
{
    if (e->grid_set && e->local_set) {
        snprintf(err, errlen, "--grid and --local are exclusive (the global grid or the grid per rank)");
        return -1;
    }
    if (!e->grid_set && !e->local_set)
        for (int a = 0; a < 3; a++)
            e->grid[a] = edge;
    return 0;
}

/* With --local, the ranks per axis are app_grid_dims', the split app_grid_init makes. */
int app_grid_init_extent(app_grid *g, MPI_Comm comm, const app_extent *e, char *err, size_t errlen)
{
    int global[3];
    if (e->local_set) {
        int size, dims[3];
        MPI_Comm_size(comm, &size);
        app_grid_dims(size, dims);
        for (int a = 0; a < 3; a++)
            global[a] = e->local[a] * dims[a];
    } else {
        memcpy(global, e->grid, sizeof global);
    }
    return app_grid_init(g, comm, global, err, errlen);
}

double app_now_s(void)
{
    return (double)mo_timer_now_ns() * 1e-9;
}

void app_json_dims(mo_json *w, const char *key, const int v[3])
{
    mo_json_key(w, key);
    mo_json_begin_array(w);
    for (int a = 0; a < 3; a++)
        mo_json_int64(w, v[a]);
    mo_json_end_array(w);
}

void app_json_extent(mo_json *w, const app_extent *e)
{
    if (e->local_set)
        app_json_dims(w, "local", e->local);
    else
        app_json_dims(w, "grid", e->grid);
}
