"""Run-level replication (--launches): the plan, the comparison of launches, the report."""

from __future__ import annotations

import pytest
from rich.console import Console

from mpi_overlap.analysis.replication import Point, Quantity, replicate, replicate_quantity
from mpi_overlap.benchmarks.discovery import replicated
from mpi_overlap.core.errors import UserError
from mpi_overlap.report import replication as report
from mpi_overlap.run import launch_plan
from mpi_overlap.run.env_matrix import Variant
from mpi_overlap.run.rundir import Run

AVAIL = Quantity("send/256/availability_pct", "send 256 B availability", "%")


def test_issue_launches_with_disjoint_intervals_are_unstable() -> None:
    """Issue 15: send 256 B over three launches, 65.3 [62.0-67.8], 82.8 [77.9-85.9],
    70.8 [64.0-75.9]: the barrier cost moved between launches."""
    row = replicate_quantity(AVAIL, [Point(65.3, 62.0, 67.8, "ok"), Point(82.8, 77.9, 85.9, "ok"),
                                     Point(70.8, 64.0, 75.9, "ok")])
    assert row["verdict"] == "unstable"
    assert "launches 1 and 2" in row["reason"]
    assert row["value"] == pytest.approx(70.8)
    # the between-launch interval holds every launch's value
    assert row["contains_every_launch"] is True
    assert row["between_low"] <= 65.3 and row["between_high"] >= 82.8


def test_overlapping_launches_are_stable_and_the_interval_holds_them() -> None:
    row = replicate_quantity(AVAIL, [Point(65.3, 62.0, 67.8, "ok"), Point(66.1, 63.0, 69.0, "ok"),
                                     Point(64.0, 60.5, 66.9, "ok")])
    assert row["verdict"] == "stable" and row["reason"] is None
    assert row["between_low"] <= 64.0 <= 66.1 <= row["between_high"]


@pytest.mark.parametrize("values", [[1.0, 2.0], [5.0, 5.1, 9.0], [1.0, 1.1, 0.9, 3.0],
                                    [10.0, 11.0, 12.0, 13.0, 40.0, 9.0]])
def test_between_interval_holds_every_launch(values: list[float]) -> None:
    row = replicate_quantity(Quantity("k", "k", "µs"), [Point(v) for v in values])
    assert row["contains_every_launch"] is True
    assert all(row["between_low"] <= v <= row["between_high"] for v in values)


def test_differing_launch_verdicts_are_unstable() -> None:
    row = replicate_quantity(AVAIL, [Point(65.0, 60.0, 70.0, "ok"),
                                     Point(66.0, 20.0, 90.0, "noisy")])
    assert row["verdict"] == "unstable" and "verdicts differ" in row["reason"]


def test_without_own_intervals_the_spread_decides() -> None:
    q = Quantity("figure/t", "t_pure", "µs")
    assert replicate_quantity(q, [Point(177.0), Point(177.0), Point(186.0)])["verdict"] == "stable"
    wide = replicate_quantity(q, [Point(178.0), Point(1202.0), Point(895.0)])
    assert wide["verdict"] == "unstable" and "spread" in wide["reason"]
    pct = Quantity("figure/o", "overlap", "%")
    # 4 points of overlap apart is within the 5-point floor for percentages
    assert replicate_quantity(pct, [Point(1.0), Point(5.0)])["verdict"] == "stable"


def test_one_value_is_single_and_none_are_skipped() -> None:
    row = replicate_quantity(AVAIL, [None, Point(None), Point(50.0, 40.0, 60.0, "ok")])
    assert row["verdict"] == "single" and row["n"] == 1 and row["between_low"] is None


def _overhead_analysis(value: float, lo: float, hi: float, verdict: str = "ok") -> dict:
    est = {"value": value, "ci95_low": lo, "ci95_high": hi}
    return {"figures": [{"name": "send_availability_min_pct", "label": "send availability",
                         "value": value, "unit": "%", "kind": "overlap"}],
            "directions": [{"direction": "send", "sizes": [
                {"size": 65536, "verdict": verdict, "availability_pct": est,
                 "overhead_us": {"value": 1.0, "ci95_low": 0.9, "ci95_high": 1.1}}]}]}


