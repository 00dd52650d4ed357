"""Analysis of a progress run (Strohbeen's miniGhost check): did a message's data reach the
receive buffer while neither rank called MPI?

Per size, ordering (sender-first, receiver-first) and sender mode (computes: no MPI call
on either side; waits: the sender sits in MPI_Wait), over the samples:
  verdict "yes"    all watched positions held the payload before MPI_Wait in at least
                   YES_SHARE of the samples,
          "no"     not one watched position in any sample,
          "partly" anything between (some samples, or only part of the buffer);
  arrival          median time after posting the receive at which all watched positions
                   held the payload (samples where it did).
Compute slowdown: the watch loop's time per work chunk with the message in flight /
the same loop with no message (the dry samples of the same size) - 1; and the dry loop
against the fastest calibration sample of the work loop (what a progress thread sharing
the core costs: it slows the dry loop too). docs/benchmarks.md, section progress.
"""

from __future__ import annotations

from typing import Any

from ...analysis.figures import figure
from ...analysis.stats import median_or_none
from ...core.sizes import format_size

YES_SHARE = 0.85  # "≥ ~90 %": 6 of 7 samples (--quick) fall just short of 0.9
REALISTIC = "computes"  # the sender mode in which neither rank calls MPI


def verdict_of(fractions: list[float], arrived: list[bool]) -> tuple[str, float]:
    """(verdict, share of samples in which everything arrived) from the samples' watched
    fractions at the end of watching and whether all arrived before MPI_Wait."""
    n = len(arrived)
    if n == 0:
        return "none", 0.0
    share = sum(arrived) / n
    if share >= YES_SHARE:
        return "yes", share
    if share == 0 and all(f == 0 for f in fractions):
        return "no", share
    return "partly", share


def _loop_ns_per_chunk(samples: list[dict[str, Any]]) -> float | None:
    chunks = sum(s.get("chunks") or 0 for s in samples)
    elapsed = sum(s.get("elapsed_ns") or 0.0 for s in samples)
    return elapsed / chunks if chunks > 0 else None


def _case(c: dict[str, Any], dry_ns: float | None, budget_ns: float) -> dict[str, Any]:
    samples = c.get("samples") or []
    fractions = [float(s.get("fraction") or 0.0) for s in samples]
    arrived = [s.get("arrived_ns") is not None for s in samples]
    verdict, share = verdict_of(fractions, arrived)
    times = [s["arrived_ns"] for s in samples if s.get("arrived_ns") is not None]
    firsts = [s["first_ns"] for s in samples if s.get("first_ns") is not None]
    waits = [s["wait_ns"] for s in samples if s.get("wait_ns") is not None]
    loop = _loop_ns_per_chunk(samples)
    arrival = median_or_none(times)
    return {
        "ordering": c.get("ordering"),
        "sender": c.get("sender"),
        "n": len(samples),
        "arrived_samples": sum(arrived),
        "partial_samples": sum(1 for f in fractions if 0 < f < 1),
        "arrived_share": share,
        "mean_fraction": sum(fractions) / len(fractions) if fractions else None,
        "verdict": verdict,
        "arrival_us": arrival / 1e3 if arrival is not None else None,
        "arrival_max_us": max(times) / 1e3 if times else None,
        "first_us": median_or_none(firsts) / 1e3 if firsts else None,
        "wait_us": median_or_none(waits) / 1e3 if waits else None,
        "budget_us": budget_ns / 1e3,
        "compute_slowdown_pct": (loop / dry_ns - 1) * 100 if loop and dry_ns else None,
    }


def _async_setting(info: dict[str, Any]) -> tuple[bool | None, str]:
    """Whether the MPI reports asynchronous progress on, and the words that say so: an
    `*async_progress*` control variable first (MPICH, Intel MPI), else any other progress
    thread switch read back (Open MPI's btl_tcp_progress_thread), else the environment."""
    cvars = [c for c in info.get("cvars") or [] if c.get("value") is not None]
    for pick in (lambda n: "async_progress" in n, lambda n: True):
        named = [c for c in cvars if pick(str(c.get("name") or "").lower())]
        on = [c for c in named if c["value"]]
        if on or named:
            c = (on or named)[0]
            return bool(c["value"]), f"{c['name']}={c['value']}"
    for e in info.get("env") or []:
        name, _, value = str(e).partition("=")
        if "async_progress" in name.lower():
            on = value.strip().lower() not in ("", "0", "false", "no", "off")
            return on, f"{name}={value} (environment; no control variable read back)"
    return None, "no asynchronous-progress setting reported"


