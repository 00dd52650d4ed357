"""error-checking analysis: small-message costs with argument checking on and off.

A launch's setting is what the MPI reports through MPI_T after MPI_Init (the control
variable read back), not what the environment asked for; the benchmark is "switchable"
only when launches read back both 0 and 1 as requested. Per test, the cost is
median(on) - median(off) over the pooled samples of each setting, with a bootstrap 95 %
interval (fixed seed), and as a percentage of median(off).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis.stats import median_bootstrap_ci, summarize

BOOT = 2000
_REQUEST_KEYS = ("MPIR_CVAR_ERROR_CHECKING", "OMPI_MCA_mpi_param_check")


def _requested(launch: dict[str, Any]) -> int | None:
    env = launch.get("launch_env") or {}
    for key in _REQUEST_KEYS:
        if key in env:
            return int(env[key])
    return None


def diff_ci(on: np.ndarray, off: np.ndarray, seed: int = 1) -> dict[str, float | None]:
    if on.size == 0 or off.size == 0:
        return {"diff": None, "ci95_low": None, "ci95_high": None}
    diff, lo, hi = median_bootstrap_ci(on, off, np.subtract, reps=BOOT, seed=seed)
    return {"diff": diff, "ci95_low": lo, "ci95_high": hi}


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    launches = (result.get("results") or {}).get("launches") or []
    observed = [
        {"launch": x.get("launch"), "requested": _requested(x), "cvar": x.get("cvar"),
         "cvar_value": x.get("cvar_value"), "cvar_note": x.get("cvar_note")}
        for x in launches
    ]
    cvar = next((o["cvar"] for o in observed if o["cvar"]), None)
    values = {o["cvar_value"] for o in observed if o["cvar_value"] is not None}
    took = all(o["cvar_value"] is not None and o["requested"] is not None
               and bool(o["cvar_value"]) == bool(o["requested"]) for o in observed)
    reason = None
    if not launches:
        reason = "no launches measured"
    elif cvar is None:
        reason = next((o["cvar_note"] for o in observed if o["cvar_note"]),
                      "no argument-checking control variable")
    elif not took or not ({0, 1} <= {int(bool(v)) for v in values}):
        seen = ", ".join(f"{o['launch']}: {o['cvar_value']}" for o in observed)
        reason = f"{cvar} did not follow the requested setting (read back {seen})"
    switchable = reason is None
    tests: list[dict[str, Any]] = []
    names = [t["name"] for t in (launches[0].get("tests") if launches else []) or []]
    for i, name in enumerate(names):
        pooled: dict[int, list[float]] = {0: [], 1: []}
        for x in launches:
            setting = x.get("cvar_value") if switchable else _requested(x)
            if setting is None:
                continue
            for t in x.get("tests") or []:
                if t["name"] == name:
                    pooled[int(bool(setting))] += [v for v in t["samples_ns"] if v is not None]
        on, off = np.asarray(pooled[1], float), np.asarray(pooled[0], float)
        d = diff_ci(on, off, seed=i + 1)
        base = float(np.median(off)) if off.size else None
        tests.append({"name": name, "on": summarize(on), "off": summarize(off), **d,
                      "pct": (100.0 * d["diff"] / base) if d["diff"] is not None and base
                      else None})
    out = {
        "schema": "mpi-overlap/analysis",
        "benchmark": "error-checking",
        "cvar": cvar,
        "switchable": switchable,
        "not_switchable_reason": reason,
        "launches": observed,
        "tests": tests,
    }
    out["finding"] = _finding(out)
    return out


def _finding(a: dict[str, Any]) -> str:
    if not a["switchable"]:
        return f"argument checking not switchable: {a['not_switchable_reason']}"
    parts = []
    for t in a["tests"]:
        if t["diff"] is None:
            continue
        ci = (f" [95 % CI {t['ci95_low']:.1f}, {t['ci95_high']:.1f}]"
              if t["ci95_low"] is not None else "")
        pct = f", {t['pct']:.0f} %" if t["pct"] is not None else ""
        parts.append(f"{t['name']} {t['diff']:+.1f} ns{ci}{pct}")
    return (f"argument checking ({a['cvar']}=1 vs 0) changes the cost per message by: "
            + "; ".join(parts)) if parts else "argument checking: no samples"
