"""`mpi-overlap export otf2 RUN_DIR [--out DIR]`: a traced profile run (`profile --trace`)
as an OTF2 archive (the format of Score-P, read by Vampir, Scalasca and `otf2-print`),
written with the `otf2` package; docs/profiler.md, "OTF2 export".

Definitions: a system tree of the machine and one node per host; per rank a location
group (MPI process) with one location per thread (thread 0, the one that called
MPI_Init, is the rank's location in MPI's location list); a region per MPI function
(paradigm MPI, role point-to-point or collective as the trace shows it used) and per
user region (the profiler's region API; paradigm user); a group and communicator per
intracommunicator the trace names. Events: otf2_records.py.

Metrics: one class of five members per location, all ACCUMULATED_START seconds (transfer
time, lower and upper overlap bound, non-overlapped time = transfer − upper bound,
waiting), a point where each transfer ends and where each waiting call leaves. Why
accumulated: Vampir draws such a counter as a curve whose slope is where the rank loses
time, and the difference of two points is what the profile would say about that window
(the curves end at the profile's per-rank totals); per-transfer point values would be
spikes that Vampir cannot sum over a selection.

Times: the profiler's ticks aligned to rank 0's timeline (RankTrace.seconds), written as
rank 0's own ticks: the timer resolution is rank 0's ticks per second (the TSC's rate, or
1 GHz for CLOCK_MONOTONIC), and the realtime of the first event comes from rank 0's clock
anchors (its profile's `clock.anchors`) when it has them.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from ...core.errors import UserError
from ...core.file_output import EXIT_IO_ERROR, WriteError
from ...core.formatting import count_of
from ..documents.rank_documents import RankDocumentStream
from .convert import notes_of
from .matched_run import read_matched
from .otf2_records import (
    Location,
    Op,
    RequestIds,
    Skipped,
    add_collectives,
    add_messages,
    add_transfer_metrics,
    add_wait_metric,
    locations_of,
)
from .reader import COMM_INTER, RankTrace
from .timeline import KIND_COLL, CollCall, Message, RankTimeline

ARCHIVE = "traces"  # traces.otf2, traces.def, traces/ (Score-P's names)
METRICS = (  # (name, description): the members of the overlap metric class
    ("transfer time", "a-priori transfer time of the transfers ended so far"),
    ("overlap lower bound", "transfer time certainly overlapped with computation"),
    ("overlap upper bound", "transfer time possibly overlapped with computation"),
    ("non-overlapped transfer time", "transfer time minus the upper overlap bound"),
    ("waiting", "time MPI calls waited for a late partner (late sender, late receiver, "
                "collective)"),
)
# OTF2's collective operations by the profiler's kind names; a non-blocking one (ibcast)
# is its blocking operation. Neighbourhood collectives have none.
COLL_OPS = ("barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather",
            "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce", "allreduce",
            "reduce_scatter", "reduce_scatter_block", "scan", "exscan")
ROLES = {"barrier": "BARRIER", "bcast": "COLL_ONE2ALL", "scatter": "COLL_ONE2ALL",
         "scatterv": "COLL_ONE2ALL", "gather": "COLL_ALL2ONE", "gatherv": "COLL_ALL2ONE",
         "reduce": "COLL_ALL2ONE"}  # every other collective: COLL_ALL2ALL or COLL_OTHER
OTHER_ROLE = ("scan", "exscan")


def _otf2() -> Any:
    try:
        import otf2
    except ImportError as err:
        raise UserError(f"the otf2 package is not installed ({err}): pip install otf2 (a "
                        "wheel on CPython 3.10-3.11 x86-64, built from source elsewhere)") \
            from None
    return otf2


def coll_name(kind_name: str) -> str | None:
    """The blocking collective a kind name stands for, None when OTF2 has no operation."""
    if kind_name in COLL_OPS:
        return kind_name
    if kind_name.startswith("i") and kind_name[1:] in COLL_OPS:
        return kind_name[1:]
    return None


@dataclass
class Exported:
    out: Path
    ranks: int = 0
    locations: int = 0
    events: int = 0
    sends: int = 0
    receives: int = 0
    collectives: int = 0
    metric_points: int = 0
    matched: int = 0
    unmatched_sends: int = 0
    unmatched_receives: int = 0
    seconds: float = 0.0
    clock_raised: int = 0  # events whose ticks ran back on their thread (raised)
    unpaired: int = 0  # EXITs and region ends without their opening event (dropped)
    skipped: Skipped = field(default_factory=Skipped)
    notes: list[str] = field(default_factory=list)


def _hosts_and_anchor(run_dir: Path) -> tuple[dict[int, str], tuple[int, float] | None]:
    """Each rank's host, and rank 0's first clock anchor (ticks, realtime seconds), from
    the rank profiles wherever the library left them (the job file or the per-rank files;
    RankDocumentStream); what a profile does not say, or one that cannot be read, is left
    out."""
    hosts: dict[int, str] = {}
    anchor = None
    for rank, doc, _source in RankDocumentStream(run_dir):
        if isinstance(doc.get("host"), str):
            hosts[rank] = doc["host"]
        anchors = (doc.get("clock") or {}).get("anchors") if rank == 0 else None
        if anchors and isinstance(anchors[0], dict):
            a = anchors[0]
            if isinstance(a.get("ticks"), int) and isinstance(a.get("realtime_s"), float):
                anchor = (a["ticks"], a["realtime_s"])
    return hosts, anchor


class _Archive:
    """The definitions of one archive, made with the otf2 package's registry."""

    def __init__(self, otf2: Any, writer: Any, traces: list[RankTrace],
                 hosts: dict[int, str], roles: dict[str, str], res: int) -> None:
        self.otf2, self.w = otf2, writer
        self.roles = roles  # MPI function -> OTF2 region role
        # timestamps are rank 0's ticks: sync0 + aligned seconds × res (when rank 0 has no
        # trace, the first traced rank's rate and origin)
        self.sync0 = traces[0].sync_ticks
        self.res = res  # the writer's timer resolution
        defs = writer.definitions
        self.size = max(t.size for t in traces)
        root = defs.system_tree_node("machine", class_name="machine")
        nodes: dict[str, Any] = {}
        self.groups: dict[int, Any] = {}
        for rank in range(self.size):
            host = hosts.get(rank, "unknown host")
            if host not in nodes:
                nodes[host] = defs.system_tree_node(host, class_name="node", parent=root)
            self.groups[rank] = defs.location_group(
                f"MPI Rank {rank}", location_group_type=otf2.LocationGroupType.PROCESS,
                system_tree_parent=nodes[host])
        self.locations: dict[tuple[int, int], Any] = {}
        # every rank has its thread 0 location, also one that left no trace (MPI's list
        # needs all of them); other threads as the traces have them
        for rank in range(self.size):
            self.location(rank, 0)
        for tr in traces:
            for thread in tr.threads:
                self.location(tr.rank, thread)
        self.mpi_locations = defs.group(
            "MPI_COMM_WORLD locations", group_type=otf2.GroupType.COMM_LOCATIONS,
            paradigm=otf2.Paradigm.MPI,
            members=[self.locations[(r, 0)] for r in range(self.size)])
        self.regions: dict[tuple[str, bool], Any] = {}
        self.comms: dict[int, Any] = {}
        self.comm_ranks: dict[int, dict[int, int]] = {}  # id -> world rank -> comm rank
        self.metric = defs.metric_class(
            [defs.metric_member(name, description=desc, metric_type=otf2.MetricType.OTHER,
                                metric_mode=otf2.MetricMode.ACCUMULATED_START,
                                value_type=otf2.Type.DOUBLE, unit="s")
             for name, desc in METRICS],
            occurrence=otf2.MetricOccurrence.ASYNCHRONOUS,
            recorder_kind=otf2.RecorderKind.ABSTRACT)

    def location(self, rank: int, thread: int) -> Any:
        loc = self.locations.get((rank, thread))
        if loc is None:
            name = f"MPI Rank {rank}" + (f" thread {thread}" if thread else "")
            loc = self.w.definitions.location(
                name, type=self.otf2.LocationType.CPU_THREAD, group=self.groups[rank])
            self.locations[(rank, thread)] = loc
        return loc

    def define_comms(self, traces: list[RankTrace]) -> set[int]:
        """A group and communicator per intracommunicator any rank named; returns the
        intercommunicators' ids (left out: OTF2's InterComm is not written here)."""
        otf2, defs = self.otf2, self.w.definitions
        inter: set[int] = set()
        world = tuple(range(self.size))
        n = 0
        for tr in traces:
            for ident, comm in tr.comms.items():
                if ident in self.comms or ident in inter:
                    continue
                if comm.flags & COMM_INTER or comm.remote:
                    inter.add(ident)
                    continue
                if not comm.local or min(comm.local) < 0 or max(comm.local) >= self.size:
                    continue
                # the profiler names MPI_COMM_WORLD first (mop_match_start)
                is_world = comm.local == world and not self.comms
                name = "MPI_COMM_WORLD" if is_world else f"MPI_Comm {n}"
                n += 1
                group = defs.group(f"{name} group", group_type=otf2.GroupType.COMM_GROUP,
                                   paradigm=otf2.Paradigm.MPI, members=list(comm.local))
                self.comms[ident] = defs.comm(name, group=group)
                self.comm_ranks[ident] = {w: i for i, w in enumerate(comm.local)}
        return inter

    def region(self, name: str, user: bool, role: str) -> Any:
        r = self.regions.get((name, user))
        if r is None:
            otf2 = self.otf2
            r = self.w.definitions.region(
                name, canonical_name=name,
                region_role=getattr(otf2.RegionRole, role),
                paradigm=otf2.Paradigm.USER if user else otf2.Paradigm.MPI)
            self.regions[(name, user)] = r
        return r


