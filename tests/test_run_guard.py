"""The run-level guard: threads against cores (thread_census.py), and the verdict that
withholds an oversubscribed run's figures (run_guard.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mpi_overlap.core.documents import errors_against
from mpi_overlap.report.html import guard_banners
from mpi_overlap.run import run_guard, thread_census


def _census(**kw) -> dict:
    base = {"intervals": 5, "interval_s": 1.0, "active_share": 0.05,
            "active_threads_median": 2, "active_threads_max": 2, "oversubscribed_intervals": 0,
            "oversubscribed": False, "processes": [], "threads_max": 6, "processes_max": 3,
            "cores_allowed": [0, 1], "cores_usable": 2}
    base.update(kw)
    return base


def _meta(census: dict | None, env: dict | None = None, ranks: int = 2,
          host_load: dict | None = None) -> dict:
    return {"ranks": ranks, "env_overrides": env or {}, "threads": census,
            "host_load": host_load,
            "command": ["mpiexec", "-bind-to", "core", "-n", str(ranks), "prog"]}


def test_measured_oversubscription_names_the_threads_and_what_to_change() -> None:
    census = _census(active_threads_median=4, active_threads_max=4, oversubscribed_intervals=5,
                     oversubscribed=True, processes=[
                         {"pid": 1, "name": "mo_nbc_overlap", "active_threads": 2, "cores": 1},
                         {"pid": 2, "name": "mo_nbc_overlap", "active_threads": 2, "cores": 1}])
    assert errors_against(census, "threads-v1") == []
    guard = run_guard.judge(_meta(census, {"MPICH_ASYNC_PROGRESS": "1"}))
    assert guard["verdict"] == "oversubscribed"
    over = guard["oversubscribed"]
    assert over["basis"] == "measured" and over["active_threads"] == 4 and over["cores"] == 2
    assert "MPICH_ASYNC_PROGRESS=1" in over["reason"]
    assert "asynchronous-progress" in over["change"] and "at least 4 cores" in over["change"]


def test_short_job_falls_back_on_the_environment() -> None:
    short = _census(intervals=0, active_threads_median=None, active_threads_max=None)
    assert run_guard.judge(_meta(short))["verdict"] == "ok"
    # a progress thread per rank, each rank bound to one core: oversubscribed anywhere
    guard = run_guard.judge(_meta(short, {"MPICH_ASYNC_PROGRESS": "1"}))
    assert guard["oversubscribed"]["basis"] == "expected"
    unbound = _meta(short, {"MPIR_CVAR_ASYNC_PROGRESS": "yes"})
    unbound["command"] = ["mpiexec", "-n", "2", "prog"]
    assert run_guard.judge(unbound)["verdict"] == "oversubscribed"  # 4 threads, 2 cores
    many = _census(intervals=0, active_threads_median=None, active_threads_max=None,
                   cores_usable=8)
    unbound["threads"] = many
    assert run_guard.judge(unbound)["verdict"] == "ok"  # 4 threads, 8 cores, not bound


def test_nothing_known_is_no_verdict() -> None:
    assert run_guard.judge(_meta(None))["verdict"] == "ok"


def _analysis() -> dict:
    return {"finding": "OSU overlap 66 %; Iallreduce 8 B costs 2309.75 µs", "figures": [
        {"name": "osu", "label": "OSU", "value": 66.0, "unit": "%", "kind": "overlap"},
        {"name": "t", "label": "t_pure", "value": 2309.75, "unit": "us", "kind": "cost"},
        {"name": "lim", "label": "limit", "value": 8192.0, "unit": "B", "kind": "info"}]}


def test_oversubscribed_run_gives_no_overlap_finding() -> None:
    meta = _meta(_census(oversubscribed=True, active_threads_median=4),
                 {"MPICH_ASYNC_PROGRESS": "1"})
    meta["guard"] = run_guard.judge(meta)
    shown = run_guard.apply(_analysis(), meta)
    assert shown is not None
    assert "66" not in shown["finding"] and "2309" not in shown["finding"]
    assert shown["finding"].startswith("oversubscribed")
    figs = {f["name"]: f for f in shown["figures"]}
    assert figs["osu"]["value"] is None and figs["osu"]["measured_value"] == 66.0
    assert figs["t"]["withheld"] == "oversubscribed" and figs["lim"]["value"] == 8192.0
    assert errors_against(shown["figures"], "figures-v1") == []
    banners = guard_banners(meta)
    # the notice is the guard's own sentence, the one the finding says (one voice)
    assert banners[0].level == "error" and banners[0].text == shown["finding"]
    assert "to measure" in banners[0].text


def test_disturbed_run_keeps_figures_and_says_so() -> None:
    load = {"disturbed": True, "foreign_share": 0.4, "steal_s": 0.0, "busy_processes": []}
    meta = _meta(_census(), host_load=load)
    shown = run_guard.apply(_analysis(), meta)
    assert shown["finding"].startswith("disturbed run") and shown["figures"][0]["value"] == 66.0
    ok = _meta(_census())
    assert run_guard.apply(_analysis(), ok) == _analysis()
    assert run_guard.apply(None, ok) is None


def test_cpu_list() -> None:
    assert thread_census.parse_cpu_list("0-3,8,10-11\n") == {0, 1, 2, 3, 8, 10, 11}
    assert thread_census.parse_cpu_list("x") == set()


_SPIN = """
import threading, time
end = time.monotonic() + {seconds}
def spin():
    while time.monotonic() < end:
        pass
