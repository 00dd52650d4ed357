"""--env-matrix: parsing (every combination, bad input refused in one line), the
side-by-side table from the runs' headline figures, and one real 2-variant run whose
settings reach the program (its provenance lists the MPI environment it saw)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.core.errors import UserError
from mpi_overlap.report import env_matrix as view
from mpi_overlap.run.env_matrix import MAX_VARIANTS, bound, current, parse_env_matrix
from mpi_overlap.run.rundir import Run, load_run


def test_every_combination_in_order() -> None:
    variants = parse_env_matrix(["A=0,1", "B=x,y,z"])
    assert [v.env for v in variants] == [
        (("A", a), ("B", b)) for a in ("0", "1") for b in ("x", "y", "z")]
    assert variants[0].label("mpich") == "mpich A=0 B=x"
    assert variants[0].overrides == {"A": "0", "B": "x"}
    assert parse_env_matrix([]) == []


@pytest.mark.parametrize("spec, words", [
    (["FOO"], "expected VAR=value1"),
    (["1A=1"], "expected VAR=value1"),
    (["A=1", "A=2"], "given twice"),
    (["A="], "empty value"),
    (["A=1,,2"], "empty value"),
    (["A=1,1"], "repeated"),
    ([f"V{i}=0,1" for i in range(6)], f"at most {MAX_VARIANTS}"),
])
def test_bad_specs_are_refused(spec: list[str], words: str) -> None:
    with pytest.raises(UserError, match=words):
        parse_env_matrix(spec)


def test_binding_is_scoped() -> None:
    assert [v.env for v in current()] == [()]
    with bound(["A=1,2"]) as variants:
        assert len(variants) == 2 and current() == variants
    assert [v.env for v in current()] == [()]


def _run(label: str, env: dict[str, str], figures: list[dict], finding: str) -> Run:
    return Run(path=Path("/nonexistent"), meta={"benchmark": "progress", "label": label,
                                                 "toolchain": {"name": "mpich"},
                                                 "env_overrides": env, "status": "complete"},
               result=None, analysis={"figures": figures, "finding": finding})


def test_matrix_rows_put_variants_side_by_side() -> None:
    def fig(name: str, kind: str, value: float | None) -> dict:
        return {"name": name, "label": name.replace("_", " "), "value": value, "unit": "µs",
                "kind": kind}

    base = _run("mpich X=0", {"X": "0"}, [fig("lat", "cost", 1.0), fig("gain", "overlap", 10.0)],
                "base finding")
    var = _run("mpich X=1", {"X": "1"}, [fig("lat", "cost", 2500.0), fig("gain", "overlap", 12.0)],
               "variant finding")
    other = _run("mpich", {}, [], "")
    other.meta["benchmark"] = "waitany"  # a lone run of another benchmark: no matrix
    groups = view.matrix_groups([base, var, other])
    assert groups == [[base, var]]
    rows = view.matrix_rows(groups[0])
    # overlap rows first, then cost; changes against the first variant
    assert rows[0] == ("gain [µs]", "overlap", "10", "12 (+20 %)")
    assert rows[1] == ("lat [µs]", "cost", "1", "2500 (×2.5e+03)")
    assert rows[-1] == ("finding", "", "base finding", "variant finding")
    (section,) = view.sections([base, var])
    assert "Settings matrix" in section.title and section.tables[0].headers[2:] == (
        "mpich X=0", "mpich X=1")


def test_bad_matrix_is_one_line_error(tmp_path: Path) -> None:
    proc = run_cli("bench", "waitany", "--env-matrix", "NOPE", "--out", str(tmp_path),
                   timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--env-matrix 'NOPE'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.mpi
def test_two_variants_run_and_reach_the_program(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = run_cli("bench", "stack-floor", "--quick", "--sizes", "0,1k", "-n", "2",
                   "--env-matrix", "MPIR_CVAR_ERROR_CHECKING=1,0", "--out", str(out),
                   timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = sorted((load_run(p) for p in out.iterdir() if (p / "run.json").is_file()),
                  key=lambda r: r.path.name)
    assert [r.label for r in runs] == ["mpich MPIR_CVAR_ERROR_CHECKING=1",
                                       "mpich MPIR_CVAR_ERROR_CHECKING=0"]
    for run, value in zip(runs, ("1", "0"), strict=True):
        assert run.complete
        assert run.meta["env_overrides"] == {"MPIR_CVAR_ERROR_CHECKING": value}
        seen = run.result["provenance"]["mpi_env"]
        assert seen.get("MPIR_CVAR_ERROR_CHECKING") == value, seen
        assert {f["name"] for f in run.analysis["figures"]} >= {"latency_small_us"}
    (report,) = [p for p in out.iterdir() if p.name.startswith("report-")]
    html = (report / "report.html").read_text()
    assert "Settings matrix: stack-floor on mpich" in html
    assert "MPI one-way latency at 0 B" in html
