"""The page template is compiled once and kept under the state folder (report/html.py:
compiling it was 0.1-0.2 s of every report, issue 38); a state folder that cannot be
written only makes the report slower, never failing."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpi_overlap.report.html import render_html


def _page() -> str:
    return render_html(title="t", generated="now", tool_version="0", runs=[], sections=[])


def test_the_template_is_compiled_once_and_reused(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MPI_OVERLAP_HOME", str(tmp_path / "state"))
    first = _page()
    cached = list((tmp_path / "state" / "cache" / "templates").iterdir())
    assert len(cached) == 1 and cached[0].stat().st_size > 0
    assert _page() == first  # the same page from the cached code


def test_a_state_folder_that_cannot_be_written_still_gives_the_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    state.write_text("a file where the folder would be: no cache can be made there")
    monkeypatch.setenv("MPI_OVERLAP_HOME", str(state))
    assert "<html" in _page()
