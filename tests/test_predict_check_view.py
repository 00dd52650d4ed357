"""The predict check's terminal lines (cluster/view.py, predict_check_lines) from a
document of the check's shape: what each row says beyond its figures (runs left out and
why, where the MPI time's error sits, one node's probe and the range without it). No cluster."""

from __future__ import annotations

from typing import Any

from mpi_overlap.cluster.view import predict_check_lines


def _figs(run: float, mpi: float) -> dict[str, float]:
    return {"run_s": run, "mpi_s": mpi, "waiting_s": 0.01}


def _row(**extra: Any) -> dict[str, Any]:
    row = {"case": "halo-blocking", "target": "1 node", "predicted": _figs(0.30, 0.08),
           "measured": _figs(0.31, 0.11), "error_pct": {"run_s": -3.2, "mpi_s": -27.3,
                                                        "waiting_s": 0.0},
           "disturbed_runs": 0, "speed_changed_runs": 0, "computation_change_pct": 1.0,
           "functions": [{"fn": "MPI_Sendrecv", "predicted_s": 0.07, "measured_s": 0.10},
                         {"fn": "MPI_Barrier", "predicted_s": 0.01, "measured_s": 0.01}]}
    return {**row, **extra}


def _lines(*rows: dict[str, Any]) -> list[str]:
    doc = {"base": "2 nodes at 1gbit", "reps": 2, "rows": list(rows), "seconds": 100.0}
    return predict_check_lines(doc, "/out")


def test_an_mpi_time_error_beyond_the_bound_names_the_functions_it_sits_in() -> None:
    lines = _lines(_row())
    said = [x for x in lines if "MPI time by function" in x]
    assert len(said) == 1 and "MPI_Sendrecv 70.0 ms / 100 ms" in said[0], lines
    # within the bound: no such line
    assert not any("by function" in x for x in _lines(_row(error_pct={
        "run_s": 1.0, "mpi_s": 5.0, "waiting_s": 0.0})))


def test_runs_left_out_say_why() -> None:
    lines = _lines(_row(disturbed_runs=1, speed_changed_runs=2))
    (line,) = [x for x in lines if "halo-blocking" in x]
    assert line.endswith("; 1 disturbed run(s) left out; 2 run(s) off the trace's machine "
                         "speed left out"), line
    # at the base a run is judged by its computation against the trace's
    lines = _lines(_row(target="2 nodes at 1gbit", speed_changed_runs=1))
    (line,) = [x for x in lines if "halo-blocking" in x]
    assert line.endswith("; 1 run(s) that computed over 10 % longer than the trace left "
                         "out"), line


def test_one_node_says_its_probe_and_the_range_without_it() -> None:
    row = _row(payload_work={"without": _figs(0.25, 0.04)},
               inside_range={"run_s": False, "mpi_s": True, "waiting_s": False},
               kept=_figs(0.42, 0.2), kept_error_pct={"run_s": 35.5},
               probe_speed_change_pct=35.0)
    (line,) = [x for x in _lines(row) if "--probe" in x]
    assert "with the machine's speed 35 % off the trace's" in line, line
    assert "the recorded payload work kept whole: 420 ms (+35.5 %)" in line, line
    (rng,) = [x for x in _lines(row) if "left out:" in x]
    assert "250 ms (measured outside the range)" in rng, rng
    # the probe timed at the trace's speed: nothing to say about it
    row["probe_speed_change_pct"] = 2.0
    assert not any("speed 2 %" in x for x in _lines(row))


def test_the_base_row_says_each_runs_own_replay() -> None:
    """At the base the row is the trace against its own run; every base run not left out
    is replayed on its own table too, and the row gives their errors' range."""
    row = _row(target="2 nodes at 1gbit", runs_replayed_error_pct=[
        {"run_s": -0.7, "mpi_s": -1.6, "waiting_s": 0.0},
        {"run_s": 1.8, "mpi_s": 3.1, "waiting_s": 0.0}])
    (line,) = [x for x in _lines(row) if "replayed on its own table" in x]
    assert line.strip() == ("each of its 2 run(s) not left out, replayed on its own table: "
                            "run time -0.7 to +1.8 %; MPI time -1.6 to +3.1 %"), line
    one = _row(target="2 nodes at 1gbit", runs_replayed_error_pct=[
        {"run_s": 2.0, "mpi_s": None, "waiting_s": 0.0}])
    (line,) = [x for x in _lines(one) if "replayed on its own table" in x]
    assert line.endswith("run time +2.0 %; MPI time —"), line
    # the other targets have no such line
    assert not any("own table" in x for x in _lines(_row()))
