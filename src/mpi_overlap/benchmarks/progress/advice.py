"""The advice rule this benchmark feeds (spec.Evidence, rule "progress"; run by
profile/analysis/advice.py with the others; docs/profiler.md, "Advice"): transfers posted by
a non-blocking call and completed by a Wait-family call with computation between. The
bounds leave max − min of their transfer time undecided, which only the MPI's progress
between calls decides (Shet et al. §2.2: min counts the computation only when the library
certainly could not have moved the data then). Calling MPI_Test in that computation, or
the MPI's asynchronous progress, can hide at most Σ(max − min). A pair completed by a
Test-family call, or most of whose transfers saw one between post and completion (the
profile's "polled"), already polls: no advice. The text quotes this toolchain's own run of
this benchmark (evidence.py), or says how to measure it. Pure."""

from __future__ import annotations

from typing import Any

from ...core.formatting import fmt_time
from ...profile.analysis.advice_pairs import WAITS, known_pairs


def progress_hint(library_version: str | None) -> str:
    """How this MPI's asynchronous progress is switched on, from MPI_Get_library_version."""
    v = library_version or ""
    if "Intel" in v:
        return "I_MPI_ASYNC_PROGRESS=1"
    if "MPICH" in v:
        return "MPICH_ASYNC_PROGRESS=1, a progress thread per rank that needs a core of its own"
    if "Open MPI" in v:
        return ("Open MPI has no general switch: what moves data between calls depends on "
                "its transport")
    return "its asynchronous progress setting"


def progress_words(progress: dict[str, Any] | None) -> str:
    """What is known of this MPI's progress between calls: its own `bench progress` run
    (evidence.py), or how to measure it."""
    progress = progress or {}
    if progress.get("run"):
        return (f" Measured for this MPI (bench progress, {progress['run']}): "
                f"{progress['finding']}.")
    return (" Whether this MPI moves data between its calls was not measured here: "
            f"`mpi-overlap bench progress --mpi {progress.get('toolchain') or 'NAME'}` "
            "measures it, and later "
            "profiles in the same --out directory quote it.")


def advise(a: dict[str, Any], docs: list[dict[str, Any]], threshold: float,
           evidence: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The rule's items, one per pair it holds for, in the pairs' order (named by the
    spec's Evidence.rule where the profile's advice runs them)."""
    version = next((d.get("mpi_library_version") for d in docs), None)
    hint, known = progress_hint(version), progress_words(evidence)
    out: list[dict[str, Any]] = []
    for p in known_pairs(a["rankings"].get("pairs") or []):
        hi, lo = p.hi, p.lo
        if p.one_call or p.end_fn not in WAITS or hi - lo < threshold or p.polled:
            continue
        out.append({"sites": p.sites, "evidence": p.evidence,
                    "bound_s": hi - lo, "text": (
                        f"Transfers {p.where} had computation between them that could "
                        f"hide up to {fmt_time(hi)}, but "
                        + (f"only {fmt_time(lo)} of it is certain" if lo > 0
                           else "none of it is certain")
                        + ": the rest depends on whether the MPI "
                        "moves their data while no MPI call is made. Call MPI_Test on "
                        f"these requests in the computation between {p.post} and {p.end}, "
                        f"or enable the MPI's asynchronous progress: {hint}. At most "
                        f"{fmt_time(hi - lo)} can be hidden." + known)})
    return out
