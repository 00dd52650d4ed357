"""The profile's size-bin figure: beside the shares (every bin 100 % tall), the bins by
absolute transfer time, so that a bin of nanoseconds is drawn that small beside one that
took most of the time."""

from __future__ import annotations

import pytest

from mpi_overlap.profile.report.profile_plots import bins_figure


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
    absolute = fig.panels[1]
    assert "absolute" in absolute.title
    assert "(ms)" in absolute.ylabel
    heights = [b.length for b in absolute.bars]  # min, maybe, lost per bin, in ms
    # bin 2: overlapped for sure 0.6*0.1 + 0.3*0.3 = 150 ms; maybe 0.6*0.1 + 0.3*0.1 = 90;
    # lost 900 - 240 = 660; bin 1 (2 ns) is too small to see
    assert heights == pytest.approx([0.0, 150.0, 0.0, 90.0, 0.0, 660.0], abs=1e-3)
    assert absolute.xticks is not None
    assert absolute.xticks.labels == ["0 B–1 KiB", "1 KiB–2 KiB"]


def _sample_bins() -> dict:
    return {"bins_by_rank": {
        "bins": [{"lo": 0, "hi": 1024, "label": "0 B–1 KiB"},
                 {"lo": 1024, "hi": 2048, "label": "1 KiB–2 KiB"}],
        "ranks": [0, 1],
        "min_pct": [[50.0, None], [10.0, 30.0]],
        "max_pct": [[100.0, None], [20.0, 40.0]],
        "xfer_s": [[1e-6, 0.0], [0.6, 0.3]],
        "transfers": [[1, 0], [10, 10]]},
        "rankings": {"bins": [
            {"lo": 0, "hi": 1024, "xfer_s": 1e-6, "min_s": 5e-7, "max_s": 1e-6},
            {"lo": 1024, "hi": 2048, "xfer_s": 0.9, "min_s": 0.15, "max_s": 0.24}]}}


def test_the_svg_is_the_same_text_for_the_same_data_and_fetches_nothing() -> None:
    """The figures are inlined in a page that must work offline and compare between runs:
    no script, no stylesheet or link, no ids (inlined figures share the page's ids), the
    same data written twice the same."""
    chart = bins_figure(_sample_bins())
    assert chart is not None
    svg = chart.svg()
    assert svg == bins_figure(_sample_bins()).svg()  # a new chart of the same data
    assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
    for absent in ("<script", "<style", "href", "@import", "url(", " id="):
        assert absent not in svg
    assert svg.count("http://") == 1  # the xmlns only
    # the missing bar of rank 1 in bin 1 is not drawn: 3 parts × 3 bars above, 3 × 2 below
    assert svg.count('fill="#1b7f3b"') == 3 + 2 + 1  # min parts + the legend's swatch
    assert "Overlap by message size and rank" in svg and "1 KiB–2 KiB" in svg


def test_the_report_modules_of_a_profile_import_no_matplotlib_or_numpy() -> None:
    """`profile` may cost 1 s beyond its program (issue 38): matplotlib's import alone was
    1 s, numpy's 0.1–0.3 s. What a profile's run and report import stays clear of both."""
    import subprocess
    import sys

    code = ("import sys; import mpi_overlap.cli, mpi_overlap.profile.run.session, "
            "mpi_overlap.commands.reporting, mpi_overlap.profile.analysis.profile, "
            "mpi_overlap.profile.analysis.twosided; "
            "from mpi_overlap.commands.reporting import reporter_of; reporter_of('profile'); "
            "print(sorted(m for m in ('matplotlib', 'numpy', 'scipy', 'jsonschema', "
            "'importlib.metadata', 'pandas', 'elftools') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
