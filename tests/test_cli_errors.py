"""Bad input gets one line on stderr and a non-zero exit status, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli


def _one_line_error(proc, *fragments: str) -> None:
    assert proc.returncode != 0, proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("mpi-overlap: error: "), lines[0]
    assert "Traceback" not in proc.stderr
    for frag in fragments:
        assert frag in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["bench", "overhead", "--mpi", "nosuch"], "unknown toolchain 'nosuch'"),
        (["bench", "overhead", "--sizes", "-5"], "negative"),
        (["bench", "overhead", "--sizes", "12q"], "invalid message size '12q'"),
        (["bench", "overhead", "--sizes", "4M:1k"], "end is below start"),
        (["bench", "overhead", "--direction", "sideways"], "--direction"),
        (["bench", "overhead", "-n", "1"], "at least 2 ranks"),
        (["bench", "overhead", "--launcher", "no-such-launcher"], "not found"),
        (["bench", "overhead", "--timeout", "-3"], "--timeout must be positive"),
        (["bench", "overhead", "--reps", "abc"], "--reps"),
        (["bench", "overhead", "--launches", "0"], "--launches must be between 1"),
        (["bench", "overlap-suite", "--launches", "99"], "--launches must be between 1"),
        (["bench", "nbc-overlap", "--datatype", "char"], "--datatype"),
        (["bench", "nosuchbench"], "nosuchbench"),
        (["toolchain", "add", "system", "--mpicc", "/nonexistent/mpicc"], "not found"),
        (["toolchain", "add", "system"], "--mpicc"),
        (["toolchain", "add", "lam"], "unknown wheel toolchain"),
        (["toolchain", "remove", "mpich"], "built in"),
        (["report", "/nonexistent/run"], "not a run directory"),
        (["--no-such-flag"], "no-such-flag"),
    ],
)
def test_bad_input_one_line(args: list[str], fragment: str, tmp_path: Path) -> None:
    proc = run_cli(*args, env={"MPI_OVERLAP_HOME": str(tmp_path / "state")}, timeout=120,
                   cwd=tmp_path)
    _one_line_error(proc, fragment)


def test_report_on_a_directory_without_run_json(tmp_path: Path) -> None:
    proc = run_cli("report", str(tmp_path), timeout=60)
    _one_line_error(proc, "no run.json")


def test_help_and_version_succeed() -> None:
    assert run_cli("--help", timeout=60).returncode == 0
    proc = run_cli("--version", timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("mpi-overlap ")
