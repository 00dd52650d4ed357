"""Analysis of a profiler-overhead run: paired ratios with/without the profiler, their
confidence interval, and a verdict against the target.

Each repetition gives one pair per program (the launch without the profiler and the one
with it, run next to each other); the ratio with/without of the pair is the measurement.
Ratios are combined on the log scale, where a slowdown and the matching speedup weigh
the same: the point estimate is the geometric mean, the interval is the Student-t
interval of the mean log ratio, exponentiated (a CI of the geometric mean ratio). The
median of the ratios is reported beside it. Too few pairs for a bootstrap (3-5), hence t.

Verdicts compare the whole interval with the target, so noise never reads as a pass:
"meets target" when the interval lies on the good side, "misses target" when it lies on
the bad side, "inconclusive (CI spans the target)" otherwise. docs/benchmarks.md,
section profiler-overhead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...analysis.figures import figure
from ...analysis.stats import ratio_ci, ratio_ci_rank, t_interval
from ...profile.analysis.library_time import over_launches, over_launches_words
from .app_cost import analyze_app_cost, app_cost_figure, app_cost_sentence
from .verdicts import CI_LEVEL, Target, verdict


@dataclass(frozen=True)
class MetricSpec:
    name: str
    program: str  # msgrate | compute_app
    title: str
    unit: str
    target: Target | None
    better: str  # "higher" (a rate) or "lower" (a time)
    # where the pair's number comes from: the launch's "value", or its wall "elapsed_s"
    source: str = "value"


# The targets of the issue: run time + <= 1 % (the source reports < 0.9 % on the NAS
# benchmarks, Shet et al. §4.5), small-message rate >= 95 % of uninstrumented.
METRICS = (
    MetricSpec("msg_rate", "msgrate", "small-message rate", "msgs/s", Target(">=", 0.95),
               "higher"),
    MetricSpec("run_time", "compute_app", "compute-heavy run time", "s", Target("<=", 1.01),
               "lower"),
    # Informational: the whole launch (mpiexec start to exit) of the compute-heavy
    # program, which adds the profiler's set-up in MPI_Init (clock, table) and the profile
    # written at MPI_Finalize to the timed loop - and the launcher's own noise.
    MetricSpec("launch_time", "compute_app", "compute-heavy launch wall time", "s", None, "lower",
               source="elapsed_s"),
)


def overhead_pct(spec: MetricSpec, ratio: float | None) -> float | None:
    """What the profiler costs in percent: rate lost, or time added."""
    if ratio is None:
        return None
    return 100.0 * (1.0 - ratio) if spec.better == "higher" else 100.0 * (ratio - 1.0)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


def _usable(launch: dict[str, Any] | None, source: str) -> tuple[float | None, str | None]:
    """The launch's number, or None and why not."""
    if launch is None:
        return None, "not run"
    if launch.get("status") != "complete":
        return None, f"{launch.get('dir')}: {launch.get('status')}"
    if launch.get("profiled"):
        prof = launch.get("profile") or {}
        if prof.get("status") != "complete":
            return None, f"{launch.get('dir')}: profile incomplete (the profiler may not have run)"
    value = _number(launch.get(source))
    if value is None:
        return None, f"{launch.get('dir')}: no {source}"
    return value, None


def default_path(launch: dict[str, Any]) -> bool:
    """Whether a launch ran the profiler as it is by default (or ran without it): not the
    launch with call sites off (analyze_callsites), the one at the other idle setting
    (analyze_idle) nor the one whose events were not processed (analyze_split)."""
    return (launch.get("callsites") is not False and launch.get("idle") is None
            and launch.get("process") is not False)


def pairs_of(result: dict[str, Any], spec: MetricSpec) -> tuple[list[dict[str, Any]],
                                                                 list[dict[str, Any]]]:
    """Per repetition the pair (without, with, ratio); and the repetitions left out."""
    by_rep: dict[int, dict[bool, dict[str, Any]]] = {}
    for launch in result.get("launches") or []:
        if launch.get("program") == spec.program and launch.get("rep", 0) >= 1 \
                and default_path(launch):
            by_rep.setdefault(int(launch["rep"]), {})[bool(launch.get("profiled"))] = launch
    pairs, excluded = [], []
    for rep in sorted(by_rep):
        without, why_a = _usable(by_rep[rep].get(False), spec.source)
        with_, why_b = _usable(by_rep[rep].get(True), spec.source)
        if without is None or with_ is None:
            excluded.append({"rep": rep, "reason": "; ".join(w for w in (why_a, why_b) if w)})
            continue
        disturbed = any(bool(by_rep[rep][k].get("disturbed")) for k in (False, True))
        pairs.append({"rep": rep, "without": without, "with": with_, "ratio": with_ / without,
                      "disturbed": disturbed})
    return pairs, excluded