def _roles(timelines: list[RankTimeline]) -> dict[str, str]:
    """Each MPI function's OTF2 region role, from what the traces show it doing."""
    roles: dict[str, str] = {}
    for tl in timelines:
        tr = tl.trace
        for m in tl.messages:
            roles.setdefault(tr.fn(m.fn), "POINT2POINT")
            if m.done_fn >= 0:
                roles.setdefault(tr.fn(m.done_fn), "POINT2POINT")
        for c in tl.collectives:
            op = coll_name(tr.kind(c.kind)) or ""
            roles[tr.fn(c.fn)] = ROLES.get(op, "COLL_OTHER" if op in OTHER_ROLE or not op
                                           else "COLL_ALL2ALL")
    return roles


def _place_waits(timelines: list[RankTimeline], locs: dict[tuple[int, int], Location],
                 matched: Any) -> None:
    """A waiting metric point at the leave of every call that waited (profile/analysis/waits.py).
    A wait names its call by rank and aligned enter seconds, found again here with the
    same conversion (Clocks.s) over the rank's outermost calls."""
    from ..analysis.trace_clocks import Clocks
    from ..analysis.waits import call_waits

    clocks = Clocks(timelines)
    waits, _ = call_waits(clocks, matched)
    by_enter: dict[tuple[int, float], tuple[Location, int]] = {}
    for (rank, _thread), loc in locs.items():
        for i, t in enumerate(loc.enter):
            by_enter[(rank, clocks.s(rank, t))] = (loc, i)
    for w in waits:
        found = by_enter.get((w.rank, w.enter_s))
        if found is not None:
            add_wait_metric(found[0], found[1], w.seconds)


