"""The numbers and words of profile analyses, shared by every module that reads profiles
(the job's analysis, call sites, advice, checks, two-sided bounds, traces): finite numbers
from JSON, percentages and shares, size-bin and rank-list labels, and rankings of the job
statistics' cells (the text of times and percentages is formatting.py's).
Kept apart from profile/analysis/profile.py so that those modules need not import the analysis
that imports them."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ...core.sizes import format_size

# ---------------------------------------------------------------- small helpers


def num(value: Any) -> float:
    """A finite float; anything else (null, NaN, a string) counts as 0."""
    kind = type(value)  # the two types JSON gives first: called millions of times
    if kind is float:
        return value if math.isfinite(value) else 0.0
    if kind is int:
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value) if math.isfinite(value) else 0.0


def pct(part: float, whole: float) -> float | None:
    """100·part/whole clipped to [0, 100]; None when whole is not positive."""
    if whole <= 0:
        return None
    return min(100.0, max(0.0, 100.0 * part / whole))


def share(part: float, whole: float) -> float | None:
    """100·part/whole, not clipped (shares of a positive total); None when whole ≤ 0."""
    return None if whole <= 0 else 100.0 * part / whole


def overlap_pcts(xfer: float, lo: float, hi: float) -> tuple[float | None, float | None]:
    """(min %, max %) of transfer time, ordered min ≤ max ≤ 100; (None, None) when xfer = 0."""
    max_pct = pct(hi, xfer)
    min_pct = pct(lo, xfer)
    if max_pct is None or min_pct is None:
        return None, None
    return min(min_pct, max_pct), max_pct


def bin_label(lo: int, hi: int | None) -> str:
    """'1 MiB–2 MiB', '≥ 1 GiB' for the open last bin, '0 B' for the [0, 1) bin."""
    if hi is None:
        return f"≥ {format_size(lo)}"
    if lo == 0 and hi == 1:
        return "0 B"
    return f"{format_size(lo)}–{format_size(hi)}"


def bin_of(nbytes: int, edges: list[int] | None) -> tuple[int, int | None]:
    """The profile's size bin of a transfer: powers of two, or the run's --bins edges."""
    n = max(0, nbytes)
    if not edges:
        if n == 0:
            return 0, 1
        k = n.bit_length() - 1
        return 1 << k, (1 << (k + 1)) if k < 63 else None
    i = sum(1 for e in edges if e <= n)
    return (edges[i - 1] if i else 0), (edges[i] if i < len(edges) else None)


def rank_list(ranks: Iterable[int]) -> str:
    """'0-3,7' for sorted ranks."""
    xs = sorted(set(ranks))
    out: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(out)


def ranks_text(first: Iterable[int], count: int | None = None) -> str:
    """rank_list of the ranks listed, and how many more there are: '0-15 and 48 more'
    (the job's statistics list the lowest 16 ranks of each counter and flagged entry)."""
    listed = sorted(set(first))
    more = (count or 0) - len(listed)
    return rank_list(listed) + (f" and {more} more" if more > 0 else "")


# ---------------------------------------------------------------- cells and rankings


def _cell(entry: dict[str, Any]) -> tuple[int, float, float, float, float]:
    """(transfers, xfer, min, max, nonoverlap) of one profile cell; nonoverlap is
    recomputed as xfer − max."""
    xfer, hi = num(entry.get("xfer_s")), num(entry.get("max_s"))
    return (int(num(entry.get("transfers"))), xfer, num(entry.get("min_s")), hi,
            max(0.0, xfer - hi))


def measures(entry: dict[str, Any]) -> dict[str, float]:
    """The transfer measures of one profile cell; nonoverlap is recomputed as xfer − max."""
    transfers, xfer, lo, hi, nonoverlap = _cell(entry)
    return {
        "transfers": transfers,
        "xfer_s": xfer,
        "min_s": lo,
        "max_s": hi,
        "nonoverlap_s": nonoverlap,
    }


def cell_dict(cell: dict[str, Any], total_nonoverlap: float) -> dict[str, Any]:
    """A ranking entry's measures from a cell of the job's statistics (profile/
    documents/job_stats.py): the sums, the overlap range and share, how many ranks have the entry
    and which lost most there (none when no rank lost time)."""
    min_pct, max_pct = overlap_pcts(cell["xfer_s"], cell["min_s"], cell["max_s"])
    return {
        "transfers": int(cell["transfers"]),
        "xfer_s": cell["xfer_s"],
        "min_s": cell["min_s"],
        "max_s": cell["max_s"],
        "nonoverlap_s": cell["nonoverlap_s"],
        "min_pct": min_pct,
        "max_pct": max_pct,
        "share_pct": share(cell["nonoverlap_s"], total_nonoverlap),
        "ranks": int(cell["ranks"]),
        "worst_rank": cell["worst_rank"] if cell["ranks"] and cell["worst_s"] > 0 else None,
    }


def cell_ranking(
    cells: dict[Any, dict[str, Any]],
    describe: Callable[[Any, dict[str, Any]], dict[str, Any]],
    tiebreak: Callable[[Any], Any],
) -> list[dict[str, Any]]:
    """Entries sorted by non-overlapped time lost (desc), then transfer time (desc), then
    tiebreak. Shares are of the ranking's own total, so they add up to 100 % whenever it
    is > 0."""
    total = sum(c["nonoverlap_s"] for c in cells.values())
    order = sorted(cells, key=lambda k: (-cells[k]["nonoverlap_s"], -cells[k]["xfer_s"],
                                         tiebreak(k)))
    return [{**describe(k, cells[k]), **cell_dict(cells[k], total)} for k in order]
