"""`profile --mpi A --mpi B`: one run per toolchain, compared side by side; {mpi} in the
program's arguments names each toolchain's build; a program linked with another MPI's ABI
is refused in one line before anything runs (profile/run/program_abi.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain, list_toolchains
from mpi_overlap.profile.run import program_abi
from mpi_overlap.run.rundir import load_run


def _app(toolchain: str) -> Path:
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "profiled_app"


def _have(name: str) -> bool:
    return name in {tc.name for tc in list_toolchains()}


needs_openmpi = pytest.mark.skipif(not _have("openmpi"), reason="toolchain 'openmpi' not "
                                   "added (mpi-overlap toolchain add openmpi)")


def test_the_needed_libraries_name_the_abi_family():
    app = _app("mpich")
    needed = program_abi.needed_libraries(app)
    assert needed is not None and any(n.startswith("libmpi") for n in needed)
    family, soname = program_abi.program_family(app)
    assert family == "mpich" and soname in needed
    assert program_abi.mismatch(app, "mpich", "mpich") is None
    assert program_abi.mismatch(app, "intel", "intel") is None  # the same ABI
    why = program_abi.mismatch(app, "openmpi", "openmpi", shown="./app")
    assert why is not None and why.startswith("./app is linked with the MPICH ABI")
    assert "{mpi}" in why


def test_what_is_not_an_elf_program_is_not_judged(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nexec ./app\n")
    assert program_abi.needed_libraries(script) is None
    assert program_abi.mismatch(script, "openmpi", "openmpi") is None
    assert program_abi.for_toolchain(["./a-{mpi}", "x{mpi}y", "z"], "mpich") == \
        ["./a-mpich", "xmpichy", "z"]


@pytest.mark.parametrize("args, message", [
    (("--mpi", "mpich", "--mpi", "mpich"), "--mpi names a toolchain twice"),
    (("--mpi", "mpich", "--mpi", "openmpi", "--table", "t.json"),
     "--table is one toolchain's transfer-time table"),
])
def test_bad_combinations_are_one_line(tmp_path, args, message):
    proc = run_cli("profile", *args, "--", "true", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr
    assert "Traceback" not in proc.stderr


@needs_openmpi
def test_a_program_of_another_abi_is_refused_before_any_run(tmp_path):
    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", "openmpi", "--mpi", "mpich", "--out", str(out), "--",
                   str(_app("openmpi")), "post-compute-wait", "64", "1", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "is linked with Open MPI (libmpi.so.40), but toolchain 'mpich'" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not out.exists() or not any(out.iterdir())  # refused before the first run


@pytest.mark.mpi
@needs_openmpi
def test_one_run_per_toolchain_compared_side_by_side(tmp_path):
    for name in ("mpich", "openmpi"):
        (tmp_path / f"app-{name}").symlink_to(_app(name))
    out = tmp_path / "runs"
    proc = run_cli("profile", "-n", "2", "--mpi", "mpich", "--mpi", "openmpi", "--out",
                   str(out), "--", str(tmp_path / "app-{mpi}"), "post-compute-wait", "4096",
                   "3", timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = sorted((load_run(p) for p in out.iterdir() if (p / "run.json").is_file()),
                  key=lambda r: r.label)
    assert [r.label for r in runs] == ["mpich", "openmpi"]
    for run in runs:
        assert run.status == "complete"
        assert Path(run.meta["app"][0]) == _app(run.toolchain).resolve()
        assert len(run.result["ranks"]) == 2
    assert "Profile runs side by side" in proc.stdout
    reports = list(out.glob("report-*/report.html"))
    assert len(reports) == 1
