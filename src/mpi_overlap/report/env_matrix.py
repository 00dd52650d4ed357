"""The settings-matrix view: runs of one benchmark on one toolchain that differ only in
their environment settings (`--env-matrix`), side by side.

Rows are the headline figures each analysis lists under "figures" (name, label, value,
unit, kind: overlap / cost / info), so the overlap a setting gains and what it costs (a
progress thread's latency penalty, say) sit next to each other; every non-baseline cell
also gives its change against the first variant. Benchmarks without "figures" show
their one-line finding per variant only.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ..core.formatting import DASH, fmt_num
from ..core.termsafe import Table
from ..run.rundir import Run
from .html import HtmlTable, Section

KIND_ORDER = {"overlap": 0, "cost": 1, "info": 2}


def _env(run: Run) -> dict[str, str]:
    return dict(run.meta.get("env_overrides") or {})


def matrix_groups(runs: list[Run]) -> list[list[Run]]:
    """Groups of ≥ 2 runs of one benchmark and toolchain whose settings differ, in run
    order (the first run is the baseline)."""
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.benchmark, run.toolchain), []).append(run)
    return [g for g in groups.values()
            if len(g) > 1 and len({tuple(sorted(_env(r).items())) for r in g}) > 1]


def _figures(run: Run) -> dict[str, dict[str, Any]]:
    figs = (run.analysis or {}).get("figures") or []
    return {f["name"]: f for f in figs if isinstance(f, dict) and f.get("name")}


def _change(value: Any, base: Any) -> str:
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, base))
    if not ok or base == value:
        return ""
    if base == 0:
        return f" ({value - base:+.3g})"
    ratio = value / base
    if ratio >= 10.0 or 0.0 < ratio <= 0.1:  # a percentage like +263255 % reads badly
        return f" (×{ratio:.3g})"
    return f" ({100.0 * (value - base) / abs(base):+.0f} %)"


def matrix_rows(group: list[Run]) -> list[tuple[str, ...]]:
    """One row per figure: label [unit], kind, then one cell per variant."""
    per_run = [_figures(r) for r in group]
    names: list[str] = []
    for figs in per_run:
        names += [n for n in figs if n not in names]
    names.sort(key=lambda n: KIND_ORDER.get(
        next((f[n].get("kind") for f in per_run if n in f), "info"), 3))
    rows = []
    for name in names:
        first = next(f[name] for f in per_run if name in f)
        unit = first.get("unit") or ""
        label = f"{first.get('label') or name}" + (f" [{unit}]" if unit else "")
        base = per_run[0].get(name, {}).get("value")
        cells = []
        for i, figs in enumerate(per_run):
            value = figs.get(name, {}).get("value")
            text = fmt_num(value, ".4g", missing=DASH if value is None else str(value))
            cells.append(text + ("" if i == 0 else _change(value, base)))
        rows.append((label, str(first.get("kind") or "info"), *cells))
    rows.append(("finding", "", *[str((r.analysis or {}).get("finding") or r.status)
                                  for r in group]))
    return rows


def _headers(group: list[Run]) -> tuple[str, ...]:
    return ("figure", "kind", *[r.label for r in group])


def sections(runs: list[Run]) -> list[Section]:
    out = []
    for group in matrix_groups(runs):
        rows = matrix_rows(group)
        base = group[0].label
        n = len(_headers(group))
        out.append(Section(
            f"Settings matrix: {group[0].benchmark} on {group[0].toolchain}",
            f"The same benchmark under {len(group)} environment settings. Cells after the "
            f"first variant give the change against {base}; 'overlap' rows are what a "
            "setting gains, 'cost' rows what it costs.",
            [],
            [HtmlTable(f"{group[0].benchmark}: figures per setting", _headers(group), rows,
                       [("left", "left") + ("num",) * (n - 2)] * (len(rows) - 1)
                       + [("left",) * n])],
        ))
    return out


def print_terminal(runs: list[Run], console: Console) -> None:
    for group in matrix_groups(runs):
        t = Table(title=f"Settings matrix — {group[0].benchmark} on {group[0].toolchain}",
                  title_justify="left", header_style="bold")
        for i, h in enumerate(_headers(group)):
            t.add_column(h, justify="left" if i < 2 else "right")
        for row in matrix_rows(group):
            t.add_row(*row)
        console.print(t)
