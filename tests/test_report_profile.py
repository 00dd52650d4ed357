"""Tests for the profile part of the report: profile run directories in, terminal/HTML/JSON out.

Run directories are written here (run.json, result.json of profile-run-v1 built with the
helpers of test_analysis_profile, analysis.json from analyze_profile), shaped like what
`mpi-overlap profile` leaves: no MPI and no native build needed.
"""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mpi_overlap.commands.reporting import make_report
from mpi_overlap.core import documents as schema
from mpi_overlap.profile.analysis.profile import analyze_profile
from mpi_overlap.profile.report import profile_plots, profile_table
from mpi_overlap.run.rundir import Run, load_run
from test_analysis_profile import KIB, MIB, NO_REGION, Group, make_result, rank_doc


def sample_result() -> dict[str, Any]:
    """Like a real 2-rank run: rank 0 Isend 1 MiB + Send 1 KiB, rank 1 Irecv + Recv."""
    docs = []
    for rank, (post, block) in enumerate((("MPI_Isend", "MPI_Send"), ("MPI_Irecv", "MPI_Recv"))):
        docs.append(
            rank_doc(
                rank,
                [
                    Group(post, NO_REGION, MIB, 2 * MIB, 20, 0.002, 0.0006 + rank * 2.5e-5, 0.002),
                    Group(block, NO_REGION, KIB, 2 * KIB, 20, 3e-5, 0.0, 0.0),
                ],
                size=2,
                comp={NO_REGION: 0.04},
                calls={
                    "MPI_Wait": (20, 0.0019),
                    "MPI_Init": (1, 1.1e-4),
                    "MPI_Finalize": (1, 8e-7),
                },
                cases={"in-call": 20, "across-calls": 20},
            )
        )
    return make_result(docs, forced=True)


def many_ranks_result(n: int, seed: int = 3) -> dict[str, Any]:
    """n ranks, three regions, five size bins; rank 1 killed, one rank missing."""
    rng = random.Random(seed)
    docs = []
    for rank in range(n):
        if rank == n - 1:
            continue  # wrote nothing
        groups = []
        for k, fn, region in (
            (6, "MPI_Isend", "halo"),
            (12, "MPI_Send", NO_REGION),
            (16, "MPI_Allreduce", "reduce"),
            (20, "MPI_Isend", "solve"),
            (22, "MPI_Recv", "solve"),
        ):
            xfer = rng.uniform(0.2, 1.0) * 1e-3 * k
            mx = xfer * rng.uniform(0.0, 1.0)
            groups.append(
                Group(
                    fn,
                    region,
                    1 << k,
                    1 << (k + 1),
                    rng.randint(1, 50),
                    xfer,
                    mx * rng.uniform(0.0, 0.9),
                    mx,
                )
            )
        docs.append(
            rank_doc(
                rank,
                groups,
                size=n,
                comp={NO_REGION: 1.0, "solve": rng.uniform(0.5, 2.0)},
                calls={"MPI_Wait": (200, rng.uniform(0.01, 0.2))},
                status="incomplete" if rank == 1 else "complete",
                reason="killed by signal 9" if rank == 1 else None,
                cases={"begin-only": 3} if rank == 1 else None,
                counters={"unfinished": 3} if rank == 1 else None,
            )
        )
    return make_result(docs, expected=n, missing=[n - 1])


def write_run(
    root: Path,
    name: str,
    result: dict[str, Any],
    *,
    analysis: bool = True,
    status: str = "complete",
    label: str | None = None,
) -> Path:
    path = root / name
    path.mkdir(parents=True)
    meta = {
        "schema": "mpi-overlap/run",
        "schema_version": 1,
        "benchmark": "profile",
        "run_id": name,
        "ranks": result["ranks_expected"],
        "toolchain": {
            "name": "mpich",
            "kind": "wheel",
            "mpi_library_version": "MPICH Version: 4.2.0 (test)",
            "mpicc": "/opt/mpi/bin/mpicc",
            "mpiexec": "/opt/mpi/bin/mpiexec",
        },
        "command": ["mpiexec", "-n", str(result["ranks_expected"]), "env", "/bin/app"],
        "started_utc": "2025-01-02T03:04:05Z",
        "finished_utc": "2025-01-02T03:04:15Z",
        "elapsed_s": 10.0,
        "status": status,
        "returncode": 0 if status == "complete" else -9,
        "message": None if status == "complete" else "1 rank(s) incomplete",
        "app": result["app"]["argv"],
    }
    if label:
        meta["label"] = label
    assert schema.run_errors(meta) == []
    (path / "run.json").write_text(json.dumps(meta))
    (path / "result.json").write_text(json.dumps(result))
    if analysis:
        doc = analyze_profile(result)
        assert schema.analysis_errors(doc) == []
        (path / "analysis.json").write_text(json.dumps(doc))
    return path


