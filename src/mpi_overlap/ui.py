"""Terminal feedback: progress bars for builds and runs, short status lines.

Kept apart so that the runner and build code take plain callbacks and stay testable
without a terminal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from .launch import ProgressFn


class Ui:
    def __init__(self, console: Console | None = None, quiet: bool = False) -> None:
        self.console = console or Console(stderr=True)
        self.quiet = quiet

    def info(self, message: str) -> None:
        if not self.quiet:
            self.console.print(message)

    def line(self, message: str) -> None:
        """One line as it is: not wrapped, no markup (file paths, figures, reasons)."""
        if not self.quiet:
            self.console.print(message, soft_wrap=True, markup=False, highlight=False)

    @contextmanager
    def progress(self, description: str) -> Iterator[ProgressFn]:
        """A progress bar fed by (done, total, label) callbacks."""
        if self.quiet:
            yield lambda done, total, label: None
            return
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[label]}"),
        )
        with Progress(*columns, console=self.console, transient=True) as bar:
            task = bar.add_task(description, total=None, label="")

            def update(done: int, total: int, label: str) -> None:
                bar.update(task, completed=done, total=max(total, 1), label=label)

            yield update
