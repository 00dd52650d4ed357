"""Tests for the report: synthetic run directories in, terminal/HTML/JSON out.

The run files are generated from a simple model (transfer time b, host overhead o,
iter_t = max(b, work + o)) and validated against the real schemas, so the report is
tested on data shaped like what the benchmark and the analysis write.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mpi_overlap.analysis.stats import summarize
from mpi_overlap.commands.reporting import make_report
from mpi_overlap.core import documents as schema
from mpi_overlap.run.rundir import Run, load_run

NO_KNEE_REASON = "iter_t never rose above the base time: work range too short"
LIB_VERSION = "MPICH Version: 4.2.0 (synthetic test build)"


def _validate(run_json: dict[str, Any], result: dict[str, Any]) -> None:
    assert schema.run_errors(run_json) == []
    assert schema.result_errors(result) == []


def _stats(samples: list[float]) -> dict[str, Any]:
    return summarize(samples)


def _est(value: float | None, rel: float = 0.03) -> dict[str, float | None]:
    if value is None:
        return {"value": None, "ci95_low": None, "ci95_high": None}
    return {
        "value": value,
        "ci95_low": value - abs(value) * rel,
        "ci95_high": value + abs(value) * rel,
    }


def _classic(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The original thresholds (bthresh 1.02, thresh 1.5) applied to step medians."""
    base, n = 0.0, 0
    for i, st in enumerate(steps):
        it, wt = st["iter_t_us"]["median"], st["work_t_us"]["median"]
        if n == 0 or it < 1.02 * base:
            base, n = (base * n + it) / (n + 1), n + 1
        elif it > 1.5 * base:
            over = it - wt
            return {
                "found": True,
                "base_t_us": base,
                "base_steps": n,
                "stop_step": i,
                "iter_t_us": it,
                "work_t_us": wt,
                "overhead_us": over,
                "availability_pct": 100.0 * (1 - over / base),
            }
    return {
        "found": False,
        "base_t_us": base if n else None,
        "base_steps": n,
        "stop_step": None,
        "iter_t_us": None,
        "work_t_us": None,
        "overhead_us": None,
        "availability_pct": None,
    }


def _measure(
    size: int, avail: float, rng: random.Random, cut: bool
) -> tuple[dict[str, Any], dict[str, float]]:
    base = 2.0 + size / 5000.0
    over = base * (1 - avail / 100)
    knee = base - over
    steps, work = [], 0.0
    while True:
        iters = [max(base, work + over) * (1 + rng.gauss(0, 0.02)) for _ in range(5)]
        works = [work * (1 + rng.gauss(0, 0.005)) + 0.01 for _ in range(5)]
        steps.append(
            {
                "work_units": round(work * 100),
                "work_us_nominal": work,
                "iterations": 100,
                "iter_t_us": _stats(iters),
                "work_t_us": _stats(works),
                "iter_samples_us": iters,
                "work_samples_us": works,
            }
        )
        if (cut and work > 0.5 * knee) or work > 2.2 * base:
            break
        work = 0.25 if work == 0 else work * 2
    entry = {"size": size, "complete": not cut, "steps": steps, "classic": _classic(steps)}
    if cut:
        entry["stop_reason"] = "time budget"
    return entry, {"base": base, "over": over, "knee": knee, "avail": avail}


def _analysis_entry(
    size: int, truth: dict[str, float], classic: dict[str, Any], verdict: str, reason: str | None
) -> dict[str, Any]:
    usable = verdict in ("ok", "noisy")
    return {
        "size": size,
        "verdict": verdict,
        "reason": reason,
        # the analysis gives no estimate at all for a curve without a knee
        "base_t_us": _est(truth["base"] if verdict != "no-knee" else None),
        "knee_work_us": _est(truth["knee"] if usable else None),
        "overhead_us": _est(truth["over"] if usable else None, 0.1),
        "availability_pct": _est(truth["avail"] if usable else None, 0.02),
        "slope": _est(1.0 if usable else None),
        "compute_slowdown_pct": _est(1.5 if usable else None, 0.5),
        "classic": classic,
        "fit": {
            "n_steps": 12,
            "n_samples": 60,
            "n_outliers": 0,
            "origin_us": 0.01,
            "rel_noise": 0.01,
            "rss_hinge": 1.0,
            "rss_line": 9.0,
            "line_slope": 0.6,
        },
    }


