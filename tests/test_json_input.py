"""Every JSON input goes through json_input.py: a runaway size, deep nesting, bytes that
are not UTF-8, a top level that is not an object, a schema_version from the future and a
known field of the wrong type each end as one line naming the file, never a traceback
(issue 14, "Why" 1 and 7). The CLI cases run `mpi-overlap report` on a run directory
shaped like what `profile` leaves (test_report_profile.write_run), then corrupted."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import one_line_error, run_cli
from mpi_overlap.core.errors import UserError
from mpi_overlap.core.json_input import MAX_DEPTH, _depth_exceeds, parse_json, read_json
from mpi_overlap.run.rundir import load_run
from property_examples import examples
from test_report_profile import sample_result, write_run


def _refused(path: Path, *fragments: str) -> str:
    with pytest.raises(UserError) as info:
        read_json(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text, text
    for frag in fragments:
        assert frag in text, text
    return text


def test_a_huge_file_is_refused_from_its_size_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "result.json"
    with open(big, "wb") as fh:  # a sparse 1 GiB file: no disk used, 1 GiB if read
        fh.truncate(1 << 30)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    _refused(big, "1024 MiB", "larger than the 256 MiB", "MPI_OVERLAP_MAX_JSON_MIB")
    assert time.monotonic() - start < 5
    # ru_maxrss is in KiB: nothing near the file's size was allocated
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 64 * 1024


def test_the_size_cap_can_be_raised_and_is_checked(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "a.json"
    doc.write_text(json.dumps({"x": "y" * 2000}))
    monkeypatch.setenv("MPI_OVERLAP_MAX_JSON_MIB", "0.001")
    _refused(doc, "larger than the 1048 bytes")
    monkeypatch.setenv("MPI_OVERLAP_MAX_JSON_MIB", "1")
    assert read_json(doc)["x"].startswith("y")
    monkeypatch.setenv("MPI_OVERLAP_MAX_JSON_MIB", "nan")
    with pytest.raises(UserError, match="MPI_OVERLAP_MAX_JSON_MIB must be"):
        read_json(doc)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 200_000])
def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path: Path, depth: int) -> None:
    doc = tmp_path / "deep.json"
    doc.write_text('{"a": ' + "[" * depth + "]" * depth + "}")
    _refused(doc, f"nested more than {MAX_DEPTH} levels deep")


def test_nesting_up_to_the_cap_is_read(tmp_path: Path) -> None:
    depth = MAX_DEPTH - 1  # plus the top-level object
    doc = tmp_path / "ok.json"
    doc.write_text('{"a": ' + "[" * depth + "]" * depth + "}")
    assert read_json(doc)["a"] == ([] if depth == 1 else read_json(doc)["a"])


# Strings made of what could fool a reading of the text: brackets, quotes, backslashes.
_TRICKY_TEXT = st.text(alphabet='[]{}"\\/u0n \u00e9', max_size=12)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(_TRICKY_TEXT, inner, max_size=3),
    max_leaves=40,
)


def _object_depth(doc: object) -> int:
    if isinstance(doc, dict):
        return 1 + max((_object_depth(v) for v in doc.values()), default=0)
    if isinstance(doc, list):
        return 1 + max((_object_depth(v) for v in doc), default=0)
    return 0


@settings(max_examples=examples(300), deadline=None)
@given(doc=_JSON, limit=st.integers(min_value=0, max_value=8), ascii_only=st.booleans())
def test_depth_read_from_the_text_is_the_depth_of_the_objects(
    doc: object, limit: int, ascii_only: bool
) -> None:
    """The nesting check reads the text (fast on large profiles): for any document, with
    brackets, quotes and escapes inside its strings, it agrees with the parsed objects."""
    text = json.dumps(doc, ensure_ascii=ascii_only).encode("utf-8")
    assert _depth_exceeds(text, limit) == (_object_depth(doc) > limit)


def test_bytes_that_are_not_utf8_are_named_with_the_file(tmp_path: Path) -> None:
    doc = tmp_path / "profile.rank-0.json"
    doc.write_bytes(b'{"region": "abc\xff\xfe"}')
    _refused(doc, "not UTF-8", "0xff", "offset 15")


@pytest.mark.parametrize(("content", "fragment"), [
    (b"[1, 2]", "expected a JSON object at the top, found an array"),
    (b'"text"', "found a string"),
    (b"null", "found null"),
    (b'{"a": 1,}', "not valid JSON"),
    (b"", "not valid JSON"),
    (b'{"a": ' + b"1" * 5000 + b"}", "not valid JSON"),  # beyond Python's digit limit
    (b'\xef\xbb\xbf{"a": 1}', "not valid JSON"),  # a byte-order mark
])
def test_other_malformed_documents(tmp_path: Path, content: bytes, fragment: str) -> None:
    doc = tmp_path / "x.json"
    doc.write_bytes(content)
    _refused(doc, fragment)


def test_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    start = time.monotonic()
    _refused(fifo, "not a regular file")  # and no wait for a writer
    assert time.monotonic() - start < 5
    _refused(tmp_path, "is a directory")
    _refused(tmp_path / "missing.json", "no such file")


@pytest.mark.parametrize("schema", ["mpi-overlap/run", "mpi-overlap/result",
                                    "mpi-overlap/analysis", "mpi-overlap/profile-rank"])
def test_a_schema_version_from_the_future_is_refused(schema: str) -> None:
    with pytest.raises(UserError, match="schema_version 99 is newer than this mpi-overlap "
                                        r"reads \(1\)"):
        parse_json(json.dumps({"schema": schema, "schema_version": 99}).encode(), "doc.json")
    assert parse_json(json.dumps({"schema": schema, "schema_version": 1}), "d")


# ----- through the CLI: `mpi-overlap report` on a corrupted run directory ------------------

def _run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "runs", "20250102-030405-profile-mpich", sample_result())


def _report(run: Path, tmp_path: Path):
    return run_cli("report", str(run), env={"MPI_OVERLAP_HOME": str(tmp_path / "state")},
                   timeout=300, cwd=tmp_path)


def _edit(path: Path, **changes) -> None:
    doc = json.loads(path.read_text())
    doc.update(changes)
    path.write_text(json.dumps(doc))


BAD_RUN_DIRS = {
    "run.json schema_version 99": (lambda d: _edit(d / "run.json", schema_version=99),
                                   "schema_version 99 is newer"),
    "result.json schema_version 99": (lambda d: _edit(d / "result.json", schema_version=99),
                                      "result.json: 'mpi-overlap/profile-run' schema_version 99"),
    "analysis.json schema_version 99": (
        lambda d: _edit(d / "analysis.json", schema_version=99), "analysis.json"),
    "run.json toolchain of the wrong type": (lambda d: _edit(d / "run.json", toolchain="mpich"),
                                             "not a valid run.json"),
    "run.json ranks of the wrong type": (lambda d: _edit(d / "run.json", ranks="two"),
                                         "not a valid run.json"),
    "run.json not UTF-8": (lambda d: (d / "run.json").write_bytes(b'{"a": "\xc3"}'),
                           "not UTF-8"),
    "result.json not UTF-8": (lambda d: (d / "result.json").write_bytes(b'{"\xff": 1}'),
                              "not UTF-8"),
    "result.json of 1 GiB": (lambda d: os.truncate(d / "result.json", 1 << 30),
                             "larger than the 256 MiB"),
    "result.json nested 200 000 deep": (
        lambda d: (d / "result.json").write_text("[" * 200_000 + "]" * 200_000),
        "nested more than"),
}


@pytest.mark.parametrize("case", sorted(BAD_RUN_DIRS))
def test_report_refuses_a_corrupted_run_directory_in_one_line(tmp_path: Path,
                                                              case: str) -> None:
    run = _run_dir(tmp_path)
    corrupt, fragment = BAD_RUN_DIRS[case]
    corrupt(run)
    one_line_error(_report(run, tmp_path), fragment, code=2)


def test_report_of_a_result_with_wrong_types_still_reports_without_a_traceback(
        tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    (run / "analysis.json").unlink()
    result = json.loads((run / "result.json").read_text())
    result["ranks"][0]["profile"] = "not an object"
    (run / "result.json").write_text(json.dumps(result))
    proc = _report(run, tmp_path)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "result.json does not match its schema, not reported" in proc.stdout
    loaded = load_run(run, strict=True)
    assert loaded.result is None and loaded.analysis is None
    assert any("does not match its schema" in p for p in loaded.problems)


def test_collect_keeps_the_run_when_a_rank_profile_is_not_utf8(tmp_path: Path) -> None:
    """Before: a raw non-UTF-8 region name in profile.rank-N.json lost the whole run
    (UnicodeDecodeError, exit 70, run.json left running)."""
    from mpi_overlap.profile.documents.collect import collect
    from test_analysis_profile import Group, rank_doc

    good = rank_doc(1, [Group("MPI_Isend", "r", 64, 128, 1, 1e-6, 0.0, 0.0)], size=2)
    (tmp_path / "profile.rank-1.json").write_text(json.dumps(good))
    (tmp_path / "profile.rank-0.json").write_bytes(
        json.dumps(good).replace('"rank": 1', '"rank": 0').encode().replace(b'"r"', b'"\xff"'))
    result = collect(tmp_path, ranks_expected=2, app_argv=["app"], cwd="/", table=tmp_path,
                     forced=False, bins=None)
    assert result["status"] == "incomplete" and result["missing_ranks"] == [0]
    assert [d["rank"] for d in result["ranks"]] == [1]
    assert any("profile.rank-0.json: not UTF-8" in w for w in result["warnings"])