def _ranges(rows: list[tuple[int, str]]) -> str:
    """'no 1 KiB–64 KiB, yes 1 MiB–4 MiB' from (size, verdict) in size order."""
    parts: list[str] = []
    i = 0
    while i < len(rows):
        j = i
        while j + 1 < len(rows) and rows[j + 1][1] == rows[i][1]:
            j += 1
        lo, hi = format_size(rows[i][0]), format_size(rows[j][0])
        parts.append(f"{rows[i][1]} {lo}" + ("" if i == j else f"–{hi}"))
        i = j + 1
    return ", ".join(parts)


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    res = result.get("results") or {}
    work = ((result.get("harness") or {}).get("work")) or {}
    fastest = ((work.get("calibration") or {}).get("max"))
    points = []
    for p in sorted(res.get("points") or [], key=lambda p: p["size"]):
        dry = _loop_ns_per_chunk((p.get("dry") or {}).get("samples") or [])
        budget = float(p.get("budget_ns") or 0.0)
        cases = [_case(c, dry, budget) for c in p.get("cases") or []]
        nominal = p["chunk_units"] / fastest * 1e3 if fastest else None  # ns per chunk
        points.append({
            "size": p["size"],
            "transfer_us": p["transfer_ns"] / 1e3 if p.get("transfer_ns") is not None else None,
            "budget_us": budget / 1e3,
            "chunk_us": p["chunk_ns"] / 1e3 if p.get("chunk_ns") is not None else None,
            "dry_chunk_us": dry / 1e3 if dry else None,
            "dry_slowdown_pct": (dry / nominal - 1) * 100 if dry and nominal else None,
            "data_errors": p.get("data_errors", 0),
            "cases": cases,
        })

    info = res.get("async_progress") or {}
    on, setting = _async_setting(info)
    threads = info.get("threads_in_process")
    level = info.get("thread_level")

    def case(pt: dict[str, Any], ordering: str, sender: str = REALISTIC) -> dict[str, Any]:
        return next((c for c in pt["cases"] if c["ordering"] == ordering and c["sender"] == sender),
                    {})

    summary = {}
    for ordering in ("receiver-first", "sender-first"):
        rows = [(pt["size"], case(pt, ordering).get("verdict", "none")) for pt in points]
        summary[ordering] = _ranges(rows)
    small = points[0] if points else None
    large = points[-1] if points else None
    large_rf = case(large, "receiver-first") if large else {}
    large_sf = case(large, "sender-first") if large else {}
    slow = [c["compute_slowdown_pct"] for pt in points for c in pt["cases"]
            if c["sender"] == REALISTIC and c["compute_slowdown_pct"] is not None]
    dry_slow = [pt["dry_slowdown_pct"] for pt in points if pt["dry_slowdown_pct"] is not None]
    latency = small["transfer_us"] if small else None
    compute_slowdown = median_or_none(slow)
    dry_slowdown = median_or_none(dry_slow)

    explanation = _explain(on, setting, threads, level, large, large_rf, latency,
                           small["size"] if small else None, dry_slowdown)
    if points:
        arr = large_rf.get("arrival_us")
        finding = (
            f"without MPI calls (sender computing) the data arrived before MPI_Wait: "
            f"receiver-first {summary['receiver-first']}; sender-first {summary['sender-first']}"
            + (f"; {format_size(large['size'])} receiver-first after {arr:.0f} us median"
               if arr is not None else "")
            + f" ({setting}; {format_size(small['size'])} one-way {latency:.1f} us)"
        )
    else:
        finding = "no sizes measured"

    def pct(c: dict[str, Any]) -> float | None:
        return c["arrived_share"] * 100 if c else None

    lbl = format_size(large["size"]) if large else "largest size"
    figures = [
        figure("arrived_large_receiver_first_pct",
               f"all data before MPI_Wait, {lbl} receiver-first (% of samples)",
               pct(large_rf), "%", "overlap"),
        figure("arrived_large_sender_first_pct",
               f"all data before MPI_Wait, {lbl} sender-first (% of samples)",
               pct(large_sf), "%", "overlap"),
        figure("arrived_small_receiver_first_pct",
               (f"all data before MPI_Wait, {format_size(small['size'])} receiver-first "
                "(% of samples)") if small else "smallest size receiver-first",
               pct(case(small, "receiver-first")) if small else None, "%", "overlap"),
        *(figure(f"largest_arrived_{key}_bytes",
                 f"largest size with data before MPI_Wait, {ordering}",
                 max((float(pt["size"]) for pt in points
                      if case(pt, ordering).get("verdict") in ("yes", "partly")),
                     default=None),
                 "B", "info")
          for key, ordering in (("receiver_first", "receiver-first"),
                                ("sender_first", "sender-first"))),
        figure("arrival_large_receiver_first_us",
               f"arrival after posting, {lbl} receiver-first (median)",
               large_rf.get("arrival_us"), "us", "info"),
        # Labels name the quantity only: the settings matrix shows one label per row for
        # every variant, so run-specific text (the setting's value) belongs in the value.
        figure("async_progress_setting", "asynchronous progress reported by the MPI (1 = on)",
               None if on is None else float(on), "", "info"),
        figure("latency_small_us",
               f"one-way ping-pong time, {format_size(small['size'])}" if small
      else "one-way ping-pong time",
               latency, "us", "cost"),
        figure("compute_slowdown_pct", "compute slowdown, message in flight vs dry loop (median)",
               compute_slowdown, "%", "cost"),
        figure("dry_slowdown_pct", "dry work loop vs fastest calibration sample (median)",
               dry_slowdown, "%", "cost"),
    ]
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": "progress",
        "yes_share": YES_SHARE,
        "points": points,
        "verdict_ranges": summary,
        "async_progress": {"enabled": on, "setting": setting, "threads_in_process": threads,
                           "thread_level": level, "cvars": info.get("cvars") or [],
                           "env": info.get("env") or []},
        "explanation": explanation,
        "finding": finding,
        "figures": figures,
    }


