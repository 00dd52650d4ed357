"""Terminal feedback: progress bars for builds and runs, short status lines.

Kept apart so that the runner and build code take plain callbacks and stay testable
without a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

from .termsafe import SafeConsole, safe

# (done, total, label): how builds, launches and suites report progress
ProgressFn = Callable[[int, int, str], None]


def progress_display(console: Console, *, quiet: bool = False) -> Progress:
    """The bars every command draws, erased when done: description, bar, n/m, time, label
    (the texts hold names and the labels programs print: never parsed as markup). None
    where `quiet`, nor on a file or a pipe: there rich draws nothing, yet its transient
    display leaves an empty line behind each bar (three in a `profile` run's stderr)."""
    columns: tuple[ProgressColumn, ...] = (
        TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("{task.fields[label]}", markup=False))
    return Progress(*columns, console=console, transient=True,
                    disable=quiet or not console.is_terminal)


class Ui:
    def __init__(self, console: Console | None = None, quiet: bool = False) -> None:
        self.console = console or SafeConsole(stderr=True)
        self.quiet = quiet

    def info(self, message: str) -> None:
        if not self.quiet:
            self.console.print(safe(message), markup=False)

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
        with progress_display(self.console) as bar:
            task = bar.add_task(description, total=None, label="")

            def update(done: int, total: int, label: str) -> None:
                bar.update(task, completed=done, total=max(total, 1), label=label)

            yield update
