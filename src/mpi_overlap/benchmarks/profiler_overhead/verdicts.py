"""The verdicts of the profiler-overhead benchmark: a whole interval against a target, so
that noise never reads as a pass (analysis.py, app_cost.py)."""

from __future__ import annotations

from dataclasses import dataclass

CI_LEVEL = 0.95

MEETS = "meets target"
MISSES = "misses target"
SPANS = "inconclusive (CI spans the target)"
TOO_FEW = "inconclusive (fewer than 2 pairs)"
NO_DATA = "no data"
NO_TARGET = "no target"
VERDICTS = (MEETS, MISSES, SPANS, TOO_FEW, NO_DATA, NO_TARGET)


@dataclass(frozen=True)
class Target:
    op: str  # ">=" (a rate: the ratio must stay above) or "<=" (a time: must stay below)
    value: float

    def text(self) -> str:
        return f"{self.op} {self.value:g}"


def verdict(target: Target | None, n: int, low: float | None, high: float | None) -> str:
    if target is None:
        return NO_TARGET
    if n == 0:
        return NO_DATA
    if n < 2 or low is None or high is None:
        return TOO_FEW
    if target.op == ">=":
        if low >= target.value:
            return MEETS
        if high < target.value:
            return MISSES
        return SPANS
    if high <= target.value:
        return MEETS
    if low > target.value:
        return MISSES
    return SPANS


