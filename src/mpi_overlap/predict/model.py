"""The target a trace is replayed on, and what it makes each message and collective cost
(docs/method.md, "Predicting by replay").

A message of s bytes between two ranks costs the transfer table's whole time T(s) of its
pair class (intra: same host, inter: different hosts); where the table's parts say the
size moves eagerly (s at most the class's eager limit), the sender's call holds o_s(s),
the data is in the receiver's MPI T(s) - o_r(s) after the send was posted, and the
receive's completion holds o_r(s). Above the eager limit (or without parts) the message
is rendezvous: it moves whole, T(s), once both ends' MPI has polled it (engine.py).

`--link RATE --latency T` adds a wire on top of the table for every message between ranks
on different nodes: T'(s) = T(s) + latency + 8 s / rate (and the eager arrival moves by
the same amount; o_s and o_r stay). On a run whose ranks were all on one node, each rank
is taken as its own node (one rank per node), so that every message crosses the link.
A collective of an op the table has a series for costs that series' time (its
communicator size, or the table's size model); an op without any series costs
ceil(log2 p) rounds of the point-to-point time of its block (at least one round). On a
link, a collective whose members span nodes adds ceil(log2 p) rounds of the wire
(p - 1 rounds for the ops that move p blocks: gather, scatter, allgather, alltoall and
their kin).

Messages between nodes share their link direction (the ordered pair of nodes), which
carries one message's G s at a time (LogGP's G: the time per byte of the table's stream,
else between its two largest sizes; plus a link's 8 / rate): link_waits, and the pass's
book in engine.py.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..calibration.xfer_table import LINEAR_COLL_OPS, XferTable, blocking_op
from ..core.errors import UserError
from ..core.link_rates import rate_bits_per_s
from .program import (
    COLL_BLOCK,
    RECV_BLOCK,
    RECV_DONE,
    SEND_BLOCK,
    SEND_DONE,
    SEND_POST,
    Program,
)

OVERLAPS = ("model", "none", "perfect")
PROGRESS = ("calls", "async")
_LATENCY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(s|ms|us|ns)?$", re.I)
_LATENCY_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def parse_rate(text: str) -> float:
    """A link rate as tc reads it (200mbit, 1gbit, 10mbps) in bits per second."""
    return rate_bits_per_s(text.strip())


def parse_latency(text: str) -> float:
    """A latency such as 50us, 0.2ms, 1e-5 is not accepted (say the unit); seconds."""
    m = _LATENCY.match(text.strip())
    if not m:
        raise UserError(f"--latency '{text}': give a time such as 50us, 0.2ms or 0")
    value = float(m.group(1)) * _LATENCY_UNITS[(m.group(2) or "s").lower()]
    if not m.group(2) and value != 0:
        raise UserError(f"--latency '{text}': give its unit (s, ms, us, ns), e.g. 50us")
    return value


@dataclass(frozen=True)
class Link:
    rate_bits_per_s: float
    latency_s: float

    def wire(self, nbytes: int) -> float:
        return self.latency_s + 8.0 * max(nbytes, 0) / self.rate_bits_per_s


@dataclass(frozen=True)
class Target:
    table: XferTable
    link: Link | None = None
    overlap: str = "model"  # model | none | perfect
    progress: str = "calls"  # calls | async
    placement: int | None = None  # ranks per node (block order); None: as recorded


@dataclass
class Costs:
    """Per message: whole time T, and (eager only) o_s and o_r; per collective: its time.
    Lists indexed like the program's msgs and colls."""

    T: list[float]
    o_s: list[float]
    o_r: list[float]
    eager: list[bool]
    coll: list[float]
    link_nodes: bool = False  # ranks taken as one per node for --link
    missing_classes: tuple[str, ...] = ()  # pair classes the placement needs, the table lacks
    needed_classes: tuple[str, ...] = ()  # pair classes the placement's messages use
    # per message and per collective: the table's zero-byte time of its pair class (for a
    # collective, inter where its members span nodes), the transport's own time per
    # message, which scales a call's unexplained time to another transport
    # (engine.residuals); empty: not known (the residual is kept as recorded)
    floor: list[float] = field(default_factory=list)
    coll_floor: list[float] = field(default_factory=list)
    # per message: its link direction (an ordered pair of nodes, numbered; -1 within a
    # node) and the time it holds that direction (G s: the table's per-byte time of its
    # stream or at its largest sizes, plus a --link's); empty: no link is shared (link_waits)
    lane: list[int] = field(default_factory=list)
    occupy: list[float] = field(default_factory=list)
    lane_nodes: list[tuple[str, str]] = field(default_factory=list)  # per direction: its nodes


