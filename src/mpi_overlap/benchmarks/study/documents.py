"""The study package's documents as typed models (core/schema.py): bench-halo-v1, bench-
cg-v1, analysis-study-v1, analysis-study-cg-v1, analysis-study-halo-v1, study-run-v1.
Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from ...analysis.documents import BlockPairCost, BlockSeconds, Figures
from ...core.schema import Document, register, require_fields, require_keys
from ...profile.documents.models import LibraryTimeOverLaunches, ProfileLibraryS

Dims = Annotated[list[Annotated[int, Meta(ge=1)]], Meta(min_length=3, max_length=3)]


# What a complete mode (one that ran to its end) must say.
HALO_COMPLETE = (
    "checksum",
    "sum",
    "run_time_s",
    "per_iter_us",
    "mpi_time_s",
    "mpi_time_s_mean",
    "compute_time_s",
    "compute_time_s_mean",
    "test_calls_per_rank_min",
    "test_calls_per_rank_max",
    "test_calls_total",
    "requests_per_iter_max",
    "iter_time_s",
)


class HaloMode(Document, kw_only=True, forbid_unknown_fields=True):
    schema_extra: ClassVar[dict[str, Any]] = {
        "if": {"properties": {"complete": {"const": True}}},
        "then": {"required": list(HALO_COMPLETE)},
    }

    mode: Literal["blocking", "nonblocking", "overlap", "overlap-test", "diagonal"]
    complete: bool
    checksum: Annotated[str, Meta(pattern="^[0-9a-f]{16}$")] | UnsetType = UNSET
    sum: float | UnsetType | None = UNSET
    run_time_s: float | UnsetType | None = UNSET
    per_iter_us: Annotated[
        float | UnsetType | None, Meta(description="median of iter_time_s, µs")
    ] = UNSET
    mpi_time_s: float | UnsetType | None = UNSET
    mpi_time_s_mean: float | UnsetType | None = UNSET
    compute_time_s: float | UnsetType | None = UNSET
    compute_time_s_mean: float | UnsetType | None = UNSET
    test_calls_per_rank_min: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    test_calls_per_rank_max: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    test_calls_total: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    requests_per_iter_max: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    iter_time_s: list[float | None] | UnsetType = UNSET

    def __post_init__(self) -> None:
        if self.complete:
            require_fields(self, HALO_COMPLETE, "complete")


class BenchHalo(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of mo_halo (miniGhost-like 7-point stencil mini-application): A grid of
    grid[0] x grid[1] x grid[2] doubles over dims ranks (MPI_Dims_create), 'iterations'
    sweeps of the 7-point mean per mode, each mode from the same seeded data. checksum (hex)
    and sum are decomposition-independent: identical in every mode and for every number of
    ranks (checksums_identical; null until every mode has run). Times are measured without
    PMPI: mpi_time_s is the time inside the exchange's MPI calls (post, MPI_Testall,
    MPI_Waitall, MPI_Sendrecv), the largest over the ranks; iter_time_s the time of each
    iteration, the largest over the ranks."""

    grid: Dims
    dims: Dims
    ranks: Annotated[int, Meta(ge=1)]
    points: Annotated[int, Meta(ge=1)]
    iterations: Annotated[int, Meta(ge=1)]
    warmup_iterations: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "untimed iterations per mode before the timed ones, which start again"
                " from the seeded data"
            ),
        ),
    ]
    tests_per_iter: Annotated[
        int, Meta(ge=0, description="MPI_Testall calls per iteration in overlap-test")
    ]
    inflate: Annotated[int, Meta(ge=1, description="sweeps of every point per iteration")]
    seed: Annotated[int, Meta(ge=0)]
    modes: list[HaloMode]
    checksums_identical: bool | None


BenchCgDims = Annotated[list[Annotated[int, Meta(ge=1)]], Meta(min_length=3, max_length=3)]


# What a complete mode (one that ran to its end) must say.
CG_COMPLETE = (
    "run_time_s",
    "per_iter_us",
    "mpi_time_s",
    "mpi_time_s_mean",
    "halo_time_s",
    "reduce_time_s",
    "work_time_s",
    "reductions_per_rank",
    "relative_residual",
    "residuals",
    "iter_time_s",
)


class BenchCgMode(Document, kw_only=True, forbid_unknown_fields=True):
    schema_extra: ClassVar[dict[str, Any]] = {
        "if": {"properties": {"complete": {"const": True}}},
        "then": {"required": list(CG_COMPLETE)},
    }

    mode: Literal["allreduce", "iallreduce"]
    complete: bool
    run_time_s: float | UnsetType | None = UNSET
    per_iter_us: Annotated[
        float | UnsetType | None, Meta(description="median of iter_time_s, µs")
    ] = UNSET
    mpi_time_s: float | UnsetType | None = UNSET
    mpi_time_s_mean: float | UnsetType | None = UNSET
    halo_time_s: float | UnsetType | None = UNSET
    reduce_time_s: float | UnsetType | None = UNSET
    work_time_s: float | UnsetType | None = UNSET
    reductions_per_rank: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    relative_residual: float | UnsetType | None = UNSET
    residuals: list[float | None] | UnsetType = UNSET
    iter_time_s: list[float | None] | UnsetType = UNSET

    def __post_init__(self) -> None:
        if self.complete:
            require_fields(self, CG_COMPLETE, "complete")


