"""The checks on the bounds in the analysis and the report, on hand-made profile runs.

Rank documents come from test_analysis_profile's helpers with a `checks` block added, as
the profiler writes it (native/profiler/mop_checks.c; docs/method.md, "Checks on the
bounds"); times are binary fractions, so the expected sums, shares and sentences are
exact. One test feeds a profile that mop_replay (the profiler's event processing, no MPI)
computed from a hand-made event stream through the same analysis.
"""

from __future__ import annotations

import copy
import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mpi_overlap.commands.reporting import make_report
from mpi_overlap.core import documents as schema
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.profile.analysis.profile import analyze_profile
from mpi_overlap.profile.analysis.profile_checks import FLAG_SHARE_PCT
from mpi_overlap.run.rundir import load_run
from test_analysis_profile import KIB, MIB, NO_REGION, Group, make_result, rank_doc
from test_report_profile import write_run

NATIVE = Path(__file__).resolve().parents[1] / "native"


def flagged(transfers: int = 0, xfer: float = 0.0, excess: float = 0.0) -> dict[str, Any]:
    return {"transfers": transfers, "xfer_s": xfer, "excess_s": excess}


def checks_block(
    in_call: tuple[int, float, int, float, float],
    in_flagged: dict[str, Any],
    calls_beyond: int,
    beyond: float,
    across: tuple[int, float],
    across_flagged: dict[str, Any],
    by_function: list[dict[str, Any]],
    by_bin: list[dict[str, Any]],
) -> dict[str, Any]:
    """A rank's `checks`: in_call = (transfers, xfer_s, calls, call_s, longest_s)."""
    n, xfer, calls, call_s, longest = in_call
    return {
        "in_call": {"transfers": n, "xfer_s": xfer, "calls": calls, "call_s": call_s,
                    "longest_s": longest, "flagged": in_flagged, "calls_beyond": calls_beyond,
                    "beyond_s": beyond, "unchecked": 0},
        "across_calls": {"transfers": across[0], "xfer_s": across[1], "flagged": across_flagged},
        "beyond_s": beyond + across_flagged["excess_s"],
        "by_function": by_function,
        "by_bin": by_bin,
    }


def two_ranks(*, rank0_checks: bool = True, rank1_checks: bool = True) -> dict[str, Any]:
    """Rank 0: 8 MPI_Recv of 4 KiB in calls too short for 4 of them, 1 of its 4 MPI_Isend of
    1 MiB completed sooner than the table allows. Rank 1: the same traffic, nothing flagged.
    Job transfer time 1.5 s, flagged 0.25 s (16.7 %)."""
    docs = []
    for rank, (block, post) in enumerate((("MPI_Recv", "MPI_Isend"), ("MPI_Send", "MPI_Irecv"))):
        doc = rank_doc(
            rank,
            [
                Group(block, NO_REGION, 4 * KIB, 8 * KIB, 8, 0.25, 0.0, 0.0),
                Group(post, NO_REGION, MIB, 2 * MIB, 4, 0.5, 0.25, 0.5),
            ],
            size=2,
            calls={"MPI_Wait": (4, 0.25)},
            cases={"in-call": 8, "across-calls": 4},
            counters={"xfer_exceeds_call": 4 if rank == 0 else 0,
                      "xfer_exceeds_span": 1 if rank == 0 else 0},
        )
        if rank == 0 and rank0_checks:
            doc["profile"]["checks"] = checks_block(
                (8, 0.25, 8, 0.0625, 0.25), flagged(4, 0.125, 0.09375), 4, 0.09375,
                (4, 0.5), flagged(1, 0.125, 0.0625),
                [{"fn": "MPI_Isend", "check": "across-calls", **flagged(1, 0.125, 0.0625)},
                 {"fn": "MPI_Recv", "check": "in-call", **flagged(4, 0.125, 0.09375)}],
                [{"lo": 4 * KIB, "hi": 8 * KIB, "check": "in-call", **flagged(4, 0.125, 0.09375)},
                 {"lo": MIB, "hi": 2 * MIB, "check": "across-calls",
                  **flagged(1, 0.125, 0.0625)}],
            )
        if rank == 1 and rank1_checks:
            doc["profile"]["checks"] = checks_block(
                (8, 0.25, 8, 0.5, 0.25), flagged(), 0, 0.0, (4, 0.5), flagged(), [], [])
        docs.append(doc)
    return make_result(docs)


def _analysis(result: dict[str, Any]) -> dict[str, Any]:
    a = analyze_profile(result)
    assert schema.analysis_errors(a) == []
    return a


# ---------------------------------------------------------------- the analysis


