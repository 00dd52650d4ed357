"""The report-scale benchmark's parts that decide what it measures (report_scale.py):
synthetic run directories hold N renumbered copies of the source's rank profiles and say
they are synthetic, and the report reads them like any profile run. Its timings are a
benchmark's (`make bench-report-scale`), never asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import run_cli
from mpi_overlap.core.errors import UserError
from mpi_overlap.tools.report_scale import _parse_ranks, synthesize
from test_report_profile import sample_result, write_run


def test_synthetic_ranks_are_renumbered_copies_of_the_source(tmp_path: Path) -> None:
    source = write_run(tmp_path, "source", sample_result(), analysis=False)
    out = tmp_path / "ranks-5"
    synthesize(source, 5, out)
    result = json.loads((out / "result.json").read_text())
    base = json.loads((source / "result.json").read_text())["ranks"]
    assert [d["rank"] for d in result["ranks"]] == [0, 1, 2, 3, 4]
    assert {d["size"] for d in result["ranks"]} == {5}
    assert result["ranks_expected"] == 5 and result["missing_ranks"] == []
    for i, doc in enumerate(result["ranks"]):  # the profile of rank i is source rank i % 2's
        assert doc["profile"] == base[i % 2]["profile"]
    meta = json.loads((out / "run.json").read_text())
    assert meta["ranks"] == 5 and "5 copies" in meta["synthetic"]
    # ... and the report reads it as a 5-rank profile run
    proc = run_cli("report", str(out))
    assert proc.returncode == 0, proc.stderr
    analysis = json.loads((out / "analysis.json").read_text())
    assert len(analysis["ranks"]) == 5


def test_the_statistics_form_reports_what_the_documents_do(tmp_path: Path) -> None:
    """A synthetic job as the job's statistics alone (the form jobs of more than 8 ranks
    leave) gives the analysis its documents give, every figure but the call-site count
    and the record of where the sums came from."""
    source = write_run(tmp_path, "source", sample_result(), analysis=False)
    for form in ("documents", "statistics"):
        synthesize(source, 5, tmp_path / form, form)
        proc = run_cli("report", str(tmp_path / form))
        assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "statistics" / "result.json").read_text())
    assert result["ranks"] == [] and result["job_stats"]["ranks"] == 5
    by_stats, by_docs = (json.loads((tmp_path / f / "analysis.json").read_text())
                         for f in ("statistics", "documents"))
    assert by_stats["job_stats"] == {"source": "library", "ranks": 5, "reduce_s": None,
                                     "largest_message": 0, "documents": False}
    # the sample's documents come from before the checks on the bounds: the documents say
    # so (ranks_without), the statistics, which always hold them, count zeros
    assert by_docs["checks"]["ranks_without"] == [0, 1, 2, 3, 4]
    assert by_stats["checks"]["flagged_transfers"] == 0
    for a in (by_stats, by_docs):
        a.pop("job_stats"), a.pop("callsites"), a.pop("checks")
    assert by_stats == by_docs


def test_a_source_without_rank_profiles_is_refused(tmp_path: Path) -> None:
    empty = dict(sample_result(), ranks=[])
    source = write_run(tmp_path, "empty", empty, analysis=False)
    with pytest.raises(UserError, match="not a profile run with rank profiles"):
        synthesize(source, 4, tmp_path / "out")


@pytest.mark.parametrize("text", ["", "0", "12,x", "-3"])
def test_bad_rank_lists_are_one_line_errors(text: str) -> None:
    with pytest.raises(UserError, match="--ranks takes"):
        _parse_ranks(text)


def _per_rank_table(html: str) -> str:
    start = html.index("— per rank</caption>")
    return html[start:html.index("</table>", start)]


def test_many_ranks_page_shows_the_ranks_losing_most_and_the_csv_all(tmp_path: Path) -> None:
    """Above PAGE_RANKS the page's per-rank table shows the ranks losing most, with a note
    saying so; its CSV keeps a row for every rank (issue 19: distributions, not a row per
    rank, on the page; the data complete for scripts)."""
    from mpi_overlap.profile.report.profile_table import PAGE_RANKS

    source = write_run(tmp_path, "source", sample_result(), analysis=False)
    out = tmp_path / "many"
    n = PAGE_RANKS + 72
    synthesize(source, n, out)
    proc = run_cli("report", str(out))
    assert proc.returncode == 0, proc.stderr
    table = _per_rank_table((out / "report.html").read_text())
    assert table.count("<tr>") == 1 + PAGE_RANKS  # the header and the shown ranks
    assert f"the {PAGE_RANKS} ranks with the most non-overlapped time of {n}" in \
        (out / "report.html").read_text()
    report = json.loads((out / "report.json").read_text())
    (csv,) = [t["csv"] for t in report["tables"] if t["caption"].endswith("— per rank")]
    lines = (out / csv).read_text().splitlines()
    assert len(lines) == 1 + n
    # the ranks shown are those that lose most: odd ranks (source rank 1) lose more here
    analysis = json.loads((out / "analysis.json").read_text())
    lost = sorted(analysis["ranks"], key=lambda r: (-r["nonoverlap_s"], r["rank"]))
    for r in lost[:PAGE_RANKS]:
        assert f'<td class="left">{r["rank"]}</td>' in table or \
            f'<td class="left v-no-knee">{r["rank"]}</td>' in table


def test_beyond_sorted_ranks_the_rank_figure_is_a_distribution(tmp_path: Path) -> None:
    from mpi_overlap.profile.report.profile_plots import SORTED_RANKS, ranks_figure

    ranks = [{"rank": i, "in_totals": True, "min_pct": (i % 7) * 1.0,
              "max_pct": 50.0 + (i % 11), "nonoverlap_s": 1e-3 * (1 + i % 13)}
             for i in range(SORTED_RANKS + 500)]
    fig = ranks_figure({"ranks": ranks, "job": {"nonoverlap_s": 1.0}})
    assert fig is not None
    top = fig.panels[0]
    assert "sorted" in top.title
    for line, key in zip(top.lines, ("min_pct", "max_pct"), strict=True):
        ys = line.ys
        values = [r[key] for r in ranks]
        assert len(ys) == SORTED_RANKS  # read at that many points, whatever the ranks
        assert all(np.diff(ys) >= 0)  # sorted: a distribution
        assert ys[0] == min(values) and ys[-1] == max(values)  # values ranks had
    svg = fig.svg()
    # read at SORTED_RANKS points whatever the ranks: far below one area step per rank
    assert len(svg) < 400_000


@pytest.mark.mpi
def test_a_real_run_counts_its_rank_files_and_reports(tmp_path: Path) -> None:
    """--real: a real profile run's per-rank files and result.json are what it counts, and
    its report ran (the sizes and times are the benchmark's to print, not asserted)."""
    from mpi_overlap.tools.report_scale import measure_real, real_row

    (run,) = measure_real([2], tmp_path, keep=True)
    # 2 ranks: the job file, the job's statistics and, a small job, a per-rank file each
    assert run.rc == 0 and run.ranks == 2 and run.profile_files == 4
    (run_dir,) = [p for p in (tmp_path / "real-2").iterdir() if p.is_dir()]
    files = [*run_dir.glob("profile.rank-*.json"), run_dir / "profile.job.jsonl",
             run_dir / "profile.stats.json"]
    assert run.profile_files_mib == pytest.approx(sum(f.stat().st_size for f in files) / 2**20)
    assert run.result_mib == pytest.approx((run_dir / "result.json").stat().st_size / 2**20)
    assert (run_dir / "report.html").is_file() and run.report_peak_mib > 0
    assert run.gather_s is not None and run.gather_s >= 0
    assert run.reduce_s is not None and run.reduce_s > 0
    assert real_row(run).split()[:6] == ["2", f"{run.profile_wall_s:.1f}", "4",
                                         f"{run.profile_files_mib:.2f}",
                                         f"{run.gather_s * 1e3:.1f}",
                                         f"{run.reduce_s * 1e3:.1f}"]


def test_a_failed_real_run_says_why() -> None:
    from mpi_overlap.tools.report_scale import RealRun, real_limit_s, real_row

    row = real_row(RealRun(64, 420.0, 0, 0.0, 0.0, 0.0, 0.0, 3,
                           "profile: mpich: stopped by --timeout after 380 s"))
    assert row.endswith("(exit 3: profile: mpich: stopped by --timeout after 380 s; --keep "
                        "keeps the run)")
    assert real_limit_s(64) == 380.0


def test_source_without_synthetic_ranks_is_refused(tmp_path: Path) -> None:
    from mpi_overlap.tools.report_scale import main

    with pytest.raises(UserError, match="give --ranks with it"):
        main(["--real", "2", "--source", str(tmp_path)])
