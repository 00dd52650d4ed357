"""Profile runs: the cross-rank merge of profile/analysis/profile.py as tables, sentences and JSON.

One set of `Grid`s feeds both the terminal (rich) and the HTML tables, so the two show
the same figures. Every figure comes from the analysis document (analysis.json; when a
run has none it is computed here from result.json by the same pure function and the
summary says so). Times print with their unit, percentages are of transfer time, and a
missing value prints as "—".
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ...calibration.table_trust import different_tables, run_table_notes
from ...core.formatting import DASH, fmt_mib, fmt_pct_cell, fmt_range, fmt_time
from ...core.termsafe import Table
from ...report.html import HtmlTable, Section
from ...run import run_guard
from ...run.rundir import Run
from ..analysis.profile import analyze_profile
from ..analysis.profile_values import rank_list, ranks_text
from . import profile_waits
from .profile_grid import ALL_ON_PAGE, Grid, fint, frank, top_rows

BENCHMARK = "profile"
TERMINAL_RANKS = 16  # above this, the terminal shows the ranks losing most
# Above this, the page shows the PAGE_RANKS ranks losing most (the table's CSV has all):
# 8 192 rows made 2.3 MB of a 5.8 MB report.html.
PAGE_RANKS = 128
TERMINAL_TOP = 10  # entries of each ranking in the terminal
MEANING = (
    "Overlap min–max %: the lower and upper bound on the share of transfer time that ran "
    "while the application computed. Not overlapped: transfer time − maximum bound, the "
    "least time that was certainly not hidden. Totals: "
    + profile_waits.BOTH + "."
)


# ---------------------------------------------------------------- the analysis of a run


def analysis_of(run: Run) -> dict[str, Any] | None:
    """The run's profile analysis; computed from result.json (and the traces) when
    analysis.json is absent."""
    if isinstance(run.analysis, dict) and run.analysis.get("benchmark") == BENCHMARK:
        return run.analysis
    result = run.result or {}
    if result.get("schema") == "mpi-overlap/profile-run" and run.analysis is None:
        # Computed once per run: with traces it reads and matches every one of them, and a
        # report asks for it from each of its tables and plots.
        if BENCHMARK not in run.derived:  # shown as the run guard allows, as on loading
            run.derived[BENCHMARK] = run_guard.apply(analyze_profile(result, run.path),
                                                     run.meta)
        return run.derived[BENCHMARK]
    return None


def unique_worst(a: dict[str, Any]) -> int | None:
    """The worst rank when it loses strictly more than every other rank, else None.

    The analysis names the lowest rank on a tie; a highlight would single it out wrongly.
    """
    worst = a.get("worst_rank")
    if worst is None:
        return None
    others = [
        r["nonoverlap_s"]
        for r in a.get("ranks") or []
        if r["in_totals"] and r["rank"] != worst["rank"]
    ]
    return int(worst["rank"]) if all(v < worst["nonoverlap_s"] for v in others) else None


def is_profile(run: Run) -> bool:
    return run.benchmark == BENCHMARK


# ---------------------------------------------------------------- grids



def job_grid(a: dict[str, Any], label: str, *, explain: bool = True) -> Grid:
    """The job's sums; `explain` adds what the measures mean (HTML says it in the intro)."""
    job = a["job"]
    cases = a.get("cases") or {}
    reported = len(a.get("ranks_reported") or [])
    rows = [
        (
            "ranks",
            f"{job['ranks']} with data of {a['ranks_expected']} expected "
            f"({reported} wrote a profile)",
        ),
        ("status", a["status"]),
        ("transfers", fint(job["transfers"])),
        ("transfer time", fmt_time(job["xfer_s"])),
        *_overlap_rows(a),
        ("computation time", fmt_time(job["comp_s"])),
        (
            "MPI call time",
            f"{fmt_time(job['call_s'])} ({fmt_pct_cell(job['mpi_share_pct'])} % of call + "
            "computation)",
        ),
        ("cases", ", ".join(f"{k} {fint(v)}" for k, v in cases.items()) or DASH),
        *([] if a.get("withheld") else profile_waits.job_rows(a)),
    ]
    worst = a.get("worst_rank")
    if worst is not None and not a.get("withheld"):
        ties = sum(
            1
            for r in a["ranks"]
            if r["in_totals"]
            and r["rank"] != worst["rank"]
            and r["nonoverlap_s"] >= worst["nonoverlap_s"]
        )
        other = f"{ties} other rank{'s lose' if ties != 1 else ' loses'} as much"
        tied = f"; {other}" if ties else ""
        rows.append(
            (
                "worst rank",
                f"rank {worst['rank']}: {fmt_time(worst['nonoverlap_s'])} "
                f"not overlapped ({fmt_pct_cell(worst['share_pct'])} % of the job's{tied})",
            )
        )
    note = MEANING if explain else None
    if a.get("withheld"):
        note = ("the measured overlap tables are in report.html, under the run's notice: "
                "they are no findings")
    return Grid(
        f"{label} — job (sums over ranks)",
        ("", "value"),
        rows,
        left=(0, 1),
        note=note,
    )


