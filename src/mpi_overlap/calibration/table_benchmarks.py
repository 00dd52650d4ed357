"""The two benchmarks a calibration runs, as the calibration sees them: the one of role
P2P_TABLE (the table's point-to-point times and verdict) and the one of role
COLLECTIVE_TABLE (its collectives' series), each a run kind to launch and the program's
arguments for calibrate's values ("sizes", "budget").

The calibration lies below the benchmarks, so it names and imports none of them: the
benchmark packages declare their role (benchmarks/<name>/, `BenchmarkSpec.role`) and
benchmarks/registry.py hands the lookup in (`provide`) when the benchmarks are imported,
as every command does before it calibrates (issue 37 item 2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..run.run_kind import Benchmark

# The roles a benchmark can have for the calibration (BenchmarkSpec.role).
P2P_TABLE, COLLECTIVE_TABLE = "p2p-table", "collective-table"


class TableBenchmark(Protocol):
    """What the calibration uses of the benchmark of a role (a BenchmarkSpec is one)."""

    @property
    def benchmark(self) -> Benchmark: ...

    @property
    def name(self) -> str: ...

    def to_native(self, values: dict[str, Any], *, quick: bool, verbose: bool) -> list[str]:
        ...


_lookup: Callable[[str], TableBenchmark] | None = None


def provide(lookup: Callable[[str], TableBenchmark]) -> None:
    """Hand in the benchmark of each role (benchmarks/registry.py, on its import)."""
    global _lookup
    _lookup = lookup


def with_role(role: str) -> TableBenchmark:
    """The benchmark the calibration runs for `role` (P2P_TABLE or COLLECTIVE_TABLE)."""
    if _lookup is None:
        raise RuntimeError("the calibration was handed no benchmarks: import "
                           "mpi_overlap.benchmarks before calibrating")
    return _lookup(role)
