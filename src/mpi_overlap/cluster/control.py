"""`mpi-overlap cluster up | status | down | exec`: bring the emulated cluster up (all or
nothing: a failed `up` takes down what it made), say what runs, take it down leaving
nothing behind, and run a command where the cluster's Slurm reaches it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UserError
from . import daemons, hosts_file, network, node_shell
from .layout import RUNTIME_DIR, SLURMD_PORT, Layout, load_layout
from .syscmd import missing_tools

# A node is another host: MPI libraries that think all ranks share one machine (UCX sees
# one boot id) would use shared memory between "nodes" and bypass the shaped link. These
# make the inter-node path the network; ranks on one node still use the MPI's own shared
# memory (MPICH and Open MPI tell nodes apart by the host names Slurm's PMI gives them).
TRANSPORT_ENV = {
    "UCX_TLS": "tcp,self",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,vader,tcp",
    "OMPI_MCA_btl_tcp_if_include": "eth0",
}


def unavailable() -> str | None:
    """Why no cluster can be made here (one line), or None."""
    if os.geteuid() != 0:
        return "the emulated cluster needs root (network namespaces, veth links, tc)"
    missing = missing_tools(daemons.TOOLS)
    if missing:
        return (f"the emulated cluster needs {', '.join(missing)} (Debian: apt-get install "
                "slurm-wlm munge iproute2)")
    return None


def up(nodes: int, rate: str, cpus_per_node: int) -> Layout:
    layout = Layout(nodes=nodes, rate=rate, cpus_per_node=cpus_per_node)
    why = unavailable()
    if why:
        raise UserError(why)
    old = load_layout()
    if old is not None or network.existing()["namespaces"]:
        raise UserError("a cluster is already up here (`mpi-overlap cluster status` shows it; "
                        "`mpi-overlap cluster down` takes it down)")
    clash = network.subnet_in_use()
    if clash:
        raise UserError(f"the cluster's subnet is in use on this machine ({clash}); "
                        "nothing was changed")
    try:
        layout.save()
        network.create(layout)
        hosts_file.add(layout)
        daemons.start(layout)
        daemons.wait_idle(layout)
        node_shell.write(layout)
    except BaseException:
        down()
        raise
    return layout


@dataclass
class Status:
    layout: Layout | None
    daemons: dict[str, int]
    namespaces: list[str]
    links: list[str]
    hosts_block: bool
    nodes: list[tuple[str, str, str, bool]]  # name, address, qdisc, slurmd answers

    @property
    def anything(self) -> bool:
        return bool(self.layout or self.daemons or self.namespaces or self.links
                    or self.hosts_block or RUNTIME_DIR.exists())


def status() -> Status:
    layout = load_layout()
    found = network.existing()
    nodes = [(n.name, n.address, network.link_qdisc(n), network.reachable(n, SLURMD_PORT))
             for n in (layout.node_list if layout else [])]
    return Status(layout, daemons.running(), found["namespaces"], found["links"],
                  hosts_file.present(), nodes)


def down() -> list[str]:
    """Take everything down; returns what is left (empty when nothing is)."""
    left = daemons.stop()
    left += network.remove()
    hosts_file.remove()
    shutil.rmtree(RUNTIME_DIR, ignore_errors=True)
    after = status()
    left += [f"namespace {n}" for n in after.namespaces if f"namespace {n}" not in left]
    left += [f"link {n}" for n in after.links if f"link {n}" not in left]
    left += [f"process {k} (pid {v})" for k, v in after.daemons.items()]
    if after.hosts_block:
        left.append(f"the block in {hosts_file.HOSTS}")
    if RUNTIME_DIR.exists():
        left.append(str(RUNTIME_DIR))
    return sorted(set(left))


def exec_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a command run on the cluster gets: the caller's, the cluster's
    Slurm, and the transport settings (the caller's own values win)."""
    env = dict(os.environ if base is None else base)
    for key, value in TRANSPORT_ENV.items():
        env.setdefault(key, value)
    env.update(daemons.environment())
    return env


def run_on_cluster(argv: Sequence[str]) -> int:
    if load_layout() is None:
        raise UserError("no cluster is up here: `mpi-overlap cluster up --nodes 2` first")
    if not argv:
        raise UserError("cluster exec: name a command, e.g. "
                        "`mpi-overlap cluster exec -- srun -N 2 hostname`")
    try:
        return subprocess.run(list(argv), env=exec_env(), check=False).returncode
    except FileNotFoundError:
        raise UserError(f"cluster exec: '{argv[0]}' not found") from None
    except PermissionError:
        raise UserError(f"cluster exec: '{argv[0]}' is not executable") from None
