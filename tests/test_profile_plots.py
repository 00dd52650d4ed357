"""The profile's size-bin figure: beside the shares (every bin 100 % tall), the bins by
absolute transfer time, so that a bin of nanoseconds is drawn that small beside one that
took most of the time."""

from __future__ import annotations

import pytest

from mpi_overlap.report.profile_plots import bins_figure


def test_bins_are_also_drawn_by_absolute_time() -> None:
    a = {"bins_by_rank": {
        "bins": [{"lo": 0, "hi": 1024, "label": "0 B–1 KiB"},
                 {"lo": 1024, "hi": 2048, "label": "1 KiB–2 KiB"}],
        "ranks": [0, 1],
        "min_pct": [[50.0, 50.0], [10.0, 30.0]],
        "max_pct": [[100.0, 100.0], [20.0, 40.0]],
        "xfer_s": [[1e-9, 1e-9], [0.6, 0.3]],
        "transfers": [[1, 1], [10, 10]]},
        # the job's sums over ranks, as the analysis ranks the bins
        "rankings": {"bins": [
            {"lo": 0, "hi": 1024, "xfer_s": 2e-9, "min_s": 1e-9, "max_s": 2e-9},
            {"lo": 1024, "hi": 2048, "xfer_s": 0.9, "min_s": 0.15, "max_s": 0.24}]}}
    fig = bins_figure(a)
    assert fig is not None
    absolute = fig.axes[1]
    assert "absolute" in absolute.get_title(loc="left")
    assert "(ms)" in absolute.get_ylabel()
    heights = [b.get_height() for b in absolute.patches]  # min, maybe, lost per bin, in ms
    # bin 2: overlapped for sure 0.6*0.1 + 0.3*0.3 = 150 ms; maybe 0.6*0.1 + 0.3*0.1 = 90;
    # lost 900 - 240 = 660; bin 1 (2 ns) is too small to see
    assert heights == pytest.approx([0.0, 150.0, 0.0, 90.0, 0.0, 660.0], abs=1e-3)
    assert [t.get_text() for t in absolute.get_xticklabels()] == ["0 B–1 KiB", "1 KiB–2 KiB"]