def _explain(on: bool | None, setting: str, threads: Any, level: Any,
             large: dict[str, Any] | None, rf: dict[str, Any], latency: float | None,
             small_size: int | None, dry_slowdown: float | None) -> str | None:
    """Why the large-message verdict (receiver-first, sender computing) is what it is,
    from the measured numbers."""
    if not large or not rf:
        return None
    size = format_size(large["size"])
    budget = large["budget_us"]
    cost = []
    if latency is not None and small_size is not None:
        cost.append(f"{format_size(small_size)} one-way time {latency:.1f} us")
    if dry_slowdown is not None:
        cost.append(f"dry work loop {dry_slowdown:+.0f} % against the fastest calibration sample")
    ctx = (f"{setting}; thread level {level}; threads in the process: {threads}"
           + (f"; {', '.join(cost)}" if cost else ""))
    v = rf["verdict"]
    if v in ("yes", "partly"):
        when = (f"median {rf['arrival_us']:.0f} us after posting, " if rf.get("arrival_us")
                is not None else "")
        return (f"{size} receiver-first: all data arrived before MPI_Wait in "
                f"{rf['arrived_samples']} of {rf['n']} samples, part of it in "
                f"{rf['partial_samples']} more ({when}budget {budget:.0f} us) while neither "
                f"rank called MPI, so something outside the application's MPI calls moved it "
                f"({ctx})")
    if on:
        return (f"asynchronous progress is on but no {size} data arrived within the "
                f"{budget:.0f} us budget (transfer {large['transfer_us']:.0f} us) in "
                f"{rf['n']} samples ({ctx}); a progress thread that shares the computing "
                f"rank's core gets the CPU only when the scheduler preempts the computation")
    return (f"no {size} data arrived within the {budget:.0f} us budget (transfer "
            f"{large['transfer_us']:.0f} us) in {rf['n']} samples: the MPI moves data only "
            f"inside MPI calls ({ctx})")
