"""Derived datatypes (mo_datatypes) and buffer alignment (mo_alignment): analysis on
synthetic results, and --quick runs on 2 ranks under each wheel toolchain with the
issue's consistency checks (structural, or ratios measured side by side with generous
margins: the test machine is shared)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import disturbed, run_cli
from mpi_overlap.benchmarks.datatypes import SPECS
from mpi_overlap.benchmarks.datatypes.analysis import analyze as analyze_datatypes
from mpi_overlap.benchmarks.datatypes.analysis import ratio_ci
from mpi_overlap.core import documents as schema
from mpi_overlap.core.errors import UserError
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params


def _case(name: str, kind: str, t: float, offset: int = 0, payload: int = 1024,
          checksum: str | None = None) -> dict:
    return {"case": name, "kind": kind, "offset": offset, "payload_bytes": payload,
            "one_way_s": t, "valid": True, "packed_checksum": checksum,
            "samples_s": [t * f for f in (0.98, 1.0, 1.02, 1.0, 0.99)]}


def test_ratio_ci_brackets_the_ratio() -> None:
    r, lo, hi = ratio_ci([2.0, 2.1, 1.9, 2.0], [1.0, 1.05, 0.95, 1.0])
    assert r == pytest.approx(2.0)
    assert lo <= r <= hi
    assert ratio_ci([], [1.0]) == (None, None, None)


def test_datatypes_analysis_and_finding() -> None:
    cases = [_case("contig", "contig", 1e-4), _case("vector_char", "vector_char", 6.3e-4),
             _case("vector_int", "vector_int", 3e-4),
             _case("vector_double", "vector_double", 1.8e-4),
             _case("pack_mpi", "pack_mpi", 2.4e-4, checksum="00000000000000aa"),
             _case("pack_loop", "pack_loop", 2e-4, checksum="00000000000000aa")]
    a = analyze_datatypes({"results": {"mode": "datatypes", "sizes": [{"bytes": 1 << 20,
                                                                        "cases": cases}]}})
    by = {c["case"]: c for c in a["sizes"][0]["cases"]}
    assert by["vector_char"]["slowdown"] == pytest.approx(6.3)
    assert by["contig"]["ns_per_byte"] == pytest.approx(1e-4 * 1e9 / 1024)
    assert a["checksums_match"] and a["all_valid"]
    assert "1 MiB" in a["finding"] and "6.3x" in a["finding"] and "1.20x faster" in a["finding"]


def test_alignment_analysis_uses_offset_zero_of_the_same_kind() -> None:
    cases = [_case(f"vector_int+{k}", "vector_int", 1e-4 * (1.4 if k == 3 else 1.0), k)
             for k in range(8)]
    cases += [_case("contig+0", "contig", 1e-5), _case("contig+64", "contig", 1e-5, 64)]
    a = analyze_datatypes({"results": {"mode": "alignment", "sizes": [{"bytes": 1 << 20,
                                                                        "cases": cases}]}})
    assert "1.40x" in a["finding"] and "offset 3" in a["finding"]
    assert "contiguous buffers up to 1.00x" in a["finding"]


def test_cli_arguments() -> None:
    spec = SPECS[0]
    assert spec.to_native({}, quick=True, verbose=False) == ["--sizes", "64,1k,64k,1M", "--quick"]
    assert spec.to_native({"sizes": "1k", "reps": 3}, quick=False, verbose=False) == [
        "--sizes", "1k", "--reps", "3"]
    with pytest.raises(UserError):
        spec.to_native({"reps": 1}, quick=False, verbose=False)


def _run(tmp_path: Path, bench: str, toolchain: str, sizes: str):
    out = tmp_path / "runs"
    proc = run_cli("bench", bench, "--quick", "--sizes", sizes, "--reps", "3", "-n", "2",
                   "--mpi", toolchain, "--out", str(out), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run_dir,) = [p for p in out.iterdir() if p.name.endswith(f"{bench}-{toolchain}")]
    run = load_run(run_dir)
    assert run.status == "complete"
    assert schema.result_errors(run.result) == []
    assert (run_dir / "report.html").read_text().count("<svg") >= 1
    finding = run.analysis["finding"]
    assert "\n" not in finding and re.search(r"\d", finding)
    # every ratio in the finding is one computed from this run's data
    known = set()
    for size in run.analysis["sizes"]:
        by = {c["kind"]: c for c in size["cases"]}
        for c in size["cases"]:
            if c["slowdown"] is not None:
                known |= {f"{c['slowdown']:.1f}", f"{c['slowdown']:.2f}"}
        if "pack_mpi" in by:
            r = by["pack_mpi"]["one_way_s"] / by["pack_loop"]["one_way_s"]
            known |= {f"{r:.2f}", f"{1 / r:.2f}"}
    for x in re.findall(r"(\d+\.\d+)x", finding):
        assert x in known, (x, finding)
    assert run.analysis["all_valid"], "a receiver found wrong data"
    return run


@pytest.mark.timing
@pytest.mark.mpi
@pytest.mark.parametrize("toolchain", toolchain_params(systems=False))
def test_datatypes_quick_run(tmp_path: Path, toolchain: str) -> None:
    run = _run(tmp_path, "datatypes", toolchain, "64,64k")
    a = run.analysis
    assert a["checksums_match"]
    kinds = {"contig", "vector_char", "vector_int", "vector_double", "indexed", "struct",
             "pack_mpi", "pack_loop"}
    for s in a["sizes"]:
        assert {c["kind"] for c in s["cases"]} == kinds
        assert s["checksums_match"] is True
        by = {c["kind"]: c for c in s["cases"]}
        assert by["pack_mpi"]["payload_bytes"] == by["pack_loop"]["payload_bytes"] == s["bytes"]
    # contiguous <= strided within noise, at the long size, for MPI_CHAR (side by side)
    long = {c["kind"]: c for c in a["sizes"][-1]["cases"]}
    assert long["vector_char"]["one_way_s"] >= 0.8 * long["contig"]["one_way_s"] \
        or disturbed(run)


@pytest.mark.mpi
@pytest.mark.parametrize("toolchain", toolchain_params(systems=False))
def test_alignment_quick_run(tmp_path: Path, toolchain: str) -> None:
    run = _run(tmp_path, "alignment", toolchain, "1k,64k")
    for s in run.analysis["sizes"]:
        offs = {c["offset"] for c in s["cases"] if c["kind"] == "vector_int"}
        assert offs == set(range(8))
        contig = {c["offset"] for c in s["cases"] if c["kind"] == "contig"}
        assert {0, 64, 4096} <= contig and contig - {0, 64, 4096}
        base = [c for c in s["cases"] if c["offset"] == 0]
        assert all(c["slowdown"] == pytest.approx(1.0) for c in base)
