"""The transfer model's parts as `calibrate` prints them: per class, at a few sizes, the
one-way time T, the sender's overhead o_s, the receiver's o_r, the gap g and the latency
L = T - o_s - o_r, each with its 95 % interval, and the size's protocol (xfer_parts.py)."""

from __future__ import annotations

from rich.console import Console

from ..core.sizes import format_size
from ..core.termsafe import Table
from .xfer_parts import Part
from .xfer_table import XferTable

# The sizes the issue asks about, and one below and above the usual eager limits.
PARTS_SHOWN = (8, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 1 << 20)


def _cell(p: Part) -> str:
    return f"{p.value_s * 1e6:.3g} [{p.lo_s * 1e6:.3g}–{p.hi_s * 1e6:.3g}]"


def print_parts(console: Console, table: XferTable) -> None:
    """One table per class that has parts; nothing for a table without them."""
    for cls in table.classes:
        rows = [(b, table.parts[(cls, b)]) for b, _ in table.points.get(cls, [])
                if b in PARTS_SHOWN and (cls, b) in table.parts]
        if not rows:
            continue
        limit = table.eager_limits.get(cls)
        view = Table(title=f"{table.toolchain_name}: {cls} transfer in its parts (µs, 95 % "
                           "interval); eager up to "
                           f"{'no size' if limit is None else format_size(limit)}")
        for name in ("size", "protocol", "T", "o_s", "o_r", "g", "L"):
            view.add_column(name, justify="left" if name in ("size", "protocol") else "right")
        for nbytes, parts in rows:
            q = table.quality.get((cls, nbytes))
            t = table.lookup(nbytes, cls)
            lo = q.lo_s if q and q.lo_s is not None else t
            hi = q.hi_s if q and q.hi_s is not None else t
            whole = Part(t, min(lo, t), max(hi, t))
            view.add_row(format_size(nbytes), parts.protocol, _cell(whole), _cell(parts.o_s),
                         _cell(parts.o_r), _cell(parts.g),
                         # a rendezvous transfer is not o_s + L + o_r: its calls hold it all
                         _cell(parts.latency(t, whole.lo_s, whole.hi_s)) if parts.eager else "—")
        console.print(view)
