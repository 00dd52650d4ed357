"""`profile --compare-bare`'s second instrument: the library's own share of the ranks' CPU
samples, from one more profiled launch with every rank under `perf record`.

Whole launches of a program scatter by 5–15 % on a small VM, so the launch ratio of
compare_bare.py cannot resolve a cost under a few per cent. Sampling resolves the part
of the cost that is the library's own CPU time: each rank's samples in libmpi_overlap.so
against all its samples (`perf report --sort dso`), with a binomial 95 % interval. It is a
lower bound of the cost, not the cost: what the library does to the program's caches,
branch predictors and memory layout, and the time of the MPI's own code it calls more
often, land in other objects' samples (docs/profiler.md, "What-if runs").

Where perf is missing or may not sample this user's processes, the document says why and
holds no figure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core.formatting import fmt_pct_cell
from ...core.procs import run_tool
from ...core.ui import ProgressFn
from ...run.launch import run_job
from ...run.preload import LIBRARY

FREQUENCY_HZ = 4999   # not a multiple of common timer rates, so no rank samples in step
DIR = "cost/perf"     # the launch's output, profiles and perf.rank-N files, in the run dir
PROBE_TIMEOUT_S = 30.0
REPORT_TIMEOUT_S = 300.0
LEAVES_OUT = ("what the library does to the program's caches, branch predictors and "
              "memory layout; the MPI's own code it calls (in the MPI's samples); the "
              "launcher and the processes outside the ranks")
# The rank's number from the launcher's environment (Hydra, Open MPI, PMIx, srun), else
# the process id: each rank writes its own file.
_RANK_FILE = ('$0/perf.rank-${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-'
              '${SLURM_PROCID:-pid$$}}}}')
_ROW = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+(\S.*?)\s*$")
_EVENT = re.compile(r"^# Samples: .* of event '([^']*)'")
_LOST = re.compile(r"^# Total Lost Samples: (\d+)")


def availability() -> tuple[str | None, str | None]:
    """(perf's version, None) where perf may sample this user's processes, else
    (version or None, why not) — from a tiny `perf record` of `true`."""
    perf = shutil.which("perf")
    if perf is None:
        return None, "perf is not on PATH"
    try:
        version = run_tool([perf, "--version"], timeout_s=PROBE_TIMEOUT_S).stdout.strip()
        probe = run_tool([perf, "record", "-q", "-o", os.devnull, "--", "true"],
                         timeout_s=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, f"perf could not be run ({err})"
    version = version.removeprefix("perf version ").strip() or None
    if probe.returncode != 0:
        said = next((ln.strip() for ln in probe.stderr.splitlines() if ln.strip()),
                    f"exit status {probe.returncode}")
        return version, f"perf record refused to sample ({said}{_paranoid()})"
    return version, None


def _paranoid() -> str:
    try:
        level = Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
    except OSError:
        return ""
    return f"; kernel.perf_event_paranoid = {level}"


def rank_wrapper(outdir: Path) -> list[str]:
    """The words put before each rank's command: `perf record` of the rank and its
    threads into outdir/perf.rank-N. perf runs outside the launch's `env LD_PRELOAD=…`,
    so the library is loaded into the program only, not into perf."""
    script = f'exec perf record -q -F {FREQUENCY_HZ} -o "{_RANK_FILE}" -- "$@"'
    return ["sh", "-c", script, str(outdir)]


def parse_report(text: str) -> dict[str, Any]:
    """`perf report --no-children --sort dso --stdio -n`: the event, the lost samples and
    the samples of each shared object."""
    event, lost, dsos = None, 0, {}
    for line in text.splitlines():
        if line.startswith("#"):
            if m := _EVENT.match(line):
                event = m.group(1)
            elif m := _LOST.match(line):
                lost = int(m.group(1))
            continue
        if m := _ROW.match(line):
            dsos[m.group(3)] = dsos.get(m.group(3), 0) + int(m.group(2))
    return {"event": event, "lost_samples": lost, "dsos": dsos}


def share_interval(hits: int, samples: int) -> tuple[float | None, float | None, float | None]:
    """The share hits/samples and its 95 % interval (Clopper-Pearson, exact: it holds
    for a handful of hits too); Nones without samples."""
    if samples <= 0:
        return None, None, None
    from scipy.stats import binomtest  # only a --compare-bare profile pays scipy's import

    ci = binomtest(hits, samples).proportion_ci(confidence_level=0.95)
    return hits / samples, float(ci.low), float(ci.high)


def _rank_of(name: str) -> int | None:
    """N of perf.rank-N; None for a file named after its process (no rank variable)."""
    m = re.fullmatch(r"perf\.rank-(\d+)", name)
    return int(m.group(1)) if m else None


def rank_row(name: str, report: dict[str, Any]) -> dict[str, Any]:
    """One rank's row from its file's name (perf.rank-N) and its parsed report."""
    hits = report["dsos"].get(LIBRARY, 0)
    samples = sum(report["dsos"].values())
    share, low, high = share_interval(hits, samples)
    return {"rank": _rank_of(name), "file": name, "event": report["event"],
            "library_samples": hits, "samples": samples,
            "lost_samples": report["lost_samples"],
            "share": share, "ci95_low": low, "ci95_high": high}


def document(rows: list[dict[str, Any]], *, version: str | None, why_not: str | None = None,
             launch: dict[str, Any] | None = None) -> dict[str, Any]:
    """cost["library_cpu_share"]: the rows, the job's pooled share with its interval
    (the ranks' samples together), and what the figure is and leaves out."""
    hits = sum(r["library_samples"] for r in rows)
    samples = sum(r["samples"] for r in rows)
    share, low, high = share_interval(hits, samples) if rows else (None, None, None)
    return {
        "measure": (f"samples of each rank and its threads (perf record -F {FREQUENCY_HZ}, "
                    f"one more profiled launch) in {LIBRARY} against all its samples; "
                    "a lower bound of the profiler's cost"),
        "perf_version": version,
        "frequency_hz": FREQUENCY_HZ,
        "library": LIBRARY,
        "leaves_out": LEAVES_OUT,
        "unavailable": why_not,
        "launch": launch,
        "ranks": rows,
        "library_samples": hits,
        "samples": samples,
        "share": share,
        "ci95_low": low,
        "ci95_high": high,
    }


def measure(command: Callable[[list[str], Path], list[str]], env: dict[str, str],
            run_dir: Path, *, timeout_s: float | None,
            progress: ProgressFn | None = None) -> dict[str, Any]:
    """One launch of `command(wrapper, outdir)` (the profiled launch with `wrapper` before
    each rank's command, its profiles in outdir) and every rank's share."""
    version, why_not = availability()
    if why_not:
        return document([], version=version, why_not=why_not)
    sub = run_dir / DIR
    sub.mkdir(parents=True, exist_ok=True)
    outcome = run_job(command(rank_wrapper(sub.resolve()), sub), env, sub,
                      timeout_s=timeout_s, progress=progress)
    # other processes' CPU time (disturbed) takes no sample of a rank's: said, not refused
    launch = outcome.record(DIR)
    if outcome.status != "complete":
        return document([], version=version, launch=launch,
                        why_not=f"the launch under perf: {outcome.message or outcome.status}")
    rows = []
    # by rank, the files without one (named after their process) last
    for path in sorted(sub.glob("perf.rank-*"),
                       key=lambda p: (_rank_of(p.name) is None, _rank_of(p.name) or 0, p.name)):
        try:
            proc = run_tool(["perf", "report", "-i", str(path), "--no-children", "--sort",
                             "dso", "--stdio", "-n"], timeout_s=REPORT_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as err:
            return document([], version=version, launch=launch,
                            why_not=f"perf report of {path.name} failed ({err})")
        if proc.returncode != 0:
            said = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            return document([], version=version, launch=launch,
                            why_not=f"perf report of {path.name} failed ({said[0]})")
        rows.append(rank_row(path.name, parse_report(proc.stdout)))
    if not rows:
        return document([], version=version, launch=launch,
                        why_not="the launch under perf left no perf.rank-N file")
    return document(rows, version=version, launch=launch)


def pct(x: float) -> str:
    """A share in per cent with enough digits for a fraction of a per cent."""
    return fmt_pct_cell(100 * x, 2)


def sentence(doc: dict[str, Any] | None) -> str | None:
    """The one line: the share with its interval, or why there is none."""
    if not doc:
        return None
    if doc.get("unavailable") or doc.get("share") is None:
        why = doc.get("unavailable") or "no samples"
        return f"The library's own share of the ranks' CPU samples was not measured: {why}."
    n = len(doc["ranks"])
    return (f"The library's own share of the ranks' CPU samples: {pct(doc['share'])} % "
            f"[{pct(doc['ci95_low'])}, {pct(doc['ci95_high'])}] (perf, {n} rank"
            f"{'s' if n != 1 else ''}, {doc['samples']} samples; a lower bound of the "
            "profiler's cost: its effect on the program's caches is not in it).")
