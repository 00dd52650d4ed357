"""Independent Python reference of the overlap profiler's event processing.

This is the test oracle for `mop_replay` (native/profiler): it implements the event
semantics of docs/profiler.md and the overlap bounds of Shet et al. §2.2 (docs/method.md,
"Sources") from the written specification only, without
looking at the C sources, so that the two implementations can be compared event stream by
event stream.

Input is a list of event tuples (the replay format of docs/profiler.md, one tuple a line):

    ("table", bytes, seconds)                 ("bins", (edge, edge, ...))
    ("enter", t, fn)                          ("exit", t)
    ("begin", t, key, bytes, kind, fn)        ("end", t, key, bytes, cancelled[, query])
    ("join", t, key, bytes, kind, fn)
    ("incall", t, bytes, kind, fn)            ("pinit", key, bytes, kind, fn)
    ("start", t, key)                         ("free", t, key)
    ("region_begin", t, name)                 ("region_end", t, name)
    ("pcontrol", t, level)                    ("finish", t)

Times are integer nanoseconds. Output is the document `mop_replay` prints:
`{"transfers": [...], "profile": {...}}`.

Three rules follow the engine's deliberate choices where the written specification was
silent or was changed afterwards:

* across calls, when xfer_time exceeds the time between the begin and end events the
  paper's min (xfer - noncomputation) would exceed its max (computation): min is clamped to
  max and counter `xfer_exceeds_span` counts it (reported transfers only);
* a plain `begin` on a key whose plain transfer is still outstanding keeps both side by
  side (MPICH hands one handle to several pre-completed requests): counter
  `handle_shared`, and `end`, `end ... cancelled` and `free` take the oldest first. A
  persistent `start` on an active key, or a `begin` on a key whose outstanding transfer is
  persistent, still replaces it (begin-only, counter `handle_reused`);
* `free` of an outstanding MPI_PROC_NULL (`null`) request is not counted in `freed_active`
  (as at `finish`, where it is not counted in `unfinished`).

The checks on the bounds (docs/method.md, "Checks on the bounds") are kept as that section
states them: an in-call transfer is judged at the exit of the outermost call that holds it,
against that call's time (stretched to its own end event, should that lie later), each
transfer on its own; per call, the longest transfer against the call's time gives the
`beyond` sums; an across-calls transfer is flagged where its bounds were clamped
(`xfer_exceeds_span`), its excess being xfer − (end − begin). In-call transfers outside
any call, or in a call still open at `finish`, are `unchecked`.

Three event forms describe completion paths beyond a plain Wait (docs/profiler.md,
"Completion paths"):

* `join` is a second transfer on the request of the `begin` just before it (MPI_Isendrecv's
  receive): queued behind it without counting `handle_shared`, it ends, is freed and is
  left at `finish` together with it;
* `end ... query` (MPI_Request_get_status) closes the oldest request of the key that no query
  closed yet and leaves it outstanding, marked done: a later plain `end` or `free` of it
  closes nothing, another query on it does nothing; a query on an unknown key is an
  end-only transfer and leaves a done request, so that its Wait does not count it again;
* kind `greq` (MPI_Grequest_start) is a generalized request: its completion counts in
  `grequest_completions` and is no transfer; freeing it or leaving it open counts nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

NO_REGION = "(no region)"
NS = 1e-9

IN_CALL = "in-call"
ACROSS = "across-calls"
BEGIN_ONLY = "begin-only"
END_ONLY = "end-only"
CASES = (IN_CALL, ACROSS, BEGIN_ONLY, END_ONLY)

COUNTERS = (
    "table_extrapolated",
    "nested_calls",
    "unmonitored_transfers",
    "inactive_completions",
    "handle_reused",
    "proc_null",
    "cancelled",
    "start_unknown",
    "freed_active",
    "free_unknown",
    "region_mismatch",
    "unfinished",
)
# Counters mop_replay has beyond the specification that the reference also keeps.
EXTRA_COUNTERS = ("xfer_exceeds_span", "xfer_exceeds_call", "handle_shared",
                  "grequest_completions")
# The checks on the bounds, in the order the profile lists them: named after their case.
CHECKS = (IN_CALL, ACROSS)
# Kinds of requests that move no data: tracked only to recognise their completion.
NO_DATA = ("null", "greq")

Event = tuple[Any, ...]


# ---------------------------------------------------------------------------------------
# Replay text <-> event tuples


def to_lines(events: Iterable[Event]) -> list[str]:
    """Render event tuples as replay lines (the stdin format of `mop_replay`)."""
    lines = []
    for ev in events:
        op = ev[0]
        if op == "table":
            lines.append(f"table {ev[1]} {float(ev[2])!r}")
        elif op == "bins":
            lines.append("bins " + " ".join(str(e) for e in ev[1]))
        elif op == "end":
            query = len(ev) > 5 and ev[5]
            lines.append(f"end {ev[1]} {ev[2]} {ev[3]}" + (" cancelled" if ev[4] else "")
                         + (" query" if query else ""))
        else:
            lines.append(" ".join(str(x) for x in ev))
    return lines


def to_text(events: Iterable[Event]) -> str:
    return "\n".join(to_lines(events)) + "\n"


def parse_lines(text: str) -> list[Event]:
    """Parse replay text into event tuples (comments after '#' and blank lines ignored)."""
    events: list[Event] = []
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        op, args = words[0], words[1:]
        if op == "table":
            events.append(("table", int(args[0]), float(args[1])))
        elif op == "bins":
            events.append(("bins", tuple(int(a) for a in args)))
        elif op == "enter":
            events.append(("enter", int(args[0]), args[1]))
        elif op in ("exit", "finish"):
            events.append((op, int(args[0])))
        elif op in ("begin", "join"):
            events.append((op, int(args[0]), int(args[1]), int(args[2]), args[3], args[4]))
        elif op == "end":
            flags = args[3:]
            end: Event = ("end", int(args[0]), int(args[1]), int(args[2]), "cancelled" in flags)
            events.append((*end, True) if "query" in flags else end)
        elif op == "incall":
            events.append(("incall", int(args[0]), int(args[1]), args[2], args[3]))
        elif op == "pinit":
            events.append(("pinit", int(args[0]), int(args[1]), args[2], args[3]))
        elif op in ("start", "free", "pcontrol"):
            events.append((op, int(args[0]), int(args[1])))
        elif op in ("region_begin", "region_end"):
            events.append((op, int(args[0]), args[1]))
        else:
            raise ValueError(f"unknown replay line: {raw!r}")
    return events


# ---------------------------------------------------------------------------------------
# Transfer-time table and bins


class XferTable:
    """The a-priori table: interpolation inside, first value below, last slope above."""

    def __init__(self, points: Sequence[tuple[int, float]]) -> None:
        if not points:
            raise ValueError("the transfer-time table needs at least one point")
        self.points = sorted((int(b), float(s)) for b, s in points)
        self.extrapolated = 0

    def time(self, nbytes: int) -> float:
        pts = self.points
        if nbytes <= pts[0][0]:
            return pts[0][1]
        if nbytes > pts[-1][0]:
            self.extrapolated += 1
            if len(pts) == 1:
                return pts[0][1]
            (b0, s0), (b1, s1) = pts[-2], pts[-1]
            return s1 + (s1 - s0) * (nbytes - b1) / (b1 - b0)
        for (b0, s0), (b1, s1) in pairwise(pts):
            if nbytes == b1:
                return s1
            if b0 < nbytes < b1:
                return s0 + (s1 - s0) * (nbytes - b0) / (b1 - b0)
        raise AssertionError("unreachable")  # pragma: no cover


def bin_of(nbytes: int, edges: Sequence[int] | None) -> tuple[int, int | None]:
    """The (lo, hi) bin of a transfer of `nbytes`; hi None = unbounded."""
    if not edges:
        if nbytes <= 0:
            return 0, 1
        k = nbytes.bit_length() - 1
        return 1 << k, 1 << (k + 1)
    if nbytes < edges[0]:
        return 0, edges[0]
    for lo, hi in pairwise(edges):
        if lo <= nbytes < hi:
            return lo, hi
    return edges[-1], None


# ---------------------------------------------------------------------------------------
# Event processing


@dataclass
class _Active:
    key: int
    nbytes: int
    kind: str  # send / recv / null
    fn: str
    region: str
    t_begin: int
    call_seq: int | None  # outermost call it began in (None: outside any call)
    comp_at_begin: int  # computation clock (ns) at the begin event
    monitored: bool
    persistent: bool
    joined: bool = False  # ends with the request of the entry before it
    done: bool = False  # closed by a query; its handle is still outstanding


@dataclass
class _Acc:
    transfers: int = 0
    xfer: float = 0.0
    mn: float = 0.0
    mx: float = 0.0

    def add(self, xfer: float, mn: float, mx: float) -> None:
        self.transfers += 1
        self.xfer += xfer
        self.mn += mn
        self.mx += mx

    def fields(self) -> dict[str, Any]:
        return {"transfers": self.transfers, "xfer_s": self.xfer, "min_s": self.mn,
                "max_s": self.mx, "nonoverlap_s": self.xfer - self.mx}


@dataclass
class _FnAcc(_Acc):
    calls: int = 0
    call_ns: int = 0


@dataclass
class _RegionAcc(_Acc):
    comp_ns: int = 0
    call_ns: int = 0


@dataclass
class _Flagged:
    transfers: int = 0
    xfer: float = 0.0
    excess: float = 0.0

    def add(self, xfer: float, excess: float) -> None:
        self.transfers += 1
        self.xfer += xfer
        self.excess += excess

    def fields(self) -> dict[str, Any]:
        return {"transfers": self.transfers, "xfer_s": self.xfer, "excess_s": self.excess}


Bin = tuple[int, int | None]


@dataclass
class _Checks:
    """The checks on the bounds of one stream (see the module docstring)."""

    judged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHECKS, 0))
    judged_xfer: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CHECKS, 0.0))
    flagged: dict[str, _Flagged] = field(default_factory=lambda: {c: _Flagged() for c in CHECKS})
    by_fn: dict[tuple[str, str], _Flagged] = field(default_factory=dict)
    by_bin: dict[tuple[Bin, str], _Flagged] = field(default_factory=dict)
    calls: int = 0
    call_ns: int = 0
    longest: float = 0.0
    calls_beyond: int = 0
    beyond: float = 0.0
    unchecked: int = 0
    held: list[tuple[float, int, str, Bin]] = field(default_factory=list)

    def _flag(self, check: str, xfer: float, excess: float, fn: str, b: Bin) -> None:
        self.flagged[check].add(xfer, excess)
        self.by_fn.setdefault((fn, check), _Flagged()).add(xfer, excess)
        self.by_bin.setdefault((b, check), _Flagged()).add(xfer, excess)

    def across(self, xfer: float, span_ns: int, exceeds: bool, fn: str, b: Bin) -> None:
        self.judged[ACROSS] += 1
        self.judged_xfer[ACROSS] += xfer
        if exceeds:
            self._flag(ACROSS, xfer, max(0.0, xfer - span_ns * NS), fn, b)

    def call_done(self, t_enter: int, t_exit: int) -> int:
        """The outermost call [t_enter, t_exit] ended: judge what it held; how many flagged."""
        if not self.held:
            return 0
        span_ns = max(t_exit, *(t_end for _, t_end, _, _ in self.held)) - t_enter
        span = span_ns * NS
        longest = max(x for x, _, _, _ in self.held)
        self.calls += 1
        self.call_ns += span_ns
        self.longest += longest
        if longest > span:
            self.calls_beyond += 1
            self.beyond += longest - span
        flagged = 0
        for xfer, _, fn, b in self.held:
            self.judged[IN_CALL] += 1
            self.judged_xfer[IN_CALL] += xfer
            if xfer > span:
                self._flag(IN_CALL, xfer, xfer - span, fn, b)
                flagged += 1
        self.held = []
        return flagged

    def document(self) -> dict[str, Any]:
        def rows(cells: dict[Any, _Flagged], name: Callable[[Any], dict[str, Any]],
                 order: Callable[[Any], Any]) -> list[dict[str, Any]]:
            keys = sorted(cells, key=lambda k: (order(k[0]), CHECKS.index(k[1])))
            return [{**name(k[0]), "check": k[1], **cells[k].fields()} for k in keys]

        return {
            "in_call": {"transfers": self.judged[IN_CALL], "xfer_s": self.judged_xfer[IN_CALL],
                        "calls": self.calls, "call_s": self.call_ns * NS,
                        "longest_s": self.longest, "flagged": self.flagged[IN_CALL].fields(),
                        "calls_beyond": self.calls_beyond, "beyond_s": self.beyond,
                        "unchecked": self.unchecked + len(self.held)},
            "across_calls": {"transfers": self.judged[ACROSS],
                             "xfer_s": self.judged_xfer[ACROSS],
                             "flagged": self.flagged[ACROSS].fields()},
            "beyond_s": self.beyond + self.flagged[ACROSS].excess,
            "by_function": rows(self.by_fn, lambda fn: {"fn": fn}, lambda fn: fn),
            "by_bin": rows(self.by_bin, lambda b: {"lo": b[0], "hi": b[1]}, lambda b: b[0]),
        }


@dataclass
class Reference:
    """Consumes events one at a time; `document()` gives mop_replay's JSON structure."""

    table_points: list[tuple[int, float]] = field(default_factory=list)
    edges: tuple[int, ...] | None = None
    _table: XferTable | None = None
    depth: int = 0
    call_seq: int = 0
    call_fn: str | None = None
    call_enter: int = 0
    call_monitored: bool = True
    call_region: str = NO_REGION
    comp_clock: int = 0
    comp_mark: int | None = None  # start of the running computation interval
    monitoring: bool = True
    regions: list[str] = field(default_factory=list)
    # outstanding transfers by key, oldest first (a plain handle may be shared, see _begin)
    active: dict[int, list[_Active]] = field(default_factory=dict)
    persistent: dict[int, tuple[int, str, str]] = field(default_factory=dict)
    transfers: list[dict[str, Any]] = field(default_factory=list)
    counters: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(COUNTERS + EXTRA_COUNTERS, 0))
    total: _Acc = field(default_factory=_Acc)
    comp_ns: int = 0
    call_ns: int = 0
    cases: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CASES, 0))
    by_bin: dict[tuple[int, int | None], _Acc] = field(default_factory=dict)
    by_fn: dict[str, _FnAcc] = field(default_factory=dict)
    by_region: dict[str, _RegionAcc] = field(default_factory=dict)
    checks: _Checks = field(default_factory=_Checks)

    # -- helpers -----------------------------------------------------------------------

    @property
    def region(self) -> str:
        return self.regions[-1] if self.regions else NO_REGION

    def table(self) -> XferTable:
        if self._table is None:
            self._table = XferTable(self.table_points)
        return self._table

    def _fn(self, fn: str) -> _FnAcc:
        return self.by_fn.setdefault(fn, _FnAcc())

    def _reg(self, name: str) -> _RegionAcc:
        return self.by_region.setdefault(name, _RegionAcc())

    def _computation_until(self, t: int) -> None:
        """Close the running computation interval at t (it belongs to the current region)."""
        if self.comp_mark is None:
            return
        dt = t - self.comp_mark
        self.comp_clock += dt
        if self.monitoring:
            self.comp_ns += dt
            self._reg(self.region).comp_ns += dt
        self.comp_mark = t

    def _emit(self, key: int | None, nbytes: int, kind: str, fn: str, region: str, case: str,
              mn_of: Callable[[float], tuple[float, float]], monitored: bool,
              t_begin: int = 0, t_end: int = 0) -> None:
        """Record one transfer; `mn_of(xfer)` gives its (min, max) bounds; t_begin and t_end
        are its events (t_end alone for in-call transfers) for the checks on the bounds."""
        xfer = self.table().time(nbytes)
        if not monitored:
            self.counters["unmonitored_transfers"] += 1
            return
        clamped_before = self.counters["xfer_exceeds_span"]
        mn, mx = mn_of(xfer)
        b = bin_of(nbytes, self.edges)
        if case == ACROSS:
            self.checks.across(xfer, t_end - t_begin,
                               self.counters["xfer_exceeds_span"] > clamped_before, fn, b)
        elif case == IN_CALL and self.depth > 0:
            self.checks.held.append((xfer, t_end, fn, b))
        elif case == IN_CALL:
            self.checks.unchecked += 1
        self.transfers.append({"key": key, "bytes": nbytes, "kind": kind, "fn": fn,
                               "region": region, "case": case, "xfer_s": xfer,
                               "min_s": mn, "max_s": mx})
        self.cases[case] += 1
        self.total.add(xfer, mn, mx)
        lo, hi = bin_of(nbytes, self.edges)
        self.by_bin.setdefault((lo, hi), _Acc()).add(xfer, mn, mx)
        self._fn(fn).add(xfer, mn, mx)
        self._reg(region).add(xfer, mn, mx)

    def _close_begin_only(self, tr: _Active) -> None:
        if tr.kind in NO_DATA:
            return
        self._emit(tr.key, tr.nbytes, tr.kind, tr.fn, tr.region, BEGIN_ONLY,
                   lambda x: (0.0, x), tr.monitored)

    def _take(self, key: int) -> list[_Active]:
        """Remove and return the oldest outstanding request of `key` with its joined
        transfers (empty when none)."""
        queue = self.active.get(key)
        if not queue:
            return []
        group = [queue.pop(0)]
        while queue and queue[0].joined:
            group.append(queue.pop(0))
        if not queue:
            del self.active[key]
        return group

    def _begin(self, t: int, key: int, nbytes: int, kind: str, fn: str,
               persistent: bool = False, joined: bool = False) -> None:
        queue = self.active.get(key)
        if joined and queue:
            pass  # the second transfer of the request just begun: not a shared handle
        elif queue and (persistent or any(q.persistent for q in queue)):
            # a persistent request started again while active: the old one is lost
            live = [q for q in self.active.pop(key) if not q.done]
            if live:
                self.counters["handle_reused"] += 1
            for old in live:
                self._close_begin_only(old)
        elif queue:
            # a plain handle seen again while outstanding (MPICH hands one handle to several
            # pre-completed requests): kept side by side, completed oldest first
            self.counters["handle_shared"] += 1
        if kind == "null":
            self.counters["proc_null"] += 1
        self.active.setdefault(key, []).append(
            _Active(key, nbytes, kind, fn, self.region, t,
                    self.call_seq if self.depth > 0 else None, self.comp_clock,
                    self.monitoring, persistent, joined=joined and bool(queue)))

    # -- events ------------------------------------------------------------------------

    def feed(self, ev: Event) -> None:
        op = ev[0]
        handler = getattr(self, "_on_" + op, None)
        if handler is None:
            raise ValueError(f"unknown event {ev!r}")
        handler(*ev[1:])

    def _on_table(self, nbytes: int, seconds: float) -> None:
        self.table_points.append((int(nbytes), float(seconds)))
        self._table = None

    def _on_bins(self, edges: Sequence[int]) -> None:
        self.edges = tuple(sorted(int(e) for e in edges)) or None

    def _on_enter(self, t: int, fn: str) -> None:
        if self.depth > 0:
            self.depth += 1
            self.counters["nested_calls"] += 1
            return
        self._computation_until(t)
        self.comp_mark = None
        self.depth = 1
        self.call_seq += 1
        self.call_fn = fn
        self.call_enter = t
        self.call_monitored = self.monitoring
        self.call_region = self.region

    def _on_exit(self, t: int) -> None:
        if self.depth == 0:
            raise ValueError("exit without enter")
        self.depth -= 1
        if self.depth > 0:
            return
        self.counters["xfer_exceeds_call"] += self.checks.call_done(self.call_enter, t)
        if self.call_monitored:
            dt = t - self.call_enter
            assert self.call_fn is not None
            acc = self._fn(self.call_fn)
            acc.calls += 1
            acc.call_ns += dt
            self.call_ns += dt
            self._reg(self.call_region).call_ns += dt
        self.comp_mark = t

    def _on_region_begin(self, t: int, name: str) -> None:
        if self.depth == 0:
            self._computation_until(t)
        self.regions.append(name)

    def _on_region_end(self, t: int, name: str) -> None:
        if self.depth == 0:
            self._computation_until(t)
        if self.regions and self.regions[-1] == name:
            self.regions.pop()
            return
        self.counters["region_mismatch"] += 1
        if name in self.regions:
            idx = len(self.regions) - 1 - self.regions[::-1].index(name)
            del self.regions[idx:]

    def _on_pcontrol(self, t: int, level: int) -> None:
        self.monitoring = level >= 1

    def _on_begin(self, t: int, key: int, nbytes: int, kind: str, fn: str) -> None:
        self._begin(t, key, nbytes, kind, fn)

    def _on_join(self, t: int, key: int, nbytes: int, kind: str, fn: str) -> None:
        self._begin(t, key, nbytes, kind, fn, joined=True)

    def _on_incall(self, t: int, nbytes: int, kind: str, fn: str) -> None:
        self._emit(None, nbytes, kind, fn, self.region, IN_CALL, lambda x: (0.0, 0.0),
                   self.monitoring, t_end=t)

    def _on_end(self, t: int, key: int, nbytes: int, cancelled: bool = False,
                query: bool = False) -> None:
        queue = self.active.get(key)
        if query and queue:
            # the oldest request no query closed yet, with its joined transfers
            first = next((i for i, q in enumerate(queue) if not q.done and not q.joined), None)
            if first is None:
                return  # all seen complete already: nothing is closed twice
            group = [queue[first]]
            for q in queue[first + 1:]:
                if not q.joined:
                    break
                group.append(q)
            for tr in group:
                self._close(t, tr, nbytes, cancelled)
                tr.done = True
            return
        group = self._take(key)
        if not group:
            if key in self.persistent:
                self.counters["inactive_completions"] += 1
                return
            self._emit(key, max(nbytes, 0), "unknown", self.call_fn or "", self.region,
                       END_ONLY, lambda x: (0.0, x), self.monitoring)
            if query:  # remembered as done, so that its Wait does not count it again
                self.active[key] = [_Active(key, 0, "send", "", self.region, t, None, 0,
                                            self.monitoring, False, done=True)]
            return
        if group[0].done:
            return  # closed by a query before
        for tr in group:
            self._close(t, tr, nbytes, cancelled)

    def _close(self, t: int, tr: _Active, nbytes: int, cancelled: bool) -> None:
        """The end of one outstanding transfer at t."""
        key = tr.key
        if tr.kind == "greq":
            self.counters["grequest_completions"] += 1
            return
        if cancelled:
            self.counters["cancelled"] += 1
            return
        if tr.kind == "null":
            return
        final = nbytes if tr.kind == "recv" and nbytes >= 0 else tr.nbytes
        if tr.call_seq is not None and self.depth > 0 and tr.call_seq == self.call_seq:
            self._emit(key, final, tr.kind, tr.fn, tr.region, IN_CALL, lambda x: (0.0, 0.0),
                       tr.monitored, t_end=t)
            return
        comp = (self.comp_clock - tr.comp_at_begin) * NS
        noncomp = (t - tr.t_begin) * NS - comp

        def bounds(x: float) -> tuple[float, float]:
            mn, mx = max(0.0, x - noncomp), min(comp, x)
            if mn > mx:
                # x > span: the table's time does not fit between the events; the paper's
                # min would exceed its max. mop_replay clamps min to max and counts it.
                self.counters["xfer_exceeds_span"] += 1
                mn = mx
            return mn, mx

        self._emit(key, final, tr.kind, tr.fn, tr.region, ACROSS, bounds, tr.monitored,
                   t_begin=tr.t_begin, t_end=t)

    def _on_pinit(self, key: int, nbytes: int, kind: str, fn: str) -> None:
        self.persistent[key] = (nbytes, kind, fn)

    def _on_start(self, t: int, key: int) -> None:
        desc = self.persistent.get(key)
        if desc is None:
            self.counters["start_unknown"] += 1
            return
        self._begin(t, key, *desc, persistent=True)

    def _on_free(self, t: int, key: int) -> None:
        group = self._take(key)
        if group:
            for tr in group:
                if tr.done:
                    continue
                if tr.kind not in NO_DATA:  # like `unfinished`: no-data requests not counted
                    self.counters["freed_active"] += 1
                self._close_begin_only(tr)
            self.persistent.pop(key, None)
        elif self.persistent.pop(key, None) is None:
            self.counters["free_unknown"] += 1

    def _on_finish(self, t: int) -> None:
        self.checks.unchecked += len(self.checks.held)  # a call that never exits
        self.checks.held = []
        for key in sorted(self.active):
            for tr in self.active.pop(key):
                if tr.kind not in NO_DATA and not tr.done:
                    self.counters["unfinished"] += 1
                    self._close_begin_only(tr)

    # -- output ------------------------------------------------------------------------

    def profile(self) -> dict[str, Any]:
        self.counters["table_extrapolated"] = self._table.extrapolated if self._table else 0
        totals = self.total.fields()
        totals["comp_s"] = self.comp_ns * NS
        totals["call_s"] = self.call_ns * NS
        by_bin = [{"lo": lo, "hi": hi, **acc.fields()}
                  for (lo, hi), acc in sorted(self.by_bin.items(), key=lambda kv: kv[0][0])]
        by_function = []
        for fn in sorted(self.by_fn):
            acc = self.by_fn[fn]
            if acc.calls or acc.transfers:
                by_function.append({"fn": fn, "calls": acc.calls, "call_s": acc.call_ns * NS,
                                    **acc.fields()})
        by_region = []
        for name in sorted(self.by_region):
            racc = self.by_region[name]
            if racc.comp_ns or racc.call_ns or racc.transfers:
                by_region.append({"region": name, "comp_s": racc.comp_ns * NS,
                                  "call_s": racc.call_ns * NS, **racc.fields()})
        return {"totals": totals, "cases": dict(self.cases), "by_bin": by_bin,
                "by_function": by_function, "checks": self.checks.document(),
                "by_region": by_region, "counters": dict(self.counters)}

    def document(self) -> dict[str, Any]:
        return {"transfers": list(self.transfers), "profile": self.profile()}


def process(events: Iterable[Event]) -> dict[str, Any]:
    """Run a whole event stream through the reference; returns mop_replay's document."""
    ref = Reference()
    for ev in events:
        ref.feed(ev)
    return ref.document()


def process_text(text: str) -> dict[str, Any]:
    return process(parse_lines(text))
