"""The profile report's cells and tables: how its figures print (times with their unit,
percentages of transfer time, "—" for a missing value) and the Grid that feeds both the
terminal and the HTML tables (profile_table.py, profile_waits.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analysis.profile_values import fmt_time
from .html import DASH


def ftime(value: Any) -> str:
    return DASH if not isinstance(value, (int, float)) else fmt_time(float(value))


def fpct(value: Any) -> str:
    return DASH if not isinstance(value, (int, float)) else f"{value:.1f}"


def frange(lo: Any, hi: Any) -> str:
    """'29.2–98.5' (percent), '—' when undefined."""
    if not isinstance(lo, (int, float)) or not isinstance(hi, (int, float)):
        return DASH
    return f"{lo:.1f}–{hi:.1f}"


def fint(value: Any) -> str:
    return DASH if not isinstance(value, (int, float)) else f"{int(value):,}"


def frank(value: Any) -> str:
    return DASH if value is None else str(value)


@dataclass(frozen=True)
class Grid:
    """A table of formatted cells; `left` marks the text columns (the rest are numbers)."""

    caption: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]
    left: tuple[int, ...] = (0,)
    note: str | None = None
    footnotes: list[str] = field(default_factory=list)
    highlight: tuple[int, ...] = ()  # row indices to emphasise (the worst rank)
    on_page: tuple[int, ...] | None = None  # rows the HTML page shows (None: all; CSV: all)
