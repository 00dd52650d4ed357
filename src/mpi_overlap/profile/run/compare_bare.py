"""`profile --compare-bare`: what the profiler costs this program, from K pairs of extra
launches of it — without the profiler and with it — interleaved (without/with on odd
pairs, with/without on even ones, so a drift of the machine weighs on both alike), timed
as whole launches (the launcher's start to its end: what a user waits for).

Each pair gives the ratio with/without; the cost is their geometric mean with the
Student-t interval of the mean log ratio (analysis/stats.ratio_ci, as the
profiler-overhead benchmark states its figures). The launches' output goes to
cost/repNN-with|without/ in the run directory, their profiles beside it; pairs in which a
launch failed or other processes took CPU time are counted apart. Where perf may sample
the ranks, one more launch gives the library's own share of their CPU (perf_share.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core.ui import ProgressFn
from ...run.launch import run_job
from . import perf_share

DEFAULT_REPS = 3
MAX_REPS = 50
DIR = "cost"


def launch_dir(run_dir: Path, rep: int, profiled: bool) -> Path:
    return run_dir / DIR / f"rep{rep:02d}-{'with' if profiled else 'without'}"


def measure(command: Callable[[Path | None], list[str]], env: dict[str, str], run_dir: Path,
            *, reps: int, timeout_s: float | None,
            progress: ProgressFn | None = None) -> dict[str, Any]:
    """The cost document (result.json's `cost`). `command(outdir)` is the launch command
    with the profiler writing to outdir, `command(None)` the bare one."""
    launches: list[dict[str, Any]] = []
    stopped = None
    total = 2 * reps
    for rep in range(1, reps + 1):
        for profiled in ((False, True) if rep % 2 else (True, False)):
            sub = launch_dir(run_dir, rep, profiled)
            sub.mkdir(parents=True, exist_ok=True)
            if progress:
                progress(len(launches), total, sub.name)
            outcome = run_job(command(sub if profiled else None), env, sub, timeout_s=timeout_s)
            launches.append({"rep": rep, "profiled": profiled,
                             **outcome.record(str(sub.relative_to(run_dir)))})
            if outcome.status != "complete":
                stopped = f"{sub.name}: {outcome.message or outcome.status}"
                break
        if stopped:
            break
    return summarize(launches, reps, stopped)


def summarize(launches: list[dict[str, Any]], reps: int, stopped: str | None) -> dict[str, Any]:
    """Pairs, ratios and the cost with its interval, from the launches' records."""
    by_rep: dict[int, dict[bool, dict[str, Any]]] = {}
    for launch in launches:
        by_rep.setdefault(launch["rep"], {})[launch["profiled"]] = launch
    pairs = []
    for rep, two in sorted(by_rep.items()):
        a, b = two.get(False), two.get(True)
        if not a or not b or a["status"] != "complete" or b["status"] != "complete" \
                or not a["elapsed_s"] > 0:
            continue
        pairs.append({"rep": rep, "without_s": a["elapsed_s"], "with_s": b["elapsed_s"],
                      "ratio": b["elapsed_s"] / a["elapsed_s"],
                      "disturbed": a["disturbed"] or b["disturbed"]})
    from ...analysis.stats import ratio_ci  # numpy: only a --compare-bare profile needs it

    geo, low, high = ratio_ci([p["ratio"] for p in pairs])
    return {
        "measure": "wall time of each whole launch, the launcher's start to its end",
        "reps": reps,
        "launches": launches,
        "pairs": pairs,
        "ratio": geo,
        "ci95_low": low,
        "ci95_high": high,
        "disturbed_pairs": sum(1 for p in pairs if p["disturbed"]),
        "stopped": stopped,
    }


def sentence(cost: dict[str, Any] | None) -> str | None:
    """The finding: 'The profiler made this program's launches 1.031× as long ...', or,
    where the pairs do not resolve it (analysis/figures.unresolved: too few pairs, most
    of them disturbed, or an interval wider than the figure's distance from no cost),
    'not resolved' with why, and no figure stated as a finding."""
    if not cost or cost.get("ratio") is None:
        if cost and cost.get("stopped"):
            return f"The profiler's cost was not measured: {cost['stopped']}."
        return None
    from ...analysis.figures import figure, unresolved

    n = len(cost["pairs"])
    pairs = (f"{n} interleaved pair{'s' if n != 1 else ''} of launches without and with "
             "it")
    noisy = (f"; other processes took CPU time during {cost['disturbed_pairs']} of them"
             if cost.get("disturbed_pairs") else "")
    why = unresolved(figure("launch_cost", "the profiler's cost on the launches",
                            cost["ratio"], "ratio", "cost",
                            ci=(cost.get("ci95_low"), cost.get("ci95_high")), pairs=n,
                            disturbed=cost.get("disturbed_pairs") or 0), 100, " %")
    if why:
        return f"The profiler's cost on this program's launches is {why}, from {pairs}{noisy}."
    ci = f" (95 % interval {cost['ci95_low']:.3f}–{cost['ci95_high']:.3f})"
    return (f"The profiler made this program's launches {cost['ratio']:.3f}× as long{ci}, "
            f"from {pairs}{noisy}.")


def sentences(cost: dict[str, Any] | None) -> list[str]:
    """The findings of --compare-bare: the launches' ratio, then the library's own share
    of the ranks' CPU samples (or why it was not measured)."""
    found = [sentence(cost), perf_share.sentence((cost or {}).get("library_cpu_share"))]
    return [s for s in found if s]
