"""The overlap_validation package's documents as typed models (core/schema.py): analysis-
overlap-validation-v1, bench-overlap-validation-v1. Their JSON schemas are generated
from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...core.schema import Document, register
from ...run.documents import Stats


class AnalysisOverlapValidationMethod(Document, kw_only=True, forbid_unknown_fields=True):
    name: Literal["region-bounds"]
    limits: Annotated[
        dict[str, float],
        Meta(description="the named thresholds of analysis/overlap_validation.py in force"),
    ]


class AnalysisOverlapValidationBoundsProfilesItem(
    Document, kw_only=True, forbid_unknown_fields=True
):
    rank: Annotated[int, Meta(ge=0)]
    status: str | None
    table: str | None


class AnalysisOverlapValidationBounds(Document, kw_only=True, forbid_unknown_fields=True):
    available: Annotated[bool, Meta(description="false: the curves have times only")]
    reason: Annotated[str | None, Meta(description="why the bounds are missing")]
    profiles: list[AnalysisOverlapValidationBoundsProfilesItem]
    missing_ranks: list[int]
    problems: list[str]


Num = float | None


class Point(Document, kw_only=True, forbid_unknown_fields=True):
    step: Annotated[int, Meta(ge=0)]
    region: str | None
    iterations: Annotated[int, Meta(ge=0)]
    comp_us: Annotated[Num, Meta(description="median measured computation per iteration")]
    post_us: Annotated[Num, Meta(description="median time in MPI_Isend/MPI_Irecv")]
    wait_us: Annotated[Num, Meta(description="median time in MPI_Wait")]
    wait_mean_us: Num
    peer_wait_us: Annotated[
        Num, Meta(description="the other side's median MPI_Wait (when it is non-blocking)")
    ]
    peer_call_us: Annotated[
        Num, Meta(description="the other side's median blocking call (when it is blocking)")
    ]
    transfers: Annotated[
        int | None,
        Meta(
            description=(
                "transfers the profiler closed in this region on this rank (should "
                "equal iterations)"
            )
        ),
    ]
    xfer_us: Annotated[
        Num, Meta(description="the profiler's a-priori transfer time per transfer (its table)")
    ]
    min_pct: Num
    max_pct: Num
    min_pct_own: Annotated[
        Num,
        Meta(
            description=(
                "the source's bounds for a typical iteration from the step's medians "
                "with this run's own transfer time T (benchmark ping-pong) instead of"
                " the table: 100·min(max(0, T − post − wait), min(comp, T))/T"
            )
        ),
    ]
    max_pct_own: Annotated[Num, Meta(description="100·min(comp, T)/T, T as for min_pct_own")]


Trend = Literal["rises", "falls", "flat"] | None


class Shape(Document, kw_only=True, forbid_unknown_fields=True):
    threshold_us: Annotated[
        Num,
        Meta(
            description=(
                "transfer time: the profiler's table value, else the benchmark's "
                "blocking ping-pong median"
            )
        ),
    ]
    threshold_from: Literal["profile", "benchmark"]
    table_ratio: Annotated[
        Num,
        Meta(
            description=(
                "the profiler's table transfer time / this run's blocking ping-pong "
                "median: away from 1 the lower bound is shifted (min = table time − "
                "library time)"
            )
        ),
    ]
    full_from_comp_us: Annotated[
        Num, Meta(description="computation of the first step with computation >= threshold")
    ]
    reaches_full: Annotated[
        bool | None,
        Meta(description="max % >= full_pct at every step with computation >= threshold"),
    ]
    max_pct_first: Num
    max_pct_last: Num
    min_pct_first: Num
    min_pct_last: Num
    min_pct_plateau: Annotated[
        Num,
        Meta(
            description=(
                "median min % over the steps with computation >= threshold, where min"
                " is no longer capped by max: 100·(1 − library time / table time)"
            )
        ),
    ]
    min_own_first: Num
    min_own_last: Num
    min_own_trend: Annotated[
        Trend,
        Meta(
            description=(
                "trend of min_pct_own: the lower bound's shape with a table that fits this run"
            )
        ),
    ]
    max_own_trend: Trend
    wait_first_us: Num
    wait_last_us: Num
    max_trend: Trend
    min_trend: Trend
    wait_trend: Trend
    rho_min_comp: Num
    rho_wait_comp: Num
    rho_wait_max: Num
    rho_wait_min: Num
    wait_falls_as_overlap_rises: Annotated[
        bool | None, Meta(description="null when neither bound rises")
    ]


class CurveSource(Document, kw_only=True, forbid_unknown_fields=True):
    class_: Literal["short", "long"] = field(name="class")
    figures: str
    text: str
    matched: str | None
    matches: bool | None
    basis: Annotated[
        Literal["profile", "own"],
        Meta(
            description=(
                "profile: compared on the profiler's bounds; own: on the bounds "
                "recomputed with this run's transfer time (no profile, or a table "
                "that does not fit: ratio outside [table_ratio_min, table_ratio_max])"
            )
        ),
    ]


class Curve(Document, kw_only=True, forbid_unknown_fields=True):
    pairing: Literal["isend-irecv", "isend-recv", "send-irecv"]
    size: Annotated[int, Meta(ge=0)]
    side: Literal["sender", "receiver"]
    rank: Annotated[int, Meta(ge=0)]
    call: str | None
    peer_call: str | None
    peer_nonblocking: bool
    complete: bool
    transfer_us: Annotated[
        Num, Meta(description="the benchmark's blocking ping-pong one-way median")
    ]
    points: list[Point]
    shape: Shape
    source: CurveSource
    finding: str


class AnalysisOverlapValidation(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap analysis of the overlap-validation benchmark, version 1: Written by
    mpi_overlap.analysis.overlap_validation from result.json and the profile.rank-N.json
    files of the run directory. One curve per non-blocking side of each (pairing, size): per
    step the side's measured computation and MPI_Wait time and the profiler's bounds of that
    step's region (min % = 100·min_s/xfer_s, max % = 100·max_s/xfer_s). Method:
    docs/benchmarks.md, section overlap-validation."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["overlap-validation"]
    method: AnalysisOverlapValidationMethod
    bounds: AnalysisOverlapValidationBounds
    curves: list[Curve]
    findings: list[str]


Pairing = Literal["isend-irecv", "isend-recv", "send-irecv"]


class SideMeta(Document, kw_only=True, forbid_unknown_fields=True):
    rank: Annotated[int, Meta(ge=0, le=1)]
    call: Literal["MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv"]
    nonblocking: bool


StatsOrNull = None | Stats


class Side(Document, kw_only=True, forbid_unknown_fields=True):
    """Per-iteration times of one side. Non-blocking side: post_us (the MPI_Isend/MPI_Irecv
    call), comp_us (the work, measured), wait_us (MPI_Wait); call_us is null. Blocking side:
    call_us (MPI_Send/MPI_Recv); the others are null."""

    post_us: StatsOrNull
    comp_us: StatsOrNull
    wait_us: StatsOrNull
    call_us: StatsOrNull


class Step(Document, kw_only=True, forbid_unknown_fields=True):
    step: Annotated[int, Meta(ge=0)]
    region: Annotated[str, Meta(description="profiler region of this step's loop")]
    work_units: Annotated[int, Meta(ge=0)]
    work_us_nominal: Annotated[
        float, Meta(ge=0, description="work_units / units_per_us (rank 0's calibration)")
    ]
    iterations: Annotated[int, Meta(ge=1)]
    sender: Side
    receiver: Side


class Case(Document, kw_only=True, forbid_unknown_fields=True):
    pairing: Pairing
    size: Annotated[int, Meta(ge=0, description="message size in bytes")]
    complete: Annotated[bool, Meta(description="false when the time limit stopped the steps early")]
    stop_reason: str | UnsetType = UNSET
    sender: SideMeta
    receiver: SideMeta
    transfer_us: Annotated[
        Stats,
        Meta(
            description=(
                "one-way time of a blocking ping-pong (round trip / 2; rank 0 sends "
                "from the message buffer and receives into a second one, rank 1 the "
                "other way round, so no rank sends data it has just received), one "
                "sample per block of transfer_round_trips round trips, measured once "
                "per size (at its first pairing; the others repeat it); its median "
                "scales the computation steps"
            )
        ),
    ]
    transfer_round_trips: Annotated[int, Meta(ge=0)]
    table_us: Annotated[
        float | None,
        Meta(
            description=(
                "the profiler's table time for this size (intra-node), µs; null without a table"
            )
        ),
    ]
    top_comp_us: Annotated[
        float,
        Meta(
            description=(
                "planned computation of the last step: max(top_factor x median "
                "transfer time, top_factor x table_us, top_min_us)"
            )
        ),
    ]
    steps: list[Step]


class BenchOverlapValidation(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the overlap-validation benchmark (the profiler's validation experiment,
    Shet et al. §3): Rank 0 sends, rank 1 receives, one message per iteration. A
    non-blocking side does: Barrier; post (MPI_Isend/MPI_Irecv); work(units); MPI_Wait. A
    blocking side does: Barrier; MPI_Send/MPI_Recv. Each step's loop runs inside the
    profiler region named by 'region' (when the profiler is loaded), so
    profile.rank-N.json's by_region entry of that name holds the step's overlap bounds.
    Times are per iteration, in microseconds."""

    profiler_loaded: Annotated[
        bool,
        Meta(
            description=(
                "the region API resolved at run time (libmpi_overlap preloaded or "
                "linked); false: no bounds were recorded"
            )
        ),
    ]
    profiler_table: Annotated[
        str | None,
        Meta(
            description=(
                "the profiler's transfer-time table (MPI_OVERLAP_TABLE) the steps "
                "were scaled with, when readable"
            )
        ),
    ]
    region_format: Literal["<pairing>/<bytes>/<step>"]
    iterations: Annotated[int, Meta(ge=1, description="iterations per step")]
    top_factor: Annotated[
        float,
        Meta(
            description=("the last step computes about top_factor x the blocking transfer time ...")
        ),
    ]
    top_min_us: Annotated[float, Meta(description="... and at least this long")]
    first_frac: Annotated[
        float,
        Meta(
            description=(
                "the first non-zero step computes first_frac x the blocking transfer "
                "time; the steps between are geometric"
            )
        ),
    ]
    cases: list[Case]


MODELS: dict[str, Any] = {
    "analysis-overlap-validation-v1": AnalysisOverlapValidation,
    "bench-overlap-validation-v1": BenchOverlapValidation,
}
register(MODELS)
