"""The summary card (report/summary_card.py): cells come from the runs' headline figures,
one column per run label, "not run" / the run's status where there is no number; and a
characterization report opens in headless Chromium without console errors, with a
screenshot of the card."""

from __future__ import annotations

from pathlib import Path

from browser import browser_or_skip, console_errors
from mpi_overlap.analysis.figures import figure, unresolved
from mpi_overlap.benchmarks.discovery import card_items
from mpi_overlap.commands.reporting import make_report
from mpi_overlap.report.summary_card import ANCHOR, card_json, card_rows, card_section
from mpi_overlap.run.rundir import Run


def _run(bench: str, label: str, figures: list[dict], status: str = "complete") -> Run:
    return Run(path=Path(f"/nonexistent/{bench}-{label}"),
               meta={"benchmark": bench, "label": label, "toolchain": {"name": label},
                     "status": status},
               result=None, analysis={"figures": figures, "finding": f"{bench} finding"})


RUNS = [
    _run("stack-floor", "mpich", [figure("latency_small_us", "l", 0.95, "µs", "cost"),
                                  figure("added_small_us", "a", 0.91, "µs", "cost")]),
    _run("stack-floor", "openmpi", [figure("latency_small_us", "l", 0.41, "µs", "cost")]),
    _run("overhead", "mpich", [figure("send_availability_min_pct", "x", 3.2, "%", "overlap"),
                               figure("send_availability_max_pct", "x", 97.6, "%", "overlap"),
                               figure("recv_availability_min_pct", "x", None, "%", "overlap"),
                               figure("recv_availability_max_pct", "x", None, "%", "overlap")]),
    _run("matching", "openmpi", [], status="timeout"),
    _run("study-halo", "mpich", [figure("best_mpi_saving_pct", "b", 12.0, "%", "overlap"),
                                 figure("app_profiler_overhead_pct", "c", 0.93, "%", "cost"),
                                 figure("app_profiler_overhead_ci_low_pct", "l", -2.9, "%", "cost"),
                                 figure("app_profiler_overhead_ci_high_pct", "h", 4.9, "%",
                                        "cost")]),
    _run("profiler-overhead", "mpich", [figure("msg_rate_ratio", "r", 0.87, "ratio", "cost"),
                                        figure("run_time_ratio", "t", 1.0012, "ratio", "cost")]),
]


def test_cells_come_from_figures() -> None:
    rows = {row[0]: row[1:] for row in card_rows(RUNS, card_items())}
    assert rows["small-message latency"] == (
        "0.95 µs (0.91 µs above the core-to-core floor)", "0.41 µs")
    assert rows["availability (post-work-wait)"] == (
        "the CPU is free to compute for 3–98 % of a send's transfer time (by size)", "not run")
    assert rows["matching cost per queued request"] == ("not run", "timeout: see matching")
    refused = _run("stack-floor", "mpich", [], status="failed")
    refused.meta["message"] = ("exited with status 2: mo_stack-floor: error: ranks 0 and 1 are "
                               "on different nodes: the shared-memory floor needs them on one node")
    assert card_rows([refused], card_items())[0][1] == (
        "failed: ranks 0 and 1 are on different nodes: the "
        "shared-memory floor needs them on one node")
    assert rows["profiler overhead"][0] == "run time +0.12 %, small-message rate -13.0 %"
    assert rows["eager limit"] == ("not run", "not run")
    bracketed = _run("sync-overlap", "mpich", [figure("eager_limit_bytes", "l", 8064, "B", "info"),
                                               figure("eager_limit_first_no_bytes", "f", 8128,
                                                      "B", "info")])
    above = _run("sync-overlap", "mpich", [figure("eager_limit_bytes", "l", 1 << 20, "B", "info"),
                                           figure("eager_limit_first_no_bytes", "f", None, "B",
                                                  "info")])
    eager = next(i for i, item in enumerate(card_rows([bracketed], card_items()))
                 if item[0] == "eager limit")
    assert card_rows([bracketed], card_items())[eager][1] == (
        "8,064 B (from 8,128 B MPI_Isend needs the receiver)")
    assert card_rows([above], card_items())[eager][1] == (
        "above 1,048,576 B (no size measured needed the receiver)")
    # an interval wider than the figure: its sign is not known, so no figure as a finding
    assert rows["case study: halo"][0] == (
        "best mode cuts MPI time 12 %; profiler cost on the app not resolved (95 % CI -2.9 to "
        "+4.9 % is wider than the +0.93 % measured)")
    doc = card_json(RUNS, card_items())
    assert doc["labels"] == ["mpich", "openmpi"]
    assert doc["items"][0]["cells"]["openmpi"] == "0.41 µs"
    # the numbers beside the sentence, for scripts
    latency = doc["items"][0]
    assert latency["benchmark"] == "stack-floor"
    assert {f["name"]: f["value"] for f in latency["figures"]["mpich"]} == {
        "latency_small_us": 0.95, "added_small_us": 0.91}
    assert latency["figures"]["openmpi"][0]["unit"] == "µs"
    matching = next(i for i in doc["items"] if i["benchmark"] == "matching")
    assert matching["figures"] == {"mpich": [], "openmpi": []}  # not run; timed out, none


