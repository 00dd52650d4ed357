"""The progress package's documents as typed models (core/schema.py): analysis-progress-v1,
bench-progress-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ...analysis.documents import Figures
from ...core.schema import Document, register


class AnalysisProgressPointsItemCasesItem(Document, kw_only=True):
    verdict: Literal["yes", "no", "partly", "none"]
    arrived_share: Annotated[float, Meta(ge=0, le=1)]
    mean_fraction: Annotated[float, Meta(ge=0, le=1)] | UnsetType | None = UNSET
    arrival_us: float | None
    ordering: Any
    sender: Any
    n: Any
    budget_us: Any


class AnalysisProgressPointsItem(Document, kw_only=True):
    size: Annotated[int, Meta(ge=1)]
    cases: list[AnalysisProgressPointsItemCasesItem]
    transfer_us: Any
    budget_us: Any


class AnalysisProgressAsyncProgress(Document, kw_only=True):
    enabled: bool | None
    setting: str


class AnalysisProgress(Document, kw_only=True):
    """mpi-overlap analysis of the progress benchmark, version 1: Written by
    mpi_overlap.analysis.progress: per size, ordering and sender mode the verdict (yes: all
    watched positions arrived before MPI_Wait in at least yes_share of the samples; no: none
    in any; partly: between), the median arrival time, the compute slowdown; the
    asynchronous-progress setting the MPI reports; an explanation of the large-message
    verdict from the measured numbers; finding and figures."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["progress"]
    yes_share: Annotated[float, Meta(ge=0, le=1)]
    points: list[AnalysisProgressPointsItem]
    verdict_ranges: dict[str, Any]
    async_progress: AnalysisProgressAsyncProgress
    explanation: str | None
    finding: Annotated[str, Meta(min_length=1)]
    figures: Figures


class BenchProgressAsyncProgressCvarsItem(Document, kw_only=True, forbid_unknown_fields=True):
    name: str
    value: int | None


class BenchProgressAsyncProgress(Document, kw_only=True, forbid_unknown_fields=True):
    thread_level: str
    threads_in_process: Annotated[int, Meta(ge=1)] | None
    cvars: list[BenchProgressAsyncProgressCvarsItem]
    env: list[str]


class Sample(Document, kw_only=True, forbid_unknown_fields=True):
    arrived_ns: Annotated[float, Meta(ge=0)] | None
    first_ns: Annotated[float, Meta(ge=0)] | None
    fraction: Annotated[float, Meta(ge=0, le=1)]
    elapsed_ns: Annotated[float, Meta(ge=0)]
    wait_ns: Annotated[float, Meta(ge=0)] | None
    chunks: Annotated[int, Meta(ge=0)]


Samples = list[Sample]


class PointDry(Document, kw_only=True, forbid_unknown_fields=True):
    samples: Samples


class PointCasesItem(Document, kw_only=True, forbid_unknown_fields=True):
    ordering: Literal["sender-first", "receiver-first"]
    sender: Literal["computes", "waits"]
    samples: Samples


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    size: Annotated[int, Meta(ge=1)]
    transfer_ns: Annotated[float, Meta(ge=0)]
    budget_ns: Annotated[float, Meta(ge=0)]
    chunk_ns: Annotated[float, Meta(ge=0)]
    chunk_units: Annotated[int, Meta(ge=1)]
    max_chunks: Annotated[int, Meta(ge=1)]
    data_errors: Annotated[int, Meta(ge=0)]
    dry: PointDry
    cases: list[PointCasesItem]


class BenchProgress(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the progress benchmark (does data reach the receive buffer without MPI
    calls?): Per size: the one-way ping-pong time, the computation budget, and per ordering
    (sender-first, receiver-first) and sender mode (computes: no MPI call on either side;
    waits: the sender sits in MPI_Wait) the samples of the watch loop: when the first and
    when all watched positions of the receive buffer held the payload (ns after posting
    MPI_Irecv; null: not before MPI_Wait), the watched fraction when watching ended, the
    loop's time and work chunks, the MPI_Wait after it. 'dry': the same loop with no
    message. async_progress: what the MPI reports about asynchronous progress. Method:
    docs/benchmarks.md, section progress."""

    sync: str
    watched_positions: Annotated[int, Meta(ge=1)]
    samples_per_case: Annotated[int, Meta(ge=1)]
    budget_factor: Annotated[float, Meta(ge=1)]
    min_budget_ns: Annotated[float, Meta(ge=0)]
    max_budget_ns: Annotated[float, Meta(ge=0)]
    async_progress: BenchProgressAsyncProgress
    points_planned: Annotated[int, Meta(ge=0)]
    points: list[Point]


MODELS: dict[str, Any] = {
    "analysis-progress-v1": AnalysisProgress,
    "bench-progress-v1": BenchProgress,
}
register(MODELS)
