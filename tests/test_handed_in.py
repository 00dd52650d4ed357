"""What the layers below the benchmarks are handed from above (issue 37 item 2): the
calibration runs the benchmarks of the table's roles, the profile takes their evidence
and advice rules, and the document checks load the typed models, without importing
benchmarks/; benchmarks/registry.py hands them in when the benchmarks are imported, and a
layer that was handed nothing says so instead of going on with nothing."""

from __future__ import annotations

import subprocess
import sys


def test_the_calibration_runs_the_benchmark_each_role_declares() -> None:
    from mpi_overlap.benchmarks.discovery import spec_with_role
    from mpi_overlap.calibration.table_benchmarks import COLLECTIVE_TABLE, P2P_TABLE, with_role

    for role in (P2P_TABLE, COLLECTIVE_TABLE):
        assert with_role(role) is spec_with_role(role)
        assert with_role(role).benchmark.program


def _fresh(code: str) -> str:
    """What a fresh interpreter prints of `code` (no benchmark imported there)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60).stdout


def test_a_calibration_handed_nothing_says_so() -> None:
    out = _fresh("from mpi_overlap.calibration import table_benchmarks as t\n"
                 "try:\n    t.with_role(t.P2P_TABLE)\n"
                 "except RuntimeError as err:\n    print(err)\n")
    assert "import mpi_overlap.benchmarks" in out


def test_the_profile_takes_the_evidence_each_benchmark_declares() -> None:
    from mpi_overlap.benchmarks.discovery import evidence_specs
    from mpi_overlap.profile.analysis import evidence

    assert tuple(evidence.sources()) == evidence_specs() != ()
    assert all(evidence.declared(s).rule for s in evidence.sources())


def test_a_profile_handed_nothing_says_so() -> None:
    out = _fresh("from mpi_overlap.profile.analysis import advice\n"
                 "try:\n    advice.evidence_keys()\n"
                 "except RuntimeError as err:\n    print(err)\n")
    assert "import mpi_overlap.benchmarks" in out


def test_the_document_checks_find_the_typed_models() -> None:
    from mpi_overlap.core import documents

    assert documents.has_schema("profile-run-v1") and documents.has_schema("run-v1")


def test_document_checks_handed_nothing_say_so() -> None:
    out = _fresh("from mpi_overlap.core import documents\n"
                 "try:\n    documents.run_errors({})\n"
                 "except RuntimeError as err:\n    print(err)\n")
    assert "import mpi_overlap.benchmarks" in out


def test_a_script_loads_a_run_without_the_cli(tmp_path) -> None:
    """mpi_overlap.load() in a fresh interpreter (no conftest, no CLI to import the
    benchmarks first) reads the golden profile run: its checks were handed their models."""
    from pathlib import Path

    from fixture_archives import unpack

    golden = Path(__file__).parent / "fixtures" / "golden" / "profile-halo.tar.xz"
    unpack(golden, tmp_path)
    run = next(p.parent for p in tmp_path.rglob("run.json"))
    out = _fresh(f"import mpi_overlap\nr = mpi_overlap.load({str(run)!r})\n"
                 "print(sorted(r.frames)[:1])\n")
    assert out.startswith("[") and out.strip() != "[]"
