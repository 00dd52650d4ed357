"""`doctor` per toolchain: which MPI Fortran interfaces compile and link (mpif.h, `use
mpi`, `use mpi_f08`), which of them the built profiler intercepts (the build's Fortran
line, read without building: the MPICH wheel ships no Fortran wrapper), and which
launchers start a 2-rank program (mpiexec; srun where Slurm answers), each with the fix.

The fakes are shell scripts standing for the MPI's tools, so the verdicts are checked
without the MPI that would give them; the default toolchain's mpiexec is checked for
real."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mpi_overlap.commands import doctor, doctor_probes
from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.build import FORTRAN_STATUS, fortran_wrapper
from mpi_overlap.platform.toolchains import Toolchain, get_toolchain


def _tc(bindir: str = "/x/bin", flavor: str = "mpich") -> Toolchain:
    return Toolchain(name="t", kind="system", flavor=flavor, mpicc=f"{bindir}/mpicc",
                     mpiexec=f"{bindir}/mpiexec")


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


# A compiler wrapper standing for mpicc / mpif90: writes the -o file, or fails with a
# gfortran-like message when the source uses a module named in FAIL (a regex).
_COMPILER = """out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in -o) out="$2"; shift ;; *.f90|*.c) src="$1" ;; esac
  shift
done
if [ -n "$FAIL" ] && grep -qiE "$FAIL" "$src"; then
  echo "$src:2:7:" >&2
  echo "" >&2
  echo "    2 |   use mpi_f08" >&2
  echo "Fatal Error: Cannot open module file 'mpi_f08.mod' for reading at (1)" >&2
  exit 1