ACROSS_ROWS = (
    ("transfers", "transfers", fint),
    ("xfer_s", "transfer time", fmt_time),
    ("min_pct", "overlap min %", fmt_pct_cell),
    ("max_pct", "overlap max %", fmt_pct_cell),
    ("nonoverlap_s", "not overlapped", fmt_time),
    ("min_s", "overlapped ≥", fmt_time),
    ("max_s", "overlapped ≤", fmt_time),
    ("comp_s", "computation", fmt_time),
    ("call_s", "MPI call time", fmt_time),
    ("mpi_share_pct", "MPI share %", fmt_pct_cell),
)


def across_grid(a: dict[str, Any], label: str) -> Grid:
    rows = []
    for key, name, fmt in ACROSS_ROWS:
        s = a["across_ranks"].get(key) or {}
        rows.append(
            (
                name,
                fmt(s.get("min")),
                frank(s.get("min_rank")),
                fmt(s.get("median")),
                fmt(s.get("max")),
                frank(s.get("max_rank")),
                fint(s.get("n")),
            )
        )
    return Grid(
        f"{label} — across ranks",
        ("measure", "min", "rank", "median", "max", "rank", "ranks"),
        rows,
        note="Ranks without transfer time have no overlap % and are left out of those rows; "
        "ties name the lowest rank.",
    )


RANK_HEADERS = (
    "rank",
    "status",
    "transfers",
    "transfer time",
    "overlap min %",
    "overlap max %",
    "not overlapped",
    "computation",
    "MPI call time",
    "MPI share %",
)


def _losing_most(ranks: list[dict[str, Any]], k: int) -> set[int]:
    """The ids of the k ranks with the most non-overlapped time (ties: lower rank)."""
    return {r["rank"] for r in sorted(ranks, key=lambda r: (-r["nonoverlap_s"], r["rank"]))[:k]}


def rank_grid(a: dict[str, Any], label: str, limit: int | None = None, *,
              page_limit: int | None = None) -> Grid:
    """One row per rank (in rank order); `limit`: only the ranks losing most (the
    terminal); `page_limit`: every row, of which the page shows the ranks losing most
    (HTML; its CSV has all)."""
    ranks = list(a.get("ranks") or [])
    note = None
    on_page = None
    if page_limit is not None and len(ranks) > page_limit:
        shown = _losing_most(ranks, page_limit)
        on_page = tuple(i for i, r in enumerate(ranks) if r["rank"] in shown)
        note = (f"the {page_limit} ranks with the most non-overlapped time of {len(ranks)}; "
                "the table's CSV (report.json \"tables\") lists all")
    if limit is not None and len(ranks) > limit:
        where = ("report.html lists all" if len(ranks) <= PAGE_RANKS
                 else "the per-rank CSV of report.html lists all")
        note = f"the {limit} ranks with the most non-overlapped time of {len(ranks)}; {where}"
        shown = _losing_most(ranks, limit)
        ranks = [r for r in ranks if r["rank"] in shown]
    worst = unique_worst(a)
    rows, highlight = [], []
    for i, r in enumerate(ranks):
        status = r["status"] + ("" if r["in_totals"] else " (left out)")
        rows.append(
            (
                str(r["rank"]),
                status,
                fint(r["transfers"]),
                fmt_time(r["xfer_s"]),
                fmt_pct_cell(r["min_pct"]),
                fmt_pct_cell(r["max_pct"]),
                fmt_time(r["nonoverlap_s"]),
                fmt_time(r["comp_s"]),
                fmt_time(r["call_s"]),
                fmt_pct_cell(r["mpi_share_pct"]),
            )
        )
        if r["rank"] == worst:
            highlight.append(i)
    missing = a.get("missing_ranks") or []
    if missing:
        extra = f"ranks {rank_list(missing)} wrote no profile"
        note = f"{note}; {extra}" if note else extra
    return Grid(
        f"{label} — per rank",
        RANK_HEADERS,
        rows,
        left=(0, 1),
        note=note,
        highlight=tuple(highlight),
        on_page=on_page,
    )


