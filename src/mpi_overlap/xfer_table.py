"""The transfer-time table: one-way time of a message per size, measured a priori.

The overlap profiler needs, for every transfer it sees, how long the transfer would take
on its own (xfer_time). `mpi-overlap calibrate` measures it with `mo_pingpong` (point to
point) and `mo_collectives` (each collective, per communicator size) and writes this
table; the profiler library loads it at MPI_Init, so the format is plain text that C
parses with a few `sscanf`s:

    mpi-overlap-xfer-table 2
    created 2026-01-01T00:00:00Z
    machine <machine_fp> <machine_key>
    toolchain <toolchain_fp> <toolchain_key>
    toolchain_name <name>
    ranks <n> nodes <m>
    # class bytes seconds
    intra 0 2.875e-07
    intra 1 2.9e-07
    ...
    inter 0 1.2e-06          (only when the job spanned several nodes)
    # coll op comm_size bytes seconds
    coll bcast 2 0 1.1e-07
    coll ibcast 2 1024 3.1e-06
    ...

Keys are the rest of their line after the fingerprint (they contain spaces, never a
newline). Points of a class, and of a collective series, are in increasing byte order.
A collective series is keyed by op (the names of native/profiler/mop_coll_ops.h, prefixed
"i" for the non-blocking op) and communicator size; its bytes are the per-process block
(docs/method.md). Version 1 (no `coll` lines) is still read. Lines starting with `#` and
blank lines are ignored. A table is valid only for the machine and MPI library it was
measured with: `check_fits` compares fingerprints (16 hex digits of FNV-1a 64 of the
keys, see native/common/fingerprint.h).

Lookup between points is linear in bytes; below the first point it is the first point's
time; above the last it continues the last segment's slope (never a negative one: a
message does not get faster by growing).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from .errors import UserError
from .paths import state_dir
from .rundir import utc_now, write_text_atomic

MAGIC = "mpi-overlap-xfer-table"
VERSION = 2
READABLE_VERSIONS = (1, 2)
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
Points = list[tuple[int, float]]
OVERRIDE_HINT = "--table PATH --force-table"

_FP = re.compile(r"^[0-9a-f]{16}$")


@dataclass
class XferTable:
    """A loaded table. `points[cls]` is a list of (bytes, seconds), bytes increasing."""

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
        coll = {k: v for k, v in self.coll.items() if k[1] not in sizes}
        coll.update({k: sorted(v) for k, v in series.items() if v})
        return replace(self, coll=coll, version=VERSION)

    def lookup_coll(self, op: str, comm_size: int, nbytes: int) -> tuple[float, list[str]]:
        """xfer_time of a collective as the profiler computes it (mop_xfer_table.c) and the
        names of the counters its fallbacks raise."""
        flags: list[str] = []
        key = self._series(op, comm_size)
        if key is None and op.startswith("i") and op[1:] in BLOCKING_COLL_OPS:
            key = self._series(op[1:], comm_size)
            if key is not None:
                flags.append("coll_nb_as_blocking")
        if key is None:
            flags.append("coll_uncalibrated")
            pts = self.points.get("intra") or []
        else:
            if key[1] != comm_size:
                flags.append("coll_size_extrapolated")
            pts = self.coll[key]
        if pts and nbytes > pts[-1][0]:
            flags.append("table_extrapolated")
        return (interpolate(pts, nbytes) if pts else 0.0), flags

    def _series(self, op: str, comm_size: int) -> CollKey | None:
        """The op's series with comm_size ranks, else the nearest size (ties: larger)."""
        sizes = [n for o, n in self.coll if o == op]
        if not sizes:
            return None
        return op, min(sizes, key=lambda n: (abs(n - comm_size), -n))

    def lookup(self, nbytes: int, cls: str = "intra") -> float:
        """One-way seconds of an `nbytes` message between ranks of class `cls`."""
        pts = self.points.get(cls)
        if not pts:
            where = f" {self.path}" if self.path else ""
            raise UserError(f"transfer-time table{where} has no {cls}-node points "
                            f"(it has: {', '.join(self.classes) or 'none'})")
        return interpolate(pts, nbytes)


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


# ----- writing ------------------------------------------------------------------------------

def _one_line(what: str, text: str) -> str:
    if "\n" in text or "\r" in text:
        raise UserError(f"cannot write the transfer-time table: {what} contains a line break")
    return text


def table_from_pingpong(pingpong_result: dict[str, Any], toolchain_name: str,
                        created: str | None = None) -> XferTable:
    """The point-to-point table from a pingpong result document (or its `results`)."""
    res = pingpong_result.get("results", pingpong_result)
    prov = pingpong_result.get("provenance", {})
    for key in ("machine_fp", "toolchain_fp"):
        if not _FP.match(str(res.get(key, ""))):
            raise UserError(f"pingpong result has no valid {key} (got {res.get(key)!r})")
    points: dict[str, list[tuple[int, float]]] = {}
    for cls in CLASSES:
        pts: dict[int, float] = {}
        for pair in res.get("pairs", []):
            if pair.get("class") != cls:
                continue
            for s in pair.get("sizes", []):
                t = s.get("one_way_s")
                if t is not None and math.isfinite(t) and t >= 0:
                    pts[int(s["bytes"])] = float(t)
        if pts:
            points[cls] = sorted(pts.items())
    if not points:
        raise UserError("the pingpong result has no measured sizes; nothing to put in a table")
    return XferTable(
        machine_fp=res["machine_fp"],
        machine_key=_one_line("the machine key", res["machine_key"]),
        toolchain_fp=res["toolchain_fp"],
        toolchain_key=_one_line("the toolchain key", res["toolchain_key"]),
        toolchain_name=_one_line("the toolchain name", toolchain_name),
        ranks=int(res.get("ranks") or prov.get("ranks") or 0),
        nodes=int(res.get("nodes") or 1),
        created=created or utc_now(),
        points=points,
    )


