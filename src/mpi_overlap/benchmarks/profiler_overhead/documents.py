"""The profiler_overhead package's documents as typed models (core/schema.py): bench-
msgrate-v1, bench-compute-app-v1, analysis-profiler-overhead-v1, profiler-overhead-
run-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...analysis.documents import BlockPairCost, BlockSeconds, Figures
from ...core.schema import Document, register
from ...profile.documents.models import LibraryTimeOverLaunches, ProfileLibraryS
from ...run.documents import HostLoad, Provenance, Stats


class Size(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    iterations: Annotated[int, Meta(ge=0, description="windows per sample")]
    messages_per_sample: Annotated[int, Meta(ge=0)]
    msgs_per_s: Annotated[float | None, Meta(description="median of the samples")]
    mb_per_s: Annotated[float | None, Meta(description="msgs_per_s * bytes / 1e6")]
    rate: Annotated[Stats, Meta(description="messages per second over the samples")]
    samples_msgs_per_s: list[float | None]


class BenchMsgrate(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the msgrate benchmark (small-message rate between two ranks, osu_mbw_mr
    style): A window is 'window' MPI_Isend (rank 0) / MPI_Irecv (rank 1) of 'bytes' bytes
    completed by MPI_Waitall, followed by a 'ack_bytes'-byte acknowledgement from rank 1. A
    sample is one timed block of 'iterations' windows on rank 0; its rate is window *
    iterations / block time. msgs_per_s is the median of the samples."""

    window: Annotated[int, Meta(ge=1)]
    ack_bytes: Annotated[int, Meta(ge=0)]
    sizes: list[Size]
    messages_total: Annotated[
        int, Meta(ge=0, description="messages rank 0 posted in the whole run, warm-up included")
    ]
    windows_total: Annotated[
        int, Meta(ge=0, description="windows rank 0 ran in the whole run, warm-up included")
    ]