def estimate(spec: MetricSpec, pairs: list[dict[str, Any]], ci: float = CI_LEVEL,
             left_out: str = "") -> dict[str, Any]:
    """Median, geometric mean, interval, overhead and verdict of some pairs' ratios; beside
    them the rank-based estimate and interval (stats.ratio_ci_rank), which one launch that
    drew a slower pace for its whole length does not widen as it widens the Student-t one.
    The verdict stays the Student-t interval's."""
    ratios = [p["ratio"] for p in pairs]
    geo, low, high = ratio_ci(ratios, ci)
    rank, rank_low, rank_high = ratio_ci_rank(ratios, ci)
    v = verdict(spec.target, len(pairs), low, high)
    if geo is None:
        reason = "no pair"
    else:
        ci_txt = f"CI {low:.4f}-{high:.4f}" if low is not None and high is not None else "no CI"
        against = f"against {spec.target.text()}" if spec.target else "informational"
        reason = f"ratio {geo:.4f} ({ci_txt}) over {len(pairs)} pairs {against}"
    return {
        "n": len(pairs),
        "median": float(np.median(ratios)) if ratios else None,
        "geomean": geo,
        "ci95_low": low,
        "ci95_high": high,
        "rank_estimate": rank,
        "rank_ci95_low": rank_low,
        "rank_ci95_high": rank_high,
        "overhead_pct": overhead_pct(spec, geo),
        "verdict": v,
        "reason": reason + (f"; {left_out}" if left_out else ""),
    }


def analyze_metric(result: dict[str, Any], spec: MetricSpec,
                   ci: float = CI_LEVEL) -> dict[str, Any]:
    """All complete pairs, and (as "quiet") those whose launches nothing else disturbed."""
    pairs, excluded = pairs_of(result, spec)
    quiet = [p for p in pairs if not p["disturbed"]]
    left = f"{len(excluded)} repetition(s) without a complete pair" if excluded else ""
    noisy = len(pairs) - len(quiet)
    return {
        "name": spec.name,
        "program": spec.program,
        "title": spec.title,
        "unit": spec.unit,
        "source": spec.source,
        "target": None if spec.target is None else {"op": spec.target.op,
                                                    "value": spec.target.value},
        "pairs": pairs,
        "excluded": excluded,
        **estimate(spec, pairs, ci, left),
        "quiet": estimate(spec, quiet, ci,
                          f"{noisy} disturbed pair(s) left out" if noisy else ""),
    }


# Call sites (docs/profiler.md, "Call sites"): per repetition, the msgrate launch with the
# profiler's call sites on against the one with them off; issue 12's target.
CALLSITE_TARGET_NS = 5.0


def _ns_per_message(result: dict[str, Any]) -> dict[int, dict[str, float]]:
    """Per repetition, msgrate's ns per message (1e9/rate) of its launches "without" the
    profiler, with call sites "on" and "off", at the other "idle" setting, and with its
    events "unprocessed"."""
    by_rep: dict[int, dict[str, float]] = {}
    for launch in result.get("launches") or []:
        if launch.get("program") != "msgrate" or launch.get("rep", 0) < 1 \
                or launch.get("status") != "complete" or not launch.get("value"):
            continue
        kind = ("without" if not launch.get("profiled")
                else "unprocessed" if launch.get("process") is False
                else "idle" if launch.get("idle") is not None
                else "on" if launch.get("callsites") is not False else "off")
        by_rep.setdefault(int(launch["rep"]), {})[kind] = 1e9 / float(launch["value"])
    return by_rep


def _added(result: dict[str, Any], to: str, over: str) -> list[float]:
    """Per repetition, ns per message of `to` minus that of `over`."""
    return [r[to] - r[over] for r in _ns_per_message(result).values() if to in r and over in r]


def _ns_estimate(diffs: list[float], ci: float) -> dict[str, Any]:
    """Per-repetition ns differences as pairs, mean with its Student-t interval, median."""
    lo, hi = t_interval(diffs, ci)
    return {"pairs": len(diffs),
            "added_ns": float(np.mean(diffs)) if diffs else None,
            "median_ns": float(np.median(diffs)) if diffs else None,
            "ci95_low_ns": lo, "ci95_high_ns": hi}


