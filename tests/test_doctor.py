"""`doctor`'s Fortran line per toolchain: what the toolchain's build found (the MPICH
wheel ships no Fortran wrapper), read without building, with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpi_overlap import doctor
from mpi_overlap.build import FORTRAN_STATUS
from mpi_overlap.toolchains import Toolchain


def _tc() -> Toolchain:
    return Toolchain(name="t", kind="wheel", flavor="mpich", mpicc="/x/bin/mpicc",
                     mpiexec="/x/bin/mpiexec")


@pytest.mark.parametrize(("status", "level", "says"), [
    (None, "info", "not known until it is built"),
    ("enabled: /usr/bin/mpifort.mpich", "ok", "profiles Fortran programs"),
    ("skipped: no MPI Fortran compiler wrapper (mpifort, mpif90, mpif77) beside /x/bin/mpicc",
     "warn", "C only: skipped: no MPI Fortran compiler wrapper"),
])
def test_fortran_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: str | None,
                      level: str, says: str) -> None:
    monkeypatch.setattr(doctor, "build_dir_for", lambda tc: tmp_path)
    if status is not None:
        (tmp_path / FORTRAN_STATUS).parent.mkdir()
        (tmp_path / FORTRAN_STATUS).write_text(status + "\n")
    found = doctor._fortran(_tc())
    assert found.level == level and says in found.detail
    if level == "warn":
        assert "toolchain add system" in found.fix
