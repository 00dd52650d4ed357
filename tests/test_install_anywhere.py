"""Installed anywhere: the wheel built from this tree, installed into a fresh venv outside
the checkout, carries its native sources (setup.py) and works with no checkout: `doctor`
finds them, and `profile -n 2` profiles a small C program built with the installed MPICH
wheel's mpicc, after building the native tree and running the calibration's benchmarks.

Slow (a venv, the package's dependencies from pip's cache or PyPI, a native build): about
a minute and a half. Skips, saying why, where pip cannot get the dependencies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi

ROOT = Path(__file__).resolve().parents[1]
TREE = ("src", "native", "pyproject.toml", "setup.py", "VERSION", "README.md")
APP = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static char buf[1 << 16];
    for (int i = 0; i < 20; i++) {
        MPI_Request r;
        if (rank == 0)
            MPI_Isend(buf, sizeof buf, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &r);
        else
            MPI_Irecv(buf, sizeof buf, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &r);
        volatile double x = 0;
        for (int k = 0; k < 20000; k++)
            x += k;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
"""


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600,
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _copy_tree(dest: Path) -> Path:
    """The files a wheel is built from (not the checkout's venv, builds or runs)."""
    for name in TREE:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name,
                            ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def test_the_wheel_works_outside_the_checkout(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPI_OVERLAP_HOME", "MPI_OVERLAP_NATIVE_DIR", "VIRTUAL_ENV",
                        "PYTHONPATH")}
    env["MPI_OVERLAP_HOME"] = str(tmp_path / "state")
    env["COLUMNS"] = "400"  # doctor's table shows whole paths
    tree = _copy_tree(tmp_path / "tree")
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                  str(tmp_path / "dist"), str(tree)], tmp_path, env)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("mpi_overlap-*.whl")
    # the MPICH wheel and the build tools only with the `mpich` extra: a system MPI's
    # users need not take them
    with zipfile.ZipFile(wheel) as zf:
        meta = next(zf.read(n).decode() for n in zf.namelist() if n.endswith("/METADATA"))
    requires = [ln.split(":", 1)[1].strip() for ln in meta.splitlines()
                if ln.startswith("Requires-Dist:")]
    for tool in ("mpich", "cmake", "ninja"):
        (req,) = [r for r in requires if r.split(">")[0].split("=")[0].strip() == tool]
        assert 'extra == "mpich"' in req, req
    # A bare venv filled by this interpreter's pip (`pip --python`): the same packages as a
    # pip inside it would install, without seeding a pip first (8 s of CPU). No byte
    # compilation of numpy, scipy and pandas either (30 s of CPU): Python
    # compiles what the commands below import when they import it.
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path,
                env).returncode == 0
    installed = _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                      "install", "-q", "--no-compile", "--disable-pip-version-check",
                      f"{wheel}[mpich]"], tmp_path, env, timeout=900)
    if installed.returncode != 0:
        pytest.skip("pip could not install the wheel's dependencies here: "
                    + (installed.stderr.strip().splitlines() or ["no message"])[-1])
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    away = tmp_path / "away"  # no checkout anywhere above it
    away.mkdir()
    cli = str(venv / "bin" / "mpi-overlap")

    doctor = _run([cli, "doctor"], away, env)
    native = [ln for ln in doctor.stdout.splitlines() if "native sources" in ln]
    assert native and " ok " in native[0] and "_native" in native[0], doctor.stdout

    (away / "app.c").write_text(APP)
    cc = _run([str(venv / "bin" / "mpicc"), "app.c", "-o", "app"], away, env)
    assert cc.returncode == 0, cc.stderr
    prof = _run([cli, "profile", "-n", "2", "--out", str(away / "runs"), "--", "./app"],
                away, env)
    assert prof.returncode == 0, prof.stderr[-3000:]
    (profile_dir,) = (away / "runs").glob("*-profile-mpich")
    result = json.loads((profile_dir / "result.json").read_text())
    assert len(result["ranks"]) == 2
    # The benchmarks ran too, built from the wheel's sources: the calibration's ping-pong
    # and collectives, which the profile needed first (no table in a fresh state directory).
    calibrations = sorted((Path(env["MPI_OVERLAP_HOME"]) / "calibration-runs").glob("*"))
    ran = {json.loads((d / "run.json").read_text())["benchmark"] for d in calibrations
           if (d / "run.json").is_file()}
    assert {"pingpong", "collectives"} <= ran, calibrations
    for d in [profile_dir, *calibrations]:
        if (d / "run.json").is_file():
            assert json.loads((d / "run.json").read_text())["status"] == "complete"
            assert str(ROOT) not in (d / "run.json").read_text()  # nothing of the checkout
