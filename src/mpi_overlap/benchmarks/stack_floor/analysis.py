"""stack-floor analysis: what the MPI stack adds per message over the physical floor, where
that added time jumps, and what requests cost (issue 6, experiments 1 and 2; Balaji et al.).

Per size, from the samples of native/bench/stack_floor.c (one sample of each method per
repetition, so the k-th samples were taken side by side):

  floor_k  = min(shm_k, shm0 + memcpy_k)     shm0: median shm time at the smallest size
  added_k  = mpi_blocking_k - floor_k         the MPI stack's added time, one way
  request_k = mpi_nonblocking_k - mpi_blocking_k   the requests' cost per message

`shm` is a two-copy shared-memory ping-pong (copy in, flag, copy out); `shm0 + memcpy` is
a single-copy bound (one cache-line hand-off plus one copy on one core), the floor for
large sizes where an MPI may copy once (CMA/XPMEM). With one rank on each of two nodes the
result's floor_path is "tcp": `shm` is then the same ping-pong over a TCP connection
between the hosts, and floor_k = tcp_k (no single-copy bound: bytes cross the network, so
what MPI adds is measured against the kernel's own path between the nodes). Figures are
medians of the per-sample values with bootstrap percentile intervals of the median. The
noise margin of a size is the larger range (max - min) of the MPI and floor samples:
consistency checks allow it. It is generous on purpose: on a busy machine whole samples
are disturbed (noise only adds time), and the checks compare quantities measured side by
side, not tuned thresholds.

The jump is the step between neighbouring sizes i, i+1 with the largest persistent ratio
min(added[i+1], added[i+2]) / max(added[i-1], added[i]) (of those that exist: a step the
next size on each side confirms, so one disturbed size, a spike up and back down, is not
taken for it), reported with its plain ratio added[i+1] /
added[i]; added is clamped below at a tenth of its median, so a near-zero value cannot
make a ratio from noise. It is the largest step, not the protocol switch: a cache boundary
at large sizes makes bigger ratios. The switch is found on the size-normalised curve
(analysis/protocol_switch.py: the step where the fixed cost of the lines through the
neighbouring sizes rises) and cross-checked against the MPI's MPI_T thresholds: agrees /
disagrees, as sync-overlap does for the eager limit.

A negative request overhead (non-blocking faster than blocking: the non-blocking
ping-pong posts its receive first) is reported as a saving, not as a cost.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...analysis.figures import figure
from ...analysis.protocol_switch import agreement, find_switch, network_switch, reported_switch
from ...analysis.replication import Point, Quantity
from ...core.formatting import fmt_s_as_us
from ...core.sizes import format_size
from ...core.values import num

N_BOOT = 1000
SEED = 20261121
REQUEST_SIZES_MAX = 1024  # the request-overhead finding names sizes up to this
# What the floor is called in findings and on the card, by the result's floor_path.
FLOOR_NAMES = {"shared-memory": "core-to-core floor", "tcp": "TCP floor between the nodes"}


def floor_name(analysis: dict[str, Any]) -> str:
    """"core-to-core floor" or "TCP floor between the nodes", by the analysis'
    floor_path (absent in analyses from before it existed: shared memory)."""
    return FLOOR_NAMES.get(str(analysis.get("floor_path")), FLOOR_NAMES["shared-memory"])
METHODS = ("mpi_blocking", "mpi_nonblocking", "shm", "memcpy")


def _median_ci(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float]:
    if values.size == 0:
        return math.nan, math.nan, math.nan
    med = float(np.median(values))
    if values.size < 2:
        return med, med, med
    idx = rng.integers(0, values.size, size=(N_BOOT, values.size))
    reps = np.median(values[idx], axis=1)
    lo, hi = np.percentile(reps, [2.5, 97.5])
    return med, float(lo), float(hi)


def _range(values: np.ndarray) -> float:
    return float(values.max() - values.min()) if values.size else 0.0


def _est(med: float, lo: float, hi: float) -> dict[str, float | None]:
    def clean(x: float) -> float | None:
        return None if not math.isfinite(x) else x

    return {"median_s": clean(med), "ci95_low_s": clean(lo), "ci95_high_s": clean(hi)}


def analyze(result: dict[str, Any],
                        lower_layer: dict[str, Any] | None = None) -> dict[str, Any]:
    res = result.get("results") or {}
    rng = np.random.default_rng(SEED)
    raw = [s for s in res.get("sizes", []) if s["mpi_blocking"]["samples_s"]]
    floor_path = "tcp" if res.get("floor_path") == "tcp" else "shared-memory"
    tcp = floor_path == "tcp"
    sizes_out: list[dict[str, Any]] = []
    shm0 = (float(np.median(raw[0]["shm"]["samples_s"])) if raw and raw[0]["shm"]["samples_s"]
            else 0.0)
    for s in raw:
        n = min(len(s[m]["samples_s"]) for m in METHODS)
        b = np.asarray(s["mpi_blocking"]["samples_s"][:n], dtype=float)
        nb = np.asarray(s["mpi_nonblocking"]["samples_s"][:n], dtype=float)
        shm = np.asarray(s["shm"]["samples_s"][:n], dtype=float)
        mc = np.asarray(s["memcpy"]["samples_s"][:n], dtype=float)
        single = shm0 + mc
        floor = shm if tcp else np.minimum(shm, single)
        added = b - floor
        req = nb - b
        noise = max(_range(b), _range(floor))
        sizes_out.append({
            "bytes": int(s["bytes"]),
            "samples": int(n),
            "mpi_blocking": _est(*_median_ci(b, rng)),
            "mpi_nonblocking": _est(*_median_ci(nb, rng)),
            "shm": _est(*_median_ci(shm, rng)),
            "memcpy": _est(*_median_ci(mc, rng)),
            "floor": _est(*_median_ci(floor, rng)),
            "floor_kind": ("tcp" if tcp else
                           "shm" if float(np.median(shm)) <= float(np.median(single))
                           else "single-copy"),
            "added": _est(*_median_ci(added, rng)),
            "request_overhead": _est(*_median_ci(req, rng)),
            # tails of the samples (each one a block average), beside the medians (OSU)
            "mpi_blocking_p90_s": float(np.percentile(b, 90)) if b.size else None,
            "mpi_blocking_p99_s": float(np.percentile(b, 99)) if b.size else None,
            "noise_s": noise,
            "request_noise_s": _range(req),
        })

    jump = _jump(sizes_out)
    checks = _checks(sizes_out, jump)
    lower = lower_layer or _lower_layer_status(res.get("lower_layer_tools") or {})
    blocking = [s["mpi_blocking"] for s in sizes_out]
    switch = find_switch([s["bytes"] for s in sizes_out], [b["median_s"] for b in blocking],
                         [b["ci95_low_s"] for b in blocking], [b["ci95_high_s"] for b in blocking])
    cvars = {c["name"]: c.get("value") for c in res.get("mpi_cvars") or []
             if isinstance(c, dict) and c.get("name")}
    reported = network_switch(result) if tcp else reported_switch(cvars)
    agrees = agreement(switch, reported["bytes"])
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "stack-floor",
        "method": {
            "floor": ("tcp_k per sample (the shm method's ping-pong over TCP between the "
                      "nodes)" if tcp else
                      "min(shm_k, shm(smallest size) + memcpy_k) per sample"),
            "added": "median over samples of mpi_blocking_k - floor_k",
            "request_overhead": "median over samples of mpi_nonblocking_k - mpi_blocking_k",
            "interval": f"bootstrap percentile 95 % of the median, {N_BOOT} resamples",
            "noise": "larger range (max - min) of the MPI and floor samples of a size",
            "jump": "neighbours i, i+1 with the largest min(added[i+1..i+2]) / max(added[i-1..i])",
            "switch": "the step i, i+1 with the largest lift of the fixed cost (value at "
                      "size 0) from the line through sizes i-1, i to the lines through "
                      "i+1, i+2 and i+2, i+3, the step standing out of both lines, relative "
                      "to t[i] and at least MIN_RISE; only steps beyond the noise (disjoint "
                      "intervals) that persist (no larger size faster)",
        },
        "floor_path": floor_path,
        "sizes": sizes_out,
        "jump": jump,
        "switch": switch,
        "reported_switch": {**reported, "cvars": cvars},
        "switch_agrees": agrees,
        "lower_layer": lower,
        "checks": checks,
        "finding": _finding(sizes_out, jump, switch, reported, agrees, FLOOR_NAMES[floor_path]),
        "request_finding": _request_finding(sizes_out),
        "figures": _figures(sizes_out, jump, switch, agrees),
    }


def _figures(sizes: list[dict[str, Any]], jump: dict[str, Any] | None,
             switch: dict[str, Any] | None, agrees: bool | None) -> list[dict[str, Any]]:
    """Small-message latency and MPI's added time (the costs a setting may change), where
    the latency jumps most, and where the protocol switches."""
    first = sizes[0] if sizes else None
    at = format_size(first["bytes"]) if first else "?"
    return [
        figure("latency_small_us", f"MPI one-way latency at {at}",
               first["mpi_blocking"]["median_s"] * 1e6 if first else None, "µs", "cost"),
        figure("added_small_us", f"MPI time over the floor at {at}",
               first["added"]["median_s"] * 1e6 if first else None, "µs", "cost"),
        figure("jump_above_bytes", "largest latency jump, upper size",
               jump["above_bytes"] if jump else None, "B", "info"),
        figure("switch_above_bytes", "protocol switch (size-normalised), upper size",
               (switch or {}).get("above_bytes"), "B", "info"),
        figure("switch_agrees", "protocol switch agrees with the MPI's threshold",
               None if agrees is None else float(agrees), "bool", "info"),
    ]


def _jump(sizes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The step between neighbouring sizes i, i+1 with the largest persistent ratio
    min(added[i+1], added[i+2]) / max(added[i-1], added[i]) (those that exist): a step
    that the next size on each side confirms, so that one disturbed size (a spike up and
    back down) is not taken for the protocol switch. `ratio` is the plain neighbouring
    step added[i+1] / added[i] there."""
    added = [s["added"]["median_s"] for s in sizes]
    if len(sizes) < 2 or any(a is None for a in added):
        return None
    positive = [a for a in added if a > 0]
    clamp = max(1e-10, 0.1 * float(np.median(positive))) if positive else 1e-10
    a = [max(x, clamp) for x in added]
    best = None
    for i in range(len(sizes) - 1):
        persistent = min(a[i + 1 : i + 3]) / max(a[max(0, i - 1) : i + 1])
        if best is None or persistent > best[0]:
            best = (persistent, i)
    assert best is not None
    persistent, i = best
    return {
        "ratio": a[i + 1] / a[i],
        "persistent_ratio": persistent,
        "below_bytes": sizes[i]["bytes"],
        "above_bytes": sizes[i + 1]["bytes"],
        "added_below_s": added[i],
        "added_above_s": added[i + 1],
    }


