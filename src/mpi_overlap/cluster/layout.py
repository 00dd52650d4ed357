"""What an emulated cluster is made of: its node names, addresses, link rate and the
files it keeps, declared once so that `up`, `status`, `down` and the tests agree.

One cluster per machine: the names, the subnet and the runtime directory are fixed, so
`down` finds everything `up` made whatever MPI_OVERLAP_HOME says."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.errors import UserError
from ..core.link_rates import rate_bits_per_s

# 198.51.100.0/24 is a documentation range (RFC 5737): it never routes anywhere real, and
# it is not the range this kind of machine's own eth0 sits in (192.0.2.0/24), where a
# bridge address would add a second route to the real subnet (shared/cluster-notes.md).
SUBNET = "198.51.100"
PREFIX_LEN = 24
BRIDGE_HOST = 254  # the controller's address on the bridge, in the root namespace
BRIDGE = "mo-br0"
CONTROLLER = "mo-ctl"
NODE_PREFIX = "mo-node"
MAX_NODES = 16
RUNTIME_DIR = Path("/run/mpi-overlap-cluster")
STATE_FILE = RUNTIME_DIR / "cluster.json"
# Slurm's default ports (6817/6818) are left to a real Slurm on the same machine.
CTLD_PORT = 16817
SLURMD_PORT = 16818
DEFAULT_RATE = "1gbit"  # a 1 MiB message takes about 8 ms: the network is what shows


@dataclass(frozen=True)
class Node:
    name: str  # host name, network namespace and Slurm NodeName at once
    address: str
    veth: str  # the bridge end of its link, in the root namespace


@dataclass
class Layout:
    nodes: int
    rate: str = DEFAULT_RATE
    cpus_per_node: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= MAX_NODES:
            raise UserError(f"--nodes {self.nodes}: give 1 to {MAX_NODES} nodes")
        rate_bits_per_s(self.rate)  # a rate tc cannot read is one line here
        if self.cpus_per_node < 1:
            raise UserError(f"--cpus-per-node {self.cpus_per_node}: give at least 1")

    @property
    def rate_bits_per_s(self) -> float:
        """The link rate in bits per second (link_rates.py)."""
        return rate_bits_per_s(self.rate)

    @property
    def burst_bytes(self) -> int:
        """tbf's bucket: 1 ms of the rate, at least 16 KiB. A bucket's worth of frames
        crosses at once (the wire check allows for it); a smaller one did not hold the
        rate here (1gbit with a 64 kB bucket moved 1 MiB in 12.7 ms instead of 8.4)."""
        return max(16384, int(self.rate_bits_per_s / 8 * 1e-3))

    @property
    def node_list(self) -> list[Node]:
        return [Node(f"{NODE_PREFIX}{i}", f"{SUBNET}.{i}", f"mo-v{i}")
                for i in range(1, self.nodes + 1)]

    @property
    def controller_address(self) -> str:
        return f"{SUBNET}.{BRIDGE_HOST}"

    @property
    def hostlist(self) -> str:
        """Slurm's compact form of the node names, e.g. mo-node[1-2]."""
        return (f"{NODE_PREFIX}1" if self.nodes == 1
                else f"{NODE_PREFIX}[1-{self.nodes}]")

    def save(self) -> None:
        RUNTIME_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
        tmp = STATE_FILE.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1) + "\n")
        tmp.replace(STATE_FILE)


def netns_path(node: Node) -> Path:
    return Path("/run/netns") / node.name


def load_layout() -> Layout | None:
    """The cluster `up` recorded, or None when there is none."""
    try:
        doc = json.loads(STATE_FILE.read_text())
        return Layout(nodes=int(doc["nodes"]), rate=str(doc["rate"]),
                      cpus_per_node=int(doc["cpus_per_node"]))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError, UserError) as err:
        raise UserError(f"{STATE_FILE} is damaged ({err}); `mpi-overlap cluster down` "
                        "removes the cluster by its names") from None
