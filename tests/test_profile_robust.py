"""What the profiler leaves behind when a run goes wrong (issue 14; docs/profiler.md,
"Output"), end to end with `mpi-overlap profile` on native/tests/robust_app.c:

- a rank SIGKILLed while it sits idle in a 20-second sleep leaves the snapshot its
  snapshot thread wrote, with the events it had queued, and the run is `partial`;
- MPI_Abort: the aborting rank's profile is `incomplete`, its reason names MPI_Abort and
  the error code; the other rank's state is there too; the run is `partial`;
- region names that are not UTF-8 or hold control characters reach result.json as
  Python's errors="replace" decoding gives them, and the run is complete;
- a rank paused by MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE) records nothing until its
  next MPI_Pcontrol, and one that ends in MPI_Finalize while paused still writes its
  profile; with threads in use the pause is refused and taken as MPI_Pcontrol(0).

Each checks that no rank of the program is left running (a /proc scan).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cli_helpers import CLI
from mpi_overlap.core.machine_load import read_stat
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run import mpich_leftovers
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

EXCHANGES = 10  # robust_app.c: rounds of Irecv + Isend + Waitall, 2 transfers each
SNAPSHOT_S = 0.5


def _app(toolchain: str = "mpich") -> Path:
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "robust_app"


def _processes_of(program: Path) -> list[int]:
    """Pids whose command line runs `program` (its path, as launched)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # ended meanwhile, or not ours to read
        if str(program).encode() in argv:
            pids.append(int(entry.name))
    return pids


def _described(pid: int) -> str:
    """What a leftover rank was doing, for the failure's message (a rare flake, issue 39):
    its state, parent, session and group, the kernel function it sleeps in, and its
    parent's command, so the next failure says who kept it and where it hung."""
    proc = Path(f"/proc/{pid}")
    try:
        fields = (read_stat(str(proc / "stat")) or ("", []))[1]
        state, ppid, pgid, sid = fields[0], int(fields[1]), fields[2], fields[3]
        wchan = (proc / "wchan").read_text() or "-"
        parent = Path(f"/proc/{ppid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace").strip()
    except (OSError, IndexError, ValueError) as err:
        return f"{pid} (gone while described: {err})"
    return (f"{pid} state {state} ppid {ppid} ({parent[:120] or '?'}) pgid {pgid} sid {sid} "
            f"wchan {wchan}")


def _assert_nothing_left(program: Path) -> None:
    deadline = time.monotonic() + 15
    while (left := _processes_of(program)) and time.monotonic() < deadline:
        time.sleep(0.2)
    described = [_described(pid) for pid in left]
    for pid in left:  # do not leave them to the next test, but fail
        os.kill(pid, signal.SIGKILL)
    assert not left, f"ranks of {program.name} left running: {'; '.join(described)}"


