"""Which modules declare the typed documents (`load`: the run layer's, analysis/ figures,
report/, calibration/, the profile's, each benchmark package's documents.py), imported on
first use, so that whoever checks a document by name (core/documents.py: the runner, a
run directory read back, the tests) finds its model. The benchmarks' registry is the
layer that knows every kind of run, the profiler's included; it hands `load` to the
checks below it (registry.py). The checks themselves are core/documents.py's.
"""

from __future__ import annotations

from functools import cache


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
