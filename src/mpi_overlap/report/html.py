"""The HTML side of the report: generic building blocks and the page renderer.

Benchmark modules hand over `Section`s (figures as inline SVG, tables as preformatted
cells); this module adds what every run has regardless of benchmark (status banners,
provenance) and renders templates/report.html.j2. It knows nothing about any one
benchmark, so a new benchmark only has to produce Sections.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..calibration.table_note import sentence
from ..core.formatting import DASH, fmt_num
from ..core.paths import state_dir
from ..run.run_guard import withheld_sentence
from ..run.rundir import Run

TEMPLATE_DIR = Path(__file__).parent / "templates"
TEMPLATE_NAME = "report.html.j2"


@dataclass(frozen=True)
class Banner:
    """A one-line notice about a run; level is 'error', 'warn' or 'info' (sets the colour)."""

    level: str
    text: str


@dataclass(frozen=True)
class HtmlTable:
    """A table whose cells are already formatted text; `css` holds one class per cell."""

    caption: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]
    css: list[tuple[str, ...]]
    footnotes: list[str] = field(default_factory=list)
    note: str | None = None
    # The rows the page shows (indices into rows; None: all). The CSV of the table has
    # every row: a table of thousands of ranks is data for scripts, not for a page.
    on_page: tuple[int, ...] | None = None

    @property
    def page_rows(self) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """(cells, their css classes) of the rows the page shows."""
        shown = range(len(self.rows)) if self.on_page is None else self.on_page
        return [(self.rows[i], self.css[i]) for i in shown]

    @property
    def header_css(self) -> tuple[str, ...]:
        """Headers align with their column: left for text columns, right for numbers."""
        first = self.css[0] if self.css else ("left",) + ("num",) * (len(self.headers) - 1)
        return tuple("num" if c == "num" else "left" for c in first)


@dataclass(frozen=True)
class Figure:
    """An SVG document (string, no XML prolog) and the sentence that explains it."""

    svg: str
    caption: str


@dataclass(frozen=True)
class Section:
    title: str
    intro: str | None = None
    figures: list[Figure] = field(default_factory=list)
    tables: list[HtmlTable] = field(default_factory=list)
    anchor: str | None = None  # the heading's id, for links and screenshots


@dataclass(frozen=True)
class Answer:
    """What a run's report opens with, before the contents (a benchmark's `answer`):
    sentences for the terminal and the page, tables for the page; `notices` are the
    run's warnings and errors, which qualify the answer and so stand beside it."""

    label: str
    sentences: list[str]
    tables: list[HtmlTable] = field(default_factory=list)
    notices: list[Banner] = field(default_factory=list)


@dataclass(frozen=True)
class RunView:
    """Everything the template shows about one run, apart from benchmark sections."""

    label: str
    path: str
    benchmark: str
    status: str
    summary: list[str]
    banners: list[Banner]
    provenance: list[tuple[str, str]]
    warnings: list[str]


