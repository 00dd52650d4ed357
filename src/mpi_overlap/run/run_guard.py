"""The run-level verdict: what the machine says about a run, beside what its result says.

A benchmark's analysis judges its own samples; it cannot see that its ranks shared their
cores with each other's progress threads (thread_census.py) or with other processes
(machine_load.py). Both are in run.json; this module turns them into one verdict:

- `oversubscribed`: more active threads than cores the ranks may use (measured while the
  job ran; a job too short to be measured, whose threads the census never saw running,
  or that one look found not oversubscribed, is judged by what its environment predicts:
  one thread per rank, two where an asynchronous-progress variable is set). Every time it
  measured is then the scheduler's doing: its overlap and cost figures are withheld from
  every finding (kept as `measured_value`), a profile gives no advice, and the finding
  says what to change;
- `disturbed`: other processes or the hypervisor took more than machine_load's share of
  the CPU: the figures stand, marked;
- `ok` otherwise.

`judge` writes run.json's "guard"; `apply` gives the analysis a run is loaded with that
verdict (the analysis.json on disk stays what the result alone says). It is the one place
that decides what a run may claim: every command's terminal lines, report.html,
report.json and the summary card read the analysis it gives, and ask `withheld` and
`disturbed_note` rather than the guard itself. A profile's analysis (a list of
findings led by its headline, and advice) gets the same treatment as a benchmark's one
finding and figures: oversubscribed, its findings are the guard's sentence alone, with no
headline figure and no advice; disturbed, its headline is marked.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..core.machine_load import describe

# Variables that start a progress thread per rank (MPICH, and MPICH-derived Intel MPI).
ASYNC_PROGRESS_VARS = ("MPICH_ASYNC_PROGRESS", "MPIR_CVAR_ASYNC_PROGRESS", "I_MPI_ASYNC_PROGRESS")
# Looks of the census (thread_census.py, one a second) that can clear a run of
# oversubscription; fewer clear nothing, though one look can convict.
MIN_INTERVALS = 2
# Figures that are times or overlaps measured on the cores: not findings when the threads
# had to share them. "info" figures (a detected limit, a size) are kept.
WITHHELD_KINDS = ("overlap", "cost")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "yes", "true", "on", "enable", "enabled")


def _envs(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The environment settings of the run's launch(es)."""
    base = dict(meta.get("env_overrides") or {})
    launches = meta.get("launches") or []
    return [{**base, **(launch.get("env") or {})} for launch in launches] or [base]


def expected_active_threads(meta: dict[str, Any]) -> tuple[int, str]:
    """(active threads the run's environment predicts, why): one per rank, plus a progress
    thread per rank where a variable of ASYNC_PROGRESS_VARS is set."""
    ranks = int(meta.get("ranks") or 1)
    for env in _envs(meta):
        for var in ASYNC_PROGRESS_VARS:
            if _truthy(env.get(var, "")):
                return 2 * ranks, f"{ranks} ranks with {var}={env[var]}: a progress thread each"
    return ranks, f"{ranks} ranks"


def _bound_to_core(command: list[str]) -> bool:
    """Whether the launch command binds each rank to one core (toolchains.bind_args)."""
    return any(a in ("-bind-to", "--bind-to") and b == "core"
               for a, b in itertools.pairwise(command))


def oversubscription(meta: dict[str, Any]) -> dict[str, Any] | None:
    """Why the run was oversubscribed and what to change, or None when it was not (or
    nothing says either way)."""
    census = meta.get("threads") or {}
    expected, why = expected_active_threads(meta)
    ranks = int(meta.get("ranks") or 1)
    # A census that saw none of the job's threads running (it started as the job ended)
    # measured nothing, and one look (a job of about a second) that saw no
    # oversubscription proves little: a progress thread that spins beside its rank was
    # missed by such a look (MPICH_ASYNC_PROGRESS=1, 2 ranks on 2 cores, 1 interval, "2
    # active threads"). The environment's prediction judges those runs instead.
    seen = (census.get("active_threads_max") or 0) > 0
    if census.get("intervals") and seen and (census.get("oversubscribed")
                                             or census["intervals"] >= MIN_INTERVALS):
        if not census.get("oversubscribed"):
            return None
        cores = len(census.get("cores_allowed") or []) or census.get("cores_usable") or 0
        active = census.get("active_threads_median") or 0
        procs = census.get("processes") or []
        per = ", ".join(f"{p['name']} {p['active_threads']} on {p['cores']}" for p in procs[:4])
        reason = (f"oversubscribed: {active:g} threads ran on the {cores} core"
                  f"{'s' if cores != 1 else ''} the ranks may use (per process, threads on "
                  f"cores: {per}; {why})")
        basis = "measured"
    elif census.get("cores_usable"):
        # Not watched long enough (or not seen running): what the environment and the
        # binding predict.
        cores, active, basis = census["cores_usable"], expected, "expected"
        if _bound_to_core(meta.get("command") or []) and expected > ranks:
            cores = min(cores, ranks)
            reason = (f"oversubscribed: {expected} threads expected ({why}) while the "
                      "launcher binds each rank to one core")
        elif active > cores:
            reason = (f"oversubscribed: {active} active threads expected ({why}) on {cores} "
                      "usable cores")
        else:
            return None
    else:
        return None
    change = []
    if expected > ranks:
        change.append("leave the asynchronous-progress variable unset (or give each "
                      "progress thread a core of its own)")
    if ranks > cores:
        change.append(f"run at most {cores} ranks")
    change.append(f"run on a machine or allocation with at least {int(max(active, expected))} "
                  "cores for the ranks")
    return {"basis": basis, "active_threads": active, "cores": cores,
            "expected_active_threads": expected, "expected_why": why,
            "reason": reason, "change": "; ".join(change)}


