"""What a profile takes from the toolchain's own benchmark runs and the advice rules that
evidence feeds (`Evidence`), and the benchmarks that give it (`sources`).

The profile lies below the benchmarks, so it names and imports none of them: a benchmark
package declares its `Evidence` in its spec, and benchmarks/registry.py hands the specs
that declare one in (`provide`) when the benchmarks are imported, as every command does
before it profiles or reports (issue 37 item 2). profile/run/toolchain_evidence.py reads
each source's evidence, profile/analysis/advice.py runs each source's rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Evidence:
    """What a profile takes from a benchmark and the advice rule it feeds, declared by its
    package so that the profile names no benchmark (profile/run/toolchain_evidence.py
    reads it, profile/analysis/advice.py runs the rule). `key`: the key of the profile's
    result.json and analysis.json that holds it; `read`: "module.function" of the package,
    function(toolchain, run_dir, analysis) -> what the profile keeps of the newest complete
    run of this benchmark for the profile's toolchain (run_dir and analysis None without
    one); `rule`: the advice rule's name (its items' "rule"); `advise`: "module.function",
    function(analysis, docs, threshold, evidence) -> its advice items, from the profile's
    analysis document, the ranks' digests, the smallest bound worth advice and what `read`
    gave (analysis[key])."""

    key: str
    rule: str
    read: str = "evidence.evidence"
    advise: str = "advice.advise"


class EvidenceSource(Protocol):
    """A benchmark that gives the profile evidence, as the profile sees it (a
    BenchmarkSpec with `evidence` set is one): its name (its runs' directories), its
    Evidence, and its package's functions by "module.function"."""

    @property
    def name(self) -> str: ...

    @property
    def evidence(self) -> Evidence | None: ...

    def function(self, name: str) -> Callable[..., Any]: ...


_sources: Callable[[], Sequence[EvidenceSource]] | None = None


def provide(sources: Callable[[], Sequence[EvidenceSource]]) -> None:
    """Hand in the benchmarks that give evidence, in their order (benchmarks/registry.py,
    on its import)."""
    global _sources
    _sources = sources


def sources() -> Sequence[EvidenceSource]:
    """The benchmarks that give the profile evidence, each with its Evidence."""
    if _sources is None:
        raise RuntimeError("the profile was handed no benchmarks' evidence: import "
                           "mpi_overlap.benchmarks before profiling or analysing a profile")
    return _sources()


def declared(source: EvidenceSource) -> Evidence:
    """The source's Evidence (every source declares one)."""
    assert source.evidence is not None, f"{source.name} declares no evidence"
    return source.evidence
