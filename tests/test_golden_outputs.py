"""Stored run directories re-analysed and re-reported give the stored outputs, value for
value after the normalisation below (issue 18: a restructuring must not change what a run
directory says). Numbers must agree to 8 significant digits, not to the last bit: a fresh
clone installs the newest numpy and scipy, and numpy 2.4 / scipy 1.17 moved 552 of the
stored numbers of the overhead knee fits (batched np.linalg.inv inside a bootstrap), by at
most 1.7e-10 relative (5.074952082699077 became 5.074952083542949), which no restructuring
of ours does.

Fixtures (tests/fixtures/golden/, README.md there says how they were made):
* characterize-quick.tar.xz: the 21 run directories of one `characterize --quick -n 2` on
  the MPICH wheel (run.json, result.json and the rank profiles; no analysis, no report);
* profile-halo.tar.xz: a 2-rank `mpi-overlap profile` of mo_halo.

For every run: analysis.json as `report` writes it when it is missing (runner.analyze_result),
and its entry in report.json (report.run_entry, after run_guard as the report shows it);
for each set, report.json's replication groups; for the profile, the whole report through
the CLI (its analysis.json, report.json and CSV tables). Normalised: report.json's
generation time and tool version, and the directory the fixture was unpacked into.

Where the fixture lies must not change what is compared (issue 39: the terminal's title
rules are padded to the width around the run's path, so replacing the path after rich laid
the line out made the expected output depend on the length of pytest's temporary folder).
So the fixture is unpacked into a folder named by its placeholder, `<fixture>`, and the CLI
is run from that folder's parent with relative paths: what it lays out already holds the
placeholder. Only the two report paths it prints absolute are replaced afterwards, and
those lines are never wrapped (soft_wrap). Documents that are not laid out (JSON, CSV)
still have an absolute path of the fixture replaced. Every comparison runs twice, from a
folder whose path is longer than the terminal is wide and from a short one, so that a
dependence on the location fails here rather than in someone's clone.

The characterization's report through the CLI draws its 22 figures into report.html,
which is not among the outputs compared: written as svg_chart data they cost about 0.1 s
(with matplotlib they were 28 of the 33 s each of its two runs took, and were replaced by
an empty SVG here; issue 37).

When a change of the analysis or the report is meant, regenerate the expected outputs
with MPI_OVERLAP_UPDATE_GOLDEN=1 and say in the commit why they changed.
"""

from __future__ import annotations

import json
import lzma
import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import CLI, run_cli
from fixture_archives import unpack
from mpi_overlap.benchmarks.discovery import replicated
from mpi_overlap.benchmarks.registry import get_benchmark
from mpi_overlap.commands.reporting import run_entry
from mpi_overlap.core.procs import run_tool
from mpi_overlap.report import replication
from mpi_overlap.run import run_guard
from mpi_overlap.run.rundir import load_run
from mpi_overlap.run.runner import analyze_result

FIXTURES = Path(__file__).parent / "fixtures" / "golden"
UPDATE = os.environ.get("MPI_OVERLAP_UPDATE_GOLDEN") == "1"
ROOT_MARK = "<fixture>"
OUT_MARK = "<out>"
COLUMNS = 200
# The deep folder's path is longer than the terminal is wide: a path laid out in a line
# (padded, wrapped, cut) anywhere in the outputs makes the comparison fail.
DEEP = COLUMNS + 20
# How far a stored number may move when a numerical library changes its last digits
# (60 times the drift measured above); a change of the analysis moves numbers far more.
REL_TOL = 1e-8
VOLATILE = ("generated_utc", "tool_version")


@pytest.fixture(params=["deep", "short"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """An empty folder to unpack a fixture in: one whose path is DEEP characters or more
    (folders of up to 100 characters under pytest's temporary folder), or a short one
    directly in the system's temporary folder (e.g. /tmp/mo-golden-1a2b3c4d)."""
    if request.param == "deep":
        deep = tmp_path
        while len(str(deep)) < DEEP:
            deep = deep / ("d" * min(100, max(1, DEEP - len(str(deep)) - 1)))
        deep.mkdir(parents=True, exist_ok=True)
        yield deep
        return
    short = Path(tempfile.mkdtemp(prefix="mo-golden-"))
    try:
        yield short
    finally:
        shutil.rmtree(short, ignore_errors=True)


def _unpack(case: str, into: Path) -> Path:
    """The fixture's run directories, in `into`/<fixture>."""
    root = into / ROOT_MARK
    root.mkdir()
    unpack(FIXTURES / f"{case}.tar.xz", root)
    return root


def _normalised(doc: Any, root: Path) -> Any:
    text = json.dumps(doc, sort_keys=True).replace(str(root), ROOT_MARK)
    out = json.loads(text)
    if isinstance(out, dict):
        for key in VOLATILE:
            out.pop(key, None)
    return out


def _run_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "run.json").is_file())


