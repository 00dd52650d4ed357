"""One entry per benchmark: its native program, its analysis, and its run limits.

Adding a benchmark = a program in native/bench/, a schema bench-<name>-v1, an analysis
function, and an entry here; the runner, the CLI and the report pick it up by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UserError


@dataclass(frozen=True)
class Benchmark:
    name: str
    program: str  # executable in <build>/bench/
    title: str
    min_ranks: int
    analyze: Callable[[dict[str, Any]], dict[str, Any]] | None
    default_timeout_s: float
    quick_timeout_s: float


def _analyze_overhead(result: dict[str, Any]) -> dict[str, Any]:
    from ..analysis.overhead import analyze_overhead

    return analyze_overhead(result)


BENCHMARKS: dict[str, Benchmark] = {
    "overhead": Benchmark(
        name="overhead",
        program="mo_overhead",
        title="Host processor overhead and application availability (post-work-wait)",
        min_ranks=2,
        analyze=_analyze_overhead,
        default_timeout_s=3600.0,
        quick_timeout_s=900.0,
    ),
}


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UserError(f"unknown benchmark '{name}' (known: {', '.join(BENCHMARKS)})") from None
