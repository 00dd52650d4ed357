"""Every document by its schema name, checked by its model (core/schema.py): the modules
that declare the typed documents are loaded here, on first use, so that whoever checks a
document by name (the runner, a run directory read back, the tests) finds its model. The
benchmarks' registry is the layer that knows every kind of run, the profiler's included.

Benchmark result documents have a common envelope (result-v1) whose `results` are
validated by the benchmark's own schema (bench-<name>-v1); analysis documents by
analysis-<name>-v1. A profile run's result is the profile-run-v1 document that collects
every rank's profile-rank-v1 document.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ..core import schema


@cache
def load() -> None:
    """Import the modules that declare typed documents (each registers its models)."""
    from ..analysis import documents as _figures  # noqa: F401  figures-v1
    from ..calibration import documents as _coll_failures  # noqa: F401  coll-failures-v1
    from ..profile.analysis import document as _profile_analysis  # noqa: F401
    from ..profile.documents import models as _profile  # noqa: F401  profile-rank/-stats/-run
    from ..report import documents as _report  # noqa: F401  report-v1
    from ..run import documents as _run  # noqa: F401  run-v1, result-v1, host-load, threads
    from .discovery import specs

    for spec in specs():  # each package's bench-, analysis- and run documents
        spec.module("documents")


def has_schema(name: str) -> bool:
    load()
    return schema.has_schema(name)


def load_schema(name: str) -> dict[str, Any]:
    """The JSON schema of `name`: generated from its model, or (not yet typed) its file."""
    load()
    return schema.load_schema(name)


def errors_against(doc: Any, name: str) -> list[str]:
    load()
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
