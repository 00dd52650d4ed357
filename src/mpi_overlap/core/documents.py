"""Every document checked by the name its kind gives (core/schema.py checks a name by its
typed model): what the runner, the run directory read back
and the calibration's records check, below the benchmarks that know every kind of run.

A typed document's model is registered by the module that declares it, on import; the
loader that imports those modules (benchmarks/documents.load: the profiler's models and
the benchmarks') lies above and is handed in (`provide`, by benchmarks/registry.py on
import, which every command does first) and called once, on the first check (issue 37
item 2).

Benchmark result documents have a common envelope (result-v1) whose `results` are
validated by the benchmark's own schema (bench-<name>-v1); analysis documents by
analysis-<name>-v1. A profile run's result is the profile-run-v1 document that collects
every rank's profile-rank-v1 document.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import schema

_loader: Callable[[], None] | None = None


def provide(loader: Callable[[], None]) -> None:
    """Hand in what imports the modules that register typed documents (called once)."""
    global _loader
    _loader = loader


def _load() -> None:
    if _loader is None:
        raise RuntimeError("the document checks were handed no models: import "
                           "mpi_overlap.benchmarks before checking a document")
    _loader()


def has_schema(name: str) -> bool:
    _load()
    return schema.has_schema(name)


def load_schema(name: str) -> dict[str, Any]:
    """The JSON schema of `name`, generated from its model."""
    _load()
    return schema.load_schema(name)


def errors_against(doc: Any, name: str) -> list[str]:
    _load()
    return schema.errors_against(doc, name)


def result_errors(doc: dict[str, Any]) -> list[str]:
    if doc.get("schema") == "mpi-overlap/profile-run":
        ranks = doc.get("ranks")
        if not isinstance(ranks, list) and hasattr(ranks, "check"):
            # rank documents read one at a time (result_file.RankSequence; not
            # imported: this module is below it): each is checked as it is read, the rest
            # of the document now
            ranks.check = lambda d: errors_against(d, "profile-rank-v1")
            return errors_against(dict(doc, ranks=[]), "profile-run-v1")
        return errors_against(doc, "profile-run-v1")
    kind = str(doc.get("schema") or "").removeprefix("mpi-overlap/")
    if kind.endswith("-run") and has_schema(f"{kind}-v1"):
        # the run document of a benchmark of many launches (profiler-overhead, the
        # studies): its schema beside it, named after it
        return errors_against(doc, f"{kind}-v1")
    errors = errors_against(doc, "result-v1")
    bench = doc.get("benchmark")
    if isinstance(bench, str) and has_schema(f"bench-{bench}-v1"):
        errors += ["results/" + e for e in errors_against(doc.get("results"), f"bench-{bench}-v1")]
    elif isinstance(bench, str):
        errors.append(f"benchmark: no schema for results of '{bench}'")
    return errors


def analysis_errors(doc: dict[str, Any]) -> list[str]:
    bench = doc.get("benchmark")
    return errors_against(doc, f"analysis-{bench}-v1")


def run_errors(doc: dict[str, Any]) -> list[str]:
    return errors_against(doc, "run-v1")


def report_errors(doc: dict[str, Any]) -> list[str]:
    """report.json (any command's report: a benchmark's, a suite's, characterize's)."""
    return errors_against(doc, "report-v1")
