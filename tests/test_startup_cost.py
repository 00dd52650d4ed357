"""The profile-startup benchmark (startup_cost.py, issue 38) measures what it says: pairs of
the program's bare launch and the whole `mpi-overlap profile` command, interleaved, each
with its wall and CPU time and the profiled launch's own time from run.json. Its figures
are a benchmark's (`make bench-profile-startup`): only their structure and what must hold
whatever the load are asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.tools.startup_cost import main, measure, summary

pytestmark = pytest.mark.mpi


def _app() -> list[str]:
    tc = get_toolchain(None)
    ensure_built(tc)
    return [str(build_dir_for(tc) / "tests" / "profiled_app"), "post-compute-wait", "4096", "5"]


def test_pairs_of_bare_and_profiled_launches(tmp_path: Path) -> None:
    pairs = measure(_app(), reps=2, ranks=2)
    assert [p.rep for p in pairs] == [0, 1]
    for p in pairs:
        assert p.bare_s > 0 and p.profile_s > 0 and p.bare_cpu_s > 0 and p.profile_cpu_s > 0
        assert p.added_s == p.profile_s - p.bare_s
        # the profiled launch is one part of the command that made it
        assert p.launch_s is not None and 0 < p.launch_s < p.profile_s
    figures = summary(pairs)
    assert figures["pairs"] == 2
    assert figures["command_beyond_launch_s"] is not None and figures["command_beyond_launch_s"] > 0


def test_the_command_line_writes_its_figures(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "startup.json"
    assert main(["--reps", "1", "--json", str(out), "--", *_app()]) == 0
    doc = json.loads(out.read_text())
    assert doc["ranks"] == 2 and len(doc["pairs"]) == 1 and len(doc["load_average"]) == 2
    assert doc["median"]["added_s"] == pytest.approx(doc["pairs"][0]["added_s"])
    assert "median: bare" in capsys.readouterr().out
