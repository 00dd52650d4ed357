"""`bench overhead-suite`: suite order from the registry, one report with every finding,
and a failing benchmark reported while the suite goes on and exits non-zero."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import run_cli
from mpi_overlap import cli
from mpi_overlap.benchmarks import registry
from mpi_overlap.benchmarks.registry import Benchmark
from mpi_overlap.commands.suite import suite_benchmarks
from mpi_overlap.core.documents import report_errors
from mpi_overlap.run.rundir import load_run


def _bench(name: str, order: int, suite: str | None = "overhead") -> Benchmark:
    return Benchmark(name=name, program=f"mo_{name}", title=name, min_ranks=1, analyze=None,
                     default_timeout_s=60.0, quick_timeout_s=60.0, suite=suite,
                     suite_order=order)


def test_suite_order_comes_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = {b.name: b for b in (_bench("b", 30), _bench("a", 10), _bench("x", 5, None),
                                _bench("c", 30))}
    monkeypatch.setattr(registry, "BENCHMARKS", fake)
    assert [b.name for b in suite_benchmarks("overhead")] == ["a", "b", "c"]


def test_real_registry_holds_this_branchs_benchmarks() -> None:
    names = [b.name for b in suite_benchmarks("overhead")]
    assert names.index("threads-procs") < names.index("error-checking")


def _reports(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.startswith("report-overhead-suite")]


@pytest.mark.mpi
def test_quick_suite_writes_one_report_with_every_finding(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = run_cli("bench", "overhead-suite", "--quick", "-n", "2", "--out", str(out),
                   timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (report,) = _reports(out)
    doc = json.loads((report / "report.json").read_text())
    assert report_errors(doc) == []
    findings = {f["benchmark"]: f for f in doc["suite"]["findings"]}
    assert {"threads-procs", "error-checking"} <= set(findings)
    html = (report / "report.html").read_text()
    assert "overhead suite: findings" in html
    for name in ("threads-procs", "error-checking"):
        f = findings[name]
        assert f["status"] == "complete"
        assert re.search(r"\d", f["finding"]) and "\n" not in f["finding"]
        # the analysis as a run is loaded: with run.json's guard (a disturbed run says so)
        assert load_run(Path(f["path"])).analysis["finding"] == f["finding"]
    # the summary comes first, before every benchmark's sections
    assert html.index("overhead suite: findings") < html.index("Threads against processes")


@pytest.mark.mpi
def test_a_failing_benchmark_is_reported_and_the_suite_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _bench("broken", 10)  # no such program: the run fails
    fake = {"broken": broken, "error-checking": registry.BENCHMARKS["error-checking"]}
    monkeypatch.setattr(registry, "BENCHMARKS", fake)
    out = tmp_path / "runs"
    result = CliRunner().invoke(cli.app, ["bench", "overhead-suite", "--quick", "-n", "2",
                                          "--out", str(out)])
    assert result.exit_code == 3, result.output
    (report,) = _reports(out)
    doc = json.loads((report / "report.json").read_text())
    status = {f["benchmark"]: f["status"] for f in doc["suite"]["findings"]}
    assert status == {"broken": "failed", "error-checking": "complete"}
    runs = {r["benchmark"]: r for r in doc["runs"]}
    assert any(n["level"] == "error" for n in runs["broken"]["notices"])
    assert "mo_broken" in (report / "report.html").read_text()