class BenchCg(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of mo_cg (miniFE-like conjugate gradient mini-application): Unpreconditioned
    CG on the 7-point Poisson matrix of a grid[0] x grid[1] x grid[2] grid over dims ranks,
    'iterations' iterations per mode (no early stop), the two dot products per iteration
    reduced by MPI_Allreduce (mode allreduce) or by MPI_Iallreduce with independent work or
    the x update in flight (mode iallreduce). residuals holds ||r_k|| for k = 0..iterations;
    the histories of all modes agree within residual_tolerance (relative, per iteration;
    residuals_max_rel_diff, residuals_agree; null until every mode has run). Times without
    PMPI, largest over the ranks: mpi_time_s = halo_time_s + reduce_time_s per rank (time
    inside the MPI calls of the halo exchange and of the reductions), work_time_s the
    independent work."""

    grid: BenchCgDims
    dims: BenchCgDims
    ranks: Annotated[int, Meta(ge=1)]
    points: Annotated[int, Meta(ge=1)]
    iterations: Annotated[int, Meta(ge=1)]
    warmup_iterations: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "untimed iterations per mode before the timed solve, which starts again from x0 = 0"
            ),
        ),
    ]
    work_units_per_iter: Annotated[
        int, Meta(ge=0, description="independent work per iteration, every rank but 0")
    ]
    work_us_nominal: Annotated[
        float | None, Meta(description="work_units_per_iter at the calibrated rate, µs")
    ]
    imbalance: Annotated[
        float, Meta(ge=0, description="rank 0 does (1 + imbalance) times the independent work")
    ]
    seed: Annotated[int, Meta(ge=0)]
    residual_tolerance: Annotated[float, Meta(gt=0)]
    modes: list[BenchCgMode]
    residuals_max_rel_diff: Annotated[float, Meta(ge=0)] | None
    residuals_agree: bool | None


class AnalysisStudySizesItemCellsItem(Document, kw_only=True):
    mode: Any
    run_time_s: Any
    mpi_time_s: Any
    min_pct: Any
    max_pct: Any
    profiler_ratio: Any


class AnalysisStudySizesItemComparisonsItem(Document, kw_only=True):
    verdict: Literal["within the bounds", "below the bounds", "above the bounds", "no data"]
    prediction: (
        Literal["a saving for sure", "a saving at most", "a loss for sure", "no saving", "no data"]
        | UnsetType
    ) = UNSET
    mode: Any
    against: Any
    mpi_time_change_pct: Any
    run_time_change_pct: Any
    hidden_gain_min_s: Any
    hidden_gain_max_s: Any


class AnalysisStudySizesItemAdviceItem(Document, kw_only=True):
    verdict: Literal["within the bound", "beyond the bound", "no data"]
    mode: Any
    rule: Any
    advice: Any
    bound_s: Any
    saved_s: Any


class AnalysisStudySizesItem(Document, kw_only=True):
    local: int
    face_bytes: int
    cells: list[AnalysisStudySizesItemCellsItem]
    comparisons: list[AnalysisStudySizesItemComparisonsItem]
    advice: Annotated[
        list[AnalysisStudySizesItemAdviceItem] | UnsetType,
        Meta(
            description=(
                "modes that apply the baseline's advice: the bound its profile set "
                "(bound_s, per rank) against the MPI time the mode saved (saved_s)"
            )
        ),
    ] = UNSET


class AnalysisStudyInsideLaunchesSize(BlockPairCost, kw_only=True, forbid_unknown_fields=True):
    local: Annotated[int, Meta(ge=1)]


class AnalysisStudyInsideLaunches(BlockPairCost, kw_only=True, forbid_unknown_fields=True):
    """the pairs of blocks of every complete cost launch pooled, and per size"""

    block: Annotated[int, Meta(ge=1)] | None
    launches: Annotated[int, Meta(ge=0, description="cost launches whose pairs count")]
    refused: Annotated[
        int, Meta(ge=0, description="cost launches left out: the profiler did not pause")
    ]
    by_size: list[AnalysisStudyInsideLaunchesSize]


class AnalysisStudyProfilerOverhead(Document, kw_only=True):
    pairs: Any
    geomean: Any
    ci95_low: Any
    ci95_high: Any
    overhead_pct: Any
    # the same per unit of each launch's computation (analysis._per_computation)
    per_computation: Any = None
    # what the profiled launches paid the profiler once (library_time.over_launches); not
    # in studies recorded before the launches kept it
    once_per_launch: LibraryTimeOverLaunches | UnsetType | None = UNSET
    # where some pairs were disturbed, the same figures over the others (pairs, geomean,
    # ci95_low, ci95_high, overhead_pct, ratios, per_computation); absent otherwise
    undisturbed: dict[str, Any] | UnsetType = UNSET
    # the cost inside launches (analysis._inside_launches: the cost launches' pairs of
    # blocks); not in studies recorded before them
    inside_launches: AnalysisStudyInsideLaunches | UnsetType = UNSET


class AnalysisStudyPrediction(Document, kw_only=True):
    agreed: Any
    judged: Any


class AnalysisStudy(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap analysis of a case study, version 1: Written by
    mpi_overlap.benchmarks.study.analysis: per size and mode the medians without the
    profiler and the bounds with it, each mode against the baseline with the prediction
    verdict, the profiler's cost on the app, conclusions and a finding.
    docs/case-studies.md."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["study-halo", "study-cg"]
    app: Literal["halo", "cg"]
    baseline: str
    modes: list[str]
    sizes: list[AnalysisStudySizesItem]
    profiler_overhead: AnalysisStudyProfilerOverhead
    prediction: AnalysisStudyPrediction
    conclusions: list[str]
    finding: Annotated[str, Meta(min_length=1)]
    figures: Figures


class StudyRunSizesItem(Document, kw_only=True, forbid_unknown_fields=True):
    local: Annotated[int, Meta(ge=1)]
    face_bytes: Annotated[int, Meta(ge=0)]


class LaunchModesItem(Document, kw_only=True, forbid_unknown_fields=True):
    mode: str
    run_time_s: Annotated[float, Meta(ge=0)]
    mpi_time_s: Annotated[float, Meta(ge=0)]
    # the mean over the ranks (run_time_s minus it: the mode's computation); not in
    # launches recorded before it was kept
    mpi_time_s_mean: Annotated[float, Meta(ge=0)] | UnsetType = UNSET
    per_iter_us: Annotated[float, Meta(ge=0)]


class StudyLaunchRecord(Document, kw_only=True, forbid_unknown_fields=True):
    """what every launch of a study records: its repetition and size, its subdirectory
    and its outcome (run/paired_launch.py)"""

    rep: Annotated[int, Meta(ge=1)]
    local: Annotated[int, Meta(ge=1)]
    dir: str
    command: list[str]
    status: str
    returncode: int | None
    message: str | None
    elapsed_s: Annotated[float, Meta(ge=0)]
    host: dict[str, Any] | None
    disturbed: bool


class Launch(StudyLaunchRecord, kw_only=True, forbid_unknown_fields=True):
    profiled: bool
    modes: list[LaunchModesItem]
    bounds: (
        dict[
            str,
            Annotated[
                dict[str, Annotated[float, Meta(ge=0)]],
                Meta(
                    extra_json_schema={
                        "required": ["transfers", "xfer_s", "min_s", "max_s", "comp_s", "call_s"]
                    }
                ),
            ],
        ]
        | None
    )
    profile_status: str | None
    # profiled launches: what the launch paid the profiler once (MPI_Init, MPI_Finalize, the
    # gather and the reduction); null where its ranks did not record it; not in launches
    # recorded before it was kept
    library_s: ProfileLibraryS | UnsetType | None = UNSET

    def __post_init__(self) -> None:
        require_keys(
            self.bounds,
            "bounds",
            ("transfers", "xfer_s", "min_s", "max_s", "comp_s", "call_s"),
            each=True,
        )


class CostLaunch(StudyLaunchRecord, kw_only=True, forbid_unknown_fields=True):
    """one cost launch: the baseline mode alone with the profiler, its timed iterations in
    blocks alternately with the profiler running and paused (run.py, analysis/
    block_pairs.py)"""

    block: Annotated[int, Meta(ge=1, description="iterations per block (--profiler-ab)")]
    block_s: BlockSeconds
    profile_status: str | None
    unmonitored_transfers: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "transfers the ranks recorded with monitoring off: more than 0 means the"
                " profiler refused to pause (threads), and the launch gives no figure"
            ),
        ),
    ]


class StudyRun(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap case-study run, version 1: Written by mpi_overlap.benchmarks.study.run: per
    repetition and per-rank grid size, one launch of the mini-application without and one
    with the overlap profiler, every exchange mode in each launch; with the profiler, the
    min/max bounds summed over each mode's regions. docs/case-studies.md."""

    schema: Literal["mpi-overlap/study-run"]
    schema_version: Literal[1]
    benchmark: Literal["study-halo", "study-cg"]
    status: Literal["running", "complete", "incomplete"]
    app: Literal["halo", "cg"]
    program: str
    baseline: str
    toolchain: str
    ranks: Annotated[int, Meta(ge=1)]
    reps: Annotated[int, Meta(ge=1)]
    quick: bool
    sizes: list[StudyRunSizesItem]
    args: list[str]
    table: str
    launches: list[Launch]
    # one per repetition and size after its pair; not in studies recorded before them
    cost_launches: list[CostLaunch] | UnsetType = UNSET
    provenance: dict[str, Any] | None
    warnings: list[str]


MODELS: dict[str, Any] = {
    "bench-halo-v1": BenchHalo,
    "bench-cg-v1": BenchCg,
    "analysis-study-v1": AnalysisStudy,
    "analysis-study-cg-v1": AnalysisStudy,
    "analysis-study-halo-v1": AnalysisStudy,
    "study-run-v1": StudyRun,
}
register(MODELS)
