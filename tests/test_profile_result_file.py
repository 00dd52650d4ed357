"""result.json of a profile run in its line layout (result_file.py; issue 19):
the same JSON document, written with one rank document per line, which rundir.load_run
reads lazily when it is large, so the report goes through the rank documents one at a
time instead of holding them all.

- the layout is the same document to any JSON reader, empty rank lists included;
- read lazily (threshold lowered), the stored golden profile gives the same analysis as
  read whole;
- strict loading checks each rank document as it is read: a bad one ends the reading
  with one line naming its line;
- end to end: `mpi-overlap report` on 1 000 synthetic ranks (over the threshold) writes
  the analysis a whole read gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from fixture_archives import unpack
from mpi_overlap.core.errors import UserError
from mpi_overlap.profile.analysis.profile import analyze_profile
from mpi_overlap.run import result_file
from mpi_overlap.run.result_file import LazyRanks, write_profile_result
from mpi_overlap.run.rundir import load_run

FIXTURE = Path(__file__).parent / "fixtures" / "golden" / "profile-halo.tar.xz"


@pytest.fixture
def stored_run(tmp_path: Path) -> Path:
    """The golden 2-rank mo_halo profile, its result.json rewritten in the line layout."""
    unpack(FIXTURE, tmp_path)
    (run_dir,) = [p for p in tmp_path.iterdir() if (p / "run.json").is_file()]
    result = json.loads((run_dir / "result.json").read_text())
    write_profile_result(run_dir / "result.json", result)
    return run_dir


def test_the_line_layout_is_the_same_document(stored_run: Path, tmp_path: Path) -> None:
    text = (stored_run / "result.json").read_text()
    result = json.loads(text)
    lines = text.splitlines()
    assert lines.count(' "ranks": [') == 1
    at = lines.index(' "ranks": [')
    assert [json.loads(ln.rstrip(","))["rank"] for ln in lines[at + 1:at + 3]] == [0, 1]
    empty = tmp_path / "empty.json"
    write_profile_result(empty, dict(result, ranks=[]))
    assert json.loads(empty.read_text()) == dict(result, ranks=[])


def test_read_lazily_it_analyses_as_read_whole(stored_run: Path, monkeypatch) -> None:
    whole = json.loads((stored_run / "result.json").read_text())
    monkeypatch.setattr(result_file, "LAZY_RESULT_BYTES", 0)
    run = load_run(stored_run, strict=True)
    assert isinstance(run.result["ranks"], LazyRanks) and len(run.result["ranks"]) == 2
    assert run.result["ranks"] == whole["ranks"] and run.result["ranks"][1]["rank"] == 1
    assert analyze_profile(run.result, stored_run) == analyze_profile(whole, stored_run)


def test_a_bad_rank_document_is_named_when_it_is_read(stored_run: Path, monkeypatch) -> None:
    path = stored_run / "result.json"
    lines = path.read_text().splitlines(keepends=True)
    at = lines.index(' "ranks": [\n') + 2  # rank 1's line
    doc = json.loads(lines[at])
    doc["profile"]["totals"]["transfers"] = "many"
    lines[at] = json.dumps(doc, separators=(",", ":")) + "\n"
    path.write_text("".join(lines))
    monkeypatch.setattr(result_file, "LAZY_RESULT_BYTES", 0)
    run = load_run(stored_run, strict=True)  # the rest of the document is valid
    with pytest.raises(UserError, match=rf"result\.json, line {at + 1}: a rank document "
                                        "that does not match its schema"):
        analyze_profile(run.result, stored_run)


def test_report_of_1000_ranks_reads_them_one_at_a_time(stored_run: Path,
                                                       tmp_path: Path) -> None:
    from mpi_overlap.tools.report_scale import synthesize

    big = tmp_path / "big"
    synthesize(stored_run, 1000, big)
    assert (big / "result.json").stat().st_size >= result_file.LAZY_RESULT_BYTES
    proc = run_cli("--quiet", "report", str(big), timeout=600)
    assert proc.returncode == 0, proc.stderr
    written = json.loads((big / "analysis.json").read_text())
    whole = json.loads((big / "result.json").read_text())
    expected = json.loads(json.dumps(analyze_profile(whole, big)))
    assert len(written["ranks"]) == 1000
    assert written == expected
