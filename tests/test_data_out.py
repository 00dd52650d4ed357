"""`mpi_overlap.load(run_dir)`: run directories as pandas DataFrames — a profile per rank
and entry, a benchmark's points (one nested level flattened), the headline figures — and
a directory that is not a run refused with the usual one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

import mpi_overlap
from fake_runs import run_dir
from mpi_overlap.core.errors import UserError


def test_a_profile_is_one_row_per_rank_and_entry(tmp_path: Path) -> None:
    def rank(r: int, nonoverlap: float) -> dict:
        return {"rank": r, "host": f"n{r}", "profile": {
            "totals": {"xfer_s": 1.0, "min_s": 0.2},
            "by_function": [{"fn": "MPI_Isend", "nonoverlap_s": nonoverlap},
                            {"fn": "MPI_Wait", "nonoverlap_s": 0.0}],
            "by_bin": [{"lo": 0, "hi": 1024, "transfers": 3}]}}

    run = mpi_overlap.load(run_dir(tmp_path, "profile",
                                    {"ranks": [rank(0, 0.5), rank(1, 0.25)]}))
    fn = run.frames["by_function"]
    assert list(fn["rank"]) == [0, 0, 1, 1] and list(fn["host"]) == ["n0", "n0", "n1", "n1"]
    assert fn.groupby("fn")["nonoverlap_s"].sum().to_dict() == {"MPI_Isend": 0.75,
                                                                "MPI_Wait": 0.0}
    assert run.frames["totals"].shape[0] == 2 and run.frames["by_bin"]["transfers"].sum() == 6
    assert "by_region" not in run.frames  # not in these profiles


def test_a_benchmark_gives_its_points_and_figures(tmp_path: Path) -> None:
    result = {"results": {"directions": [
        {"direction": "send", "sizes": [{"size": 0, "avail": {"value": 0.9}},
                                        {"size": 1024, "avail": {"value": 0.8}}]},
        {"direction": "recv", "sizes": [{"size": 0, "avail": {"value": 0.1}}]}]}}
    analysis = {"figures": [{"name": "latency_small_us", "value": 1.5, "unit": "µs"}]}
    run = mpi_overlap.load(run_dir(tmp_path, "overhead", result, analysis))
    sizes = run.frames["directions.sizes"]
    assert list(sizes["direction"]) == ["send", "send", "recv"]
    assert list(sizes["avail.value"]) == [0.9, 0.8, 0.1]
    assert run.frames["figures"].set_index("name")["value"]["latency_small_us"] == 1.5
    assert run.benchmark == "overhead"


def test_not_a_run_directory_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run directory"):
        mpi_overlap.load(tmp_path)


def test_report_tables_round_trip_from_their_csv(tmp_path: Path) -> None:
    """A table written as CSV with the report (csv_tables.py) reads back as the page shows
    it: the same headers and cells, commas and quotes included."""
    import json

    from mpi_overlap.report.csv_tables import write_csv_tables
    from mpi_overlap.report.html import HtmlTable, Section

    d = run_dir(tmp_path, "overhead", {"results": {}})
    rows = [("0 B", "1.20", 'a "quoted", comma'), ("1 KiB", "—", "")]
    table = HtmlTable("send — overhead per size", ("size", "µs", "note"), rows,
                      [("left", "num", "left")] * 2)
    listed = write_csv_tables([Section("Host overhead", None, [], [table])], d)
    (d / "report.json").write_text(json.dumps({"tables": listed}))
    back = mpi_overlap.load(d).report_tables()["send — overhead per size"]
    assert list(back.columns) == ["size", "µs", "note"]
    assert [tuple(r) for r in back.itertuples(index=False)] == rows


def test_csv_tables_that_do_not_fit_leave_none_behind(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk half-way through the tables: the ones written are removed (no half set,
    and their space is what run.json needs to say the report failed), the error goes on."""
    import errno

    from mpi_overlap.core.file_output import WriteError
    from mpi_overlap.report import csv_tables
    from mpi_overlap.report.html import HtmlTable, Section

    real = csv_tables.write_text
    calls = []

    def fill_up(path: Path, text: str) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise WriteError(path, OSError(errno.ENOSPC, "No space left on device"))
        real(path, text)

    monkeypatch.setattr(csv_tables, "write_text", fill_up)
    tables = [HtmlTable(f"t{i}", ("a",), [("1",)], [("left",)]) for i in range(4)]
    with pytest.raises(WriteError) as err:
        csv_tables.write_csv_tables([Section("s", None, [], tables)], tmp_path)
    assert err.value.disk_full
    assert list((tmp_path / "tables").glob("*.csv")) == []