def moves_into_a_node(rec: Costs, tgt: Costs, k: int) -> bool:
    """Whether message k crossed nodes as recorded and stays within one node on the
    target (a placement that packs its ranks): its payload then moves through shared
    memory instead of the network's transport, whose per-message work the recorded calls
    hold (engine.on_target's `carried`). False where either side has no lanes."""
    return k < len(rec.lane) and k < len(tgt.lane) and rec.lane[k] >= 0 > tgt.lane[k]


def _nodes(prog: Program, link: Link | None,
           placement: int | None = None) -> tuple[list[str], bool]:
    if placement is not None:  # --placement K: rank r on node r // K, as srun's block
        return [f"node{r // placement}" for r in range(prog.ranks)], False
    hosts = list(prog.hosts) or [""] * prog.ranks
    one_node = len(set(hosts)) <= 1
    if link is not None and one_node:
        return [str(r) for r in range(prog.ranks)], True
    return hosts, False


def _class(table: XferTable, crosses: bool) -> str:
    """The pair class of a pair on two nodes (crosses) or one, else the class the table has."""
    cls = "inter" if crosses else "intra"
    if not table.points.get(cls):
        cls = "inter" if cls == "intra" else "intra"
    return cls


def costs(prog: Program, target: Target) -> Costs:
    table, link = target.table, target.link
    nodes, per_rank = _nodes(prog, link, target.placement)
    needed = {"intra" if nodes[m.sender] == nodes[m.receiver] else "inter" for m in prog.msgs}
    out = Costs([], [], [], [], [], link_nodes=per_rank,
                missing_classes=tuple(sorted(c for c in needed if not table.points.get(c))),
                needed_classes=tuple(sorted(needed)))
    # per (size, class, crosses): T, o_s, o_r, eager, and the time it holds a link
    # direction (G s; 0 within a node)
    cache: dict[tuple[int, str, bool], tuple[float, float, float, bool, float]] = {}
    floors: dict[str, float] = {}
    lanes: dict[tuple[str, str], int] = {}
    for m in prog.msgs:
        crosses = nodes[m.sender] != nodes[m.receiver]
        cls = _class(table, crosses)
        key = (m.nbytes, cls, crosses)
        hit = cache.get(key)
        if hit is None:
            t = table.lookup(m.nbytes, cls)
            parts = table.eager_parts(cls, m.nbytes, t) if table.parts else None
            wire = link.wire(m.nbytes) if (link is not None and crosses) else 0.0
            occupy = 0.0
            if crosses:
                per_byte = _gap_per_byte(table, cls) + (8.0 / link.rate_bits_per_s
                                                        if link else 0.0)
                occupy = per_byte * max(m.nbytes, 0)
            if parts is None:
                hit = (t + wire, 0.0, 0.0, False, occupy)
            else:
                hit = (t + wire, parts[0], parts[1], True, occupy)
            cache[key] = hit
        out.lane.append(lanes.setdefault((nodes[m.sender], nodes[m.receiver]), len(lanes))
                        if crosses else -1)
        out.T.append(hit[0])
        out.o_s.append(hit[1])
        out.o_r.append(hit[2])
        out.eager.append(hit[3])
        out.occupy.append(hit[4])
        out.floor.append(_floor(table, cls, floors))
    out.lane_nodes = sorted(lanes, key=lanes.__getitem__)
    for c in prog.colls:
        member_nodes = [nodes[r] for r in c.members]
        out.coll.append(coll_time(table, c.op, len(c.members), c.nbytes)
                        + _coll_wire(link, c.op, member_nodes, c.nbytes))
        spans = len(set(member_nodes)) > 1
        out.coll_floor.append(_floor(table, _class(table, spans), floors))
    return out


