"""Terminal views of toolchains and doctor findings (rich tables)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..core.errors import UserError
from ..core.termsafe import Table
from ..platform.toolchains import ensure_version, list_toolchains
from .doctor import Finding

_LEVEL_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "info": "cyan"}


def print_toolchains(console: Console, probe: bool = True) -> None:
    table = Table(title="MPI toolchains")
    for col in ("name", "kind", "library version", "mpicc", "mpiexec"):
        table.add_column(col)
    for tc in list_toolchains():
        version: str | Text = (tc.library_version or "not probed").splitlines()[0]
        if probe:
            try:
                version = (ensure_version(tc).library_version or "?").splitlines()[0]
            except UserError as err:
                version = Text(f"broken: {err}", style="red")
        table.add_row(
            tc.name + (" (default)" if tc.name == "mpich" else ""),
            tc.kind,
            version,
            tc.mpicc,
            tc.mpiexec,
        )
    console.print(table)


def print_findings(console: Console, findings: list[Finding]) -> None:
    table = Table(title="mpi-overlap doctor", show_lines=False)
    table.add_column("check")
    table.add_column("")
    table.add_column("seen")
    table.add_column("fix")
    for f in findings:
        style = _LEVEL_STYLE.get(f.level, "")
        table.add_row(f.item, Text(f.level, style=style), f.detail, f.fix)
    console.print(table)
