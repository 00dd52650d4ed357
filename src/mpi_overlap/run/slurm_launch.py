"""Launching inside a Slurm allocation: with SLURM_JOB_ID set and no --launcher, runs
start by themselves on the allocation's nodes (the run record's launcher says how and
why), with the PMI each MPI needs, and `--nodes N` spreads the ranks over N of the
allocation's nodes.

Which PMI: Debian's MPICH 4.0 and Intel MPI 2021 speak PMI-1/PMI-2, which Slurm's pmi2
plugin serves (`srun --mpi=pmi2`); Open MPI 4+ needs PMIx (`srun --mpi=pmix`). The MPICH
wheel (5.0, UCX) cannot go through srun: its UCX netmod publishes a 4096-byte address in
PMI-1 puts of ~1076 bytes that Slurm's pmi2 plugin reads with one 1024-byte read, so
MPI_Init fails for some sizes of argv + environment (issue 39; docs/cluster.md, "The
MPICH wheel under srun"). For it, and any MPICH from 4.1 on with Hydra's mpiexec, the
ranks start through Hydra's own Slurm launcher (`mpiexec -launcher slurm -hosts
n1:c1,n2:c2 -n R`): Hydra serves PMI and srun only starts one proxy a node. The hosts and
counts are the ones srun itself gives the same request (asked of srun, placement()), so
the ranks sit where srun would have put them. MPI_OVERLAP_SLURM_LAUNCHER=srun returns to
plain srun for every MPI. Debian's MPICH 4.0 (also UCX) publishes only its ~250-byte
address in one put and stays on srun.

Like --launches, the user's --nodes is bound around the command (`bound`) and read where
the launch command is made (launch.launch_command)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from ..core import verbosity
from ..core.bound_setting import bound_to
from ..core.errors import UserError
from ..core.procs import run_tool
from ..platform.toolchains import Toolchain

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


# ----- Hydra's Slurm launcher for the MPICH wheel (issue 39) ---------------------------

LAUNCHER_ENV = "MPI_OVERLAP_SLURM_LAUNCHER"  # "srun": plain srun for every MPI
_SETTINGS = ("auto", "srun")
_PLACEMENT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class SlurmLaunch:
    """How a run inside an allocation starts: its launch prefix, `kind` ("srun" or
    "hydra") and why, in a few words (run.json's "launcher", the --verbose line)."""

    prefix: list[str]
    kind: str
    why: str

    def record(self) -> dict[str, str]:
        return {"kind": self.kind, "why": self.why}


def _setting() -> str:
    value = os.environ.get(LAUNCHER_ENV, "").strip().lower() or "auto"
    if value not in _SETTINGS:
        raise UserError(f"{LAUNCHER_ENV}={value!r}: use 'srun' (plain srun for every MPI) or "
                        "'auto' (Hydra's Slurm launcher for the MPICH wheel, srun otherwise)")
    return value


def _mpich_version(tc: Toolchain) -> tuple[int, int] | None:
    m = re.search(r"MPICH Version:\s*(\d+)\.(\d+)", tc.library_version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def hydra_reason(tc: Toolchain) -> str | None:
    """Why runs of `tc` inside an allocation start through Hydra's Slurm launcher, or None
    where they start with plain srun (this setting's choice, then hydra_fault_reason)."""
    return None if _setting() == "srun" else hydra_fault_reason(tc)


def hydra_fault_reason(tc: Toolchain) -> str | None:
    """Why `tc` must not take its PMI from srun (None when srun serves it well): an MPICH
    from 4.1 on (the 5.0 wheel measured; 4.0 publishes its UCX address in one short put)
    whose mpiexec is Hydra (hydra_pmi_proxy beside it), which can then serve PMI."""
    if tc.flavor != "mpich":
        return None
    version = _mpich_version(tc)
    if version is not None and version < (4, 1):
        return None
    if not (Path(tc.mpiexec).parent / "hydra_pmi_proxy").is_file():
        return None
    shown = ".".join(map(str, version)) if version else "(version unknown)"
    return (f"MPICH {shown}: Slurm's pmi2 plugin cuts its UCX address's PMI-1 puts at 1024 "
            "bytes, so Hydra serves PMI and srun starts its proxies")


# (job, ranks, nodes, distribution, overcommit) -> each rank's node, as srun placed it
_placements: dict[tuple[str, ...], list[str]] = {}


def placement(srun: list[str]) -> list[str]:
    """The node of each rank (rank order) that `srun` (an srun_prefix) gives inside this
    allocation: asked of srun itself (`printenv SLURMD_NODENAME` in every task, labelled),
    once per request and allocation. Raises UserError when srun cannot say."""
    key = (os.environ.get("SLURM_JOB_ID", ""), *srun,
           *(os.environ.get(v, "") for v in ("SLURM_DISTRIBUTION", "SLURM_OVERCOMMIT")))
    if key in _placements:
        return _placements[key]
    ask = ["srun", "--mpi=none", *srun[2:], "-l", "printenv", "SLURMD_NODENAME"]
    try:
        done = run_tool(ask, timeout_s=_PLACEMENT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserError(f"`{' '.join(ask)}` did not answer in {_PLACEMENT_TIMEOUT_S:g} s: is "
                        "the allocation still there?") from None
    nodes: dict[int, str] = {}
    for line in done.stdout.splitlines():
        rank, sep, node = line.partition(":")
        if sep and rank.strip().isdigit() and node.strip():
            nodes[int(rank)] = node.strip()
    ranks = int(srun[srun.index("-n") + 1])
    if done.returncode != 0 or sorted(nodes) != list(range(ranks)):
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"cannot learn where srun places the ranks (`{' '.join(ask)}` exited "
                        f"{done.returncode}: {said})")
    _placements[key] = [nodes[r] for r in range(ranks)]
    return _placements[key]


def _blocks(hosts: list[str]) -> list[tuple[str, int]] | None:
    """[(node, count)] when each node holds one run of consecutive ranks, else None."""
    blocks: list[tuple[str, int]] = []
    for host in hosts:
        if blocks and blocks[-1][0] == host:
            blocks[-1] = (host, blocks[-1][1] + 1)
        elif any(h == host for h, _ in blocks):
            return None
        else:
            blocks.append((host, 1))
    return blocks


def control_address(node: str) -> str | None:
    """This machine's address on the route to `node`: what Hydra's proxies there must call
    back (mpiexec's -localhost). None when `node` does not resolve here or the route is
    loopback's (Hydra's own choice, this machine's host name, is then as good)."""
    try:
        infos = socket.getaddrinfo(node, None, socket.AF_INET, socket.SOCK_DGRAM)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((infos[0][4][0], 9))  # UDP: picks the route, sends nothing
            address = str(probe.getsockname()[0])
    except (OSError, IndexError):
        return None
    return None if address.startswith("127.") else address


def hydra_command(tc: Toolchain, blocks: list[tuple[str, int]], ranks: int) -> list[str]:
    cmd = [tc.mpiexec, "-launcher", "slurm",
           "-hosts", ",".join(f"{host}:{count}" for host, count in blocks), "-n", str(ranks)]
    address = control_address(blocks[0][0])
    return cmd + (["-localhost", address] if address else [])


def slurm_launch(tc: Toolchain, ranks: int) -> SlurmLaunch | None:
    """How `ranks` ranks of `tc` start inside the allocation (None outside one): plain
    srun, or Hydra's Slurm launcher at srun's own placement (module docstring)."""
    srun = srun_prefix(tc, ranks)
    if srun is None:
        return None
    if _setting() == "srun":
        return SlurmLaunch(srun, "srun", f"{LAUNCHER_ENV}=srun")
    reason = hydra_fault_reason(tc)
    if reason is None:
        return SlurmLaunch(srun, "srun", f"srun --mpi={pmi_of(tc)} serves {tc.name}'s PMI")
    blocks = _blocks(placement(srun))
    if blocks is None:
        return SlurmLaunch(srun, "srun", f"{reason}; but srun places the ranks cyclically, "
                           "which a host list of one block a node cannot give: plain srun")
    return SlurmLaunch(hydra_command(tc, blocks, ranks), "hydra", reason)


def say_choice(run: str, record: dict[str, str]) -> None:
    """With --verbose, one line: which launcher the run `run` used and why."""
    if verbosity.verbose():
        print(f"{run}: launcher {record['kind']} ({record['why']})", file=sys.stderr,
              flush=True)
