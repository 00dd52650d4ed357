"""Which transfer classes a job needs (calibration/job_classes.py), and that the automatic
calibration (find_or_calibrate) measures a class the job needs and the table lacks, and
nothing when the table has what the job uses (issue 39: one rank per node needs no
intra-node times)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cli_helpers import own_state_dir
from mpi_overlap.calibration import calibrate as cal
from mpi_overlap.calibration.job_classes import JobLayout, job_layout, missing_classes
from mpi_overlap.calibration.xfer_table import XferTable, save_table, table_path
from mpi_overlap.core.ui import Ui
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run import slurm_launch
from test_xfer_table import MACHINE_FP, MACHINE_KEY, TOOLCHAIN_FP, TOOLCHAIN_KEY, _table

INTRA = [(0, 1e-6), (1 << 20, 1e-4)]
INTER = [(0, 1e-5), (1 << 20, 8e-3)]


@pytest.mark.parametrize(("ranks", "nodes", "classes"), [
    (2, 1, ("intra",)),           # one node
    (2, 2, ("inter",)),           # one rank per node: no intra-node pair exists
    (4, 2, ("intra", "inter")),   # two per node
    (3, 2, ("intra", "inter")),   # one node holds two
    (1, 1, ()),                   # a single rank moves nothing to another
])
def test_a_layout_needs_intra_where_a_node_holds_two_ranks_and_inter_across_nodes(
        ranks: int, nodes: int, classes: tuple[str, ...]) -> None:
    assert JobLayout(ranks, nodes).classes == classes


def test_where_the_ranks_go_follows_how_mpi_overlap_starts_them() -> None:
    outside: dict[str, str] = {}
    alloc = {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "2"}
    assert job_layout(2, launcher=None, env=outside) == JobLayout(2, 1)
    assert job_layout(2, launcher=None, env=alloc) == JobLayout(2, 2)  # srun's default
    assert job_layout(1, launcher=None, env=alloc) == JobLayout(1, 1)  # never more than ranks
    assert job_layout(4, launcher=None, nodes=2, env=alloc) == JobLayout(4, 2)
    with slurm_launch.bound(1):
        assert job_layout(2, launcher=None, env=alloc) == JobLayout(2, 1)  # --nodes 1
    # the user's launcher places the ranks: nothing is known, nothing required
    assert job_layout(2, launcher="mpiexec -hosts a,b", env=alloc) is None


def test_missing_classes_are_those_the_layout_uses_and_the_table_lacks() -> None:
    inter_only = _table({"inter": INTER})
    assert missing_classes(inter_only, JobLayout(2, 2)) == []
    assert missing_classes(inter_only, JobLayout(2, 1)) == ["intra"]
    assert missing_classes(_table({"intra": INTRA}), JobLayout(4, 2)) == ["inter"]
    assert missing_classes(inter_only, None) == []


def _saved(points: dict) -> XferTable:
    t = _table(points)
    return replace(t, verdict="ok", verdict_reason="quiet", coll={("bcast", 2): [(0, 2e-6)]})


@pytest.fixture
def measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    """find_or_calibrate with this test's fingerprints and a stand-in for the ping-pong
    measurement that records the layout it ran with and adds the class it would measure."""
    monkeypatch.setenv("MPI_OVERLAP_HOME", str(own_state_dir(tmp_path)))
    fp = cal.Fingerprint(MACHINE_KEY, MACHINE_FP, TOOLCHAIN_KEY, TOOLCHAIN_FP)
    monkeypatch.setattr(cal, "fingerprint", lambda tc, ui=None: fp)
    monkeypatch.setattr(cal, "stale_for", lambda table, tc: None)
    calls: list[str] = []

    def p2p(tc: object, *, ranks: int, **_kw: object) -> tuple[Path, list, XferTable]:
        nodes = slurm_launch.requested_nodes() or 1
        layout = JobLayout(ranks, nodes)
        calls.append(f"{ranks}/{nodes}")
        path = table_path(tc, MACHINE_FP, TOOLCHAIN_FP)
        old = cal.read_table(path).points if path.is_file() else {}
        new = {"intra": INTRA} if "intra" in layout.classes else {}
        new |= {"inter": INTER} if "inter" in layout.classes else {}
        save_table(path, _saved({**old, **new}))
        return path, [], cal.read_table(path)

    monkeypatch.setattr(cal, "_calibrate_p2p", p2p)
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "2")
    path = table_path(get_toolchain("mpich"), MACHINE_FP, TOOLCHAIN_FP)
    # A fresh state: own_state_dir copies the tests' tables, and these fingerprints may
    # be this machine's own (then its table would be there already).
    path.unlink(missing_ok=True)
    return calls, path


def test_a_fresh_state_across_nodes_measures_inter_and_the_job_uses_it(
        measured: tuple[list[str], Path]) -> None:
    calls, path = measured
    tc = get_toolchain("mpich")
    with slurm_launch.bound(2):
        assert cal.find_or_calibrate(tc, ranks=2, ui=Ui(quiet=True)) == path
        assert calls == ["2/2"]
        # the inter-only table is what a job of one rank per node needs: used as it is
        assert cal.find_or_calibrate(tc, ranks=2, ui=Ui(quiet=True)) == path
    assert calls == ["2/2"]
    assert cal.read_table(path).classes == ["inter"]


def test_a_one_node_table_is_completed_for_a_job_across_nodes_and_back(
        measured: tuple[list[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    calls, path = measured
    tc = get_toolchain("mpich")
    save_table(path, _saved({"intra": INTRA}))
    with slurm_launch.bound(2):
        cal.find_or_calibrate(tc, ranks=2, ui=Ui())
    assert calls == ["2/2"], "the intra-only table lacks the inter class the job uses"
    said = capsys.readouterr()
    assert "has no inter-node transfer times, which this job uses (2 ranks on 2 nodes, " \
        "one rank per node)" in said.out + said.err
    assert cal.read_table(path).classes == ["intra", "inter"]
    with slurm_launch.bound(1):
        cal.find_or_calibrate(tc, ranks=2, ui=Ui(quiet=True))  # both classes there now
    assert calls == ["2/2"]


def test_an_inter_only_table_is_completed_for_ranks_sharing_a_node(
        measured: tuple[list[str], Path]) -> None:
    calls, path = measured
    save_table(path, _saved({"inter": INTER}))
    with slurm_launch.bound(1):
        cal.find_or_calibrate(get_toolchain("mpich"), ranks=2, ui=Ui(quiet=True))
    assert calls == ["2/1"]
    assert cal.read_table(path).classes == ["intra", "inter"]


def test_with_the_users_launcher_the_table_is_used_as_it_is(
        measured: tuple[list[str], Path]) -> None:
    calls, path = measured
    save_table(path, _saved({"inter": INTER}))
    used = cal.find_or_calibrate(get_toolchain("mpich"), ranks=2,
                                 launcher="mpiexec -hosts a,b", ui=Ui(quiet=True))
    assert used == path and calls == []
