"""Report: turn one or more run directories into a terminal view, report.html and report.json.

Each benchmark plugs in through a `BenchmarkReporter` in the registry below; the rest
(banners, provenance, page layout, the JSON envelope) is shared. Adding a benchmark
means writing its modules and one `register(...)` call, nothing else changes.
Runs of unknown benchmarks, or without analysis, still get their provenance and a
banner saying what is missing.

This module sits above the benchmarks and the profile, whose reports it puts together;
the parts they are made of (the page, tables, figures, CSV) are the kit in report/, which
imports neither.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..benchmarks.discovery import replicated, spec_of, specs
from ..core import verbosity
from ..core.file_output import WriteError
from ..core.termsafe import SafeConsole, safe
from ..core.version import version
from ..predict import report_section
from ..profile.report import profile_answer, profile_checks, profile_plots, profile_table
from ..report import env_matrix, replication
from ..report.csv_tables import write_csv_tables
from ..report.html import (
    Answer,
    Banner,
    RunView,
    Section,
    provenance_items,
    render_html,
    run_banners,
    run_warnings,
)
from ..run.rundir import Run, utc_now, write_json_atomic, write_text_atomic

__all__ = ["BenchmarkReporter", "ReportPaths", "make_report", "register"]

HTML_FILE = "report.html"
JSON_FILE = "report.json"
BANNER_STYLE = {"error": "bold red", "warn": "yellow", "info": "cyan"}


@dataclass(frozen=True)
class BenchmarkReporter:
    """What a benchmark contributes to a report. Every callable gets only its own runs."""

    name: str
    terminal: Callable[[Run, Console], None]  # tables for one run
    terminal_all: Callable[[list[Run], Console], None]  # cross-run views (comparison)
    sections: tuple[Callable[[list[Run]], list[Section]], ...]  # HTML, in page order
    summary: Callable[[Run], list[str]]  # sentences computed from the data
    extent: Callable[[Run], str | None]  # what partial results cover, for banners
    to_json: Callable[[Run], dict[str, Any]]  # the report.json block
    # what the report opens with, before the contents (headline, advice, where to act)
    answer: Callable[[Run], Answer | None] | None = None


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    json: Path

    def lines(self, *, with_json: bool = True) -> list[str]:
        """Where the report is, both paths absolute (one way of printing them)."""
        out = [f"HTML report: {self.html.resolve()}"]
        return out + ([f"JSON summary: {self.json.resolve()}"] if with_json else [])


_REGISTRY: dict[str, BenchmarkReporter] = {}


def register(reporter: BenchmarkReporter) -> None:
    _REGISTRY[reporter.name] = reporter


@cache
def reporters() -> dict[str, BenchmarkReporter]:
    """Every reporter by benchmark: those registered below, and the benchmark packages'
    report modules (discovery.py), added on first use: a package's report module imports
    this package's parts, so it cannot be imported while this module is."""
    for spec in specs():
        reporter_of(spec.name)
    return _REGISTRY


def reporter_of(name: str) -> BenchmarkReporter | None:
    """The reporter of benchmark `name`, its package's report module imported only now: a
    profile's report needs none of the sixteen others (numpy, and matplotlib when they drew
    with it: about 1 s of
    `profile`'s start-up, issue 38)."""
    if name not in _REGISTRY:
        spec = spec_of(name)
        if spec is None or spec.benchmark.analyze is None:  # no analysis: provenance only
            return None
        register(_module_reporter(spec.name, spec.module("report"), *spec.section_functions()))
    return _REGISTRY[name]


def _module_reporter(
    name: str, module: Any, *sections: Callable[[list[Run]], list[Section]]
) -> BenchmarkReporter:
    """The reporter of a report module with the usual functions (print_run,
    print_comparison, summary, extent, to_json); its HTML sections in page order, by
    default its html_sections."""
    return BenchmarkReporter(
        name=name,
        terminal=module.print_run,
        terminal_all=module.print_comparison,
        sections=sections or (module.html_sections,),
        summary=module.summary,
        extent=module.extent,
        to_json=module.to_json,
    )


# Profiles: the overlap tables, then the checks on the bounds (terminal, HTML, JSON).
register(
    replace(
        _module_reporter(
            profile_table.BENCHMARK,
            profile_table,
            profile_plots.sections,
            profile_table.html_sections,
            profile_checks.html_sections,
            report_section.html_sections,
        ),
        terminal=profile_checks.print_run,
        to_json=report_section.to_json,
        answer=profile_answer.answer,
    )
)


