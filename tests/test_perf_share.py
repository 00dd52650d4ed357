"""The library's own share of the ranks' CPU samples (profile/run/perf_share.py, issue 40):
`perf report --sort dso` read from a captured output, the binomial interval against the
beta quantiles that define it, the document against its model, perf missing or refused
said in one line, and one `profile --compare-bare --reps 1` of profiled_app."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from scipy.stats import beta

from cli_helpers import run_cli
from mpi_overlap.core.schema import model_errors
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.profile.analysis.document import AnalysisProfileCost
from mpi_overlap.profile.run import perf_share
from mpi_overlap.run.rundir import load_run

# rank 0 of a profiled_app launch (MPICH wheel), perf 6.1, its rows padded as perf pads them:
# perf report -i perf.rank-0 --no-children --sort dso --stdio -n
REPORT = (Path(__file__).parent / "data" / "perf-report-dso.txt").read_text()


def test_the_report_gives_each_objects_samples_the_event_and_the_lost():
    parsed = perf_share.parse_report(REPORT)
    assert parsed["event"] == "cpu-clock:ppp" and parsed["lost_samples"] == 0
    assert sum(parsed["dsos"].values()) == 465  # the header's count: every row was read
    assert parsed["dsos"]["libmpi_overlap.so"] == 3
    assert parsed["dsos"]["[kernel.kallsyms]"] == 316 and len(parsed["dsos"]) == 12


@pytest.mark.parametrize(("hits", "samples"), [(3, 465), (0, 465), (60, 40_000), (7, 7)])
def test_the_interval_is_clopper_pearsons(hits, samples):
    share, low, high = perf_share.share_interval(hits, samples)
    assert share == hits / samples
    # its definition: the beta quantiles (0 and 1 at the ends)
    want_low = beta.ppf(0.025, hits, samples - hits + 1) if hits else 0.0
    want_high = beta.ppf(0.975, hits + 1, samples - hits) if hits < samples else 1.0
    assert low == pytest.approx(want_low, rel=1e-6, abs=1e-12)
    assert high == pytest.approx(want_high, rel=1e-6, abs=1e-12)
    assert low <= share <= high
    assert perf_share.share_interval(0, 0) == (None, None, None)


def test_the_document_pools_the_ranks_and_its_sentence_is_a_lower_bound():
    rows = [perf_share.rank_row("perf.rank-0", perf_share.parse_report(REPORT)),
            perf_share.rank_row("perf.rank-1", {"event": "cpu-clock:ppp", "lost_samples": 2,
                                                "dsos": {"libmpi_overlap.so": 1, "app": 99}})]
    assert [r["rank"] for r in rows] == [0, 1] and rows[1]["lost_samples"] == 2
    doc = perf_share.document(rows, version="6.1.187")
    assert doc["library_samples"] == 4 and doc["samples"] == 565
    assert doc["share"] == pytest.approx(4 / 565)
    assert doc["ci95_low"] < doc["share"] < doc["ci95_high"]
    assert model_errors({"library_cpu_share": doc}, AnalysisProfileCost) == []
    line = perf_share.sentence(doc)
    assert line.startswith("The library's own share of the ranks' CPU samples: 0.71 % [")
    assert "2 ranks, 565 samples" in line and "a lower bound" in line
    assert "caches is not in it" in line
    # a rank whose launcher set no rank variable keeps its file's name, no rank
    assert perf_share.rank_row("perf.rank-pid42", {"event": None, "lost_samples": 0,
                                                   "dsos": {}})["rank"] is None


def _fake_perf(folder: Path, script: str) -> None:
    folder.mkdir()
    perf = folder / "perf"
    perf.write_text("#!/bin/sh\n" + script)
    perf.chmod(perf.stat().st_mode | stat.S_IXUSR)


def test_perf_missing_or_refused_is_one_line_and_no_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no perf here
    doc = perf_share.measure(lambda w, d: ["false"], {}, tmp_path, timeout_s=10)
    assert doc["unavailable"] == "perf is not on PATH" and doc["share"] is None
    assert model_errors({"library_cpu_share": doc}, AnalysisProfileCost) == []
    assert perf_share.sentence(doc) == ("The library's own share of the ranks' CPU samples "
                                        "was not measured: perf is not on PATH.")
    _fake_perf(tmp_path / "bin", 'case "$1" in --version) echo "perf version 9.9";; *)\n'
               'echo "Error: Access to performance monitoring and observability operations '
               'is limited." >&2; exit 255;; esac\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    version, why = perf_share.availability()
    assert version == "9.9"
    assert why.startswith("perf record refused to sample (Error: Access to performance "
                          "monitoring and observability operations is limited.")
    assert not (tmp_path / perf_share.DIR).exists()  # nothing launched


def test_each_rank_records_into_its_own_file_by_the_launchers_rank(tmp_path, monkeypatch):
    # a perf that writes its arguments where -o says: the wrapper's quoting and naming
    _fake_perf(tmp_path / "bin", 'while [ "$1" != "-o" ]; do shift; done\n'
               'out=$2; shift 2; printf "%s\\n" "$@" > "$out"\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    outdir = tmp_path / "a dir"  # a space in the run's path
    outdir.mkdir()
    for var, value in (("PMI_RANK", "3"), ("OMPI_COMM_WORLD_RANK", "5")):
        env = {k: v for k, v in os.environ.items()
               if k not in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")}
        subprocess.run([*perf_share.rank_wrapper(outdir), "env", "X=1", "prog", "a b"],
                       env={**env, var: value}, check=True)
        assert (outdir / f"perf.rank-{value}").read_text() == "--\nenv\nX=1\nprog\na b\n"


@pytest.mark.mpi
def test_compare_bare_gives_every_ranks_share_or_says_why_not(tmp_path):
    tc = get_toolchain("mpich")
    ensure_built(tc)
    app = build_dir_for(tc) / "tests" / "profiled_app"
    _, why_not = perf_share.availability()
    out = tmp_path / "runs"
    proc = run_cli("profile", "-n", "2", "--out", str(out), "--compare-bare", "--reps", "1",
                   "--", str(app), "post-compute-wait", "4096", "3", timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = [load_run(p) for p in out.iterdir() if (p / "run.json").is_file()]
    doc = run.result["cost"]["library_cpu_share"]
    findings = json.loads((run.path / "analysis.json").read_text())["findings"]
    assert perf_share.sentence(doc) in findings
    if why_not:  # this machine's perf: said, with no figure
        assert doc["unavailable"] == why_not and doc["share"] is None
        return
    assert doc["unavailable"] is None and doc["launch"]["status"] == "complete"
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    for row in doc["ranks"]:
        assert (run.path / perf_share.DIR / row["file"]).is_file()
        # every rank sampled
        assert row["samples"] > 0 and 0 <= row["library_samples"] <= row["samples"]
        assert row["ci95_low"] <= row["share"] <= row["ci95_high"]
    assert doc["samples"] == sum(r["samples"] for r in doc["ranks"])
    # the timed launch under perf wrote its profiles beside its perf files
    assert sorted(p.name for p in (run.path / perf_share.DIR).glob("profile.rank-*.json")) \
        == ["profile.rank-0.json", "profile.rank-1.json"]