def judge(meta: dict[str, Any]) -> dict[str, Any]:
    """run.json's "guard": verdict ok / disturbed / oversubscribed, with its reasons."""
    over = oversubscription(meta)
    disturbed = describe(meta.get("host_load"))
    verdict = "oversubscribed" if over else "disturbed" if disturbed else "ok"
    return {"verdict": verdict, "oversubscribed": over, "disturbed": disturbed}


def guard_of(meta: dict[str, Any]) -> dict[str, Any]:
    """run.json's guard, or the verdict judged now for a run that predates it."""
    return meta.get("guard") or judge(meta)


def withheld_sentence(over: dict[str, Any]) -> str:
    """What an oversubscribed run says instead of its findings."""
    return (f"{over['reason']}: no overlap or cost figure of this run is a finding; to "
            f"measure, {over['change']}")


DISTURBED = "disturbed run (other processes took CPU time)"


def withheld(meta: dict[str, Any]) -> str | None:
    """Why none of a run's overlap or cost figures may be shown as a finding (an
    oversubscribed run: the guard's sentence), or None when they may."""
    over = guard_of(meta).get("oversubscribed")
    return withheld_sentence(over) if over else None


def disturbed_note(meta: dict[str, Any]) -> str | None:
    """The mark a disturbed run's figures carry, or None when they need none."""
    guard = guard_of(meta)
    return DISTURBED if guard.get("disturbed") and not guard.get("oversubscribed") else None


def _profile_view(out: dict[str, Any], guard: dict[str, Any]) -> None:
    """A list of findings (a profile's, led by its headline, with its advice) as the
    guard lets it be shown; a profile's also says which, for its tables
    (profile/report/profile_table.py)."""
    over = guard.get("oversubscribed")
    headline = out.get("headline")
    profile = isinstance(headline, dict)
    if over:
        sentence = withheld_sentence(over)
        out["findings"] = [sentence]
        if profile:
            out["withheld"] = "oversubscribed"
            out["headline"] = {"kind": "withheld", "text": sentence, "idle_ranks": []}
            out["advice"] = []
        return
    if profile:
        out["disturbed"] = True
    findings = list(out["findings"])
    if findings:
        findings[0] = f"{DISTURBED}: {findings[0]}"
        out["findings"] = findings
    if isinstance(headline, dict) and headline.get("text"):
        out["headline"] = {**headline, "text": f"{DISTURBED}: {headline['text']}"}


def apply(analysis: dict[str, Any] | None, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The analysis as the report shows it: under an oversubscribed run the finding says
    so and what to change, and the overlap and cost figures are withheld (their numbers
    kept as measured_value); a disturbed run's finding is marked. A profile's findings,
    headline and advice likewise (_profile_view), which also says which ("withheld":
    "oversubscribed", or "disturbed": true). A copy; None stays None."""
    if analysis is None:
        return None
    guard = guard_of(meta)
    if guard["verdict"] == "ok":
        return analysis
    # Only the finding and the figures change: copied alone, not the whole analysis (its
    # per-rank rows run to hundreds of megabytes at thousands of ranks).
    out = dict(analysis)
    if isinstance(out.get("figures"), list):
        out["figures"] = [dict(f) if isinstance(f, dict) else f for f in out["figures"]]
    finding = out.get("finding")
    over = guard.get("oversubscribed")
    if over:
        for fig in out.get("figures") or []:
            if isinstance(fig, dict) and fig.get("kind") in WITHHELD_KINDS:
                fig["measured_value"] = fig.get("value")
                fig["value"] = None
                fig["withheld"] = "oversubscribed"
        # The measured finding stays in analysis.json on disk.
        if "finding" in out or not isinstance(out.get("findings"), list):
            out["finding"] = withheld_sentence(over)
    elif isinstance(finding, str):
        out["finding"] = f"{DISTURBED}: {finding}"
    if isinstance(out.get("findings"), list):
        _profile_view(out, guard)
    return out


__all__ = ["ASYNC_PROGRESS_VARS", "DISTURBED", "apply", "disturbed_note", "expected_active_threads",
           "guard_of", "judge", "oversubscription", "withheld", "withheld_sentence"]
