"""One line of the summary card as data (summary_card.py renders it): the benchmark it
reads and how its cell is made. Apart from the card so that the benchmarks' discovery,
which lists the lines, imports nothing of the page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Figures = dict[str, float | None]


@dataclass(frozen=True)
class CardItem:
    label: str
    benchmark: str
    # The cell from the run's figures; None: the run gave no number for it.
    render: Callable[[Figures], str | None] | None = None
    # Items that need more than figures (verdict ranges) read the analysis instead.
    from_analysis: Callable[[dict[str, Any]], str | None] | None = None
    # How much of the time was hidden or free, 0–100, for the cell's colour (GRADES);
    # None: the item is a cost or a fact, not coloured.
    share: Callable[[dict[str, Any]], float | None] | None = None
