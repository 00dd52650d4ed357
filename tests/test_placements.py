"""Placements (`characterize --placements 1,2`, run.json's "nodes"): the list is checked
in one line, a run spread on request is labelled with its node count, and the card puts
each toolchain-and-placement in its own column. The run across the emulated cluster is in
test_cluster.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli
from mpi_overlap.benchmarks.discovery import card_items
from mpi_overlap.commands.characterize import parse_placements
from mpi_overlap.core.errors import UserError
from mpi_overlap.report.summary_card import card_json
from mpi_overlap.run.rundir import Run, placement_label


def test_placements_parse() -> None:
    assert parse_placements(None) == (None,)
    assert parse_placements("1,2") == (1, 2)
    for bad in ("1,x", "0,2", "2,2", ""):
        with pytest.raises(UserError, match="--placements"):
            parse_placements(bad)


def test_a_run_spread_on_request_is_labelled_with_its_node_count() -> None:
    assert placement_label("mpich", None) == "mpich"
    assert placement_label("mpich", 1) == "mpich on 1 node"
    assert placement_label("mpich MPICH_X=1", 2) == "mpich MPICH_X=1 on 2 nodes"
    assert placement_label("mpich", True) == "mpich"  # not a count


def _run(nodes: int | None, latency: float) -> Run:
    meta = {"benchmark": "stack-floor", "toolchain": {"name": "mpich"}, "status": "complete",
            **({"nodes": nodes} if nodes else {})}
    analysis = {"figures": [{"name": "latency_small_us", "value": latency}]}
    return Run(path=Path("/nonexistent"), meta=meta, analysis=analysis)


def test_the_card_has_a_column_per_placement() -> None:
    card = card_json([_run(1, 0.4), _run(2, 21.0)], card_items())
    assert card["labels"] == ["mpich on 1 node", "mpich on 2 nodes"]
    latency = next(i for i in card["items"] if i["item"] == "small-message latency")
    assert latency["cells"] == {"mpich on 1 node": "0.40 µs", "mpich on 2 nodes": "21.00 µs"}
    # replicated launches keep their shared label, with the placement
    tagged = _run(2, 21.0)
    tagged.meta["replicate"] = {"group": "g", "index": 1, "of": 3, "label": "mpich"}
    assert card_json([tagged], card_items())["labels"] == ["mpich on 2 nodes"]


def test_placements_are_refused_in_one_line_where_they_cannot_work(tmp_path: Path) -> None:
    no_slurm = {"SLURM_JOB_ID": ""}
    one_line_error(run_cli("characterize", "--placements", "1,x", "--out", str(tmp_path),
                           env=no_slurm), "--placements '1,x'", code=2)
    one_line_error(run_cli("characterize", "--placements", "1,2", "--out", str(tmp_path),
                           env=no_slurm), "--placements needs a Slurm allocation", code=2)
    inside = {"SLURM_JOB_ID": "1"}
    one_line_error(run_cli("characterize", "--placements", "1,2", "--nodes", "2", "--out",
                           str(tmp_path), env=inside), "either --nodes or --placements", code=2)
    one_line_error(run_cli("characterize", "--placements", "1,2", "--launcher", "mpiexec",
                           "--out", str(tmp_path), env=inside), "does not go with --launcher",
                   code=2)
    one_line_error(run_cli("characterize", "--placements", "1,4", "-n", "2", "--out",
                           str(tmp_path), env=inside), "4 nodes is more than the 2 ranks",
                   code=2)



def test_a_one_node_benchmark_refuses_nodes_before_leaving_a_directory(tmp_path: Path) -> None:
    """threads-procs starts a 1-rank launch (threads in one process): with --nodes 2 it
    says so in one line, and no empty run directory is left behind."""
    proc = run_cli("bench", "threads-procs", "--quick", "--nodes", "2", "--out", str(tmp_path),
                   env={"SLURM_JOB_ID": "1"})
    one_line_error(proc, "'multiple' launch starts 1 rank(s)", "--nodes 2", code=2)
    assert list(tmp_path.iterdir()) == []


def test_a_failure_run_records_its_placement(tmp_path: Path, isolated_home: Path) -> None:
    """A benchmark that failed before its own directory (suite._failure_run) is filed in
    its placement's column, like the runs beside it."""
    from mpi_overlap.benchmarks.registry import get_benchmark
    from mpi_overlap.commands.suite import _failure_run
    from mpi_overlap.core.documents import run_errors
    from mpi_overlap.platform.toolchains import get_toolchain
    from mpi_overlap.run import slurm_launch
    from mpi_overlap.run.runner import RunOptions

    with slurm_launch.bound(2):
        run = _failure_run(get_benchmark("threads-procs"), get_toolchain("mpich"),
                           RunOptions(ranks=2, out_base=tmp_path), "refused")
    assert run.meta["nodes"] == 2 and run.label == "mpich on 2 nodes"
    assert run.status == "failed" and run.meta["message"] == "refused"
    assert run_errors(run.meta) == []
