"""The sync_overlap package's documents as typed models (core/schema.py): analysis-sync-
overlap-v1, bench-sync-overlap-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...analysis.documents import Figures
from ...core.schema import Document, register
from ...run.documents import Stats


class AnalysisSyncOverlapPointsItem(Document, kw_only=True):
    bytes_: Any = field(name="bytes")
    completed: Any


class Limit(Document, kw_only=True):
    status: Literal["bracketed", "all-complete", "none-complete", "no-points"]
    last_yes_bytes: int | None
    first_no_bytes: int | None
    monotonic: bool
    width_bytes: int | None


class AnalysisSyncOverlapReported(Document, kw_only=True):
    bytes_: int | None = field(name="bytes")
    source: str | None
    family: str | None
    note: str


class AnalysisSyncOverlap(Document, kw_only=True):
    """mpi-overlap analysis of the sync-overlap benchmark, version 1: Written by
    mpi_overlap.analysis.sync_overlap: per size the share of sends that completed without
    the receiver, rank 0's wait, T_P1/T_P0 of the seed samples (the test of Colmenares et
    al., Figure 1) and the compute slowdown; the detected limit [last_yes, first_no]; the
    limit the MPI reports (MPI_T cvars) and whether they agree; figures for the suite's
    tables."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["sync-overlap"]
    points: list[AnalysisSyncOverlapPointsItem]
    limit: Limit
    seed_limit: Limit
    mpi_cvars: list[Any]
    reported: AnalysisSyncOverlapReported
    header_allowance_bytes: Annotated[int, Meta(ge=0)]
    agrees: bool | None
    finding: Annotated[str, Meta(pattern="^[^\\n]*$", min_length=1)]
    figures: Figures


class BenchSyncOverlapSocketBuffers(Document, kw_only=True, forbid_unknown_fields=True):
    """ranks on two nodes (the flags over a TCP side channel): the sender's net.ipv4.tcp_wmem
    and the receiver's tcp_rmem, [min, default, max] bytes (-1: unreadable), each read in
    its own network namespace"""

    sender_tcp_wmem: Annotated[list[int], Meta(min_length=3, max_length=3)]
    receiver_tcp_rmem: Annotated[list[int], Meta(min_length=3, max_length=3)]


class BenchSyncOverlapLimit(Document, kw_only=True, forbid_unknown_fields=True):
    last_yes_bytes: Annotated[int, Meta(ge=0)] | None
    first_no_bytes: Annotated[int, Meta(ge=0)] | None
    monotonic: bool


class BenchSyncOverlapMpiCvarsItem(Document, kw_only=True, forbid_unknown_fields=True):
    name: str
    value: int | None


Samples = list[float | None]


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    phase: Literal["coarse", "refine"]
    completed_fraction: Annotated[float, Meta(ge=0, le=1)]
    completed: bool
    tests: Annotated[
        Samples,
        Meta(description="MPI_Test calls until the send completed; 0: not within max_tests"),
    ]
    seed_alone_fraction: Annotated[float, Meta(ge=0, le=1)]
    seed_alone: Annotated[
        Samples,
        Meta(
            description=(
                "seed samples (Colmenares et al., Figure 1): 1 when rank 1's receive "
                "had returned before rank 0 called MPI_Wait"
            )
        ),
    ]
    isend_ns: Stats
    wait_ns: Stats
    work_ns: Stats
    alone_ns: Stats
    tp0_ns: Stats
    tp1_ns: Stats
    tp1_ratio: Stats
    wait_samples_ns: Samples
    work_samples_ns: Samples
    alone_samples_ns: Samples
    tp1_ratio_samples: Samples


class BenchSyncOverlap(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the sync-overlap benchmark (synchronization-computation overlap and the
    eager-limit sweep): Per message size (coarse sweep, then bisection): send-test samples
    (rank 0 MPI_Isend, work, up to max_tests MPI_Test calls before rank 1 may post its
    receive; completed_fraction: share of samples whose send completed; wait_ns: rank 0's
    MPI_Wait afterwards, while rank 1 first does the same work), seed samples (the test of
    Colmenares et al., Figure 1: T_P0 on rank 0, T_P1 on rank 1 after a quarter of the work,
    tp1_ratio = T_P1/T_P0; seed_alone: rank 1's receive returned before rank 0 called
    MPI_Wait) and the work alone. limit: [last_yes_bytes, first_no_bytes]. mpi_cvars: MPI_T
    control variables whose names suggest protocol thresholds. Method: docs/benchmarks.md,
    section sync-overlap."""

    order: Literal["sender-first"]
    receiver_hold: str
    socket_buffers: Annotated[
        BenchSyncOverlapSocketBuffers | UnsetType,
        Meta(
            description=(
                "ranks on two nodes (the flags over a TCP side channel): the sender's"
                " net.ipv4.tcp_wmem and the receiver's tcp_rmem, [min, default, max] "
                "bytes (-1: unreadable), each read in its own network namespace"
            )
        ),
    ] = UNSET
    samples_per_point: Annotated[int, Meta(ge=1)]
    work_us: Annotated[float, Meta(ge=0)]
    work_units: Annotated[int, Meta(ge=0)]
    max_tests: Annotated[int, Meta(ge=1)]
    refine_steps_done: Annotated[int, Meta(ge=0)]
    limit: BenchSyncOverlapLimit
    mpi_cvars: list[BenchSyncOverlapMpiCvarsItem]
    cvar_note: str | None
    points: list[Point]


MODELS: dict[str, Any] = {
    "analysis-sync-overlap-v1": AnalysisSyncOverlap,
    "bench-sync-overlap-v1": BenchSyncOverlap,
}
register(MODELS)