RANKING_TITLE = {
    "bins": "message-size bins",
    "functions": "MPI functions (posting)",
    "regions": "regions",
}
RANKING_NAME = {"bins": "label", "functions": "fn", "regions": "region"}


def _ranked_cells(e: dict[str, Any]) -> tuple[str, ...]:
    """The measures of a ranking entry (profile/analysis/profile_values.py, cell_dict) as cells."""
    return (fint(e["transfers"]), fmt_time(e["xfer_s"]),
            fmt_range(e["min_pct"], e["max_pct"], ".1f"), fmt_time(e["nonoverlap_s"]),
            fmt_pct_cell(e["share_pct"]), frank(e["worst_rank"]), fint(e["ranks"]))


def ranking_grid(a: dict[str, Any], label: str, key: str, limit: int | None = None) -> Grid:
    entries = list(a["rankings"].get(key) or [])
    notes = []
    if key == "functions":  # calls that posted no transfer have only call time
        idle = [e["fn"] for e in entries if not e["transfers"]]
        entries = [e for e in entries if e["transfers"]]
        if idle:
            notes.append(f"{len(idle)} functions posted no transfer (see MPI call time)")
    entries, shown = top_rows(entries, limit)
    if shown:
        notes.insert(0, shown)
    in_call = profile_waits.in_call_note(a)
    if in_call and any(e["max_pct"] == 0 for e in entries):
        notes.append(in_call)
    note = "; ".join(notes) or None
    rows = [(str(e[RANKING_NAME[key]]), *_ranked_cells(e)) for e in entries]
    headers: tuple[str, ...] = (
        key[:-1] if key != "bins" else "size",
        "transfers",
        "transfer time",
        "overlap %",
        "not overlapped",
        "share %",
        "worst rank",
        "ranks",
    )
    # A traced run: the overlap from both ends of every message beside it.
    both = [profile_waits.ranking_cell(a, key, str(e[RANKING_NAME[key]])) for e in entries]
    if profile_waits.available(a) is not None:
        headers = (*headers[:4], "overlap % (both ends)", *headers[4:])
        rows = [(*r[:4], str(b), *r[4:]) for r, b in zip(rows, both, strict=True)]
    return Grid(
        f"{label} — {RANKING_TITLE[key]} by non-overlapped time",
        headers,
        rows,
        note=note,
    )


def _site(name: str, fn: str | None) -> str:
    """'halo.c:42 (exchange) MPI_Isend': where, then what was called there."""
    return f"{name} {fn}" if fn else name


def pair_grid(a: dict[str, Any], label: str, limit: int | None = None,
              rest: str = ALL_ON_PAGE) -> Grid:
    """Transfers by (posting site → completing site): the lines to act on; `rest` says
    where the pairs beyond `limit` are."""
    entries, note = top_rows(list(a["rankings"].get("pairs") or []), limit, rest)
    if not entries:
        recorded = (a.get("callsites") or {}).get("sites")
        note = ("no transfers, so no pairs of sites" if recorded else
                "no call sites recorded (a profile from an older version, or "
                "MPI_OVERLAP_CALLSITES=0)")
    notes = [n for n in ((a.get("callsites") or {}).get("notes") or [])]
    if notes:
        note = "; ".join(([note] if note else []) + notes)
    rows = [(_site(e["post"], e.get("post_fn")), _site(e["end"], e.get("end_fn")),
             *_ranked_cells(e)) for e in entries]
    return Grid(
        f"{label} — call sites: posted at → completed at, by non-overlapped time",
        ("posted at", "completed at", "transfers", "transfer time", "overlap %",
         "not overlapped", "share %", "worst rank", "ranks"),
        rows,
        left=(0, 1),
        note=note,
    )


