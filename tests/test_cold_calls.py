"""The cold-calls benchmark (tools/cold_calls.py, native/tests/cold_calls.c) measures what it
says: per case (cold: a sweep of the caches before each iteration; hot: none) pairs of
one-rank launches with and without the profiler, each call of the iteration timed on its
own. Its figures are a benchmark's (`make bench-cold-calls`): only their structure, the
arithmetic of the summary and what holds whatever the load are asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpi_overlap.tools.cold_calls import PARTS, summary
from mpi_overlap.tools.devtools import main as devtools


def _figures(base: float) -> dict[str, float]:
    return {p: base + i for i, p in enumerate((*PARTS, "sweep"))}


def test_the_summary_is_the_median_of_the_pairs_differences() -> None:
    pairs = [{"rep": r, "bare": _figures(100.0 + r), "profiled": _figures(100.0 + r + add)}
             for r, add in enumerate((10.0, 30.0, 20.0))]
    s = summary(pairs)
    assert set(s) == {*PARTS, "calls"}
    for part in PARTS:
        assert s[part]["added_ns"] == 20.0
        assert (s[part]["added_min_ns"], s[part]["added_max_ns"]) == (10.0, 30.0)
    # the calls together: five parts, each 20 ns more by the median pair
    assert s["calls"]["added_ns"] == 5 * 20.0
    assert s["irecv"]["bare_ns"] == 101.0 + 1  # the median pair's (r = 1) bare figure


def test_bad_arguments_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert devtools(["cold-calls", "--reps", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be at least 1" in err


@pytest.mark.mpi
def test_the_command_line_writes_per_call_figures(tmp_path: Path) -> None:
    out = tmp_path / "cold.json"
    assert devtools(["cold-calls", "--reps", "2", "--sweep-kb", "256", "--iterations", "50",
                     "--hot-iterations", "500", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert set(doc["pairs"]) == {"cold", "hot"}
    for case, pairs in doc["pairs"].items():
        assert [p["rep"] for p in pairs] == [0, 1]
        for p in pairs:
            for which in ("bare", "profiled"):
                assert set(p[which]) == {*PARTS, "sweep"}
                # every call takes time, if only the clock's reads around it (the hot
                # case's sweep too: how long each takes depends on the load, not asserted)
                assert all(p[which][part] > 0 for part in (*PARTS, "sweep"))
        assert set(doc["summary"][case]) == {*PARTS, "calls"}