def _profile_analysis(traced: bool) -> dict:
    """A made-up profile analysis: one pair of call sites, its advice, the checks, and
    waiting when traced."""
    measures = {"transfers": 4, "xfer_s": 0.4, "min_s": 0.1, "max_s": 0.3,
                "nonoverlap_s": 0.1, "min_pct": 25.0, "max_pct": 75.0, "share_pct": 100.0,
                "ranks": 2, "worst_rank": 1}
    post = {"site": "halo.c:42 (exchange)", "fn": "MPI_Isend", "calls": 4, "call_s": 0.01,
            **measures}
    end = {**post, "site": "halo.c:50 (exchange)", "fn": "MPI_Waitall", "call_s": 0.2}
    analysis = {
        "benchmark": "profile",
        "rankings": {"post_sites": [post], "end_sites": [end], "pairs": [{
            "post": post["site"], "post_fn": "MPI_Isend", "end": end["site"],
            "end_fn": "MPI_Waitall", "polled": 0, **measures}]},
        "advice": [{"rule": "progress", "sites": {"post": post["site"], "end": end["site"]},
                    "evidence": {"polled": 0, "min_s": 0.1}, "bound_s": 0.2, "text": "Poll."},
                   {"rule": "eager-limit", "sites": {"bin": "64 KiB–128 KiB"},
                    "evidence": {"bin_lo": 65536}, "bound_s": 0.05, "text": "Raise it."}],
        "checks": {"available": True, "threshold_pct": 5.0, "xfer_s": 0.4,
                   "flagged_transfers": 1, "flagged_xfer_s": 0.1, "flagged_pct": 25.0,
                   "flagged": True, "beyond_s": 0.02,
                   "in_call": {"transfers": 0, "xfer_s": 0.0, "calls": 0, "call_s": 0.0,
                               "longest_s": 0.0, "calls_beyond": 0, "beyond_s": 0.0,
                               "unchecked": 0, "flagged_transfers": 0,
                               "flagged_xfer_s": 0.0, "excess_s": 0.0},
                   "across_calls": {"transfers": 4, "xfer_s": 0.4, "flagged_transfers": 1,
                                    "flagged_xfer_s": 0.1, "excess_s": 0.02},
                   "ranks": [{"rank": r, "xfer_s": 0.2, "flagged_transfers": r,
                              "flagged_xfer_s": 0.1 * r, "flagged_pct": 50.0 * r,
                              "beyond_s": 0.02 * r} for r in (0, 1)],
                   "by_function": [], "by_bin": []},
        "two_sided": {"available": False, "reason": "no timeline traces (profile --trace)"},
    }
    if traced:
        analysis["two_sided"] = {"available": True, "waiting": {
            "total_s": 0.3, "ranks": [{"rank": 0, "waiting_s": 0.3, "late_sender_s": 0.3,
                                       "late_receiver_s": 0.0, "collective_s": 0.0}],
            "functions": [{"fn": "MPI_Waitall", "waiting_s": 0.3, "calls": 2,
                           "share_pct": 100.0, "late_sender_s": 0.3,
                           "late_receiver_s": 0.0, "collective_s": 0.0}],
            "bins": [], "regions": []}}
    return analysis


def test_a_profile_has_its_call_sites_pairs_advice_checks_and_waiting(tmp_path: Path) -> None:
    from mpi_overlap.profile.documents.profile_frames import FRAMES

    (tmp_path / "plain").mkdir()
    plain = mpi_overlap.load(run_dir(tmp_path / "plain", "profile", {"ranks": []},
                                     _profile_analysis(traced=False))).frames
    traced = mpi_overlap.load(run_dir(tmp_path, "profile", {"ranks": []},
                                      _profile_analysis(traced=True))).frames
    for frames in (plain, traced):
        for name, frame in FRAMES.items():  # the declared columns first, in order
            if name in frames:
                declared = [c for c, _ in frame.columns]
                assert list(frames[name].columns[:len(declared)]) == declared, name
    sites = traced["call_sites"].set_index("role")
    assert sites.loc["post", "site"] == "halo.c:42 (exchange)"
    assert sites.loc["completion", "fn"] == "MPI_Waitall"
    pair = traced["pairs"].iloc[0]
    assert (pair["post"], pair["end"], pair["transfers"]) == (
        "halo.c:42 (exchange)", "halo.c:50 (exchange)", 4)
    advice = traced["advice"]
    assert list(advice["rule"]) == ["progress", "eager-limit"]
    assert advice["sites.end"][0] == "halo.c:50 (exchange)"
    assert advice["sites.bin"][1] == "64 KiB–128 KiB" and advice["evidence.bin_lo"][1] == 65536
    checks = traced["checks"].set_index("check")
    assert list(checks.index) == ["all", "in-call", "across-calls"]
    assert bool(checks.loc["all", "flagged"]) and checks.loc["across-calls", "excess_s"] == 0.02
    assert list(traced["checks.by_rank"]["flagged_transfers"]) == [0, 1]
    assert traced["checks.by_function"].empty  # none flagged per function here
    assert traced["waiting.by_function"]["waiting_s"][0] == 0.3
    assert traced["waiting"]["late_sender_s"][0] == 0.3
    # without a trace there is no waiting to give
    assert not any(name.startswith("waiting") for name in plain)


def test_every_declared_frame_is_documented() -> None:
    from mpi_overlap.profile.documents.profile_frames import FRAMES

    doc = (Path(__file__).resolve().parent.parent / "docs" / "profiler.md").read_text()
    section = doc.split("### Data out", 1)[1].split("\n### ", 1)[0]
    for name in FRAMES:
        assert f"`{name}`" in section, name
