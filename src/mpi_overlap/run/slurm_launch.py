"""Launching inside a Slurm allocation: with SLURM_JOB_ID set and no --launcher, runs
start with `srun` by themselves (the run record's launcher says so), with the PMI each
MPI needs, and `--nodes N` spreads the ranks over N of the allocation's nodes.

Which PMI: the MPICH wheel (and Debian's MPICH, Intel MPI 2021) speak PMI-1/PMI-2, which
Slurm's pmi2 plugin serves; the MPICH wheel has no PMIx client, so --mpi=pmix fails for
it (Intel MPI works with either). Open MPI 4+ needs PMIx (--mpi=pmix). docs/cluster.md
has what was tried.

Inside `profile` (`for_profile`), the MPICH wheel's ranks get MPIR_CVAR_CH4_NETMOD=ofi
from srun (`srun_env`, issue 39): with UCX its MPI_Init failed under srun for some sizes of
argv + environment once the profiler was preloaded.

Like --launches, the user's --nodes is bound around the command (`bound`) and read where
the launch command is made (launch.launch_command)."""

from __future__ import annotations

import os
import shlex
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


# Issue 39. The MPICH wheel (5.0.2, ch4:ucx) under srun --mpi=pmi2 failed in MPI_Init
# ("Destination is unreachable" in MPIDI_UCX_comm_addr_exchange) for some sizes of argv +
# environment: measured, mo_cg under the profiler across 2 nodes, 16 of 21 argument lengths
# from 36 to 56 characters failed. Why: the UCX netmod publishes MPID_MAX_BC_SIZE (4096)
# bytes from the start of UCX's worker address, a few hundred bytes long, so the rest is
# whatever the heap holds after it (hence the dependence on argv and environment). MPICH
# hex-encodes it into PMI values of up to 1022 characters (runs of zeros shrink to "[n]"),
# and the wheel's PMI client speaks PMI-1 only, one line per put (~1076 bytes for a full
# one); Slurm's pmi2 plugin reads a PMI-1 request with a single read of 1024 bytes
# (pmi1.c: "TODO: read until newline"), so a put whose stretch of heap held few zeros is
# cut in two ("value not properly terminated", then "request not begin with 'cmd='") and
# the peer's address arrives corrupt. PMI-2's length-prefixed wire would be read whole, but
# the wheel is built without it (MPIR_CVAR_PMI_VERSION=2 ends MPI_Init with "Internal MPI
# error" in MPIR_pmi_init). The OFI netmod publishes only its endpoint name (fi_getname,
# tens of bytes): one short put, no segments. Measured: 0 of 45 lengths from 36 to 80
# failed with it, 16 of 45 without; without the profiler's preload 0 of 45 failed either way.
# Only inside `profile` (its launches, its automatic calibration and --compare-bare runs
# alike, so its table and comparisons share the transport): elsewhere UCX stays, the
# transport the cluster's benchmarks are about (sync-overlap across nodes timed out with
# OFI). The user's own MPIR_CVAR_CH4_NETMOD (or a --launcher) wins.
_NETMOD_VAR = "MPIR_CVAR_CH4_NETMOD"
_profiling: ContextVar[bool] = ContextVar("profiling", default=False)


def for_profile() -> AbstractContextManager[bool]:
    """Bound around the `profile` command: its srun launches get `srun_env`."""
    return bound_to(_profiling, True)


def srun_env(tc: Toolchain) -> dict[str, str]:
    """Variables srun sets for the ranks of `tc`'s MPI, beyond the caller's environment."""
    if (_profiling.get() and tc.kind == "wheel" and tc.flavor == "mpich"
            and _NETMOD_VAR not in os.environ):
        return {_NETMOD_VAR: "ofi"}
    return {}


def srun_options(tc: Toolchain) -> list[str]:
    """srun's options for the toolchain's MPI: its PMI, and `srun_env` exported."""
    opts = [f"--mpi={pmi_of(tc)}"]
    env = srun_env(tc)
    if env:
        opts.append("--export=ALL," + ",".join(f"{k}={v}" for k, v in env.items()))
    return opts


def srun_launcher(tc: Toolchain, nodes: int) -> str:
    """A --launcher string: srun over `nodes` nodes, as the automatic launch would be."""
    return shlex.join(["srun", *srun_options(tc), "-N", str(nodes)])


def srun_command(tc: Toolchain, ranks: int, nodes: int | None = None) -> list[str]:
    """srun with the PMI (and variables) the toolchain's MPI needs, for `ranks` ranks
    (over `nodes` nodes when given)."""
    pmi, *rest = srun_options(tc)
    # the counts before the rest: `srun --mpi=X -n N [-N M]` stays the head of the command
    return ["srun", pmi, "-n", str(ranks), *(["-N", str(nodes)] if nodes is not None else []),
            *rest]


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
    return srun_command(tc, ranks, nodes)
