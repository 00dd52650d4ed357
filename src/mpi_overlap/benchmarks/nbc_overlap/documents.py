"""The nbc_overlap package's documents as typed models (core/schema.py): analysis-nbc-
overlap-v1, bench-nbc-overlap-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...analysis.documents import Figures
from ...core.schema import Document, register


class AnalysisNbcOverlapBounds(Document, kw_only=True):
    available: bool
    note: str | None


class AnalysisNbcOverlapCasesItemVariantsItem(Document, kw_only=True):
    tests: Annotated[int, Meta(ge=0)]
    region: str | None
    osu_pct: Annotated[float, Meta(ge=0, le=100)] | None
    osu_rank_min_pct: float | None
    osu_rank_max_pct: float | None
    osu_raw_max_pct: float | UnsetType | None = UNSET
    imb_pct: Annotated[float, Meta(ge=0, le=100)] | None
    imb_rank: int | UnsetType | None = UNSET
    profiler_min_pct: float | None
    profiler_max_pct: float | None
    compute_slowdown_pct: float | None
    ranks: list[dict[str, Any]]
    osu_clipped: Annotated[
        bool | UnsetType,
        Meta(
            description=(
                "the OSU formula was below 0 even at the favourable quartile of the "
                "non-overlapped time, so max(0, ...) hid an estimate outside its "
                "range"
            )
        ),
    ] = UNSET
    osu_raw_clipped_pct: float | UnsetType | None = UNSET
    imb_raw_pct: Annotated[
        float | UnsetType | None,
        Meta(
            description=(
                "the IMB formula of the rank with the largest t_ovrl before its "
                "clipping to [0, 100]"
            )
        ),
    ] = UNSET
    t_overall_p90_us: float | UnsetType | None = UNSET
    t_overall_p99_us: float | UnsetType | None = UNSET


class AnalysisNbcOverlapCasesItem(Document, kw_only=True):
    collective: str
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    iterations: int
    t_pure_us: float | None
    t_pure_max_us: float | UnsetType | None = UNSET
    variants: list[AnalysisNbcOverlapCasesItemVariantsItem]
    t_pure_ci_us: Annotated[
        Annotated[list[float], Meta(min_length=2, max_length=2)] | UnsetType | None,
        Meta(
            description=(
                "95 % interval of the median t_pure: the ranks' order-statistic intervals, hull"
            )
        ),
    ] = UNSET
    t_pure_after_us: Annotated[
        float | UnsetType | None,
        Meta(description=("median over ranks of t_pure measured again after the overlapped loops")),
    ] = UNSET
    t_pure_p90_us: Annotated[
        float | UnsetType | None,
        Meta(description="largest over ranks of the 90th percentile of t_pure"),
    ] = UNSET
    t_pure_p99_us: float | UnsetType | None = UNSET
    valid: Annotated[
        bool | UnsetType | None,
        Meta(description="--validate: the delivered data were right; null: not checked"),
    ] = UNSET
    verdict: Annotated[
        Literal["ok", "disturbed", "invalid"] | UnsetType,
        Meta(
            description=(
                "disturbed: t_pure before and after the overlapped loops disagree "
                "beyond their intervals by more than 10 %; invalid: wrong data; only "
                "ok cases make the headline"
            )
        ),
    ] = UNSET
    reason: str | UnsetType | None = UNSET


class AnalysisNbcOverlapChecks(Document, kw_only=True):
    cases_disturbed: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    cases_invalid: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    cases_validated: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    variants_clipped: Annotated[int, Meta(ge=0)] | UnsetType = UNSET


class AnalysisNbcOverlap(Document, kw_only=True):
    """mpi-overlap analysis of the nbc-overlap benchmark, version 1: Written by
    mpi_overlap.analysis.nbc_overlap: per collective, size and MPI_Test variant, the OSU
    overlap % (mean over ranks, per-rank min/max), the IMB overlap % (rank with the largest
    t_ovrl), the profiler's min/max bounds of the variant's region, the compute slowdown;
    consistency checks, a one-line finding and the headline figures."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["nbc-overlap"]
    tests: Annotated[int, Meta(ge=0)]
    largest_bytes: int | UnsetType | None = UNSET
    bounds: AnalysisNbcOverlapBounds
    cases: list[AnalysisNbcOverlapCasesItem]
    checks: AnalysisNbcOverlapChecks
    problems: list[str]
    finding: Annotated[str, Meta(pattern="^[^\\n]*$", min_length=1)]
    figures: Figures


