"""The predict-check's runs of one case on one target (cluster/predict_check.py,
measured_runs): the repetitions asked for, and where every one of them was left out
(disturbed, or the machine's speed around it not the trace's), up to as many more until one
is not, so that a few seconds of other load do not leave a case without figures. No
cluster: the runs are stand-ins."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_overlap.cluster.predict_check import _left_out, measured_runs


def _runs(disturbed: list[bool], reps: int) -> tuple[list[dict[str, Any]], list[int]]:
    left = iter(disturbed)
    said: list[int] = []
    got = measured_runs(lambda: {"disturbed": next(left)}, reps,
                        lambda i, entry: said.append(i))
    return got, said


@pytest.mark.parametrize(("disturbed", "reps", "made"), [
    ([False, False], 2, 2),  # quiet: what was asked
    ([True, False], 2, 2),  # one quiet run is enough
    ([True, True, True, False], 2, 4),  # both disturbed: more until one is not...
    ([True, True, True, True, False], 2, 4),  # ...at most as many again
    ([True, True, True], 1, 2),
])
def test_disturbed_runs_are_made_again_up_to_twice_the_repetitions(
        disturbed: list[bool], reps: int, made: int) -> None:
    got, said = _runs(disturbed, reps)
    assert [e["disturbed"] for e in got] == disturbed[:made]
    assert said == list(range(made))


def test_runs_off_the_traces_speed_are_made_again_as_disturbed_ones_are() -> None:
    # the check leaves out a run the guard calls disturbed and one around which the
    # machine's speed was not the trace's (machine_speed.py): either makes another
    flags = iter([{"disturbed": False, "speed_changed": True},
                  {"disturbed": True, "speed_changed": False},
                  {"disturbed": False, "speed_changed": False},
                  {"disturbed": False, "speed_changed": False}])
    got = measured_runs(lambda: next(flags), 2, lambda i, entry: None, _left_out)
    assert len(got) == 3 and not got[-1]["speed_changed"]