def _checks(sizes: list[dict[str, Any]], jump: dict[str, Any] | None) -> list[dict[str, Any]]:
    checks = []
    bad = [s["bytes"] for s in sizes
           if not s["floor"]["median_s"] <= s["mpi_blocking"]["median_s"] + s["noise_s"]]
    checks.append({"name": "floor <= MPI latency within noise", "ok": not bad,
                   "detail": f"violated at {', '.join(map(format_size, bad))}" if bad else
                   f"holds at all {len(sizes)} sizes"})
    bad = [s["bytes"] for s in sizes if not s["added"]["median_s"] >= -s["noise_s"]]
    checks.append({"name": "added time >= 0 within noise", "ok": not bad,
                   "detail": f"violated at {', '.join(map(format_size, bad))}" if bad else
                   f"holds at all {len(sizes)} sizes"})
    measured = [s["bytes"] for s in sizes]
    ok = jump is not None and any(
        measured[i] == jump["below_bytes"] and measured[i + 1] == jump["above_bytes"]
        for i in range(len(measured) - 1))
    checks.append({"name": "jump lies between two neighbouring measured sizes", "ok": ok,
                   "detail": (f"between {format_size(jump['below_bytes'])} and "
                              f"{format_size(jump['above_bytes'])}") if jump else
                   "fewer than two sizes"})
    bad = []
    for s in sizes:
        d = s["request_overhead"]["median_s"]
        lat = max(s["mpi_blocking"]["median_s"], s["mpi_nonblocking"]["median_s"])
        if d is None or not math.isfinite(d) or abs(d) > 0.5 * lat + s["request_noise_s"]:
            bad.append(s["bytes"])
    checks.append({"name": "request overhead finite and small against latency", "ok": not bad,
                   "detail": f"|nb - blocking| > half the latency + noise at "
                   f"{', '.join(map(format_size, bad))}" if bad else
                   f"holds at all {len(sizes)} sizes"})
    return checks


