"""The emulated nodes' network: one network namespace per node, each joined to a bridge
in the root namespace by a veth pair shaped with `tc tbf` on both ends (netem is not
available on this kind of machine; tbf is). Everything is found again by its name, so
`remove` works after a failed `create` or with the state file gone."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from .layout import BRIDGE, NODE_PREFIX, PREFIX_LEN, SUBNET, Layout, Node, netns_path
from .syscmd import run

# tbf's queue: 20 ms of the rate before it drops (a send's socket buffer fits).
_LATENCY = "20ms"


def _ip(*args: str, what: str) -> None:
    run(["ip", *args], what=what)


def _in_node(node: Node, *args: str, what: str) -> None:
    _ip("-n", node.name, *args, what=what)


def subnet_in_use() -> str | None:
    """An address of our subnet on a link we did not make: the machine's own network
    would be disturbed, so `up` refuses."""
    proc = run(["ip", "-j", "addr", "show"], what="checking the subnet")
    for link in json.loads(proc.stdout or "[]"):
        for addr in link.get("addr_info", []):
            if str(addr.get("local", "")).startswith(f"{SUBNET}.") and \
                    link.get("ifname") != BRIDGE:
                return f"{addr['local']} on {link.get('ifname')}"
    return None


def create(layout: Layout) -> None:
    what = "cluster up (network)"
    _ip("link", "add", BRIDGE, "type", "bridge", what=what)
    _ip("addr", "add", f"{layout.controller_address}/{PREFIX_LEN}", "dev", BRIDGE, what=what)
    _ip("link", "set", BRIDGE, "up", what=what)
    for node in layout.node_list:
        _ip("netns", "add", node.name, what=what)
        _ip("link", "add", node.veth, "type", "veth", "peer", "name", f"{node.veth}p",
            what=what)
        _ip("link", "set", f"{node.veth}p", "netns", node.name, what=what)
        _in_node(node, "link", "set", f"{node.veth}p", "name", "eth0", what=what)
        _in_node(node, "addr", "add", f"{node.address}/{PREFIX_LEN}", "dev", "eth0",
                 what=what)
        _in_node(node, "link", "set", "lo", "up", what=what)
        _in_node(node, "link", "set", "eth0", "up", what=what)
        _ip("link", "set", node.veth, "master", BRIDGE, what=what)
        _ip("link", "set", node.veth, "up", what=what)
        shape(node, layout.rate, layout.burst_bytes, what=what)
        _wire_sized_frames(node)


def shape(node: Node, rate: str, burst_bytes: int, *, what: str) -> None:
    """Both directions of the node's link to `rate`: the bridge end shapes what reaches the
    node, eth0 what leaves it (`replace`: also to change a shaped link, as a fault does)."""
    tbf = ["tbf", "rate", rate, "burst", str(burst_bytes), "latency", _LATENCY]
    run(["tc", "qdisc", "replace", "dev", node.veth, "root", *tbf], what=what)
    run(["ip", "netns", "exec", node.name, "tc", "qdisc", "replace", "dev", "eth0", "root",
         *tbf], what=what)


def set_link(node: Node, up: bool, *, what: str) -> None:
    """The node's link down (both ends lose carrier: nothing crosses, nothing is refused,
    as when a cable is pulled) or up again."""
    _ip("link", "set", node.veth, "up" if up else "down", what=what)


def link_is_up(node: Node) -> bool:
    proc = run(["ip", "-j", "link", "show", node.veth], what="", check=False)
    try:
        return "UP" in json.loads(proc.stdout or "[]")[0].get("flags", [])
    except (ValueError, IndexError):
        return False


def _wire_sized_frames(node: Node) -> None:
    """Segmentation offload off on both ends: a real NIC puts MTU-sized frames on the
    wire, and a capture then times every 1.5 kB rather than 64 kB lumps. Without
    ethtool the frames stay large and the wire check's granularity coarser (it says
    so: cluster/wire_check.py)."""
    if shutil.which("ethtool") is None:
        return
    for argv in (["ethtool", "-K", node.veth, "tso", "off", "gso", "off"],
                 ["ip", "netns", "exec", node.name, "ethtool", "-K", "eth0", "tso", "off",
                  "gso", "off"]):
        run(argv, what="cluster up (offloads)", check=False)


def existing() -> dict[str, list[str]]:
    """What of ours exists now: namespaces, links (bridge and veths)."""
    netns = sorted(p.name for p in Path("/run/netns").glob(f"{NODE_PREFIX}*")) \
        if Path("/run/netns").is_dir() else []
    proc = run(["ip", "-j", "link", "show"], what="listing links", check=False)
    try:
        links = [str(link.get("ifname")) for link in json.loads(proc.stdout or "[]")]
    except ValueError:
        links = []
    ours = sorted(n for n in links if n == BRIDGE or n.startswith("mo-v"))
    return {"namespaces": netns, "links": ours}


def remove() -> list[str]:
    """Delete every namespace and link of ours; returns what could not be deleted."""
    left: list[str] = []
    now = existing()
    for name in now["links"]:
        if run(["ip", "link", "del", name], what="", check=False).returncode != 0 and \
                name in existing()["links"]:
            left.append(f"link {name}")
    for name in now["namespaces"]:
        if run(["ip", "netns", "del", name], what="", check=False).returncode != 0:
            left.append(f"namespace {name}")
    return left


def _qdiscs(node: Node, bridge_end: bool) -> str:
    """One end's qdiscs as tc shows them: the bridge end's, or the node's eth0."""
    show = ["tc", "qdisc", "show", "dev", node.veth if bridge_end else "eth0"]
    argv = show if bridge_end else ["ip", "netns", "exec", node.name, *show]
    return run(argv, what="", check=False).stdout.strip()


def link_qdisc(node: Node) -> str:
    """The bridge end's qdisc as tc shows it (for `status`)."""
    text = _qdiscs(node, bridge_end=True)
    return text.splitlines()[0] if text else "none"


def link_shaping(node: Node) -> tuple[str, str]:
    """Both ends' qdiscs as tc shows them, without their handles (which a `replace` may
    keep or not): what tells one shaping from another."""
    bridge, eth0 = (re.sub(r"^qdisc (\S+) [0-9a-f]+:", r"qdisc \1", _qdiscs(node, end),
                           flags=re.M) for end in (True, False))
    return bridge, eth0


def reachable(node: Node, port: int, timeout_s: float = 1.0) -> bool:
    """Whether something listens on node:port, seen from the root namespace."""
    import socket

    try:
        with socket.create_connection((node.address, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def namespace_exists(node: Node) -> bool:
    return netns_path(node).exists()
