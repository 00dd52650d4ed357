"""The polling package's documents as typed models (core/schema.py): analysis-polling-v1,
bench-polling-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ...analysis.documents import Figures
from ...core.schema import Document, register


class AnalysisPollingSeriesItemPointsItem(Document, kw_only=True):
    availability: float | None
    bandwidth_gbs: Annotated[float, Meta(ge=0)] | None
    bound_ok: bool
    size: Any
    interval_us: Any


class AnalysisPollingSeriesItem(Document, kw_only=True):
    points: list[AnalysisPollingSeriesItemPointsItem]
    size: Any
    bandwidth_drops_with_polling: Any
    available_interval_us: Any


class AnalysisPolling(Document, kw_only=True):
    """mpi-overlap analysis of the polling benchmark, version 1: Written by
    mpi_overlap.analysis.polling: per size, per poll interval the availability (ratio of
    median dry to median messaging loop time, bootstrap 95 % interval), bandwidth, messages
    per poll, time lost per poll; notes where more frequent polling moved less; finding and
    figures."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["polling"]
    window: Annotated[int, Meta(ge=1)]
    headline_size: int | UnsetType = UNSET
    series: list[AnalysisPollingSeriesItem]
    notes: list[str]
    finding: Annotated[str, Meta(min_length=1)]
    figures: Figures


class BenchPollingPointsItemSamplesItem(Document, kw_only=True, forbid_unknown_fields=True):
    work_ns: Annotated[float, Meta(ge=0)] | None
    dry_ns: Annotated[float, Meta(ge=0)] | None
    polls: Annotated[int, Meta(ge=0)]
    messages: Annotated[int, Meta(ge=0)]


class BenchPollingPointsItem(Document, kw_only=True, forbid_unknown_fields=True):
    size: Annotated[int, Meta(ge=0)]
    interval_us: Annotated[float, Meta(gt=0)]
    chunk_units: Annotated[int, Meta(ge=1)]
    chunks: Annotated[int, Meta(ge=1)]
    samples: list[BenchPollingPointsItemSamplesItem]


class BenchPolling(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the polling benchmark (COMB's polling method): Per message size and poll
    interval (us of calibrated work per chunk): samples of rank 0's chunked work loop with
    MPI_Test on its receives after every chunk while rank 1 keeps sends in flight (work_ns,
    polls, messages received in the loop) and of the same loop without messaging (dry_ns).
    Method: docs/benchmarks.md, section polling."""

    direction: str
    window: Annotated[int, Meta(ge=1)]
    samples_per_point: Annotated[int, Meta(ge=1)]
    work_ns: Annotated[float, Meta(ge=0)]
    intervals_us: list[Annotated[float, Meta(gt=0)]]
    points_planned: Annotated[int, Meta(ge=0)]
    points: list[BenchPollingPointsItem]


MODELS: dict[str, Any] = {
    "analysis-polling-v1": AnalysisPolling,
    "bench-polling-v1": BenchPolling,
}
register(MODELS)