def _lower_layer_status(tools: dict[str, Any]) -> dict[str, Any]:
    found = {k: v for k, v in tools.items() if k != "searched" and v}
    if not found:
        return {"status": "not available", "tool": None,
                "detail": "neither fi_pingpong nor ucx_perftest on PATH or beside the MPI library"}
    name, path = next(iter(found.items()))
    return {"status": "found, not run", "tool": path,
            "detail": f"{name} at {path}; running it (a server and a client) is not implemented"}


def _finding(sizes: list[dict[str, Any]], jump: dict[str, Any] | None,
             switch: dict[str, Any] | None, reported: dict[str, Any],
             agrees: bool | None, floor: str) -> str:
    if not sizes:
        return "no size was measured"
    first = sizes[0]
    text = (f"MPI adds {fmt_s_as_us(first['added']['median_s'], '.3g')} µs per message over the "
            f"{fmt_s_as_us(first['floor']['median_s'], '.3g')} µs {floor} at "
            f"{format_size(first['bytes'])}")
    if jump is not None:
        text += (f" ({fmt_s_as_us(jump['added_below_s'], '.3g')} µs at "
                 f"{format_size(jump['below_bytes'])}); "
                 f"its largest step {jump['ratio']:.3g}x lies between "
                 f"{format_size(jump['below_bytes'])} and {format_size(jump['above_bytes'])}")
    return text + "; " + _switch_text(switch, reported, agrees)