def _start(tmp_path: Path, toolchain: str, *app_args: str
           ) -> tuple[subprocess.Popen[str], Path, Path]:
    out, app = tmp_path / "runs", _app(toolchain)
    cmd = [*CLI, "profile", "--mpi", toolchain, "-n", "2", "--snapshot", str(SNAPSHOT_S),
           "--timeout", "120", "--out", str(out), "--", str(app), *app_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    return proc, out, app


def _finish(proc: subprocess.Popen[str], out: Path, app: Path):
    """Waits for the CLI, checks that no rank is left running; (exit status, stderr, run)."""
    try:
        _, stderr = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        pytest.fail(f"mpi-overlap profile did not end:\n{stderr}")
    finally:
        _assert_nothing_left(app)
    runs = sorted(p for p in out.iterdir() if (p / "run.json").is_file())
    assert runs, stderr
    return proc.returncode, stderr, load_run(runs[-1])


def _profile(tmp_path: Path, toolchain: str, *app_args: str):
    return _finish(*_start(tmp_path, toolchain, *app_args))


def _wait_for_snapshot(out: Path, rank: int, proc: subprocess.Popen[str]) -> dict:
    """The first snapshot (status running) of `rank`, read as the collection will."""
    deadline = time.monotonic() + 180  # the first profile builds the library, calibrates
    while time.monotonic() < deadline:
        for path in out.glob(f"*/profile.rank-{rank}.json"):
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if doc["status"] == "running":
                return doc
        assert proc.poll() is None, "the run ended before rank 1 wrote a snapshot"
        time.sleep(0.1)
    pytest.fail(f"no snapshot of rank {rank} within 180 s")


@pytest.mark.parametrize("toolchain", toolchain_params(systems=False))
def test_rank_killed_while_idle_leaves_its_snapshot(tmp_path, toolchain):
    proc, out, app = _start(tmp_path, toolchain, "idle", "20")
    try:
        snap = _wait_for_snapshot(out, 1, proc)
        pid = snap["pid"]
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert str(app).encode() in argv  # it is rank 1 of this run, asleep
        os.kill(pid, signal.SIGKILL)
    finally:
        rc, stderr, run = _finish(proc, out, app)
    # the launcher's status for a rank killed with SIGKILL is the program's: profile exits with it
    assert rc == run.meta["returncode"] and rc not in (0, 3), stderr
    assert "Traceback" not in stderr
    assert run.status == "partial" and run.result["status"] == "incomplete"
    by_rank = {d["rank"]: d for d in run.result["ranks"]}
    assert by_rank[1]["status"] == "running"  # the last snapshot: marked, not complete
    assert any("running" in w for w in run.result["warnings"])
    # No queue was full (far fewer events than a queue holds): the rank processed only
    # while it waited (mop_idle.h, each step counted in both), and the snapshot thread
    # processed what was still queued on a copy, so every transfer is in it.
    profile = by_rank[1]["profile"]
    assert profile["totals"]["transfers"] == 2 * EXCHANGES
    assert profile["counters"]["flushes"] == profile["counters"].get("idle_steps", 0)
    regions = {r["region"]: r for r in profile["by_region"]}
    assert regions["exchange"]["transfers"] == 2 * EXCHANGES
    # Rank 0, blocked in MPI_Barrier, was ended by the launcher: a signal's profile or
    # its own last snapshot.
    assert by_rank[0]["status"] in ("incomplete", "running")
    assert by_rank[0]["profile"]["totals"]["transfers"] >= 2 * EXCHANGES


@pytest.mark.parametrize("toolchain", toolchain_params(systems=False))
def test_mpi_abort_leaves_the_aborting_ranks_profile(tmp_path, toolchain):
    # Rank 0 aborts after 3 snapshot periods, so rank 1 (in MPI_Barrier) has one too.
    began = time.time()
    rc, stderr, run = _profile(tmp_path, toolchain, "abort", "7", str(3 * SNAPSHOT_S))
    assert rc == 7, stderr  # MPI_Abort(..., 7): the launcher exits 7, and so does profile
    assert "Traceback" not in stderr
    assert run.status == "partial" and run.result["status"] == "incomplete"
    by_rank = {d["rank"]: d for d in run.result["ranks"]}
    assert set(by_rank) == {0, 1}
    assert by_rank[0]["status"] == "incomplete"
    assert "MPI_Abort" in by_rank[0]["reason"] and "error code 7" in by_rank[0]["reason"]
    assert by_rank[0]["profile"]["totals"]["transfers"] == 2 * EXCHANGES
    fns = {f["fn"]: f for f in by_rank[0]["profile"]["by_function"]}
    assert fns["MPI_Abort"]["calls"] == 1
    # Rank 1 (in MPI_Barrier) ends as the MPI decides: killed by the launcher (a
    # signal's profile, or its last snapshot), or its barrier fails and it finalizes.
    assert by_rank[1]["status"] in ("complete", "incomplete", "running")
    assert by_rank[1]["profile"]["totals"]["transfers"] >= 2 * EXCHANGES
    # MPICH's proxies, ended by the abort, leave their topology files in /tmp: the launch
    # removes those written since it began (unless another job's proxy runs meanwhile).
    left = [p for p in mpich_leftovers.TMP.glob(mpich_leftovers.TOPOLOGY)
            if p.stat().st_mtime >= began]
    assert not left or mpich_leftovers.proxies_running(), left
    # and MPICH's shared-memory segment, which only MPI_Finalize unlinks (unless another
    # job maps it)
    left = [p for p in mpich_leftovers.SHM.glob(mpich_leftovers.SEGMENTS)
            if p.stat().st_mtime >= began]
    assert not left or all(str(p) in mpich_leftovers.mapped() for p in left), left


def test_region_names_that_are_not_utf8_keep_the_run(tmp_path):
    rc, stderr, run = _profile(tmp_path, "mpich", "names")
    assert rc == 0, stderr
    assert run.status == "complete" and run.result["status"] == "complete"
    raw = [b"caf\xe9", b"esc\x1b[31mred\x07", b"two\nlines", b"caf\xc3\xa9",
           "é".encode() * 31]  # 35 x e-acute given: cut at 63 bytes, on a character
    want = {name.decode("utf-8", "replace") for name in raw}
    for doc in run.result["ranks"]:
        got = {r["region"] for r in doc["profile"]["by_region"]} - {"(no region)"}
        assert got == want
    # The rank files themselves are UTF-8 with the control characters escaped.
    for path in run.path.glob("profile.rank-*.json"):
        text = path.read_bytes().decode("utf-8")
        assert "\x1b" not in text and "\\u001b" in text


def test_a_pause_records_nothing_and_a_paused_rank_still_finalizes(tmp_path):
    """robust_app pause: 4 exchanges, the 2nd and the 4th paused, MPI_Finalize while
    paused. Only the 1st and 3rd exchanges' transfers and calls are in the profile."""
    rc, stderr, run = _profile(tmp_path, "mpich", "pause")
    assert rc == 0, stderr
    assert "pauses only" not in stderr
    assert run.status == "complete" and run.result["status"] == "complete"
    for doc in run.result["ranks"]:
        profile = doc["profile"]
        assert doc["status"] == "complete"
        assert profile["totals"]["transfers"] == 2 * 2 * EXCHANGES
        assert profile["counters"].get("unmonitored_transfers", 0) == 0
        fns = {f["fn"]: f["calls"] for f in profile["by_function"]}
        assert fns["MPI_Waitall"] == 2 * EXCHANGES
        assert fns["MPI_Pcontrol"] == 2  # the pauses; the resume came while paused


def test_a_pause_with_threads_in_use_is_monitoring_off(tmp_path):
    """robust_app pause-threads: the same under MPI_THREAD_MULTIPLE. The profiler says once
    that it cannot pause, and the paused exchanges are recorded with monitoring off."""
    rc, stderr, run = _profile(tmp_path, "mpich", "pause-threads")
    assert rc == 0, stderr
    assert run.status == "complete"
    for doc in run.result["ranks"]:
        profile = doc["profile"]
        assert profile["totals"]["transfers"] == 2 * 2 * EXCHANGES
        assert profile["counters"]["unmonitored_transfers"] == 2 * 2 * EXCHANGES
    # once per rank, however many pauses it asked for; kept in the run's stderr.log
    line = "MPI_Pcontrol(-1) pauses only a program without threads in use"
    assert stderr.count(line) == 2, stderr
    assert (run.path / "stderr.log").read_text().count(line) == 2