ts = [threading.Thread(target=spin) for _ in range({threads})]
[t.start() for t in ts]
[t.join() for t in ts]
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux only")
def test_census_sees_two_threads_on_one_core() -> None:
    """Two spinning threads of a process bound to one CPU: oversubscribed, measured."""
    cpu = min(os.sched_getaffinity(0))
    proc = subprocess.Popen([sys.executable, "-c", _SPIN.format(seconds=3.5, threads=2)],
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    census = thread_census.start(proc.pid)
    assert census is not None
    proc.wait(timeout=60)
    got = census.stop()
    assert errors_against(got, "threads-v1") == []
    assert got["intervals"] >= 1 and got["cores_allowed"] == [cpu]
    assert got["oversubscribed"], got
    assert got["processes"][0]["active_threads"] >= 2 and got["processes"][0]["cores"] == 1


_TABLE = """mpi-overlap-xfer-table 2
created {created}
machine 8ed7a84a831c0023 cpu=x;ncpu=2
toolchain 84c572b3ef7e2a15 MPICH
toolchain_name mpich
ranks 2 nodes 1
intra 0 1e-06
intra 1024 2e-06
"""


def test_profiled_run_names_its_table_and_the_calibration_verdict(tmp_path, monkeypatch) -> None:
    """Issue 15, item 5: a table measured inside a first benchmark on a busy machine was
    40-60 % slow and nothing marked it; the run now says which table and what the machine
    said while it was measured."""
    from mpi_overlap.calibration import table_note
    from mpi_overlap.run.rundir import write_json_atomic

    monkeypatch.setenv("MPI_OVERLAP_HOME", str(tmp_path))
    table = tmp_path / "t.table"
    table.write_text(_TABLE.format(created="2026-11-25T23:10:08Z"))
    old = table_note.describe(table, since_utc="2026-11-26T00:00:00Z")
    assert old["made_in_this_run"] is False and old["calibration_verdict"] is None
    assert table_note.sentence(old)[0] == "info" and "t.table" in table_note.sentence(old)[1]
    cal = tmp_path / "calibration-runs" / "20261125-231000-pingpong-mpich"
    load = {"disturbed": True, "foreign_share": 0.55, "steal_s": 0.0, "busy_processes": []}
    write_json_atomic(cal / "run.json", {"started_utc": "2026-11-25T23:09:58Z", "ranks": 2,
                                         "host_load": load})
    new = table_note.describe(table, since_utc="2026-11-25T23:09:50Z")
    assert new["made_in_this_run"] is True and new["calibration_verdict"] == "disturbed"
    level, text = table_note.sentence(new)
    assert level == "warn" and "measured inside this run" in text and "55 %" in text
    meta = {"xfer_table": new, "guard": {"verdict": "ok"}}
    assert any("calibrate" in b.text for b in guard_banners(meta))
    # the object validates against run.json's schema (the rest of run.json is missing here)
    assert not any("xfer_table" in e for e in errors_against({"xfer_table": new}, "run-v1"))
