"""The overhead benchmark's figures as chart data: overheads that span decades get a log
axis, or symlog when some are 0 or negative, so that the large sizes do not flatten every
small one; not-ok estimates drawn hollow; a fit panel's steps, hinge and knee."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpi_overlap.benchmarks.overhead.plots import _metric_figure
from mpi_overlap.run.rundir import Run


def _run(overheads_us: list[float]) -> Run:
    sizes = [{"size": 1 << (4 * i), "overhead_us": {"value": v, "ci95_low": v, "ci95_high": v}}
             for i, v in enumerate(overheads_us)]
    return Run(path=Path("/nonexistent"),
               meta={"benchmark": "overhead", "toolchain": {"name": "mpich"}},
               analysis={"directions": [{"direction": "send", "sizes": sizes}]})


@pytest.mark.parametrize(("overheads", "scale"), [
    ([0.8, 1.5, 4.0, 330.0], "log"),
    ([0.0, 1.5, -0.2, 330.0], "symlog"),  # some at or below 0: log cannot show them
    ([1.0, 2.0, 3.0, 5.0], "linear"),  # one decade: linear reads best
])
def test_overheads_spanning_decades_get_a_log_axis(overheads: list[float], scale: str) -> None:
    fig = _metric_figure([_run(overheads)], "overhead_us", "overhead (µs)", "t")
    assert fig is not None
    assert fig.panels[0].yscale == scale


def _fit_run(verdict: str) -> Run:
    steps = [{"work_t_us": {"median": w}, "iter_t_us": {"median": max(2.0, w + 0.5)},
              "iter_samples_us": [max(2.0, w + 0.5) * f for f in (0.9, 1.0, 1.2)]}
             for w in (0.0, 0.5, 1.0, 2.0, 4.0)]
    fit = {"size": 64, "verdict": verdict, "base_t_us": {"value": 2.0},
           "knee_work_us": {"value": 1.5}, "slope": {"value": 1.0},
           "classic": {"found": True, "work_t_us": 4.0, "iter_t_us": 4.5}}
    return Run(path=Path("/nonexistent"),
               meta={"benchmark": "overhead", "toolchain": {"name": "mpich"}},
               result={"results": {"directions": [
                   {"direction": "send", "sizes": [{"size": 64, "steps": steps}]}]}},
               analysis={"directions": [{"direction": "send", "sizes": [fit]}]})


def test_a_fit_panel_draws_the_steps_the_hinge_and_its_knee() -> None:
    from mpi_overlap.benchmarks.overhead.plots import fit_grid

    chart = fit_grid(_fit_run("noisy"), "send")
    assert chart is not None
    (panel,) = chart.panels
    assert panel.title == "64 B · noisy" and panel.title_colour != "#000000"
    medians = [(m.x, m.y) for m in panel.marks if m.shape == "o"]
    ranges = [(m.y, m.to) for m in panel.marks if m.shape == "|"]
    assert medians == [(0.0, 2.0), (0.5, 2.0), (1.0, 2.0), (2.0, 2.5), (4.0, 4.5)]
    assert ranges[-1] == pytest.approx((4.5 * 0.9, 4.5 * 1.2))
    hinge, knee = panel.lines
    # b + s·max(0, x − k) is straight either side of k: 0, k and the end draw it exactly
    assert hinge.xs == pytest.approx([0.0, 1.5, 4.0 * 1.03])
    assert hinge.ys == pytest.approx([2.0, 2.0, 2.0 + 4.12 - 1.5])
    assert knee.xs == [1.5, 1.5] and knee.ys == list(panel.ylim) and knee.dash == ":"
    assert [m.shape for m in panel.marks].count("*") == 1
    # every drawn point is inside the axes, which start at 0
    assert panel.xlim[0] == 0.0 and panel.ylim[0] == 0.0
    assert panel.ylim[1] >= 4.5 * 1.2 and panel.xlim[1] >= 4.12


def test_not_ok_estimates_are_hollow_grey_on_top() -> None:
    run = _run([0.8, 1.5, 4.0, 330.0])
    assert run.analysis is not None
    for i, entry in enumerate(run.analysis["directions"][0]["sizes"]):
        entry["verdict"] = "noisy" if i == 1 else "ok"
    fig = _metric_figure([run], "overhead_us", "overhead (µs)", "t")
    assert fig is not None
    marks = fig.panels[0].marks
    assert [m.hollow for m in marks] == [False, False, False, True]  # drawn last
    assert marks[-1].y == 1.5
    assert [k.label for k in fig.legend] == ["mpich send", "verdict not ok"]