def analyze_callsites(result: dict[str, Any], ci: float = CI_LEVEL) -> dict[str, Any]:
    """ns added per message by the call sites (msgrate with them on − off, per repetition,
    = 1e9/rate_on − 1e9/rate_off); mean with the Student-t interval, median beside it.
    The whole profiler's figure is per_message_cost's."""
    est = _ns_estimate(_added(result, "on", "off"), ci)
    v = verdict(Target("<=", CALLSITE_TARGET_NS), est["pairs"], est["ci95_low_ns"],
                est["ci95_high_ns"])
    return {**est, "target_ns": CALLSITE_TARGET_NS, "verdict": v}


def analyze_idle(result: dict[str, Any], ci: float = CI_LEVEL) -> dict[str, Any]:
    """ns per message of the launch at the other MPI_OVERLAP_IDLE setting minus the
    default's, per repetition (issue 40: the default path must be no worse than its
    alternative beyond the interval): "default no worse" when the interval lies at or
    above 0, "the other setting is cheaper" when below, "not resolved" when it spans 0."""
    setting = next((str(x["idle"]) for x in result.get("launches") or []
                    if x.get("idle") is not None), None)
    est = _ns_estimate(_added(result, "idle", "on"), ci)
    lo, hi = est["ci95_low_ns"], est["ci95_high_ns"]
    if lo is None or hi is None:
        verdict_ = "not resolved" if est["pairs"] else "not measured"
    else:
        verdict_ = ("default no worse" if lo >= 0 else
                    "the other setting is cheaper" if hi < 0 else "not resolved")
    return {"setting": None if setting is None else f"MPI_OVERLAP_IDLE={setting}", **est,
            "verdict": verdict_}


def idle_sentence(c: dict[str, Any]) -> str:
    if c["added_ns"] is None:
        return "The other idle setting: no pair of msgrate launches with it and the default"
    return (f"with {c['setting']} instead of the default a message costs "
            f"{c['added_ns']:+.1f} ns{_ns_interval(c)} more over {c['pairs']} pairs: "
            f"{c['verdict']}")


def analyze_split(result: dict[str, Any], floor_ns: float | None, engine_ns: float | None,
                  ci: float = CI_LEVEL) -> dict[str, Any]:
    """The whole profiler's ns per message in the run, split by the launch whose events
    were counted but not processed (MPI_OVERLAP_PROCESS=0), per repetition: the wrappers
    and their queue (unprocessed − without: the clock reads, the rest of each wrapper, the
    pushes) and the processing (on − unprocessed), each a mean with its Student-t interval
    and a median; beside them the run's floor (per_message) and the processing timed alone
    (engine), which split_sentence prints with them. Runs from before it have no such
    launch (pairs 0)."""
    wrappers = _ns_estimate(_added(result, "unprocessed", "without"), ci)
    processing = _ns_estimate(_added(result, "on", "unprocessed"), ci)
    return {"pairs": min(wrappers["pairs"], processing["pairs"]),
            "wrappers": wrappers, "processing": processing,
            "floor_ns": floor_ns, "engine_ns_per_transfer": engine_ns}


def split_sentence(c: dict[str, Any]) -> str:
    """analyze_split's figures in one sentence."""
    if not c["pairs"]:
        return "The cost's parts: no msgrate launch with its events left unprocessed"
    w, p = c["wrappers"], c["processing"]
    floor_ns, engine_ns = c.get("floor_ns"), c.get("engine_ns_per_transfer")
    floor = "" if floor_ns is None else f", the floor of {floor_ns:.1f} ns among them"
    alone = "" if engine_ns is None else f"; {engine_ns:.1f} ns per transfer timed alone"
    return (f"of it, the wrappers and their queue (events counted, not processed: "
            f"MPI_OVERLAP_PROCESS=0) take {w['median_ns']:+.1f} ns by the median "
            f"(mean {w['added_ns']:+.1f}{_ns_interval(w)}{floor}) and the processing "
            f"{p['median_ns']:+.1f} ns (mean {p['added_ns']:+.1f}{_ns_interval(p)}{alone}), "
            f"over {c['pairs']} pairs")