def _report(runs: list[Run], out: Path) -> tuple[str, str, dict[str, Any]]:
    buf = io.StringIO()
    console = Console(file=buf, width=160, color_system=None)
    paths = make_report(runs, out, console=console)
    return buf.getvalue(), paths.html.read_text(), json.loads(paths.json.read_text())


def _svgs(html: str) -> list[str]:
    return re.findall(r"<svg.*?</svg>", html, flags=re.S)


def test_sample_run_report(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path, "p1", sample_result()))
    terminal, html, doc = _report([run], tmp_path / "out")
    # the overlap range, in the sentence and in the job table
    assert "Overlap between 30 % and 99 % of 4.06 ms transfer time" in terminal
    assert re.search(r"overlap range\s+│\s+\d\d\.\d–98\.5 % of transfer time", terminal)
    assert "Bin 1 KiB–2 KiB loses 100 % of the non-overlapped time" in terminal
    assert "table was forced" in terminal
    for caption in (
        "job (sums over ranks)",
        "across ranks",
        "per rank",
        "message-size bins by non-overlapped time",
        "MPI call time by function",
    ):
        assert caption in terminal
    assert "none: every transfer was attributed precisely" in terminal

    # three figures (bins, ranks, lost time), inline, with their one-line meaning
    assert "Overlap profile — mpich" in html and "Overlap tables — mpich" in html
    assert len(_svgs(html)) == 3
    assert "Dark green: overlapped for certain (minimum bound)" in html
    assert "not overlapped in any case (transfer time − maximum bound)" in html
    assert "Overlap between 30 % and 99 %" in html

    block = doc["runs"][0]["results"]
    assert doc["runs"][0]["benchmark"] == "profile"
    assert block["job"]["transfers"] == 80 and block["status"] == "complete"
    assert block["rankings"]["bins"][0]["label"] == "1 KiB–2 KiB"
    assert "bins_by_rank" not in block
    assert doc["runs"][0]["summary"][0].startswith("Overlap between")


def test_many_ranks_partial_run(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path, "p24", many_ranks_result(24), status="partial"))
    terminal, html, doc = _report([run], tmp_path / "out")
    # banner with the extent, warnings, notes on what was not attributed
    assert "profiles of 23 of 24 ranks (1 partial)" in terminal
    assert "ranks 23 wrote no profile" in terminal
    assert "rank(s) 1 incomplete (killed by signal 9)" in terminal
    assert "begin-only" in terminal and "unfinished" in terminal
    # the terminal shows 16 ranks, the page all of them
    assert "the 16 ranks with the most non-overlapped time of 23" in terminal
    per_rank = html.split("— per rank")[1].split("</table>")[0]
    assert per_rank.count("<tr>") == 23 + 1
    assert per_rank.count(">incomplete</td>") == 1
    assert per_rank.count('class="left v-no-knee"') == 2  # the worst rank's text cells
    assert len(_svgs(html)) == 3
    assert "Whiskers: range of the minimum (left) and maximum (right) bound across ranks" in html
    assert doc["runs"][0]["results"]["missing_ranks"] == [23]
    assert doc["runs"][0]["results"]["unattributed"][0]["name"] == "begin-only"


def test_missing_analysis_is_computed_and_said(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path, "p2", sample_result(), analysis=False))
    assert run.analysis is None
    terminal, _, doc = _report([run], tmp_path / "out")
    assert "computed from result.json for this report" in terminal
    assert doc["runs"][0]["results"]["job"]["ranks"] == 2


def test_two_runs_compared(tmp_path: Path) -> None:
    runs = [
        load_run(write_run(tmp_path, "a", sample_result(), label="before")),
        load_run(write_run(tmp_path, "b", many_ranks_result(4), label="after", status="partial")),
    ]
    terminal, html, doc = _report(runs, tmp_path / "out")
    assert "Profile runs side by side" in terminal and "Profile runs compared" in html
    assert [r["label"] for r in doc["runs"]] == ["before", "after"]
    # four ranks: one bar per rank in each bin, numbered
    assert "numbered under the bars" in html
    assert len(_svgs(html)) == 6


def test_no_transfers_no_lost_time_figure(tmp_path: Path) -> None:
    result = make_result([rank_doc(0, [], size=1)])
    run = load_run(write_run(tmp_path, "idle", result))
    terminal, html, _ = _report([run], tmp_path / "out")
    assert "No data transfer time was recorded" in terminal
    assert len(_svgs(html)) == 1  # per rank only: no bins, nothing lost
    a = profile_table.analysis_of(run)
    assert a is not None and profile_plots.lost_figure(a) is None


@pytest.mark.parametrize("n", [1, 16, 17])
def test_bins_figure_switches_at_16_ranks(n: int) -> None:
    a = analyze_profile(many_ranks_result(n + 1))  # the last rank is missing
    fig = profile_plots.bins_figure(a)
    assert fig is not None
    title = fig.panels[0].title
    assert title == ("Overlap by message size and rank" if n <= 16 else "Overlap by message size")
