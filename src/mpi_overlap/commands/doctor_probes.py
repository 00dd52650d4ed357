"""What `mpi-overlap doctor` tries with a toolchain, for real: compile and link a small
Fortran program for each MPI Fortran interface (mpif.h, `use mpi`, `use mpi_f08`), start
a 2-rank C program with each launcher that could be used (the toolchain's mpiexec, and
srun where Slurm answers), and read which Fortran entry points a built profiler defines.

The probes say what they saw (Outcome); doctor.py turns that into findings and fixes.
Each program is compiled once per toolchain, in a directory that `scratch` makes under
the state directory and deletes afterwards: on a cluster that is usually a shared file
system, so srun can start the program on other nodes. Every child runs under a time
limit in a session of its own (procs.run_tool), stopped as a whole if it overruns.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.paths import state_dir
from ..core.procs import run_tool
from ..platform.toolchains import Toolchain, telling_line

COMPILE_TIMEOUT_S = 120.0
LAUNCH_TIMEOUT_S = 60.0
SINFO_TIMEOUT_S = 10.0
NM_TIMEOUT_S = 30.0

# One program per Fortran interface: MPI_Init, MPI_Comm_rank, MPI_Finalize.
FORTRAN_PROGRAMS: dict[str, str] = {
    "mpif.h": """program mo_doctor
  implicit none
  include 'mpif.h'
  integer :: ierr, rank
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Finalize(ierr)
end program mo_doctor
""",
    "use mpi": """program mo_doctor
  use mpi
  implicit none
  integer :: ierr, rank
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Finalize(ierr)
end program mo_doctor
""",
    "use mpi_f08": """program mo_doctor
  use mpi_f08
  implicit none
  integer :: rank
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Finalize()
end program mo_doctor
""",
}

HELLO_RANKS = 2
_HELLO_C = """#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("mo-doctor rank %d of %d\\n", rank, size);
    MPI_Finalize();
    return 0;
}
"""


@dataclass
class Outcome:
    ok: bool
    line: str = ""  # when not ok: the first line that says why
    elapsed_s: float = 0.0
    stdout: str = ""
    timed_out: bool = False


def first_error_line(text: str) -> str:
    """The first line naming an error (compilers print the source lines around it first),
    else the first line that says something."""
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()
    return telling_line(text)


def run(cmd: list[str], env: dict[str, str], timeout_s: float,
        cwd: Path | None = None) -> Outcome:
    """`cmd` to its end or its time limit: ok when it exited with 0."""
    start = time.monotonic()
    try:
        proc = run_tool(cmd, env=env, timeout_s=timeout_s,
                        cwd=str(cwd) if cwd is not None else None)
    except subprocess.TimeoutExpired:
        return Outcome(False, f"did not finish within {timeout_s:g} s (stopped)",
                       time.monotonic() - start, timed_out=True)
    except OSError as err:
        return Outcome(False, f"cannot run {cmd[0]}: {err.strerror or err}")
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        why = first_error_line(proc.stderr + "\n" + proc.stdout)
        return Outcome(False, f"exit {proc.returncode}: {why}", elapsed, proc.stdout)
    return Outcome(True, "", elapsed, proc.stdout)


@contextmanager
def scratch() -> Iterator[Path]:
    """A directory for the probes' programs, deleted afterwards: under the state
    directory, or the system's temporary one where that cannot be written."""
    try:
        state_dir().mkdir(parents=True, exist_ok=True)
        made = tempfile.TemporaryDirectory(prefix="doctor-", dir=state_dir())
    except OSError:
        made = tempfile.TemporaryDirectory(prefix="mpi-overlap-doctor-")
    with made as tmp:
        yield Path(tmp)


def fortran_interfaces(wrapper: str, env: dict[str, str],
                       workdir: Path) -> dict[str, Outcome]:
    """Compile and link FORTRAN_PROGRAMS with `wrapper`, each in a folder of its own (the
    compiler may write module files beside it)."""
    out = {}
    for n, (interface, source) in enumerate(FORTRAN_PROGRAMS.items()):
        folder = workdir / f"fortran-{n}"
        folder.mkdir()
        (folder / "probe.f90").write_text(source)
        out[interface] = run([wrapper, "probe.f90", "-o", "probe"], env, COMPILE_TIMEOUT_S,
                             cwd=folder)
    return out


def compile_hello(tc: Toolchain, env: dict[str, str], workdir: Path) -> tuple[Path, Outcome]:
    """The 2-rank test program, compiled with the toolchain's mpicc."""
    (workdir / "hello.c").write_text(_HELLO_C)
    exe = workdir / "hello"
    return exe, run([tc.mpicc, "hello.c", "-o", str(exe)], env, COMPILE_TIMEOUT_S,
                    cwd=workdir)


def launch_hello(cmd: list[str], env: dict[str, str], workdir: Path) -> Outcome:
    """Run a launch command of the test program: ok when every rank said it was one of
    HELLO_RANKS (ranks that each say '0 of 1' were started by another MPI's launcher)."""
    outcome = run(cmd, env, LAUNCH_TIMEOUT_S, cwd=workdir)
    if not outcome.ok:
        return outcome
    want = {f"mo-doctor rank {r} of {HELLO_RANKS}" for r in range(HELLO_RANKS)}
    seen = {ln.strip() for ln in outcome.stdout.splitlines() if ln.startswith("mo-doctor")}
    if seen != want:
        said = "; ".join(sorted(seen)) or "nothing"
        outcome.ok = False
        outcome.line = (f"exit 0, but the ranks said: {said} (expected ranks 0 to "
                        f"{HELLO_RANKS - 1} of {HELLO_RANKS})")
    return outcome


def slurm_answers() -> Outcome:
    """Whether `sinfo -h` gets an answer from Slurm within SINFO_TIMEOUT_S."""
    sinfo = shutil.which("sinfo")
    if sinfo is None:
        return Outcome(False, "sinfo not found")
    return run([sinfo, "-h"], dict(os.environ), SINFO_TIMEOUT_S)


def defined_symbols(library: Path) -> set[str] | None:
    """The dynamic symbols `library` defines (nm -D, without a version: malloc, not
    malloc@@GLIBC_2.2.5), or None when nm cannot tell."""
    nm = shutil.which("nm")
    if nm is None or not library.is_file():
        return None
    outcome = run([nm, "-D", "--defined-only", str(library)], dict(os.environ), NM_TIMEOUT_S)
    if not outcome.ok:
        return None
    return {fields[-1].split("@")[0]
            for fields in (ln.split() for ln in outcome.stdout.splitlines()) if fields}



def launcher_flavor(mpiexec: str, env: dict[str, str]) -> str:
    """Whose launcher `mpiexec` is, from its --version ("openmpi", "intel", "mpich" for
    Hydra, or "unknown"): a toolchain registered with another MPI's mpiexec cannot start
    its programs (Debian's /usr/bin/mpiexec is whichever MPI the alternatives chose)."""
    said = run([mpiexec, "--version"], env, LAUNCH_TIMEOUT_S).stdout
    if any(mark in said for mark in ("OpenRTE", "Open MPI", "PRRTE")):
        return "openmpi"
    if "Intel(R) MPI" in said:
        return "intel"
    if "HYDRA" in said:
        return "mpich"
    return "unknown"