# What the whole profiler may add per message with call sites on (issue 40, which restates
# issue 16's fixed 40 ns: that figure was chosen on one machine, and a machine whose clock
# reads cost more cannot meet it however lean the rest is): at most twice the floor
# measured in the same run, by the median over at least 8 pairs. The median, not the mean:
# a launch of mo_msgrate draws one of two paces for its whole length (Open MPI 60 or
# 130 ns a message), or is slowed by another process, and one such pair moves the mean
# by tens of ns while the other pairs agree within a few.
PER_MESSAGE_TARGET_FLOORS = 2.0
PER_MESSAGE_MIN_PAIRS = 8
TOO_FEW_FOR_MEDIAN = f"inconclusive (fewer than {PER_MESSAGE_MIN_PAIRS} pairs)"
READS_PER_CALL = 2  # every wrapper reads the clock at its entry and at its exit


def _median_verdict(median: float | None, pairs: int, target: float | None) -> str:
    """Issue 40's verdict on the median of the pairs against its target (ns): verdict()'s
    rule with the median as both ends of the interval, once there are enough pairs."""
    if target is not None and 0 < pairs < PER_MESSAGE_MIN_PAIRS:
        return TOO_FEW_FOR_MEDIAN
    return verdict(None if target is None else Target("<=", target), pairs, median, median)


def per_message_cost(result: dict[str, Any], ci: float = CI_LEVEL) -> dict[str, Any]:
    """The whole profiler's ns per message (on − without, per repetition) against the
    floor measured in the same run: rank 0's clock reads per message (two per call, calls
    from its profile) times one read's cost (timed by the library at MPI_Init); and of the
    added ns, what rank 0's reads of the computation's CPU clock cost per message."""
    added = _added(result, "on", "without")
    floors, reads, cpu_per_msg, cpu_reads = [], [], [], []
    for launch in result.get("launches") or []:
        prof, detail = launch.get("profile") or {}, launch.get("detail") or {}
        msgs, read_ns = detail.get("messages_total"), prof.get("clock_read_ns")
        if launch.get("program") != "msgrate" or not launch.get("profiled") \
                or not default_path(launch) or prof.get("status") != "complete" \
                or not isinstance(msgs, int) or msgs <= 0 or not read_ns:
            continue
        calls = int(prof.get("rank0_calls") or 0)
        floors.append(READS_PER_CALL * calls / msgs * float(read_ns))
        reads.append(float(read_ns))
        if prof.get("cpu_read_ns") and prof.get("cpu_reads") is not None:
            cpu_per_msg.append(int(prof["cpu_reads"]) * float(prof["cpu_read_ns"]) / msgs)
            cpu_reads.append(float(prof["cpu_read_ns"]))
    lo, hi = t_interval(added, ci)
    mean = float(np.mean(added)) if added else None
    median = float(np.median(added)) if added else None
    floor = float(np.median(floors)) if floors else None
    target = PER_MESSAGE_TARGET_FLOORS * floor if floor else None
    return {
        "pairs": len(added),
        "added_ns": mean,
        "median_ns": median,
        "ci95_low_ns": lo,
        "ci95_high_ns": hi,
        "floor_ns": floor,
        "clock_read_ns": float(np.median(reads)) if reads else None,
        "added_over_floor": mean / floor if mean is not None and floor else None,
        "median_over_floor": median / floor if median is not None and floor else None,
        "cpu_clock_ns": float(np.median(cpu_per_msg)) if cpu_per_msg else None,
        "cpu_read_ns": float(np.median(cpu_reads)) if cpu_reads else None,
        "target_floors": PER_MESSAGE_TARGET_FLOORS,
        "target_ns": target,
        "verdict": _median_verdict(median, len(added), target),
    }


def _ns_interval(m: dict[str, Any]) -> str:
    return (f" [{m['ci95_low_ns']:+.1f}, {m['ci95_high_ns']:+.1f}]"
            if m["ci95_low_ns"] is not None else "")


