"""Inside a Slurm allocation runs start with srun and the PMI their MPI needs, the MPICH
wheel through Hydra's Slurm launcher at srun's placement; --nodes is refused outside one
(slurm_launch.py, launch.launch_command)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.toolchains import Toolchain
from mpi_overlap.run import slurm_launch
from mpi_overlap.run.launch import launch_command, launch_record


def _tc(flavor: str) -> Toolchain:
    return Toolchain(name=flavor, kind="system", flavor=flavor, mpicc="/x/mpicc",
                     mpiexec="/x/mpiexec")


@pytest.fixture
def allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")


def test_inside_an_allocation_srun_starts_the_ranks(allocation: None) -> None:
    assert launch_command(_tc("mpich"), 2, ["app"]) == ["srun", "--mpi=pmi2", "-n", "2", "app"]
    assert launch_command(_tc("openmpi"), 4, ["app"])[:2] == ["srun", "--mpi=pmix"]
    with slurm_launch.bound(2):
        assert launch_command(_tc("mpich"), 2, ["app"]) == [
            "srun", "--mpi=pmi2", "-n", "2", "-N", "2", "app"]
        with pytest.raises(UserError, match="with --launcher, put the node count"):
            launch_command(_tc("mpich"), 2, ["app"], "srun -N 2")
    with slurm_launch.bound(3), pytest.raises(UserError, match="more than the 2 ranks"):
        launch_command(_tc("mpich"), 2, ["app"])
    # the user's launcher still wins
    assert launch_command(_tc("mpich"), 2, ["app"], "srun --mpi=pmix")[:2] == [
        "srun", "--mpi=pmix"]


def test_outside_an_allocation_nodes_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert slurm_launch.srun_prefix(_tc("mpich"), 2) is None
    with slurm_launch.bound(2), pytest.raises(UserError, match="needs a Slurm allocation"):
        slurm_launch.srun_prefix(_tc("mpich"), 2)
    with pytest.raises(UserError, match="--nodes must be at least 1"):
        slurm_launch.check(0)


# ----- Hydra's Slurm launcher for the MPICH wheel (issue 39) ---------------------------

def _wheel(tmp_path: Path, version: str = "5.0.2") -> Toolchain:
    """An MPICH whose mpiexec is Hydra (hydra_pmi_proxy beside it)."""
    (tmp_path / "hydra_pmi_proxy").write_text("")
    return Toolchain(name="mpich", kind="wheel", flavor="mpich", mpicc=str(tmp_path / "mpicc"),
                     mpiexec=str(tmp_path / "mpiexec"),
                     library_version=f"MPICH Version:      {version}")


@pytest.fixture
def srun_places(monkeypatch: pytest.MonkeyPatch, allocation: None) -> list[list[str]]:
    """srun's placement, as the query would return it: ranks 0-1 on n1, the rest on n2
    (or what the test puts in the list); every query is recorded."""
    asked: list[list[str]] = []
    monkeypatch.setattr(slurm_launch, "_placements", {})

    def fake(cmd: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        asked.append(cmd)
        ranks = int(cmd[cmd.index("-n") + 1])
        lines = [f"{r}: {'n1' if r < 2 else 'n2'}" for r in range(ranks)]
        return subprocess.CompletedProcess(cmd, 0, "\n".join(reversed(lines)) + "\n", "")

    monkeypatch.setattr(slurm_launch, "run_tool", fake)
    monkeypatch.setattr(slurm_launch, "control_address", lambda node: "10.0.0.9")
    return asked


def test_the_mpich_wheel_starts_through_hydra_at_sruns_placement(
        srun_places: list[list[str]], tmp_path: Path) -> None:
    tc = _wheel(tmp_path)
    with slurm_launch.bound(2):
        cmd = launch_command(tc, 3, ["app"])
    assert cmd == [tc.mpiexec, "-launcher", "slurm", "-hosts", "n1:2,n2:1", "-n", "3",
                   "-localhost", "10.0.0.9", "app"]
    # srun was asked with the job's own request, once
    assert srun_places == [["srun", "--mpi=none", "-n", "3", "-N", "2", "-l", "printenv",
                            "SLURMD_NODENAME"]]
    with slurm_launch.bound(2):
        launch_command(tc, 3, ["other"])
        record = launch_record(tc, 3, None)
    assert len(srun_places) == 1
    assert record["kind"] == "hydra" and "1024 bytes" in record["why"]


def test_the_user_and_the_knob_return_to_srun(
        srun_places: list[list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tc = _wheel(tmp_path)
    assert launch_command(tc, 2, ["app"], "srun --mpi=pmi2")[:2] == ["srun", "--mpi=pmi2"]
    assert launch_record(tc, 2, "srun --mpi=pmi2") == {"kind": "user", "why": "--launcher"}
    monkeypatch.setenv(slurm_launch.LAUNCHER_ENV, "srun")
    assert launch_command(tc, 2, ["app"]) == ["srun", "--mpi=pmi2", "-n", "2", "app"]
    assert launch_record(tc, 2, None) == {"kind": "srun",
                                          "why": "MPI_OVERLAP_SLURM_LAUNCHER=srun"}
    monkeypatch.setenv(slurm_launch.LAUNCHER_ENV, "hydr")
    with pytest.raises(UserError, match="use 'srun'"):
        launch_command(tc, 2, ["app"])
    assert srun_places == []


def test_other_mpis_stay_on_srun(srun_places: list[list[str]], tmp_path: Path) -> None:
    # Debian's MPICH 4.0 publishes its UCX address in one short put; Open MPI uses PMIx
    assert launch_command(_wheel(tmp_path, "4.0.2"), 2, ["app"])[0] == "srun"
    assert launch_command(_tc("openmpi"), 2, ["app"])[:2] == ["srun", "--mpi=pmix"]
    assert launch_command(_tc("mpich"), 2, ["app"])[0] == "srun"  # no Hydra beside mpiexec
    assert srun_places == []


def test_a_cyclic_placement_stays_on_srun(srun_places: list[list[str]], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm_launch, "placement", lambda srun: ["n1", "n2", "n1", "n2"])
    tc = _wheel(tmp_path)
    assert launch_command(tc, 4, ["app"]) == ["srun", "--mpi=pmi2", "-n", "4", "app"]
    assert "cyclically" in launch_record(tc, 4, None)["why"]


def test_a_placement_srun_cannot_give_is_one_line(
        allocation: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm_launch, "_placements", {})
    monkeypatch.setattr(slurm_launch, "run_tool", lambda cmd, **_: subprocess.CompletedProcess(
        cmd, 1, "", "srun: error: Unable to create step for job 7: Job/step already completing\n"))
    with pytest.raises(UserError, match=r"cannot learn where srun places.*already completing"):
        launch_command(_wheel(tmp_path), 2, ["app"])


def test_the_control_address_is_the_routes_not_loopback() -> None:
    assert slurm_launch.control_address("localhost") is None
    assert slurm_launch.control_address("127.0.0.1") is None