def _gap_per_byte(table: XferTable, cls: str) -> float:
    """LogGP's G of the class: the time per byte of the table's stream (a window of
    messages kept back to back, xfer_stream.py) where it has one; else its time per byte
    between its two largest sizes (a link's rate where the ping-pong's largest messages
    are paced by it, not where they fit a burst allowance), 0 with fewer than two sizes."""
    stream = table.streams.get(cls)
    if stream is not None and stream.nbytes > 0:
        return stream.per_byte_s
    pts = table.points.get(cls) or []
    if len(pts) < 2:
        return 0.0
    (s1, t1), (s2, t2) = pts[-2], pts[-1]
    return max(t2 - t1, 0.0) / (s2 - s1) if s2 > s1 else 0.0


def link_waits(c: Costs, start: list[float]) -> list[float]:
    """Per message: how long it waits for its link direction (Costs.lane) when each
    transfer starts at `start` (NaN: never), one message's G s at a time in order of
    start (LogGP's G; LogGOPSim serialises a NIC's messages the same way): a message
    starts at max(its start, the direction's previous message's start + its G s) and
    arrives that much later. 0 for every message where none overlaps another on a
    direction. The replay pass (engine.py) applies the same rule as it goes."""
    out = [0.0] * len(start)
    if not c.lane:
        return out
    free: dict[int, float] = {}
    for t, k in sorted((t, k) for k, t in enumerate(start) if c.lane[k] >= 0 and t == t):
        lane = c.lane[k]
        f = free.get(lane, -math.inf)
        if f > t:
            out[k] = f - t
            t = f
        free[lane] = t + c.occupy[k]
    return out


def _floor(table: XferTable, cls: str, seen: dict[str, float]) -> float:
    """The class's zero-byte one-way time (the wire a --link adds is not in it)."""
    if cls not in seen:
        seen[cls] = table.lookup(0, cls) if table.points.get(cls) else 0.0
    return seen[cls]


def _log_rounds(p: int) -> int:
    return max(math.ceil(math.log2(max(p, 2))), 1)


def coll_rounds(op: str, p: int) -> int:
    base = blocking_op(op) or op
    if base in LINEAR_COLL_OPS:
        return max(p - 1, 1)
    return _log_rounds(p)


def coll_time(table: XferTable, op: str, p: int, nbytes: int) -> float:
    """The op's time from the table's series; without any series for the op (or its
    blocking op), ceil(log2 p) rounds of the point-to-point time of the block."""
    secs, flags = table.lookup_coll(op, p, nbytes)
    return _log_rounds(p) * secs if "coll_uncalibrated" in flags else secs


def _coll_wire(link: Link | None, op: str, member_nodes: list[str], nbytes: int) -> float:
    if link is None or len(set(member_nodes)) <= 1:
        return 0.0
    return coll_rounds(op, len(member_nodes)) * link.wire(nbytes)


def message_work(c: Costs, op: int, k: int) -> tuple[int, float] | None:
    """Whether the call making `op` of message k does that message's own work in the
    model, and then (its end: 0 the send's, 1 the receive's; its in-call part): o_s of an
    eager send's post, o_r of an eager receive's completion, T of a rendezvous transfer
    in the call that completes it, and a blocking send's or receive's. None for a post
    that moves nothing yet (a rendezvous send's, any receive's) or an eager send's
    completion."""
    if op == SEND_BLOCK:
        return 0, (c.o_s[k] if c.eager[k] else c.T[k])
    if op == SEND_POST:
        return (0, c.o_s[k]) if c.eager[k] else None
    if op == SEND_DONE:
        return None if c.eager[k] else (0, c.T[k])
    if op in (RECV_BLOCK, RECV_DONE):
        return 1, (c.o_r[k] if c.eager[k] else c.T[k])
    return None


