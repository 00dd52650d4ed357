"""The job file (issue 19): rank 0 writes every rank's final document into one
profile.job.jsonl at MPI_Finalize (native/profiler/mop_gather.h); per-rank files are
written besides it only for small jobs or with --per-rank, and the snapshots of ranks that
never reached MPI_Finalize stand (profile/documents/rank_documents.py).

- reading: which document wins when a rank has two, a file cut by a kill, damaged lines;
- end to end, 64 ranks oversubscribed on this machine's cores (mo_halo, a short run):
  by default the job's statistics reduced inside the job (profile.stats.json) and
  nothing else; with --documents one job file too, with --per-rank the per-rank files
  too, and the run collected from either alone gives the same rank documents and the same
  analysis, exactly; the library's statistics equal those reduced from the per-rank files,
  bit for bit, and the analysis made from the statistics alone is the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from mpi_overlap.profile.documents import job_stats
from mpi_overlap.profile.documents.job_stats import STATS_FILE
from mpi_overlap.profile.documents.rank_documents import JOB_FILE, read_rank_documents

RANKS = 64


def _doc(rank: int, status: str = "complete", **extra: Any) -> dict[str, Any]:
    return {"schema": "mpi-overlap/profile-rank", "schema_version": 1, "rank": rank,
            "status": status, **extra}


def _job_line(ranks: int, in_file: int) -> dict[str, Any]:
    return {"schema": "mpi-overlap/profile-job", "schema_version": 1, "ranks": ranks,
            "in_file": in_file, "own_files": [], "rank_files_kept": False, "bytes": 0,
            "largest_line": 0, "gather_s": 0.001}


def _write_job(run_dir: Path, lines: list[dict[str, Any]], tail: bytes = b"") -> None:
    text = "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in lines)
    (run_dir / JOB_FILE).write_bytes(text.encode() + tail)


def _write_rank(run_dir: Path, doc: dict[str, Any]) -> None:
    (run_dir / f"profile.rank-{doc['rank']}.json").write_text(json.dumps(doc, indent=2) + "\n")


def test_the_job_file_and_per_rank_files_are_read_together(tmp_path: Path) -> None:
    # rank 0 and 1 in the job file; rank 1's per-rank file is an older snapshot; rank 2
    # never reached MPI_Finalize: its snapshot is all there is.
    _write_job(tmp_path, [_doc(1, tag="job"), _doc(0, tag="job"), _job_line(3, 2)])
    _write_rank(tmp_path, _doc(1, "running", tag="snapshot"))
    _write_rank(tmp_path, _doc(2, "running", tag="snapshot"))
    found = read_rank_documents(tmp_path)
    assert sorted(found.docs) == [0, 1, 2]
    assert [found.docs[r]["tag"] for r in (0, 1, 2)] == ["job", "job", "snapshot"]
    assert found.source == {0: "job file", 1: "job file", 2: "profile.rank-2.json"}
    assert found.job is not None and found.job["in_file"] == 2
    assert found.problems == []


def test_a_final_per_rank_document_beats_a_snapshot_in_a_cut_job_file(tmp_path: Path) -> None:
    """A rank's final per-rank file (it could not send its document) wins over an older
    state of it; a job file without its last line says it was cut, and its whole lines
    stand, the cut one is left out."""
    _write_job(tmp_path, [_doc(0), _doc(1, "running")], tail=b'{"schema": "mpi-overl')
    _write_rank(tmp_path, _doc(1, "complete", tag="own file"))
    found = read_rank_documents(tmp_path)
    assert found.docs[1]["tag"] == "own file" and found.docs[0]["status"] == "complete"
    assert found.job is None
    assert len(found.problems) == 1 and "was cut before its last line" in found.problems[0]


def test_damaged_lines_are_named_and_left_out(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MPI_OVERLAP_MAX_JSON_MIB", str(200 / (1 << 20)))  # 200 bytes a line
    big = _doc(3, pad="x" * 400)
    text = (json.dumps(_doc(0)) + "\nnot json\n" + json.dumps({"schema": "other"}) + "\n"
            + json.dumps(big) + "\n" + json.dumps(_doc(2)) + "\n"
            + json.dumps(_job_line(4, 2)) + "\n")
    (tmp_path / JOB_FILE).write_text(text)
    found = read_rank_documents(tmp_path)
    assert sorted(found.docs) == [0, 2]
    assert found.job is not None
    said = "\n".join(found.problems)
    assert "line 2" in said and "line 3 is not a rank's profile" in said
    assert "line 4 is longer than" in said
    assert len(found.problems) == 3


def test_the_stream_reads_again_on_every_pass_and_holds_no_document(tmp_path: Path) -> None:
    """RankDocumentStream (what collect goes through): rank order whatever the file order,
    each pass reads the files again, and a job file gone since it was indexed leaves the
    per-rank files and one problem, not a traceback."""
    from mpi_overlap.profile.documents.rank_documents import RankDocumentStream

    _write_job(tmp_path, [_doc(2), _doc(0), _job_line(3, 2)])
    _write_rank(tmp_path, _doc(1, "running"))
    stream = RankDocumentStream(tmp_path)
    assert [(r, src) for r, _, src in stream] == [(0, "job file"), (1, "profile.rank-1.json"),
                                                  (2, "job file")]
    assert [d["rank"] for _, d, _ in stream] == [0, 1, 2] and stream.problems == []
    (tmp_path / JOB_FILE).unlink()
    assert [r for r, _, _ in stream] == [1]
    assert stream.problems == [f"{JOB_FILE}: cannot read it (No such file or directory)"]


# ----- end to end -------------------------------------------------------------------------

def _mo_halo() -> Path:
    from mpi_overlap.platform.build import build_dir_for, ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain

    tc = get_toolchain("mpich")
    ensure_built(tc)
    return build_dir_for(tc) / "bench" / "mo_halo"


def _table() -> Path:
    """The machine's table, so that 64 ranks do not calibrate collectives of their own."""
    from mpi_overlap.calibration.calibrate import find_or_calibrate
    from mpi_overlap.platform.toolchains import get_toolchain

    return find_or_calibrate(get_toolchain("mpich"), ranks=2)


