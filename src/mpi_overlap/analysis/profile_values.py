"""The numbers and words of profile analyses, shared by every module that reads profiles
(the job's analysis, call sites, advice, checks, two-sided bounds, traces): finite numbers
from JSON, percentages and shares, size-bin and rank-list labels, and the accumulation of
a ranking's entries over ranks (the text of times and percentages is formatting.py's).
Kept apart from analysis/profile.py so that those modules need not import the analysis
that imports them."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ..sizes import format_size

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


# ---------------------------------------------------------------- accumulation


def cell_of(entry: dict[str, Any]) -> tuple[int, float, float, float, float]:
    """(transfers, xfer, min, max, nonoverlap) of one profile cell; nonoverlap is
    recomputed as xfer − max."""
    xfer, hi = num(entry.get("xfer_s")), num(entry.get("max_s"))
    return (int(num(entry.get("transfers"))), xfer, num(entry.get("min_s")), hi,
            max(0.0, xfer - hi))


def measures(entry: dict[str, Any]) -> dict[str, float]:
    """The transfer measures of one profile cell; nonoverlap is recomputed as xfer − max."""
    transfers, xfer, lo, hi, nonoverlap = cell_of(entry)
    return {
        "transfers": transfers,
        "xfer_s": xfer,
        "min_s": lo,
        "max_s": hi,
        "nonoverlap_s": nonoverlap,
    }


class Acc:
    """Sums of one ranking entry over ranks, remembering each rank's non-overlapped time."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = {
            "transfers": 0,
            "xfer_s": 0.0,
            "min_s": 0.0,
            "max_s": 0.0,
            "nonoverlap_s": 0.0,
        }
        self.extra: dict[str, float] = {}
        self.by_rank: dict[int, float] = {}

    def add(self, rank: int, entry: dict[str, Any], extra: tuple[str, ...] = (),
            cell: tuple[int, float, float, float, float] | None = None) -> None:
        """Adds one rank's cell; `cell` is _cell(entry) when the caller has it already
        (one site pair goes into three rankings)."""
        # the cell as a tuple, not measures()'s dict: this runs once per cell and rank
        transfers, xfer, lo, hi, nonoverlap = cell or cell_of(entry)
        sums = self.sums
        sums["transfers"] += transfers
        sums["xfer_s"] += xfer
        sums["min_s"] += lo
        sums["max_s"] += hi
        sums["nonoverlap_s"] += nonoverlap
        for key in extra:
            self.extra[key] = self.extra.get(key, 0.0) + num(entry.get(key))
        self.by_rank[rank] = self.by_rank.get(rank, 0.0) + nonoverlap

    def as_dict(self, total_nonoverlap: float) -> dict[str, Any]:
        s = self.sums
        min_pct, max_pct = overlap_pcts(s["xfer_s"], s["min_s"], s["max_s"])
        worst = None
        if self.by_rank and max(self.by_rank.values()) > 0:
            worst = min(self.by_rank, key=lambda r: (-self.by_rank[r], r))
        return {
            "transfers": int(s["transfers"]),
            "xfer_s": s["xfer_s"],
            "min_s": s["min_s"],
            "max_s": s["max_s"],
            "nonoverlap_s": s["nonoverlap_s"],
            "min_pct": min_pct,
            "max_pct": max_pct,
            "share_pct": share(s["nonoverlap_s"], total_nonoverlap),
            "ranks": len(self.by_rank),
            "worst_rank": worst,
        }


def acc_of(accs: dict[Any, Acc], key: Any) -> Acc:
    """accs[key], made when missing; not setdefault(key, Acc()), which makes (and drops)
    an Acc on every call: once per cell and rank."""
    acc = accs.get(key)
    if acc is None:
        acc = accs[key] = Acc()
    return acc


def cell_dict(cell: dict[str, Any], total_nonoverlap: float) -> dict[str, Any]:
    """A ranking entry's measures from a cell of the job's statistics (profiling/
    job_stats.py): what Acc.as_dict gives from the same ranks summed in the tree's order."""
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
    """ranking() of the job statistics' cells: the same order and shares."""
    total = sum(c["nonoverlap_s"] for c in cells.values())
    order = sorted(cells, key=lambda k: (-cells[k]["nonoverlap_s"], -cells[k]["xfer_s"],
                                         tiebreak(k)))
    return [{**describe(k, cells[k]), **cell_dict(cells[k], total)} for k in order]


def ranking(
    accs: dict[Any, Acc],
    describe: Callable[[Any, Acc], dict[str, Any]],
    tiebreak: Callable[[Any], Any],
) -> list[dict[str, Any]]:
    """Entries sorted by non-overlapped time lost (desc), then transfer time (desc).

    Shares are of the ranking's own total, so they add up to 100 % whenever it is > 0.
    """
    total = sum(a.sums["nonoverlap_s"] for a in accs.values())
    order = sorted(
        accs,
        key=lambda k: (-accs[k].sums["nonoverlap_s"], -accs[k].sums["xfer_s"], tiebreak(k)),
    )
    return [{**describe(k, accs[k]), **accs[k].as_dict(total)} for k in order]