def write_run(
    root: Path,
    name: str,
    toolchain: str,
    sizes: list[int],
    avail: Callable[[int], float],
    *,
    cut_at: int | None = None,
    no_knee: tuple[str, int] | None = None,
    noisy: tuple[str, int] | None = None,
    analysis: bool = True,
    label: str | None = None,
    seed: int = 1,
) -> Path:
    """Write run.json, result.json and (optionally) analysis.json for a synthetic run.

    cut_at: the sweep was killed while measuring this size (timeout, result 'running').
    """
    rng = random.Random(seed)
    path = root / name
    path.mkdir(parents=True)
    measured = [s for s in sizes if cut_at is None or s <= cut_at]
    res_dirs, ana_dirs = [], []
    for direction in ("send", "recv"):
        res_sizes, ana_sizes = [], []
        for size in measured:
            # receive differs a little so that the two directions do not overlap in plots
            pct = avail(size) - (6.0 if direction == "recv" else 0.0)
            entry, truth = _measure(size, pct, rng, cut=size == cut_at)
            res_sizes.append(entry)
            verdict, reason = "ok", None
            if size == cut_at:
                verdict, reason = "incomplete", "sweep stopped before iter_t passed 2×base_t"
            elif no_knee == (direction, size):
                verdict, reason = "no-knee", NO_KNEE_REASON
            elif noisy == (direction, size):
                verdict, reason = "noisy", "relative noise 12 % above the 5 % limit"
            ana_sizes.append(_analysis_entry(size, truth, entry["classic"], verdict, reason))
        res_dirs.append({"direction": direction, "sizes": res_sizes})
        ana_dirs.append({"direction": direction, "sizes": ana_sizes})
    status = "complete" if cut_at is None else "timeout"
    run_json = {
        "schema": "mpi-overlap/run",
        "schema_version": 1,
        "benchmark": "overhead",
        "run_id": name,
        "ranks": 2,
        "toolchain": {
            "name": toolchain,
            "kind": "wheel",
            "mpi_library_version": LIB_VERSION,
            "mpicc": "/opt/mpi/bin/mpicc",
            "mpiexec": "/opt/mpi/bin/mpiexec",
        },
        "command": ["mpiexec", "-n", "2", "overhead", "--max-size", str(max(sizes))],
        "env_overrides": {"MPIR_CVAR_ASYNC_PROGRESS": "0"},
        "started_utc": "2025-01-02T03:04:05Z",
        "finished_utc": "2025-01-02T03:14:05Z",
        "elapsed_s": 600.0,
        "status": status,
        "returncode": 0 if cut_at is None else -9,
        "message": None if cut_at is None else "killed at the 600 s time limit",
        "timeout_s": 600.0,
    }
    if label:
        run_json["label"] = label
    result = {
        "schema": "mpi-overlap/result",
        "schema_version": 1,
        "benchmark": "overhead",
        "status": "complete" if cut_at is None else "running",
        "provenance": {
            "tool_version": "0.1.0",
            "date_utc": "2025-01-02T03:04:06Z",
            "mpi_library_version": LIB_VERSION,
            "mpi_standard_version": "4.1",
            "toolchain": toolchain,
            "launcher": "mpiexec -n 2 --bind-to core",
            "ranks": 2,
            "hosts": ["node-a", "node-b"],
            "cpu_binding": ["0", "8"],
            "mpi_env": {"MPIR_CVAR_ASYNC_PROGRESS": "0", "HYDRA_TOPO_DEBUG": "1"},
            "command_line": ["overhead", "--max-size", str(max(sizes))],
            "compiler": "gcc 12.2",
        },
        "harness": {
            "timer": {
                "clock": "CLOCK_MONOTONIC",
                "resolution_ns": 1,
                "measured_tick_ns": 21,
                "read_overhead_ns": 19,
            },
            "work": {
                "units_per_us": 100.0,
                "calibration": _stats([99.8, 100.0, 100.2]),
                "stable": True,
                "recheck_units_per_us": 100.3,
                "drift": 0.003,
            },
            "options": {"thresh": 1.5, "bthresh": 1.02, "extend": 2.0},
        },
        "results": {"directions": res_dirs},
        "warnings": ["rank 1 shares a core with another process"],
    }
    _validate(run_json, result)
    (path / "run.json").write_text(json.dumps(run_json))
    (path / "result.json").write_text(json.dumps(result))
    if analysis:
        doc = {
            "schema": "mpi-overlap/analysis",
            "schema_version": 1,
            "benchmark": "overhead",
            "method": {
                "name": "hinge-fit",
                "bootstrap": 400,
                "seed": 12345,
                "ci": 0.95,
                "limits": {"rel_noise": 0.05},
            },
            "directions": ana_dirs,
        }
        assert schema.analysis_errors(doc) == []
        (path / "analysis.json").write_text(json.dumps(doc))
    return path


