"""The collectives package's documents as typed models (core/schema.py): bench-
collectives-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from ...core.schema import Document, register
from ..table_keys import TableKeys


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0, description="per-process block")] = field(name="bytes")
    iterations: Annotated[int, Meta(ge=1, description="timed iterations, over all visits")]
    visits: Annotated[
        int,
        Meta(
            ge=1,
            description=(
                "passes that measured this point (--passes; fewer when the time limit"
                " cut the sweep)"
            ),
        ),
    ]
    time_s: Annotated[
        float,
        Meta(
            ge=0,
            description=(
                "median over iterations of the slowest rank's time: the time written to the table"
            ),
        ),
    ]
    mean_s: Annotated[
        float, Meta(ge=0, description="mean over iterations of the slowest rank's time")
    ]
    min_s: Annotated[float, Meta(ge=0, description="fastest iteration (slowest rank's time)")]
    max_s: Annotated[float, Meta(ge=0, description="slowest iteration (slowest rank's time)")]
    rank_mean_s: Annotated[
        float,
        Meta(
            ge=0,
            description=(
                "mean over ranks of each rank's mean time: the OSU benchmarks' 'average latency'"
            ),
        ),
    ]


class Series(Document, kw_only=True, forbid_unknown_fields=True):
    op: Annotated[
        Literal[
            "barrier",
            "bcast",
            "gather",
            "gatherv",
            "scatter",
            "scatterv",
            "allgather",
            "allgatherv",
            "alltoall",
            "alltoallv",
            "alltoallw",
            "reduce",
            "allreduce",
            "reduce_scatter",
            "reduce_scatter_block",
            "scan",
            "exscan",
            "neighbor_allgather",
            "neighbor_allgatherv",
            "neighbor_alltoall",
            "neighbor_alltoallv",
            "neighbor_alltoallw",
            "ibarrier",
            "ibcast",
            "igather",
            "igatherv",
            "iscatter",
            "iscatterv",
            "iallgather",
            "iallgatherv",
            "ialltoall",
            "ialltoallv",
            "ialltoallw",
            "ireduce",
            "iallreduce",
            "ireduce_scatter",
            "ireduce_scatter_block",
            "iscan",
            "iexscan",
            "ineighbor_allgather",
            "ineighbor_allgatherv",
            "ineighbor_alltoall",
            "ineighbor_alltoallv",
            "ineighbor_alltoallw",
        ],
        Meta(
            description=(
                "the transfer-time table's name: mop_coll_ops.h, 'i' prefixed for the"
                " non-blocking op"
            )
        ),
    ]
    mpi_function: Annotated[str, Meta(pattern="^MPI_[A-Z][a-z_]*$")]
    nonblocking: bool
    complete: Annotated[
        bool, Meta(description="false when the time limit stopped the sweep before its last size")
    ]
    sizes: list[Point]


class BenchCollectives(TableKeys, kw_only=True, forbid_unknown_fields=True):
    """'results' of the collectives benchmark (time of each MPI collective per message size on
    the job's communicator size): Every op of native/profiler/mop_coll_ops.h, blocking and
    non-blocking (posted, then MPI_Wait at once), on a duplicate of MPI_COMM_WORLD;
    neighbourhood ops on a ring (in- and out-neighbours: left and right). 'bytes' is the
    per-process block of docs/method.md ('Collectives'): MPI_BYTE for data movement, MPI_INT
    with MPI_SUM for reductions (sizes not a multiple of sizeof(int) skipped), root 0,
    barrier at 0 bytes only. The sweep over (op, size) is made --passes times, each visit
    adding iterations. Each iteration starts after an untimed synchronisation (a one-int
    MPI_Allreduce) and is timed on every rank; time_s = median over all iterations of the
    slowest rank's time (the table's value). The fingerprints identify rank 0's machine and
    the MPI library, as in the transfer-time table."""

    comm_size: Annotated[
        int,
        Meta(ge=1, description="ranks of the communicator every op ran on (MPI_COMM_WORLD's size)"),
    ]
    nodes: Annotated[
        int, Meta(ge=1, description="shared-memory nodes the job spans (MPI_COMM_TYPE_SHARED)")
    ]
    statistic: Literal["median over iterations of the slowest rank's time"]
    neighbour_topology: Literal["ring"]
    series: list[Series]


MODELS: dict[str, Any] = {
    "bench-collectives-v1": BenchCollectives,
}
register(MODELS)
