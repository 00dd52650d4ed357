"""The stack_floor package's documents as typed models (core/schema.py): analysis-stack-
floor-v1, bench-stack-floor-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...analysis.documents import Figures
from ...core.schema import Document, register


class Est(Document, kw_only=True, forbid_unknown_fields=True):
    median_s: float | None
    ci95_low_s: float | None
    ci95_high_s: float | None


class Size(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    samples: Annotated[int, Meta(ge=0)]
    mpi_blocking: Est
    mpi_nonblocking: Est
    shm: Est
    memcpy: Est
    floor: Est
    floor_kind: Literal["shm", "single-copy", "tcp"]
    added: Est
    request_overhead: Est
    noise_s: Annotated[float, Meta(ge=0)]
    request_noise_s: Annotated[float, Meta(ge=0)]
    mpi_blocking_p90_s: Annotated[
        float | UnsetType | None,
        Meta(description="90th percentile of the MPI samples (each a block average)"),
    ] = UNSET
    mpi_blocking_p99_s: float | UnsetType | None = UNSET


class AnalysisStackFloorJump(Document, kw_only=True, forbid_unknown_fields=True):
    ratio: Annotated[float, Meta(description="added[i+1] / added[i]")]
    persistent_ratio: Annotated[
        float,
        Meta(
            description=(
                "min(added[i+1], added[i+2]) / max(added[i-1], added[i]) (those that "
                "exist), the criterion that chose i"
            )
        ),
    ]
    below_bytes: Annotated[int, Meta(ge=0)]
    above_bytes: Annotated[int, Meta(ge=0)]
    added_below_s: float
    added_above_s: float


class AnalysisStackFloorSwitch(Document, kw_only=True, forbid_unknown_fields=True):
    found: Annotated[
        bool,
        Meta(
            description=("a step raised the fixed cost by at least min_rise of the time before it")
        ),
    ]
    min_rise: float
    below_bytes: Annotated[int, Meta(ge=0)] | None
    above_bytes: Annotated[int, Meta(ge=0)] | None
    rise: Annotated[
        float | None, Meta(description="(fixed cost after - fixed cost before) / t(below)")
    ]
    t_below_s: float | UnsetType | None = UNSET
    t_above_s: float | UnsetType | None = UNSET
    fixed_before_s: Annotated[
        float | UnsetType | None,
        Meta(description="value at size 0 of the line through the two sizes before the step"),
    ] = UNSET
    fixed_after_s: Annotated[
        float | UnsetType | None, Meta(description="the same through the two sizes after")
    ] = UNSET
    steps: Annotated[list[dict[str, Any]], Meta(description="every step judged")]


class AnalysisStackFloorReportedSwitch(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[
        int | None,
        Meta(
            description=(
                "the first payload size on the other protocol, by the MPI's control variables"
            )
        ),
    ] = field(name="bytes")
    source: str | None
    family: str | None
    note: str
    cvars: dict[str, int | None]


class AnalysisStackFloorLowerLayer(Document, kw_only=True):
    status: Literal["not available", "found, not run", "measured", "failed"]
    tool: str | None
    detail: str


class AnalysisStackFloorChecksItem(Document, kw_only=True, forbid_unknown_fields=True):
    name: str
    ok: bool
    detail: str


class AnalysisStackFloor(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap analysis of the stack-floor benchmark, version 1: Written by
    mpi_overlap.analysis.stack_floor. Per size: medians with bootstrap 95 % intervals of
    each method, the floor, the MPI stack's added time and the request overhead; the largest
    step of the added time; consistency checks; one-line findings. Method:
    docs/benchmarks.md, section stack-floor."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["stack-floor"]
    method: dict[str, str]
    floor_path: Annotated[
        Literal["shared-memory", "tcp"] | UnsetType,
        Meta(description="what the floor ping-pong went through (the result's floor_path)"),
    ] = UNSET
    sizes: list[Size]
    figures: Figures | UnsetType = UNSET
    jump: AnalysisStackFloorJump | None
    switch: Annotated[
        AnalysisStackFloorSwitch | UnsetType | None,
        Meta(
            description=(
                "the protocol switch on the size-normalised curve "
                "(analysis/protocol_switch.py); null with fewer than 4 sizes"
            )
        ),
    ] = UNSET
    reported_switch: AnalysisStackFloorReportedSwitch | UnsetType = UNSET
    switch_agrees: Annotated[
        bool | UnsetType | None,
        Meta(
            description=(
                "the found step (below, above] meets [reported - 128, reported]; null"
                " when either is unknown"
            )
        ),
    ] = UNSET
    lower_layer: AnalysisStackFloorLowerLayer
    checks: list[AnalysisStackFloorChecksItem]
    finding: Annotated[str, Meta(min_length=1)]
    request_finding: Annotated[str, Meta(min_length=1)]


class BenchStackFloorLowerLayerTools(Document, kw_only=True, forbid_unknown_fields=True):
    searched: Annotated[
        str,
        Meta(
            description=("directories searched, ':'-separated (PATH, then beside the MPI library)")
        ),
    ]
    fi_pingpong: str | None
    ucx_perftest: str | None


class BenchStackFloorMpiCvarsItem(Document, kw_only=True, forbid_unknown_fields=True):
    name: str
    value: int | None


class Method(Document, kw_only=True, forbid_unknown_fields=True):
    iterations: Annotated[int, Meta(ge=1)]
    samples_s: list[float]


class BenchStackFloorSize(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    mpi_blocking: Method
    mpi_nonblocking: Method
    shm: Method
    memcpy: Method


class BenchStackFloor(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the stack-floor benchmark (MPI ping-pong against the shared-memory and
    memcpy floors; blocking against non-blocking requests): Ranks 0 and 1 (one node). Per
    size, one sample of each method in turn, --reps times. A sample is a timed block of
    'iterations' round trips divided by 2 * iterations (memcpy: copies divided by
    iterations): seconds one way."""

    ranks: Annotated[int, Meta(ge=2)]
    complete: Annotated[bool, Meta(description="false when the time limit stopped the sweep")]
    inline_max: Annotated[
        int, Meta(description="largest payload that shares the flag's cache line in the shm floor")
    ]
    line_bytes: int
    floor_path: Annotated[
        Literal["shared-memory", "tcp"] | UnsetType,
        Meta(
            description=(
                "what the 'shm' method's ping-pong went through: a shared segment "
                "(ranks on one node), or a TCP connection of the program's own (one "
                "rank on each of two nodes); absent in results from before it "
                "existed: shared-memory"
            )
        ),
    ] = UNSET
    lower_layer_tools: BenchStackFloorLowerLayerTools
    mpi_cvars: Annotated[
        list[BenchStackFloorMpiCvarsItem] | UnsetType,
        Meta(
            description=(
                "MPI_T control variables whose names suggest protocol thresholds "
                "(rank 0); the analysis cross-checks the switch it finds against them"
            )
        ),
    ] = UNSET
    cvar_note: str | UnsetType | None = UNSET
    sizes: list[BenchStackFloorSize]


MODELS: dict[str, Any] = {
    "analysis-stack-floor-v1": AnalysisStackFloor,
    "bench-stack-floor-v1": BenchStackFloor,
}
register(MODELS)
