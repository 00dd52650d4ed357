"""The profiler-overhead analysis on synthetic numbers: paired ratios, their geometric
mean and t interval on the log scale, verdicts against both kinds of target, pairs left
out when a launch failed or its profile is incomplete; the documents validate against
their schemas; the launch order alternates; the report renders from a run directory."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from mpi_overlap.analysis.stats import ratio_ci, t_quantile
from mpi_overlap.benchmarks.profiler_overhead.analysis import (
    METRICS,
    analyze_profiler_overhead,
    per_message_sentence,
)
from mpi_overlap.benchmarks.profiler_overhead.report import cost_lines, extent
from mpi_overlap.benchmarks.profiler_overhead.run import (
    IDLE_OTHER,
    launch_dir_name,
    measure_engine_cost,
    order,
)
from mpi_overlap.benchmarks.profiler_overhead.verdicts import (
    MEETS,
    MISSES,
    NO_DATA,
    NO_TARGET,
    SPANS,
    TOO_FEW,
    Target,
    verdict,
)
from mpi_overlap.core.documents import analysis_errors, result_errors
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import ANALYSIS_FILE, RESULT_FILE, RUN_FILE, load_run, write_json_atomic

RATE_TARGET, TIME_TARGET = Target(">=", 0.95), Target("<=", 1.01)


# ---------------------------------------------------------------- ratio_ci and verdict


def test_ratio_ci_is_the_t_interval_of_the_log_ratios() -> None:
    ratios = [0.97, 0.99, 0.96, 1.00, 0.98]
    geo, lo, hi = ratio_ci(ratios)
    logs = np.log(ratios)
    half = t_quantile(0.975, 4) * logs.std(ddof=1) / math.sqrt(5)
    assert geo == pytest.approx(math.exp(logs.mean()))
    assert lo == pytest.approx(math.exp(logs.mean() - half))
    assert hi == pytest.approx(math.exp(logs.mean() + half))
    assert lo < geo < hi


def test_ratio_ci_is_symmetric_in_slowdown_and_speedup() -> None:
    geo, lo, hi = ratio_ci([2.0, 0.5])
    assert geo == pytest.approx(1.0)
    assert lo * hi == pytest.approx(1.0)


def test_ratio_ci_degenerate_inputs() -> None:
    assert ratio_ci([]) == (None, None, None)
    assert ratio_ci([1.02]) == (pytest.approx(1.02), None, None)
    geo, lo, hi = ratio_ci([1.005, 1.005, 1.005])  # no spread: the interval collapses
    assert geo == lo == hi == pytest.approx(1.005)
    assert ratio_ci([0.0, -1.0, float("nan")]) == (None, None, None)  # nothing usable


@pytest.mark.parametrize(
    ("target", "lo", "hi", "expected"),
    [
        (RATE_TARGET, 0.96, 0.99, MEETS),
        (RATE_TARGET, 0.95, 0.99, MEETS),  # the bound itself meets a >= target
        (RATE_TARGET, 0.90, 0.94, MISSES),
        (RATE_TARGET, 0.93, 0.97, SPANS),
        (TIME_TARGET, 1.000, 1.008, MEETS),
        (TIME_TARGET, 1.000, 1.010, MEETS),
        (TIME_TARGET, 1.02, 1.05, MISSES),
        (TIME_TARGET, 1.005, 1.02, SPANS),
    ],
)
def test_verdict_compares_the_whole_interval(target: Target, lo: float, hi: float,
                                             expected: str) -> None:
    assert verdict(target, 5, lo, hi) == expected


def test_verdict_without_enough_data() -> None:
    assert verdict(RATE_TARGET, 0, None, None) == NO_DATA
    assert verdict(RATE_TARGET, 1, None, None) == TOO_FEW
    assert verdict(None, 5, 0.9, 1.1) == NO_TARGET


# ---------------------------------------------------------------- synthetic run documents


def _launch(rep: int, program: str, profiled: bool, value: float | None, *,
            status: str = "complete", profile_status: str = "complete",
            elapsed: float = 2.0, disturbed: bool = False,
            callsites: bool = True, idle: str | None = None,
            process: bool = True) -> dict[str, Any]:
    profile = None
    if profiled:
        profile = {"status": profile_status, "ranks_expected": 2,
                   "ranks_complete": 2 if profile_status == "complete" else 1,
                   "events": 1000, "flushes": 3, "rank0_events": 600, "clock": "tsc",
                   "warnings": []}
    detail: dict[str, Any] = {"messages_total": 200} if program == "msgrate" else {}
    return {
        "rep": rep, "program": program, "profiled": profiled,
        "callsites": callsites if profiled else None, "idle": idle,
        "process": process if profiled else None,
        "position": order(max(rep, 1)).index((program, profiled, callsites, idle, process)),
        "dir": launch_dir_name(rep, program, profiled, callsites, idle, process),
        "command": ["mpiexec", "-n", "2", "x"],
        "status": status, "returncode": 0 if status == "complete" else 1,
        "message": None if status == "complete" else "exited with status 1",
        "elapsed_s": elapsed, "value": value, "detail": detail, "profile": profile,
        "host": {"cpus": 2, "busy_cpu_s": 2 * elapsed, "own_cpu_s": 1.9 * elapsed,
                 "foreign_cpu_s": (0.3 if disturbed else 0.0) * elapsed, "steal_s": 0.0,
                 "foreign_share": 0.15 if disturbed else 0.0},
        "disturbed": disturbed,
    }


def _result(rates: list[tuple[float, float]], times: list[tuple[float, float]],
            **overrides: Any) -> dict[str, Any]:
    launches = []
    for rep, ((r0, r1), (t0, t1)) in enumerate(zip(rates, times, strict=True), start=1):
        launches += [
            _launch(rep, "msgrate", False, r0), _launch(rep, "msgrate", True, r1),
            _launch(rep, "compute_app", False, t0, elapsed=t0 + 0.5),
            _launch(rep, "compute_app", True, t1, elapsed=t1 + 0.52),
        ]
    program = {"executable": "/x", "args": [], "metric": "msgs_per_s", "unit": "msgs/s",
               "better": "higher"}
    doc = {
        "schema": "mpi-overlap/profiler-overhead-run", "schema_version": 1,
        "benchmark": "profiler-overhead", "status": "complete", "toolchain": "mpich",
        "ranks": 2, "reps": len(rates), "quick": True, "library": "/lib.so",
        "table": "/t.table",
        "programs": {"msgrate": program,
                     "compute_app": {**program, "metric": "run_time_s", "unit": "s",
                                     "better": "lower"}},
        "warmup": None, "launches": launches, "provenance": None, "warnings": [],
    }
    doc.update(overrides)
    return doc


def _metric(analysis: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in analysis["metrics"] if m["name"] == name)


RATES_GOOD = [(1.0e6, 0.99e6), (1.02e6, 1.0e6), (0.98e6, 0.975e6), (1.01e6, 1.0e6),
              (1.0e6, 0.985e6)]
TIMES_GOOD = [(3.0, 3.003), (3.01, 3.012), (2.99, 2.995), (3.0, 3.004), (3.02, 3.021)]


def test_analysis_of_a_clean_run_meets_both_targets() -> None:
    result = _result(RATES_GOOD, TIMES_GOOD)
    assert result_errors(result) == []
    analysis = analyze_profiler_overhead(result)
    assert analysis_errors(analysis) == []
    rate, time = _metric(analysis, "msg_rate"), _metric(analysis, "run_time")
    assert rate["n"] == time["n"] == 5
    expected = [w / wo for wo, w in RATES_GOOD]
    assert [p["ratio"] for p in rate["pairs"]] == pytest.approx(expected)
    assert rate["median"] == pytest.approx(float(np.median(expected)))
    assert rate["verdict"] == MEETS and time["verdict"] == MEETS
    assert rate["overhead_pct"] == pytest.approx(100 * (1 - rate["geomean"]))
    # the rank-based estimate beside it; 5 pairs are too few for its 95 % interval
    assert rate["rank_estimate"] == pytest.approx(float(np.median(expected)), rel=0.01)
    assert rate["rank_ci95_low"] is None and rate["rank_ci95_high"] is None
    # nothing disturbed: the undisturbed estimate is the same
    assert {k: rate["quiet"][k] for k in ("n", "geomean", "verdict")} == {
        k: rate[k] for k in ("n", "geomean", "verdict")}
    assert time["overhead_pct"] == pytest.approx(100 * (time["geomean"] - 1))
    assert _metric(analysis, "launch_time")["verdict"] == NO_TARGET
    prof = analysis["profiles"]
    assert prof == {"launches": 10, "complete": 10, "events": 10000, "flushes": 30,
                    "rank0_events_per_message": 3.0, "clocks": ["tsc"]}
    # the finding says what the table shows: each judged ratio, its interval, the verdict
    assert analysis["finding"] == "; ".join(
        f"{m['title']} with/without the profiler {m['geomean']:.3f} "
        f"[{m['ci95_low']:.3f}, {m['ci95_high']:.3f}] over 5 pairs: {MEETS}"
        for m in (rate, time)) + "; " + per_message_sentence(analysis["per_message"])


def test_a_clear_slowdown_misses_and_noise_is_inconclusive() -> None:
    slow = _result([(1e6, 0.80e6), (1e6, 0.82e6), (1e6, 0.79e6)],
                   [(3.0, 3.3), (3.0, 3.31), (3.0, 3.29)])
    a = analyze_profiler_overhead(slow)
    assert _metric(a, "msg_rate")["verdict"] == MISSES
    assert _metric(a, "run_time")["verdict"] == MISSES
    noisy = _result([(1e6, 0.90e6), (1e6, 1.05e6), (1e6, 0.97e6)],
                    [(3.0, 2.95), (3.0, 3.09), (3.0, 3.01)])
    a = analyze_profiler_overhead(noisy)
    assert _metric(a, "msg_rate")["verdict"] == SPANS
    assert _metric(a, "run_time")["verdict"] == SPANS


def test_pairs_with_a_failed_launch_or_incomplete_profile_are_left_out() -> None:
    result = _result(RATES_GOOD[:3], TIMES_GOOD[:3])
    launches = result["launches"]
    # rep 1: the profiled msgrate launch failed; rep 2: its profile is incomplete
    launches[1] = _launch(1, "msgrate", True, None, status="failed")
    launches[5] = _launch(2, "msgrate", True, 0.99e6, profile_status="incomplete")
    assert result_errors(result) == []
    a = analyze_profiler_overhead(result)
    rate = _metric(a, "msg_rate")
    assert [p["rep"] for p in rate["pairs"]] == [3]
    assert [e["rep"] for e in rate["excluded"]] == [1, 2]
    assert "failed" in rate["excluded"][0]["reason"]
    assert "profile incomplete" in rate["excluded"][1]["reason"]
    assert rate["verdict"] == TOO_FEW and rate["median"] is not None
    assert _metric(a, "run_time")["n"] == 3
    assert a["profiles"]["complete"] == 5 and a["profiles"]["launches"] == 6
    assert analysis_errors(a) == []


def test_disturbed_pairs_are_estimated_apart() -> None:
    # two pairs hit by other work (a launch each) show a large, spurious slowdown
    result = _result(RATES_GOOD, TIMES_GOOD)
    for i in (2, 3 * 4 + 3):  # rep 1 compute_app without, rep 4 compute_app with
        launch = result["launches"][i]
        result["launches"][i] = _launch(launch["rep"], launch["program"], launch["profiled"],
                                        launch["value"] * (0.7 if i == 2 else 1.4),
                                        disturbed=True)
    assert result_errors(result) == []
    a = analyze_profiler_overhead(result)
    assert analysis_errors(a) == []
    t = _metric(a, "run_time")
    assert [p["disturbed"] for p in t["pairs"]] == [True, False, False, True, False]
    assert t["n"] == 5 and t["verdict"] in (SPANS, MISSES)
    q = t["quiet"]
    assert q["n"] == 3 and q["verdict"] == MEETS
    expected = [w / wo for (wo, w), d in zip(TIMES_GOOD, (1, 0, 0, 1, 0), strict=True) if not d]
    assert q["median"] == pytest.approx(float(np.median(expected)))
    assert "2 disturbed pair(s) left out" in q["reason"]
    # the message rate pairs were not disturbed
    assert _metric(a, "msg_rate")["quiet"]["n"] == 5


def test_no_launch_at_all() -> None:
    a = analyze_profiler_overhead(_result([], [], status="incomplete"))
    assert all(m["n"] == 0 for m in a["metrics"])
    assert _metric(a, "msg_rate")["verdict"] == NO_DATA
    assert _metric(a, "msg_rate")["geomean"] is None
    assert analysis_errors(a) == []


def test_schema_rejects_a_malformed_run_document() -> None:
    """Each fault is one line that says where (the model stops at the first)."""
    result = _result(RATES_GOOD[:2], TIMES_GOOD[:2])
    result["launches"][0]["program"] = "nbody"
    (error,) = result_errors(result)
    assert error.startswith("launches/0/program: ")
    result = _result(RATES_GOOD[:2], TIMES_GOOD[:2])
    del result["launches"][1]["profile"]
    (error,) = result_errors(result)
    assert error.startswith("launches/1: ") and "`profile`" in error


def test_metrics_cover_both_targets() -> None:
    targets = {m.name: m.target for m in METRICS}
    assert targets["msg_rate"] == Target(">=", 0.95)
    assert targets["run_time"] == Target("<=", 1.01)


# ---------------------------------------------------------------- order and report


def test_order_alternates_so_drift_cancels() -> None:
    first, second = order(1), order(2)
    assert first == second[::-1]
    assert set(first) == set(second) and len(set(first)) == len(first) == 7
    # over two repetitions every launch has the mean position of its partners
    on = ("msgrate", True, True, None, True)
    for a, b in ((("msgrate", False, True, None, True), on),
                 (on, ("msgrate", True, False, None, True)),
                 (on, ("msgrate", True, True, IDLE_OTHER, True)),
                 (on, ("msgrate", True, True, None, False)),
                 (("compute_app", False, True, None, True),
                  ("compute_app", True, True, None, True))):
        assert first.index(a) + second.index(a) == first.index(b) + second.index(b)


def test_call_sites_cost_is_the_ns_per_message_between_on_and_off() -> None:
    """msgrate per repetition: without 1e6 msgs/s (1000 ns), profiler with call sites on
    and off: 1000 + 100 + d ns against 1000 + 100 ns, d = 4, 6, 5 ns."""
    result = _result(RATES_GOOD[:3], TIMES_GOOD[:3])
    for rep, d in ((1, 4.0), (2, 6.0), (3, 5.0)):
        for x in result["launches"]:
            if x["rep"] == rep and x["program"] == "msgrate":
                x["value"] = 1e9 / (1100.0 + d) if x["profiled"] else 1e6
        result["launches"].append(_launch(rep, "msgrate", True, 1e9 / 1100.0,
                                          callsites=False))
    a = analyze_profiler_overhead(result)
    assert analysis_errors(a) == []
    c = a["callsites"]
    assert c["pairs"] == 3 and c["added_ns"] == pytest.approx(5.0)
    assert c["ci95_low_ns"] < 5.0 < c["ci95_high_ns"]
    assert c["verdict"] == "inconclusive (CI spans the target)"
    assert a["per_message"]["added_ns"] == pytest.approx(105.0)
    assert "call sites add +5.0 ns" in a["finding"]
    # the msgrate ratio is still the call-sites-on launch against the one without
    assert _metric(a, "msg_rate")["n"] == 3


@pytest.mark.parametrize(("diffs", "verdict"), [
    ((12.0, 15.0, 11.0), "default no worse"),
    ((-30.0, -26.0, -33.0), "the other setting is cheaper"),
    ((-5.0, 6.0, 1.0), "not resolved"),
])
def test_the_other_idle_setting_is_priced_against_the_default(diffs: tuple[float, ...],
                                                               verdict: str) -> None:
    """msgrate per repetition: the default profiled launch 1100 ns a message, the one at
    MPI_OVERLAP_IDLE=IDLE_OTHER 1100 + d: the default path is no worse where every d's
    interval lies at or above 0 (issue 40's acceptance), the other is cheaper below it."""
    result = _result(RATES_GOOD[:3], TIMES_GOOD[:3])
    for rep, d in enumerate(diffs, start=1):
        for x in result["launches"]:
            if x["rep"] == rep and x["program"] == "msgrate":
                x["value"] = 1e9 / 1100.0 if x["profiled"] else 1e6
        result["launches"].append(_launch(rep, "msgrate", True, 1e9 / (1100.0 + d),
                                          idle=IDLE_OTHER))
    a = analyze_profiler_overhead(result)
    assert analysis_errors(a) == []
    idle = a["idle"]
    assert idle["setting"] == f"MPI_OVERLAP_IDLE={IDLE_OTHER}" and idle["pairs"] == 3
    assert idle["added_ns"] == pytest.approx(sum(diffs) / 3, abs=0.01)
    assert idle["verdict"] == verdict and verdict in a["finding"]
    # the whole profiler's figures stay the default launch's
    assert a["per_message"]["added_ns"] == pytest.approx(100.0)
    assert _metric(a, "msg_rate")["n"] == 3


def test_the_cost_in_the_run_splits_into_wrappers_and_processing() -> None:
    """msgrate per repetition: without 1000 ns a message, events counted but not processed
    1000 + w, the default 1000 + w + p (w = 30, 32, 31; p = 40, 38, 42): the wrappers' part is
    w, the processing's p, and neither the unprocessed launch nor its pairs enter the whole
    profiler's figures."""
    result = _result(RATES_GOOD[:3], TIMES_GOOD[:3])
    for rep, w, p in ((1, 30.0, 40.0), (2, 32.0, 38.0), (3, 31.0, 42.0)):
        for x in result["launches"]:
            if x["rep"] == rep and x["program"] == "msgrate":
                x["value"] = 1e9 / (1000.0 + w + p) if x["profiled"] else 1e6
        result["launches"].append(_launch(rep, "msgrate", True, 1e9 / (1000.0 + w),
                                          process=False))
    a = analyze_profiler_overhead(result)
    assert analysis_errors(a) == [] and result_errors(result) == []
    split = a["split"]
    assert split["pairs"] == 3
    assert split["wrappers"]["added_ns"] == pytest.approx(31.0, abs=0.01)
    assert split["wrappers"]["median_ns"] == pytest.approx(31.0, abs=0.01)
    assert split["processing"]["added_ns"] == pytest.approx(40.0, abs=0.01)
    assert split["processing"]["ci95_low_ns"] < 40.0 < split["processing"]["ci95_high_ns"]
    assert a["per_message"]["median_ns"] == pytest.approx(70.0, abs=0.01)  # 70, 70, 73
    assert _metric(a, "msg_rate")["n"] == 3
    assert "the wrappers and their queue" in a["finding"] and "+40.0 ns" in a["finding"]


def test_a_run_without_the_unprocessed_launch_has_no_split() -> None:
    a = analyze_profiler_overhead(_result(RATES_GOOD, TIMES_GOOD))
    assert "split" not in a and "queue" not in a["finding"]


def test_a_run_without_the_idle_launch_says_it_was_not_measured() -> None:
    a = analyze_profiler_overhead(_result(RATES_GOOD, TIMES_GOOD))
    assert a["idle"]["pairs"] == 0 and a["idle"]["verdict"] == "not measured"
    assert "IDLE" not in a["finding"]


def _run_dir(tmp_path: Path, result: dict[str, Any]) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    write_json_atomic(run_dir / RESULT_FILE, result)
    write_json_atomic(run_dir / ANALYSIS_FILE, analyze_profiler_overhead(result))
    write_json_atomic(run_dir / RUN_FILE, {
        "schema": "mpi-overlap/run", "schema_version": 1, "benchmark": "profiler-overhead",
        "run_id": "run", "toolchain": {"name": "mpich", "kind": "wheel",
                                       "mpi_library_version": "MPICH", "mpicc": "mpicc",
                                       "mpiexec": "mpiexec"},
        "ranks": 2, "command": ["mpi-overlap"], "started_utc": "x", "finished_utc": "y",
        "elapsed_s": 1.0, "status": "complete", "returncode": 0, "message": None})
    return run_dir


def test_report_renders_from_a_run_directory(tmp_path: Path) -> None:
    from mpi_overlap.commands.reporting import make_report

    run = load_run(_run_dir(tmp_path, _result(RATES_GOOD, TIMES_GOOD)))
    assert run.complete
    console = Console(record=True, width=200)
    paths = make_report([run], tmp_path / "out", console=console)
    text = console.export_text()
    assert "meets target" in text and "pairs per repetition" in text
    html = paths.html.read_text()
    assert "ratio per repetition" in html and "<svg" in html
    assert "10 of 10 profiled launches complete" in html
    assert "undisturbed" not in text  # nothing was disturbed: one row per metric
    assert extent(run) == "5 of 5 repetitions complete"
    run.result["launches"][-1]["status"] = "failed"
    assert extent(run) == "4 of 5 repetitions complete"


def test_report_shows_undisturbed_pairs_apart(tmp_path: Path) -> None:
    from mpi_overlap.commands.reporting import make_report

    result = _result(RATES_GOOD, TIMES_GOOD)
    launch = result["launches"][0]
    result["launches"][0] = _launch(1, "msgrate", False, launch["value"], disturbed=True)
    run = load_run(_run_dir(tmp_path, result))
    console = Console(record=True, width=220)
    paths = make_report([run], tmp_path / "out", console=console)
    text = console.export_text()
    assert "undisturbed" in text and "rate w/o" in text
    assert "4 undisturbed pairs" in paths.html.read_text()


def _per_message(added: list[float], read_ns: float | None = 10.0) -> dict[str, Any]:
    """A run whose msgrate launches without the profiler take 1000 ns a message and with it
    1000 + added[i] ns in repetition i + 1; rank 0 made 210 calls for 200 messages, one
    clock read costing read_ns: the floor is 2 x 210/200 x 10 = 21 ns a message."""
    n = len(added)
    result = _result((RATES_GOOD * 2)[:n], (TIMES_GOOD * 2)[:n])
    for x in result["launches"]:
        if x["program"] == "msgrate":
            x["value"] = 1e9 / (1000.0 + added[x["rep"] - 1]) if x["profiled"] else 1e6
            if x["profiled"]:
                x["profile"].update(rank0_calls=210, clock_read_ns=read_ns)
    return result


def test_the_profilers_cost_per_message_is_set_against_the_floor_of_its_clock_reads() -> None:
    """Issue 40's criterion: the median of 8 pairs or more at most twice the floor measured
    in the same run. Seven pairs of +32..+34 ns and one whose launch drew a slow pace
    (+400 ns): the median 33 ns is 1.57x the floor of 21 ns and meets the 42 ns; the mean,
    which that pair takes to +78.9 ns, is given beside it with its interval."""
    a = analyze_profiler_overhead(_per_message([32, 34, 33, 33, 400, 32, 34, 33]))
    assert analysis_errors(a) == []
    m = a["per_message"]
    assert m["pairs"] == 8 and m["median_ns"] == pytest.approx(33.0)
    assert m["added_ns"] == pytest.approx((32 + 34 + 33 + 33 + 400 + 32 + 34 + 33) / 8)
    assert m["floor_ns"] == pytest.approx(21.0) and m["clock_read_ns"] == 10.0
    assert m["median_over_floor"] == pytest.approx(33.0 / 21.0)
    assert m["target_floors"] == 2.0 and m["target_ns"] == pytest.approx(42.0)
    assert m["ci95_low_ns"] < 42.0 < m["ci95_high_ns"]  # the mean alone could not tell
    assert m["verdict"] == "meets target"
    assert "the profiler adds +33.0 ns per 8-byte message (the median of 8 pairs; mean " \
        "+78.9 ns [" in a["finding"]
    assert "1.6× the floor of 21.0 ns (its clock reads, 10.0 ns each): meets target " \
        "(≤ 2× the floor, 42.0 ns, by the median of 8 pairs or more)" in a["finding"]
    # fewer pairs than the criterion asks: no verdict on it, the figures all the same
    m = analyze_profiler_overhead(_per_message([32, 34, 33]))["per_message"]
    assert m["verdict"] == "inconclusive (fewer than 8 pairs)"
    assert m["median_ns"] == pytest.approx(33.0) and m["target_ns"] == pytest.approx(42.0)
    # a library that does not time its clock leaves the floor unknown, never 0, and the
    # criterion without a target
    m = analyze_profiler_overhead(_per_message([32, 34, 33] * 3, read_ns=None))["per_message"]
    assert m["floor_ns"] is None and m["added_over_floor"] is None
    assert m["target_ns"] is None and m["verdict"] == "no target"
    assert per_message_sentence(m).endswith(
        ": no target (the library did not time its clock reads, so the floor is not known)")
    assert m["added_ns"] == pytest.approx(33.0)


def test_the_cpu_clocks_reads_are_priced_per_message() -> None:
    """Rank 0 read the computation's CPU clock 4 times for 200 messages at 800 ns a read:
    16 ns per message (docs/profiler.md, "Computation as CPU time")."""
    result = _result(RATES_GOOD[:3], TIMES_GOOD[:3])
    for x in result["launches"]:
        if x["program"] == "msgrate" and x["profiled"]:
            x["profile"].update(rank0_calls=210, clock_read_ns=10.0, cpu_read_ns=800.0,
                                cpu_reads=4)
    a = analyze_profiler_overhead(result)
    assert analysis_errors(a) == []
    m = a["per_message"]
    assert m["cpu_clock_ns"] == pytest.approx(4 * 800.0 / 200) and m["cpu_read_ns"] == 800.0
    assert "its reads of the computation's CPU clock 16.00 ns of it (800 ns each)" \
        in a["finding"]
    for x in result["launches"]:  # a library before the CPU clock
        if x.get("profile"):
            x["profile"].update(cpu_read_ns=None, cpu_reads=None)
    assert analyze_profiler_overhead(result)["per_message"]["cpu_clock_ns"] is None


def test_an_analysis_from_before_issue_40_is_said_as_it_judged() -> None:
    """An analysis.json written before the floor criterion (no target_floors): its verdict
    was the mean's interval against 40 ns, and its sentence says so, not the new rule."""
    old = {"pairs": 8, "added_ns": 47.8, "median_ns": 46.8, "ci95_low_ns": 34.3,
           "ci95_high_ns": 61.3, "floor_ns": 19.6, "clock_read_ns": 9.5,
           "added_over_floor": 47.8 / 19.6, "target_ns": 40.0,
           "verdict": "inconclusive (CI spans the target)"}
    said = per_message_sentence(old)
    assert said.startswith("the profiler adds +47.8 ns [+34.3, +61.3] per 8-byte message "
                           "over 8 pairs: inconclusive (CI spans the target) (≤ 40 ns), "
                           "2.4× the floor of 19.6 ns")
    assert "by the median" not in said


def test_a_median_cost_above_twice_the_floor_misses_the_target() -> None:
    """+43 ns by the median of 8 pairs against a 21-ns floor: 2.05x, above the 42 ns that
    twice the floor allows."""
    m = analyze_profiler_overhead(_per_message([43, 41, 44, 40, 45, 43, 39, 44]))[
        "per_message"]
    assert m["median_ns"] == pytest.approx(43.0) and m["verdict"] == "misses target"
    assert m["median_over_floor"] == pytest.approx(43.0 / 21.0)


# ---------------------------------------------------------------- the engine timed alone

ENGINE = {"executable": "/b/profiler/mop_engine_cost", "batch": 4096, "reps": 300,
          "callsites": True, "ns_per_transfer": 26.6, "ns_per_transfer_shared": 32.9,
          "ns_per_call": 10.0}


def test_the_engine_timed_alone_goes_into_the_analysis_and_the_report(tmp_path: Path) -> None:
    result = _result(RATES_GOOD, TIMES_GOOD, engine=dict(ENGINE))
    assert result_errors(result) == []
    a = analyze_profiler_overhead(result)
    assert analysis_errors(a) == []
    assert a["engine"] == {k: ENGINE[k] for k in ("callsites", "ns_per_transfer",
                                                  "ns_per_transfer_shared", "ns_per_call")}
    sentence = ("the event processing alone costs 26.6 ns per transfer (32.9 when a window's "
                "requests share one handle) and 10.0 ns per call")
    assert sentence in a["finding"]
    run = load_run(_run_dir(tmp_path, result))
    assert any(line.startswith("The event processing alone costs 26.6 ns")
               for line in cost_lines(run))


def test_a_run_without_the_engine_figure_keeps_its_analysis() -> None:
    """Runs made before the figure existed (the golden outputs among them) analyse as
    before: no key, no sentence."""
    a = analyze_profiler_overhead(_result(RATES_GOOD, TIMES_GOOD))
    assert "engine" not in a and "event processing" not in a["finding"]
    # nor does one whose figure lacks its numbers (the report reads such a run too)
    a = analyze_profiler_overhead(_result(RATES_GOOD, TIMES_GOOD, engine={"ns_per_call": 1.0}))
    assert "engine" not in a and "event processing" not in a["finding"]
    assert result_errors(_result(RATES_GOOD, TIMES_GOOD, engine={"ns_per_call": 1.0})) != []


def test_the_engine_cost_is_measured_from_the_build_or_says_why_not(tmp_path: Path) -> None:
    bdir = ensure_built(get_toolchain("mpich"))
    engine, why = measure_engine_cost(bdir, quick=True)
    assert why is None and engine is not None
    assert engine["reps"] == 100 and engine["callsites"] is True
    assert all(engine[k] > 0 for k in ("ns_per_transfer", "ns_per_transfer_shared",
                                       "ns_per_call"))
    # not built: a reason, no figure
    engine, why = measure_engine_cost(tmp_path, quick=True)
    assert engine is None and why is not None and "was not built" in why
    # a failing program: its last line of stderr is the reason
    fake = tmp_path / "profiler" / "mop_engine_cost"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'mop_engine_cost: broken' >&2\nexit 1\n")
    fake.chmod(0o755)
    engine, why = measure_engine_cost(tmp_path, quick=True)
    assert engine is None and why == "engine cost not measured: mop_engine_cost: broken"
    # one that prints something else than its figures
    fake.write_text("#!/bin/sh\necho '{\"batch\": 1}'\n")
    engine, why = measure_engine_cost(tmp_path, quick=True)
    assert engine is None and why is not None and why.endswith("printed no figures")


# ---------------------------------------------------------------- once per launch


def _with_library_time(result: dict[str, Any], init_ms: list[float]) -> dict[str, Any]:
    """The profiled launches of the default path in order, each given a library_s with the
    next init time (ms) and fixed finalize 1 ms, gather 0.3 ms, reduce 0.7 ms."""
    times = iter(init_ms)
    for launch in result["launches"]:
        if launch["profiled"] and launch["callsites"] and launch["idle"] is None:
            init = next(times) / 1e3
            launch["profile"]["library_s"] = {
                "ranks": 2, "init_s_max": init, "init_s_median": init * 0.9,
                "finalize_s_max": 1e-3, "gather_s": 3e-4, "reduce_s": 7e-4,
                "per_launch_s": init + 2e-3}
    return result


def test_what_a_launch_pays_once_is_its_parts_over_the_profiled_launches(tmp_path: Path) -> None:
    """10 profiled launches (5 repetitions × 2 programs) with MPI_Init at 20..29 ms: the mean
    of init + 2 ms is 26.5 ms, its interval the t interval of those sums, each part's median
    is its own; well under 50 ms with that spread, so the verdict is a pass; the report
    says it; a launch from a library without it is left out, not counted as 0."""
    result = _with_library_time(_result(RATES_GOOD, TIMES_GOOD), [20.0 + i for i in range(10)])
    result["launches"][1]["profile"]["library_s"] = None  # rep 1's msgrate: an older library
    assert result_errors(result) == []
    a = analyze_profiler_overhead(result)
    assert analysis_errors(a) == []
    c = a["per_launch"]
    sums = [21.0 + i + 2.0 for i in range(9)]  # the first launch (20 ms) left out
    assert c["launches"] == 9
    assert c["per_launch_s"] == pytest.approx(np.mean(sums) / 1e3)
    half = t_quantile(0.975, 8) * np.std(sums, ddof=1) / math.sqrt(9) / 1e3
    assert (c["ci95_low_s"], c["ci95_high_s"]) == pytest.approx(
        (np.mean(sums) / 1e3 - half, np.mean(sums) / 1e3 + half))
    assert c["parts_median_s"] == pytest.approx({"init_s_max": 25e-3, "finalize_s_max": 1e-3,
                                                 "gather_s": 3e-4, "reduce_s": 7e-4})
    assert c["verdict"] == MEETS
    assert "once per launch the profiler takes 27.0 ms [" in a["finding"]
    run = load_run(_run_dir(tmp_path, result))
    assert any(line.startswith("Once per launch the profiler takes 27.0 ms")
               and "MPI_Init 25.0" in line for line in cost_lines(run))


def test_a_launch_cost_above_50_ms_misses_and_a_run_without_it_has_no_key() -> None:
    a = analyze_profiler_overhead(_with_library_time(_result(RATES_GOOD, TIMES_GOOD),
                                                     [60.0, 61.0] * 5))
    assert a["per_launch"]["verdict"] == MISSES
    a = analyze_profiler_overhead(_result(RATES_GOOD, TIMES_GOOD))
    assert "per_launch" not in a and "once per launch" not in a["finding"]
