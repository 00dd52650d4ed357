/* datatypes_app.c - messages of known layouts, for tests/test_trace_dtypes.py
 * (`profile --trace` on 2 ranks, then the trace's DTYPES chunks and each
 * message's layout id). Rank 0 sends, rank 1 receives the same datatype, one
 * message per step, tag = the step:
 *   1 MPI_DOUBLE x 100                  contiguous: no layout
 *   2 contiguous(10, MPI_DOUBLE) x 3    a derived type without gaps: no layout
 *   3 vector(4, 2, 5, MPI_DOUBLE)       4 blocks of 16 B, 40 B apart
 *   4 subarray C, 6x8 of MPI_INT, 3x4 at (1, 2)      3 blocks of 16 B
 *   5 subarray Fortran, the same numbers             4 blocks of 12 B
 *   6 struct {double; char} resized to 16 B, x 2     9 B of 16 per element
 *   7 MPI_DOUBLE_INT x 3                a predefined pair type
 *   8 step 3's type freed and a vector(3, 1, 4, MPI_FLOAT) made in its stead
 *     (the MPI may hand out the freed handle again: a new layout all the same)
 *   9 a dup of step 4's type                          a layout of its own
 *  10 step 3's vector made again (Isend / Irecv)     a new layout of its shape
 *  11 hindexed of 2 doubles at -16 and +8 bytes from the buffer's address
 *     (a datatype that reaches below it): blocks of 8 B, 24 B apart
 * Received with the sender's datatype; checked byte for byte, exit 1 where not. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "two_ranks.h"

static unsigned char sent[4096], got[4096];

/* The exchange with both buffers' addresses `at` bytes into the arrays. */
static int exchange_at(int rank, const void *buf, size_t at, int count, MPI_Datatype dt,
                       int tag, int nb)
{
    buf = (const unsigned char *)buf + at;
    if (rank == 0) {
        if (nb) {
            MPI_Request r;
            MPI_Isend(buf, count, dt, 1, tag, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(buf, count, dt, 1, tag, MPI_COMM_WORLD);
        }
        return 0;
    }
    memset(got, 0, sizeof got);
    unsigned char *into = got + at;
    if (nb) {
        MPI_Request r;
        MPI_Irecv(into, count, dt, 0, tag, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(into, count, dt, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* what the type covers arrived as sent: packed alike on both sides */
    int size = 0;
    MPI_Pack_size(count, dt, MPI_COMM_WORLD, &size);
    unsigned char a[4096], b[4096];
    int pa = 0, pb = 0;
    MPI_Pack(buf, count, dt, a, sizeof a, &pa, MPI_COMM_WORLD);
    MPI_Pack(into, count, dt, b, sizeof b, &pb, MPI_COMM_WORLD);
    if (pa != pb || memcmp(a, b, (size_t)pa) != 0) {
        fprintf(stderr, "datatypes_app: step %d arrived changed\n", tag);
        return 1;
    }
    return 0;
}

static int exchange(int rank, const void *buf, int count, MPI_Datatype dt, int tag, int nb)
{
    return exchange_at(rank, buf, 0, count, dt, tag, nb);
}

int main(int argc, char **argv)
{
    int rank = two_ranks_init(&argc, &argv, "datatypes_app");
    for (size_t i = 0; i < sizeof sent; i++)
        sent[i] = (unsigned char)(i * 7 + 3);
    int bad = 0;

    bad |= exchange(rank, sent, 100, MPI_DOUBLE, 1, 0);

    MPI_Datatype contig;
    MPI_Type_contiguous(10, MPI_DOUBLE, &contig);
    MPI_Type_commit(&contig);
    bad |= exchange(rank, sent, 3, contig, 2, 0);

    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    bad |= exchange(rank, sent, 1, vec, 3, 0);

    int sizes[2] = {6, 8}, subsizes[2] = {3, 4}, starts[2] = {1, 2};
    MPI_Datatype sub_c, sub_f;
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub_c);
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &sub_f);
    MPI_Type_commit(&sub_c);
    MPI_Type_commit(&sub_f);
    bad |= exchange(rank, sent, 1, sub_c, 4, 0);
    bad |= exchange(rank, sent, 1, sub_f, 5, 0);

    struct pair {
        double d;
        char c;
    };
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(struct pair, d), offsetof(struct pair, c)};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_CHAR}, st, st16;
    MPI_Type_create_struct(2, lens, displs, types, &st);
    MPI_Type_create_resized(st, 0, 16, &st16);
    MPI_Type_commit(&st16);
    bad |= exchange(rank, sent, 2, st16, 6, 0);

    bad |= exchange(rank, sent, 3, MPI_DOUBLE_INT, 7, 0);

    MPI_Type_free(&vec);
    MPI_Datatype vec2;
    MPI_Type_vector(3, 1, 4, MPI_FLOAT, &vec2);
    MPI_Type_commit(&vec2);
    bad |= exchange(rank, sent, 1, vec2, 8, 0);

    MPI_Datatype dup;
    MPI_Type_dup(sub_c, &dup);
    MPI_Type_commit(&dup);
    bad |= exchange(rank, sent, 1, dup, 9, 0);

    MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    bad |= exchange(rank, sent, 1, vec, 10, 1);

    int two[2] = {1, 1};
    MPI_Aint around[2] = {-16, 8};
    MPI_Datatype below;
    MPI_Type_create_hindexed(2, two, around, MPI_DOUBLE, &below);
    MPI_Type_commit(&below);
    bad |= exchange_at(rank, sent, 64, 1, below, 11, 0);

    MPI_Type_free(&below);
    MPI_Type_free(&contig);
    MPI_Type_free(&vec);
    MPI_Type_free(&vec2);
    MPI_Type_free(&sub_c);
    MPI_Type_free(&sub_f);
    MPI_Type_free(&st);
    MPI_Type_free(&st16);
    MPI_Type_free(&dup);
    MPI_Finalize();
    return bad;
}