def _switch_text(switch: dict[str, Any] | None, reported: dict[str, Any],
                 agrees: bool | None) -> str:
    """The protocol switch and the MPI's word on it, as one clause."""
    says = (f"{reported['source']} = {reported['bytes']} B" if reported.get("bytes") is not None
            else "the network transport's threshold, which is automatic (UCX_RNDV_THRESH "
                 "unset)" if reported.get("family") == "network"
            else "the MPI names no threshold")
    if not switch:
        return f"protocol switch: too few sizes to judge (the MPI: {says})"
    if not switch["found"]:
        real = [st for st in switch["steps"] if st["rejected"] is None]
        best = max(real, key=lambda st: st["rise"], default=None)
        near = (f"; the largest, {100 * best['rise']:.0f} %, between "
                f"{format_size(best['below_bytes'])} and {format_size(best['above_bytes'])}"
                if best else "")
        return (f"protocol switch: no step raises the fixed cost by {100 * switch['min_rise']:.0f} "
                f"%{near} (the MPI: {says})")
    where = (f"protocol switch between {format_size(switch['below_bytes'])} and "
             f"{format_size(switch['above_bytes'])} (fixed cost "
             f"{fmt_s_as_us(switch['fixed_before_s'], '.3g')} -> "
             f"{fmt_s_as_us(switch['fixed_after_s'], '.3g')} µs)")
    verdict = {True: "agrees with", False: "disagrees with",
               None: "cannot be compared with"}[agrees]
    return f"{where}, {verdict} {says}"


def request_sizes(sizes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sizes the request finding names: the smallest, and the largest up to 1 KiB."""
    small = [s for s in sizes if s["bytes"] <= REQUEST_SIZES_MAX] or sizes[:1]
    picked = [small[0]] + ([small[-1]] if len(small) > 1 else [])
    return picked


def request_phrase(r: dict[str, Any]) -> str:
    """A request overhead as what it is: a cost, a saving, or no measurable difference."""
    d, lo, hi = r["median_s"], r["ci95_low_s"], r["ci95_high_s"]
    ci = f" [{fmt_s_as_us(lo, '.3g')}, {fmt_s_as_us(hi, '.3g')}]"
    if lo is not None and hi is not None and lo <= 0.0 <= hi:
        return f"no measurable difference ({fmt_s_as_us(d, '.3g')} µs{ci})"
    if d >= 0:
        return f"cost {fmt_s_as_us(d, '.3g')} µs more per message{ci}"
    return f"are {fmt_s_as_us(-d, '.3g')} µs faster per message{ci}, a saving, not a cost"


def _request_finding(sizes: list[dict[str, Any]]) -> str:
    if not sizes:
        return "no size was measured"
    parts = [f"{format_size(s['bytes'])}: {request_phrase(s['request_overhead'])}"
             for s in request_sizes(sizes)]
    text = "non-blocking requests against blocking calls, " + "; ".join(parts)
    faster = [format_size(s["bytes"]) for s in sizes
              if s["request_overhead"]["ci95_high_s"] is not None
              and s["request_overhead"]["ci95_high_s"] < 0]
    if faster:
        text += (f"; non-blocking is faster at {', '.join(faster)} (its ping-pong posts the "
                 "receive before the message arrives): a saving, not a cost")
    return text


# ---- the quantities compared across launches (analysis/replication.py)

def replicated(analysis: dict[str, Any]) -> Iterator[tuple[Quantity, Point]]:
    def us(x: Any) -> float | None:
        v = num(x)
        return None if v is None else v * 1e6

    for s in analysis.get("sizes") or []:
        at = format_size(int(s.get("bytes", 0)))
        for key, what in (("mpi_blocking", "MPI one-way latency"), ("added", "MPI added time")):
            e = s.get(key) or {}
            yield (Quantity(f"{s.get('bytes')}/{key}", f"{at} {what}", "µs"),
                   Point(us(e.get("median_s")), us(e.get("ci95_low_s")), us(e.get("ci95_high_s"))))
