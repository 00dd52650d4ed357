"""The profile report's tables: the Grid that feeds both the terminal and the HTML tables
(profile_table.py, profile_waits.py), and the count and rank cells; times, percentages
and ranges print through formatting.py, "—" for a missing value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..formatting import DASH


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
