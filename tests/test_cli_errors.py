"""Bad input gets one line on stderr and a non-zero exit status, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sysconfig
from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli


def _one_line_error(proc, *fragments: str) -> None:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    one_line_error(proc, *fragments, code=2)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["bench", "overhead", "--mpi", "nosuch"], "unknown toolchain 'nosuch'"),
        (["bench", "overhead", "--sizes", "-5"], "negative"),
        (["bench", "overhead", "--sizes", "12q"], "invalid message size '12q'"),
        (["bench", "overhead", "--sizes", "4M:1k"], "end is below start"),
        (["bench", "overhead", "--direction", "sideways"], "--direction"),
        (["bench", "overhead", "-n", "1"], "at least 2 ranks"),
        # -np as mpiexec spells it is the rank count (it was read as -n "p")
        (["bench", "overhead", "-np", "1"], "at least 2 ranks"),
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
        # names validated where they enter (issue 14, "Why" 7)
        (["toolchain", "add", "system", "--mpicc", "MPICC", "--name", "../../etc/evil"],
         "toolchain name '../../etc/evil' is not allowed"),
        (["toolchain", "add", "system", "--mpicc", "MPICC", "--name", "two\nlines"],
         "toolchain name 'two\\nlines' is not allowed"),
        (["toolchain", "add", "system", "--mpicc", "MPICC", "--name=-rf"], "not allowed"),
        (["toolchain", "add", "system", "--mpicc", "MPICC", "--name", ".hidden"], "not allowed"),
        (["toolchain", "add", "system", "--mpicc", "MPICC", "--name", "x" * 65], "not allowed"),
        (["toolchain", "add", "system", "--mpicc", "MPICC", "--name", "esc\x1b]0;t\x07"],
         "not allowed"),
        (["bench", "overhead", "--timeout", "nan"], "'nan' is not a finite number"),
        (["bench", "overhead", "--timeout", "inf"], "'inf' is not a finite number"),
        (["bench", "overlap-suite", "--timeout", "-inf"], "not a finite number"),
        (["profile", "--snapshot", "nan", "--", "true"], "not a finite number"),
        (["profile", "--timeout", "0", "--", "true"], "--timeout must be positive"),
        (["bench", "comm-overlap", "--work-factor", "nan"], "not a finite number"),
        (["bench", "overhead", "--launcher", ""], "--launcher is empty"),
        (["calibrate", "--launcher", "  "], "--launcher is empty"),
        (["calibrate", "--collectives-budget", "0"], "--collectives-budget must be positive"),
        (["calibrate", "--check", "--collectives-budget", "5"], "drop --collectives-budget"),
        (["bench", "overhead", "-n", "1000"], "more than 4 ranks per core"),
        (["profile", "-n", "1000", "--", "true"], "add --oversubscribe"),
        (["bench", "overhead", "-n", "2000000", "--launcher", "true"],
         "more than 1048576 ranks is not a plausible job"),
        (["bench", "overhead", "-n", "0"], "0 is not in the range x>=1"),
        (["bench", "overhead", "--out", "A_FILE"], "is a file, not a directory"),
        (["bench", "overhead", "--out", "A_FILE/runs"], "is under"),
        (["calibrate", "--out", "A_FILE"], "is a file, not a directory"),
        (["report", "RUN", "--out", "A_FILE"], "is a file, not a directory"),
    ],
)
def test_bad_input_one_line(args: list[str], fragment: str, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    mpicc = str(Path(sysconfig.get_path("scripts")) / "mpicc")
    subst = {"A_FILE": str(tmp_path / "a-file"), "RUN": str(tmp_path / "run"), "MPICC": mpicc}
    # placeholders at the start of an argument: A_FILE, A_FILE/runs, ...
    args = [subst[a.split("/")[0]] + a[len(a.split("/")[0]):] if a.split("/")[0] in subst
            else a for a in args]
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


def test_an_escape_sequence_in_the_input_is_not_echoed_raw(tmp_path: Path) -> None:
    proc = run_cli("bench", "overhead", "--mpi", "x\x1b]0;owned\x07\nsecond line", timeout=60,
                   env={"MPI_OVERLAP_HOME": str(tmp_path / "state")}, cwd=tmp_path)
    line = one_line_error(proc, "unknown toolchain", code=2)
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "x\\x1b]0;owned\\x07" in line


def test_out_in_a_read_only_place(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    ro = tmp_path / "ro"
    ro.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=16k", "tmpfs", str(ro)],
                      check=False, capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        proc = run_cli("bench", "overhead", "--out", str(ro / "runs"), timeout=60,
                       env={"MPI_OVERLAP_HOME": str(tmp_path / "state")}, cwd=tmp_path)
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)
    one_line_error(proc, f"--out {ro / 'runs'}: {ro} is not writable", code=2)


@pytest.mark.mpi
def test_a_run_that_wrote_no_result_is_not_complete(tmp_path: Path) -> None:
    """A launcher that starts nothing and exits 0 (before: 'complete', exit 0)."""
    from mpi_overlap.run.rundir import load_run

    out = tmp_path / "runs"
    proc = run_cli("bench", "overhead", "--quick", "--launcher", "true", "--out", str(out),
                   timeout=600, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    (run_dir,) = out.iterdir()
    run = load_run(run_dir)
    assert run.status == "failed" and "wrote no results" in run.meta["message"]
    assert f"mpich: failed — {run_dir}" in proc.stdout


def test_ranks_bound_and_oversubscription(monkeypatch: pytest.MonkeyPatch) -> None:
    from mpi_overlap.core.errors import UserError
    from mpi_overlap.platform.toolchains import HOSTS_ENV, list_toolchains
    from mpi_overlap.run import launch

    monkeypatch.setattr(launch, "usable_cores", lambda: 2)
    monkeypatch.delenv(launch.OVERSUBSCRIBE_ENV, raising=False)
    for var in HOSTS_ENV:
        monkeypatch.delenv(var, raising=False)
    tc = list_toolchains()[0]
    assert launch.launch_command(tc, 8, ["a.out"])[-2:] == ["8", "a.out"]  # 4 per core
    with pytest.raises(UserError, match="-n 9 is more than 4 ranks per core"):
        launch.launch_command(tc, 9, ["a.out"])
    assert launch.launch_command(tc, 9, ["a.out"], "true")[-1] == "a.out"  # placed elsewhere
    monkeypatch.setenv("SLURM_JOB_NODELIST", "node[1-4]")  # mpiexec spreads them
    assert launch.launch_command(tc, 64, ["a.out"])
    monkeypatch.delenv("SLURM_JOB_NODELIST")
    monkeypatch.setenv(launch.OVERSUBSCRIBE_ENV, "1")
    assert launch.launch_command(tc, 64, ["a.out"])
    with pytest.raises(UserError, match="not a plausible job"):
        launch.launch_command(tc, launch.MAX_RANKS + 1, ["a.out"], "true")


def test_a_registry_with_a_bad_name_is_refused_and_can_be_repaired(tmp_path: Path) -> None:
    """A hand-edited toolchains.json: the name would put builds outside the state
    directory and split `toolchain list --names` (which the Makefile parses)."""
    import json

    state = tmp_path / "state"
    state.mkdir()
    entry = {"name": "../../evil\nx", "kind": "system", "flavor": "mpich", "mpicc": "/bin/true",
             "mpiexec": "/bin/true"}
    (state / "toolchains.json").write_text(json.dumps(
        {"version": 1, "toolchains": {entry["name"]: entry}, "probes": {}}))
    env = {"MPI_OVERLAP_HOME": str(state)}
    proc = run_cli("toolchain", "list", "--names", env=env, timeout=60, cwd=tmp_path)
    one_line_error(proc, "is not allowed", "toolchain remove", code=2)
    assert proc.stdout == ""
    proc = run_cli("toolchain", "remove", entry["name"], env=env, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "evil\\nx" in proc.stdout  # the name shown escaped, on one line
    proc = run_cli("toolchain", "list", "--names", env=env, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "mpich\n"


def test_output_width_follows_columns_and_never_wraps_at_80() -> None:
    """COLUMNS sets the width of what is printed; piped without it, stdout and stderr are
    not cut at rich's 80-column fallback (a long error line stays one line)."""
    narrow = run_cli("toolchain", "list", env={"COLUMNS": "60"})
    assert narrow.returncode == 0
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60
    long_name = "x" * 90
    proc = run_cli("bench", "overhead", "--mpi", long_name, env={"COLUMNS": ""})
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert f"unknown toolchain '{long_name}'" in line


def test_quiet_prints_where_the_report_is_and_nothing_else(tmp_path: Path) -> None:
    """`mpi-overlap --quiet report RUN`: no tables, only where the report is (both paths);
    --quiet with --verbose is refused in one line."""
    from fake_runs import run_dir

    d = run_dir(tmp_path, "overhead", {"results": {}})
    loud = run_cli("report", str(d), "--out", str(tmp_path / "loud"))
    quiet = run_cli("--quiet", "report", str(d), "--out", str(tmp_path / "quiet"))
    assert loud.returncode == quiet.returncode == 0, (loud.stderr, quiet.stderr)
    lines = [ln for ln in quiet.stdout.splitlines() if ln.strip()]
    assert [ln.split(":")[0] for ln in lines] == ["HTML report", "JSON summary"], lines
    assert len(loud.stdout.splitlines()) > len(lines)
    assert (tmp_path / "quiet" / "report.html").is_file()
    one_line_error(run_cli("-q", "--verbose", "report", str(d)), "--quiet or --verbose", code=2)
