"""The host-overhead plot's axis: overheads that span decades get a log axis, or symlog
when some are 0 or negative, so that the large sizes do not flatten every small one."""

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
    assert fig.axes[0].get_yscale() == scale
