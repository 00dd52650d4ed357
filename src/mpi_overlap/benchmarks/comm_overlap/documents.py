"""The comm_overlap package's documents as typed models (core/schema.py): analysis-comm-
overlap-v1, bench-comm-overlap-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from ...analysis.documents import Figures
from ...core.schema import Document, register
from ...run.documents import Stats


class AnalysisCommOverlapPointsItem(Document, kw_only=True):
    bytes_: Any = field(name="bytes")
    basic: Any
    better: Any


class AnalysisCommOverlap(Document, kw_only=True):
    """mpi-overlap analysis of the comm-overlap benchmark, version 1: Written by
    mpi_overlap.analysis.comm_overlap: per size the basic test's T_message, T_workload,
    T_overlap, the improvement % of equation (1) of Colmenares et al. (medians, and means as
    in the paper) with its bootstrap interval, the fraction of the message time hidden, the
    compute slowdown, and the better test's per-rank improvement; a one-line finding and the
    headline figures."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["comm-overlap"]
    points: list[AnalysisCommOverlapPointsItem]
    finding: Annotated[str, Meta(min_length=1)]
    figures: Figures


Samples = list[float | None]


class PointBasic(Document, kw_only=True, forbid_unknown_fields=True):
    message: Stats
    workload: Stats
    overlap: Stats
    overlap_work: Stats
    message_samples_us: Samples
    workload_samples_us: Samples
    overlap_samples_us: Samples
    overlap_work_samples_us: Samples


class PointBetterItem(Document, kw_only=True, forbid_unknown_fields=True):
    rank: Annotated[int, Meta(ge=0)]
    nonoverlap: Stats
    overlap: Stats
    nonoverlap_work: Stats
    overlap_work: Stats


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    work_units: Annotated[int, Meta(ge=0)]
    work_us_nominal: float | None
    pilot_message_us: float | None
    basic: PointBasic
    better: list[PointBetterItem]


class BenchCommOverlap(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the comm-overlap benchmark (the communication-computation overlap tests of
    Colmenares et al., §III-B/§IV-B): Per message size: the work (calibrated units, sized as
    work_factor x the pilot's median message time), the basic test on rank 0 (message alone,
    workload alone, Isend + work + Wait, and the work inside it; times in us) and the better
    test's per-rank T_total statistics (both ranks Irecv + Isend; non-overlap: post,
    Waitall, work; overlap: post, work, Waitall). Method: docs/benchmarks.md, section
    comm-overlap."""

    samples: Annotated[int, Meta(ge=1)]
    pilot_samples: Annotated[int, Meta(ge=1)]
    work_factor: float
    min_work_us: float
    units_per_us: float | None
    points_planned: Annotated[int, Meta(ge=0)]
    points: list[Point]


MODELS: dict[str, Any] = {
    "analysis-comm-overlap-v1": AnalysisCommOverlap,
    "bench-comm-overlap-v1": BenchCommOverlap,
}
register(MODELS)
