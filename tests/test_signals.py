"""One signal path for the CLI (interrupts.py, procs.py; issue 14, "Why" 2 and 3):
SIGINT, SIGTERM and SIGHUP stop the job's whole session (mpiexec, its proxies and the
ranks), the run is marked interrupted with what it measured, a suite stops at once, the
exit status is 128 + the signal; and `profile --timeout` bounds the collective calibration
it may need, whose failure is recorded so that it is not tried on every run.

Every CLI here runs with a unique variable in its environment, which mpiexec, its proxies
and the ranks inherit: after the CLI exits, no live process may still carry it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cli_helpers import CLI, own_state_dir, processes_with_env, run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

LONG = ["post-compute-wait", "65536", "100000000"]  # 5 ms of work per iteration: hours


def _app(toolchain: str = "mpich") -> Path:
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "profiled_app"


class Cli:
    """The CLI as a background process with a marker in its environment."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.marker = f"MO_TEST_{uuid.uuid4().hex}"
        full = dict(os.environ, **(env or {}), **{self.marker: "1"})
        self.proc = subprocess.Popen([*CLI, *args], cwd=cwd, env=full, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def left_running(self) -> list[str]:
        deadline = time.monotonic() + 3  # the kernel may take a moment to reap
        while (found := processes_with_env(self.marker)) and time.monotonic() < deadline:
            time.sleep(0.1)
        return found


def _wait_for_running_run(out: Path, cli: Cli, timeout: float = 300) -> Path:
    """The run directory whose run.json says running (the job has been launched)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert cli.proc.poll() is None, cli.finish()
        for run_json in sorted(out.glob("*/run.json")) if out.is_dir() else []:
            try:
                if json.loads(run_json.read_text())["status"] == "running":
                    return run_json.parent
            except (ValueError, KeyError):
                continue  # being written
        time.sleep(0.1)
    raise AssertionError("no run started")


def _stopped_line(err: str, signame: str) -> str:
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("mpi-overlap:")]
    assert len(lines) == 1 and lines[0].startswith(f"mpi-overlap: stopped by {signame}"), err
    return lines[0]


def _stop(tmp_path: Path, sig: signal.Signals, *args: str, wait_s: float = 1.5):
    """Start the CLI with `args` (and --out), signal it `wait_s` after its run started:
    it must exit with 128 + sig within 30 s, in one line naming the run, leaving no
    process behind and the run marked interrupted. Returns the run."""
    out = tmp_path / "runs"
    cli = Cli(*args[:1], "--out", str(out), *args[1:], cwd=tmp_path)
    run_dir = _wait_for_running_run(out, cli)
    time.sleep(wait_s)  # the ranks are at work
    cli.proc.send_signal(sig)
    start = time.monotonic()
    code, _, err = cli.finish()
    assert time.monotonic() - start < 30
    assert code == 128 + sig, err
    assert str(run_dir) in _stopped_line(err, sig.name)
    assert cli.left_running() == []
    run = load_run(run_dir)
    assert run.status == "interrupted", run.meta
    assert sig.name in run.meta["message"] and "kept" in run.meta["message"]
    return run


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_stops_the_whole_job_and_keeps_the_profile(tmp_path: Path, sig) -> None:
    run = _stop(tmp_path, sig, "profile", "-n", "2", "--", str(_app()), *LONG)
    assert run.result is not None and run.result["status"] == "incomplete"


@pytest.mark.parametrize("toolchain", [p for p in toolchain_params() if p.id != "mpich"])
def test_sigterm_stops_every_rank_with_each_mpi(tmp_path: Path, toolchain: str) -> None:
    """Open MPI's prterun puts each rank in a process group of its own: stopping mpiexec's
    group alone would leave them; they stay in its session, which is what is stopped."""
    _stop(tmp_path, signal.SIGTERM, "profile", "--mpi", toolchain, "-n", "2", "--no-report",
          "--", str(_app(toolchain)), *LONG)


def test_sigterm_during_a_calibration_stops_its_ranks(tmp_path: Path) -> None:
    """The calibration's own runs (here the full ping-pong, minutes long) stop the same way:
    16 spinning calibration ranks were left running before."""
    _stop(tmp_path, signal.SIGTERM, "calibrate", "-n", "2", wait_s=1.0)


def test_ctrl_c_stops_a_suite_at_once(tmp_path: Path) -> None:
    """Before: the current benchmark was marked interrupted and the other seven ran."""
    out = tmp_path / "runs"
    cli = Cli("bench", "overlap-suite", "--quick", "-n", "2", "--out", str(out), cwd=tmp_path)
    first = _wait_for_running_run(out, cli)
    cli.proc.send_signal(signal.SIGINT)
    code, _, err = cli.finish()
    assert code == 130, err
    _stopped_line(err, "SIGINT")
    assert cli.left_running() == []
    runs = sorted(p for p in out.iterdir() if (p / "run.json").is_file())
    statuses = [load_run(p).status for p in runs]
    # the benchmark running at the signal (the first, or the second if the first had just
    # ended) is the last one there is
    assert runs[0] == first and len(runs) <= 2, statuses
    assert statuses[-1] == "interrupted" and "running" not in statuses, statuses
    time.sleep(2)
    assert sorted(p for p in out.iterdir() if (p / "run.json").is_file()) == runs


@pytest.fixture
def own_state(tmp_path: Path) -> Path:
    return own_state_dir(tmp_path)


def test_timeout_bounds_the_collective_calibration_and_its_failure_is_recorded(
        tmp_path: Path, own_state: Path) -> None:
    """`profile -n 3 --timeout 0.5` on a table without collectives for 3 ranks: their
    calibration is stopped at 0.5 s (it had its own 300 s), recorded beside the table,
    and the next profile does not try again."""
    marker = f"MO_TEST_{uuid.uuid4().hex}"
    env = {"MPI_OVERLAP_HOME": str(own_state), marker: "1"}
    app = str(_app())
    # a table for this machine, so that only the collectives are missing
    proc = run_cli("profile", "-n", "2", "--out", str(tmp_path / "warm"), "--no-report", "--",
                   app, "post-compute-wait", "65536", "2", env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    start = time.monotonic()
    proc = run_cli("profile", "-n", "3", "--timeout", "0.5", "--out", str(tmp_path / "runs"),
                   "--no-report", "--", app, *LONG, env=env, timeout=600, cwd=tmp_path)
    assert time.monotonic() - start < 120
    # profiled_app needs 2 ranks and ends with MPI_Abort(2): profile exits with its status
    assert proc.returncode == 2, proc.stderr
    assert "the program exited with status 2" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "collectives not calibrated" in proc.stderr and "timed out after 0.5 s" in proc.stderr
    assert "'mpi-overlap calibrate -n 3' does" in " ".join(proc.stderr.split())
    records = list((own_state / "xfer-tables").glob("*.coll-failures.json"))
    assert len(records) == 1
    doc = json.loads(records[0].read_text())
    assert "timed out after 0.5 s" in doc["failures"]["3"]["message"]
    coll_runs = sorted((own_state / "calibration-runs").glob("*-collectives-*"))
    assert processes_with_env(marker) == []  # the 3 calibration ranks were stopped

    # (profiled_app wants 2 ranks and aborts on 3: what matters is what runs before it)
    proc = run_cli("profile", "-n", "3", "--timeout", "60", "--out", str(tmp_path / "runs2"),
                   "--no-report", "--", app, "post-compute-wait", "65536", "2", env=env,
                   timeout=600, cwd=tmp_path)
    assert "Traceback" not in proc.stderr and "mpich: " in proc.stdout, proc.stderr
    text = " ".join(proc.stderr.split())
    assert "collectives on 3 ranks are not calibrated: the attempt of" in text, text
    assert sorted((own_state / "calibration-runs").glob("*-collectives-*")) == coll_runs
    assert processes_with_env(marker) == []


def test_the_failure_record_is_kept_and_cleared_beside_the_table(tmp_path: Path) -> None:
    from mpi_overlap.calibration import coll_failures

    table = tmp_path / "mpich-0-0.table"
    assert coll_failures.recorded(table, 16) is None
    coll_failures.record(table, 16, "timed out after 20 s")
    coll_failures.record(table, 4, "failed")
    assert coll_failures.recorded(table, 16)["message"] == "timed out after 20 s"
    coll_failures.clear(table, 16)
    assert coll_failures.recorded(table, 16) is None and coll_failures.recorded(table, 4)
    coll_failures.clear(table, 4)
    assert not coll_failures.failures_path(table).exists()
    coll_failures.failures_path(table).write_text("{not json")  # a memo: unreadable = empty
    assert coll_failures.recorded(table, 4) is None


def test_stopped_is_not_an_exception_that_a_series_swallows() -> None:
    from mpi_overlap.core.interrupts import Stopped

    assert not issubclass(Stopped, Exception) and not issubclass(Stopped, KeyboardInterrupt)
    assert Stopped(signal.SIGTERM).exit_code == 143
    assert sys.platform != "linux" or Stopped(signal.SIGHUP).exit_code == 129