fi
printf '#!/bin/sh\\n' > "$out"; chmod +x "$out"
"""


def _fake_mpi(tmp_path: Path, *, fortran_fails: str = "", mpiexec: str = "") -> Toolchain:
    bindir = tmp_path / "bin"
    _script(bindir / "mpicc", _COMPILER)
    _script(bindir / "mpif90", f"FAIL='{fortran_fails}'\n" + _COMPILER)
    _script(bindir / "mpiexec", mpiexec or 'echo "mo-doctor rank 0 of 2"\n'
            'echo "mo-doctor rank 1 of 2"\n')
    return _tc(str(bindir))


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


# ----- Fortran: the interfaces ---------------------------------------------------------

def test_the_fortran_wrapper_is_found_as_the_build_finds_it(tmp_path: Path) -> None:
    """fortran.cmake's search: mpicc.suffix -> mpifort.suffix beside it, then beside the
    targets of its symbolic links."""
    real = tmp_path / "real"
    _script(real / "mpicc.mpich", "")
    _script(real / "mpif90.mpich", "")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "mpicc").symlink_to(real / "mpicc.mpich")
    assert fortran_wrapper(str(tmp_path / "bin" / "mpicc")) == str(real / "mpif90.mpich")
    _script(real / "mpifort.mpich", "")  # mpifort is preferred
    assert fortran_wrapper(str(real / "mpicc.mpich")) == str(real / "mpifort.mpich")
    assert fortran_wrapper(str(tmp_path / "nowhere" / "mpicc")) is None


def test_all_fortran_interfaces_compile(tmp_path: Path) -> None:
    tc = _fake_mpi(tmp_path)
    found = doctor._fortran_interfaces(tc, _work(tmp_path))
    assert found.item == "toolchain t Fortran" and found.level == "ok", found
    assert found.detail == (f"mpif.h, use mpi, use mpi_f08 compile and link with "
                            f"{tmp_path / 'bin' / 'mpif90'}")


def test_a_failing_interface_is_named_with_the_compilers_error(tmp_path: Path) -> None:
    tc = _fake_mpi(tmp_path, fortran_fails="use mpi_f08")
    found = doctor._fortran_interfaces(tc, _work(tmp_path))
    assert found.level == "warn", found
    assert ("use mpi_f08 fails: exit 1: Fatal Error: Cannot open module file "
            "'mpi_f08.mod'") in found.detail
    assert "mpif.h, use mpi compile and link" in found.detail
    assert "mpi_f08" in found.fix and "mpif.h or use mpi" in found.fix


def test_a_wrapper_that_compiles_nothing(tmp_path: Path) -> None:
    tc = _fake_mpi(tmp_path, fortran_fails=".")
    found = doctor._fortran_interfaces(tc, _work(tmp_path))
    assert found.level == "warn" and "compile and link" not in found.detail
    assert all(f"{name} fails" in found.detail for name in doctor_probes.FORTRAN_PROGRAMS)
    assert "gfortran" in found.fix


def test_no_fortran_wrapper(tmp_path: Path) -> None:
    _script(tmp_path / "bin" / "mpicc", _COMPILER)
    found = doctor._fortran_interfaces(_tc(str(tmp_path / "bin")), _work(tmp_path))
    assert found.level == "warn" and "no Fortran wrapper" in found.detail
    assert "toolchain add system" in found.fix


# ----- Fortran: what the profiler intercepts -------------------------------------------

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
    assert found.item == "toolchain t Fortran profiling"
    assert found.level == level and says in found.detail
    if level == "warn":
        assert "toolchain add system" in found.fix


@pytest.mark.parametrize(("symbols", "level", "says"), [
    ({"mpi_send_", "mpi_barrier_f08_"}, "ok", "mpif.h, use mpi, use mpi_f08 ("),
    ({"mpi_send_"}, "warn", "mpif.h, use mpi; use mpi_f08 calls are not intercepted"),
    (None, "ok", "use mpi_f08 not known"),
])
def test_which_interfaces_are_profiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       symbols: set[str] | None, level: str,
                                       says: str) -> None:
    """mpif.h and use mpi call mpi_send_...; mpi_f08 calls mpi_send_f08_..., which the
    library defines only for the MPIs whose mpi_f08 it knows."""
    monkeypatch.setattr(doctor, "build_dir_for", lambda tc: tmp_path)
    (tmp_path / FORTRAN_STATUS).parent.mkdir()
    (tmp_path / FORTRAN_STATUS).write_text("enabled: /usr/bin/mpifort\n")
    monkeypatch.setattr(doctor_probes, "defined_symbols", lambda library: symbols)
    found = doctor._fortran(_tc())
    assert found.level == level and says in found.detail, found
    if level == "warn":
        assert "Open MPI 4 and MPICH 4.0" in found.fix


def test_defined_symbols_reads_a_library() -> None:
    libc = next((p for p in (Path("/lib/x86_64-linux-gnu/libc.so.6"),
                             Path("/lib64/libc.so.6"), Path("/usr/lib/libc.so.6"))
                 if p.is_file()), None)
    if libc is None or doctor_probes.shutil.which("nm") is None:
        pytest.skip("no libc.so.6 or no nm here")
    symbols = doctor_probes.defined_symbols(libc)
    assert symbols is not None and "malloc" in symbols
    assert doctor_probes.defined_symbols(Path("/no/such/library.so")) is None


# ----- launchers -----------------------------------------------------------------------

def test_a_working_mpiexec(tmp_path: Path) -> None:
    (found,) = doctor._launchers(_fake_mpi(tmp_path), _work(tmp_path), srun=False)
    assert found.item == "toolchain t launcher mpiexec" and found.level == "ok", found
    assert found.detail.startswith("2 ranks started and finished in ")


def test_a_failing_mpiexec_gives_its_error_line(tmp_path: Path) -> None:
    tc = _fake_mpi(tmp_path, mpiexec='echo "some banner"\n'
                   'echo "mpiexec: cannot reach host nowhere" >&2\nexit 1\n')
    (found,) = doctor._launchers(tc, _work(tmp_path), srun=False)
    assert found.level == "fail"
    assert found.detail == "exit 1: mpiexec: cannot reach host nowhere"
    assert "by hand" in found.fix


def test_another_mpis_mpiexec_is_named(tmp_path: Path) -> None:
    """Debian's /usr/bin/mpiexec is whichever MPI the alternatives chose: an MPICH
    toolchain registered with Open MPI's orterun fails, and the fix says why."""
    tc = _fake_mpi(tmp_path, mpiexec='[ "$1" = --version ] && echo "orterun (OpenRTE) 4.1.4"'
                   ' && exit 0\necho "orterun has detected an attempt to run as root." >&2\n'
                   'exit 1\n')
    tc.mpicc = str(_script(tmp_path / "bin" / "mpicc.mpich", _COMPILER))
    own = _script(tmp_path / "bin" / "mpiexec.mpich", "")
    (found,) = doctor._launchers(tc, _work(tmp_path), srun=False)
    assert found.level == "fail" and "run as root" in found.detail
    assert "launcher of Open MPI, this toolchain is MPICH" in found.fix
    assert f"add it again with --mpiexec naming its own (e.g. {own})" in found.fix