PerRank = Annotated[list[float | None], Meta(min_length=1)]


class Variant(Document, kw_only=True, forbid_unknown_fields=True):
    tests: Annotated[int, Meta(ge=0)]
    region: str
    t_overall_us: PerRank
    t_compute_us: PerRank
    t_test_us: PerRank
    t_wait_us: PerRank
    t_post_us: PerRank
    t_nonoverlap_us: Annotated[
        PerRank, Meta(description="median over iterations of t_overall - (t_compute - t_test)")
    ]
    t_nonoverlap_q25_us: PerRank
    t_nonoverlap_q75_us: PerRank
    t_overall_p90_us: Annotated[
        PerRank | UnsetType, Meta(description="90th percentile over iterations of t_overall")
    ] = UNSET
    t_overall_p99_us: PerRank | UnsetType = UNSET


class Case(Document, kw_only=True, forbid_unknown_fields=True):
    collective: str
    size: Annotated[int, Meta(ge=0)]
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    iterations: Annotated[int, Meta(ge=1)]
    t_pure_max_us: float | None
    work_units: Annotated[int, Meta(ge=0)]
    work_us_nominal: float | None
    t_pure_us: PerRank
    t_cpu_us: PerRank
    t_pure_ci_low_us: Annotated[
        PerRank | UnsetType,
        Meta(
            description=("distribution-free 95 % interval of the median t_pure (order statistics)")
        ),
    ] = UNSET
    t_pure_ci_high_us: PerRank | UnsetType = UNSET
    t_pure_p90_us: Annotated[
        PerRank | UnsetType, Meta(description="90th percentile over iterations of t_pure")
    ] = UNSET
    t_pure_p99_us: PerRank | UnsetType = UNSET
    t_pure_after_us: Annotated[
        PerRank | UnsetType,
        Meta(description="median t_pure of the pure loop run again after the overlapped loops"),
    ] = UNSET
    t_pure_after_ci_low_us: PerRank | UnsetType = UNSET
    t_pure_after_ci_high_us: PerRank | UnsetType = UNSET
    invalid_elements: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "with --validate: elements (bytes for the data-movement collectives) "
                "that differed from the expected data, summed over the loops and "
                "ranks"
            )
        ),
    ] = UNSET
    variants: list[Variant]


class BenchNbcOverlap(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the nbc-overlap benchmark (non-blocking collective overlap): Per collective
    and size: every rank's median t_pure (post + MPI_Wait; measured before and again after
    the overlapped loops), t_cpu (the calibrated work alone) and, per MPI_Test variant, the
    medians of the overlapped loop (post, work in chunks with MPI_Test after each when tests
    > 0, MPI_Wait). Arrays are indexed by rank. Method: docs/benchmarks.md, section
    nbc-overlap."""

    profiler_loaded: bool
    region_format: str
    ranks: Annotated[int, Meta(ge=2)]
    tests: Annotated[int, Meta(ge=0)]
    work_units_per_us: float | None
    cases_planned: Annotated[int, Meta(ge=0)]
    cases: list[Case]


MODELS: dict[str, Any] = {
    "analysis-nbc-overlap-v1": AnalysisNbcOverlap,
    "bench-nbc-overlap-v1": BenchNbcOverlap,
}
register(MODELS)