def _overlap_cell(a: dict[str, Any]) -> str:
    """Where the run guard (run_guard.apply) withheld the overlap figures: why, no number."""
    return f"withheld: the run was {a['withheld']} (see its notice)"


def _overlap_rows(a: dict[str, Any]) -> list[tuple[str, str]]:
    """The job's overlap figures, or where the run guard withheld them, why."""
    job = a["job"]
    if a.get("withheld"):
        return [("overlap range", _overlap_cell(a))]
    return [
        ("overlap range",
         profile_waits.overlap_range(a, fmt_range(job["min_pct"], job["max_pct"], ".1f"))),
        ("overlapped", f"at least {fmt_time(job['min_s'])}, at most {fmt_time(job['max_s'])}"),
        (
            "not overlapped",
            f"at least {fmt_time(job['nonoverlap_s'])} "
            f"({fmt_pct_cell(job['nonoverlap_pct'])} %), at most "
            f"{fmt_time(job['nonoverlap_max_s'])}",
        ),
    ]


def advice_grid(a: dict[str, Any], label: str) -> Grid:
    """Every piece of advice (profile/analysis/advice.py), largest bound first; none where the run
    guard withheld the figures it rests on, marked where the run was disturbed."""
    items = a.get("advice") or []
    rows = [(str(i), x["rule"], fmt_time(x["bound_s"]), x["text"]) for i, x in enumerate(items, 1)]
    if a.get("withheld"):
        note = f"none given: the run was {a['withheld']} (see its notice)"
    elif not rows:
        note = "none: no rule of docs/profiler.md (Advice) found enough to gain"
    elif a.get("disturbed"):
        note = ("disturbed run: other processes took CPU time, so the times this advice "
                "rests on include theirs")
    else:
        note = None
    return Grid(
        f"{label} — advice, by the most it can hide or save",
        ("#", "rule", "at most", "advice"),
        rows,
        left=(1, 3),
        note=note,
    )


def call_grid(a: dict[str, Any], label: str, limit: int | None = None) -> Grid:
    entries, note = top_rows(list(a.get("call_time") or []), limit)
    rows = [(e["fn"], fint(e["calls"]), fmt_time(e["call_s"]), fmt_pct_cell(e["share_pct"]))
            for e in entries]
    return Grid(
        f"{label} — MPI call time by function",
        ("function", "calls", "call time", "share %"),
        rows,
        note=note,
    )


def notes_grid(a: dict[str, Any], label: str) -> Grid:
    rows = [
        (n["name"], fint(n["count"]), ranks_text(n["ranks"], n.get("ranks_count")) or DASH,
         n["meaning"])
        for n in (a.get("unattributed") or []) + (a.get("info_counters") or [])
    ]
    note = (
        None
        if rows
        else ("none: every transfer was attributed precisely and no anomaly was counted")
    )
    return Grid(
        f"{label} — not attributed precisely / counted",
        ("what", "count", "ranks", "meaning"),
        rows,
        left=(0, 2, 3),
        note=note,
    )


def run_grids(a: dict[str, Any], label: str, *, terminal: bool) -> list[Grid]:
    rank_limit = TERMINAL_RANKS if terminal else None
    top = TERMINAL_TOP if terminal else None
    if a.get("withheld") and terminal:
        # An oversubscribed run (run_guard.py): no overlap figure in the terminal at all;
        # report.html keeps the measured tables under the run's notice.
        return [job_grid(a, label, explain=False), advice_grid(a, label),
                call_grid(a, label, top), notes_grid(a, label)]
    # What to act on first: the advice and the call sites, right after the job's sums.
    grids = [job_grid(a, label, explain=terminal), advice_grid(a, label),
             pair_grid(a, label, top)]
    if len(a.get("ranks") or []) > 1:
        grids.append(across_grid(a, label))
    grids.append(rank_grid(a, label, rank_limit, page_limit=None if terminal else PAGE_RANKS))
    grids += profile_waits.grids(a, label, terminal=terminal)
    for key in ("bins", "functions", "regions"):
        grids.append(ranking_grid(a, label, key, top))
    grids.append(call_grid(a, label, top))
    grids.append(notes_grid(a, label))
    return grids