SIZES = [0, 64, 4096, 262144, 1048576]


def eager_then_blocking(size: int) -> float:
    """Availability of a library without asynchronous progress: fine until rendezvous."""
    return 80.0 if size <= 65536 else 12.0


def offloading(size: int) -> float:
    return 85.0 + 10.0 * min(1.0, size / 1048576)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    root = tmp_path_factory.mktemp("runs")
    full = write_run(
        root,
        "full",
        "mpich",
        SIZES,
        eager_then_blocking,
        no_knee=("recv", 64),
        noisy=("send", 4096),
    )
    cut = write_run(root, "cut", "openmpi", SIZES, offloading, cut_at=1048576, seed=2)
    return [load_run(full), load_run(cut)]


def _report(runs: list[Run], out: Path) -> tuple[str, dict[str, Any], str]:
    console = Console(record=True, width=160)
    paths = make_report(runs, out, console=console)
    return (paths.html.read_text(), json.loads(paths.json.read_text()), console.export_text())


@pytest.fixture(scope="module")
def two_runs(
    runs: list[Run], tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Any], str]:
    """One report of both runs, shared: rendering the figures is the slow part."""
    return _report(runs, tmp_path_factory.mktemp("report"))


def test_every_table_is_also_csv(runs: list[Run], tmp_path: Path) -> None:
    """report.json lists a CSV per table of the page, in page order, each the table's
    header and rows; a second report in the same directory leaves no stale CSV of its
    own and touches nothing else there."""
    import csv

    out = tmp_path / "rep"
    (out / "tables").mkdir(parents=True)
    (out / "tables" / "99-stale.csv").write_text("old\n")
    (out / "tables" / "my-notes.txt").write_text("the user's own file\n")
    html, doc, _ = _report(runs, out)
    assert schema.report_errors(doc) == []
    listed = doc["tables"]
    assert listed and not (out / "tables" / "99-stale.csv").exists()
    assert (out / "tables" / "my-notes.txt").is_file()  # not the report's: left alone
    assert sorted(p.name for p in (out / "tables").glob("*.csv")) == sorted(
        Path(t["csv"]).name for t in listed)
    for entry in listed:
        with (out / entry["csv"]).open(newline="") as fh:
            rows = list(csv.reader(fh))
        assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), entry
        assert entry["caption"] in html
    first = listed[0]
    assert html.index(first["caption"]) <= min(html.index(t["caption"]) for t in listed)


def test_html_can_be_found_your_way_in(two_runs: tuple[str, Any, str]):
    """Contents first, linking every heading; the measurements' sections before the run
    cards; each run's provenance folded."""
    html, _, _ = two_runs
    nav = html[html.index("<nav"):html.index("</nav>")]
    targets = re.findall(r'href="#([^"]+)"', nav)
    headings = re.findall(r'<h2 id="([^"]+)"', html)
    assert targets and sorted(targets) == sorted(headings)
    assert html.index("</nav>") < html.index("<h2")
    first_section = html.index(f'<h2 id="{targets[0]}"')
    assert first_section < html.index('<h2 id="runs"') < html.index('<h2 id="provenance"')
    provenance = html[html.index('<h2 id="provenance"'):]
    assert provenance.count("<details>") == 2 and provenance.count("<summary>") == 2