def _outputs(root: Path) -> dict[str, Any]:
    """What the analysis and the report derive from the stored run directories."""
    runs = [load_run(d, strict=True) for d in _run_dirs(root)]
    analyses: dict[str, Any] = {}
    for run in runs:
        errors, analysis = analyze_result(get_benchmark(run.benchmark), run.result, run.path)
        assert not errors, (run.path.name, errors[:1])
        if analysis is not None:
            on_disk = json.loads((run.path / "analysis.json").read_text())
            analyses[run.path.name] = on_disk
        run.analysis = run_guard.apply(analysis, run.meta)
    return _normalised({
        "analysis.json": analyses,
        "report.json runs": [run_entry(run) for run in runs],
        "report.json replication": replication.to_json(runs, replicated),
    }, root)


def _first_difference(want: Any, got: Any, where: str = "") -> str | None:
    if type(want) is not type(got):
        return f"{where or '/'}: {type(want).__name__} became {type(got).__name__}"
    if isinstance(want, dict):
        for key in sorted(set(want) | set(got)):
            if key not in got or key not in want:
                return f"{where}/{key}: {'removed' if key not in got else 'added'}"
            diff = _first_difference(want[key], got[key], f"{where}/{key}")
            if diff:
                return diff
        return None
    if isinstance(want, list):
        if len(want) != len(got):
            return f"{where}: {len(want)} entries became {len(got)}"
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            diff = _first_difference(a, b, f"{where}[{i}]")
            if diff:
                return diff
        return None
    if isinstance(want, float) and math.isclose(want, got, rel_tol=REL_TOL):
        return None
    return None if want == got else f"{where}: {want!r} became {got!r}"


def _check(name: str, got: dict[str, Any]) -> None:
    expected = FIXTURES / f"{name}.expected.json.xz"
    if UPDATE:
        expected.write_bytes(lzma.compress(
            (json.dumps(got, indent=1, sort_keys=True) + "\n").encode("utf-8")))
        return
    want = json.loads(lzma.decompress(expected.read_bytes()))
    diff = _first_difference(want, got)
    assert diff is None, (f"{name} differs from its stored outputs at {diff} (a meant change: "
                          f"MPI_OVERLAP_UPDATE_GOLDEN=1, and say why in the commit)")


@pytest.mark.parametrize("case", ["characterize-quick", "profile-halo"])
def test_stored_runs_analyse_and_report_as_stored(case: str, place: Path) -> None:
    root = _unpack(case, place)
    got = _outputs(root)
    assert got["analysis.json"], "the fixture produced no analysis"
    _check(case, got)


def test_stored_profile_reports_through_the_cli_as_stored(place: Path) -> None:
    """The whole report of the profile fixture as `mpi-overlap report` writes it."""
    root = _unpack("profile-halo", place)
    (run_dir,) = _run_dirs(root)
    proc = run_cli("report", str(run_dir.relative_to(place)), cwd=place)
    assert proc.returncode == 0, proc.stderr
    tables = sorted((run_dir / "tables").glob("*.csv"))
    assert tables, "the report wrote no CSV table"
    got = _normalised({
        "analysis.json": json.loads((run_dir / "analysis.json").read_text()),
        "report.json": _normalised(json.loads((run_dir / "report.json").read_text()), root),
        "tables": {t.name: t.read_text() for t in tables},
    }, root)
    _check("profile-halo-cli", got)


def test_stored_characterization_reports_through_the_cli_as_stored(place: Path) -> None:
    """The terminal tables and the CSV tables of the characterization fixture's runs,
    reported together as `mpi-overlap report` writes them: every benchmark's tables, one
    declaration each for the terminal, HTML and CSV (report/run_table.py)."""
    root = _unpack("characterize-quick", place)
    out = place / "report"
    proc = run_tool([*CLI, "report", "--out", out.name,
                     *(str(d.relative_to(place)) for d in _run_dirs(root))],
                    env={**os.environ, "COLUMNS": str(COLUMNS), "NO_COLOR": "1"},
                    timeout_s=900, cwd=str(place))
    assert proc.returncode == 0, proc.stderr
    tables = sorted((out / "tables").glob("*.csv"))
    assert len(tables) > 20, "the report wrote too few CSV tables"
    # The report's own paths are printed absolute, one unwrapped line each.
    text = proc.stdout.replace(str(out.resolve()), OUT_MARK)
    for where in {str(place), str(place.resolve())}:
        assert where not in text, f"the terminal output holds the folder it ran in: {where}"
    _check("characterize-quick-cli", {
        "terminal": text.splitlines(),
        "tables": {t.name: t.read_text().replace(str(root), ROOT_MARK) for t in tables},
    })


def test_the_comparison_names_where_outputs_differ() -> None:
    want = {"a": [1, {"b": 0.5}], "c": "x"}
    assert _first_difference(want, json.loads(json.dumps(want))) is None
    assert _first_difference(want, {"a": [1, {"b": 0.5000001}], "c": "x"}) == \
        "/a[1]/b: 0.5 became 0.5000001"
    assert _first_difference(want, {"a": [1], "c": "x"}) == "/a: 2 entries became 1"
    assert _first_difference(want, {"a": [1, {"b": 0.5}]}) == "/c: removed"
