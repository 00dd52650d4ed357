"""Inside a Slurm allocation runs start with srun and the PMI their MPI needs; --nodes is
refused outside one (slurm_launch.py, launch.launch_command)."""

from __future__ import annotations

import pytest

from mpi_overlap.errors import UserError
from mpi_overlap.run import slurm_launch
from mpi_overlap.run.launch import launch_command
from mpi_overlap.toolchains import Toolchain


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
