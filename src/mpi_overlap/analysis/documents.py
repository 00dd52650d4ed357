"""The headline figures (figures-v1) as a typed model (core/schema.py): the list that
analysis.json and report.json carry; its JSON schema generated from it. Also the cost
from pairs of blocks (block_pairs.py), which the profiler-overhead and study analyses
both carry."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ..core.schema import Document, register


class Figure(Document, kw_only=True, forbid_unknown_fields=True):
    name: Annotated[str, Meta(pattern="^[a-z0-9_]+$")]
    label: Annotated[str, Meta(min_length=1)]
    value: float | None
    unit: str
    kind: Literal["overlap", "cost", "info"]
    measured_value: Annotated[
        float | UnsetType | None,
        Meta(
            description=("the number a run whose guard withheld it measured (value is then null)")
        ),
    ] = UNSET
    withheld: Annotated[
        Literal["oversubscribed"] | UnsetType,
        Meta(description="why value is not a finding (run_guard.py)"),
    ] = UNSET
    ci95: Annotated[
        Annotated[list[float | None], Meta(min_length=2, max_length=2)] | UnsetType,
        Meta(description="the value's 95 % interval, low and high, in its unit"),
    ] = UNSET
    pairs: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(description="pairs (with and without; of what: paired) the value rests on"),
    ] = UNSET
    paired: Annotated[
        Literal["blocks"] | UnsetType,
        Meta(
            description=(
                "where given: the pairs are neighbouring blocks of iterations inside"
                " launches (analysis/block_pairs.py); otherwise pairs of launches"
            )
        ),
    ] = UNSET
    disturbed: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(description="of those pairs, how many had a disturbed launch"),
    ] = UNSET
    resolution: Annotated[
        Annotated[float, Meta(gt=0)] | UnsetType,
        Meta(
            description=(
                "where given: the value is a finding when its interval reaches at most this"
                " far either side of it, in its unit (otherwise: when the interval is no"
                " wider than the value's distance from no effect)"
            )
        ),
    ] = UNSET


Figures = Annotated[
    list[Figure],
    Meta(
        description=(
            "mpi-overlap headline figures, version 1: The few numbers of an "
            "analysis that other views compare (the --env-matrix table, the "
            "characterize summary card). Written by "
            "mpi_overlap.analysis.figures.figure; referenced by the analysis "
            "schemas as figures-v1.schema.json."
        )
    ),
]


# A launch timed in blocks (--profiler-ab): each whole block's time, in order.
BlockSeconds = Annotated[
    list[Annotated[float, Meta(gt=0)]],
    Meta(
        description=(
            "each whole block's time, s: the sum of its iterations' times (each the"
            " largest over the ranks), in order; blocks 1, 2, 5, 6, 9, ... had the"
            " profiler paused"
        )
    ),
]


class BlockPairCost(Document, kw_only=True, forbid_unknown_fields=True):
    """analysis/block_pairs.pair_cost: the cost, in % of the paused blocks' time"""

    pairs: Annotated[int, Meta(ge=0)]
    overhead_pct: float | None
    ci95_low_pct: float | None
    ci95_high_pct: float | None
    rank_estimate_pct: float | None
    rank_ci95_low_pct: float | None
    rank_ci95_high_pct: float | None


MODELS: dict[str, Any] = {
    "figures-v1": Figures,
}
register(MODELS)
