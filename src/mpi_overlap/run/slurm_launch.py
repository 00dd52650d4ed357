"""Launching inside a Slurm allocation: with SLURM_JOB_ID set and no --launcher, runs
start with `srun` by themselves (the run record's launcher says so), with the PMI each
MPI needs, and `--nodes N` spreads the ranks over N of the allocation's nodes.

Which PMI: the MPICH wheel (and Debian's MPICH, Intel MPI 2021) speak PMI-1/PMI-2, which
Slurm's pmi2 plugin serves; the MPICH wheel has no PMIx client, so --mpi=pmix fails for
it (Intel MPI works with either). Open MPI 4+ needs PMIx (--mpi=pmix). docs/cluster.md
has what was tried.

The MPICH wheel with UCX can fail in MPI_Init under srun --mpi=pmi2 for some sizes of argv
+ environment (issue 39: slurmstepd cuts its PMI-1 puts of UCX's 4096-byte address at 1024
bytes). Nothing is changed here: the one variable that avoids it, MPIR_CVAR_CH4_NETMOD=ofi,
changes the transport the cluster's benchmarks measure, made sync-overlap across nodes run
into its limit and a killed node's peer crash (exit 139 instead of 3). docs/cluster.md,
"The MPICH wheel under srun", has the measurements and what to use.

Like --launches, the user's --nodes is bound around the command (`bound`) and read where
the launch command is made (launch.launch_command)."""

from __future__ import annotations

import os
import shutil
from contextlib import AbstractContextManager
from contextvars import ContextVar

from ..errors import UserError
from ..toolchains import Toolchain
from .bound_setting import bound_to

_nodes: ContextVar[int | None] = ContextVar("nodes", default=None)


def check(nodes: int | None) -> int | None:
    if nodes is not None and nodes < 1:
        raise UserError(f"--nodes must be at least 1 (got {nodes})")
    return nodes


def bound(nodes: int | None) -> AbstractContextManager[int | None]:
    return bound_to(_nodes, check(nodes))


def requested_nodes() -> int | None:
    return _nodes.get()


def in_allocation() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID"))


def pmi_of(tc: Toolchain) -> str:
    return "pmix" if tc.flavor == "openmpi" else "pmi2"


def srun_command(tc: Toolchain, ranks: int) -> list[str]:
    """srun with the PMI the toolchain's MPI needs, for `ranks` ranks."""
    return ["srun", f"--mpi={pmi_of(tc)}", "-n", str(ranks)]


def srun_prefix(tc: Toolchain, ranks: int) -> list[str] | None:
    """`srun ...` to start `ranks` ranks inside the allocation, or None outside one.
    --nodes without an allocation is refused: only Slurm (or the user's --launcher)
    knows where other nodes are."""
    nodes = requested_nodes()
    if not in_allocation():
        if nodes is not None:
            raise UserError(f"--nodes {nodes} needs a Slurm allocation (run inside salloc or "
                            "sbatch, e.g. `mpi-overlap cluster exec -- salloc -N 2 "
                            "mpi-overlap ...`) or a --launcher that places the ranks")
        return None
    if shutil.which("srun") is None:
        raise UserError("inside a Slurm allocation (SLURM_JOB_ID is set) but srun is not on "
                        "PATH: add it, or name a launcher with --launcher")
    if nodes is not None and nodes > ranks:
        raise UserError(f"--nodes {nodes} is more than the {ranks} ranks (-n) to place")
    cmd = srun_command(tc, ranks)
    if nodes is not None:
        cmd += ["-N", str(nodes)]
    return cmd