class BenchComputeApp(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of mo_compute_app (run time of a compute-heavy MPI program): Every rank runs
    'iterations' iterations of: work_units_per_iter units of calibrated work, a halo
    exchange of halo_bytes with its two ring neighbours (2 Irecv, 2 Isend, Waitall), an
    8-byte MPI_Allreduce. run_time_s is MPI_Wtime between the barriers before and after the
    loop, the largest over the ranks; null until the loop has finished."""

    iterations: Annotated[int, Meta(ge=1)]
    work_units_per_iter: Annotated[int, Meta(ge=0)]
    work_us_nominal: Annotated[
        float | None, Meta(description="work_units_per_iter at the calibrated rate, µs")
    ]
    halo_bytes: Annotated[int, Meta(ge=0)]
    neighbours: Annotated[int, Meta(ge=0)]
    ranks: Annotated[int, Meta(ge=1)]
    run_time_s: float | None
    rank_run_time_s: list[float | None]
    per_iter_us: float | None
    compute_fraction: Annotated[float | None, Meta(description="nominal work time / run time")]
    checksum: Annotated[
        float | None,
        Meta(description="the last allreduce's value (keeps the reductions observable)"),
    ]


class AnalysisProfilerOverheadMethod(Document, kw_only=True, forbid_unknown_fields=True):
    name: Literal["paired-ratio"]
    ratio: str
    estimate: str
    interval: str
    ci: Annotated[float, Meta(gt=0, lt=1)]


class MetricTarget(Document, kw_only=True, forbid_unknown_fields=True):
    op: Literal[">=", "<="]
    value: float


class Pair(Document, kw_only=True, forbid_unknown_fields=True):
    rep: Annotated[int, Meta(ge=1)]
    without: Annotated[float, Meta(gt=0)]
    with_: Annotated[float, Meta(gt=0)] = field(name="with")
    ratio: Annotated[float, Meta(gt=0, description="with / without")]
    disturbed: Annotated[
        bool,
        Meta(
            description=(
                "other processes used the machine during one of the two launches "
                "(launch 'disturbed' in result.json)"
            )
        ),
    ]


class MetricExcludedItem(Document, kw_only=True, forbid_unknown_fields=True):
    rep: int
    reason: str


Verdict = Literal[
    "meets target",
    "misses target",
    "inconclusive (CI spans the target)",
    "inconclusive (fewer than 2 pairs)",
    "no data",
    "no target",
]


class RankFigures(Document, kw_only=True, forbid_unknown_fields=True):
    """the rank-based figures beside a metric's Student-t ones (stats.ratio_ci_rank)"""

    rank_estimate: Annotated[
        float | UnsetType | None,
        Meta(
            description=(
                "Hodges-Lehmann estimate of the ratio (median of the log ratios' Walsh "
                "averages, exponentiated); absent from analyses before it"
            )
        ),
    ] = UNSET
    rank_ci95_low: Annotated[
        float | UnsetType | None,
        Meta(
            description=(
                "the interval the Wilcoxon signed-rank test inverts (exact up to 100 pairs),"
                " exponentiated: not widened by one launch's slower pace; null below 6 pairs"
            )
        ),
    ] = UNSET
    rank_ci95_high: float | UnsetType | None = UNSET


class Estimate(RankFigures, kw_only=True, forbid_unknown_fields=True):
    n: Annotated[int, Meta(ge=0, description="pairs")]
    median: Annotated[float | None, Meta(description="median of the ratios")]
    geomean: Annotated[float | None, Meta(description="geometric mean of the ratios")]
    ci95_low: float | None
    ci95_high: float | None
    overhead_pct: Annotated[
        float | None,
        Meta(
            description=(
                "rate lost or time added by the profiler, percent, from the geometric mean"
            )
        ),
    ]
    verdict: Verdict
    reason: str


class Metric(RankFigures, kw_only=True, forbid_unknown_fields=True):
    name: Literal["msg_rate", "run_time", "launch_time"]
    program: Literal["msgrate", "compute_app"]
    title: str
    unit: str
    source: Literal["value", "elapsed_s"]
    target: MetricTarget | None
    n: Annotated[int, Meta(ge=0, description="complete pairs")]
    pairs: list[Pair]
    excluded: list[MetricExcludedItem]
    median: Annotated[float | None, Meta(description="median of the ratios")]
    geomean: Annotated[float | None, Meta(description="geometric mean of the ratios")]
    ci95_low: float | None
    ci95_high: float | None
    overhead_pct: Annotated[
        float | None,
        Meta(
            description=(
                "rate lost or time added by the profiler, percent, from the geometric mean"
            )
        ),
    ]
    verdict: Verdict
    reason: str
    quiet: Annotated[
        Estimate, Meta(description="the same over the pairs whose launches were not disturbed")
    ]


class NsEstimate(Document, kw_only=True, forbid_unknown_fields=True):
    """per-repetition ns differences (analysis._ns_estimate): their mean with the Student-t
    95 % interval, and their median (absent from analyses before it)"""

    pairs: Annotated[int, Meta(ge=0)]
    added_ns: float | None
    median_ns: float | UnsetType | None = UNSET
    ci95_low_ns: float | None
    ci95_high_ns: float | None


class AnalysisProfilerOverheadCallsites(NsEstimate, kw_only=True, forbid_unknown_fields=True):
    """ns added per 8-byte msgrate message by the profiler's call sites (launch with them on
    minus off, per repetition; 1e9/rate_on - 1e9/rate_off), mean with the Student-t 95 %
    interval, against issue 12's 5 ns (profiler_*: the whole profiler, written before
    per_message held it)"""

    target_ns: float
    verdict: str
    profiler_added_ns: float | UnsetType | None = UNSET
    profiler_ci95_low_ns: float | UnsetType | None = UNSET
    profiler_ci95_high_ns: float | UnsetType | None = UNSET


class AnalysisProfilerOverheadIdle(NsEstimate, kw_only=True, forbid_unknown_fields=True):
    """ns per 8-byte msgrate message at the other MPI_OVERLAP_IDLE setting minus the default's,
    per repetition, mean with the Student-t 95 % interval; verdict: default no worse
    (interval at or above 0), the other setting is cheaper (below), not resolved, not
    measured (runs from before it have no idle launch)"""

    setting: str | None
    verdict: Literal[
        "default no worse", "the other setting is cheaper", "not resolved", "not measured"
    ]


class AnalysisProfilerOverheadSplit(Document, kw_only=True, forbid_unknown_fields=True):
    """the whole profiler's ns per 8-byte msgrate message in the run, split by the launch
    whose events were counted, not processed (MPI_OVERLAP_PROCESS=0): wrappers, that launch
    minus the one without the profiler (clock reads, the rest of each wrapper, the pushes);
    processing, the default launch minus that one"""

    pairs: Annotated[int, Meta(ge=0)]
    wrappers: NsEstimate
    processing: NsEstimate
    floor_ns: Annotated[
        float | None, Meta(description="the run's floor (per_message), beside the wrappers")
    ]
    engine_ns_per_transfer: Annotated[
        float | None,
        Meta(description="the processing timed alone (engine), beside the processing in the run"),
    ]


class AnalysisProfilerOverheadApp(BlockPairCost, kw_only=True, forbid_unknown_fields=True):
    """a mini-app's cost inside one launch (app_cost.py): per pair of neighbouring blocks,
    running / paused; geometric mean and Student-t interval of the log ratios, the
    rank-based figures beside them, in percent of run time"""

    program: Literal["halo", "cg"]
    mode: str
    block: Annotated[int, Meta(ge=1)]
    target_pct: Annotated[float, Meta(description="the seed's cost on real programs")]
    verdict: Verdict
    reason: Annotated[
        str | UnsetType | None,
        Meta(description="why there is no figure where the launch ran (null: there is one)"),
    ] = UNSET
    run_time_s: float | None
    null: Annotated[
        BlockPairCost | UnsetType,
        Meta(
            description=(
                "the same launch without the profiler, whose blocks differ in nothing:"
                " what the pairs read where there is nothing to measure; absent from runs"
                " before it"
            )
        ),
    ] = UNSET


class AnalysisProfilerOverheadEngine(Document, kw_only=True, forbid_unknown_fields=True):
    """the event processing timed alone before the launches (the run's engine:
    mop_engine_cost); absent when the run has none"""

    callsites: bool
    ns_per_transfer: float
    ns_per_transfer_shared: float
    ns_per_call: float


class AnalysisProfilerOverheadPerLaunch(LibraryTimeOverLaunches, kw_only=True,
                                        forbid_unknown_fields=True):
    """the profiler's time once per launch (issue 40: the cost in its parts) over the complete
    profiled launches of the default path: mean with the Student-t 95 % interval, median,
    each part's median (the slowest rank's MPI_Init and MPI_Finalize, rank 0's gather and
    reduction; writing the files is not timed), verdict against 50 ms; absent when no launch
    recorded it"""

    target_s: float
    verdict: str


class AnalysisProfilerOverheadPerMessage(Document, kw_only=True, forbid_unknown_fields=True):
    """ns the whole profiler adds per 8-byte msgrate message (call sites on minus without, per
    repetition): the median, and the mean with the Student-t 95 % interval; the floor
    measured in the same run: rank 0's clock reads per message (2 per call) times one
    read's cost; the verdict: the median against target_floors times the floor, over 8
    pairs or more (issue 40; analyses written before it: the mean's interval against issue
    16's 40 ns)"""

    pairs: Annotated[int, Meta(ge=0)]
    added_ns: float | None
    median_ns: float | UnsetType | None = UNSET
    ci95_low_ns: float | None
    ci95_high_ns: float | None
    floor_ns: float | None
    clock_read_ns: float | None
    added_over_floor: float | None
    median_over_floor: Annotated[
        float | UnsetType | None,
        Meta(description="median_ns / floor_ns: what the verdict judges; absent before issue 40"),
    ] = UNSET
    cpu_clock_ns: Annotated[
        float | UnsetType | None,
        Meta(
            description=(
                "of the added ns per message, what rank 0's reads of the "
                "computation's CPU clock cost (reads times one read's cost, per "
                "message; median over the launches): docs/profiler.md, 'Computation "
                "as CPU time'; null from a library before it"
            )
        ),
    ] = UNSET
    cpu_read_ns: Annotated[
        float | UnsetType | None,
        Meta(description="one read of that clock (median over the launches)"),
    ] = UNSET
    target_floors: Annotated[
        float | UnsetType,
        Meta(description="the target in floors (2: issue 40); absent before issue 40"),
    ] = UNSET
    target_ns: Annotated[
        float | None,
        Meta(description="the target in ns (target_floors x floor_ns; null without a floor)"),
    ]
    verdict: str


class AnalysisProfilerOverheadProfiles(Document, kw_only=True, forbid_unknown_fields=True):
    launches: Annotated[int, Meta(ge=0, description="profiled launches")]
    complete: Annotated[
        int, Meta(ge=0, description="profiled launches whose every rank wrote a complete profile")
    ]
    events: Annotated[
        int,
        Meta(ge=0, description="events processed by the profiler, all profiled launches and ranks"),
    ]
    flushes: Annotated[
        int, Meta(ge=0, description="queue flushes, all profiled launches and ranks")
    ]
    rank0_events_per_message: Annotated[
        float | None,
        Meta(
            description=("mo_msgrate: rank 0's events / messages it posted (median over launches)")
        ),
    ]
    clocks: list[Literal["tsc", "monotonic"]]


class AnalysisProfilerOverhead(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap analysis of the profiler-overhead benchmark, version 1: Written by
    mpi_overlap.benchmarks.profiler_overhead.analysis from a profiler-overhead-run-v1
    result. Per repetition and program, the ratio with/without the profiler; geometric mean
    and Student-t interval of the log ratios; verdict against the target. Method:
    docs/benchmarks.md, section profiler-overhead."""

    figures: Figures | UnsetType = UNSET
    finding: Annotated[
        str | UnsetType,
        Meta(description="each judged metric's ratio, interval and verdict in one sentence"),
    ] = UNSET
    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["profiler-overhead"]
    method: AnalysisProfilerOverheadMethod
    metrics: list[Metric]
    callsites: Annotated[
        AnalysisProfilerOverheadCallsites | UnsetType,
        Meta(
            description=(
                "ns added per 8-byte msgrate message by the profiler's call sites "
                "(launch with them on minus off, per repetition; 1e9/rate_on - "
                "1e9/rate_off), mean with the Student-t 95 % interval, against issue "
                "12's 5 ns (profiler_*: the whole profiler, written before "
                "per_message held it)"
            )
        ),
    ] = UNSET
    idle: Annotated[
        AnalysisProfilerOverheadIdle | UnsetType,
        Meta(
            description=(
                "ns per 8-byte msgrate message at the other MPI_OVERLAP_IDLE setting "
                "minus the default's, per repetition, mean with the Student-t 95 % "
                "interval; verdict: default no worse (interval at or above 0), the "
                "other setting is cheaper (below), not resolved, not measured (runs "
                "from before it have no idle launch)"
            )
        ),
    ] = UNSET
    engine: Annotated[
        AnalysisProfilerOverheadEngine | UnsetType,
        Meta(
            description=(
                "the event processing timed alone before the launches (the run's "
                "engine: mop_engine_cost); absent when the run has none"
            )
        ),
    ] = UNSET
    per_launch: Annotated[
        AnalysisProfilerOverheadPerLaunch | UnsetType,
        Meta(
            description=(
                "the profiler's time once per launch (the cost in its "
                "parts) over the complete profiled launches of the default path: mean"
                " with the Student-t 95 % interval, median, each part's median (the "
                "slowest rank's MPI_Init and MPI_Finalize, rank 0's gather and "
                "reduction; writing the files is not timed), verdict against 50 ms; "
                "absent when no launch recorded it"
            )
        ),
    ] = UNSET
    split: Annotated[
        AnalysisProfilerOverheadSplit | UnsetType,
        Meta(
            description=(
                "the whole profiler's ns per message in the run split into the wrappers"
                " and their queue and the processing (MPI_OVERLAP_PROCESS=0's launch); "
                "absent from runs before it"
            )
        ),
    ] = UNSET
    apps: Annotated[
        list[AnalysisProfilerOverheadApp] | UnsetType,
        Meta(description="the mini-apps' cost inside one launch each (--apps); absent without"),
    ] = UNSET
    per_message: Annotated[
        AnalysisProfilerOverheadPerMessage | UnsetType,
        Meta(
            description=(
                "ns the whole profiler adds per 8-byte msgrate message (call sites on"
                " minus without, per repetition), mean with the Student-t 95 % "
                "interval, against issue 16's 40 ns; and the floor measured in the "
                "same run: rank 0's clock reads per message (2 per call) times one "
                "read's cost"
            )
        ),
    ] = UNSET
    profiles: AnalysisProfilerOverheadProfiles


class Program(Document, kw_only=True, forbid_unknown_fields=True):
    executable: str
    args: Annotated[list[str], Meta(description="the program's flags in every timed launch")]
    metric: Literal["msgs_per_s", "run_time_s"]
    unit: str
    better: Literal["higher", "lower"]


class ProfilerOverheadRunPrograms(Document, kw_only=True, forbid_unknown_fields=True):
    msgrate: Program
    compute_app: Program


class Profile(Document, kw_only=True, forbid_unknown_fields=True):
    status: Annotated[
        Literal["complete", "incomplete"],
        Meta(
            description=(
                "complete: every rank wrote a complete profile-rank-v1 document at MPI_Finalize"
            )
        ),
    ]
    ranks_expected: Annotated[int, Meta(ge=1)]
    ranks_complete: Annotated[int, Meta(ge=0)]
    events: Annotated[int, Meta(ge=0, description="events processed, all ranks (counters.events)")]
    flushes: Annotated[int, Meta(ge=0, description="queue flushes, all ranks (counters.flushes)")]
    rank0_events: Annotated[int, Meta(ge=0)]
    clock: Annotated[
        str | None, Meta(description="the profiler's clock (tsc or monotonic), rank 0")
    ]
    unmonitored_transfers: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "transfers recorded with monitoring off, all ranks (counters); absent "
                "from runs before it"
            )
        ),
    ] = UNSET
    rank0_calls: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(description="MPI calls rank 0 made (its profile's by_function)"),
    ] = UNSET
    clock_read_ns: Annotated[
        float | UnsetType | None,
        Meta(
            description=(
                "one read of the profiler's clock, timed by the library at rank 0's "
                "MPI_Init (clock.read_ns); null from a library before it"
            )
        ),
    ] = UNSET
    cpu_read_ns: Annotated[
        float | UnsetType | None,
        Meta(
            description=(
                "one read of the thread's CPU clock, timed by the library at rank 0's"
                " MPI_Init (cpu.read_ns); null from a library before it"
            )
        ),
    ] = UNSET
    cpu_reads: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType | None,
        Meta(
            description=(
                "reads of the CPU clock rank 0 made (cpu.reads); null from a library before it"
            )
        ),
    ] = UNSET
    warnings: list[str]
    library_s: Annotated[
        ProfileLibraryS | UnsetType | None,
        Meta(
            description=(
                "what the launch paid once, s (profile/analysis/library_time.py): the"
                " slowest rank's time in MPI_Init and MPI_Finalize (the ranks' "
                "library_s), rank 0's gather of the documents and reduction of the "
                "statistics, and their sum; null from a library before it"
            )
        ),
    ] = UNSET


class LaunchRecord(Document, kw_only=True, forbid_unknown_fields=True):
    """what every launch of the run records (run/paired_launch.py: its subdirectory and
    its outcome), whatever it measured"""

    dir: Annotated[str, Meta(description="subdirectory of the run directory")]
    command: list[str]
    status: Literal["complete", "partial", "timeout", "failed", "interrupted"]
    returncode: int | None
    message: str | None
    elapsed_s: Annotated[
        float, Meta(ge=0, description="wall time of the whole launch (mpiexec start to exit)")
    ]
    host: Annotated[
        HostLoad | None,
        Meta(
            description=(
                "CPU time the machine spent during the launch, from /proc/stat; null "
                "where not available"
            )
        ),
    ]
    disturbed: Annotated[
        bool,
        Meta(
            description=(
                "other processes (or steal) used more than 2 % of the machine's CPU "
                "time during the launch, and more than the counters resolve"
            )
        ),
    ]


class Launch(LaunchRecord, kw_only=True, forbid_unknown_fields=True):
    rep: Annotated[int, Meta(ge=0, description="repetition, from 1; 0 for the warm-up")]
    program: Literal["msgrate", "compute_app"]
    profiled: bool
    callsites: Annotated[
        bool | UnsetType | None,
        Meta(
            description=(
                "profiled launches: whether the profiler kept its call-site tables "
                "(false: MPI_OVERLAP_CALLSITES=0, the launch that measures their "
                "cost); null without the profiler; absent in runs from before it"
            )
        ),
    ] = UNSET
    idle: Annotated[
        str | UnsetType | None,
        Meta(
            description=(
                "the MPI_OVERLAP_IDLE this launch set (the setting that is not the "
                "library's default: the launch that measures the other path); null: "
                "the library's default; absent in runs from before it"
            )
        ),
    ] = UNSET
    process: Annotated[
        bool | UnsetType | None,
        Meta(
            description=(
                "profiled launches: false when its events were counted, not processed "
                "(MPI_OVERLAP_PROCESS=0, the launch that splits the cost); null without "
                "the profiler; absent in runs from before it"
            )
        ),
    ] = UNSET
    position: Annotated[int, Meta(ge=0, description="place in its repetition's order, from 0")]
    value: Annotated[
        float | None, Meta(description="msgs_per_s (median of the launch's samples) or run_time_s")
    ]
    detail: Annotated[
        dict[str, Any],
        Meta(
            description=("program-specific figures of the launch (samples, iterations, messages)")
        ),
    ]
    profile: Annotated[Profile | None, Meta(description="null for launches without the profiler")]


class AppLaunch(LaunchRecord, kw_only=True, forbid_unknown_fields=True):
    """one mini-app launch (--apps), its timed iterations in blocks alternately with the
    profiler running and paused (app_cost.py, native/apps/app_ab.h); with the profiler, or
    the same launch without it (profiled false)"""

    program: Literal["halo", "cg"]
    mode: str
    args: list[str]
    block: Annotated[int, Meta(ge=1, description="iterations per block (--profiler-ab)")]
    run_time_s: Annotated[float | None, Meta(description="the mode's run_time_s")]
    block_s: BlockSeconds
    profiled: Annotated[
        bool | UnsetType,
        Meta(
            description=(
                "false: the same launch without the profiler, where the pause does"
                " nothing (the instrument's null check); absent (with) in runs before it"
            )
        ),
    ] = UNSET
    profile: Annotated[Profile | None, Meta(description="null for the launch without it")]


class ProfilerOverheadRunEngine(Document, kw_only=True, forbid_unknown_fields=True):
    """the profiler's event processing timed alone on the launching host before the launches
    (native/profiler/mop_engine_cost: a message-rate loop's streams, no MPI); absent from
    runs made before it, or when it could not run (a warning says why)"""

    executable: str
    batch: Annotated[int, Meta(ge=1, description="events processed at a time (4096: a full queue)")]
    reps: Annotated[
        int, Meta(ge=1, description="passes of 64 windows of 64 transfers; the fastest counts")
    ]
    callsites: bool
    ns_per_transfer: Annotated[
        float,
        Meta(
            description=("a transfer with a handle of its own (receives): its post and completion")
        ),
    ]
    ns_per_transfer_shared: Annotated[
        float,
        Meta(
            description=(
                "a transfer whose handle a window's requests share (sends that complete at once)"
            )
        ),
    ]
    ns_per_call: Annotated[float, Meta(description="a call with no transfer: its enter and exit")]


class ProfilerOverheadRun(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap profiler-overhead run (result.json), version 1: Written by
    mpi_overlap.benchmarks.profiler_overhead.run: one run directory holding R repetitions of
    four launches (mo_msgrate and mo_compute_app, each without and with libmpi_overlap
    preloaded), each launch in its own subdirectory with its result.json, logs and, when
    profiled, profile.rank-N.json. Method: docs/benchmarks.md, section profiler-overhead."""

    schema: Literal["mpi-overlap/profiler-overhead-run"]
    schema_version: Literal[1]
    benchmark: Literal["profiler-overhead"]
    status: Annotated[
        Literal["running", "complete", "incomplete"],
        Meta(
            description=(
                "'running' while launches remain, 'complete' when every launch "
                "completed, 'incomplete' when the run stopped early (a launch failed,"
                " timed out or was interrupted)"
            )
        ),
    ]
    toolchain: str
    ranks: Annotated[int, Meta(ge=2)]
    reps: Annotated[int, Meta(ge=1, description="repetitions planned")]
    quick: bool
    library: Annotated[
        str, Meta(description="the libmpi_overlap.so preloaded into the profiled launches")
    ]
    table: Annotated[str, Meta(description="the transfer-time table the profiled launches used")]
    programs: ProfilerOverheadRunPrograms
    warmup: Annotated[
        Launch | None,
        Meta(
            description=(
                "the untimed first launch of mo_compute_app (no profiler) that fixes "
                "its work units and warms caches; null before it ran"
            )
        ),
    ]
    launches: Annotated[list[Launch], Meta(description="in the order they ran")]
    provenance: Annotated[
        Provenance | None,
        Meta(
            description=(
                "the envelope provenance of the first completed launch (MPI library, "
                "hosts, binding, environment)"
            )
        ),
    ]
    warnings: list[str]
    engine: Annotated[
        ProfilerOverheadRunEngine | UnsetType,
        Meta(
            description=(
                "the profiler's event processing timed alone on the launching host "
                "before the launches (native/profiler/mop_engine_cost: a message-rate"
                " loop's streams, no MPI); absent from runs made before it, or when "
                "it could not run (a warning says why)"
            )
        ),
    ] = UNSET
    apps: Annotated[
        list[AppLaunch] | UnsetType,
        Meta(description=("--apps: each mini-app's launch timed in blocks, with the profiler"
                          " and without it; absent without --apps")),
    ] = UNSET


MODELS: dict[str, Any] = {
    "bench-msgrate-v1": BenchMsgrate,
    "bench-compute-app-v1": BenchComputeApp,
    "analysis-profiler-overhead-v1": AnalysisProfilerOverhead,
    "profiler-overhead-run-v1": ProfilerOverheadRun,
}
register(MODELS)
