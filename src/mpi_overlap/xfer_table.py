"""The transfer-time table: one-way time of a message per size, measured a priori.

The overlap profiler needs, for every transfer it sees, how long the transfer would take
on its own (xfer_time). `mpi-overlap calibrate` measures it with `mo_pingpong` and writes
this table; the profiler library loads it at MPI_Init, so the format is plain text that C
parses with a few `sscanf`s:

    mpi-overlap-xfer-table 1
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

Keys are the rest of their line after the fingerprint (they contain spaces, never a
newline). Points of a class are in increasing byte order. Lines starting with `#` and
blank lines are ignored. A table is valid only for the machine and MPI library it was
measured with: `check_fits` compares fingerprints (16 hex digits of FNV-1a 64 of the
keys, see native/common/fingerprint.h).

Lookup between points is linear in bytes; below the first point it is the first point's
time; above the last it continues the last segment's slope (never a negative one: a
message does not get faster by growing).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UserError
from .paths import state_dir
from .rundir import utc_now

MAGIC = "mpi-overlap-xfer-table"
VERSION = 1
CLASSES = ("intra", "inter")
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

    @property
    def classes(self) -> list[str]:
        return [c for c in CLASSES if self.points.get(c)]

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


def format_table(pingpong_result: dict[str, Any], toolchain_name: str,
                 created: str | None = None) -> str:
    """The table text from a pingpong result document (or its `results` object)."""
    res = pingpong_result.get("results", pingpong_result)
    prov = pingpong_result.get("provenance", {})
    for key in ("machine_fp", "toolchain_fp"):
        if not _FP.match(str(res.get(key, ""))):
            raise UserError(f"pingpong result has no valid {key} (got {res.get(key)!r})")
    ranks = int(res.get("ranks") or prov.get("ranks") or 0)
    nodes = int(res.get("nodes") or 1)
    lines = [
        f"{MAGIC} {VERSION}",
        f"created {created or utc_now()}",
        f"machine {res['machine_fp']} {_one_line('the machine key', res['machine_key'])}",
        f"toolchain {res['toolchain_fp']} {_one_line('the toolchain key', res['toolchain_key'])}",
        f"toolchain_name {_one_line('the toolchain name', toolchain_name)}",
        f"ranks {ranks} nodes {nodes}",
        "# class bytes seconds",
    ]
    count = 0
    for cls in CLASSES:
        pts: dict[int, float] = {}
        for pair in res.get("pairs", []):
            if pair.get("class") != cls:
                continue
            for s in pair.get("sizes", []):
                t = s.get("one_way_s")
                if t is not None and math.isfinite(t) and t >= 0:
                    pts[int(s["bytes"])] = float(t)
        for nbytes in sorted(pts):
            lines.append(f"{cls} {nbytes} {pts[nbytes]:.6g}")
            count += 1
    if count == 0:
        raise UserError("the pingpong result has no measured sizes; nothing to put in a table")
    return "\n".join(lines) + "\n"


def write_table(path: Path, pingpong_result: dict[str, Any], toolchain_name: str) -> Path:
    """Write the table atomically (tmp + rename); returns `path`."""
    text = format_table(pingpong_result, toolchain_name)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


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
    if first[1] != str(VERSION):
        raise UserError(f"transfer-time table {path} has format version {first[1]}, but this "
                        f"mpi-overlap reads version {VERSION}; measure a new one with "
                        "'mpi-overlap calibrate'")
    header: dict[str, str] = {}
    points: dict[str, list[tuple[int, float]]] = {}
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
            pts = points.setdefault(word, [])
            if pts and nbytes <= pts[-1][0]:
                raise bad(lineno, f"{word} sizes must increase ({nbytes} after {pts[-1][0]})")
            pts.append((nbytes, seconds))
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
    m = re.fullmatch(r"(\d+) nodes (\d+)", header["ranks"])
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
        path=Path(path),
    )


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
