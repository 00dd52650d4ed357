"""The report's view of --launches: per group of launches (run.json "replicate"), every
replicated quantity with each launch's value and own interval, the between-launch
interval and the verdict (analysis/replication.py), in the terminal, HTML and JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console

from ..analysis.replication import Extract, replicate
from ..core.formatting import DASH, fmt_num, fmt_with_ci
from ..core.termsafe import Table
from ..run.rundir import Run
from .html import HtmlTable, Section


def groups(runs: list[Run]) -> list[list[Run]]:
    """The runs that are launches of one group, in launch order; groups of two or more."""
    by: dict[str, list[Run]] = {}
    for run in runs:
        tag = run.meta.get("replicate")
        if isinstance(tag, dict) and tag.get("group"):
            by.setdefault(str(tag["group"]), []).append(run)
    return [sorted(g, key=lambda r: int(r.meta["replicate"].get("index", 0)))
            for g in by.values() if len(g) > 1]


# A benchmark's name -> its package's finer replicated quantities (discovery.replicated,
# handed in by the report's maker: the kit does not look benchmarks up).
ExtractFor = Callable[[str], Extract | None]


def group_json(group: list[Run], extract_for: ExtractFor) -> dict[str, Any]:
    """The replication of one group, with what the machine said about each launch."""
    first = group[0]
    out = replicate(first.benchmark, [r.analysis for r in group],
                    extract_for(first.benchmark))
    out.update(group=first.meta["replicate"]["group"],
               label=str(first.meta["replicate"].get("label") or first.toolchain),
               runs=[str(r.path) for r in group],
               launch_guard=[(r.meta.get("guard") or {}).get("verdict") for r in group])
    return out


def to_json(runs: list[Run], extract_for: ExtractFor) -> list[dict[str, Any]]:
    return [group_json(g, extract_for) for g in groups(runs)]


def _cell(p: dict[str, Any] | None) -> str:
    if p is None or p.get("value") is None:
        return DASH
    text = fmt_with_ci(p["value"], p.get("ci95_low"), p.get("ci95_high"),
                       lambda v: fmt_num(v, ".4g"))
    if p.get("verdict") not in (None, "ok"):
        text += f" ({p['verdict']})"
    return text


def _headers(doc: dict[str, Any]) -> tuple[str, ...]:
    return ("quantity", *[f"launch {i + 1}" for i in range(doc["launches"])],
            "median", "between launches", "verdict")


def _rows(doc: dict[str, Any]) -> list[tuple[str, ...]]:
    rows = []
    for q in doc["quantities"]:
        if not q["n"]:
            continue  # no launch gave it (kept in the JSON)
        unit = f" [{q['unit']}]" if q["unit"] else ""
        between = (DASH if q["between_low"] is None else
                   f"{fmt_num(q['between_low'], '.4g')}–{fmt_num(q['between_high'], '.4g')}")
        verdict = q["verdict"] + (f": {q['reason']}" if q["verdict"] == "unstable" else "")
        rows.append((q["label"] + unit, *[_cell(p) for p in q["launches"]],
                     fmt_num(q["value"], ".4g"), between, verdict))
    return rows


def _title(doc: dict[str, Any]) -> str:
    return f"Replication: {doc['benchmark']} on {doc['label']}, {doc['launches']} launches"


def _intro(doc: dict[str, Any]) -> str:
    guards = [g or "unknown" for g in doc["launch_guard"]]
    machine = ("" if all(g == "ok" for g in guards)
               else f" The machine during the launches: {', '.join(guards)}.")
    return (f"{doc['finding']}. Each launch's value with its own 95 % interval; 'between "
            "launches' is the Student-t 95 % interval of their mean (widened to hold every "
            "launch); unstable: two launches' own intervals are disjoint, their verdicts "
            f"differ, or (without own intervals) their values spread widely.{machine}")


def sections(runs: list[Run], extract_for: ExtractFor) -> list[Section]:
    out = []
    for doc in to_json(runs, extract_for):
        headers = _headers(doc)
        rows = _rows(doc)
        css = [("left",) + ("num",) * (len(headers) - 2) + ("left",)] * len(rows)
        out.append(Section(_title(doc), _intro(doc), [],
                           [HtmlTable(f"{doc['benchmark']}: launch against launch", headers,
                                      rows, css)]))
    return out


def print_terminal(runs: list[Run], console: Console, extract_for: ExtractFor) -> None:
    for doc in to_json(runs, extract_for):
        t = Table(title=_title(doc), title_justify="left", header_style="bold")
        for i, h in enumerate(_headers(doc)):
            t.add_column(h, justify="left" if i == 0 or h == "verdict" else "right")
        for row in _rows(doc):
            t.add_row(*row)
        console.print(t)
        console.print(doc["finding"], markup=False, highlight=False)


__all__ = ["group_json", "groups", "print_terminal", "sections", "to_json"]
