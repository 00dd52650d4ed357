"""The overhead package's documents as typed models (core/schema.py): analysis-overhead-v1,
bench-overhead-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from ...analysis.documents import Figures
from ...core.schema import Document, register
from ...run.documents import Stats


class AnalysisOverheadMethod(Document, kw_only=True, forbid_unknown_fields=True):
    name: Literal["hinge-fit"]
    bootstrap: Annotated[int, Meta(ge=0, description="bootstrap replicates per size")]
    seed: Annotated[
        int,
        Meta(
            description=(
                "seed of the bootstrap; each (direction, size) derives its own stream from it"
            )
        ),
    ]
    ci: Annotated[float, Meta(gt=0, lt=1)]
    limits: Annotated[
        dict[str, float], Meta(description="the named thresholds of analysis/knee.py in force")
    ]


class Estimate(Document, kw_only=True, forbid_unknown_fields=True):
    """Point estimate from the fit of all samples and its 95 % percentile-bootstrap interval;
    null where not computable or withheld (verdict no-knee)."""

    value: float | None
    ci95_low: float | None
    ci95_high: float | None


class Fit(Document, kw_only=True, forbid_unknown_fields=True):
    n_steps: Annotated[int, Meta(ge=0, description="steps with iter_t samples and a work_t")]
    n_samples: Annotated[
        int, Meta(ge=0, description="iter_t samples used by the fit (after outliers)")
    ]
    n_outliers: Annotated[
        int, Meta(ge=0, description="iter_t samples dropped as high outliers of their step")
    ]
    origin_us: Annotated[
        float,
        Meta(
            description=(
                "fixed loop cost without work (barrier, timer) in both work_t and "
                "iter_t; availability = (knee - origin) / (base - origin)"
            )
        ),
    ]
    rel_noise: Annotated[float | None, Meta(description="robust sigma of the residuals / base_t")]
    rss_hinge: Annotated[
        float | None, Meta(description="residual sum of squares of the hinge, µs^2")
    ]
    rss_line: Annotated[
        float | None, Meta(description="residual sum of squares of one straight line, µs^2")
    ]
    line_slope: Annotated[float | None, Meta(description="slope of that straight line")]


class OverheadSize(Document, kw_only=True, forbid_unknown_fields=True):
    schema_extra: ClassVar[dict[str, Any]] = {
        "allOf": [
            {
                "if": {"properties": {"verdict": {"const": "ok"}}},
                "then": {"properties": {"reason": {"type": "null"}}},
                "else": {"properties": {"reason": {"type": "string"}}},
            }
        ],
    }

    size: Annotated[int, Meta(ge=0, description="message size in bytes")]
    verdict: Literal["ok", "noisy", "no-knee", "odd-shape", "incomplete"]
    reason: Annotated[
        str | None,
        Meta(description="one line with the numbers; null exactly when the verdict is ok"),
    ]
    base_t_us: Annotated[
        Estimate,
        Meta(description="b: flat level of iter_t (transfer time plus the loop's fixed cost)"),
    ]
    knee_work_us: Annotated[
        Estimate, Meta(description="k: the largest work_t still hidden behind the message")
    ]
    overhead_us: Annotated[Estimate, Meta(description="b - k: iter_t - work_t just after the knee")]
    availability_pct: Annotated[
        Estimate, Meta(description="100 (k - origin) / (b - origin), clipped to [0, 100]")
    ]
    slope: Annotated[
        Estimate, Meta(description="s: growth of iter_t per µs of work after the knee")
    ]
    compute_slowdown_pct: Annotated[
        Estimate,
        Meta(
            description=("100 (s - 1): CPU taken from the computation while a message is in flight")
        ),
    ]
    classic: Annotated[
        dict[str, Any] | None,
        Meta(description="the result's classic object (original method), verbatim"),
    ]
    fit: Fit

    def __post_init__(self) -> None:
        if (self.verdict == "ok") != (self.reason is None):
            raise ValueError("`reason` is null exactly when the verdict is ok")


class AnalysisOverheadDirectionsItem(Document, kw_only=True, forbid_unknown_fields=True):
    direction: Literal["send", "recv"]
    sizes: list[OverheadSize]


class AnalysisOverhead(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap analysis of the overhead benchmark, version 1: Written by
    mpi_overlap.analysis.overhead.analyze_overhead from a result.json of the overhead
    benchmark. Method: docs/benchmarks.md, section overhead (hinge fit of iter_t against
    work_t over all samples, percentile-bootstrap 95 % intervals, verdicts)."""

    figures: Figures | UnsetType = UNSET
    finding: Annotated[str, Meta(min_length=1)] | UnsetType = UNSET
    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["overhead"]
    method: AnalysisOverheadMethod
    directions: list[AnalysisOverheadDirectionsItem]


class Step(Document, kw_only=True, forbid_unknown_fields=True):
    """One work value. Each sample is the mean time of one timed block of 'iterations' loop
    iterations. iter: Barrier; post; work; Wait. work: Barrier; work (no message). Samples
    of the two loops are interleaved."""

    work_units: Annotated[int, Meta(ge=0)]
    work_us_nominal: Annotated[float, Meta(ge=0, description="work_units / units_per_us")]
    iterations: Annotated[int, Meta(ge=1)]
    iter_t_us: Stats
    work_t_us: Stats
    iter_samples_us: list[float]
    work_samples_us: list[float]


class Classic(Document, kw_only=True, forbid_unknown_fields=True):
    """The original mpi_overhead computation with its manual thresholds, from step medians:
    base_t is the running average of iter_t while iter_t < bthresh*base_t; the measurement
    point is the first step with iter_t > thresh*base_t."""

    found: Annotated[bool, Meta(description="false when iter_t never exceeded thresh*base_t")]
    base_t_us: float | None
    base_steps: Annotated[int, Meta(ge=0)]
    stop_step: int | None
    iter_t_us: float | None
    work_t_us: float | None
    overhead_us: float | None
    availability_pct: float | None


class BenchOverheadSize(Document, kw_only=True, forbid_unknown_fields=True):
    size: Annotated[int, Meta(ge=0, description="message size in bytes")]
    complete: Annotated[
        bool,
        Meta(
            description=(
                "false when the sweep hit --max-steps or the time budget before "
                "iter_t passed extend*base_t"
            )
        ),
    ]
    stop_reason: str | UnsetType = UNSET
    steps: list[Step]
    classic: Classic


class BenchOverheadDirectionsItem(Document, kw_only=True, forbid_unknown_fields=True):
    direction: Literal["send", "recv"]
    sizes: list[BenchOverheadSize]


class BenchOverhead(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the overhead benchmark (host overhead and application availability,
    post-work-wait)"""

    directions: list[BenchOverheadDirectionsItem]


MODELS: dict[str, Any] = {
    "analysis-overhead-v1": AnalysisOverhead,
    "bench-overhead-v1": BenchOverhead,
}
register(MODELS)