def _banners(run: Run) -> list[Banner]:
    reporter = reporter_of(run.benchmark)
    banners = run_banners(run, reporter.extent(run) if reporter else None)
    if reporter is None:
        banners.append(
            Banner(
                "info",
                f"no report module for benchmark '{run.benchmark}': only provenance is shown",
            )
        )
    return banners


def _summary(run: Run) -> list[str]:
    reporter = reporter_of(run.benchmark)
    return reporter.summary(run) if reporter else []


def _answer(run: Run, banners: list[Banner]) -> Answer | None:
    """The run's answer with the notices that qualify it (warnings and errors); a
    sentence a notice already says (an oversubscribed run's withheld figure) is not said
    twice."""
    reporter = reporter_of(run.benchmark)
    found = reporter.answer(run) if reporter and reporter.answer else None
    if found is None:
        return None
    notices = [b for b in banners if b.level in ("error", "warn")]
    said = {b.text for b in notices}
    return replace(found, notices=notices,
                   sentences=[s for s in found.sentences if s not in said])


def _summary_below(run: Run, banners: list[Banner], answer: Answer | None = None) -> list[str]:
    """The sentences shown under the run's notices: one a notice already says (the run
    guard's, run_guard.py, which is also an oversubscribed run's only finding) or the
    answer already gave is not said twice. report.json keeps every sentence."""
    said = {b.text for b in banners} | set(answer.sentences if answer else ())
    return [s for s in _summary(run) if s not in said]


@dataclass(frozen=True)
class _Told:
    """What the report says of one run before its tables, worked out once for the page
    and the terminal: its notices, its answer, and the rest of its sentences."""

    banners: list[Banner]
    answer: Answer | None
    below: list[str]


def _told(run: Run) -> _Told:
    banners = _banners(run)
    answer = _answer(run, banners)
    return _Told(banners, answer, _summary_below(run, banners, answer))


