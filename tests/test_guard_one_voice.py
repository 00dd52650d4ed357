"""One voice (issue 35): the run guard's verdict (run_guard.py) governs a profile's headline,
findings and advice, the job table, the comparison of runs and the summary card, in the
terminal, report.html and report.json alike. An oversubscribed run shows no overlap figure
as a finding anywhere; a disturbed run's figures stand, marked. No MPI: run directories
are written by hand (test_report_profile.py's helpers)."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from mpi_overlap.analysis.figures import figure
from mpi_overlap.benchmarks.discovery import card_items
from mpi_overlap.profile.analysis.advice import advice, advice_findings
from mpi_overlap.profile.analysis.profile import analyze_profile
from mpi_overlap.report.summary_card import card_json, card_rows
from mpi_overlap.run import run_guard
from mpi_overlap.run.rundir import Run, load_run
from test_advice import _analysis, _docs, _pair
from test_profile_job_file import _mo_halo, _table
from test_report_profile import _report, sample_result, write_run

# "Overlap between 30 % and 99 %", "30.2–98.5 %", "0–60 %": any overlap range or share
OVERLAP_FIGURE = re.compile(r"[Oo]verlap[^.;]*?\d+(\.\d+)?\s?(%|–)")


def _census(oversubscribed: bool) -> dict[str, Any]:
    return {"intervals": 5, "interval_s": 1.0, "active_share": 0.9,
            "active_threads_median": 4 if oversubscribed else 2,
            "active_threads_max": 4 if oversubscribed else 2,
            "oversubscribed_intervals": 5 if oversubscribed else 0,
            "oversubscribed": oversubscribed,
            "processes": [{"pid": 1, "name": "app", "active_threads": 2, "cores": 1}],
            "threads_max": 6, "processes_max": 3, "cores_allowed": [0, 1], "cores_usable": 2}


def _meta(verdict: str) -> dict[str, Any]:
    """run.json's fields the guard reads: 4 ranks' threads on 2 cores, or 2 with 40 % of
    the CPU taken by other processes, or neither."""
    meta: dict[str, Any] = {"ranks": 2, "env_overrides": {},
                            "command": ["mpiexec", "-n", "2", "prog"],
                            "threads": _census(verdict == "oversubscribed")}
    if verdict == "disturbed":
        meta["host_load"] = {"disturbed": True, "foreign_share": 0.4, "steal_s": 0.0,
                             "busy_processes": []}
    meta["guard"] = run_guard.judge(meta)
    assert meta["guard"]["verdict"] == verdict
    return meta


def _measured() -> dict[str, Any]:
    """The sample profile's analysis with the progress advice of a Waitall after the
    computation (as test_advice.py builds it) among its findings."""
    out = analyze_profile(sample_result())
    pair = _pair("halo.c:42 (exchange)", "MPI_Isend", "halo.c:57 (exchange)", "MPI_Waitall",
                 10e-3, 2e-3, 9e-3)
    out["advice"] = advice(_analysis([pair]), _docs())
    out["findings"][1:1] = advice_findings(out["advice"])
    return out


def test_an_oversubscribed_profile_has_no_overlap_finding_and_no_advice() -> None:
    measured = _measured()
    assert measured["advice"] and OVERLAP_FIGURE.search(" ".join(measured["findings"]))
    kept = copy.deepcopy(measured)
    shown = run_guard.apply(measured, _meta("oversubscribed"))
    assert shown is not None and shown["withheld"] == "oversubscribed"
    sentence = run_guard.withheld(_meta("oversubscribed"))
    assert sentence and shown["findings"] == [sentence]
    assert shown["headline"] == {"kind": "withheld", "text": sentence, "idle_ranks": []}
    assert shown["advice"] == []
    assert not OVERLAP_FIGURE.search(sentence)
    assert measured == kept  # analysis.json on disk stays what the result says


def test_a_disturbed_profile_keeps_its_figures_marked() -> None:
    measured = _measured()
    shown = run_guard.apply(measured, _meta("disturbed"))
    assert shown is not None and shown.get("disturbed") and "withheld" not in shown
    assert shown["findings"][0] == f"{run_guard.DISTURBED}: {measured['findings'][0]}"
    assert shown["findings"][1:] == measured["findings"][1:]
    assert shown["advice"] == measured["advice"]
    assert run_guard.disturbed_note(_meta("disturbed")) == run_guard.DISTURBED
    assert run_guard.disturbed_note(_meta("oversubscribed")) is None  # withheld instead
    assert run_guard.apply(measured, _meta("ok")) is measured


def _guarded_run(tmp_path: Path, name: str, verdict: str) -> Run:
    path = write_run(tmp_path, name, sample_result())
    (path / "analysis.json").write_text(json.dumps(_measured()))
    meta = json.loads((path / "run.json").read_text())
    meta.update({k: v for k, v in _meta(verdict).items() if k in ("threads", "host_load",
                                                                    "guard")})
    (path / "run.json").write_text(json.dumps(meta))
    return load_run(path, strict=True)


def test_the_report_of_an_oversubscribed_profile_says_one_thing(tmp_path: Path) -> None:
    """Terminal, report.html and report.json: the guard's sentence once, no overlap
    figure as a finding, no advice; the runs compared side by side withhold it too."""
    over = _guarded_run(tmp_path, "over", "oversubscribed")
    quiet = _guarded_run(tmp_path, "quiet", "ok")
    terminal, html, doc = _report([over], tmp_path / "out")
    sentence = run_guard.withheld(over.meta)
    assert sentence is not None
    flat = " ".join(terminal.split())
    assert flat.count(" ".join(sentence.split())) == 1  # the notice, not again below it
    assert not OVERLAP_FIGURE.search(terminal), terminal
    assert "withheld: the run was oversubscribed" in terminal and "Advice" not in terminal
    assert "Overlap between" not in html and "Advice 1" not in html
    assert "these tables are what was measured, not findings" in html
    entry = doc["runs"][0]
    assert entry["summary"][0] == sentence
    assert not any(OVERLAP_FIGURE.search(s) for s in entry["summary"])
    assert entry["results"]["headline"]["kind"] == "withheld"
    assert entry["results"]["advice"] == []
    # side by side with a quiet run: its overlap figure is there, the other's is not
    terminal, _, _ = _report([quiet, over], tmp_path / "both")
    assert "Advice 1" in terminal  # the quiet run's advice stands
    side = terminal.split("Profile runs side by side")[1]
    rows = {line.split("│")[1].strip(): line for line in side.splitlines() if "│" in line}
    assert "withheld" in rows[over.label] and "withheld" not in rows[quiet.label]


def _bench_run(verdict: str) -> Run:
    meta = {"benchmark": "overhead", "label": "mpich", "toolchain": {"name": "mpich"},
            "status": "complete", **_meta(verdict)}
    figures = [figure("send_availability_min_pct", "x", 3.2, "%", "overlap"),
               figure("send_availability_max_pct", "x", 97.6, "%", "overlap")]
    analysis = run_guard.apply({"figures": figures, "finding": "availability 3–98 %"}, meta)
    return Run(path=Path("/nonexistent/overhead"), meta=meta, result=None, analysis=analysis)


def test_the_summary_card_follows_the_guard() -> None:
    item = "availability (post-work-wait)"
    cells = {row[0]: row[1] for row in card_rows([_bench_run("ok")], card_items())}
    assert cells[item].startswith("the CPU is free to compute for 3–98 %")
    cells = {row[0]: row[1] for row in card_rows([_bench_run("disturbed")], card_items())}
    assert cells[item].endswith(f"({run_guard.DISTURBED})") and "3–98 %" in cells[item]
    over = _bench_run("oversubscribed")
    cells = {row[0]: row[1] for row in card_rows([over], card_items())}
    assert cells[item] == "withheld: the run was oversubscribed (see its notice)"
    entry = next(i for i in card_json([over], card_items())["items"] if i["item"] == item)
    assert entry["grades"]["mpich"] is None
    assert all(f["value"] is None for f in entry["figures"]["mpich"])


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.mark.mpi
@pytest.mark.skipif((CORES or 0) > 4, reason=f"{CORES} cores: twice as many ranks of a test "
                    "would be too many")
def test_twice_as_many_ranks_as_cores_say_one_thing(tmp_path: Path) -> None:
    """4 ranks of mo_halo on 2 cores (issue 35's case): the guard says oversubscribed, and
    neither the terminal nor report.html nor report.json gives an overlap figure as a
    finding, or advice."""
    out = tmp_path / "runs"
    proc = run_cli("profile", "-n", str(2 * (CORES or 1)), "--oversubscribe", "--table",
                   str(_table()), "--out", str(out), "--", str(_mo_halo()), "--local", "8",
                   "--iterations", "20", "--modes", "overlap", timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    run = load_run(run_dir)
    assert run.meta["guard"]["verdict"] == "oversubscribed", run.meta.get("threads")
    sentence = run_guard.withheld(run.meta)
    assert sentence and " ".join(sentence.split()) in " ".join(proc.stdout.split())
    for text in (proc.stdout, (run_dir / "report.html").read_text()):
        assert not re.search(r"Overlap (between|of that|\d)|Advice \d", text), text[-3000:]
    entry = json.loads((run_dir / "report.json").read_text())["runs"][0]
    assert entry["summary"][0] == sentence
    assert entry["results"]["headline"]["kind"] == "withheld"
    assert entry["results"]["advice"] == []
    # analysis.json on disk keeps what was measured
    assert json.loads((run_dir / "analysis.json").read_text())["headline"]["kind"] != "withheld"


def test_a_census_that_saw_no_thread_running_measured_nothing() -> None:
    """A 1-second census that started as a short job ended saw 0 active threads: that is
    no measurement, so MPICH_ASYNC_PROGRESS=1 with each rank bound to one core is judged
    by what it predicts (a progress thread beside each rank), not called 'ok'."""
    seen_nothing = {**_census(False), "intervals": 1, "active_threads_median": 0,
                    "active_threads_max": 0, "processes": [], "cores_allowed": []}
    meta = {"ranks": 2, "env_overrides": {"MPICH_ASYNC_PROGRESS": "1"},
            "command": ["mpiexec", "-bind-to", "core", "-n", "2", "prog"],
            "threads": seen_nothing}
    over = run_guard.oversubscription(meta)
    assert over is not None and over["basis"] == "expected"
    assert run_guard.oversubscription({**meta, "env_overrides": {}}) is None


def test_one_look_can_convict_but_not_clear() -> None:
    """A census of one interval that saw 2 active threads for 2 ranks with
    MPICH_ASYNC_PROGRESS=1 (a profile of about a second) missed the spinning progress
    threads: the prediction judges it. One look that saw oversubscription stands, and
    two looks that saw none clear the run."""
    meta = {"ranks": 2, "env_overrides": {"MPICH_ASYNC_PROGRESS": "1"},
            "command": ["mpiexec", "-bind-to", "core", "-n", "2", "prog"]}
    one_look = {**_census(False), "intervals": 1}
    over = run_guard.oversubscription({**meta, "threads": one_look})
    assert over is not None and over["basis"] == "expected"
    convicted = run_guard.oversubscription({**meta, "threads": {**_census(True),
                                                                "intervals": 1}})
    assert convicted is not None and convicted["basis"] == "measured"
    assert run_guard.oversubscription({**meta, "threads": _census(False)}) is None