def test_card_opens_in_headless_chromium(tmp_path: Path) -> None:
    # Only the card: these runs' analyses hold figures alone, not what the benchmarks'
    # own sections need (characterize's report is opened by the demo and test_characterize).
    paths = make_report([], tmp_path, top_sections=[card_section(RUNS, card_items())])
    html = paths.html.read_text()
    assert html.index(f'id="{ANCHOR}"') < html.index('id="runs"')  # the card comes first
    driver = browser_or_skip()
    try:
        driver.get(paths.html.resolve().as_uri())
        assert driver.title.startswith("mpi-overlap")
        card = driver.find_element("id", ANCHOR)
        table = card.find_element("xpath", "following::table[1]")
        assert "0.95 µs" in table.text and "openmpi" in table.text
        shot = tmp_path / "summary-card.png"
        assert table.screenshot(str(shot))
        assert shot.stat().st_size > 2000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert console_errors(driver) == []
    finally:
        driver.quit()


def test_cells_read_without_the_docs() -> None:
    """Plain sentences: what share was hidden (or that none was, and by how much the two
    together were slower), and how much computation comes free."""
    def cell(bench: str, figs: list[dict]) -> str:
        item = next(row for row in card_rows([_run(bench, "mpich", figs)], card_items())
                    if row[1] != "not run")
        return item[1]

    better = [figure(f"better_improvement_pct_rank{r}", "b", v, "%", "overlap")
              for r, v in ((0, -6.2), (1, -0.2))]
    slower = cell("comm-overlap", [figure("hidden_pct_largest", "h", -107.0, "%", "overlap"),
                                   *better])
    assert slower.startswith("none of a one-way message's time hidden: computing beside it took "
                             "107 % of the message's time longer than one after the other")
    assert "total time -6 % / +0 % (rank 0 / 1) against no overlap" in slower
    hidden = cell("comm-overlap", [figure("hidden_pct_largest", "h", 97.0, "%", "overlap")])
    assert hidden == "97 % of a one-way message's time hidden behind computation (largest size)"
    knee = cell("inflation", [figure("knee_us_smallest", "k", 0.7, "us", "overlap"),
                              figure("knee_us_largest", "k", 21.9, "us", "overlap"),
                              figure("hidden_pct_largest", "h", 2.0, "%", "overlap")])
    assert knee == ("up to 0.70 µs of computation per exchange comes free at the smallest size, "
                    "21.9 µs at the largest; 2 % of the largest exchange hidden")


def test_cells_are_coloured_by_the_share_hidden() -> None:
    """Green from 70 % hidden (or CPU free), amber from 30 %, red below; costs and facts
    (latency) not coloured; the grade is in report.json and the page's cell class."""
    runs = [_run("comm-overlap", "a", [figure("hidden_pct_largest", "h", 97.0, "%", "overlap")]),
            _run("comm-overlap", "b", [figure("hidden_pct_largest", "h", -107.0, "%",
                                              "overlap")]),
            _run("overhead", "a", [figure("send_availability_max_pct", "x", 45.0, "%",
                                          "overlap")]),
            _run("stack-floor", "a", [figure("latency_small_us", "l", 1.2, "µs", "cost")])]
    items = {i["benchmark"]: i["grades"] for i in card_json(runs, card_items())["items"]}
    assert items["comm-overlap"] == {"a": "good", "b": "poor"}
    assert items["overhead"] == {"a": "fair", "b": None}  # b: not run
    assert items["stack-floor"] == {"a": None, "b": None}
    table = card_section(runs, card_items()).tables[0]
    comm = next(i for i, row in enumerate(table.rows) if row[0].startswith("communication"))
    assert table.css[comm][1:] == ("left grade-good", "left grade-poor")


