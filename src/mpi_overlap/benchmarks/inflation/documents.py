"""The inflation package's documents as typed models (core/schema.py): analysis-
inflation-v1, bench-inflation-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from ...analysis.documents import Figures
from ...core.schema import Document, register
from ...run.documents import Stats


class AnalysisInflationPointsItem(Document, kw_only=True):
    bytes_: Any = field(name="bytes")
    knee: Any


class AnalysisInflation(Document, kw_only=True):
    """mpi-overlap analysis of the inflation benchmark, version 1: Written by
    mpi_overlap.analysis.inflation: per size the hinge fit of total time against computation
    (analysis/knee.py): the knee (computation above which the exchange is hidden) with its
    95 % bootstrap interval and verdict, the exposed communication at zero computation, the
    cost left after the knee, the slope; a one-line finding and the headline figures."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["inflation"]
    points: list[AnalysisInflationPointsItem]
    finding: Annotated[str, Meta(min_length=1)]
    figures: Figures


Samples = list[float | None]


class Step(Document, kw_only=True, forbid_unknown_fields=True):
    work_units: Annotated[int, Meta(ge=0)]
    work_us_nominal: float | None
    work_alone: Stats
    total: Stats
    work_inside: Stats
    work_alone_samples_us: Samples
    total_samples_us: Samples
    work_inside_samples_us: Samples


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    pilot_exchange_us: float | None
    steps: list[Step]


class BenchInflation(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the inflation benchmark (computation inflation, after Strohbeen): Per
    message size: the pilot's median exchange time without work, and per computation step
    (calibrated work units) rank 0's times in us of the work alone, of one exchange (Irecv +
    Isend with the partner, work, Waitall) and of the work inside it. Method:
    docs/benchmarks.md, section inflation."""

    samples: Annotated[int, Meta(ge=1)]
    steps: Annotated[int, Meta(ge=1)]
    max_factor: float
    min_work_us: float
    units_per_us: float | None
    points_planned: Annotated[int, Meta(ge=0)]
    points: list[Point]


MODELS: dict[str, Any] = {
    "analysis-inflation-v1": AnalysisInflation,
    "bench-inflation-v1": BenchInflation,
}
register(MODELS)
