"""The wrong-MPI refusal reads every MPI library a program needs: a Fortran (or C++)
program names only its binding library (libmpi_mpifh.so.40, libmpifort.so.12, ...), and a
program built on a solver library gets MPI through that library; each is refused in one
line, exit 2, before anything runs, as a C program linked to libmpi.so.40 is
(profile/run/program_abi.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli
from mpi_overlap.profile.run import program_abi

MPIF90_OPENMPI = "/usr/bin/mpif90.openmpi"


@pytest.mark.parametrize("soname, family", [
    ("libmpi.so.40", "openmpi"),
    ("libmpi_mpifh.so.40", "openmpi"),
    ("libmpi_usempif08.so.40", "openmpi"),
    ("libmpi_usempi_ignore_tkr.so.40", "openmpi"),
    ("libmpi_usempi.so.40", "openmpi"),
    ("libmpi_cxx.so.40.30.1", "openmpi"),
    ("libmpi.so.12", "mpich"),
    ("libmpich.so.12", "mpich"),
    ("libmpifort.so.12", "mpich"),
    ("libmpichfort.so.12", "mpich"),
    ("libmpicxx.so.12", "mpich"),
    ("libmpi_abi.so.0", None),  # the standard ABI: any library that provides it
    ("libgfortran.so.5", None),
    ("libmpi_mpifh.so.20", None),  # Open MPI 2: a soname of no toolchain here
])
def test_every_binding_names_its_abi_family(soname, family):
    assert program_abi.soname_family(soname) == family


def _shared(cc: str, out: Path, soname: str, *extra: str) -> None:
    src = out.parent / (out.name + ".c")
    src.write_text("int mo_stand_in(void) { return 0; }\n")
    subprocess.run([cc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(out),
                    str(src), *extra], check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")
def test_mpi_reached_through_a_library_of_the_program_is_read(tmp_path):
    """prog → libsolver.so (found through the program's RUNPATH $ORIGIN/lib) → an Open MPI
    soname: the program needs Open MPI although it names no MPI library itself. The
    'MPI library' here is a stand-in built with that soname; only its name is read."""
    lib = tmp_path / "lib"
    lib.mkdir()
    _shared("cc", lib / "libmpi.so.40", "libmpi.so.40")
    _shared("cc", lib / "libsolver.so", "libsolver.so", "-Wl,--no-as-needed", f"-L{lib}",
            "-l:libmpi.so.40")
    main = tmp_path / "prog.c"
    main.write_text("int main(void) { return 0; }\n")
    prog = tmp_path / "prog"
    subprocess.run(["cc", "-o", str(prog), str(main), "-Wl,--no-as-needed", f"-L{lib}",
                    "-lsolver", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib"],
                   check=True, capture_output=True)
    assert "libmpi.so.40" not in (program_abi.needed_libraries(prog) or [])
    assert program_abi.program_family(prog) == ("openmpi", "libmpi.so.40")
    why = program_abi.mismatch(prog, "mpich", "mpich", shown="./prog")
    assert why is not None and why.startswith("./prog is linked with Open MPI (libmpi.so.40)")


@pytest.mark.skipif(not Path(MPIF90_OPENMPI).is_file(),
                    reason=f"{MPIF90_OPENMPI} missing (Debian's Open MPI Fortran wrapper)")
def test_a_fortran_program_of_another_mpi_is_refused_in_one_line(tmp_path):
    src = tmp_path / "prog.f90"
    src.write_text("program prog\n  use mpi\n  integer :: ierr\n  call MPI_Init(ierr)\n"
                   "  call MPI_Finalize(ierr)\nend program prog\n")
    built = subprocess.run([MPIF90_OPENMPI, "-o", str(tmp_path / "prog"), str(src)],
                           capture_output=True, text=True, check=False)
    if built.returncode != 0:
        pytest.skip(f"{MPIF90_OPENMPI} could not build a program: {built.stderr[-300:]}")
    needed = program_abi.needed_libraries(tmp_path / "prog") or []
    assert any(n.startswith("libmpi_") for n in needed), needed  # a binding library
    out = tmp_path / "runs"
    # the default toolchain (the MPICH wheel) cannot run it
    proc = run_cli("profile", "-n", "2", "--out", str(out), "--", "./prog", cwd=tmp_path,
                   timeout=120)
    line = one_line_error(proc, "./prog is linked with Open MPI (libmpi_", "but toolchain",
                          code=2)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "mpif90" in line
    assert not out.exists() or not any(out.iterdir())  # refused before anything ran
