"""Which transfer classes of the table a job will use, known before it starts (issue 39).

The profiler prices a message with the class of its peer: intra-node when both ranks are
on one node, inter-node otherwise (docs/cluster.md). A job needs the intra class where a
node holds two ranks or more, and the inter class when it spans several nodes; a table
measured with one rank on each of two nodes has inter times only, and one measured on one
node intra times only. `find_or_calibrate` measures what the job needs and the table
lacks, with the job's own layout (mo_pingpong pairs rank 0 with a rank of its node and
one of another node, which that layout then has exactly when the job needs them).

Where the ranks go is known when mpi-overlap starts them itself: on this machine (one
node), or with srun inside a Slurm allocation (`--nodes N`, else srun's default of the
allocation's node count, at most one node per rank). A --launcher of the user's places
them where it likes: nothing is required then, and the profiler's own check decides
(mop_runtime.c). Pure but for the environment it reads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..run.slurm_launch import requested_nodes
from .xfer_table import CLASSES, XferTable


@dataclass(frozen=True)
class JobLayout:
    """Ranks and the nodes they are spread over."""

    ranks: int
    nodes: int

    @property
    def classes(self) -> tuple[str, ...]:
        """The classes its point-to-point transfers use (in CLASSES' order)."""
        need = {"intra": self.ranks > self.nodes, "inter": self.nodes > 1}
        return tuple(c for c in CLASSES if need[c])

    def describe(self) -> str:
        per = "one rank per node" if self.ranks == self.nodes else "ranks sharing a node"
        node_s = "node" if self.nodes == 1 else "nodes"
        return f"{self.ranks} ranks on {self.nodes} {node_s}, {per}"


def job_layout(ranks: int, *, launcher: str | None, nodes: int | None = None,
               env: Mapping[str, str] | None = None) -> JobLayout | None:
    """Where `ranks` ranks will run when mpi-overlap starts them (slurm_launch.py): None
    with the user's launcher. `nodes` defaults to the bound --nodes."""
    if launcher is not None:
        return None
    env = os.environ if env is None else env
    nodes = requested_nodes() if nodes is None else nodes
    if nodes is None:
        if env.get("SLURM_JOB_ID"):
            # srun inside an allocation spreads the ranks over its nodes, one at least
            # per node, so never more nodes than ranks.
            try:
                nodes = int(env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES") or 1)
            except ValueError:
                nodes = 1
        else:
            nodes = 1
    ranks = max(ranks, 1)
    return JobLayout(ranks=ranks, nodes=max(1, min(nodes, ranks)))


def missing_classes(table: XferTable, layout: JobLayout | None) -> list[str]:
    """The classes `layout` needs that `table` has no times for (none when the layout is
    not known)."""
    if layout is None:
        return []
    return [c for c in layout.classes if not table.points.get(c)]


def missing_reason(path: object, missing: list[str], layout: JobLayout) -> str:
    """Why the table must be completed, for the line find_or_calibrate prints."""
    what = " and ".join(f"{c}-node" for c in missing)
    return (f"the table {path} has no {what} transfer times, which this job uses "
            f"({layout.describe()})")


__all__ = ["JobLayout", "job_layout", "missing_classes", "missing_reason"]
