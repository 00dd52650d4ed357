/* grid.h - the 3-D block decomposition the mini-applications share (mo_halo,
 * mo_cg): a global grid of NX x NY x NZ points split over the ranks of an
 * MPI_Dims_create / MPI_Cart_create communicator (not periodic: outside the
 * global grid the values are zero), each rank's block stored with one ghost
 * layer, the ghost exchange with the 6 face neighbours or with all 26
 * (faces, edges and corners), seeded initial data that depends only on the
 * global index, and checksums that are identical for every decomposition.
 *
 * Local layout: x fastest; owned points are 1..n[a] along axis a, ghosts 0
 * and n[a]+1. A direction (dx, dy, dz), each in {-1, 0, 1}, has the index
 * (dx+1) + 3(dy+1) + 9(dz+1); 13 is the rank itself, 26 - d the opposite. */
#ifndef MO_APPS_GRID_H
#define MO_APPS_GRID_H
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { GRID_NDIR = 27, GRID_SELF = 13, GRID_MAX_REQS = 2 * (GRID_NDIR - 1) };

typedef struct app_grid {
    MPI_Comm cart;
    int rank, size;
    int dims[3], coords[3];
    int global[3];              /* points per axis of the whole grid */
    int lo[3];                  /* global index of the first owned point */
    int n[3];                   /* owned points per axis */
    size_t sx, sxy, total;      /* strides of the ghosted block, its size */
    int nbr[GRID_NDIR];         /* neighbour rank per direction, or MPI_PROC_NULL */
    MPI_Datatype send_type[GRID_NDIR], recv_type[GRID_NDIR];
} app_grid;

/* A box of owned points: lo[a] <= i < hi[a] in local indices (1-based owned). */
typedef struct app_box {
    int lo[3], hi[3];
} app_box;

/* Ranks per axis for size ranks: MPI_Dims_create's split, the most ranks
 * along z (contiguous faces), the fewest along x. */
void app_grid_dims(int size, int dims[3]);

/* Collective over comm: decomposes global[3] over comm's ranks (app_grid_dims). Returns 0, or
 * -1 with one line in err (the same verdict on every rank). */
int app_grid_init(app_grid *g, MPI_Comm comm, const int global[3], char *err, size_t errlen);
void app_grid_free(app_grid *g);

/* The local index of owned or ghost point (i, j, k). */
static inline size_t app_idx(const app_grid *g, int i, int j, int k)
{
    return (size_t)i + g->sx * (size_t)j + g->sxy * (size_t)k;
}

/* Posts the exchange of u's ghosts: receives first, then sends; faces only
 * (6 neighbours) or, with diagonal, edges and corners too (26). Neighbours
 * outside the grid get no request. Returns the number of requests in reqs
 * (at most GRID_MAX_REQS). */
int app_grid_post(const app_grid *g, double *u, bool diagonal, MPI_Request *reqs);

/* The face exchange by one MPI_Sendrecv per face, axis by axis. */
void app_grid_sendrecv(const app_grid *g, double *u);

/* Owned points at distance >= 1 from every ghost (need no neighbour data);
 * may be empty (hi <= lo on some axis). */
app_box app_grid_interior(const app_grid *g);
/* The owned points outside the interior, as at most 6 disjoint boxes.
 * Returns their number. */
int app_grid_boundary(const app_grid *g, app_box boxes[6]);
/* The whole owned block. */
app_box app_grid_owned(const app_grid *g);
/* Number of (j, k) rows of a box (0 if empty). */
long app_box_rows(const app_box *b);

/* Fills the owned points with values in [0, 1) that depend only on seed,
 * stream and the point's global index; ghosts are set to zero. */
void app_grid_seed(const app_grid *g, double *u, uint64_t seed, uint64_t stream);

/* Checksums over the owned points of u, reduced to rank 0, identical for
 * every decomposition: hash is the wrapping sum of a hash of each value's bits
 * and global index (any one-bit difference anywhere changes it); sum is the
 * sum of the values in fixed point (2^-32), exact and so order-independent,
 * valid for |values| < 1 and fewer than 2^31 points. */
void app_grid_checksum(const app_grid *g, const double *u, uint64_t *hash, double *sum);

/* A 64-bit mix (splitmix64's finalizer). */
uint64_t app_mix64(uint64_t x);

/* Option helpers shared by the applications. A comma-separated list of
 * names (or "all") as a bit set over names[0..n-1]. Returns 0, or -1 with
 * one line in err. */
int app_parse_names(const char *opt, const char *arg, const char *const *names, int n, unsigned *out,
                    char *err, size_t errlen);

/* The grid flags both applications take: --grid N|NXxNYxNZ (the global
 * grid) or --local (points per rank: the global grid is that times the
 * app_grid_dims split), each axis in 1..max. */
typedef struct app_extent {
    int grid[3], local[3];
    bool grid_set, local_set;
} app_extent;

/* --local's (local) or --grid's argument into e. Returns 0, or -1 with one
 * line in err. */
int app_parse_extent(app_extent *e, bool local, const char *arg, long max, char *err, size_t errlen);

/* After parsing: --grid and --local exclude each other; with neither, a
 * cube of `edge` points. Returns 0, or -1 with one line in err. */
int app_finish_extent(app_extent *e, int edge, char *err, size_t errlen);

/* app_grid_init() over the global grid that e gives for comm's ranks. */
int app_grid_init_extent(app_grid *g, MPI_Comm comm, const app_extent *e, char *err, size_t errlen);

/* Seconds on the harness's clock (mo_timer). */
double app_now_s(void);

/* Into a result document: "key": [v0, v1, v2]; e's given flag, "grid" or
 * "local": [x, y, z]. */
struct mo_json;
void app_json_dims(struct mo_json *w, const char *key, const int v[3]);
void app_json_extent(struct mo_json *w, const app_extent *e);

#endif