@dataclass(frozen=True)
class Moves:
    """When each message could move at the recorded times (engine.recorded_moves): both
    ends polled (`start`), and its receive's post."""
    start: list[float]
    recv_post: list[float]


def incall_at(c: Costs, ops: list[tuple[int, int]], enter: float,
              send_post: list[float], wait: list[float] | None = None,
              moves: Moves | None = None) -> float:
    """incall_cost of a call entered at `enter`, with the sends posted at `send_post`
    (per message): an eager receive's completion holds, besides o_r, the time its data
    was still in flight after the later of the call's enter and the send's post (it
    arrives T - o_r after the post). That time is in the model's T; "waiting" counts only
    the time before the post, so without it a receive-only call's time in flight would
    be left unexplained, kept in its residual and counted again on top of T. `wait` (per
    message, link_waits at the recorded times) is added to each message's T, as the
    replay adds it, so that a recorded wait for the link is not kept in the residual too.
    `moves` (engine.recorded_moves): a rendezvous end's completion holds, besides T, the
    time from the later of the call's enter and the partner's post (before which it is
    "waiting") to when both ends had polled the message, as the replay has it move; kept
    in the residual, that wait for the partner's next MPI call was counted again in the
    replay, which makes the call wait for it anyway."""
    best = 0.0
    for op, k in ops:
        if op == COLL_BLOCK:
            x = c.coll[k]
        else:
            work = message_work(c, op, k)
            if work is None:
                continue
            x = work[1]
            d = wait[k] if wait else 0.0
            s0 = send_post[k] if k < len(send_post) else math.nan
            if not c.eager[k]:
                x += d  # the rendezvous transfer's T, and its wait for the link
                if moves is not None:
                    partner = s0 if op in (RECV_BLOCK, RECV_DONE) else moves.recv_post[k]
                    late = moves.start[k] - max(enter, partner)
                    x += late if late > 0.0 else 0.0  # False where either is NaN
            elif op in (RECV_BLOCK, RECV_DONE) and s0 == s0:
                left = s0 + (c.T[k] + d) - x - max(enter, s0)
                x += left if left > 0.0 else 0.0
        best = max(best, x)
    return best


# The kinds of call a residual is kept per (engine.residuals): one that ends messages
# only as their sender, one that ends them only as their receiver, and any other (both
# sides: an exchange's MPI_Waitall; a collective). Half of a blocking halo's
# MPI_Sendrecv calls only send and half only receive, on one rank, and their own times
# differ by a factor of 2-3: one median of the mix fits neither.
SENDS, RECEIVES = 1, 2
_KIND_NAMES = {SENDS: " (sends)", RECEIVES: " (receives)"}


def call_kind(ops: list[tuple[int, int]]) -> int:
    """Bit 0: the call makes a send's end; bit 1 a receive's; bit 2 a collective's."""
    m = 0
    for op, _ in ops:
        m |= 4 if op >= COLL_BLOCK else 1 << (op & 1)
    return m


def residual_key(fn: str, kind: int) -> str:
    """The name a call's residual is kept under: its function, and for a call that ends
    messages on one side only, that side ("MPI_Sendrecv (receives)")."""
    return fn + _KIND_NAMES.get(kind, "")


def incall_cost(c: Costs, ops: list[tuple[int, int]]) -> float:
    """What the model puts inside a call when no partner keeps it waiting: the longest of
    its operations' own parts (message_work's, and a blocking collective's time); incall_at
    without the times of the sends' posts, so with no data still in flight."""
    return incall_at(c, ops, 0.0, [])
