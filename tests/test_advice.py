"""Advice (profile/analysis/advice.py; docs/profiler.md, "Advice"): each rule on analysis documents
built by hand, then on the mini-apps, whose communication is known by construction:
mo_halo's `overlap` mode completes its halo with MPI_Waitall after computing (the progress
advice), its `overlap-test` mode with MPI_Testall calls inside the computation (no such
advice: it already polls), and mo_cg with --imbalance 3 gives rank 0 four times the
independent work of rank 1 (the imbalance advice naming rank 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.benchmarks.progress import SPEC as PROGRESS
from mpi_overlap.benchmarks.progress.advice import progress_hint, progress_words
from mpi_overlap.benchmarks.sync_overlap import SPEC as SYNC_OVERLAP
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.profile.analysis.advice import advice, advice_findings
from mpi_overlap.profile.run.toolchain_evidence import latest_evidence
from mpi_overlap.run.rundir import load_run

MS = 1e-3


def _pair(post: str, post_fn: str, end: str, end_fn: str, xfer: float, lo: float,
          hi: float, n: int = 10) -> dict:
    return {"post": post, "post_fn": post_fn, "end": end, "end_fn": end_fn, "transfers": n,
            "xfer_s": xfer, "min_s": lo, "max_s": hi, "nonoverlap_s": max(0.0, xfer - hi)}


def _analysis(pairs: list[dict], ranks: list[tuple[int, float, float]] | None = None) -> dict:
    ranks = ranks or [(0, 1.0, 0.1), (1, 1.0, 0.1)]
    return {
        "job": {"xfer_s": sum(p["xfer_s"] for p in pairs)},
        "rankings": {"pairs": pairs},
        "ranks": [{"rank": r, "in_totals": True, "comp_s": c, "call_s": m}
                  for r, c, m in ranks],
    }


def _docs(version: str = "MPICH Version: 4.2") -> list[dict]:
    return [{"rank": 0, "mpi_library_version": version,
             "profile": {"sites": [{"id": 1, "label": "halo.c:57 (exchange)",
                                    "fn": "MPI_Waitall", "call_s": 0.3}]}},
            {"rank": 1, "mpi_library_version": version,
             "profile": {"sites": [{"id": 1, "label": "halo.c:57 (exchange)",
                                    "fn": "MPI_Waitall", "call_s": 0.5}]}}]


def test_wait_after_computation_gets_the_progress_advice_with_its_bound():
    p = _pair("halo.c:42 (exchange)", "MPI_Isend", "halo.c:57 (exchange)", "MPI_Waitall",
              10 * MS, 2 * MS, 9 * MS)
    items = advice(_analysis([p]), _docs())
    by_rule = {x["rule"]: x for x in items}
    progress = by_rule["progress"]
    assert progress["bound_s"] == pytest.approx(7 * MS)  # max − min
    assert progress["sites"] == {"post": "halo.c:42 (exchange)", "end": "halo.c:57 (exchange)"}
    assert "MPI_Test" in progress["text"] and "MPICH_ASYNC_PROGRESS=1" in progress["text"]
    assert "halo.c:42" in progress["text"] and "7.00 ms" in progress["text"]
    # 1 ms of it had no computation beside it at all
    assert by_rule["move-computation"]["bound_s"] == pytest.approx(1 * MS)
    assert items[0]["rule"] == "progress"  # largest bound first
    assert advice_findings(items)[0].startswith("Advice 1: Transfers posted by MPI_Isend")


def test_a_program_that_already_polls_gets_no_progress_advice():
    p = _pair("halo.c:42 (exchange)", "MPI_Isend", "halo.c:61 (exchange)", "MPI_Testall",
              10 * MS, 0.0, 10 * MS)
    assert advice(_analysis([p]), _docs()) == []
    # completed by MPI_Waitall, but most transfers saw a Test call between post and it
    waited = {**_pair("halo.c:42 (exchange)", "MPI_Isend", "halo.c:64 (exchange)",
                      "MPI_Waitall", 10 * MS, 0.0, 10 * MS), "polled": 6}
    assert advice(_analysis([waited]), _docs()) == []
    waited["polled"] = 4  # of 10: most were not polled
    assert [x["rule"] for x in advice(_analysis([waited]), _docs())] == ["progress"]


def test_blocking_calls_get_the_nonblocking_form():
    items = advice(_analysis([
        _pair("cg.c:321 (reduce_sum)", "MPI_Allreduce", "cg.c:321 (reduce_sum)",
              "MPI_Allreduce", 4 * MS, 0.0, 0.0),
        _pair("main.c:9 (main)", "MPI_Sendrecv", "main.c:9 (main)", "MPI_Sendrecv",
              3 * MS, 0.0, 0.0),
    ]), _docs())
    texts = {x["sites"]["post"]: x["text"] for x in items if x["rule"] == "nonblocking"}
    assert "MPI_Iallreduce" in texts["cg.c:321 (reduce_sum)"]
    assert "MPI_Irecv/MPI_Isend" in texts["main.c:9 (main)"]
    assert [x["bound_s"] for x in items] == pytest.approx([4 * MS, 3 * MS])


def test_small_gains_and_unknown_sites_give_no_advice():
    tiny = _pair("a.c:1 (f)", "MPI_Isend", "a.c:2 (f)", "MPI_Wait", 100 * MS, 99.5 * MS,
                 100 * MS)  # 0.5 % undecided: under MIN_SHARE
    unknown = _pair("unknown", "MPI_Isend", "a.c:2 (f)", "MPI_Wait", 50 * MS, 0.0, 50 * MS)
    assert advice(_analysis([tiny, unknown]), _docs()) == []


def test_unequal_computation_names_the_busiest_rank_and_where_the_others_wait():
    a = _analysis([], ranks=[(0, 4.0, 0.2), (1, 1.0, 3.2)])
    items = advice(a, _docs())
    assert [x["rule"] for x in items] == ["imbalance"]
    x = items[0]
    assert x["evidence"]["busiest_rank"] == 0 and x["bound_s"] == pytest.approx(1.5)
    assert "rank 0" in x["text"] and "halo.c:57 (exchange)" in x["text"]
    assert advice(_analysis([], ranks=[(0, 1.0, 0.1), (1, 0.95, 0.15)]), _docs()) == []


def test_progress_hints_follow_the_library():
    assert "I_MPI_ASYNC_PROGRESS=1" in progress_hint("Intel(R) MPI Library 2021.18")
    assert "MPICH_ASYNC_PROGRESS=1" in progress_hint("MPICH Version: 4.2.0")
    assert "no general switch" in progress_hint("Open MPI v5.0.11")


# ---------------------------------------------------------------- the mini-apps


def _profile_app(tmp_path: Path, app: str, *args: str):
    tc = get_toolchain("mpich")
    ensure_built(tc)
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "runs"
    proc = run_cli("profile", "-n", "2", "--out", str(out), "--",
                   str(build_dir_for(tc) / "bench" / app), *args, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc, load_run(next(p for p in out.iterdir() if (p / "run.json").is_file()))


def _progress_ends(run) -> set[str]:
    return {x["evidence"]["end_fn"] for x in run.analysis["advice"] if x["rule"] == "progress"}


@pytest.mark.mpi
def test_halo_overlap_gets_the_progress_advice_and_overlap_test_does_not(tmp_path):
    halo = ("--iterations", "50", "--grid", "48", "--quick")
    proc, run = _profile_app(tmp_path / "overlap", "mo_halo", "--modes", "overlap", *halo)
    assert "MPI_Waitall" in _progress_ends(run)
    x = next(x for x in run.analysis["advice"] if x["rule"] == "progress")
    assert x["sites"]["post"].startswith("grid.c:") and x["sites"]["end"].startswith("halo.c:")
    assert 0 < x["bound_s"] <= x["evidence"]["xfer_s"]
    assert "Advice" in proc.stdout and "advice, by the most it can hide" in proc.stdout
    _, tested = _profile_app(tmp_path / "test", "mo_halo", "--modes", "overlap-test", *halo)
    assert _progress_ends(tested) == set()


@pytest.mark.mpi
def test_an_imbalanced_cg_names_rank_0(tmp_path):
    _, run = _profile_app(tmp_path, "mo_cg", "--modes", "allreduce", "--iterations", "100",
                          "--work-us", "200", "--imbalance", "3", "--quick")
    x = next(x for x in run.analysis["advice"] if x["rule"] == "imbalance")
    assert x["evidence"]["busiest_rank"] == 0 and "rank 0" in x["text"]
    # rank 0 does 600 µs more independent work per iteration: 60 ms over 100 iterations,
    # half of it above the mean of two ranks (a loaded machine only stretches it)
    assert x["bound_s"] >= 0.5 * 0.030


# ---------------------------------------------------------------- the toolchain's own runs


def _bin(lo: int, hi: int | None, nonoverlap: float) -> dict:
    return {"lo": lo, "hi": hi, "label": f"{lo}–{hi}", "transfers": 8,
            "nonoverlap_s": nonoverlap}


def test_bins_just_above_the_measured_eager_limit_get_the_setting_that_moves_it():
    a = _analysis([])
    a["job"]["xfer_s"] = 100 * MS
    a["rankings"]["bins"] = [_bin(8192, 16384, 9 * MS), _bin(16384, 32768, 20 * MS),
                             _bin(32768, 65536, 30 * MS), _bin(262144, 524288, 50 * MS)]
    a["eager_limit"] = {"run": "runs/x-sync-overlap-mpich", "last_yes_bytes": 16000,
                        "first_no_bytes": 16384, "setting": "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_"
                        "CELL_SIZE", "setting_bytes": 16384, "finding": "f"}
    items = [x for x in advice(a, _docs()) if x["rule"] == "eager-limit"]
    # below the limit (eager already) and far above it (4x and more): none
    assert [x["evidence"]["bin_lo"] for x in items] == [32768, 16384]
    assert items[0]["bound_s"] == pytest.approx(30 * MS)
    assert "raise MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE (now 16384 B) above 65536 B" \
        in items[0]["text"]
    assert "runs/x-sync-overlap-mpich" in items[0]["text"]
    a["eager_limit"] = None
    assert [x for x in advice(a, _docs()) if x["rule"] == "eager-limit"] == []


def _fake_run(base: Path, name: str, benchmark: str, toolchain: str, analysis: dict,
              status: str = "complete") -> None:
    d = base / name
    d.mkdir(parents=True)
    (d / "run.json").write_text(json.dumps({"benchmark": benchmark, "status": status,
                                            "toolchain": {"name": toolchain}}))
    (d / "analysis.json").write_text(json.dumps(analysis))


def test_the_newest_complete_run_of_the_same_toolchain_is_quoted(tmp_path):
    prog = {"finding": "no 1 KiB–4 MiB", "verdict_ranges": {"receiver-first": "no"}}
    _fake_run(tmp_path, "20261101-000000-progress-mpich", "progress", "mpich",
              {**prog, "finding": "old"})
    _fake_run(tmp_path, "20261102-000000-progress-mpich", "progress", "mpich", prog)
    _fake_run(tmp_path, "20261103-000000-progress-mpich", "progress", "mpich", prog,
              status="failed")
    _fake_run(tmp_path, "20261104-000000-progress-openmpi", "progress", "openmpi", prog)
    got = latest_evidence(PROGRESS, tmp_path, "mpich")
    assert got["run"].endswith("20261102-000000-progress-mpich") and got["finding"] == \
        "no 1 KiB–4 MiB"
    assert latest_evidence(PROGRESS, tmp_path, "intel")["run"] is None
    none_yet = latest_evidence(PROGRESS, tmp_path, "intel")
    assert "bench progress --mpi intel" in progress_words(none_yet)
    assert "Measured for this MPI" in progress_words(got)
    sync = {"finding": "f", "limit": {"status": "bracketed", "last_yes_bytes": 100,
                                      "first_no_bytes": 200},
            "reported": {"source": "X", "bytes": 128}}
    _fake_run(tmp_path, "20261105-000000-sync-overlap-mpich", "sync-overlap", "mpich", sync)
    eager = latest_evidence(SYNC_OVERLAP, tmp_path, "mpich")
    assert (eager["last_yes_bytes"], eager["first_no_bytes"], eager["setting"]) == (100, 200, "X")
    assert latest_evidence(SYNC_OVERLAP, tmp_path / "missing", "mpich") is None


def test_advice_on_bounds_the_checks_flagged_says_so():
    p = _pair("halo.c:42 (exchange)", "MPI_Isend", "halo.c:57 (exchange)", "MPI_Waitall",
              10 * MS, 2 * MS, 9 * MS)
    a = _analysis([p])
    a["checks"] = {"flagged": True, "flagged_pct": 100.0}
    for x in advice(a, _docs()):
        assert x["evidence"]["bounds_flagged_pct"] == 100.0
        assert x["text"].endswith("flagged transfers carrying 100 % of the transfer time: "
                                  "recalibrate before acting on this figure.")
