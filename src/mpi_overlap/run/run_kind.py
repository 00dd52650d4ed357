"""What the run layer needs to know of a kind of run (a benchmark, the profile): its native
program, its run limits, its analysis and its launches (`Benchmark`, `Launch`). The run
layer defines it and the folders above fill it in: each benchmark package declares its
entry (benchmarks/spec.py), the profile its own (profile/run_entry.py), so that runner.py,
multilaunch.py and paired_launch.py run any of them without looking one up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Launch:
    """One launch of a benchmark that needs several (a setting fixed at MPI_Init: the
    thread level, an environment variable); multilaunch.py merges their results."""

    name: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    ranks: int | None = None  # None: the run's -n


@dataclass(frozen=True)
class Benchmark:
    name: str
    program: str  # executable in <build>/bench/
    title: str
    min_ranks: int
    # (result.json, run directory) -> analysis.json; the directory holds the rank
    # profiles of profiled benchmarks.
    analyze: Callable[[dict[str, Any], Path], dict[str, Any]] | None
    default_timeout_s: float
    quick_timeout_s: float
    profiled: bool = False  # runs under libmpi_overlap (its regions name the cases)
    # The suite command that runs it (`bench <suite>-suite`), and its place in that suite's
    # order; None: run on its own only.
    suite: str | None = None
    suite_order: int = 0
    # (ranks, quick) -> the launches of one run; None: one launch of `program`.
    launches: Callable[[int, bool], tuple[Launch, ...]] | None = None


def lazy_analysis(module: str, function: str, *, with_run_dir: bool = False,
                  ) -> Callable[[dict[str, Any], Path], dict[str, Any]]:
    """`module.function` as a registry entry's `analyze`, imported on first use (the
    analyses pull in numpy/scipy, which commands that only list benchmarks don't need).
    with_run_dir: the analysis also reads the rank profiles in the run directory."""
    def analyze(result: dict[str, Any], run_dir: Path) -> dict[str, Any]:
        fn = getattr(import_module(module), function)
        return fn(result, run_dir) if with_run_dir else fn(result)

    return analyze
