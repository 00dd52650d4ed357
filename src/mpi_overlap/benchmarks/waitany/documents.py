"""The waitany package's documents as typed models (core/schema.py): analysis-waitany-v1,
bench-waitany-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ...analysis.documents import Figures
from ...core.schema import Document, register
from ...run.documents import Stats


class AnalysisWaitanyCallsItem(Document, kw_only=True):
    key: Literal["waitany", "testany", "waitsome"]
    call: str
    points: list[Any]
    fit: dict[str, Any] | None
    first: dict[str, Any] | None
    last: dict[str, Any] | None


class AnalysisWaitany(Document, kw_only=True):
    """mpi-overlap analysis of the waitany benchmark, version 1: Written by
    mpi_overlap.analysis.waitany: per call, the least-squares line of the median time
    against N (slope: ns per request) and the times at the smallest and largest N."""

    figures: Figures | UnsetType = UNSET
    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["waitany"]
    calls: list[AnalysisWaitanyCallsItem]
    finding: Annotated[str, Meta(min_length=1)]


class Call(Document, kw_only=True, forbid_unknown_fields=True):
    time_ns: float | None
    time: Stats
    samples_ns: list[float | None]
    calls_median: Annotated[
        float | UnsetType | None, Meta(description="MPI_Testany calls per sample (median)")
    ] = UNSET


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    n: Annotated[int, Meta(ge=1)]
    waitany: Call
    testany: Call
    waitsome: Call


class BenchWaitany(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the waitany benchmark (MPI_Waitany / MPI_Testany / MPI_Waitsome over N
    requests): Per N: rank 0 holds N receive requests of which only request 0 is matched
    (its message has arrived, signalled by a shared-memory flag); time_ns is the median time
    of one MPI_Waitany, of MPI_Testany repeated until its flag is set, and of one
    MPI_Waitsome. Method: docs/benchmarks.md, section waitany."""

    message_bytes: Annotated[int, Meta(ge=0)]
    arrival_sync: str
    samples_per_point: Annotated[int, Meta(ge=1)]
    calls: list[str]
    points_planned: Annotated[int, Meta(ge=0)]
    points: list[Point]


MODELS: dict[str, Any] = {
    "analysis-waitany-v1": AnalysisWaitany,
    "bench-waitany-v1": BenchWaitany,
}
register(MODELS)
