"""The matching package's documents as typed models (core/schema.py): analysis-matching-v1,
bench-matching-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ...analysis.documents import Figures
from ...core.schema import Document, register
from ...run.documents import Stats


class Fit(Document, kw_only=True):
    slope_ns: float
    intercept_ns: float
    slope_ci95: list[Any] | UnsetType | None = UNSET
    points: Annotated[int, Meta(ge=2)]
    x_min: float
    x_max: float


AnalysisMatchingFit = Fit | None


class Queue(Document, kw_only=True):
    queue: Literal["posted", "unexpected"]
    baseline_ns: float | None
    m_points: list[Any]
    n_points: list[Any]
    fit_m: AnalysisMatchingFit
    fit_lower: AnalysisMatchingFit
    fit_upper: AnalysisMatchingFit
    growth_ratio: float | None
    grows_from_m: Annotated[
        float | UnsetType | None,
        Meta(
            description=(
                "with 'grows': the smallest M from which every step to the next M "
                "costs more than 1.25 x the lower half's slope per added request"
            )
        ),
    ] = UNSET
    verdict: Literal["grows with queue length", "constant", "falls with queue length", "unclear"]
    fit_n: AnalysisMatchingFit


class AnalysisMatching(Document, kw_only=True):
    """mpi-overlap analysis of the matching benchmark, version 1: Written by
    mpi_overlap.analysis.matching: per queue, least-squares lines of the receive time
    against the queued requests over the M sweep (all of it, its lower half M <= max/2, its
    upper half M >= max/2) and over the N sweep; the verdict compares the halves' slopes."""

    figures: Figures | UnsetType = UNSET
    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["matching"]
    oversubscribed: bool
    ranks: int | UnsetType | None = UNSET
    cores: int | UnsetType | None = UNSET
    queues: list[Queue]
    finding: Annotated[str, Meta(min_length=1)]


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    queue: Literal["posted", "unexpected"]
    sweep: Literal["M", "N"]
    m: Annotated[int, Meta(ge=0)]
    n: Annotated[int, Meta(ge=1)]
    queued: Annotated[int, Meta(ge=0, description="m * n")]
    time_ns: Annotated[float | None, Meta(description="median of the samples")]
    time: Stats
    samples_ns: list[float | None]


class BenchMatching(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the matching benchmark (one receive past M*N posted or unexpected
    requests): Per point: rank 0 has M requests per peer queued for N peers (tag T0) in the
    posted-receive queue (queue 'posted') or the unexpected-message queue ('unexpected');
    time_ns is the median over the samples of the time to receive the one tag-T1 message
    from rank 1 after it has arrived (signalled by a shared-memory flag). Sweep 'M': N = 1,
    M = 0 (baseline), 1, 2, 4, ...; sweep 'N': M = 1, N = 1..max_n. Method:
    docs/benchmarks.md, section matching."""

    message_bytes: Annotated[int, Meta(ge=0)]
    ranks: Annotated[int, Meta(ge=2)]
    cores: Annotated[int, Meta(ge=1, description="online cores of the node")]
    oversubscribed: Annotated[bool, Meta(description="more ranks than cores")]
    arrival_sync: str
    samples_per_point: Annotated[int, Meta(ge=1)]
    queues: Annotated[list[Literal["posted", "unexpected"]], Meta(min_length=1)]
    points_planned: Annotated[int, Meta(ge=0)]
    points: list[Point]


MODELS: dict[str, Any] = {
    "analysis-matching-v1": AnalysisMatching,
    "bench-matching-v1": BenchMatching,
}
register(MODELS)