# ---------------------------------------------------------------- comparison across runs


def _run_time(a: dict[str, Any]) -> float | None:
    """The slowest rank's MPI_Init → MPI_Finalize time."""
    walls = [r["wall_s"] for r in a.get("ranks") or [] if r.get("wall_s") is not None]
    return max(walls) if walls else None


def _waiting(a: dict[str, Any]) -> str:
    ts = a.get("two_sided")
    if isinstance(ts, dict) and ts.get("available"):
        return fmt_time(ts["waiting"]["total_s"])
    return DASH


def comparison_grid(runs: list[tuple[str, dict[str, Any]]]) -> Grid:
    """Runs of one program side by side (--env-matrix, or runs named to `report`)."""
    rows = []
    for label, a in runs:
        job, worst = a["job"], a.get("worst_rank")
        rows.append(
            (
                label,
                f"{job['ranks']}/{a['ranks_expected']}",
                fmt_time(job["xfer_s"]),
                "withheld" if a.get("withheld")
                else fmt_range(job["min_pct"], job["max_pct"], ".1f"),
                fmt_time(job["nonoverlap_s"]),
                _waiting(a),
                fmt_time(job["call_s"]),
                fmt_pct_cell(job["mpi_share_pct"]),
                fmt_time(_run_time(a)),
                frank(worst["rank"] if worst else None),
                a["status"],
            )
        )
    return Grid(
        "Profile runs side by side",
        (
            "run",
            "ranks",
            "transfer time",
            "overlap %",
            "not overlapped",
            "waiting",
            "MPI call time",
            "MPI share %",
            "run time",
            "worst rank",
            "status",
        ),
        rows,
        left=(0, 10),
        note="waiting: from both ends of every message (--trace runs only); run time: the "
        "slowest rank's MPI_Init to MPI_Finalize",
    )


