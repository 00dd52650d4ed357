"""Every file a run leaves goes through file_output.py: atomic, with the user's umask, and a
full disk is one line, exit 74, the run marked failed with what it saved, no traceback
from the thread that copies the job's output, and no run said to be complete before its
report is written (issue 14, "Why" 5).

The CLI cases mount a small tmpfs for --out (root only; skipped elsewhere); the in-process
cases make the writes fail with ENOSPC instead.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import one_line_error, processes_with_env, run_cli
from mpi_overlap.core import file_output
from mpi_overlap.core.file_output import WriteError, rewrite_in_place, write_json, write_text
from mpi_overlap.run.rundir import RUN_JSON_RESERVE, load_run, write_run_json


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.usefixtures("umask")
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_files_get_the_mode_the_umask_says(tmp_path: Path, mask: int, mode: int) -> None:
    os.umask(mask)
    path = tmp_path / "run.json"
    write_json(path, {"a": 1})
    assert path.stat().st_mode & 0o777 == mode
    write_text(path, "{}\n")  # a rewrite too
    assert path.stat().st_mode & 0o777 == mode


class _FullDisk:
    """A file object whose writes fail as on a full disk, after `room` bytes."""

    def __init__(self, fh, room: int) -> None:
        self.fh, self.room = fh, room

    def write(self, data):
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.fh.write(data)

    def __getattr__(self, name):
        return getattr(self.fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self.fh.__exit__(*exc)


def _full_disk(monkeypatch: pytest.MonkeyPatch, room: int = 0) -> None:
    real = os.fdopen
    monkeypatch.setattr(file_output.os, "fdopen",
                        lambda *a, **k: _FullDisk(real(*a, **k), room))


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "report.html"
    path.write_text("old report\n")
    _full_disk(monkeypatch, room=16)
    with pytest.raises(WriteError) as info:
        write_text(path, "x" * 100_000)
    assert info.value.disk_full and info.value.exit_code == 74
    assert str(info.value) == f"cannot write {path}: No space left on device"
    assert path.read_text() == "old report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_run_json_records_the_end_of_a_run_on_a_full_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meta = {"status": "running", "message": None}
    write_run_json(tmp_path, meta)
    assert (tmp_path / "run.json").stat().st_size > RUN_JSON_RESERVE
    _full_disk(monkeypatch)  # no new file can be written at all now
    meta.update(status="failed", message="cannot write result.json: disk full; saved: x" * 20)
    write_run_json(tmp_path, meta)  # written over the room kept in the running file
    assert json.loads((tmp_path / "run.json").read_text()) == meta
    assert not rewrite_in_place(tmp_path / "run.json", "x" * (1 << 20))  # does not fit


def test_the_output_pump_survives_a_full_disk(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr.log cannot be written: the job is drained and ends, the launch is failed
    with why, and no exception leaves the pump thread."""
    import threading

    from mpi_overlap.run import launch

    raised: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    real_open = open

    def failing_open(path, mode="r", *args, **kwargs):
        fh = real_open(path, mode, *args, **kwargs)
        return _FullDisk(fh, 10) if str(path).endswith("stderr.log") else fh

    monkeypatch.setattr("builtins.open", failing_open)
    cmd = ["sh", "-c", "for i in $(seq 2000); do echo line $i >&2; done; echo done"]
    outcome = launch.run_job(cmd, dict(os.environ), tmp_path, timeout_s=60)
    assert outcome.status == "failed", outcome
    assert "stderr.log" in (outcome.message or "") and "No space left" in outcome.message
    assert outcome.returncode == 0 and not raised
    assert (tmp_path / "stdout.log").read_text() == "done\n"


# ----- a real full disk: --out on a small tmpfs ---------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs",
                           str(mnt)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _profiled_app() -> Path:
    from mpi_overlap.platform.build import build_dir_for, ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain

    tc = get_toolchain("mpich")
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "profiled_app"


def _one_run(out: Path):
    runs = [p for p in out.iterdir() if (p / "run.json").is_file()]
    assert len(runs) == 1, runs
    return load_run(runs[0])


@pytest.mark.mpi
def test_disk_full_while_the_job_writes_its_output(small_disk: Path, tmp_path: Path) -> None:
    """The job's stderr fills the disk: one line, exit 74, the run failed with what it
    saved, no traceback from the pump thread, nothing left running."""
    marker = f"MO_TEST_{uuid.uuid4().hex}"
    out = small_disk / "runs"
    # 2 ranks x 200 KB of stderr into a 64 KiB file system
    proc = run_cli("profile", "-n", "2", "--out", str(out), "--", "sh", "-c",
                   "head -c 200000 /dev/zero | tr '\\0' x >&2; echo >&2",
                   env={marker: "1"}, timeout=600, cwd=tmp_path)
    line = one_line_error(proc, "No space left on device", code=74)
    assert "Exception in thread" not in proc.stderr
    run = _one_run(out)
    assert run.status == "failed", run.meta
    assert "No space left on device" in run.meta["message"]
    assert "saved:" in run.meta["message"], run.meta["message"]
    assert str(run.path) in line or "result.json" in line
    assert processes_with_env(marker) == []


@pytest.mark.mpi
def test_a_report_that_does_not_fit_fails_the_run_after_the_fact(small_disk: Path,
                                                                 tmp_path: Path) -> None:
    """The profile fits, its HTML report (with plots) does not: no half-written report, the
    run is marked failed with what it saved, and no 'complete' status line was printed."""
    out = small_disk / "runs"
    # the job's statistics alone (no documents besides them): the profile fits in 64 KiB
    proc = run_cli("profile", "-n", "2", "--no-per-rank", "--statistics-only", "--out",
                   str(out), "--",
                   str(_profiled_app()), "post-compute-wait", "65536", "20", timeout=600,
                   cwd=tmp_path)
    one_line_error(proc, "report", "No space left on device", code=74)
    assert ": complete —" not in proc.stdout
    run = _one_run(out)
    assert run.status == "failed" and "report could not be written" in run.meta["message"]
    assert "result.json" in run.meta["message"]
    for name in ("report.html", "report.json"):  # each is whole, or absent
        path = run.path / name
        if path.exists():
            text = path.read_text()
            assert text.rstrip().endswith("</html>" if name.endswith("html") else "}"), name
    assert not all((run.path / n).exists() for n in ("report.html", "report.json"))
    assert not [p for p in run.path.iterdir() if p.name.startswith(".")]  # no temporaries