def _write_location(arch: _Archive, tr: RankTrace, loc: Location) -> tuple[int, int]:
    """Writes one location's records; returns (events written, metric points)."""
    otf2, w = arch.otf2, arch.w
    order = loc.order()
    if not len(order):
        return 0, 0
    ticks = np.asarray(loc.ticks, dtype=np.uint64)[order]
    seconds = np.asarray(tr.seconds(ticks), dtype=np.float64)
    stamps = (arch.sync0 + np.round(seconds * arch.res)).astype(np.int64).tolist()
    writer = w.event_writer_from_location(arch.location(tr.rank, loc.thread))
    undefined_root = otf2.Undefined.UINT32
    sums = [0.0] * 5
    metrics = 0
    ops, args = loc.ops, loc.args
    # a zero point at the location's start, so every curve starts from 0
    writer.metric(stamps[0], arch.metric, list(sums))
    for k, idx in enumerate(order.tolist()):
        t, op, a = stamps[k], ops[idx], args[idx]
        if op == Op.ENTER or op == Op.LEAVE:
            user = bool(a[1])
            region = arch.region(str(a[0]), user, "CODE" if user else
                                 arch.roles.get(str(a[0]), "FUNCTION"))
            (writer.enter if op == Op.ENTER else writer.leave)(t, region)
        elif op == Op.METRIC:
            x, lo, hi, wait = cast(tuple[float, float, float, float], a)
            sums[0] += x
            sums[1] += lo
            sums[2] += hi
            sums[3] += x - hi
            sums[4] += wait
            writer.metric(t, arch.metric, list(sums))
            metrics += 1
        elif op in (Op.COLL_BEGIN, Op.COLL_END):
            if op == Op.COLL_BEGIN:
                writer.mpi_collective_begin(t)
                continue
            c = cast(CollCall, a[0])
            name = coll_name(tr.kind(c.kind)) or ""
            root = c.root if c.root >= 0 else undefined_root
            # the size the profiler records for the call (what its transfer time is
            # looked up by), as both sent and received: it has no per-member totals
            size = max(int(c.bytes), 0)
            writer.mpi_collective_end(t, getattr(otf2.CollectiveOp, name.upper()),
                                      arch.comms[c.comm], root, size, size)
        else:
            m = cast(Message, a[0])
            comm = arch.comms[m.comm]
            # OTF2 names the peer by its rank in the communicator (the trace: world rank)
            peer = arch.comm_ranks[m.comm][m.peer]
            size = max(int(m.bytes), 0)  # a receive's: what its completion reported
            rid = cast(int, a[1]) if len(a) > 1 else 0
            if op == Op.SEND:
                writer.mpi_send(t, peer, comm, m.tag, size)
            elif op == Op.ISEND:
                writer.mpi_isend(t, peer, comm, m.tag, size, rid)
            elif op == Op.ISEND_DONE:
                writer.mpi_isend_complete(t, rid)
            elif op == Op.IRECV_REQUEST:
                writer.mpi_irecv_request(t, rid)
            elif op == Op.RECV:
                writer.mpi_recv(t, peer, comm, m.tag, size)
            elif op == Op.IRECV:
                writer.mpi_irecv(t, peer, comm, m.tag, size, rid)
    return len(order) + 1, metrics + 1