def _comparable(runs: list[Run]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for run in runs:
        a = analysis_of(run) if is_profile(run) else None
        if a is not None:
            out.append((run.label, a))
    return out


# ---------------------------------------------------------------- terminal (rich)


def rich_table(grid: Grid) -> Table:
    t = Table(title=grid.caption, title_justify="left", header_style="bold")
    for i, header in enumerate(grid.headers):
        wrap = i == len(grid.headers) - 1 and i in grid.left
        t.add_column(header, justify="left" if i in grid.left else "right", no_wrap=not wrap)
    for i, row in enumerate(grid.rows):
        t.add_row(*row, style="bold red" if i in grid.highlight else None)
    return t


def print_grid(grid: Grid, console: Console) -> None:
    if not grid.rows:  # an empty table says less than its note
        console.print(Text(grid.caption, style="italic"))
        console.print(Text(f"  {grid.note or 'nothing to show'}", style="dim"))
        return
    console.print(rich_table(grid))
    if grid.note:
        console.print(Text(f"  {grid.note}", style="dim"))


def print_run(run: Run, console: Console) -> None:
    a = analysis_of(run)
    if a is None:
        console.print(
            Text("  no profile analysis: result.json missing or not a profile run", style="yellow")
        )
        return
    for grid in run_grids(a, run.label, terminal=True):
        print_grid(grid, console)


def _tables_differ(runs: list[Run]) -> str | None:
    """The warning when the profile runs shown together used different tables."""
    return different_tables([(r.label, (r.result or {}).get("table")) for r in runs
                             if is_profile(r)])


def print_comparison(runs: list[Run], console: Console) -> None:
    comp = _comparable(runs)
    if len(comp) >= 2:
        print_grid(comparison_grid(comp), console)
    differ = _tables_differ(runs)
    if differ:
        console.print(Text(f"Warning: {differ}.", style="yellow"))


# ---------------------------------------------------------------- HTML


def html_table(grid: Grid) -> HtmlTable:
    # Highlighting touches only text columns: the page aligns each header like the first
    # row's cell, and any class but "num" means left.
    css = [
        tuple(
            ("left" + (" v-no-knee" if r in grid.highlight else "")) if i in grid.left else "num"
            for i in range(len(grid.headers))
        )
        for r in range(len(grid.rows))
    ]
    return HtmlTable(grid.caption, grid.headers, grid.rows, css, grid.footnotes, grid.note,
                     grid.on_page)


def html_sections(runs: list[Run]) -> list[Section]:
    sections = []
    comp = _comparable(runs)
    differ = _tables_differ(runs)
    if len(comp) >= 2 or differ:
        sections.append(
            Section("Profile runs compared", f"Warning: {differ}." if differ else None,
                    tables=[html_table(comparison_grid(comp))] if len(comp) >= 2 else [])
        )
    for run in runs:
        if not is_profile(run):
            continue
        a = analysis_of(run)
        if a is None:
            continue
        withheld = (f"Withheld: the run was {a['withheld']}, so these tables are what was "
                    "measured, not findings (see the run's notice). " if a.get("withheld")
                    else "")
        sections.append(
            Section(
                f"Overlap tables — {run.label}",
                withheld + MEANING + " Times are sums over ranks unless a table is per "
                "rank; the rank losing the most non-overlapped time is in red when no other "
                "rank loses as much.",
                tables=[html_table(g) for g in run_grids(a, run.label, terminal=False)],
            )
        )
    return sections


# ---------------------------------------------------------------- summaries and JSON


def extent(run: Run) -> str | None:
    """What the profiles cover, e.g. 'profiles of 3 of 4 ranks (1 incomplete)'."""
    a = analysis_of(run)
    if a is None:
        return "no rank profiles"
    parts = []
    if a["partial_ranks"]:
        parts.append(f"{len(a['partial_ranks'])} partial")
    if a["disabled_ranks"]:
        parts.append(f"{len(a['disabled_ranks'])} disabled")
    what = f"profiles of {len(a['ranks_reported'])} of {a['ranks_expected']} ranks"
    return what + (f" ({', '.join(parts)})" if parts else "")


def summary(run: Run) -> list[str]:
    """The analysis's findings, then its warnings; computed from analysis.json."""
    a = analysis_of(run)
    if a is None:
        return ["No profile analysis: result.json is missing or is not a profile run."]
    out = list(a.get("findings") or [])
    if run.analysis is None:
        out.append(
            "(analysis.json was missing: these figures were computed from result.json "
            "for this report.)"
        )
    out += [f"Warning: {w}." for w in a.get("warnings") or []]
    out += [f"Warning: {w}." for w in run_table_notes((run.result or {}).get("table"))]
    job = a.get("job_file")
    if job and isinstance(job.get("gather_s"), (int, float)):
        # the profiler's own cost at the end, outside every measure (docs/profiler.md, Output)
        out.append(f"Rank 0 gathered {job.get('in_file')} rank profiles into profile.job.jsonl "
                   f"({fmt_mib(int(job.get('bytes') or 0))}) in {job['gather_s'] * 1e3:.1f} ms "
                   "after the program's last MPI call.")
    stats = a.get("job_stats") or {}
    if stats.get("source") == "library" and isinstance(stats.get("reduce_s"), (int, float)):
        kept = ("" if stats.get("documents", True) else
                "; the rank documents were not kept, the statistics stand for them "
                "(profile --documents keeps them)")
        out.append(f"The job's sums and rankings are rank 0's reduction of {stats['ranks']} "
                   f"ranks inside the job (a binomial tree over MPI, "
                   f"{stats['reduce_s'] * 1e3:.1f} ms, largest message "
                   f"{fmt_mib(int(stats.get('largest_message') or 0))}){kept}.")
    return out


def to_json(run: Run) -> dict[str, Any]:
    """The analysis without its per-bin × rank matrices (those are in analysis.json)."""
    a = analysis_of(run)
    if a is None:
        return {"analysis": None}
    keys = (
        "method",
        "status",
        "ranks_expected",
        "ranks_reported",
        "missing_ranks",
        "partial_ranks",
        "disabled_ranks",
        "job",
        "worst_rank",
        "across_ranks",
        "ranks",
        "rankings",
        "call_time",
        "cases",
        "unattributed",
        "info_counters",
        "findings",
        "warnings",
        "trace",
        "headline",
        "two_sided",
        "advice",
        "callsites",
        "cost",
        "library_time",
    )
    return {k: a.get(k) for k in keys}
