"""Every kind of run by name: the benchmarks, each a package of its own
(benchmarks/<name>/, found by discovery.py; docs/architecture.md, "Add a benchmark"),
and the profiler's runs (profile/run/entry.py). The CLI and the report pick every one up
by name. On import it hands the folders below what the specs declare for them, which
they cannot import: the calibration the benchmarks of the table's roles
(calibration/table_benchmarks.py), the profile the evidence and advice rules
(profile/analysis/evidence.py), the document checks the typed models
(core/documents.py).
"""

from __future__ import annotations

from ..calibration import table_benchmarks
from ..core import documents as document_checks
from ..core.errors import UserError
from ..profile.analysis import evidence
from ..profile.run.entry import PROFILE
from . import documents
from .discovery import evidence_specs, spec_with_role, specs
from .spec import Benchmark

# Every kind of run by name: the profiler's, then the benchmarks' (discovery.py).
BENCHMARKS: dict[str, Benchmark] = {PROFILE.name: PROFILE,
                                    **{s.name: s.benchmark for s in specs()}}


# Handed in once, before any command runs: every command imports this package first.
table_benchmarks.provide(spec_with_role)
evidence.provide(evidence_specs)
document_checks.provide(documents.load)


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UserError(f"unknown benchmark '{name}' (known: {', '.join(BENCHMARKS)})") from None
