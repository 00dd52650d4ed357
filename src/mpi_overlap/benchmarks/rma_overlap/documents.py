"""The rma_overlap package's documents as typed models (core/schema.py): analysis-rma-
overlap-v1, bench-rma-overlap-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ...analysis.documents import Figures
from ...core.schema import Document, register
from ...run.documents import Stats


class AnalysisRmaOverlapCasesItem(Document, kw_only=True):
    window: Literal["allocate", "create"]
    sync: Literal["flush", "fence"]
    op: Literal["put", "get"]
    size: Annotated[int, Meta(ge=0)]
    t_pure_us: float | None
    t_complete_alone_us: float | None
    t_complete_us: float | None
    osu_pct: Annotated[float, Meta(ge=0, le=100)] | None
    imb_pct: Annotated[float, Meta(ge=0, le=100)] | None
    complete_within_alone: bool | None
    osu_clipped: Annotated[
        bool | UnsetType,
        Meta(
            description=(
                "the OSU formula below 0 even at the favourable end of the "
                "non-overlapped time's interval: max(0, ...) hid an estimate outside "
                "its range"
            )
        ),
    ] = UNSET
    imb_raw_pct: Annotated[
        float | UnsetType | None,
        Meta(description="the IMB formula before its clipping to [0, 100]"),
    ] = UNSET


class AnalysisRmaOverlap(Document, kw_only=True):
    """mpi-overlap analysis of the rma-overlap benchmark, version 1: Written by
    mpi_overlap.analysis.rma_overlap: per window kind, synchronization, operation and size,
    the OSU-style and IMB-style overlap % of the origin, the completion call's time after
    the work against alone, consistency checks, a one-line finding and the headline figures."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["rma-overlap"]
    largest_bytes: int | UnsetType | None = UNSET
    cases: list[AnalysisRmaOverlapCasesItem]
    checks: dict[str, Any]
    finding: Annotated[str, Meta(pattern="^[^\\n]*$", min_length=1)]
    figures: Figures


class Case(Document, kw_only=True, forbid_unknown_fields=True):
    window: Literal["allocate", "create"]
    sync: Literal["flush", "fence"]
    sync_call: str
    op: Literal["put", "get"]
    op_call: str
    size: Annotated[int, Meta(ge=0)]
    iterations: Annotated[int, Meta(ge=1)]
    work_units: Annotated[int, Meta(ge=0)]
    work_us_nominal: float | None
    t_pure_us: Stats
    t_op_alone_us: Stats
    t_complete_alone_us: Stats
    t_cpu_us: Stats
    t_overall_us: Stats
    t_op_us: Stats
    t_compute_us: Stats
    t_complete_us: Stats
    t_nonoverlap_us: Stats


class BenchRmaOverlap(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the rma-overlap benchmark (one-sided overlap): Per window kind,
    synchronization (flush: passive target in one MPI_Win_lock_all epoch; fence: active
    target), operation (MPI_Put, MPI_Get) and size: statistics over the iterations of the
    origin's times in the pure loop (op + completion), the work alone, and the overlapped
    loop (op, work, completion). Method: docs/benchmarks.md, section rma-overlap."""

    flush_epoch: str
    fence_target: str
    flush_target: str
    work_units_per_us: float | None
    cases_planned: Annotated[int, Meta(ge=0)]
    cases: list[Case]


MODELS: dict[str, Any] = {
    "analysis-rma-overlap-v1": AnalysisRmaOverlap,
    "bench-rma-overlap-v1": BenchRmaOverlap,
}
register(MODELS)