def test_ranks_started_as_singletons_are_a_failure(tmp_path: Path) -> None:
    tc = _fake_mpi(tmp_path, mpiexec='echo "mo-doctor rank 0 of 1"\n'
                   'echo "mo-doctor rank 0 of 1"\n')
    (found,) = doctor._launchers(tc, _work(tmp_path), srun=False)
    assert found.level == "fail" and "the ranks said: mo-doctor rank 0 of 1" in found.detail


def test_a_hanging_mpiexec_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_probes, "LAUNCH_TIMEOUT_S", 1.0)
    pidfile = tmp_path / "pid"
    tc = _fake_mpi(tmp_path, mpiexec=f'[ "$1" = --version ] && exit 0\n'
                   f'sleep 300 &\necho $! > {pidfile}\nwait\n')
    (found,) = doctor._launchers(tc, _work(tmp_path), srun=False)
    assert found.level == "fail" and "did not finish within 1 s" in found.detail
    assert "hangs" in found.fix
    if pidfile.is_file():  # (on a very busy machine the launcher may not have got so far)
        assert not _alive(int(pidfile.read_text())), "the launcher's child outlived it"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.mpi
def test_the_default_toolchains_mpiexec_works(tmp_path: Path) -> None:
    try:
        tc = get_toolchain(None)
        tc.check()
    except UserError as err:
        pytest.skip(f"no default toolchain here: {err}")
    (found,) = doctor._launchers(tc, _work(tmp_path), srun=False)
    assert found.item == "toolchain mpich launcher mpiexec"
    assert found.level == "ok", found


# ----- srun ----------------------------------------------------------------------------

def _path_with(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)