def per_message_sentence(m: dict[str, Any]) -> str:
    if m["added_ns"] is None:
        return "Per message: no pair of msgrate launches with and without the profiler"
    mean = f"mean {m['added_ns']:+.1f} ns{_ns_interval(m)}"
    cpu = ("" if m.get("cpu_clock_ns") is None else
           f"; its reads of the computation's CPU clock {m['cpu_clock_ns']:.2f} ns of it "
           f"({m['cpu_read_ns']:.0f} ns each)")
    median = m.get("median_ns")
    if m.get("target_floors") is None or median is None:
        # an analysis written before issue 40: the mean's interval against a fixed target
        floor = ("" if m["floor_ns"] is None else
                 f", {m['added_over_floor']:.1f}× the floor of {m['floor_ns']:.1f} ns (its "
                 f"clock reads, {m['clock_read_ns']:.1f} ns each)")
        return (f"the profiler adds {m['added_ns']:+.1f} ns{_ns_interval(m)} per 8-byte "
                f"message over {m['pairs']} pairs: {m['verdict']} (≤ {m['target_ns']:g} ns)"
                f"{floor}{cpu}")
    said = (f"the profiler adds {median:+.1f} ns per 8-byte message (the median of "
            f"{m['pairs']} pairs; {mean})")
    if m["floor_ns"] is None:  # the target is twice it
        return (f"{said}: {m['verdict']} (the library did not time its clock reads, so the "
                f"floor is not known){cpu}")
    return (f"{said}, {m['median_over_floor']:.1f}× the floor of {m['floor_ns']:.1f} ns (its "
            f"clock reads, {m['clock_read_ns']:.1f} ns each): {m['verdict']} (≤ "
            f"{m['target_floors']:g}× the floor, {m['target_ns']:.1f} ns, by the median of "
            f"{PER_MESSAGE_MIN_PAIRS} pairs or more){cpu}")


# Once per launch (issue 40, item 3: the cost in its parts): what each profiled launch
# paid whatever its length (profile/analysis/library_time.py), against the 50 ms at
# 2 ranks. The per-message part is per_message_cost's.
PER_LAUNCH_TARGET_S = 0.050


def per_launch_cost(result: dict[str, Any], ci: float = CI_LEVEL) -> dict[str, Any] | None:
    """The profiler's time once per launch over the complete profiled launches of the
    default path (both programs): library_time.over_launches with the verdict against
    PER_LAUNCH_TARGET_S. None for a run whose launches did not record it (runs from
    before it, the golden outputs among them)."""
    libs = []
    for launch in result.get("launches") or []:
        prof = launch.get("profile") or {}
        lib = prof.get("library_s")
        if launch.get("profiled") and default_path(launch) \
                and prof.get("status") == "complete" and isinstance(lib, dict):
            libs.append(lib)
    summary = over_launches(libs, ci)
    if summary is None:
        return None
    return {**summary, "target_s": PER_LAUNCH_TARGET_S,
            "verdict": verdict(Target("<=", PER_LAUNCH_TARGET_S), summary["launches"],
                               summary["ci95_low_s"], summary["ci95_high_s"])}


def per_launch_sentence(c: dict[str, Any]) -> str:
    return (f"once per launch the profiler takes {over_launches_words(c)}: {c['verdict']} "
            f"(≤ {c['target_s'] * 1e3:g} ms)")


ENGINE_FIELDS = ("ns_per_transfer", "ns_per_transfer_shared", "ns_per_call")


def engine_cost(result: dict[str, Any]) -> dict[str, Any] | None:
    """The event processing timed alone (the run's `engine`, measured before the launches),
    or None for a run without it (or with no figures in it)."""
    engine = result.get("engine")
    if not isinstance(engine, dict) or not all(
            isinstance(engine.get(k), (int, float)) for k in ENGINE_FIELDS):
        return None
    return {"callsites": bool(engine.get("callsites")),
            **{k: float(engine[k]) for k in ENGINE_FIELDS}}


def engine_sentence(e: dict[str, Any]) -> str:
    return (f"the event processing alone costs {e['ns_per_transfer']:.1f} ns per transfer "
            f"({e['ns_per_transfer_shared']:.1f} when a window's requests share one handle) "
            f"and {e['ns_per_call']:.1f} ns per call on the launching host (mop_engine_cost, "
            f"call sites {'on' if e['callsites'] else 'off'}): what each rank's processing of a "
            f"message costs before any of it hides in the MPI's waits")


def callsite_sentence(c: dict[str, Any]) -> str:
    if c["added_ns"] is None:
        return "Call sites: no pair of msgrate launches with them on and off"
    ci = _ns_interval(c)
    return (f"call sites add {c['added_ns']:+.1f} ns{ci} per 8-byte message over {c['pairs']} "
            f"pairs: {c['verdict']} (≤ {c['target_ns']:g} ns)")