def _prepare_out(run_dir: Path, out: Path | None) -> tuple[Path, Path]:
    """The archive's directory and the temporary one it is written in first (beside it,
    renamed once complete: a failed export never leaves half an archive)."""
    target = out if out is not None else run_dir / "otf2"
    if target.exists() and not (target / f"{ARCHIVE}.otf2").is_file() and (
            not target.is_dir() or any(target.iterdir())):
        raise UserError(f"{target} exists and is not an OTF2 archive directory: name a new "
                        "or empty directory with --out")
    if not target.parent.is_dir():
        raise UserError(f"cannot write {target}: {target.parent} is not a directory")
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    return target, tmp


def _write(otf2: Any, tmp: Path, run_name: str, timelines: list[RankTimeline],
           matched: Any, locs: dict[tuple[int, int], Location], hosts: dict[int, str],
           anchor: tuple[int, float] | None, result: Exported) -> None:
    """The archive in directory `tmp`; counts what went in into `result`."""
    traces = [tl.trace for tl in timelines]
    tr0 = traces[0]
    res = max(1, round(1.0 / tr0.s_per_tick))  # rank 0's ticks per second
    w = otf2.writer.Writer(str(tmp), archive_name=ARCHIVE, timer_resolution=res)
    try:
        w.creator = "mpi-overlap export otf2"
        w.description = f"mpi-overlap profile --trace of {run_name}"
        arch = _Archive(otf2, w, traces, hosts, _roles(timelines), res)
        inter = arch.define_comms(traces)
        writable = set(arch.comms)
        ops = {k for tr in traces for k, name in tr.kind_names.items()
               if k >= KIND_COLL and coll_name(name)}
        for tl in timelines:
            ids = RequestIds()
            for thread in tl.trace.threads:
                loc = locs[(tl.rank, thread)]
                s, r = add_messages(loc, [m for m in tl.messages if m.thread == thread],
                                    arch.comm_ranks, inter, result.skipped, ids)
                result.sends += s
                result.receives += r
                result.collectives += add_collectives(
                    loc, [c for c in tl.collectives if c.thread == thread], writable, inter,
                    ops, result.skipped)
                add_transfer_metrics(loc, tl.trace)
        _place_waits(timelines, locs, matched)
        by_rank = {t.rank: t for t in traces}
        for (rank, _thread), loc in sorted(locs.items()):
            ev, mp = _write_location(arch, by_rank[rank], loc)
            result.events += ev
            result.metric_points += mp
        result.locations = len(arch.locations)
        if anchor is not None and tr0.rank == 0 and w._first_timestamp is not None:
            # The writer would stamp the export's own time; the run's is rank 0's anchor
            # moved to the first event (a private attribute of otf2 3.2's Writer, read
            # when it closes).
            first_s = (w._first_timestamp - arch.sync0) / res
            w._realtime_timestamp = anchor[1] + first_s - float(tr0.seconds(anchor[0]))
        w.close()
    finally:
        # closed, or given up after an error: otf2's __del__ would close it again, fail,
        # and print a traceback
        w._handle = None


