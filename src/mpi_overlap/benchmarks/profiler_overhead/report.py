"""Profiler-overhead benchmark in the report: the ratios with their intervals and
verdicts (table), the ratio of every repetition against the target (figure), the pairs,
and what the profiled launches' profiles say (events, flushes).

Every figure comes from analysis.json; the per-launch numbers from result.json.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ...analysis.figures import resolved_text
from ...core.formatting import DASH, fmt_num
from ...core.termsafe import Table
from ...core.values import num
from ...report.html import Figure, HtmlTable, Section
from ...report.run_table import RunTable, no_notes
from ...report.summary_card import figure_entry
from ...report.svg_chart import Chart, Key, Panel, Ticks, fit_axes
from ...report.svg_plot import axes, axhline, axhspan, blend, colour, legend_key, plot
from ...run.rundir import Run
from .analysis import (
    callsite_sentence,
    default_path,
    engine_sentence,
    idle_sentence,
    per_launch_sentence,
    per_message_sentence,
    split_sentence,
)
from .app_cost import app_cost_sentence, app_figure_name

BENCHMARK = "profiler-overhead"
HEADERS = (
    "metric",
    "pairs used",
    "target",
    "n",
    "median ratio",
    "ratio [95 % CI]",
    "overhead %",
    "verdict",
)
SUBSETS = {"all": "all", "quiet": "undisturbed"}
TARGET_COLOUR = "#b03a00"
VERDICT_STYLE = {
    "meets target": "green",
    "misses target": "red",
    "inconclusive (CI spans the target)": "yellow",
    "inconclusive (fewer than 2 pairs)": "yellow",
    "no data": "red",
    "no target": "dim",
}
VERDICT_CSS = {
    "meets target": "v-ok",
    "misses target": "v-no-knee",
    "inconclusive (CI spans the target)": "v-noisy",
    "inconclusive (fewer than 2 pairs)": "v-noisy",
    "no data": "v-incomplete",
    "no target": "v-none",
}


def metrics(run: Run) -> list[dict[str, Any]]:
    return [m for m in (run.analysis or {}).get("metrics") or [] if isinstance(m, dict)]


def _target(m: dict[str, Any]) -> str:
    t = m.get("target")
    return f"{t['op']} {t['value']:g}" if isinstance(t, dict) else "—"


def subset(m: dict[str, Any], which: str) -> dict[str, Any]:
    """The estimate over all pairs (the metric itself) or over the undisturbed ones."""
    if which == "all":
        return m
    e = m.get(which)
    return e if isinstance(e, dict) else {}


def metric_row(m: dict[str, Any], which: str = "all") -> tuple[str, ...]:
    e = subset(m, which)
    lo, hi = num(e.get("ci95_low")), num(e.get("ci95_high"))
    ci = f" [{lo:.4f}–{hi:.4f}]" if lo is not None and hi is not None else ""
    over = num(e.get("overhead_pct"))
    return (
        f"{m.get('title', m.get('name'))} ({m.get('program')})",
        SUBSETS.get(which, which),
        _target(m),
        str(e.get("n", 0)),
        fmt_num(num(e.get("median")), ".4f"),
        fmt_num(num(e.get("geomean")), ".4f") + ci,
        fmt_num(over, "+.2f"),
        str(e.get("verdict", DASH)),
    )


def metric_rows(run: Run) -> list[tuple[str, tuple[str, ...]]]:
    """(verdict, cells) per metric, over all pairs and, where some were disturbed, over the
    undisturbed ones."""
    rows = []
    for m in metrics(run):
        for which in SUBSETS:
            e = subset(m, which)
            if which != "all" and e.get("n") == m.get("n"):
                continue
            rows.append((str(e.get("verdict")), metric_row(m, which)))
    return rows


def _launches(run: Run) -> dict[tuple[int, str, bool], dict[str, Any]]:
    """The launches of the ratios by (rep, program, profiled): the msgrate launches at other
    settings (call sites off, the other idle setting, events not processed) are their own
    figures' (callsite_sentence, idle_sentence, split_sentence), not a pair's."""
    out = {}
    for x in (run.result or {}).get("launches") or []:
        if not default_path(x):
            continue
        out[(int(x.get("rep", 0)), str(x.get("program")), bool(x.get("profiled")))] = x
    return out


def _as_sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def cost_lines(run: Run) -> list[str]:
    """What the profiler costs per message against its floor (analysis: per_message), what
    its call sites cost (analysis: callsites), each with its interval, what its event
    processing costs timed alone (analysis: engine), what a launch pays once (analysis:
    per_launch) and the mini-apps' cost inside one launch (analysis: apps), the last three
    in runs that measured them."""
    out = []
    for key, sentence in (("per_message", per_message_sentence),
                          ("callsites", callsite_sentence), ("idle", idle_sentence)):
        c = (run.analysis or {}).get(key)
        if isinstance(c, dict) and c.get("pairs"):
            out.append(_as_sentence(sentence(c)))
    engine = (run.analysis or {}).get("engine")
    split = (run.analysis or {}).get("split")
    if isinstance(split, dict) and split.get("pairs"):
        out.append(_as_sentence(split_sentence(split)))
    if isinstance(engine, dict):
        out.append(_as_sentence(engine_sentence(engine)))
    per_launch = (run.analysis or {}).get("per_launch")
    if isinstance(per_launch, dict):
        out.append(_as_sentence(per_launch_sentence(per_launch)))
    for app in (run.analysis or {}).get("apps") or []:
        out.append(_as_sentence(app_cost_sentence(app)))
    return out


PAIR_HEADERS = (
    "rep",
    "msgs/s without",
    "msgs/s with",
    "rate ratio",
    "run s without",
    "run s with",
    "time ratio",
    "events (with)",
    "flushes (with)",
    "disturbed",
)


def pair_rows(run: Run) -> list[tuple[str, ...]]:
    launches = _launches(run)
    reps = sorted({rep for rep, _, _ in launches if rep >= 1})
    rows = []
    for rep in reps:
        cells = [str(rep)]
        events = flushes = 0
        disturbed = [
            f"{'rate' if prog == 'msgrate' else 'time'} {'with' if prof else 'w/o'}"
            for (r, prog, prof), x in sorted(launches.items())
            if r == rep and x.get("disturbed")
        ]
        for program, fmt in (("msgrate", "{:,.0f}"), ("compute_app", "{:.4f}")):
            a, b = launches.get((rep, program, False)), launches.get((rep, program, True))
            va, vb = (num((x or {}).get("value")) for x in (a, b))
            cells += [
                DASH if va is None else fmt.format(va),
                DASH if vb is None else fmt.format(vb),
                DASH if va is None or vb is None or va == 0 else f"{vb / va:.4f}",
            ]
            prof = (b or {}).get("profile") or {}
            events += int(prof.get("events") or 0)
            flushes += int(prof.get("flushes") or 0)
        rows.append((*cells, f"{events:,}", f"{flushes:,}", ", ".join(disturbed) or DASH))
    return rows


def profile_sentence(run: Run) -> str | None:
    p = (run.analysis or {}).get("profiles")
    if not isinstance(p, dict) or not p.get("launches"):
        return None
    per_msg = num(p.get("rank0_events_per_message"))
    clocks = ", ".join(p.get("clocks") or []) or "unknown"
    return (
        f"Profiles: {p.get('complete')} of {p.get('launches')} profiled launches complete; "
        f"{p.get('events', 0):,} events processed in {p.get('flushes', 0):,} queue flushes "
        f"(clock {clocks})"
        + (f"; mo_msgrate rank 0: {per_msg:.2f} events per message" if per_msg else "")
        + "."
    )


# ---------------------------------------------------------------- terminal


def print_run(run: Run, console: Console) -> None:
    if run.analysis is None:
        console.print(Text("  no analysis.json: ratios not available", style="yellow"))
        return
    METRICS_TABLE.print(run, console)
    PAIRS_TABLE.print(run, console)
    for sentence in (*cost_lines(run), profile_sentence(run)):
        if sentence:
            console.print(sentence, highlight=False)


def _comparable(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.benchmark == BENCHMARK and r.analysis is not None]


def comparison(runs: list[Run]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    headers = ("run", "rate ratio [CI]", "rate verdict", "time ratio [CI]", "time verdict")
    rows = []
    for run in _comparable(runs):
        by = {m.get("name"): m for m in metrics(run)}
        cells = [run.label]
        for name in ("msg_rate", "run_time"):
            row = metric_row(by.get(name) or {})
            cells += [row[5], row[7]]
        rows.append(tuple(cells))
    return headers, rows


def print_comparison(runs: list[Run], console: Console) -> None:
    if len(_comparable(runs)) < 2:
        return
    headers, rows = comparison(runs)
    t = Table(title="Profiler overhead — comparison", title_justify="left", header_style="bold")
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i in (0, 2, 4) else "right")
    for row in rows:
        t.add_row(*row)
    console.print(t)


# ---------------------------------------------------------------- HTML


def _integer_ticks(ax: Panel) -> None:
    """Repetitions are whole numbers: only whole ticks (MaxNLocator(integer=True))."""
    if ax.xticks:
        kept = [v for v in ax.xticks.at if float(v).is_integer()]
        ax.xticks = Ticks(kept, [f"{v:.0f}" for v in kept], ax.xticks.size)


def ratio_figure(runs: list[Run]) -> Chart | None:
    """Per metric with a target: the ratio of every repetition, per run, with the target
    line, 1.0 (no overhead) and the geometric mean with its 95 % interval."""
    runs = _comparable(runs)
    panels = [
        ("msg_rate", "message-rate ratio (with / without)"),
        ("run_time", "run-time ratio (with / without)"),
    ]
    if not any(m.get("pairs") for r in runs for m in metrics(r)):
        return None
    drawn = []
    for name, ylabel in panels:
        ax = axes("repetition", ylabel, label_size=10)
        ax.ylabel_size, ax.grid = 9, "both"
        target = None
        for i, run in enumerate(runs):
            m = next((x for x in metrics(run) if x.get("name") == name), None)
            if m is None:
                continue
            offset = (i - (len(runs) - 1) / 2) * 0.12
            pairs = m.get("pairs") or []
            for disturbed in (False, True):
                these = [p for p in pairs if bool(p.get("disturbed")) == disturbed]
                plot(ax, [p["rep"] + offset for p in these], [p["ratio"] for p in these], "o",
                     i, ms=5, hollow=disturbed)
            geo, lo, hi = (num(m.get(k)) for k in ("geomean", "ci95_low", "ci95_high"))
            if geo is not None:
                axhline(ax, geo, i, lw=1.0)
            if lo is not None and hi is not None:
                axhspan(ax, lo, hi, i, alpha=0.12)
            if isinstance(m.get("target"), dict):
                target = m["target"]
        axhline(ax, 1.0, "0.5", lw=0.8, ls=":")
        if target is not None:
            axhline(ax, target["value"], TARGET_COLOUR, lw=1.2, ls="--")
        fit_axes(ax, size=10)
        _integer_ticks(ax)
        drawn.append(ax)
    keys = [legend_key(f"{r.label}: ratio per repetition; line = geometric mean", "-o", i)
            for i, r in enumerate(runs)]
    keys += [
        Key("95 % CI of the geometric mean", blend("0.5", 0.25)),
        legend_key("target (≥ 0.95 rate, ≤ 1.01 time)", "--", TARGET_COLOUR),
        legend_key("1.0 = no overhead", ":", "0.5"),
        Key("disturbed pair", colour("0.4"), "marker", marker="o", hollow=True, width=1.0),
    ]
    return Chart((10, 3.6), drawn, cols=2, legend=keys, legend_at="bottom")


def _metric_notes(run: Run) -> list[str]:
    notes = []
    for m in metrics(run):
        notes.append(f"{m.get('name')}: {m.get('reason')}")
        quiet = subset(m, "quiet")
        if quiet.get("n") != m.get("n"):
            notes.append(f"{m.get('name')}, undisturbed pairs: {quiet.get('reason')}")
    return notes + cost_lines(run)


# The metrics and their verdicts, and the pairs behind them (the pairs come from the
# result, so a run without an analysis shows them too); the terminal prints the cost
# sentences after both tables.
METRICS_TABLE = RunTable(
    "profiler overhead (ratio = with / without)", "ratios with / without the profiler",
    HEADERS, lambda run: [row for _, row in metric_rows(run)], (0, 1, 7), no_notes,
    _metric_notes, wrap=(0,),
    verdicts=lambda run: [(VERDICT_STYLE.get(v, ""), VERDICT_CSS.get(v, "v-none"))
                          for v, _ in metric_rows(run)])
PAIRS_TABLE = RunTable("pairs per repetition", "pairs per repetition", PAIR_HEADERS, pair_rows,
                       (PAIR_HEADERS.index("disturbed"),), no_notes, from_result=True)


def html_sections(runs: list[Run]) -> list[Section]:
    sections = []
    fig = ratio_figure(runs)
    if fig is not None:
        sections.append(
            Section(
                "Profiler overhead: ratio per repetition",
                None,
                [
                    Figure(
                        fig.svg(),
                        "Each point is one repetition: the launch with the profiler divided by the "
                        "launch without it, run next to each other. Dashed: the target; band: 95 % "
                        "CI of the geometric mean (Student t on log ratios).",
                    )
                ],
            )
        )
    comp = _comparable(runs)
    if len(comp) >= 2:
        headers, rows = comparison(comp)
        css = [("left", "num", "left", "num", "left")] * len(rows)
        sections.append(
            Section(
                "Profiler overhead — comparison",
                None,
                tables=[HtmlTable("by run", headers, rows, css)],
            )
        )
    for run in runs:
        if run.benchmark != BENCHMARK:
            continue
        tables = METRICS_TABLE.html([run]) + PAIRS_TABLE.html([run])
        sections.append(
            Section(
                f"Profiler overhead — {run.label}", profile_sentence(run) or None, tables=tables
            )
        )
    return sections


# ---------------------------------------------------------------- summary, extent, JSON


def summary(run: Run) -> list[str]:
    if run.analysis is None:
        return ["No analysis: ratios and verdicts are not available for this run."]
    out = []
    for m in metrics(run):
        geo = num(m.get("geomean"))
        if m.get("target") is None:
            continue
        if geo is None:
            out.append(f"{m.get('title')}: no complete pair ({m.get('verdict')}).")
            continue
        lo, hi = num(m.get("ci95_low")), num(m.get("ci95_high"))
        rlo, rhi = num(m.get("rank_ci95_low")), num(m.get("rank_ci95_high"))
        ci = ""
        if lo is not None and hi is not None:
            rank = (f"; rank-based {rlo:.4f}–{rhi:.4f}"  # analyses before it have none
                    if rlo is not None and rhi is not None else "")
            ci = f" (95 % CI {lo:.4f}–{hi:.4f}{rank})"
        quiet, also = subset(m, "quiet"), ""
        if quiet.get("n") != m.get("n"):
            qg, ql, qh = (num(quiet.get(k)) for k in ("geomean", "ci95_low", "ci95_high"))
            qci = f" (CI {ql:.4f}–{qh:.4f})" if ql is not None and qh is not None else ""
            also = (
                f" Over the {quiet.get('n')} undisturbed pairs: "
                + (f"{qg:.4f}×{qci} — " if qg is not None else "")
                + f"{quiet.get('verdict')}."
            )
        out.append(
            f"{str(m.get('title')).capitalize()} with the profiler: {geo:.4f}× the value "
            f"without{ci} over {m.get('n')} pairs — {m.get('verdict')} "
            f"({_target(m)}).{also}"
        )
    sentence = profile_sentence(run)
    if sentence:
        out.append(sentence)
    return out


def extent(run: Run) -> str | None:
    """How many repetitions ran all their launches to completion. A run's repetitions each
    have as many launches as its version had (4 to 7): a stopped one has fewer or a
    failed one."""
    result = run.result or {}
    launches = result.get("launches") or []
    per_rep: dict[Any, list[bool]] = {}
    for x in launches:
        per_rep.setdefault(x.get("rep"), []).append(x.get("status") == "complete")
    most = max((len(v) for v in per_rep.values()), default=0)
    full = sum(1 for v in per_rep.values() if len(v) == most and all(v))
    return f"{full} of {result.get('reps', '?')} repetitions complete"


def to_json(run: Run) -> dict[str, Any]:
    return {
        "metrics": [
            {
                k: m.get(k)
                for k in (
                    "name",
                    "program",
                    "target",
                    "n",
                    "median",
                    "geomean",
                    "ci95_low",
                    "ci95_high",
                    "overhead_pct",
                    "verdict",
                    "reason",
                    "quiet",
                )
            }
            for m in metrics(run)
        ],
        "profiles": (run.analysis or {}).get("profiles"),
    }


# ---- the summary card (spec.CardLine in __init__.py)

def card_from_analysis(a: dict[str, Any]) -> str | None:
    """Run time and small-message rate with the profiler, each as a change in %, then each
    mini-app's cost inside one launch (--apps), or why each is not resolved
    (summary_card.unresolved): the intervals stay in the figures."""
    run = resolved_text(figure_entry(a, "run_time_ratio"), 100.0, " %", "+.2f")
    rate = resolved_text(figure_entry(a, "msg_rate_ratio"), 100.0, " %")
    parts = ([f"run time {run}"] if run else []) + ([f"small-message rate {rate}"] if rate
                                                    else [])
    for app in a.get("apps") or []:
        text = resolved_text(figure_entry(a, app_figure_name(app)), 1.0, " %", "+.2f")
        if text:
            parts.append(f"mo_{app['program']} inside one launch {text}")
    return ", ".join(parts) or None