def test_html_holds_plots_provenance_banner_and_reasons(two_runs: tuple[str, Any, str]):
    html, _, _ = two_runs
    assert html.count("<svg") >= 2 + 4  # two summary plots, a fit grid per run and direction
    assert "<?xml" not in html and "<script" not in html and "<link" not in html
    assert LIB_VERSION in html and "node-b" in html and "HYDRA_TOPO_DEBUG=1" in html
    assert "mpiexec -n 2 --bind-to core" in html and "CLOCK_MONOTONIC" in html
    assert "rank 1 shares a core with another process" in html
    assert "incomplete: results up to 256 KiB" in html
    assert NO_KNEE_REASON in html and "no-knee [" in html
    assert "Comparison across runs" in html


def test_json_repeats_analysis_values(runs: list[Run], two_runs: tuple[str, Any, str]):
    _, report, _ = two_runs
    assert [r["toolchain"] for r in report["runs"]] == ["mpich", "openmpi"]
    for run, run_json in zip(runs, report["runs"], strict=True):
        assert run_json["provenance"]["mpi_library_version"] == LIB_VERSION
        got = {
            (d["direction"], s["size"]): s
            for d in run_json["results"]["directions"]
            for s in d["sizes"]
        }
        assert run.analysis is not None
        for d in run.analysis["directions"]:
            for s in d["sizes"]:
                item = got[(d["direction"], s["size"])]
                assert item["verdict"] == s["verdict"] and item["reason"] == s["reason"]
                for key in ("overhead_us", "availability_pct", "knee_work_us", "base_t_us"):
                    assert item[key] == s[key]
    cut = report["runs"][1]
    assert cut["complete"] is False and cut["run_status"] == "timeout"
    assert any("incomplete" in n["text"] for n in cut["notices"])


def test_terminal_rows_and_comparison(two_runs: tuple[str, Any, str]):
    _, report, text = two_runs
    send_4k = report["runs"][0]["results"]["directions"][0]["sizes"][2]
    assert send_4k["size"] == 4096 and send_4k["verdict"] == "noisy"
    row = next(line for line in text.splitlines() if line.strip("│ ").startswith("4 KiB"))
    avail = send_4k["availability_pct"]
    assert f"{avail['value']:.1f} [{avail['ci95_low']:.1f}–{avail['ci95_high']:.1f}]" in row
    assert "noisy [1]" in row
    assert "1 MiB" in text and "256 KiB" in text and "0 B" in text
    assert "Comparison — send" in text and "Comparison — recv" in text
    assert NO_KNEE_REASON in text


def test_single_run_has_no_comparison(runs: list[Run], tmp_path: Path):
    html, _, text = _report(runs[:1], tmp_path / "out")
    assert "Comparison" not in text and "Comparison across runs" not in html


def test_missing_analysis_and_unknown_benchmark(tmp_path: Path):
    bare = write_run(
        tmp_path, "bare", "mpich", [0, 4096], offloading, analysis=False, label="<b>mine</b>"
    )
    other = write_run(tmp_path, "other", "mpich", [0], offloading)
    meta = json.loads((other / "run.json").read_text())
    meta["benchmark"] = "future-bench"
    (other / "run.json").write_text(json.dumps(meta))
    html, report, text = _report([load_run(bare), load_run(other)], tmp_path / "out")
    assert "analysis.json missing" in html and "analysis.json missing" in text
    assert "no report module for benchmark &#39;future-bench&#39;" in html
    assert "&lt;b&gt;mine&lt;/b&gt;" in html and "<b>mine</b>" not in html
    bare_json = report["runs"][0]
    assert bare_json["has_analysis"] is False
    sizes = bare_json["results"]["directions"][0]["sizes"]
    assert sizes[0]["overhead_us"] is None and sizes[0]["classic"]["found"] is True
    assert report["runs"][1]["results"] is None


def test_labels_agree_across_sections(tmp_path: Path):
    """Three runs of one toolchain, the first without analysis: the comparison, the
    tables and the plots all call the second run 'mpich #2'."""
    dirs = [
        write_run(tmp_path, "a", "mpich", [0, 4096], offloading, analysis=False),
        write_run(tmp_path, "b", "mpich", [0, 4096], offloading, seed=3),
        write_run(tmp_path, "c", "mpich", [0, 4096], eager_then_blocking, seed=4),
    ]
    html, report, text = _report([load_run(d) for d in dirs], tmp_path / "out")
    assert [r["label"] for r in report["runs"]] == ["mpich", "mpich #2", "mpich #3"]
    assert "avail. % mpich #2" in html and "Tables — mpich #2" in html
    assert "avail. % mpich #2" in text
