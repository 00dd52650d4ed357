"""The profiler needs the classes its transfers use, no more (issue 39; mop_runtime.c's
check at MPI_Init, where the job's layout is known): a table measured with one rank per
node has inter-node times only, and a job whose ranks share a node cannot be priced
with it, so that job is refused in one line naming why; the same table on a job of one
rank per node is used (tests/test_cluster.py runs that one across emulated nodes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain

pytestmark = pytest.mark.mpi

HEADER = ("mpi-overlap-xfer-table 2\ncreated x\nmachine 0000000000000000 cpu=none\n"
          "toolchain 0000000000000000 none\ntoolchain_name none\nranks 2 nodes 2\n")


def test_an_inter_only_table_is_refused_where_ranks_share_a_node(tmp_path: Path) -> None:
    table = tmp_path / "inter.table"
    table.write_text(HEADER + "inter 0 2e-05\ninter 1048576 0.008\n")
    tc = get_toolchain("mpich")
    ensure_built(tc)
    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--out", str(out), "--table",
                   str(table), "--force-table", "--",
                   str(build_dir_for(tc) / "tests" / "profiled_app"), "blocking", "4096", "2",
                   timeout=600, cwd=tmp_path)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 3, (proc.stdout[-2000:], proc.stderr[-2000:])
    why = (f"{table} has no intra-node transfer times, and 2 ranks share 1 node(s) here")
    assert why in proc.stderr
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    for r in (0, 1):
        doc = json.loads((run_dir / f"profile.rank-{r}.json").read_text())
        assert doc["status"] == "disabled" and why in doc["reason"], doc.get("reason")
