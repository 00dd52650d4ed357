"""`mpi-overlap cluster up | status | down | exec`: bring the emulated cluster up (all or
nothing: a failed `up` takes down what it made; a cluster left by a killed run is reused
when it checks out, else taken down first), say what runs, take it down leaving nothing
behind, and run a command where the cluster's Slurm reaches it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..core.errors import UserError
from ..run import mpich_leftovers
from . import daemons, hosts_file, network, node_shell
from .layout import NODE_PREFIX, RUNTIME_DIR, SLURMD_PORT, Layout, load_layout
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


def up(nodes: int, rate: str, cpus_per_node: int) -> tuple[Layout, str | None]:
    """The cluster asked for, and one line on what was found here before (None when
    nothing was): a cluster of the same layout that checks out is reused; anything else
    of ours (a killed run's cluster, another layout, parts of one) is taken down first, so
    a test run killed mid-way never blocks the next `up`."""
    layout = Layout(nodes=nodes, rate=rate, cpus_per_node=cpus_per_node)
    why = unavailable()
    if why:
        raise UserError(why)
    note = None
    if _something_here():
        unusable = why_not_reusable(layout)
        if unusable is None:
            reshaped = _shape_again(layout)
            node_shell.write(layout)
            return layout, ("cluster up: the cluster already up here has this layout and "
                            "checks out (daemons answer, nodes idle, no job left); reusing it"
                            + reshaped)
        relinked = _relink(layout)
        if relinked:
            return layout, relinked
        left = down()
        if left:
            raise UserError(f"cluster up: a cluster was already here ({unusable}) and "
                            f"taking it down left {', '.join(left)}")
        note = f"cluster up: took down the cluster already here first ({unusable})"
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
    return layout, note


def _shape_links(layout: Layout) -> None:
    for node in layout.node_list:
        network.shape(node, layout.rate, layout.burst_bytes,
                      what=f"cluster up: the link of {node.name}")


def _shape_again(layout: Layout) -> str:
    """Every link shaped as the layout says, again, since the layout's file does not tell
    how the links are shaped now: a hand's `tc` or a fault killed before it undid itself
    may have left them otherwise (2026-12-02: a 1gbit cluster reused with a link left
    with a `peakrate` by hand ran a predict check's traces twice as long, and the check
    measured them). '' where nothing changed, else what was shaped again."""
    nodes = layout.node_list
    before = [network.link_shaping(n) for n in nodes]
    _shape_links(layout)
    changed = [n.name for n, was in zip(nodes, before, strict=True)
               if network.link_shaping(n) != was]
    return (f"; the links of {', '.join(changed)} were shaped otherwise, and are shaped "
            f"to {layout.rate} again" if changed else "")


def _relink(wanted: Layout) -> str | None:
    """A cluster that checks out and differs from `wanted` only in its links' rate gets
    the new rate on its links (tc replaces the shaping at once; Slurm is not touched):
    one line, or None when it cannot serve. Taking it down and up again took a minute."""
    try:
        found = load_layout()
    except UserError:
        return None
    if found is None or found.rate == wanted.rate or why_not_reusable(
            replace(wanted, rate=found.rate)) is not None:
        return None
    _shape_links(wanted)
    wanted.save()
    node_shell.write(wanted)
    return (f"cluster up: the cluster already up here checks out; its links changed from "
            f"{found.rate} to {wanted.rate}")


def _something_here() -> bool:
    try:
        return status().anything
    except UserError:  # a damaged state file: something is here
        return True


def why_not_reusable(wanted: Layout) -> str | None:
    """Why the cluster found here cannot serve as `wanted` (one phrase), or None when it
    can: same layout, every namespace, daemon and slurmd there and answering, every node
    idle in Slurm, and no process but the daemons on the nodes (a killed job's ranks)."""
    try:
        found = load_layout()
    except UserError:
        return "its state file is damaged"
    if found is None:
        return "parts of a cluster without its state file"
    if found != wanted:
        return (f"{found.nodes} nodes, links {found.rate}, {found.cpus_per_node} CPU(s) per "
                "node")
    st = status()
    nodes = wanted.node_list
    missing = [n.name for n in nodes if n.name not in st.namespaces]
    if missing:
        return f"namespace {', '.join(missing)} missing"
    daemon_names = daemons.daemon_names(wanted)
    absent = sorted(daemon_names - st.daemons.keys())
    if absent:
        return f"{', '.join(absent)} not running"
    strays = sorted(f"{k} ({v})" for k, v in st.daemons.items() if k not in daemon_names
                    and not k.startswith("slurmstepd"))
    if strays:
        return f"processes of an earlier job on its nodes: {', '.join(strays[:4])}"
    silent = [name for name, _addr, _qdisc, answers in st.nodes if not answers]
    if silent:
        return f"slurmd on {', '.join(silent)} does not answer"
    if not st.hosts_block:
        return f"its block in {hosts_file.HOSTS} is missing"
    try:
        daemons.wait_idle(wanted, timeout_s=5)
    except UserError:
        return "a node is not idle in Slurm (a job left allocated, or a node down)"
    return None


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
        return bool(self.layout or self.parts())

    def parts(self) -> list[str]:
        """What of a cluster exists, one phrase each; empty when nothing does."""
        return [*(f"namespace {n}" for n in self.namespaces),
                *(f"link {n}" for n in self.links),
                *(f"process {k} (pid {v})" for k, v in self.daemons.items()),
                *([f"the block in {hosts_file.HOSTS}"] if self.hosts_block else []),
                *([str(RUNTIME_DIR)] if RUNTIME_DIR.exists() else [])]


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
    # the topology files of the nodes' Hydra proxies that Slurm ended (mpich_leftovers.py)
    mpich_leftovers.sweep_topology(host=lambda name: name.startswith(NODE_PREFIX))
    hosts_file.remove()
    shutil.rmtree(RUNTIME_DIR, ignore_errors=True)
    return sorted(set(left + status().parts()))


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
