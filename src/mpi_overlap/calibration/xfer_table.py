"""The transfer-time table: one-way time of a message per size, measured a priori.

The overlap profiler needs, for every transfer it sees, how long the transfer would take
on its own (xfer_time). `mpi-overlap calibrate` measures it with `mo_pingpong` (point to
point) and `mo_collectives` (each collective, per communicator size) and writes this
table; the profiler library loads it at MPI_Init, so the format is plain text that C
parses with a few `sscanf`s:

    mpi-overlap-xfer-table 4
    created 2026-01-01T00:00:00Z
    machine <machine_fp> <machine_key>
    toolchain <toolchain_fp> <toolchain_key>
    toolchain_name <name>
    ranks <n> nodes <m>
    verdict <ok|noisy|suspect|unverified> <reason, to the end of the line>
    load <what else ran on the machine>      (only when the machine was busy)
    source <run directory>                    (one per ping-pong run the times come from)
    # class bytes seconds verdict estimate_s spread undisturbed samples lo_s hi_s
    intra 0 2.875e-07 ok 2.9e-07 0.04 812 900 2.85e-07 2.95e-07
    ...
    inter 0 1.2e-06 ok ...   (only when the job spanned several nodes)
    # parts class bytes protocol o_s lo hi o_r lo hi g lo hi
    parts intra 0 eager 2.6e-07 2.5e-07 2.7e-07 1.2e-07 1.1e-07 1.3e-07 7e-07 6.9e-07 7.2e-07
    ...
    # eager_limit class bytes (none: no size was eager)
    eager_limit intra 16384
    # stream class bytes window seconds_per_message lo hi undisturbed samples
    stream intra 65536 32 1.1e-05 1.0e-05 1.2e-05 5 5
    # unmeasured class bytes undisturbed samples
    unmeasured intra 67108864 0 4
    # coll op comm_size bytes seconds
    coll bcast 2 0 1.1e-07
    coll ibcast 2 1024 3.1e-06
    ...
    end

`seconds` is the value the profiler uses: the monotone fit of the estimates
(xfer_quality.py); `estimate_s` the size's own estimate (lower quartile of its undisturbed
samples), `spread` their relative interquartile range, then how many samples were
undisturbed of how many taken, the size's verdict and the 95 % interval of its estimate
(version 4). The `parts` lines (version 4) are the transfer model's parts per size
(xfer_parts.py): the sender's overhead, the receiver's, the gap, each with its interval,
and whether the size moved eagerly; `eager_limit` the largest size up to which every
size with parts was eager. A `stream` line (version 4, where mo_pingpong timed one;
xfer_stream.py) is a class's time per message of a window of messages kept back to
back, its interval, and how many windows were undisturbed of how many: the pace of a
link kept busy, which the ping-pong's sizes can miss (the replay's G, predict/model.py;
the profiler's C reader skips the line). Sizes with too few undisturbed
samples are not points: they are listed as `unmeasured` (lookups there interpolate or,
above the last point, extrapolate, which the profiler counts). The `verdict` line is the
table's: the profiler and `mpi-overlap profile` refuse a `suspect` table unless forced.
`end` closes the table, so that a file cut short is refused rather than read in part.

Keys are the rest of their line after the fingerprint (they contain spaces, never a
newline). Points of a class, and of a collective series, are in increasing byte order.
A collective series is keyed by op (the names of native/profiler/mop_coll_ops.h, prefixed
"i" for the non-blocking op) and communicator size; its bytes are the per-process block
(docs/method.md). Versions 1 (no `coll` lines) and 2 (no verdict, no `end`) are still
read, as *unverified* tables; version 3 (no intervals, no parts) as it is. Lines starting
with `#` and blank lines are ignored. A table
is valid only for the machine and MPI library it was measured with: `check_fits` compares
fingerprints (16 hex digits of FNV-1a 64 of the keys, see native/common/fingerprint.h).
A table's *content hash* is FNV-1a 64 of the file's bytes (what every profile records).

Lookup between points is linear in bytes; below the first point it is the first point's
time; above the last it continues the last segment's slope (never a negative one: a
message does not get faster by growing).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..core.machine_load import describe
from ..core.paths import state_dir
from ..run.rundir import utc_now, write_text_atomic
from .xfer_parts import EAGER, RENDEZVOUS, Part, SizeParts, eager_limit, parts_from_pingpong
from .xfer_quality import UNMEASURED, UNVERIFIED, VERDICTS, SizeQuality, judge, judge_table, worst
from .xfer_stream import Stream, streams_from_pingpong

MAGIC = "mpi-overlap-xfer-table"
VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)
TABLE_VERDICTS = (*VERDICTS, UNVERIFIED)
CLASSES = ("intra", "inter")
# The collective ops of native/profiler/mop_coll_ops.h, in its order (a test keeps the two
# equal); the non-blocking op is "i" + name.
BLOCKING_COLL_OPS = (
    "barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce", "allreduce", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan", "neighbor_allgather", "neighbor_allgatherv",
    "neighbor_alltoall", "neighbor_alltoallv", "neighbor_alltoallw",
)
COLL_OPS = BLOCKING_COLL_OPS + tuple("i" + op for op in BLOCKING_COLL_OPS)

CollKey = tuple[str, int]  # (op, communicator size)

# How a collective's time grows with the communicator size p, for sizes without a series
# of their own (docs/method.md, "Collective transfer times"; mop_coll_growth_of in
# mop_xfer_table.c): ops that move p per-process blocks grow linearly in p, trees and
# recursive doubling like log2 p; neighbourhood collectives follow their topology's
# degree, not p (None: the nearest calibrated size).
LINEAR_COLL_OPS = frozenset({
    "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
    "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block"})


def blocking_op(op: str) -> str | None:
    """The blocking op of a non-blocking one ("ibcast" -> "bcast"), else None."""
    return op[1:] if op.startswith("i") and op[1:] in BLOCKING_COLL_OPS else None


def coll_growth(op: str) -> Callable[[float], float] | None:
    """x(p) of the op's size model: p, log2 p, or None (no model)."""
    base = blocking_op(op) or op
    if base.startswith("neighbor_"):
        return None
    return float if base in LINEAR_COLL_OPS else math.log2