def test_sums_shares_and_breakdowns() -> None:
    c = _analysis(two_ranks())["checks"]
    assert c["available"] and c["ranks_without"] == []
    assert c["xfer_s"] == 1.5 and c["flagged_transfers"] == 5 and c["flagged_xfer_s"] == 0.25
    assert c["flagged_pct"] == pytest.approx(100 / 6) and c["flagged"]
    assert c["beyond_s"] == 0.15625
    assert c["in_call"] == {"transfers": 16, "xfer_s": 0.5, "calls": 16, "call_s": 0.5625,
                            "longest_s": 0.5, "calls_beyond": 4, "beyond_s": 0.09375,
                            "unchecked": 0, "flagged_transfers": 4, "flagged_xfer_s": 0.125,
                            "excess_s": 0.09375}
    assert c["across_calls"] == {"transfers": 8, "xfer_s": 1.0, "flagged_transfers": 1,
                                 "flagged_xfer_s": 0.125, "excess_s": 0.0625}
    r0, r1 = c["ranks"]
    assert (r0["rank"], r0["flagged_transfers"], r0["flagged_xfer_s"], r0["beyond_s"]) == (
        0, 5, 0.25, 0.15625)
    assert r0["flagged_pct"] == pytest.approx(100 / 3)
    assert (r0["in_call_xfer_s"], r0["in_call_call_s"], r0["in_call_longest_s"]) == (
        0.25, 0.0625, 0.25)
    assert (r0["in_call_calls"], r0["in_call_calls_beyond"]) == (8, 4)
    assert (r1["flagged_transfers"], r1["flagged_pct"], r1["beyond_s"]) == (0, 0.0, 0.0)
    # equal flagged time: by name; shares of the function's own transfer time
    assert [(e["fn"], e["check"], e["pct"], e["ranks"]) for e in c["by_function"]] == [
        ("MPI_Isend", "across-calls", 25.0, [0]), ("MPI_Recv", "in-call", 50.0, [0])]
    # by size; shares of the bin's transfer time over both ranks
    assert [(e["label"], e["check"], e["pct"]) for e in c["by_bin"]] == [
        ("4 KiB–8 KiB", "in-call", 25.0), ("1 MiB–2 MiB", "across-calls", 12.5)]


def test_headline_says_plainly_what_failed_and_what_to_do() -> None:
    a = _analysis(two_ranks())
    first, checks = a["findings"][0], a["findings"][1]
    assert first.startswith("Overlap between")  # the figure it qualifies comes first
    assert checks.startswith(
        "Checks on the bounds: transfers carrying 17 % of the transfer time (5 transfers, "
        "250 ms) do not fit the interval that held them: 4 in-call transfers longer than "
        "their call and 1 across-call transfers longer than the time from their post to "
        "their completion; on rank 0 the table puts 156 ms of transfer time beyond what "
        "the wall clock allows (4 of its 8 calls holding in-call transfers were shorter "
        "than their longest transfer).")
    for words in ("overstates", "moved outside the call", "not trustworthy", "Recalibrate",
                  "early arrival"):
        assert words in checks
    notes = {n["name"] for n in a["unattributed"]}
    assert {"xfer_exceeds_call", "xfer_exceeds_span"} <= notes


@pytest.mark.parametrize(("flagged_xfer", "said"), [(0.0703125, False), (0.09375, True)])
def test_headline_only_above_the_threshold(flagged_xfer: float, said: bool) -> None:
    # rank 0's flagged receive time set so that the job share (of 1.5 s) is 4.69 % or 6.25 %
    result = two_ranks()
    chk = result["ranks"][0]["profile"]["checks"]
    chk["across_calls"]["flagged"] = flagged()
    chk["by_function"] = chk["by_function"][1:]
    chk["by_bin"] = chk["by_bin"][:1]
    for cell in (chk["in_call"]["flagged"], chk["by_function"][0], chk["by_bin"][0]):
        cell["xfer_s"], cell["excess_s"] = flagged_xfer, flagged_xfer / 2
    chk["in_call"]["beyond_s"] = chk["beyond_s"] = flagged_xfer / 2
    a = _analysis(result)
    assert a["checks"]["flagged_pct"] == pytest.approx(100 * flagged_xfer / 1.5)
    assert (a["checks"]["flagged_pct"] > FLAG_SHARE_PCT) is said
    assert a["checks"]["flagged"] is said
    assert any(f.startswith("Checks on the bounds") for f in a["findings"]) is said


def test_profiles_without_checks() -> None:
    old = _analysis(two_ranks(rank0_checks=False, rank1_checks=False))
    assert not old["checks"]["available"] and old["checks"]["ranks_without"] == [0, 1]
    assert old["checks"]["flagged_transfers"] == 0 and not old["checks"]["flagged"]
    assert not any(f.startswith("Checks on the bounds") for f in old["findings"])
    mixed = _analysis(two_ranks(rank1_checks=False))
    assert mixed["checks"]["available"] and mixed["checks"]["ranks_without"] == [1]
    assert [r["rank"] for r in mixed["checks"]["ranks"]] == [0]
    assert mixed["checks"]["flagged_xfer_s"] == 0.25


def test_disabled_rank_is_left_out() -> None:
    result = two_ranks()
    result["ranks"][0]["status"] = "disabled"
    result["ranks"][0]["reason"] = "no table"
    c = _analysis(result)["checks"]
    assert [r["rank"] for r in c["ranks"]] == [1] and c["flagged_transfers"] == 0