def _profile_64(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "runs"
    proc = run_cli("--quiet", "profile", "-n", str(RANKS), "--oversubscribe", "--table",
                   str(_table()), "--timeout", "240", *extra, "--out", str(out),
                   "--", str(_mo_halo()), "--local", "8", "--iterations", "5", "--warmup",
                   "0", "--modes", "nonblocking", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = [p for p in out.iterdir() if (p / "result.json").is_file()]
    return run_dir


def _collect_alone(run_dir: Path, keep: str, into: Path) -> dict[str, Any]:
    """result.json collected again from a copy of run_dir holding only the job file
    (keep="job"), only the per-rank files (keep="ranks"), only the job's statistics
    (keep="stats") or all it has (keep="all"); but for "job" and "ranks", without the job's
    statistics (profile.stats.json), so that the analysis reduces the documents itself."""
    from mpi_overlap.profile.documents.collect import collect

    shutil.copytree(run_dir, into)
    def drop(name: str) -> bool:
        if not name.startswith("profile.") or keep == "all":
            return False
        if keep == "stats":
            return name != STATS_FILE
        return name == STATS_FILE or (name == JOB_FILE) == (keep == "ranks")

    for p in into.iterdir():
        if drop(p.name):
            p.unlink()
    old = json.loads((run_dir / "result.json").read_text())
    return collect(into, ranks_expected=old["ranks_expected"], app_argv=old["app"]["argv"],
                   cwd=old["app"]["cwd"], table=Path(old["table"]["path"]),
                   forced=old["table"]["forced"], bins=old["bins"],
                   table_info={k: v for k, v in old["table"].items()
                               if k not in ("path", "forced")})


@pytest.mark.mpi
def test_64_ranks_write_one_reduced_file_by_default(tmp_path: Path) -> None:
    """Issue 19's acceptance: by default a 64-rank job leaves the job's statistics and
    nothing else of the profiler's (no job file of documents, no per-rank file, no
    snapshot), and the report is made from them."""
    run_dir = _profile_64(tmp_path)
    assert sorted(p.name for p in run_dir.glob("profile.*")) == [STATS_FILE]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["status"] == "complete" and result["missing_ranks"] == []
    assert result["ranks"] == [] and result["job_file"] is None
    stats = result["job_stats"]  # the library's reduction, read with the run
    assert stats["ranks"] == stats["ranks_with_data"] == RANKS and stats["reduce_s"] > 0
    assert stats["rank_rows"]["rank"] == list(range(RANKS))
    assert stats["totals"]["transfers"] == sum(stats["rank_rows"]["transfers"]) > 0
    analysis = json.loads((run_dir / "analysis.json").read_text())
    assert analysis["job"]["ranks"] == RANKS and analysis["job_stats"]["documents"] is False
    assert analysis["rankings"]["pairs"] and (run_dir / "report.html").is_file()
    from mpi_overlap.profile.report.profile_table import summary
    from mpi_overlap.run.rundir import load_run

    said = [s for s in summary(load_run(run_dir)) if "rank 0's reduction" in s]
    assert len(said) == 1 and "the rank documents were not kept" in said[0]


@pytest.mark.mpi
def test_64_ranks_with_documents_write_one_job_file_and_no_per_rank_files(
        tmp_path: Path) -> None:
    run_dir = _profile_64(tmp_path, "--documents", "--no-report")
    assert not list(run_dir.glob("profile.rank-*.json"))
    assert sorted(p.name for p in run_dir.glob("profile.*")) == [JOB_FILE, STATS_FILE]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["status"] == "complete" and result["missing_ranks"] == []
    assert sorted(d["rank"] for d in result["ranks"]) == list(range(RANKS))
    job = result["job_file"]
    assert job["ranks"] == job["in_file"] == RANKS and job["own_files"] == []
    assert job["rank_files_kept"] is False and job["gather_s"] >= 0
    lines = (run_dir / JOB_FILE).read_bytes().splitlines()
    assert len(lines) == RANKS + 1 and job["bytes"] == sum(len(ln) + 1 for ln in lines[:-1])
    assert [json.loads(ln)["rank"] for ln in lines[:-1]] == list(range(RANKS))  # rank order
    # the report says what the gather cost, from the run's own record
    from mpi_overlap.core.formatting import fmt_mib
    from mpi_overlap.profile.report.profile_table import summary
    from mpi_overlap.run.rundir import load_run

    said = [s for s in summary(load_run(run_dir)) if s.startswith("Rank 0 gathered")]
    assert said == [f"Rank 0 gathered {RANKS} rank profiles into profile.job.jsonl "
                    f"({fmt_mib(job['bytes'])}) in {job['gather_s'] * 1e3:.1f} ms after "
                    "the program's last MPI call."]


def _library_time_apart(a: dict) -> dict:
    """The analysis' library_time, taken out of it with its finding: what the ranks
    recorded is the same from any file, what rank 0's gather and reduction took is known
    only from the job's own files."""
    a["findings"] = [f for f in a["findings"] if not f.startswith("Once per launch")]
    return a.pop("library_time")


def _ranks_part(lt: dict) -> dict:
    return {k: v for k, v in lt.items() if k not in ("gather_s", "reduce_s", "per_launch_s")}


@pytest.mark.mpi
def test_the_job_file_gives_what_the_per_rank_files_give_exactly(tmp_path: Path) -> None:
    from mpi_overlap.profile.analysis.profile import analyze_profile

    run_dir = _profile_64(tmp_path, "--documents", "--per-rank", "--no-report")
    assert len(list(run_dir.glob("profile.rank-*.json"))) == RANKS
    from_job = _collect_alone(run_dir, "job", tmp_path / "job-only")
    from_ranks = _collect_alone(run_dir, "ranks", tmp_path / "ranks-only")
    assert from_job["job_file"]["rank_files_kept"] is True and from_ranks["job_file"] is None
    assert len(from_job["ranks"]) == RANKS
    assert from_job["ranks"] == from_ranks["ranks"]  # every number, bit for bit
    assert from_job["warnings"] == from_ranks["warnings"]
    a_job = analyze_profile(from_job, tmp_path / "job-only")
    a_ranks = analyze_profile(from_ranks, tmp_path / "ranks-only")
    assert a_job.pop("job_file") == from_job["job_file"] and a_ranks.pop("job_file") is None
    # the library's time once per launch: rank 0's gather is known from the job file only
    lt_job, lt_ranks = _library_time_apart(a_job), _library_time_apart(a_ranks)
    assert lt_job["gather_s"] == from_job["job_file"]["gather_s"] and lt_ranks["gather_s"] is None
    assert _ranks_part(lt_job) == _ranks_part(lt_ranks)
    assert a_job == a_ranks  # everything else

    # The job's statistics rank 0 reduced inside the job equal those reduced here from the
    # per-rank files, every number bit for bit; so does the analysis made from either.
    reduced = json.loads((run_dir / STATS_FILE).read_text())
    docs = [d for _, d in sorted(read_rank_documents(tmp_path / "ranks-only").docs.items())]
    assert job_stats.comparable(job_stats.from_file(reduced)) == \
        job_stats.comparable(job_stats.reduce_documents(docs, RANKS))
    # ... and so does the whole file, made here from the documents (stats_file.py)
    from mpi_overlap.profile.documents.stats_file import stats_document

    assert stats_document(docs, RANKS) == {**reduced, "reduce_s": None, "largest_message": 0}
    rows = reduced["rank_rows"]
    for d in docs:
        totals, checks = d["profile"]["totals"], d["profile"]["checks"]
        r, inc, acr = d["rank"], checks["in_call"], checks["across_calls"]
        assert [rows[k][r] for k in ("transfers", "xfer_s", "min_s", "max_s", "comp_s",
                                     "call_s", "wall_s")] == \
            [totals[k] for k in ("transfers", "xfer_s", "min_s", "max_s", "comp_s",
                                 "call_s")] + [d["wall_s"]]
        assert [rows[k][r] for k in ("in_call_calls", "in_call_call_s", "in_call_longest_s",
                                     "flagged_transfers", "flagged_xfer_s", "beyond_s")] == \
            [inc["calls"], inc["call_s"], inc["longest_s"],
             inc["flagged"]["transfers"] + acr["flagged"]["transfers"],
             inc["flagged"]["xfer_s"] + acr["flagged"]["xfer_s"], checks["beyond_s"]]
    # every rank counted events: all 64 counted, the lowest 16 listed
    assert reduced["counters_ranks"]["events"] == {"n": RANKS, "first": list(range(16))}
    from_all = _collect_alone(run_dir, "all", tmp_path / "all")
    stats = dict(from_all["job_stats"])
    assert stats.pop("site_labels") and stats == reduced  # collect names the call sites
    a_all = analyze_profile(from_all, tmp_path / "all")
    assert a_all.pop("job_file") == from_all["job_file"]
    assert a_all.pop("job_stats")["source"] == "library"
    assert a_ranks.pop("job_stats") == {"source": "documents"}
    # rank 0's gather and reduction are known from the job's files only
    lt_all = _library_time_apart(a_all)
    assert lt_all["reduce_s"] == reduced["reduce_s"]
    assert _ranks_part(lt_all) == _ranks_part(lt_ranks)
    assert a_all == a_ranks

    # Statistics only (what profile --statistics-only leaves): the analysis from the rows
    # and tables alone is the same wherever the statistics hold the numbers.
    only = _collect_alone(run_dir, "stats", tmp_path / "stats-only")
    assert len(only["ranks"]) == 0 and only["missing_ranks"] == []
    assert only["status"] == "complete"
    a_only = analyze_profile(only, tmp_path / "stats-only")
    assert a_only["job_stats"]["documents"] is False
    assert a_only.pop("callsites")["sites"] > 0  # distinct places, not sites per rank
    assert a_only.pop("library_time") is None  # the rows carry no library time (profiler.md)
    for a in (a_only, a_ranks):
        a.pop("job_stats", None), a.pop("job_file", None), a.pop("callsites", None)
    assert a_only["rankings"]["pairs"] and a_only["bins_by_rank"]["bins"]
    assert a_only == a_ranks


def _direct(tmp_path: Path, ranks_env: list[dict[str, str]]) -> Path:
    """The library on its own, one MPMD part per rank with its own settings (over the
    machine's table, MPI_OVERLAP_PER_RANK=0), as a user's mpiexec would run it."""
    import subprocess

    from mpi_overlap.platform.build import ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain
    from mpi_overlap.run.preload import ProfilerSetup, profiler_library

    tc = get_toolchain("mpich")
    outdir = tmp_path / "direct"
    outdir.mkdir()
    setup = ProfilerSetup(library=profiler_library(ensure_built(tc)), table=_table(),
                          outdir=outdir, per_rank=False)
    app = [str(_mo_halo()), "--local", "8", "--iterations", "3", "--warmup", "0", "--modes",
           "nonblocking"]
    cmd = [tc.mpiexec]
    for i, extra in enumerate(ranks_env):
        env = {**setup.env(), **extra}
        cmd += [*([":"] if i else []), "-n", "1", "env",
                f"LD_PRELOAD={setup.library.resolve()}",
                *[f"{k}={v}" for k, v in env.items()], *app]
    done = subprocess.run(cmd, env=tc.environment(), capture_output=True, text=True,
                          timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return outdir


@pytest.mark.mpi
def test_disabled_ranks_reach_the_job_file_and_leave_no_file_of_their_own(
        tmp_path: Path) -> None:
    """Profiling refused on every rank (bad MPI_OVERLAP_BINS): each rank wrote its
    `disabled` document at MPI_Init; at MPI_Finalize they go into the job file, which
    replaces those files. The job's statistics count them and say none had data."""
    outdir = _direct(tmp_path, [{"MPI_OVERLAP_BINS": "5,1"}] * 2)
    assert sorted(p.name for p in outdir.glob("profile.*")) == [JOB_FILE, STATS_FILE]
    stats = json.loads((outdir / STATS_FILE).read_text())
    assert (stats["ranks"], stats["ranks_with_data"]) == (2, 0)
    assert stats["rank_rows"]["disabled"] == [True, True] and stats["by_function"] == []
    found = read_rank_documents(outdir)
    assert sorted(found.docs) == [0, 1] and found.problems == []
    for doc in found.docs.values():
        assert doc["status"] == "disabled" and "MPI_OVERLAP_BINS" in doc["reason"]


@pytest.mark.mpi
def test_a_rank_with_profiling_off_means_no_job_file_not_a_hang(tmp_path: Path) -> None:
    """MPI_OVERLAP_DISABLE on rank 0 only (an MPMD launch): rank 1 would wait forever for
    a rank 0 that never gathers. The ranks agree at MPI_Init to write no job file, and the
    profiled rank writes its own file."""
    outdir = _direct(tmp_path, [{"MPI_OVERLAP_DISABLE": "1"}, {}])
    assert sorted(p.name for p in outdir.glob("profile.*")) == ["profile.rank-1.json"]
    found = read_rank_documents(outdir)
    assert list(found.docs) == [1] and found.docs[1]["status"] == "complete"
