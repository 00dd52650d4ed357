"""How well the communicator-size model of the collective transfer times predicts a size
that was calibrated: each series of an op with three or more calibrated sizes is left out
in turn and predicted from the others exactly as the profiler would price a communicator
of that size (XferTable.lookup_coll, the mirror of mop_xfer_table.c). The relative
errors at the series' message sizes are the model's error on this machine and MPI, the
figure docs/method.md ("Collective transfer times") asks a table to state."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from .xfer_table import XferTable, coll_growth


@dataclass(frozen=True)
class HeldOut:
    """One calibrated series predicted from the op's other sizes."""

    op: str
    comm_size: int
    between: bool          # interpolated between two sizes (else extrapolated beyond them)
    errors: list[float]    # (predicted - measured) / measured at each message size


@dataclass(frozen=True)
class ModelError:
    """The held-out predictions of one kind (between sizes, or beyond them)."""

    between: bool
    series: int
    points: int
    median_abs: float      # median |relative error| over all points
    worst_abs: float
    worst: HeldOut


def held_out(table: XferTable) -> list[HeldOut]:
    """Every series of an op with at least three calibrated sizes, predicted without it."""
    out = []
    for op in sorted({o for o, _ in table.coll}):
        sizes = table.coll_sizes_of(op)
        if len(sizes) < 3 or coll_growth(op) is None:
            continue
        for n in sizes:
            others = {k: v for k, v in table.coll.items() if k != (op, n)}
            without = replace(table, coll=others)
            errors = [(without.lookup_coll(op, n, nbytes)[0] - secs) / secs
                      for nbytes, secs in table.coll[(op, n)] if secs > 0]
            if errors:
                out.append(HeldOut(op, n, sizes[0] < n < sizes[-1], errors))
    return out


def model_errors(table: XferTable) -> list[ModelError]:
    """The error of the size model, between calibrated sizes and beyond them (a kind with
    no held-out series is left out)."""
    out = []
    every = held_out(table)
    for between in (True, False):
        runs = [h for h in every if h.between == between]
        if not runs:
            continue
        flat = [abs(e) for h in runs for e in h.errors]
        worst = max(runs, key=lambda h: max(abs(e) for e in h.errors))
        out.append(ModelError(between, len(runs), len(flat), statistics.median(flat),
                              max(flat), worst))
    return out


def describe(table: XferTable) -> list[str]:
    """One line per kind for calibrate's output; empty when no op has three sizes."""
    lines = []
    for m in model_errors(table):
        where = "between calibrated sizes" if m.between else "beyond them (extrapolated)"
        lines.append(
            f"communicator-size model, {where}: median error {100 * m.median_abs:.0f} %, "
            f"worst {100 * m.worst_abs:.0f} % ({m.worst.op} on {m.worst.comm_size} ranks); "
            f"{m.points} message sizes of {m.series} series, each predicted without it")
    return lines