Points = list[tuple[int, float]]
OVERRIDE_HINT = "--table PATH --force-table"
OLD_FORMAT_REASON = "format version {v} has no quality verdict (made by an older mpi-overlap)"

_FP = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class PointQuality:
    """What the table says about one of its points (format version 3)."""

    verdict: str
    estimate_s: float
    spread: float
    undisturbed: int
    samples: int
    # the estimate's 95 % interval (xfer_quality.quantile_interval); None where not known
    # (a table read from a file that does not carry it)
    lo_s: float | None = None
    hi_s: float | None = None


@dataclass
class XferTable:
    """A loaded table. `points[cls]` is a list of (bytes, seconds), bytes increasing;
    `quality[(cls, bytes)]` what the table says about each point (version 3),
    `unmeasured[cls]` the sizes tried without enough undisturbed samples as (bytes,
    undisturbed, samples)."""

    machine_fp: str
    machine_key: str
    toolchain_fp: str
    toolchain_key: str
    toolchain_name: str
    ranks: int
    nodes: int
    created: str
    points: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    version: int = VERSION
    path: Path | None = None
    coll: dict[CollKey, Points] = field(default_factory=dict)
    verdict: str = UNVERIFIED
    verdict_reason: str = "made in memory, without a quality verdict"
    quality: dict[tuple[str, int], PointQuality] = field(default_factory=dict)
    unmeasured: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    load: str | None = None
    sources: list[str] = field(default_factory=list)
    content_hash: str | None = None  # of the file it was read from
    # the transfer model's parts per (class, bytes) (version 4; xfer_parts.py)
    parts: dict[tuple[str, int], SizeParts] = field(default_factory=dict)
    # per class, the largest size up to which every size with parts was eager (None:
    # none was); a class missing here has no parts
    eager_limits: dict[str, int | None] = field(default_factory=dict)
    # per class, the time per message of a stream (version 4, where measured; xfer_stream.py)
    streams: dict[str, Stream] = field(default_factory=dict)
    # per class, (o_s curve, o_r curve) of the sizes with parts: eager_parts runs once per
    # message of a trace, so they are made once (not a field of the file: not compared)
    _parts_curves: dict[str, tuple[Points, Points]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    @property
    def classes(self) -> list[str]:
        return [c for c in CLASSES if self.points.get(c)]

    @property
    def coll_sizes(self) -> list[int]:
        """Communicator sizes that have collective series, ascending."""
        return sorted({n for _, n in self.coll})

    def has_coll(self, comm_size: int) -> bool:
        return comm_size in self.coll_sizes

    def with_coll(self, series: dict[CollKey, Points]) -> XferTable:
        """A copy whose series for the communicator sizes in `series` are those (the old
        ones of those sizes dropped, all others kept)."""
        sizes = {n for _, n in series}
        if min(sizes, default=1) < 1:  # the file reader refuses them too; log2 needs p >= 1
            raise ValueError(f"communicator sizes must be at least 1 (got {min(sizes)})")
        coll = {k: v for k, v in self.coll.items() if k[1] not in sizes}
        coll.update({k: sorted(v) for k, v in series.items() if v})
        return replace(self, coll=coll, version=VERSION)

    def coll_note(self, comm_size: int) -> str | None:
        """What the table says of its collective series for `comm_size` ranks (a time
        budget cut them), or None."""
        prefix = _coll_note_prefix(comm_size)
        return next((x[len(prefix):] for x in self.sources if x.startswith(prefix)), None)

    def with_coll_note(self, comm_size: int, note: str | None) -> XferTable:
        """A copy whose note on the series for `comm_size` ranks is `note` (a source line;
        None: no note, as after a complete calibration)."""
        prefix = _coll_note_prefix(comm_size)
        kept = [x for x in self.sources if not x.startswith(prefix)]
        return replace(self, sources=kept + ([_one_line("a note", prefix + note)] if note else []))

    def with_classes_of(self, old: XferTable) -> XferTable:
        """A copy that also holds the classes `old` has and this one did not measure at
        all, with their parts, streams and eager limits (a calibration on two nodes with one
        rank each measures inter only; the intra class of the one-node calibration stays).
        The verdict is the worse of the two and the reason says which class came from
        where."""
        measured = set(self.points) | set(self.unmeasured)
        kept = [c for c in CLASSES
                if c not in measured and (c in old.points or c in old.unmeasured)]
        if not kept:
            return self
        names = "/".join(kept)
        # the old reason is left out: kept again and again it would nest
        reason = (f"{'/'.join(c for c in CLASSES if c in measured)}: {self.verdict_reason}; "
                  f"{names} kept from the table of {old.created} (verdict {old.verdict})")
        def kept_of(new: dict[Any, Any], was: dict[Any, Any]) -> dict[Any, Any]:
            """`new` with `was`'s entries of the kept classes (keyed by class, or by
            (class, bytes))."""
            return {**{k: v for k, v in was.items()
                       if (k[0] if isinstance(k, tuple) else k) in kept}, **new}

        return replace(
            self,
            points=kept_of(self.points, old.points),
            quality=kept_of(self.quality, old.quality),
            unmeasured=kept_of(self.unmeasured, old.unmeasured),
            streams=kept_of(self.streams, old.streams),
            # the kept class's transfer model (eager or rendezvous by size) goes with it
            parts=kept_of(self.parts, old.parts),
            eager_limits=kept_of(self.eager_limits, old.eager_limits),
            verdict=worst([self.verdict, old.verdict]),
            verdict_reason=_one_line("the verdict", reason),
            nodes=max(self.nodes, old.nodes),
            sources=[*self.sources, *(s for s in old.sources if s not in self.sources)])

    def lookup_coll(self, op: str, comm_size: int, nbytes: int) -> tuple[float, list[str]]:
        """xfer_time of a collective as the profiler computes it (mop_xfer_table.c) and the
        names of the counters its fallbacks raise."""
        flags: list[str] = []
        blocking = blocking_op(op)
        if blocking and not self.coll_sizes_of(op) and self.coll_sizes_of(blocking):
            op = blocking
            flags.append("coll_nb_as_blocking")
        sizes = self.coll_sizes_of(op)
        if not sizes:
            flags.append("coll_uncalibrated")
            # the intra class, or inter where the table has only that (mop_xfer_table_lookup)
            secs, extrapolated = _curve(self.points.get("intra") or self.points.get("inter")
                                        or [], nbytes)
        elif comm_size in sizes:
            secs, extrapolated = _curve(self.coll[(op, comm_size)], nbytes)
        else:
            flags.append("coll_size_extrapolated")
            secs, extrapolated = self._size_model(op, sizes, comm_size, nbytes)
        if extrapolated:
            flags.append("table_extrapolated")
        return secs, flags

    def coll_sizes_of(self, op: str) -> list[int]:
        """The communicator sizes the op has a series for, ascending."""
        return sorted(n for o, n in self.coll if o == op and self.coll[(o, n)])

    def _size_model(self, op: str, sizes: list[int], comm_size: int,
                     nbytes: int) -> tuple[float, bool]:
        """The op's time on a communicator size without a series of its own, from its
        other sizes, as mop_coll_size_model does; and whether a curve was extrapolated."""
        growth = coll_growth(op)
        below = [n for n in sizes if n < comm_size]
        above = [n for n in sizes if n > comm_size]
        between = bool(below and above)
        pair = below[-1:] + above[:1] if between else below[-2:] if below else above[:2]
        if growth is None or len(pair) < 2 or comm_size < 1:  # < 1: no x of a real size
            nearest = min(sizes, key=lambda n: (abs(n - comm_size), -n))
            return _curve(self.coll[(op, nearest)], nbytes)
        a, b = pair
        ta, ex_a = _curve(self.coll[(op, a)], nbytes)
        tb, ex_b = _curve(self.coll[(op, b)], nbytes)
        xa, xb, x = growth(a), growth(b), growth(comm_size)
        slope = (tb - ta) / (xb - xa)
        if between:
            return ta + slope * (x - xa), ex_a or ex_b
        slope = max(slope, 0.0)
        secs = tb + slope * (x - xb) if x > xb else ta - slope * (xa - x)
        return max(secs, 0.0), ex_a or ex_b

    def eager_parts(self, cls: str, nbytes: int, xfer_s: float) -> tuple[float, float] | None:
        """(o_s, o_r) of a message of `nbytes` in `cls` that moves eagerly, each
        interpolated between the sizes with parts and not above `xfer_s`; None where the
        class has no parts or the size is above its eager limit (mop_xfer_table_eager)."""
        if not self.points.get(cls):  # a class the table lacks is priced with the other
            cls = "inter" if cls == "intra" else "intra"
        limit = self.eager_limits.get(cls)
        if limit is None or nbytes > limit:
            return None
        if cls not in self._parts_curves:
            pts = sorted((b, p) for (c, b), p in self.parts.items() if c == cls)
            self._parts_curves[cls] = ([(b, p.o_s.value_s) for b, p in pts],
                                       [(b, p.o_r.value_s) for b, p in pts])
        os_curve, or_curve = self._parts_curves[cls]
        if not os_curve:
            return None
        return (min(interpolate(os_curve, nbytes), xfer_s),
                min(interpolate(or_curve, nbytes), xfer_s))

    def lookup(self, nbytes: int, cls: str = "intra") -> float:
        """One-way seconds of an `nbytes` message between ranks of class `cls`."""
        pts = self.points.get(cls)
        if not pts:
            where = f" {self.path}" if self.path else ""
            raise UserError(f"transfer-time table{where} has no {cls}-node points "
                            f"(it has: {', '.join(self.classes) or 'none'})")
        return interpolate(pts, nbytes)


def _curve(points: list[tuple[int, float]], nbytes: int) -> tuple[float, bool]:
    """A curve's time at nbytes and whether that is beyond its last point, as
    mop_curve_lookup returns them (0 for a curve without points)."""
    if not points:
        return 0.0, False
    return interpolate(points, nbytes), nbytes > points[-1][0]


def interpolate(points: list[tuple[int, float]], nbytes: float) -> float:
    """Linear in bytes between points; first time below; last segment's slope above."""
    if nbytes < 0:
        raise ValueError(f"message size must not be negative (got {nbytes})")
    xs = [b for b, _ in points]
    if nbytes <= xs[0]:
        return points[0][1]
    if nbytes >= xs[-1]:
        if len(points) < 2:
            return points[-1][1]
        (b0, t0), (b1, t1) = points[-2], points[-1]
        slope = max(0.0, (t1 - t0) / (b1 - b0))
        return t1 + slope * (nbytes - b1)
    i = bisect_right(xs, nbytes)  # xs[i-1] <= nbytes < xs[i]
    (b0, t0), (b1, t1) = points[i - 1], points[i]
    return t0 + (t1 - t0) * (nbytes - b0) / (b1 - b0)


# ----- where tables live ------------------------------------------------------------------

def table_dir() -> Path:
    return state_dir() / "xfer-tables"


def table_path(toolchain: Any, machine_fp: str, toolchain_fp: str) -> Path:
    """`<state>/xfer-tables/<toolchain>-<machine_fp>-<toolchain_fp>.table`; `toolchain` is a
    Toolchain or its name."""
    name = toolchain if isinstance(toolchain, str) else toolchain.name
    return table_dir() / f"{name}-{machine_fp}-{toolchain_fp}.table"


def set_aside_path(path: Path, verdict: str) -> Path:
    """Where a new table worse than the one in use at `path` is kept beside it
    (table_trust.replacement): `<name>.<verdict>.table`."""
    return path.with_name(f"{path.name.removesuffix('.table')}.{verdict}.table")


def in_use(path: Path) -> bool:
    """Whether a table file is one that runs use (table_path's `<name>.table`), not one set
    aside beside it (set_aside_path)."""
    return not any(path.name.endswith(f".{v}.table") for v in TABLE_VERDICTS)


# ----- writing ------------------------------------------------------------------------------

def _one_line(what: str, text: str) -> str:
    if "\n" in text or "\r" in text:
        raise UserError(f"cannot write the transfer-time table: {what} contains a line break")
    return text


def _results_of(pingpong_results: dict[str, Any] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    docs = pingpong_results if isinstance(pingpong_results, list) else [pingpong_results]
    if not docs:
        raise UserError("no pingpong result to make a table from")
    return docs


def table_from_pingpong(pingpong_results: dict[str, Any] | list[dict[str, Any]],
                        toolchain_name: str, created: str | None = None, *,
                        host_load: dict[str, Any] | None = None,
                        sources: list[str] | None = None) -> XferTable:
    """The point-to-point table from one or more pingpong result documents (or their
    `results`) of the same machine and MPI, their samples pooled per size: the monotone
    fit of the estimates as points, each size's quality, and the verdict (xfer_quality.py).
    `host_load` is what else ran while measuring (machine_load.py; the busiest of the
    runs'), `sources` where the runs are."""
    docs = _results_of(pingpong_results)
    first = docs[0].get("results", docs[0])
    prov = docs[0].get("provenance", {})
    for key in ("machine_fp", "toolchain_fp"):
        for doc in docs:
            value = doc.get("results", doc).get(key, "")
            if not _FP.match(str(value)):
                raise UserError(f"pingpong result has no valid {key} (got {value!r})")
            if value != first[key]:
                raise UserError(f"pingpong results of different {key.split('_')[0]}s "
                                f"({first[key]}, {value}) cannot make one table")
    classes = {c: sizes for c, sizes in judge(docs).items() if c in CLASSES}
    points: dict[str, list[tuple[int, float]]] = {}
    quality: dict[tuple[str, int], PointQuality] = {}
    unmeasured: dict[str, list[tuple[int, int, int]]] = {}
    for cls, sizes in classes.items():
        for q in sizes:
            if q.verdict == UNMEASURED or q.fitted_s is None:
                unmeasured.setdefault(cls, []).append((q.nbytes, q.clean, q.samples))
                continue
            points.setdefault(cls, []).append((q.nbytes, q.fitted_s))
            quality[(cls, q.nbytes)] = _point_quality(q)
    if not points:
        if unmeasured:
            raise UserError("the pingpong run(s) had too few undisturbed samples at every "
                            "size to make a table (the machine was too busy); "
                            f"{judge_table(classes, host_load)[1]}")
        raise UserError("the pingpong result has no measured sizes; nothing to put in a table")
    verdict, reason = judge_table(classes, host_load)
    load = describe(host_load)
    parts = parts_from_pingpong(docs, points)
    return XferTable(
        machine_fp=first["machine_fp"],
        machine_key=_one_line("the machine key", first["machine_key"]),
        toolchain_fp=first["toolchain_fp"],
        toolchain_key=_one_line("the toolchain key", first["toolchain_key"]),
        toolchain_name=_one_line("the toolchain name", toolchain_name),
        ranks=int(first.get("ranks") or prov.get("ranks") or 0),
        nodes=int(first.get("nodes") or 1),
        created=created or utc_now(),
        points=points,
        verdict=verdict,
        verdict_reason=_one_line("the verdict", reason),
        quality=quality,
        unmeasured=unmeasured,
        load=_one_line("the load", load) if load else None,
        sources=[_one_line("a source", x) for x in sources or []],
        parts=parts,
        eager_limits={cls: eager_limit(parts, cls) for cls in CLASSES
                      if any(c == cls for c, _ in parts)},
        streams={c: st for c, st in streams_from_pingpong(docs).items() if c in points},
    )


def _point_quality(q: SizeQuality) -> PointQuality:
    return PointQuality(verdict=q.verdict, estimate_s=q.estimate_s or 0.0,
                        spread=q.spread or 0.0, undisturbed=q.clean, samples=q.samples,
                        lo_s=q.lo_s, hi_s=q.hi_s)


def _coll_note_prefix(comm_size: int) -> str:
    return f"collectives on {comm_size} ranks: "


def coll_series(collectives_result: dict[str, Any]) -> dict[CollKey, Points]:
    """The collective series of a collectives result document (or its `results`): per op,
    `time_s` per size, on the result's communicator size; unmeasured sizes left out. A
    size slower than a larger one of its series gets the larger one's time
    (`_no_slower_than_larger`)."""
    res = collectives_result.get("results", collectives_result)
    comm_size = int(res["comm_size"])
    out: dict[CollKey, Points] = {}
    for series in res.get("series", []):
        pts = {int(p["bytes"]): float(p["time_s"]) for p in series.get("sizes", [])
               if isinstance(p.get("time_s"), (int, float)) and math.isfinite(p["time_s"])
               and p["time_s"] >= 0}
        if pts and series["op"] in COLL_OPS:
            out[(series["op"], comm_size)] = _no_slower_than_larger(sorted(pts.items()))
    return out


def _no_slower_than_larger(points: Points) -> Points:
    """Each size's time at most that of every larger size of the series. A larger message
    never goes faster through the same collective, and load only adds time, so a size
    above a larger one measured a disturbance: beside other work a calibration gave
    MPI_Iallreduce 191 µs at 0 B and 6.5 µs at 1 KiB, and every 8-byte MPI_Iallreduce of
    a conjugate-gradient run was then flagged as faster than its table time (27 % of its
    transfer time)."""
    out: Points = []
    floor = math.inf
    for nbytes, secs in reversed(points):
        floor = min(floor, secs)
        out.append((nbytes, floor))
    return out[::-1]


def render_table(table: XferTable) -> str:
    """The table file's text (always the current format version)."""
    lines = [
        f"{MAGIC} {VERSION}",
        f"created {table.created}",
        f"machine {table.machine_fp} {_one_line('the machine key', table.machine_key)}",
        f"toolchain {table.toolchain_fp} {_one_line('the toolchain key', table.toolchain_key)}",
        f"toolchain_name {_one_line('the toolchain name', table.toolchain_name)}",
        f"ranks {table.ranks} nodes {table.nodes}",
        f"verdict {table.verdict} {_one_line('the verdict', table.verdict_reason)}".rstrip(),
    ]
    if table.load:
        lines.append(f"load {_one_line('the load', table.load)}")
    lines += [f"source {_one_line('a source', x)}" for x in table.sources]
    lines.append("# class bytes seconds verdict estimate_s spread undisturbed samples "
                 "lo_s hi_s (seconds: the monotone fit)")
    for cls in CLASSES:
        for b, t in table.points.get(cls, []):
            q = table.quality.get((cls, b))
            extra = (f" {q.verdict} {q.estimate_s:.6g} {q.spread:.3g} {q.undisturbed} "
                     f"{q.samples}") if q else ""
            if q and q.lo_s is not None and q.hi_s is not None:
                extra += f" {q.lo_s:.6g} {q.hi_s:.6g}"
            lines.append(f"{cls} {b} {t:.6g}{extra}")
    if table.parts:
        lines.append("# parts class bytes protocol o_s lo hi o_r lo hi g lo hi")
        for (cls, b), p in sorted(table.parts.items(), key=lambda kv: (CLASSES.index(kv[0][0]),
                                                                        kv[0][1])):
            nums = " ".join(f"{x:.6g}" for part in (p.o_s, p.o_r, p.g)
                            for x in (part.value_s, part.lo_s, part.hi_s))
            lines.append(f"parts {cls} {b} {p.protocol} {nums}")
        lines.append("# eager_limit class bytes (none: no size was eager)")
        for cls in CLASSES:
            if cls in table.eager_limits:
                limit = table.eager_limits[cls]
                lines.append(f"eager_limit {cls} {'none' if limit is None else limit}")
    if table.streams:
        lines.append("# stream class bytes window seconds_per_message lo hi undisturbed samples")
        for cls in CLASSES:
            st = table.streams.get(cls)
            if st is not None:
                pm = st.per_message
                lines.append(f"stream {cls} {st.nbytes} {st.window} {pm.value_s:.6g} "
                             f"{pm.lo_s:.6g} {pm.hi_s:.6g} {st.undisturbed} {st.samples}")
    if any(table.unmeasured.values()):
        lines.append("# unmeasured class bytes undisturbed samples")
        for cls in CLASSES:
            lines += [f"unmeasured {cls} {b} {n} {m}" for b, n, m in table.unmeasured.get(cls, [])]
    if table.coll:
        lines.append("# coll op comm_size bytes seconds")
        for op, n in sorted(table.coll, key=lambda k: (k[1], COLL_OPS.index(k[0]))):
            lines += [f"coll {op} {n} {b} {t:.6g}" for b, t in table.coll[(op, n)]]
    lines.append("end")
    return "\n".join(lines) + "\n"


def content_hash(text: str | bytes) -> str:
    """FNV-1a 64 of the table file's bytes, 16 hex digits (mop_xfer_table.c computes the
    same over what it reads)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def format_table(pingpong_result: dict[str, Any] | list[dict[str, Any]], toolchain_name: str,
                 created: str | None = None,
                 coll: dict[CollKey, Points] | None = None) -> str:
    """The table text from pingpong result documents (or their `results` objects), with
    the collective series `coll` when given."""
    return render_table(table_from_pingpong(pingpong_result, toolchain_name, created)
                        .with_coll(coll or {}))


def save_table(path: Path, table: XferTable) -> Path:
    """Write `table` atomically (tmp + rename); returns `path`."""
    path = Path(path)
    write_text_atomic(path, render_table(table))
    return path


def write_table(path: Path, pingpong_result: dict[str, Any] | list[dict[str, Any]],
                toolchain_name: str, coll: dict[CollKey, Points] | None = None) -> Path:
    """Write the table of pingpong results (and collective series) atomically."""
    return save_table(path, table_from_pingpong(pingpong_result, toolchain_name)
                      .with_coll(coll or {}))


# ----- reading ------------------------------------------------------------------------------

def read_table(path: Path) -> XferTable:
    path = Path(path)
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"transfer-time table {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"transfer-time table {path}: cannot read it ({err})") from None
    table = parse_table(text, path)
    table.content_hash = content_hash(raw)
    return table


_HEADER_WORDS = ("created", "machine", "toolchain", "toolchain_name", "ranks", "verdict", "load")


def parse_table(text: str, path: Path | str = "<text>") -> XferTable:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    elif text:
        raise UserError(f"transfer-time table {path} is cut short: its last line has no "
                        "end of line; measure it again with 'mpi-overlap calibrate'")
    lines = [line.rstrip("\r") for line in lines]

    def bad(lineno: int, why: str) -> UserError:
        return UserError(f"transfer-time table {path}, line {lineno}: {why}")

    first = lines[0].split() if lines else []
    if len(first) != 2 or first[0] != MAGIC:
        raise UserError(f"{path} is not a transfer-time table (first line is not "
                        f"'{MAGIC} <version>')")
    if first[1] not in {str(v) for v in READABLE_VERSIONS}:
        raise UserError(f"transfer-time table {path} has format version {first[1]}, but this "
                        f"mpi-overlap reads versions {READABLE_VERSIONS[0]} to "
                        f"{READABLE_VERSIONS[-1]}; measure a new one with "
                        "'mpi-overlap calibrate'")
    version = int(first[1])
    header: dict[str, str] = {}
    points: dict[str, list[tuple[int, float]]] = {}
    quality: dict[tuple[str, int], PointQuality] = {}
    unmeasured: dict[str, list[tuple[int, int, int]]] = {}
    coll: dict[CollKey, Points] = {}
    sources: list[str] = []
    parts: dict[tuple[str, int], SizeParts] = {}
    eager_limits: dict[str, int | None] = {}
    streams: dict[str, Stream] = {}
    ended = False
    for lineno, raw in enumerate(lines[1:], start=2):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if ended:
            raise bad(lineno, "text after 'end'")
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word in CLASSES:
            nbytes, seconds, q = _point_line(word, rest, version, partial(bad, lineno))
            _append(points.setdefault(word, []), nbytes, seconds, word, partial(bad, lineno))
            if q is not None:
                quality[(word, nbytes)] = q
        elif word == "coll":
            key, nbytes, seconds = _coll_line(rest, partial(bad, lineno))
            _append(coll.setdefault(key, []), nbytes, seconds, f"coll {key[0]} {key[1]}",
                    partial(bad, lineno))
        elif word == "parts" and version >= 4:
            key, sp = _parts_line(rest, partial(bad, lineno))
            if key in parts:
                raise bad(lineno, f"parts of {key[0]} {key[1]} given twice")
            parts[key] = sp
        elif word == "eager_limit" and version >= 4:
            cls, limit = _eager_limit_line(rest, partial(bad, lineno))
            if cls in eager_limits:
                raise bad(lineno, f"eager_limit of {cls} given twice")
            eager_limits[cls] = limit
        elif word == "stream" and version >= 4:
            cls, st = _stream_line(rest, partial(bad, lineno))
            if cls in streams:
                raise bad(lineno, f"stream of {cls} given twice")
            streams[cls] = st
        elif word == "unmeasured" and version >= 3:
            cls, nbytes, n, m = _unmeasured_line(rest, partial(bad, lineno))
            unmeasured.setdefault(cls, []).append((nbytes, n, m))
        elif word == "source" and version >= 3:
            sources.append(rest)
        elif word == "end" and version >= 3 and not rest:
            ended = True
        elif word in _HEADER_WORDS and (version >= 3 or word not in ("verdict", "load")):
            if word in header:
                raise bad(lineno, f"'{word}' given twice")
            header[word] = rest
        else:
            raise bad(lineno, f"unknown line '{word}'")
    required = ["created", "machine", "toolchain", "toolchain_name", "ranks"]
    if version >= 3:
        required.append("verdict")
    missing = [k for k in required if k not in header]
    if missing:
        raise UserError(f"transfer-time table {path}: missing {', '.join(missing)}")
    if version >= 3 and not ended:
        raise UserError(f"transfer-time table {path} is cut short (no 'end' line); measure "
                        "it again with 'mpi-overlap calibrate'")
    if not points:
        raise UserError(f"transfer-time table {path}: no points")
    fps = {}
    for key in ("machine", "toolchain"):
        fp, _, k = header[key].partition(" ")
        if not _FP.match(fp):
            raise UserError(f"transfer-time table {path}: '{key}' line has no 16-hex-digit "
                            "fingerprint")
        fps[key] = (fp, k.strip())
    m = re.fullmatch(r"(\d{1,9}) nodes (\d{1,9})", header["ranks"])  # int() stays small
    if not m:
        raise UserError(f"transfer-time table {path}: expected 'ranks <n> nodes <m>'")
    if version >= 3:
        verdict, _, reason = header["verdict"].partition(" ")
        if verdict not in TABLE_VERDICTS:
            raise UserError(f"transfer-time table {path}: unknown verdict '{verdict}' "
                            f"(known: {', '.join(TABLE_VERDICTS)})")
    else:
        verdict, reason = UNVERIFIED, OLD_FORMAT_REASON.format(v=version)
    return XferTable(
        machine_fp=fps["machine"][0],
        machine_key=fps["machine"][1],
        toolchain_fp=fps["toolchain"][0],
        toolchain_key=fps["toolchain"][1],
        toolchain_name=header["toolchain_name"],
        ranks=int(m.group(1)),
        nodes=int(m.group(2)),
        created=header["created"],
        points=points,
        version=version,
        path=Path(path),
        coll=coll,
        verdict=verdict,
        verdict_reason=reason.strip(),
        quality=quality,
        unmeasured=unmeasured,
        load=header.get("load"),
        sources=sources,
        parts=parts,
        eager_limits=eager_limits,
        streams=streams,
    )


def _point_line(cls: str, rest: str, version: int,
                bad: Any) -> tuple[int, float, PointQuality | None]:
    """`<bytes> <seconds>`, in version 3 optionally followed by `<verdict> <estimate_s>
    <spread> <undisturbed> <samples>`, in version 4 by those and `<lo_s> <hi_s>`."""
    usage = (f"expected '{cls} <bytes> <seconds>'" + (
        " [<verdict> <estimate_s> <spread> <undisturbed> <samples>"
        + (" [<lo_s> <hi_s>]]" if version >= 4 else "]") if version >= 3 else ""))
    fields = rest.split()
    allowed = (2, 7, 9) if version >= 4 else (2, 7) if version >= 3 else (2,)
    if len(fields) not in allowed:
        raise bad(usage)
    try:
        nbytes, seconds = int(fields[0]), float(fields[1])
        q = None
        if len(fields) >= 7:
            q = PointQuality(verdict=fields[2], estimate_s=float(fields[3]),
                             spread=float(fields[4]), undisturbed=int(fields[5]),
                             samples=int(fields[6]))
        if len(fields) == 9 and q is not None:
            q = replace(q, lo_s=float(fields[7]), hi_s=float(fields[8]))
            if not (math.isfinite(q.lo_s or 0.0) and math.isfinite(q.hi_s or 0.0)
                    and 0 <= (q.lo_s or 0.0) <= (q.hi_s or 0.0)):
                raise bad("the interval must be finite with 0 <= lo_s <= hi_s")
    except ValueError:
        raise bad(usage) from None
    if nbytes < 0 or not math.isfinite(seconds) or seconds < 0:
        raise bad("bytes and seconds must be finite and not negative")
    if q is not None and (q.verdict not in VERDICTS or not 0 <= q.undisturbed <= q.samples
                          or not math.isfinite(q.estimate_s) or not math.isfinite(q.spread)):
        raise bad(f"bad point quality (verdict one of {', '.join(VERDICTS)}, "
                  "0 <= undisturbed <= samples)")
    return nbytes, seconds, q


def _parts_line(rest: str, bad: Any) -> tuple[tuple[str, int], SizeParts]:
    """`<class> <bytes> <protocol>` and three (estimate, lo, hi) triples: o_s, o_r, g."""
    usage = ("expected 'parts <class> <bytes> <eager|rendezvous> <o_s> <lo> <hi> <o_r> <lo> "
             "<hi> <g> <lo> <hi>'")
    fields = rest.split()
    if len(fields) != 12 or fields[0] not in CLASSES or fields[2] not in (EAGER, RENDEZVOUS):
        raise bad(usage)
    try:
        nbytes = int(fields[1])
        nums = [float(x) for x in fields[3:]]
    except ValueError:
        raise bad(usage) from None
    if nbytes < 0 or not all(math.isfinite(x) and x >= 0 for x in nums):
        raise bad("bytes and seconds must be finite and not negative")
    triples = [Part(*nums[i:i + 3]) for i in (0, 3, 6)]
    if any(not p.lo_s <= p.value_s <= p.hi_s for p in triples):
        raise bad("each part's estimate must lie within its interval (lo <= estimate <= hi)")
    return (fields[0], nbytes), SizeParts(nbytes=nbytes, protocol=fields[2], o_s=triples[0],
                                          o_r=triples[1], g=triples[2])


def _stream_line(rest: str, bad: Any) -> tuple[str, Stream]:
    """`<class> <bytes> <window> <seconds> <lo> <hi> <undisturbed> <samples>`."""
    usage = ("expected 'stream <class> <bytes> <window> <seconds_per_message> <lo> <hi> "
             "<undisturbed> <samples>'")
    fields = rest.split()
    if len(fields) != 8 or fields[0] not in CLASSES:
        raise bad(usage)
    try:
        nbytes, window = int(fields[1]), int(fields[2])
        value, lo, hi = (float(x) for x in fields[3:6])
        n, m = int(fields[6]), int(fields[7])
    except ValueError:
        raise bad(usage) from None
    if nbytes < 0 or window < 1 or not 0 <= n <= m:
        raise bad(usage)
    if not all(math.isfinite(x) and x >= 0 for x in (value, lo, hi)) or not lo <= value <= hi:
        raise bad("the stream's seconds must be finite, not negative, and lo <= seconds <= hi")
    return fields[0], Stream(nbytes=nbytes, window=window, per_message=Part(value, lo, hi),
                             undisturbed=n, samples=m)


def _eager_limit_line(rest: str, bad: Any) -> tuple[str, int | None]:
    usage = "expected 'eager_limit <class> <bytes|none>'"
    fields = rest.split()
    if len(fields) != 2 or fields[0] not in CLASSES:
        raise bad(usage)
    if fields[1] == "none":
        return fields[0], None
    try:
        limit = int(fields[1])
    except ValueError:
        raise bad(usage) from None
    if limit < 0:
        raise bad(usage)
    return fields[0], limit


def _unmeasured_line(rest: str, bad: Any) -> tuple[str, int, int, int]:
    usage = "expected 'unmeasured <class> <bytes> <undisturbed> <samples>'"
    fields = rest.split()
    if len(fields) != 4 or fields[0] not in CLASSES:
        raise bad(usage)
    try:
        nbytes, n, m = (int(x) for x in fields[1:])
    except ValueError:
        raise bad(usage) from None
    if nbytes < 0 or not 0 <= n <= m:
        raise bad(usage)
    return fields[0], nbytes, n, m


def _append(pts: Points, nbytes: int, seconds: float, series: str, bad: Any) -> None:
    """Add a point to a series read so far; sizes must increase."""
    if pts and nbytes <= pts[-1][0]:
        raise bad(f"{series} sizes must increase ({nbytes} after {pts[-1][0]})")
    pts.append((nbytes, seconds))


def _coll_line(rest: str, bad: Any) -> tuple[CollKey, int, float]:
    """`<op> <comm_size> <bytes> <seconds>` of a coll line; `bad(why)` makes the error."""
    usage = "expected 'coll <op> <comm_size> <bytes> <seconds>'"
    fields = rest.split()
    if len(fields) != 4:
        raise bad(usage)
    op = fields[0]
    if op not in COLL_OPS:
        raise bad(f"unknown collective '{op}' (known: the names of mop_coll_ops.h, "
                  "'i' + name for non-blocking)")
    try:
        comm_size, nbytes, seconds = int(fields[1]), int(fields[2]), float(fields[3])
    except ValueError:
        raise bad(usage) from None
    if comm_size < 1:
        raise bad(f"communicator size must be at least 1 (got {comm_size})")
    if nbytes < 0 or not math.isfinite(seconds) or seconds < 0:
        raise bad("bytes and seconds must be finite and not negative")
    return (op, comm_size), nbytes, seconds


# ----- does it fit? -------------------------------------------------------------------------

def check_fits(table: XferTable, machine_fp: str, toolchain_fp: str, *,
               machine_key: str | None = None, toolchain_key: str | None = None) -> None:
    """Raise UserError (one line, naming both sides and the override) unless the table was
    made for this machine and toolchain."""
    problems = []
    if table.machine_fp != machine_fp:
        here = f"{machine_fp} ({machine_key})" if machine_key else machine_fp
        problems.append(f"machine {table.machine_fp} ({table.machine_key}), this is {here}")
    if table.toolchain_fp != toolchain_fp:
        here = f"{toolchain_fp} ({toolchain_key})" if toolchain_key else toolchain_fp
        problems.append(f"toolchain {table.toolchain_fp} ({table.toolchain_key}), "
                        f"this is {here}")
    if not problems:
        return
    which = " and ".join(p.split(" ", 1)[0] for p in problems)
    raise UserError(
        f"transfer-time table {table.path or '(unnamed)'} was made for another {which}: "
        f"table {'; table '.join(problems)}; measure one here with 'mpi-overlap calibrate', "
        f"or use this one anyway with {OVERRIDE_HINT}"
    )


def read_fitting(path: Path, machine_fp: str, toolchain_fp: str) -> XferTable | None:
    """The table at `path` when it is readable and made for these fingerprints, else
    None."""
    if not path.is_file():
        return None
    try:
        table = read_table(path)
        check_fits(table, machine_fp, toolchain_fp)
    except UserError:
        return None
    return table