def profile_summary(result: dict[str, Any]) -> dict[str, Any]:
    """How the profiled launches' profiles came out: complete or not, events, flushes."""
    profiled = [x for x in result.get("launches") or [] if x.get("profiled")]
    profiles = [x.get("profile") or {} for x in profiled]
    complete = sum(1 for p in profiles if p.get("status") == "complete")
    msg_launches = [x for x in profiled if x.get("program") == "msgrate"
                    and (x.get("profile") or {}).get("status") == "complete"]
    per_msg = []
    for x in msg_launches:
        msgs = (x.get("detail") or {}).get("messages_total")
        ev = (x.get("profile") or {}).get("rank0_events")
        if isinstance(msgs, int) and msgs > 0 and isinstance(ev, int):
            per_msg.append(ev / msgs)
    return {
        "launches": len(profiled),
        "complete": complete,
        "events": sum(int(p.get("events") or 0) for p in profiles),
        "flushes": sum(int(p.get("flushes") or 0) for p in profiles),
        "rank0_events_per_message": float(np.median(per_msg)) if per_msg else None,
        "clocks": sorted({str(p["clock"]) for p in profiles if p.get("clock")}),
    }


def _finding(metrics: list[dict[str, Any]]) -> str:
    """One sentence: each judged metric's ratio, interval and verdict (what the terminal's
    table shows), so that summaries and the HTML findings say it too."""
    parts = []
    for m in metrics:
        if m["target"] is None:
            continue
        if m["geomean"] is None:
            parts.append(f"{m['title']}: no complete pair ({m['reason']})")
            continue
        ci = (f" [{m['ci95_low']:.3f}, {m['ci95_high']:.3f}]"
              if m["ci95_low"] is not None and m["ci95_high"] is not None else "")
        parts.append(f"{m['title']} with/without the profiler {m['geomean']:.3f}{ci} over "
                     f"{m['n']} pairs: {m['verdict']}")
    return "; ".join(parts) or "no metric was judged"


def analyze_profiler_overhead(result: dict[str, Any], ci: float = CI_LEVEL) -> dict[str, Any]:
    metrics = [analyze_metric(result, spec, ci) for spec in METRICS]
    callsites = analyze_callsites(result, ci)
    idle = analyze_idle(result, ci)
    per_message = per_message_cost(result, ci)
    finding = _finding(metrics)
    if per_message["pairs"]:
        finding += "; " + per_message_sentence(per_message)
    if callsites["pairs"]:
        finding += "; " + callsite_sentence(callsites)
    if idle["pairs"]:
        finding += "; " + idle_sentence(idle)
    engine = engine_cost(result)
    split = analyze_split(result, per_message["floor_ns"],
                          None if engine is None else engine["ns_per_transfer"], ci)
    if split["pairs"]:
        finding += "; " + split_sentence(split)
    if engine is not None:
        finding += "; " + engine_sentence(engine)
    per_launch = per_launch_cost(result, ci)
    if per_launch is not None:
        finding += "; " + per_launch_sentence(per_launch)
    out = {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "profiler-overhead",
        "method": {
            "name": "paired-ratio",
            "ratio": "with profiler / without profiler, per repetition",
            "estimate": "geometric mean of the ratios (median also given)",
            "interval": "Student-t on the log ratios, exponentiated",
            "ci": ci,
        },
        "metrics": metrics,
        "profiles": profile_summary(result),
        "callsites": callsites,
        "idle": idle,
        "per_message": per_message,
        "finding": finding,
        "figures": [figure(f"{m['name']}_ratio", f"{m['title']}, with / without profiler",
                           m["geomean"], "ratio", "cost", ci=(m["ci95_low"], m["ci95_high"]),
                           pairs=m["n"], disturbed=m["n"] - m["quiet"]["n"])
                    for m in metrics if m["target"] is not None],
    }
    if engine is not None:  # runs made before it have none, and their analysis stays
        out["engine"] = engine
    if per_launch is not None:  # likewise
        out["per_launch"] = per_launch
    if split["pairs"]:  # likewise: runs before it have no launch with events unprocessed
        out["split"] = split
    if "apps" in result:  # --apps only
        # each app's launch with the profiler, and the one without it where the run made
        # one (the instrument's null check; runs before it have none)
        nulls = {(a["program"], a["mode"]): a for a in result["apps"]
                 if a.get("profiled") is False}
        out["apps"] = [analyze_app_cost(a, ci, nulls.get((a["program"], a["mode"])))
                       for a in result["apps"] if a.get("profiled", True)]
        for a in out["apps"]:
            finding += "; " + app_cost_sentence(a)
            out["figures"].append(app_cost_figure(a))
        out["finding"] = finding
    return out
