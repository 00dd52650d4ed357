"""`--launches K`: each benchmark run K times as separate launches, settings alternating.

A run's intervals cover its own launch; whether a figure is reproducible is a question
only separate launches answer (analysis/replication.py compares them). K defaults to 3
for full runs and 1 under --quick (a quick run stays one launch). With an --env-matrix
the launches alternate between the settings (A B A B A B, not A A A B B B), so a drift
of the machine during the session does not pass for the effect of a setting.

Like the matrix, the user's K is bound around the command (`bound`) and read where the
runs are made (`count`). Every launch of a group is tagged in its run.json
("replicate": group, index, of, label) so that a report finds its siblings.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from ..core.bound_setting import bound_to
from ..core.errors import UserError
from .env_matrix import Variant
from .runner import RunOptions

FULL_DEFAULT = 3
QUICK_DEFAULT = 1
MAX_LAUNCHES = 20

T = TypeVar("T")

_current: ContextVar[int | None] = ContextVar("launches", default=None)


def check(launches: int | None) -> int | None:
    if launches is not None and not 1 <= launches <= MAX_LAUNCHES:
        raise UserError(f"--launches must be between 1 and {MAX_LAUNCHES} (got {launches})")
    return launches


def bound(launches: int | None) -> AbstractContextManager[int | None]:
    """Make the user's --launches (None: the default) current inside the block."""
    return bound_to(_current, check(launches))


def count(quick: bool) -> int:
    """K for the running command: the user's, else 1 under --quick and 3 otherwise."""
    given = _current.get()
    return given if given is not None else (QUICK_DEFAULT if quick else FULL_DEFAULT)


def plan(settings: list[T], launches: int) -> list[tuple[int, T]]:
    """(launch index from 1, setting) in run order: the settings alternate."""
    return [(i + 1, s) for i in range(launches) for s in settings]


@dataclass(frozen=True)
class PlannedRun:
    variant: Variant
    label: str | None  # None: the toolchain's name
    replicate: dict[str, Any] | None  # run.json's "replicate"; None for a single launch

    def options(self, *, ranks: int, launcher: str | None, timeout_s: float | None,
                out_base: Path, quick: bool = False) -> RunOptions:
        """The run's options: the setting's environment, its label and its tag."""
        return RunOptions(ranks=ranks, launcher=launcher, timeout_s=timeout_s,
                          out_base=out_base, label=self.label,
                          env_overrides=self.variant.overrides, replicate=self.replicate,
                          quick=quick)


def runs(benchmark: str, toolchain: str, variants: list[Variant],
         launches: int) -> list[PlannedRun]:
    """The runs of one benchmark on one toolchain in order: each setting `launches` times,
    alternating; a label names the setting and, with several launches, which one."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out = []
    for index, (i, variant) in plan(list(enumerate(variants)), launches):
        base = variant.label(toolchain)
        tag = None if launches < 2 else {
            "group": f"{stamp}-{benchmark}-{toolchain}-s{i}", "index": index, "of": launches,
            "label": base}
        label = f"{base} launch {index}/{launches}" if tag else base if variant.env else None
        out.append(PlannedRun(variant, label, tag))
    return out


__all__ = ["FULL_DEFAULT", "QUICK_DEFAULT", "PlannedRun", "bound", "count", "plan", "runs"]