def _get(d: Any, *keys: str) -> Any:
    """Nested lookup that tolerates missing keys and non-dict levels (partial files)."""
    for key in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _text(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return DASH
    return str(value)


def run_banners(run: Run, extent: str | None) -> list[Banner]:
    """Notices about how complete a run is and what is missing from it.

    `extent` is the benchmark's own words for what the results cover (e.g. "results up
    to 256 KiB"); it is what makes an incomplete banner useful, so it is passed in.
    """
    banners: list[Banner] = []
    result_status = _get(run.result, "status")
    reasons = []
    if run.status != "complete":
        msg = run.meta.get("message")
        reasons.append(f"run status {run.status}" + (f": {msg}" if msg else ""))
    if result_status == "running":
        reasons.append("result.json was left 'running' (the benchmark was cut short)")
    if reasons and run.result is not None:
        level = "error" if run.status == "failed" else "warn"
        what = extent or "partial results"
        banners.append(Banner(level, f"incomplete: {what} — {'; '.join(reasons)}"))
    elif reasons:
        banners.append(Banner("error", f"no results — {'; '.join(reasons)}"))
    banners.extend(Banner("error", problem) for problem in run.problems)
    if run.result is not None and run.analysis is None:
        banners.append(
            Banner(
                "warn",
                "analysis.json missing: no fitted estimates or verdicts, "
                "only what result.json holds",
            )
        )
    if _get(run.result, "harness", "work", "stable") is False:
        banners.append(
            Banner(
                "warn",
                "work rate was not stable during the run: work times, and so "
                "overhead and availability, are less trustworthy",
            )
        )
    return banners + guard_banners(run.meta)


def guard_banners(meta: dict[str, Any]) -> list[Banner]:
    """The run-level verdict (run.json's guard, run_guard.py) and the transfer-time table a
    profiled run used (table_note.py) as notices."""
    guard = meta.get("guard") or {}
    over = guard.get("oversubscribed")
    out = []
    if over:  # the run guard's own sentence: the notice and the findings say one thing
        out.append(Banner("error", withheld_sentence(over)))
    if guard.get("disturbed"):
        out.append(Banner("warn", f"disturbed: {guard['disturbed']}"))
    table = sentence(meta.get("xfer_table"))
    if table:
        out.append(Banner(*table))
    return out


def _per_rank(values: Any) -> str:
    if not isinstance(values, list) or not values:
        return DASH
    return "\n".join(f"rank {i}: {v}" for i, v in enumerate(values))


def _env(env: Any) -> str:
    if not isinstance(env, dict) or not env:
        return "(none set)"
    return "\n".join(f"{k}={v}" for k, v in sorted(env.items()))


def _work_rate(work: Any) -> str:
    if not isinstance(work, dict):
        return DASH
    cal = work.get("calibration") or {}
    mean, stdev = cal.get("mean"), cal.get("stdev")
    spread = (
        f", calibration spread {100 * stdev / mean:.2f} % (n={cal.get('n')})"
        if isinstance(mean, (int, float)) and isinstance(stdev, (int, float)) and mean
        else ""
    )
    stable = {True: "stable", False: "NOT stable"}.get(work.get("stable"), "stability unknown")
    drift = work.get("drift")
    drift_txt = (
        f", drift by the end {100 * drift:+.2f} %" if isinstance(drift, (int, float)) else ""
    )
    return f"{fmt_num(work.get('units_per_us'), '.4g')} units/µs{spread}; {stable}{drift_txt}"


def _timer(timer: Any) -> str:
    if not isinstance(timer, dict):
        return DASH
    return (
        f"{timer.get('clock', '?')}: resolution {fmt_num(timer.get('resolution_ns'), 'g', ' ns')}, "
        f"measured tick {fmt_num(timer.get('measured_tick_ns'), 'g', ' ns')}, "
        f"read overhead {fmt_num(timer.get('read_overhead_ns'), 'g', ' ns')}"
    )


def provenance_items(run: Run) -> list[tuple[str, str]]:
    """(label, text) pairs describing where and how a run was measured.

    result.json (written by the benchmark itself) is preferred over run.json (written
    by the launcher) because it records what MPI actually reported at run time.
    """
    prov = _get(run.result, "provenance") or {}
    tc = run.meta.get("toolchain") or {}
    command = run.meta.get("command")
    elapsed = run.meta.get("elapsed_s")
    items = [
        ("Run directory", str(run.path)),
        ("Benchmark", run.benchmark),
        (
            "Toolchain",
            f"{tc.get('name', DASH)} ({tc.get('kind', '?')}); "
            f"mpicc {tc.get('mpicc', DASH)}; mpiexec {tc.get('mpiexec', DASH)}",
        ),
        ("MPI library", _text(prov.get("mpi_library_version") or tc.get("mpi_library_version"))),
        ("MPI standard", _text(prov.get("mpi_standard_version"))),
        ("Compiler", _text(prov.get("compiler"))),
        ("Ranks", _text(prov.get("ranks") or run.meta.get("ranks"))),
        ("Hosts", _per_rank(prov.get("hosts"))),
        ("CPU binding", _per_rank(prov.get("cpu_binding"))),
        ("MPI environment", _env(prov.get("mpi_env"))),
        ("Environment overrides", _env(run.meta.get("env_overrides"))),
        ("Launcher", _text(prov.get("launcher"))),
        ("Command", shlex.join(command) if isinstance(command, list) else DASH),
        ("Date (UTC)", _text(prov.get("date_utc") or run.meta.get("started_utc"))),
        (
            "Run time",
            f"{run.meta.get('started_utc', DASH)} → {_text(run.meta.get('finished_utc'))}"
            + (f" ({elapsed:.1f} s)" if isinstance(elapsed, (int, float)) else ""),
        ),
        ("Run status", f"{run.status}; result.json {_text(_get(run.result, 'status'))}"),
        ("Tool version", _text(prov.get("tool_version"))),
        ("Timer", _timer(_get(run.result, "harness", "timer"))),
        ("Work rate", _work_rate(_get(run.result, "harness", "work"))),
    ]
    options = _get(run.result, "harness", "options")
    if isinstance(options, dict) and options:
        items.append(("Benchmark options", json.dumps(options, sort_keys=True)))
    method = _get(run.analysis, "method")
    if isinstance(method, dict):
        items.append(("Analysis method", json.dumps(method, sort_keys=True)))
    return items


def run_warnings(run: Run) -> list[str]:
    warnings = _get(run.result, "warnings")
    return [str(w) for w in warnings] if isinstance(warnings, list) else []


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """The page template compiled once per version of it (jinja2 checks the source's
    checksum), under the state folder: compiling it took 0.1–0.2 s of every report, a
    tenth of what `profile` may add to its program (issue 38). A cache that cannot be
    written is only slower."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    folder = state_dir() / "cache" / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _TemplateCache(str(folder))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,  # run files hold user-controlled strings (labels, env vars)
        undefined=jinja2.StrictUndefined,  # a template typo should fail loudly, not blank out
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_bytecode_cache(),
    )
    return env


def _safe(section: Section) -> Section:
    """SVGs are trusted (we made them) and marked safe; the template escapes the rest."""
    return Section(
        title=section.title,
        intro=section.intro,
        figures=[Figure(svg=Markup(f.svg), caption=f.caption) for f in section.figures],
        tables=section.tables,
        anchor=section.anchor,
    )


def render_html(
    *, title: str, generated: str, tool_version: str, runs: list[RunView], sections: list[Section],
    top_sections: list[Section] | None = None, answers: list[Answer] | None = None,
) -> str:
    """Render the whole page: the answers, top_sections (a summary card), the contents,
    the sections, the run cards, the provenance."""
    template = _environment().get_template(TEMPLATE_NAME)
    return template.render(
        title=title,
        generated=generated,
        tool_version=tool_version,
        runs=runs,
        top_sections=[_safe(s) for s in top_sections or []],
        answers=answers or [],
        sections=[_safe(s) for s in sections],
        dash=DASH,
    )