def _cost(bench: str, name: str, value: float, unit: str, ci: tuple[float, float],
          pairs: int, disturbed: int = 0) -> str:
    fig = figure(name, "x", value, unit, "cost", ci=ci, pairs=pairs, disturbed=disturbed)
    (row,) = [r for r in card_rows([_run(bench, "mpich", [fig])], card_items())
              if r[1] != "not run"]
    return row[1]


def test_a_figure_is_a_finding_only_where_its_launches_resolve_it() -> None:
    """Issue 38 item 5: the figures a fresh `make demo` printed as findings ("-2.67 % (95 %
    CI -96.0 to +2249.7 %)"), from too few or mostly disturbed launch pairs, read "not
    resolved" with why; a resolved one keeps its interval and says what was disturbed."""
    study, over = "study-halo", "profiler-overhead"
    assert _cost(study, "app_profiler_overhead_pct", -2.67, "%", (-96.0, 2249.7), 3) == (
        "no mode compared; profiler cost on the app not resolved (95 % CI -96.0 to +2249.7 % "
        "is wider than the -2.67 % measured)")
    assert _cost(study, "app_profiler_overhead_pct", 1.4, "%", (0.9, 1.9), 2).endswith(
        "not resolved (2 launch pairs, fewer than 3)")
    assert _cost(study, "app_profiler_overhead_pct", 1.4, "%", (0.9, 1.9), 5, 3).endswith(
        "not resolved (3 of 5 launch pairs disturbed)")
    assert _cost(study, "app_profiler_overhead_pct", 1.4, "%", (0.9, 1.9), 5, 1).endswith(
        "+1.40 % (95 % CI +0.9 to +1.9 %; 1 of 5 launch pairs disturbed)")
    # the mini-apps inside one launch (--apps): pairs of blocks, resolved where the interval
    # lies within ±0.5 % of the figure (issue 40), whatever its distance from 0 %
    from mpi_overlap.benchmarks.profiler_overhead.app_cost import app_cost_figure
    from mpi_overlap.benchmarks.profiler_overhead.report import card_from_analysis

    apps = [{"program": "halo", "mode": "nonblocking", "overhead_pct": 0.41, "pairs": 3750,
             "ci95_low_pct": -0.17, "ci95_high_pct": 0.99},
            {"program": "cg", "mode": "allreduce", "overhead_pct": 1.0, "pairs": 1000,
             "ci95_low_pct": 0.6, "ci95_high_pct": 1.4},
            {"program": "cg", "mode": "iallreduce", "overhead_pct": None, "pairs": 0,
             "ci95_low_pct": None, "ci95_high_pct": None}]
    analysis = {"figures": [app_cost_figure(x) for x in apps], "apps": apps}
    assert card_from_analysis(analysis) == (
        "mo_halo inside one launch not resolved (95 % CI -0.17 to +0.99 % reaches further "
        "than ±0.5 % from the +0.41 % measured), mo_cg inside one launch +1.00 % (95 % CI "
        "+0.6 to +1.4 %)")
    # a cost inside launches from too few pairs names them as blocks, not launches
    few = app_cost_figure({**apps[1], "pairs": 2})
    assert unresolved(few) == "not resolved (2 block pairs, fewer than 3)"
    # ratios print as changes in %
    assert _cost(over, "msg_rate_ratio", 0.6929, "ratio", (0.6712, 0.7153), 8) == (
        "small-message rate -30.7 % (95 % CI -32.9 to -28.5 %)")
    assert _cost(over, "msg_rate_ratio", 0.433, "ratio", (0.2, 1.1), 8) == (
        "small-message rate not resolved (95 % CI -80.0 to +10.0 % is wider than the -56.7 % "
        "measured)")