def export_otf2(run_dir: Path, out: Path | None = None) -> Exported:
    """Writes the run's traces as an OTF2 archive in `out` (default <run_dir>/otf2)."""
    started = time.perf_counter()
    run = read_matched(run_dir, why=" (OTF2's messages need them)")
    traces, timelines, matched = run.traces, run.timelines, run.matched
    otf2 = _otf2()
    target, tmp = _prepare_out(run_dir, out)
    hosts, anchor = _hosts_and_anchor(run_dir)
    result = Exported(out=target, ranks=len(traces), matched=len(matched.pairs),
                      unmatched_sends=matched.unmatched_sends,
                      unmatched_receives=matched.unmatched_recvs, notes=notes_of(traces))
    locs: dict[tuple[int, int], Location] = {}
    for tl in timelines:
        for thread, loc in locations_of(tl).items():
            locs[(tl.rank, thread)] = loc
            result.clock_raised += loc.clock_raised
            result.unpaired += loc.unpaired
    try:
        _write(otf2, tmp, run_dir.name, timelines, matched, locs, hosts, anchor, result)
        if (target / f"{ARCHIVE}.otf2").is_file():
            shutil.rmtree(target)
        elif target.is_dir():
            target.rmdir()
        tmp.rename(target)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)  # never half an archive
        if isinstance(err, OSError):
            raise WriteError(target, err) from None
        if isinstance(err, otf2.error.Error) or type(err).__module__.startswith("_otf2"):
            # the OTF2 library's own failure (a full disk, say): it printed its details
            first = (str(err).splitlines() or [type(err).__name__])[0]
            raise UserError(f"cannot write {target}: OTF2: {first} (the library's lines "
                            "above say why)", EXIT_IO_ERROR) from None
        raise
    result.seconds = time.perf_counter() - started
    return result


def describe(e: Exported) -> list[str]:
    counts = ", ".join(count_of(n, what) for n, what in (
        (e.locations, "location"), (e.events, "event"), (e.sends, "send"),
        (e.receives, "receive"), (e.collectives, "collective"),
        (e.metric_points, "metric point")))
    lines = [f"wrote {e.out / (ARCHIVE + '.otf2')}: {counts} ({e.seconds:.2f} s); open it "
             "in Vampir, or otf2-print it"]
    s = e.skipped
    left = [(s.unnamed, "messages or collectives without a communicator, tag or peer"),
            (s.inter, "on intercommunicators"),
            (s.no_op, "neighbourhood collectives (OTF2 has no operation for them)"),
            (s.uncompleted, "requests whose completion another thread saw or none did"),
            (s.outside_calls, "records outside their thread's calls"),
            (e.unpaired, "call or region ends without their start")]
    lines += [f"note: left out: {n} {what}" for n, what in left if n]
    if e.clock_raised:
        lines.append(f"note: {e.clock_raised} events ran back in time on their thread and "
                     "were moved to the event before them")
    if e.unmatched_sends or e.unmatched_receives:
        lines.append(f"note: {e.unmatched_sends} sends and {e.unmatched_receives} receives "
                     "have no partner in the traces")
    lines += [f"note: {n}" for n in e.notes]
    return lines


def export_lines(run_dir: Path) -> list[str]:
    """`profile --trace --otf2`: the archive in the run directory, and what to say of it."""
    return describe(export_otf2(run_dir))
