"""The profile report's tables: the Grid that feeds both the terminal and the HTML tables
(profile_table.py, profile_waits.py), and the count and rank cells; times, percentages
and ranges print through formatting.py, "—" for a missing value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.formatting import DASH

# Where the rows a table leaves out in the terminal can be read.
ALL_ON_PAGE = "report.html lists all"


def top_rows(entries: list[Any], limit: int | None,
             rest: str = ALL_ON_PAGE) -> tuple[list[Any], str | None]:
    """The first `limit` entries and the note on the others ("top 10 of 27; report.html
    lists all"); every entry and None when they fit or there is no limit."""
    if limit is None or len(entries) <= limit:
        return entries, None
    return entries[:limit], f"top {limit} of {len(entries)}; {rest}"


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