def test_group_verdict_and_finding() -> None:
    stable = replicate("overhead", [_overhead_analysis(65, 62, 68), _overhead_analysis(66, 63, 69)],
                       replicated("overhead"))
    assert stable["verdict"] == "stable" and "stable" in stable["finding"]
    keys = [q["key"] for q in stable["quantities"]]
    assert "figure/send_availability_min_pct" in keys and "send/65536/availability_pct" in keys
    unstable = replicate("overhead", [_overhead_analysis(65, 62, 68),
                                      _overhead_analysis(83, 78, 86)], replicated("overhead"))
    assert unstable["verdict"] == "unstable"
    assert "send 64 KiB availability" in unstable["finding"]
    assert replicate("overhead", [None, None], replicated("overhead"))["verdict"] == "single"


def test_plan_alternates_settings_and_defaults_keep_quick_single() -> None:
    assert launch_plan.plan(["A", "B"], 3) == [(1, "A"), (1, "B"), (2, "A"), (2, "B"),
                                               (3, "A"), (3, "B")]
    assert launch_plan.count(quick=True) == 1 and launch_plan.count(quick=False) == 3
    with launch_plan.bound(2):
        assert launch_plan.count(quick=True) == 2
    for bad in (0, -1, launch_plan.MAX_LAUNCHES + 1):
        with pytest.raises(UserError, match="--launches"), launch_plan.bound(bad):
            pass


def test_planned_runs_are_tagged_and_labelled() -> None:
    variants = [Variant((("X", "0"),)), Variant((("X", "1"),))]
    runs = launch_plan.runs("overhead", "mpich", variants, 2)
    assert [r.label for r in runs] == ["mpich X=0 launch 1/2", "mpich X=1 launch 1/2",
                                       "mpich X=0 launch 2/2", "mpich X=1 launch 2/2"]
    assert runs[0].replicate["group"] == runs[2].replicate["group"] != runs[1].replicate["group"]
    assert runs[3].replicate == {"group": runs[1].replicate["group"], "index": 2, "of": 2,
                                 "label": "mpich X=1"}
    single = launch_plan.runs("overhead", "mpich", [Variant(())], 1)
    assert single[0].label is None and single[0].replicate is None


def _run(tmp_path, index: int, analysis: dict) -> Run:
    meta = {"benchmark": "overhead", "toolchain": {"name": "mpich"}, "status": "complete",
            "label": f"mpich launch {index}/2", "guard": {"verdict": "ok"},
            "replicate": {"group": "g1", "index": index, "of": 2, "label": "mpich"}}
    return Run(path=tmp_path / f"r{index}", meta=meta, analysis=analysis)


def test_report_groups_launches_and_renders(tmp_path) -> None:
    runs = [_run(tmp_path, 2, _overhead_analysis(83, 78, 86)),
            _run(tmp_path, 1, _overhead_analysis(65, 62, 68))]
    assert [r.meta["replicate"]["index"] for r in report.groups(runs)[0]] == [1, 2]
    doc = report.to_json(runs, replicated)[0]
    assert doc["verdict"] == "unstable" and doc["label"] == "mpich"
    sections = report.sections(runs, replicated)
    assert len(sections) == 1 and "2 launches" in sections[0].title
    console = Console(record=True, width=200)
    report.print_terminal(runs, console, replicated)
    assert "unstable" in console.export_text()


def test_summary_card_gives_the_launches_of_a_setting_one_column(tmp_path) -> None:
    from mpi_overlap.benchmarks.discovery import card_items
    from mpi_overlap.report.summary_card import card_json

    runs = [_run(tmp_path, 1, _overhead_analysis(65, 62, 68)),
            _run(tmp_path, 2, _overhead_analysis(66, 63, 69)),
            Run(path=tmp_path / "s", meta={"benchmark": "study-halo", "status": "complete",
                                           "toolchain": {"name": "mpich"}})]
    assert card_json(runs, card_items())["labels"] == ["mpich"]