def _by_benchmark(runs: list[Run]) -> list[tuple[BenchmarkReporter, list[Run]]]:
    """The runs by benchmark, each group with its benchmark's reporter (a benchmark
    without one left out), in the order the runs first name them."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.benchmark, []).append(run)
    return [(reporter, group) for name, group in groups.items()
            if (reporter := reporter_of(name)) is not None]


def print_terminal(runs: list[Run], console: Console, *, keep_going: bool = False,
                   told: dict[int, _Told] | None = None) -> None:
    """Every run's banners, sentences and tables, then the cross-run views; keep_going: a
    reporter that fails on a run prints one line saying so instead of failing; `told`:
    what make_report already worked out per run (by id), else worked out here."""
    for run in runs:
        console.rule(Text(safe(f"{run.label} · {run.benchmark} · {run.path}"), style="bold"))
        said = told[id(run)] if told is not None else _told(run)
        for banner in said.banners:
            console.print(Text(safe(banner.text), style=BANNER_STYLE.get(banner.level, "")))
        # the answer first (headline, checks, advice), then the rest of what the run says
        for sentence in [*(said.answer.sentences if said.answer else ()), *said.below]:
            console.print(safe(sentence), markup=False, highlight=False)
        reporter = reporter_of(run.benchmark)
        if reporter is not None and (run.result is not None or run.analysis is not None):
            _guarded(keep_going, console, run.benchmark, reporter.terminal, run, console)
    for reporter, group in _by_benchmark(runs):
        _guarded(keep_going, console, reporter.name, reporter.terminal_all, group, console)
    env_matrix.print_terminal(runs, console)
    replication.print_terminal(runs, console, replicated)


def _guarded(keep_going: bool, console: Console, name: str, fn: Callable[..., None],
             *args: Any) -> None:
    if not keep_going:
        fn(*args)
        return
    try:
        fn(*args)
    except Exception as err:  # a malformed document from elsewhere: say so, go on
        console.print(safe(f"{name}: terminal report failed: {type(err).__name__}: {err}"),
                      markup=False, highlight=False)


def run_entry(run: Run) -> dict[str, Any]:
    """One run's entry in report.json's "runs" (what the report says of it, as data)."""
    result = run.result or {}
    harness = result.get("harness") or {}
    reporter = reporter_of(run.benchmark)
    meta_keys = (
        "run_id",
        "label",
        "toolchain",
        "ranks",
        "command",
        "env_overrides",
        "started_utc",
        "finished_utc",
        "elapsed_s",
        "returncode",
        "message",
        "guard",
        "replicate",
    )
    return {
        "label": run.label,
        "path": str(run.path),
        "benchmark": run.benchmark,
        "toolchain": run.toolchain,
        "run_status": run.status,
        "result_status": result.get("status"),
        "complete": run.complete,
        "has_analysis": run.analysis is not None,
        "notices": [{"level": b.level, "text": b.text} for b in _banners(run)],
        "summary": _summary(run),
        "run": {k: run.meta.get(k) for k in meta_keys if k in run.meta},
        "provenance": result.get("provenance"),
        "timer": harness.get("timer"),
        "work": harness.get("work"),
        "warnings": result.get("warnings") or [],
        "results": reporter.to_json(run) if reporter else None,
    }


def _title(runs: list[Run]) -> str:
    benchmarks = sorted({r.benchmark for r in runs})
    return f"mpi-overlap report: {', '.join(benchmarks) or 'no runs'}"


def _disambiguate_labels(runs: list[Run]) -> None:
    """Runs sharing a label (the same toolchain twice) become 'mpich', 'mpich #2', ...
    once, here, so that every table, plot and card names a run the same way whatever
    subset of the runs it shows. Only the in-memory label changes, not run.json."""
    seen: dict[tuple[str, str], int] = {}
    for run in runs:
        label = run.label
        key = (run.benchmark, label)  # runs of different benchmarks (a suite) may share one
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            run.meta["label"] = f"{label} #{seen[key]}"


def _safe_sections(provider: Callable[[list[Run]], list[Section]], name: str,
                   group: list[Run]) -> list[Section]:
    """A reporter that fails on some run gives an error section instead of no report."""
    try:
        return provider(group)
    except Exception as err:  # a report of many benchmarks (a suite) must still appear
        return [Section(f"{name}: report failed", f"{type(err).__name__}: {err}")]


def make_report(
    runs: list[Run],
    out_dir: Path,
    *,
    console: Console | None = None,
    lead_sections: list[Section] | None = None,
    top_sections: list[Section] | None = None,
    title: str | None = None,
    extra: dict[str, Any] | None = None,
    keep_going: bool = False,
    print_tables: bool | None = None,
) -> ReportPaths:
    """Write report.html and report.json into out_dir, then print the terminal tables
    (print_tables; None: unless the command is --quiet; the report holds them either way).
    `top_sections` come before the run cards (a summary card), `lead_sections` first
    among the sections (a suite's summary), `extra` joins report.json's top level;
    keep_going: a reporter that fails gives an error section instead of failing the report."""
    _disambiguate_labels(runs)
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError(out_dir, err) from None
    generated = utc_now()
    told = {id(run): _told(run) for run in runs}
    views = [
        RunView(
            label=run.label,
            path=str(run.path),
            benchmark=run.benchmark,
            status=run.status,
            summary=told[id(run)].below,
            banners=told[id(run)].banners,
            provenance=provenance_items(run),
            warnings=run_warnings(run),
        )
        for run in runs
    ]
    sections = list(lead_sections or []) + env_matrix.sections(runs) + replication.sections(
        runs, replicated) + [
        section
        for reporter, group in _by_benchmark(runs)
        for provider in reporter.sections
        for section in (_safe_sections(provider, reporter.name, group) if keep_going
                        else provider(group))
    ]
    html_path, json_path = out_dir / HTML_FILE, out_dir / JSON_FILE
    write_text_atomic(
        html_path,
        render_html(
            title=title or _title(runs),
            generated=generated,
            tool_version=version(),
            runs=views,
            sections=sections,
            top_sections=top_sections,
            answers=[t.answer for t in told.values() if t.answer is not None],
        ),
    )
    # after the page (the report people open first), before report.json, which lists them
    tables = write_csv_tables([*(top_sections or []), *sections], out_dir)
    write_json_atomic(
        json_path,
        {
            "schema": "mpi-overlap/report",
            "schema_version": 1,
            "generated_utc": generated,
            "tool_version": version(),
            "runs": [run_entry(run) for run in runs],
            "replication": replication.to_json(runs, replicated),
            "tables": tables,
            **(extra or {}),
        },
    )
    # The terminal last: a reader who closes it early (`| head`) still gets the files.
    if print_tables if print_tables is not None else not verbosity.quiet():
        print_terminal(runs, console or SafeConsole(), keep_going=keep_going, told=told)
    return ReportPaths(html=html_path, json=json_path)