# ---------------------------------------------------------------- the report


def _report(tmp_path: Path, result: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    run = load_run(write_run(tmp_path, "r1", result))
    buf = io.StringIO()
    paths = make_report([run], tmp_path / "out", console=Console(file=buf, width=200,
                                                                  color_system=None))
    return buf.getvalue(), paths.html.read_text(), json.loads(paths.json.read_text())


# the section's heading (its id is the contents' link target)
CHECKS_HEADING = re.compile(r"<h2[^>]*>Checks on the bounds — ")


def _section(html: str) -> str:
    """The HTML of the checks' section, up to the next heading of its level."""
    found = CHECKS_HEADING.search(html)
    assert found, "no checks section"
    start = found.start()
    end = html.find("<h2", start + 4)
    return html[start:end if end >= 0 else None]


def test_report_shows_both_checks_per_rank_function_and_bin(tmp_path: Path) -> None:
    text, html, doc = _report(tmp_path, two_ranks())
    for caption in ("checks on the bounds", "checks on the bounds per rank",
                    "flagged transfers by MPI function (posting)", "flagged transfers by size"):
        assert f"— {caption}" in text and f"— {caption}</" in html.replace("</caption", "</")
    assert "in-call: longer than the call that held it" in text
    assert "across calls: longer than post → completion" in text
    assert text.index("— not attributed precisely") < text.index("— checks on the bounds")
    assert "<svg" in _section(html)  # the figure per size bin
    assert "Checks on the bounds: transfers carrying 17 %" in html  # the headline
    block = doc["runs"][0]["results"]["checks"]
    assert block["flagged"] and block["flagged_transfers"] == 5


def test_report_when_nothing_is_flagged(tmp_path: Path) -> None:
    result = two_ranks()
    result["ranks"][0]["profile"]["checks"] = copy.deepcopy(
        result["ranks"][1]["profile"]["checks"])
    text, html, _ = _report(tmp_path, result)
    assert "— checks on the bounds" in text and "No transfer was flagged" in text
    assert "— flagged transfers by" not in text and "<svg" not in _section(html)


def test_report_of_profiles_without_checks(tmp_path: Path) -> None:
    text, html, doc = _report(tmp_path, two_ranks(rank0_checks=False, rank1_checks=False))
    assert "— checks on the bounds" not in text and not CHECKS_HEADING.search(html)
    assert doc["runs"][0]["results"]["checks"]["available"] is False


# ---------------------------------------------------------------- from the profiler's engine


def test_engine_profile_through_the_analysis() -> None:
    from mpi_overlap.platform.toolchains import get_toolchain

    exe = ensure_built(get_toolchain("mpich")) / "profiler" / "mop_replay"
    # table 0 B 2 µs, 4 KiB 10 µs: a 4 KiB MPI_Recv in a 3 µs call (7 µs beyond); an
    # MPI_Sendrecv whose 2 KiB send (6 µs) and 1 KiB receive (4 µs) share a 5 µs call
    # (the send 1 µs beyond; the two may run at once); an MPI_Send that fits.
    events = """table 0 2e-06
table 4096 1e-05
enter 0 MPI_Recv
incall 0 4096 recv MPI_Recv
exit 3000
enter 4000 MPI_Sendrecv
incall 4000 2048 send MPI_Sendrecv
incall 4000 1024 recv MPI_Sendrecv
exit 9000
enter 10000 MPI_Send
incall 10000 0 send MPI_Send
exit 20000
finish 20000
"""
    proc = subprocess.run([str(exe)], input=events, capture_output=True, text=True,
                          timeout=60, check=True)
    profile = json.loads(proc.stdout)["profile"]
    doc = rank_doc(0, [], size=1)
    doc["profile"] = profile
    result = make_result([doc])  # validates against profile-run-v1 (and the rank schema)
    a = _analysis(result)
    c = a["checks"]
    us = 1e-6
    assert c["flagged_transfers"] == 2 and c["flagged_xfer_s"] == pytest.approx(16 * us)
    assert c["flagged_pct"] == pytest.approx(100 * 16 / 22)
    assert c["beyond_s"] == pytest.approx(8 * us)
    assert c["in_call"]["calls"] == 3 and c["in_call"]["calls_beyond"] == 2
    assert [(e["fn"], e["check"]) for e in c["by_function"]] == [
        ("MPI_Recv", "in-call"), ("MPI_Sendrecv", "in-call")]
    assert [e["pct"] for e in c["by_function"]] == pytest.approx([100.0, 60.0])
    assert [e["label"] for e in c["by_bin"]] == ["2 KiB–4 KiB", "4 KiB–8 KiB"]
    assert a["findings"][1].startswith("Checks on the bounds: transfers carrying 73 %")
    assert "8.00 µs of transfer time beyond what the wall clock allows" in a["findings"][1]
