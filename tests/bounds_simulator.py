"""Random single-thread program timelines with known TRUE overlap, for the bounds tests.

The profiler never sees when a transfer physically happens; it only sees call boundaries and
XFER_BEGIN / XFER_END time stamps and derives a [min, max] range for the overlapped transfer
time (paper §2.2). This module builds a program whose physical transfers it knows: an
alternation of computation intervals and MPI calls (integer ns), transfers posted inside
calls (non-blocking: `begin`/`start` in one call, `end` in the same or a later call; blocking:
`incall`), and for each transfer a true interval of length exactly xfer_time(bytes) placed
inside [its begin event, its end event]. Calls that complete a transfer are made long enough
for it to fit (the wait blocks until the data has arrived). The true overlap is the length
of (true interval ∩ union of computation intervals); the profiler's bounds must contain it.

Note: the bounds are stated relative to the XFER_BEGIN/XFER_END time stamps. A physical
interval that starts in the posting call *before* its begin event (or ends after the end
event) can break the lower bound, so the true interval is placed between the events. With
begin at the posting call's enter and end at the completing call's exit (which this module
generates often) that is the whole [enter, exit] range.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from bounds_reference import IN_CALL, Event, XferTable

FNS_POST = ("MPI_Isend", "MPI_Irecv")
FNS_WAIT = ("MPI_Wait", "MPI_Waitall", "MPI_Test")
FNS_BLOCK = ("MPI_Send", "MPI_Recv", "MPI_Allreduce")


@dataclass
class SimTransfer:
    """One transfer as the profiler will report it, with its physical truth."""

    key: int | None
    nbytes: int
    kind: str
    fn: str
    case: str  # the case the profiler must find
    xfer: float  # seconds, = xfer_time(nbytes)
    true_start: float  # seconds
    overlap: float  # seconds: |true interval ∩ computation|


@dataclass
class Simulation:
    events: list[Event]
    transfers: list[SimTransfer]  # in the order the profiler closes them
    comp: list[tuple[int, int]]  # computation intervals [a, b) in ns
    table: XferTable = field(repr=False, default_factory=lambda: XferTable([(0, 1e-6)]))


@dataclass
class _Pending:
    key: int
    nbytes: int  # posted bytes
    kind: str
    fn: str
    t_begin: int
    call: int
    persistent: bool


def random_table(rng: random.Random) -> list[tuple[int, float]]:
    """A plausible increasing table: latency + bytes / bandwidth, 1 to 4 points."""
    lat = rng.uniform(0.5e-6, 5e-6)
    bw = rng.uniform(0.2e9, 20e9)  # bytes per second
    sizes = sorted(rng.sample([0, 1, 64, 1024, 4096, 65536, 1 << 20, 4 << 20], rng.randint(1, 4)))
    return [(b, lat + b / bw) for b in sizes]


def overlap(a: float, b: float, comp: list[tuple[int, int]]) -> float:
    """Length of [a, b] ∩ union(comp), times in seconds, comp in ns (disjoint, sorted)."""
    total = 0.0
    for lo, hi in comp:
        lo_s, hi_s = lo * 1e-9, hi * 1e-9
        total += max(0.0, min(b, hi_s) - max(a, lo_s))
    return total


def simulate(rng: random.Random, n_calls: int | None = None) -> Simulation:
    """Build one random timeline; see the module docstring."""
    points = random_table(rng)
    table = XferTable(points)
    events: list[Event] = [("table", b, s) for b, s in points]
    if rng.random() < 0.3:
        edges = sorted(rng.sample([1, 16, 100, 1000, 5000, 65536, 1 << 20], rng.randint(1, 4)))
        events.append(("bins", tuple(edges)))
    sizes = [0, 1, 7, 64, 100, 1000, 4096, 10000, 65536, 200000, 1 << 20, 3 << 20, 8 << 20]
    n_calls = rng.randint(1, 25) if n_calls is None else n_calls
    comp: list[tuple[int, int]] = []
    pending: dict[int, _Pending] = {}
    persistent: dict[int, tuple[int, str, str]] = {}
    closed: list[tuple[SimTransfer, int, int]] = []  # transfer, window lo, window hi (ns)
    next_key = 1
    t = rng.randint(0, 10_000)

    def step(hi: int = 200) -> int:
        return rng.choice((0, rng.randint(1, hi)))

    def close(p: _Pending, t_end: int, case: str, nbytes: int) -> None:
        closed.append((SimTransfer(p.key, nbytes, p.kind, p.fn, case, table.time(nbytes),
                                   0.0, 0.0), p.t_begin, t_end))

    def need(p: _Pending, nbytes: int) -> int:
        """Earliest end time at which the transfer can have completed."""
        return p.t_begin + int(table.time(nbytes) * 1e9) + 1

    for call in range(n_calls + 1):
        last = call == n_calls
        if call > 0:
            c = rng.choice((0, rng.randint(1, 2_000), rng.randint(1, 50_000)))
            if c:
                comp.append((t, t + c))
            t += c
        fn = "MPI_Finalize" if last else rng.choice(FNS_POST + FNS_WAIT + FNS_BLOCK)
        events.append(("enter", t, fn))
        t += step(50)
        actions = [] if last else [rng.choice(("post", "post", "start", "block", "complete",
                                               "complete", "endonly"))
                                   for _ in range(rng.randint(1, 4))]
        if last and pending and rng.random() < 0.7:
            actions = ["complete"] * rng.randint(1, len(pending))
        for act in actions:
            if act == "post":
                kind = rng.choice(("send", "recv"))
                key, next_key = next_key, next_key + 1
                nbytes = rng.choice(sizes)
                pfn = "MPI_Isend" if kind == "send" else "MPI_Irecv"
                pending[key] = _Pending(key, nbytes, kind, pfn, t, call, False)
                events.append(("begin", t, key, nbytes, kind, pfn))
            elif act == "start":
                idle = [k for k in persistent if k not in pending]
                if idle and rng.random() < 0.7:
                    key = rng.choice(idle)
                else:
                    key, next_key = next_key, next_key + 1
                    kind = rng.choice(("send", "recv"))
                    pfn = "MPI_Send_init" if kind == "send" else "MPI_Recv_init"
                    persistent[key] = (rng.choice(sizes), kind, pfn)
                    events.append(("pinit", key, *persistent[key]))
                nbytes, kind, pfn = persistent[key]
                pending[key] = _Pending(key, nbytes, kind, pfn, t, call, True)
                events.append(("start", t, key))
            elif act == "block":
                kind = rng.choice(("send", "recv"))
                nbytes = rng.choice(sizes)
                x = table.time(nbytes)
                closed.append((SimTransfer(None, nbytes, kind, fn, IN_CALL, x, 0.0, 0.0), t,
                               t + int(x * 1e9) + 1))
                events.append(("incall", t, nbytes, kind, fn))
                t += int(x * 1e9) + 1  # the blocking call lasts at least the transfer
            elif act == "complete" and pending:
                p = pending.pop(rng.choice(sorted(pending)))
                got = p.nbytes
                if p.kind == "send":  # a send's status says nothing about its size
                    shown = rng.choice((-1, p.nbytes, rng.randint(0, 1 << 22)))
                elif rng.random() < 0.5:
                    got = shown = rng.randint(0, p.nbytes)
                else:
                    shown = rng.choice((-1, got))
                t = max(t, need(p, got) + step(20))
                case = IN_CALL if p.call == call else "across-calls"
                close(p, t, case, got)
                events.append(("end", t, p.key, shown, False))
            elif act == "endonly":
                # a completion whose begin the profiler never saw: any physical interval
                # before it is consistent with [0, xfer]
                key, next_key = next_key, next_key + 1
                nbytes = rng.choice(sizes)
                x = table.time(nbytes)
                closed.append((SimTransfer(key, nbytes, "unknown", fn, "end-only", x, 0.0, 0.0),
                               t - int(x * 1e9) - 1, t))
                events.append(("end", t, key, nbytes, False))
            t += step(100)
        if last:
            # whatever is still outstanding completes physically before the program ends
            for p in pending.values():
                t = max(t, need(p, p.nbytes))
        t += step(50)
        events.append(("exit", t))
    for key in sorted(pending):
        p = pending[key]
        close(p, t, "begin-only", p.nbytes)
    events.append(("finish", t))

    transfers = []
    for tr, lo, hi in closed:
        room = (hi - lo) * 1e-9 - tr.xfer
        assert room >= 0, (tr, lo, hi)
        pick = rng.random()
        frac = 0.0 if pick < 0.2 else 1.0 if pick < 0.4 else rng.random()
        tr.true_start = lo * 1e-9 + frac * room
        tr.overlap = overlap(tr.true_start, tr.true_start + tr.xfer, comp)
        transfers.append(tr)
    return Simulation(events, transfers, comp, table)

