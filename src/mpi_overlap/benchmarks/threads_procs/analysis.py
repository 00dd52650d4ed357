"""threads-procs analysis: message rate of 1..k processes against 1..k threads, and what
requesting MPI_THREAD_MULTIPLE costs with one thread.

Speed-ups are ratios of medians (c workers over one worker of the same launch, measured
side by side); the thread-level cost compares one thread under MPI_THREAD_MULTIPLE with
one process under MPI_THREAD_SINGLE (two launches). 95 % intervals of the ratios come
from a bootstrap of the samples (fixed seed: the same data give the same report).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis.stats import median_bootstrap_ci, summarize

BOOT = 2000
CONTENDED = 0.9  # median CPU share below which a series' workers were descheduled


def _samples(count: dict[str, Any]) -> np.ndarray:
    arr = np.asarray([v for v in count.get("samples_msgs_per_s") or [] if v is not None], float)
    return arr[np.isfinite(arr)]


def _cpu_rates(count: dict[str, Any]) -> np.ndarray:
    """Per sample: messages per CPU-second of the (one) worker, rate / CPU share."""
    rates = count.get("samples_msgs_per_s") or []
    shares = count.get("cpu_share_min") or [None] * len(rates)
    out = [r / sh for r, sh in zip(rates, shares, strict=False)
           if r is not None and sh is not None and sh > 0]
    arr = np.asarray(out, float)
    return arr[np.isfinite(arr)]


def ratio_ci(num: np.ndarray, den: np.ndarray, seed: int = 1) -> dict[str, float | None]:
    """median(num) / median(den) with a bootstrap 95 % interval."""
    if num.size == 0 or den.size == 0 or not np.median(den) > 0:
        return {"ratio": None, "ci95_low": None, "ci95_high": None}
    ratio, lo, hi = median_bootstrap_ci(num, den, np.divide, reps=BOOT, seed=seed)
    return {"ratio": ratio, "ci95_low": lo, "ci95_high": hi}


def _series(launch: dict[str, Any]) -> list[dict[str, Any]]:
    counts = launch.get("counts") or []
    base = _samples(counts[0]) if counts else np.array([])
    out = []
    for c in counts:
        s = _samples(c)
        share = [v for v in c.get("cpu_share_min") or [] if v is not None]
        out.append({"workers": c["workers"], "rate": summarize(s),
                    "speedup": ratio_ci(s, base, seed=int(c["workers"])),
                    # median over samples of the least CPU time / wall time of a worker:
                    # below 1 the workers were descheduled (another program held a core)
                    "cpu_share": float(np.median(share)) if share else None})
    return out


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    launches = (result.get("results") or {}).get("launches") or []
    procs = next((x for x in launches if x.get("workers_kind") == "processes"), None)
    threads = next((x for x in launches if x.get("workers_kind") == "threads"), None)
    cpus = max([int(x.get("online_cpus") or 0) for x in launches] or [0])
    out: dict[str, Any] = {
        "schema": "mpi-overlap/analysis",
        "benchmark": "threads-procs",
        "online_cpus": cpus,
        "processes": _series(procs) if procs else [],
        "threads": _series(threads) if threads else [],
        "provided_multiple": threads.get("provided") if threads else None,
    }
    k = max(len(out["processes"]), len(out["threads"]))
    out["k"] = k
    out["oversubscribed"] = cpus > 0 and k > cpus
    # One worker: MULTIPLE + 1 thread over SINGLE + 1 process. The two are different
    # launches, so a load change between them would show as a thread-level cost; with
    # one worker, rate / CPU share = calls per CPU-second of the worker, which does not
    # count the time it was descheduled. The ratio uses it; the wall-time ratio is kept.
    none = {"ratio": None, "ci95_low": None, "ci95_high": None}
    if procs and threads and procs.get("counts") and threads.get("counts"):
        t1, p1c = threads["counts"][0], procs["counts"][0]
        ratio = ratio_ci(_cpu_rates(t1), _cpu_rates(p1c), seed=7)
        wall = ratio_ci(_samples(t1), _samples(p1c), seed=7)
    else:
        ratio, wall = none, none
    out["multiple_over_single"] = ratio
    out["multiple_over_single_wall"] = wall
    out["multiple_cost_pct"] = None if ratio["ratio"] is None else 100.0 * (1.0 - ratio["ratio"])
    # Disturbance of the one-process samples (coefficient of variation), for readers and
    # tests that must tell a contended machine from a failed expectation.
    p1 = _samples(procs["counts"][0]) if procs and procs.get("counts") else np.array([])
    out["one_process_cv"] = (float(p1.std(ddof=1) / p1.mean()) if p1.size > 1 and p1.mean() > 0
                             else None)
    out["finding"] = _finding(out)
    return out


def _finding(a: dict[str, Any]) -> str:
    parts = []
    for kind, word in (("processes", "processes"), ("threads", "threads")):
        series = a[kind]
        if len(series) > 1 and series[-1]["speedup"]["ratio"] is not None:
            parts.append(f"{series[-1]['workers']} {word} reach "
                         f"{series[-1]['speedup']['ratio']:.2f}x one's rate")
        elif series and series[0]["rate"]["median"] is not None:
            parts.append(f"one of the {word}: {series[0]['rate']['median'] / 1e6:.1f} M msgs/s")
    text = "; ".join(parts) or "no rates measured"
    if a["oversubscribed"]:
        text += f" (oversubscribed: {a['k']} workers on {a['online_cpus']} CPUs)"
    shares = [x["cpu_share"] for kind in ("processes", "threads") for x in a[kind]
              if x["cpu_share"] is not None]
    if shares and min(shares) < CONTENDED:
        text += (f" (contended: some workers got only {100 * min(shares):.0f} % of a core,"
                 " so rates with more workers are understated)")
    r = a["multiple_over_single"]
    if r["ratio"] is not None:
        cost = a["multiple_cost_pct"]
        lo, hi = r["ci95_low"], r["ci95_high"]
        ci = f", 95 % CI {lo:.2f}-{hi:.2f}" if lo is not None and hi is not None else ""
        verb = "costs" if cost >= -0.05 else "gains"
        text += (f"; requesting MPI_THREAD_MULTIPLE {verb} {abs(cost):.1f} % with one thread "
                 f"(rate per CPU-second, ratio {r['ratio']:.2f}{ci})")
    return text