def test_no_srun(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    found = doctor._slurm()
    assert found is not None and found.item == "launcher srun" and found.level == "info"
    assert found.detail.startswith("not found") and "--launcher 'srun" in found.detail
    assert "SLURM_JOB_ID" in found.detail


def test_srun_without_an_answering_slurm(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _script(tmp_path / "slurm" / "srun", "exit 0\n")
    _script(tmp_path / "slurm" / "sinfo",
            'echo "sinfo: fatal: Could not establish a configuration source" >&2\nexit 1\n')
    _path_with(monkeypatch, tmp_path / "slurm")
    found = doctor._slurm()
    assert found is not None and found.level == "info"
    assert "Slurm does not answer" in found.detail
    assert "Could not establish a configuration source" in found.detail


def test_srun_where_slurm_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slurm answers: no global line, and each toolchain starts its ranks with srun and
    the PMI its MPI needs."""
    tc = _fake_mpi(tmp_path)
    args = tmp_path / "srun-args"
    _script(tmp_path / "bin" / "srun", f'echo "$@" > {args}\n'
            'echo "mo-doctor rank 0 of 2"\necho "mo-doctor rank 1 of 2"\n')
    _script(tmp_path / "bin" / "sinfo", 'echo "debug* up infinite 2 idle node[1-2]"\n')
    _path_with(monkeypatch, tmp_path / "bin")
    assert doctor._slurm() is None
    mpiexec, srun = doctor._launchers(tc, _work(tmp_path), srun=True)
    assert mpiexec.level == "ok"
    assert srun.item == "toolchain t launcher srun" and srun.level == "ok", srun
    assert args.read_text().startswith("--mpi=pmi2 -n 2 ")


def test_a_failing_srun_outside_an_allocation_is_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tc = _fake_mpi(tmp_path)
    _script(tmp_path / "bin" / "srun", 'echo "srun: error: PMI2 not supported" >&2\nexit 1\n')
    _path_with(monkeypatch, tmp_path / "bin")
    _, srun = doctor._launchers(tc, _work(tmp_path), srun=True)
    assert srun.level == "warn" and "PMI2 not supported" in srun.detail
    assert "srun --mpi=list must list pmi2" in srun.fix


def _hydra_mpi(tmp_path: Path) -> Toolchain:
    """An MPICH 5.0 whose mpiexec is Hydra (hydra_pmi_proxy beside it): inside an
    allocation its runs start through Hydra's Slurm launcher (slurm_launch.py)."""
    tc = _fake_mpi(tmp_path, mpiexec=f'echo "$@" > {tmp_path / "mpiexec-args"}\n'
                   'echo "mo-doctor rank 0 of 2"\necho "mo-doctor rank 1 of 2"\n')
    _script(tmp_path / "bin" / "hydra_pmi_proxy", "")
    tc.library_version = "MPICH Version:      5.0.0\n"
    return tc


def test_hydra_is_named_not_plain_srun_outside_an_allocation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside an allocation Hydra's launcher has no hosts to start on: one info line
    says what runs inside one use, and plain srun (which runs would not use, and which
    fails for the MPICH wheel) is not tried."""
    tc = _hydra_mpi(tmp_path)
    tried = tmp_path / "srun-tried"
    _script(tmp_path / "slurm" / "srun", f"touch {tried}\nexit 1\n")
    _path_with(monkeypatch, tmp_path / "slurm")
    monkeypatch.delenv("MPI_OVERLAP_SLURM_LAUNCHER", raising=False)
    _, hydra = doctor._launchers(tc, _work(tmp_path), srun=True)
    assert hydra.item == "toolchain t launcher hydra" and hydra.level == "info", hydra
    assert "Hydra's Slurm launcher" in hydra.detail and "MPICH 5.0" in hydra.detail
    assert "salloc" in hydra.fix and not tried.exists()
    # the setting that sends every MPI through srun sends doctor there too
    monkeypatch.setenv("MPI_OVERLAP_SLURM_LAUNCHER", "srun")
    (tmp_path / "again").mkdir()
    _, srun = doctor._launchers(tc, _work(tmp_path / "again"), srun=True)
    assert srun.item == "toolchain t launcher srun" and tried.exists()


def test_inside_an_allocation_the_runs_own_launch_is_tried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside an allocation doctor starts the program the way a run would: Hydra's Slurm
    launcher on the hosts srun gives, and says why."""
    tc = _hydra_mpi(tmp_path)
    _script(tmp_path / "slurm" / "srun", 'echo "0: n1"\necho "1: n2"\n')
    _path_with(monkeypatch, tmp_path / "slurm")
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.delenv("MPI_OVERLAP_SLURM_LAUNCHER", raising=False)
    _, hydra = doctor._launchers(tc, _work(tmp_path), srun=True)
    assert hydra.item == "toolchain t launcher hydra" and hydra.level == "ok", hydra
    args = (tmp_path / "mpiexec-args").read_text().split()
    assert args[:6] == ["-launcher", "slurm", "-hosts", "n1:1,n2:1", "-n", "2"], args
    assert "UCX address" in hydra.detail


# ----- the whole -----------------------------------------------------------------------

@pytest.mark.mpi
def test_every_working_toolchain_gets_its_lines(isolated_home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With the default toolchain (skipped without it): a version line, the Fortran
    interfaces, the profiler's Fortran line and the mpiexec line, in that order."""
    try:
        get_toolchain(None).check()
    except UserError as err:
        pytest.skip(f"no default toolchain here: {err}")
    # srun is checked on its own above; here it must not be tried, wherever Slurm answers
    monkeypatch.setattr(doctor, "_slurm", lambda: doctor.Finding("launcher srun", "info", "-"))
    findings = doctor._toolchains()
    items = [f.item for f in findings]
    start = items.index("toolchain mpich")
    assert items[start:start + 4] == ["toolchain mpich", "toolchain mpich Fortran",
                                      "toolchain mpich Fortran profiling",
                                      "toolchain mpich launcher mpiexec"]
    assert findings[start + 3].level == "ok", findings[start + 3]
    assert not list(isolated_home.glob("doctor-*"))  # the probes' programs are gone
