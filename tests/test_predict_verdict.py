"""The predict check's verdicts (cluster/predict_verdict.py): each row against issue 36's
bounds (5 / 10 % in run time / MPI time at the base, 10 / 20 % elsewhere), and the rows
off the base judged only where the machine held its speed through the check's runs. No
cluster: documents of the check's shape."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mpi_overlap.cluster.predict_verdict import (
    HOLDS,
    MISSES,
    NOT_JUDGED,
    UNSTEADY_SHARE,
    judge,
    row_verdict,
    steadiness,
)
from mpi_overlap.cluster.view import predict_check_lines

BASE, ELSEWHERE = "2 nodes at 1gbit", "1 node"


def _runs(refs: list[tuple[list[float], list[float]]]) -> dict[str, Any]:
    """One case's runs, one per (before, after) pair of references."""
    return {BASE: {"halo": [{"speed_s": {"before": b, "after": a}} for b, a in refs]}}


def test_steady_where_the_runs_references_stay_near_the_fastest() -> None:
    quiet = [([9.0, 9.1], [9.2, 9.0])] * 4
    st = steadiness(_runs(quiet), [[9.0, 9.0], *[r for pair in quiet for r in pair]])
    assert st["steady"] and st["off_fastest"] == 0 and st["run_references"] == 8
    # per reference its slower CPU: +1.1 and +2.2 %, four of each
    assert st["median_off_pct"] == pytest.approx(100 * (9.15 / 9.0 - 1))
    # one CPU slow is a slow reference: the ranks wait for the slower one
    slow = [([9.0, 14.0], [9.0, 14.5])] * 4
    st = steadiness(_runs(slow), [[9.0, 9.0]])
    assert not st["steady"] and st["off_fastest"] == 8 and st["off_share"] == 1.0


def test_a_short_spell_is_allowed_a_lasting_state_is_not() -> None:
    n = 20
    spell = int(UNSTEADY_SHARE * 2 * n)  # references, of 2n
    refs = [[13.0, 13.0]] * spell + [[9.0, 9.0]] * (2 * n - spell)
    pairs = list(zip(refs[::2], refs[1::2], strict=True))
    assert steadiness(_runs(pairs), [[9.0, 9.0]])["steady"]
    refs = [[13.0, 13.0]] * (spell + 2) + [[9.0, 9.0]] * (2 * n - spell - 2)
    pairs = list(zip(refs[::2], refs[1::2], strict=True))
    assert not steadiness(_runs(pairs), [[9.0, 9.0]])["steady"]


def test_no_figure_is_not_steady() -> None:
    nan = math.nan
    st = steadiness(_runs([([nan, nan], [nan, nan])]), [[nan, nan]])
    assert st["run_references"] == 0 and not st["steady"] and st["off_share"] is None


def _row(target: str, run: float | None, mpi: float | None, **extra: Any) -> dict[str, Any]:
    errs = None if run is None else {"run_s": run, "mpi_s": mpi, "waiting_s": 80.0}
    return {"case": "halo", "target": target, "error_pct": errs, **extra}


@pytest.mark.parametrize(("at_base", "run", "mpi", "verdict", "beyond"), [
    (True, -4.9, 9.9, HOLDS, []),
    (True, 5.1, 1.0, MISSES, ["run_s"]),
    (True, 1.0, -10.5, MISSES, ["mpi_s"]),
    (False, -9.9, 19.9, HOLDS, []),
    (False, 12.0, -25.0, MISSES, ["mpi_s", "run_s"]),
])
def test_each_row_against_its_bounds(at_base: bool, run: float, mpi: float, verdict: str,
                                     beyond: list[str]) -> None:
    # the waiting's error (80 %) is reported, not bounded
    got = row_verdict(_row(BASE if at_base else ELSEWHERE, run, mpi), at_base, steady=True)
    assert got["verdict"] == verdict and got["beyond"] == beyond


def test_a_miss_says_where_the_runs_computed_otherwise_than_the_trace() -> None:
    # the replay keeps the trace's computation
    got = row_verdict(_row(ELSEWHERE, 15.7, 1.0, computation_change_pct=-17.2), False, True)
    assert got["verdict"] == MISSES and got["why"] == "its runs computed -17 % against the trace's"
    held = row_verdict(_row(ELSEWHERE, 2.0, 1.0, computation_change_pct=48.0), False, True)
    assert held["verdict"] == HOLDS and "why" not in held
    near = row_verdict(_row(ELSEWHERE, 15.7, 1.0, computation_change_pct=-9.0), False, True)
    assert "why" not in near


def test_off_the_base_a_row_is_judged_only_on_a_steady_machine() -> None:
    # the base's row is the trace against its own run: the machine's state is the same
    assert row_verdict(_row(BASE, 1.0, 1.0), True, steady=False)["verdict"] == HOLDS
    got = row_verdict(_row(ELSEWHERE, 40.0, 1.0), False, steady=False)
    assert got == {**got, "verdict": NOT_JUDGED, "why": "the machine was not steady"}
    # a row without runs to count says the check's reason
    got = row_verdict(_row(ELSEWHERE, None, None, left_out="every run there was disturbed"),
                      False, steady=True)
    assert got["verdict"] == NOT_JUDGED and got["why"] == "every run there was disturbed"


def _doc(steady_refs: bool) -> dict[str, Any]:
    ref = [9.0, 9.0] if steady_refs else [14.0, 14.0]
    figs = {"run_s": 0.5, "mpi_s": 0.2, "waiting_s": 0.01}
    rows = [_row(BASE, 0.5, 1.0, predicted=figs, measured=figs, disturbed_runs=0,
                 speed_changed_runs=0),
            _row(ELSEWHERE, 15.0, 3.0, predicted=figs, measured=figs, disturbed_runs=0,
                 speed_changed_runs=0)]
    return {"base": BASE, "reps": 1, "rows": rows, "seconds": 10.0,
            "runs": _runs([(ref, ref)] * 3),
            "machine_speed": {"references_s": [[9.0, 9.0], ref]}}


def test_the_check_says_its_verdicts_and_the_machines_state() -> None:
    doc = _doc(steady_refs=True)
    judge(doc)
    assert doc["verdicts"] == {HOLDS: 1, MISSES: 1, NOT_JUDGED: 0}
    lines = predict_check_lines(doc, "/out")
    assert lines[1].endswith("[holds]") and lines[2].endswith("[misses]"), lines
    assert any(x.endswith(": steady") for x in lines), lines
    (said,) = [x for x in lines if x.startswith("the check's bounds")]
    assert said.endswith("1 held, 1 missed; missed: halo 1 node (run time)"), said
    doc["rows"][1]["computation_change_pct"] = 12.4
    judge(doc)
    (said,) = [x for x in predict_check_lines(doc, "/out") if x.startswith("the check's bounds")]
    assert said.endswith("missed: halo 1 node (run time; its runs computed +12 % against "
                         "the trace's)"), said

    doc = _doc(steady_refs=False)
    judge(doc)
    assert doc["verdicts"] == {HOLDS: 1, MISSES: 0, NOT_JUDGED: 1}
    lines = predict_check_lines(doc, "/out")
    (speed,) = [x for x in lines if x.startswith("the machine's speed")]
    assert "6 of 6 references around the runs over 10 % slower" in speed, speed
    assert "median +55.6 %: not steady" in speed, speed
    (said,) = [x for x in lines if x.startswith("the check's bounds")]
    assert said.endswith("1 held, 1 not judged; not judged: the machine was not steady")