def coll_series(collectives_result: dict[str, Any]) -> dict[CollKey, Points]:
    """The collective series of a collectives result document (or its `results`): per op,
    `time_s` per size, on the result's communicator size; unmeasured sizes left out."""
    res = collectives_result.get("results", collectives_result)
    comm_size = int(res["comm_size"])
    out: dict[CollKey, Points] = {}
    for series in res.get("series", []):
        pts = {int(p["bytes"]): float(p["time_s"]) for p in series.get("sizes", [])
               if isinstance(p.get("time_s"), (int, float)) and math.isfinite(p["time_s"])
               and p["time_s"] >= 0}
        if pts and series["op"] in COLL_OPS:
            out[(series["op"], comm_size)] = sorted(pts.items())
    return out


def render_table(table: XferTable) -> str:
    """The table file's text (always the current format version)."""
    lines = [
        f"{MAGIC} {VERSION}",
        f"created {table.created}",
        f"machine {table.machine_fp} {_one_line('the machine key', table.machine_key)}",
        f"toolchain {table.toolchain_fp} {_one_line('the toolchain key', table.toolchain_key)}",
        f"toolchain_name {_one_line('the toolchain name', table.toolchain_name)}",
        f"ranks {table.ranks} nodes {table.nodes}",
        "# class bytes seconds",
    ]
    for cls in CLASSES:
        lines += [f"{cls} {b} {t:.6g}" for b, t in table.points.get(cls, [])]
    if table.coll:
        lines.append("# coll op comm_size bytes seconds")
        for op, n in sorted(table.coll, key=lambda k: (k[1], COLL_OPS.index(k[0]))):
            lines += [f"coll {op} {n} {b} {t:.6g}" for b, t in table.coll[(op, n)]]
    return "\n".join(lines) + "\n"


def format_table(pingpong_result: dict[str, Any], toolchain_name: str,
                 created: str | None = None,
                 coll: dict[CollKey, Points] | None = None) -> str:
    """The table text from a pingpong result document (or its `results` object), with the
    collective series `coll` when given."""
    return render_table(table_from_pingpong(pingpong_result, toolchain_name, created)
                        .with_coll(coll or {}))


def save_table(path: Path, table: XferTable) -> Path:
    """Write `table` atomically (tmp + rename); returns `path`."""
    path = Path(path)
    write_text_atomic(path, render_table(table))
    return path


def write_table(path: Path, pingpong_result: dict[str, Any], toolchain_name: str,
                coll: dict[CollKey, Points] | None = None) -> Path:
    """Write the table of a pingpong result (and collective series) atomically."""
    return save_table(path, table_from_pingpong(pingpong_result, toolchain_name)
                      .with_coll(coll or {}))


# ----- reading ------------------------------------------------------------------------------

def read_table(path: Path) -> XferTable:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"transfer-time table {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"transfer-time table {path}: cannot read it ({err})") from None
    return parse_table(text, path)


def parse_table(text: str, path: Path | str = "<text>") -> XferTable:
    lines = text.splitlines()

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
    header: dict[str, str] = {}
    points: dict[str, list[tuple[int, float]]] = {}
    coll: dict[CollKey, Points] = {}
    for lineno, raw in enumerate(lines[1:], start=2):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word in CLASSES:
            fields = rest.split()
            if len(fields) != 2:
                raise bad(lineno, f"expected '{word} <bytes> <seconds>'")
            try:
                nbytes, seconds = int(fields[0]), float(fields[1])
            except ValueError:
                raise bad(lineno, f"expected '{word} <bytes> <seconds>'") from None
            if nbytes < 0 or not math.isfinite(seconds) or seconds < 0:
                raise bad(lineno, "bytes and seconds must be finite and not negative")
            _append(points.setdefault(word, []), nbytes, seconds, word, partial(bad, lineno))
        elif word == "coll":
            key, nbytes, seconds = _coll_line(rest, partial(bad, lineno))
            _append(coll.setdefault(key, []), nbytes, seconds, f"coll {key[0]} {key[1]}",
                    partial(bad, lineno))
        elif word in ("created", "machine", "toolchain", "toolchain_name", "ranks"):
            if word in header:
                raise bad(lineno, f"'{word}' given twice")
            header[word] = rest
        else:
            raise bad(lineno, f"unknown line '{word}'")
    missing = [k for k in ("created", "machine", "toolchain", "toolchain_name", "ranks")
               if k not in header]
    if missing:
        raise UserError(f"transfer-time table {path}: missing {', '.join(missing)}")
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
        version=int(first[1]),
        path=Path(path),
        coll=coll,
    )


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
