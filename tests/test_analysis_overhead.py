"""Tests of analysis/overhead.py: a synthetic result.json in, a schema-valid analysis out."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from mpi_overlap import schema
from mpi_overlap.analysis.overhead import analyze_overhead
from mpi_overlap.analysis.stats import summarize

UNITS_PER_US = 100.0
BARRIER_US = 0.3


def _classic() -> dict[str, Any]:
    return {
        "found": True,
        "base_t_us": 4.0,
        "base_steps": 5,
        "stop_step": 9,
        "iter_t_us": 6.1,
        "work_t_us": 5.2,
        "overhead_us": 0.9,
        "availability_pct": 77.5,
    }


def _size(size: int, b: float, k: float, *, steps: int = 16, seed: int = 0) -> dict[str, Any]:
    """One size entry: iter_t = max(b, work_t + b - k) with 3 % noise."""
    rng = np.random.default_rng(seed)
    entries = []
    for units in np.linspace(0, 3.0 * b * UNITS_PER_US, steps).astype(int):
        work = BARRIER_US + units / UNITS_PER_US
        work_s = work * (1 + 0.01 * rng.standard_normal(5))
        iter_s = max(b, work + b - k) * (1 + 0.03 * rng.standard_normal(5))
        entries.append(
            {
                "work_units": int(units),
                "work_us_nominal": units / UNITS_PER_US,
                "iterations": 100,
                "iter_t_us": summarize(iter_s),
                "work_t_us": summarize(work_s),
                "iter_samples_us": iter_s.tolist(),
                "work_samples_us": work_s.tolist(),
            }
        )
    return {"size": size, "complete": True, "steps": entries, "classic": _classic()}


def _result(directions: list[dict[str, Any]], status: str = "complete") -> dict[str, Any]:
    stats = summarize([UNITS_PER_US] * 3)
    return {
        "schema": "mpi-overlap/result",
        "schema_version": 1,
        "benchmark": "overhead",
        "status": status,
        "provenance": {
            "tool_version": "0.1",
            "date_utc": "2026-01-01T00:00:00Z",
            "mpi_library_version": "MPICH 4.2",
            "mpi_standard_version": "4.1",
            "toolchain": "unknown",
            "launcher": "unknown",
            "ranks": 2,
            "hosts": ["a", "a"],
            "cpu_binding": ["0", "1"],
            "mpi_env": {},
            "command_line": ["overhead"],
            "compiler": "cc",
        },
        "harness": {
            "timer": {
                "clock": "CLOCK_MONOTONIC",
                "resolution_ns": 1,
                "measured_tick_ns": 20,
                "read_overhead_ns": 20,
            },
            "work": {
                "units_per_us": UNITS_PER_US,
                "calibration": stats,
                "stable": True,
                "recheck_units_per_us": None,
                "drift": None,
            },
            "options": {},
        },
        "results": {"directions": directions},
        "warnings": [],
    }


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    flat = _size(65536, 4.0, 3.0, seed=3)
    for step in flat["steps"]:  # a work range that never reaches the knee
        step["iter_samples_us"] = (4.0 + 0.05 * np.sin(np.arange(5))).tolist()
    cut = _size(1 << 20, 10.0, 2.0, seed=4)
    cut["complete"] = False
    cut["steps"] = cut["steps"][:3]
    return _result(
        [
            {"direction": "send", "sizes": [_size(8, 4.0, 3.0, seed=1), _size(4096, 6.0, 0.3)]},
            {"direction": "recv", "sizes": [flat, cut]},
        ]
    )


def test_input_document_is_a_valid_result(document: dict[str, Any]) -> None:
    assert schema.result_errors(document) == []


def test_analysis_is_schema_valid_json(document: dict[str, Any]) -> None:
    analysis = analyze_overhead(document, bootstrap=60)
    assert schema.analysis_errors(analysis) == []
    json.dumps(analysis, allow_nan=False)  # no NaN may leak into the document
    assert analysis["method"]["bootstrap"] == 60
    assert analysis["method"]["limits"]["slope_min"] == 0.7


def test_verdicts_and_estimates(document: dict[str, Any]) -> None:
    analysis = analyze_overhead(document, bootstrap=60)
    send, recv = analysis["directions"]
    small, rendezvous = send["sizes"]
    assert small["verdict"] == "ok" and small["reason"] is None
    assert small["knee_work_us"]["value"] == pytest.approx(3.0, abs=0.4)
    assert small["base_t_us"]["value"] == pytest.approx(4.0, rel=0.05)
    # the barrier in both loops is not hidden work: availability (k - 0.3) / (b - 0.3)
    assert small["fit"]["origin_us"] == pytest.approx(BARRIER_US, rel=0.05)
    assert small["availability_pct"]["value"] == pytest.approx(73.0, abs=10.0)
    assert small["classic"] == _classic()
    assert rendezvous["verdict"] == "ok"
    assert rendezvous["availability_pct"]["value"] < 5.0
    flat, cut = recv["sizes"]
    assert flat["verdict"] == "no-knee" and "never rose" in flat["reason"]
    assert flat["base_t_us"] == {"value": None, "ci95_low": None, "ci95_high": None}
    assert cut["verdict"] == "incomplete" and cut["reason"]


def test_reproducible_with_seed(document: dict[str, Any]) -> None:
    a = analyze_overhead(document, bootstrap=40, seed=7)
    assert a == analyze_overhead(document, bootstrap=40, seed=7)
    b = analyze_overhead(document, bootstrap=40, seed=8)
    assert a["method"]["seed"] == 7 and b["method"]["seed"] == 8
    assert (
        a["directions"][0]["sizes"][0]["knee_work_us"]
        != (b["directions"][0]["sizes"][0]["knee_work_us"])
    )


def test_partial_results_are_tolerated(document: dict[str, Any]) -> None:
    running = copy.deepcopy(document)
    running["status"] = "running"
    running["results"] = {}
    analysis = analyze_overhead(running, bootstrap=10)
    assert analysis["directions"] == []
    assert schema.analysis_errors(analysis) == []

    running = copy.deepcopy(document)
    size = running["results"]["directions"][0]["sizes"][0]
    size["steps"][2]["iter_samples_us"] = []  # a step still being measured
    size["steps"][3]["work_samples_us"] = []  # falls back to the harness's median
    del size["classic"]
    analysis = analyze_overhead(running, bootstrap=10)
    assert schema.analysis_errors(analysis) == []
    entry = analysis["directions"][0]["sizes"][0]
    assert entry["fit"]["n_steps"] == 15 and entry["classic"] is None

    empty = copy.deepcopy(document)
    empty["results"]["directions"][1]["sizes"][0]["steps"] = []
    entry = analyze_overhead(empty, bootstrap=10)["directions"][1]["sizes"][0]
    assert entry["verdict"] == "incomplete" and entry["fit"]["n_steps"] == 0


def test_figures_and_finding_use_trustworthy_sizes_only(document: dict[str, Any]) -> None:
    analysis = analyze_overhead(document, bootstrap=60)
    figs = {f["name"]: f["value"] for f in analysis["figures"]}
    send_avail = [s["availability_pct"]["value"] for s in analysis["directions"][0]["sizes"]]
    assert figs["send_availability_min_pct"] == pytest.approx(min(send_avail))
    assert figs["send_availability_max_pct"] == pytest.approx(max(send_avail))
    # recv has no ok size (no-knee, incomplete): no number, and the finding says so
    assert figs["recv_availability_min_pct"] is None
    assert "recv: no trustworthy size of 2" in analysis["finding"]
    assert "send availability" in analysis["finding"] and "(2 of 2 sizes" in analysis["finding"]
