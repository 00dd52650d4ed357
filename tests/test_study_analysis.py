"""The case-study analysis on synthetic launches: medians per size and mode, the
comparison against the baseline with the prediction verdict, the profiler's cost as the
paired ratio of summed run times, and a schema-valid document."""

from __future__ import annotations

import pytest

from mpi_overlap.benchmarks.study.analysis import analyze_study
from mpi_overlap.core.documents import analysis_errors


def _launch(rep: int, profiled: bool, scale: float, modes: dict[str, tuple[float, float]],
            bounds: dict[str, tuple[float, float, float]] | None = None) -> dict:
    return {
        "rep": rep, "local": 32, "profiled": profiled, "dir": f"r{rep}{profiled}",
        "command": [], "status": "complete", "returncode": 0, "message": None,
        "elapsed_s": 1.0, "host": None, "disturbed": False,
        "modes": [{"mode": m, "run_time_s": run * scale, "mpi_time_s": mpi,
                   "per_iter_us": 10.0} for m, (run, mpi) in modes.items()],
        "bounds": None if bounds is None else {
            m: {"transfers": 10.0, "xfer_s": x, "min_s": lo, "max_s": hi, "comp_s": 0.0,
                "call_s": 0.0} for m, (x, lo, hi) in bounds.items()},
        "profile_status": "complete" if profiled else None,
    }


MODES = {"nonblocking": (1.0, 0.40), "overlap": (0.7, 0.12), "blocking": (1.0, 0.41)}
BOUNDS = {"nonblocking": (0.3, 0.0, 0.01), "overlap": (0.3, 0.1, 0.29),
          "blocking": (0.3, 0.0, 0.0)}


def _doc() -> dict:
    launches = []
    for rep in (1, 2):
        launches.append(_launch(rep, False, 1.0, MODES))
        launches.append(_launch(rep, True, 1.004, MODES, BOUNDS))
    return {"schema": "mpi-overlap/study-run", "benchmark": "study-halo", "app": "halo",
            "baseline": "nonblocking", "sizes": [{"local": 32, "face_bytes": 8192}],
            "launches": launches}


def test_modes_against_baseline() -> None:
    a = analyze_study(_doc())
    assert analysis_errors(a) == []
    (size,) = a["sizes"]
    cells = {c["mode"]: c for c in size["cells"]}
    assert cells["overlap"]["max_pct"] == pytest.approx(100 * 0.29 / 0.3)
    assert cells["overlap"]["nonoverlap_s"] == pytest.approx(0.01)
    cmps = {c["mode"]: c for c in size["comparisons"]}
    assert set(cmps) == {"overlap", "blocking"}
    ov = cmps["overlap"]
    assert ov["mpi_time_change_pct"] == pytest.approx(-70.0)
    assert ov["run_time_change_pct"] == pytest.approx(-30.0)
    assert ov["hidden_gain_min_s"] == pytest.approx(0.1 - 0.01)  # min_m - max_base
    assert ov["hidden_gain_max_s"] == pytest.approx(0.29)  # max_m - min_base
    # bounds: 0.09 s to 0.29 s more hidden: measured 0.28 s, inside [0.09, 0.29] within
    # the 5 % tolerance of the baseline's 0.4 s MPI time
    assert ov["prediction"] == "a saving for sure"
    assert ov["verdict"] == "within the bounds"
    # blocking: no hidden gain by the bounds, and MPI time did not fall
    assert cmps["blocking"]["prediction"] == "no saving"
    assert cmps["blocking"]["verdict"] == "within the bounds"
    assert a["prediction"] == {"agreed": 2, "judged": 2}
    assert a["profiler_overhead"]["pairs"] == 2  # one per repetition
    assert a["profiler_overhead"]["overhead_pct"] == pytest.approx(0.4)
    assert "overlap cuts MPI time 70 % against nonblocking" in a["finding"]
    assert "within the profiler's bounds in 2 of 2" in a["finding"]
    figs = {f["name"]: f["value"] for f in a["figures"]}
    assert figs["best_mpi_saving_pct"] == pytest.approx(70.0)


def test_a_saving_the_bounds_did_not_see_is_called_so() -> None:
    doc = _doc()
    for x in doc["launches"]:
        if x["bounds"]:
            x["bounds"]["overlap"]["min_s"] = 0.0  # bounds see no hidden time
            x["bounds"]["overlap"]["max_s"] = 0.0
    cmps = {c["mode"]: c for c in analyze_study(doc)["sizes"][0]["comparisons"]}
    assert cmps["overlap"]["prediction"] == "no saving"
    assert cmps["overlap"]["verdict"] == "above the bounds"
    assert cmps["overlap"]["saved_beyond_bounds_s"] == pytest.approx(0.28)


def test_a_guaranteed_saving_that_did_not_come_is_below_the_bounds() -> None:
    doc = _doc()
    for x in doc["launches"]:
        for m in x["modes"]:
            if m["mode"] == "overlap":
                m["mpi_time_s"] = 0.40  # no MPI time saved although min rose by 0.1 s
    cmps = {c["mode"]: c for c in analyze_study(doc)["sizes"][0]["comparisons"]}
    assert cmps["overlap"]["verdict"] == "below the bounds"


def test_failed_launches_and_missing_profiles_leave_no_numbers() -> None:
    doc = _doc()
    for x in doc["launches"]:
        if x["profiled"]:
            x["profile_status"] = "incomplete"
    a = analyze_study(doc)
    assert analysis_errors(a) == []
    cmps = {c["mode"]: c for c in a["sizes"][0]["comparisons"]}
    assert cmps["overlap"]["verdict"] == "no data"
    assert a["sizes"][0]["cells"][0]["max_pct"] is None


def test_the_baselines_advice_bounds_what_the_mode_that_follows_it_saves() -> None:
    """Baseline nonblocking: 0.3 s transfer, max 0.01 s: moving computation between post
    and wait (the overlap mode) can hide at most 0.29 s; overlap saved 0.28 s: within."""
    a = analyze_study(_doc())
    assert analysis_errors(a) == []
    (check,) = a["sizes"][0]["advice"]
    assert check["mode"] == "overlap" and check["rule"] == "move-computation"
    assert check["bound_s"] == pytest.approx(0.29)
    assert check["saved_s"] == pytest.approx(0.28)
    assert check["verdict"] == "within the bound"
    assert any("could hide at most 290.00 ms per rank; overlap does it and saved 280.00 ms"
               in c for c in a["conclusions"])
    doc = _doc()
    for x in doc["launches"]:
        for m in x["modes"]:
            if m["mode"] == "overlap":
                m["mpi_time_s"] = 0.0  # saved 0.4 s: more than any transfer it could hide
    (check,) = analyze_study(doc)["sizes"][0]["advice"]
    assert check["verdict"] == "beyond the bound"


def _speed_launch(rep: int, profiled: bool, speed: float, cost: float) -> dict:
    """A launch of MODES whose computation and MPI time all take `speed` times as long
    (the launch's own pace), the profiler adding `cost` of each mode's run time to its
    MPI calls."""
    x = _launch(rep, profiled, 1.0, MODES, BOUNDS if profiled else None)
    for m in x["modes"]:
        run, mpi = MODES[m["mode"]]
        added = cost * speed * run if profiled else 0.0
        m.update(run_time_s=speed * run + added, mpi_time_s=speed * mpi + added,
                 mpi_time_s_mean=speed * mpi + added)
    return x


def test_the_cost_per_unit_of_computation_takes_the_launches_pace_out() -> None:
    """Launches that run 20 % slower or faster from one to the next (as mo_halo's do here:
    1.26-1.40 ms an iteration, quiet) leave the run-time ratio unresolved; the ratio per
    unit of computation finds the 0.4 % the profiler adds to the MPI calls, and says so."""
    paces = [(1.0, 1.2), (1.15, 0.9), (0.95, 1.1), (1.2, 1.0)]  # (without, with) per repetition
    launches = [x for rep, (wo, w) in enumerate(paces, 1)
                for x in (_speed_launch(rep, False, wo, 0.004), _speed_launch(rep, True, w, 0.004))]
    doc = {**_doc(), "launches": launches}
    a = analyze_study(doc)
    assert analysis_errors(a) == []
    ov = a["profiler_overhead"]
    assert ov["pairs"] == 4 and ov["ci95_high"] - ov["ci95_low"] > 0.1  # launches scatter
    per = ov["per_computation"]
    assert per["pairs"] == 4 and per["overhead_pct"] == pytest.approx(0.4)
    assert per["ci95_low"] == pytest.approx(1.004) and per["ci95_high"] == pytest.approx(1.004)
    figs = {f["name"]: f for f in a["figures"]}
    assert figs["app_profiler_overhead_per_computation_pct"]["value"] == pytest.approx(0.4)
    assert "profiler cost on the app not resolved" in a["finding"]
    assert "per unit of its computation +0.40 %" in a["finding"]
    assert "at most +0.40 %" in a["finding"]  # the interval's upper end


def test_launches_without_the_mpi_time_per_rank_have_no_cost_per_computation() -> None:
    """Launches recorded before the study kept each mode's MPI time per rank: no figure."""
    a = analyze_study(_doc())
    assert "per_computation" not in a["profiler_overhead"]
    assert "app_profiler_overhead_per_computation_pct" not in {f["name"] for f in a["figures"]}
    assert "per unit of its computation" not in a["finding"]


def _library_s(per_launch_ms: float) -> dict:
    init, fin, gather, reduce = (x * per_launch_ms / 1e3 for x in (0.6, 0.2, 0.1, 0.1))
    return {"ranks": 2, "init_s_max": init, "init_s_median": init, "finalize_s_max": fin,
            "gather_s": gather, "reduce_s": reduce, "per_launch_s": per_launch_ms / 1e3}


def test_what_the_profiled_launches_paid_once_is_said_beside_their_run_times() -> None:
    """The profiled launches' library time (MPI_Init, MPI_Finalize, the gather, the
    reduction: outside the modes' run times) as its mean with an interval over them, each
    part's median, and one conclusion; launches recorded before it give neither."""
    doc = _doc()
    profiled = [x for x in doc["launches"] if x["profiled"]]
    for x, ms in zip(profiled, (4.0, 6.0), strict=True):
        x["library_s"] = _library_s(ms)
    a = analyze_study(doc)
    assert analysis_errors(a) == []
    once = a["profiler_overhead"]["once_per_launch"]
    assert once["launches"] == 2 and once["per_launch_s"] == pytest.approx(0.005)
    assert once["ci95_low_s"] < 0.004 and once["ci95_high_s"] > 0.006
    assert once["parts_median_s"]["init_s_max"] == pytest.approx(0.003)
    assert a["conclusions"][-1].startswith("Once per launch the profiler took 5.0 ms [")
    assert "MPI_Init 3.0, MPI_Finalize 1.0" in a["conclusions"][-1]
    assert "outside the modes' run times" in a["conclusions"][-1]
    before = analyze_study(_doc())
    assert "once_per_launch" not in before["profiler_overhead"]
    assert not any(c.startswith("Once per launch") for c in before["conclusions"])


def test_a_launch_time_limit_grows_with_the_iterations_asked() -> None:
    """--iterations beyond the app's default stretches each launch's default time limit
    in proportion; fewer never shorten it; the user's --timeout stands as given."""
    from mpi_overlap.benchmarks.registry import get_benchmark
    from mpi_overlap.benchmarks.study.run import APPS, StudyOptions, _launch_timeout

    halo, bench = APPS["halo"], get_benchmark("study-halo")
    assert _launch_timeout(halo, bench, StudyOptions()) == bench.default_timeout_s
    assert _launch_timeout(halo, bench, StudyOptions(iterations=2000)) \
        == pytest.approx(10 * bench.default_timeout_s)
    assert _launch_timeout(halo, bench, StudyOptions(iterations=20)) == bench.default_timeout_s
    assert _launch_timeout(halo, bench, StudyOptions(quick=True, iterations=100)) \
        == pytest.approx(2 * bench.quick_timeout_s)
    assert _launch_timeout(halo, bench, StudyOptions(iterations=2000, timeout_s=30.0)) == 30.0


def test_the_pairs_the_guard_marked_are_left_out_of_a_second_estimate() -> None:
    """A pair beside other work (its profiled launch 30 % slower in its MPI calls) moves
    the estimate; the analysis also gives it over the undisturbed pairs, which find the
    0.4 % the profiler adds, and says so in one conclusion. Without a disturbed pair there
    is no second estimate."""
    paces = [(1.0, 1.2), (1.15, 0.9), (0.95, 1.1), (1.2, 1.0), (1.0, 1.0)]
    launches = [x for rep, (wo, w) in enumerate(paces, 1)
                for x in (_speed_launch(rep, False, wo, 0.004), _speed_launch(rep, True, w, 0.004))]
    crowded = next(x for x in launches if x["rep"] == 5 and x["profiled"])
    crowded["disturbed"] = True
    for m in crowded["modes"]:
        m["run_time_s"] += 0.3 * m["mpi_time_s_mean"]
        m["mpi_time_s_mean"] *= 1.3
    a = analyze_study({**_doc(), "launches": launches})
    assert analysis_errors(a) == []
    ov = a["profiler_overhead"]
    assert ov["disturbed_pairs"] == 1 and ov["per_computation"]["overhead_pct"] > 1.0
    calm = ov["undisturbed"]
    assert calm["pairs"] == 4 and calm["per_computation"]["pairs"] == 4
    assert calm["per_computation"]["overhead_pct"] == pytest.approx(0.4)
    assert a["conclusions"][-1].startswith("Over the 4 undisturbed pairs: the profiler's cost on")
    assert "per unit of its computation +0.40 % [+0.40 %, +0.40 %]" in a["conclusions"][-1]
    quiet = analyze_study({**_doc(), "launches": [x for x in launches if x["rep"] != 5]})
    assert "undisturbed" not in quiet["profiler_overhead"]
    assert not any(c.startswith("Over the") for c in quiet["conclusions"])


def _cost_launch(rep: int, local: int, ratios: list[float], *, unmonitored: int = 0,
                 status: str = "complete") -> dict:
    """A cost launch whose pairs of blocks give these running / paused ratios, in the
    order the app pauses (running first in even pairs, paused first in odd ones)."""
    blocks = []
    for k, r in enumerate(ratios):
        paused = 0.002 * (1 + 0.01 * k)  # the launch's pace may drift; a pair shares it
        blocks += [paused, r * paused] if k % 2 else [r * paused, paused]
    return {"rep": rep, "local": local, "dir": f"rep{rep:02d}-local{local}-cost",
            "command": [], "status": status, "returncode": 0, "message": None,
            "elapsed_s": 1.0, "host": None, "disturbed": False, "block": 8,
            "block_s": blocks, "profile_status": "complete",
            "unmonitored_transfers": unmonitored}


def test_the_cost_inside_launches_pools_their_pairs_of_blocks() -> None:
    doc = _doc()
    tight = [1.003, 1.004, 1.005] * 10  # 30 pairs about +0.4 %
    doc["sizes"].append({"local": 64, "face_bytes": 32768})
    doc["cost_launches"] = [_cost_launch(1, 32, tight), _cost_launch(2, 32, tight),
                            _cost_launch(1, 64, tight),
                            # not paused (threads), and cut short: neither counts
                            _cost_launch(2, 64, [1.5] * 30, unmonitored=12),
                            _cost_launch(3, 64, [1.5] * 30, status="timeout")]
    a = analyze_study(doc)
    assert analysis_errors(a) == []
    inside = a["profiler_overhead"]["inside_launches"]
    # each launch's first, cold pair is left out (analysis/block_pairs.py, COLD_PAIRS)
    assert inside["pairs"] == 87 and inside["launches"] == 3 and inside["refused"] == 1
    assert inside["overhead_pct"] == pytest.approx(0.4, abs=0.01)
    assert inside["ci95_low_pct"] < 0.4 < inside["ci95_high_pct"]
    assert [(s["local"], s["pairs"]) for s in inside["by_size"]] == [(32, 58), (64, 29)]
    fig = next(f for f in a["figures"] if f["name"] == "app_profiler_overhead_inside_launches_pct")
    assert fig["resolution"] == 0.5 and fig["pairs"] == 87
    # known to within ±0.5 %: a finding, the first thing the finding says of the cost
    assert "profiler cost on the app inside launches +0.40 %" in a["finding"]
    assert any(c.startswith("Inside 3 launches (blocks of 8 iterations") for c in a["conclusions"])


def test_a_cost_inside_launches_wider_than_half_a_percent_is_not_resolved() -> None:
    doc = _doc()
    doc["cost_launches"] = [_cost_launch(1, 32, [0.97, 1.04, 1.01, 1.00, 1.03, 0.99])]
    a = analyze_study(doc)
    assert analysis_errors(a) == []
    assert "inside launches not resolved (95 % CI" in a["finding"]
    assert "reaches further than ±0.5 %" in a["finding"]


def test_studies_recorded_before_cost_launches_analyse_as_before() -> None:
    # before the cost launches there is no list; a run stopped before its first has []
    for doc in (_doc(), {**_doc(), "cost_launches": []}):
        a = analyze_study(doc)
        assert "inside_launches" not in a["profiler_overhead"]
        assert all(f["name"] != "app_profiler_overhead_inside_launches_pct"
                   for f in a["figures"])
        assert not any(c.startswith("Inside") for c in a["conclusions"])


def test_one_launch_the_profiler_did_not_pause_is_named_as_one() -> None:
    doc = _doc()
    doc["cost_launches"] = [_cost_launch(1, 32, [1.5] * 30, unmonitored=3)]
    a = analyze_study(doc)
    fig = next(f for f in a["figures"] if f["name"] == "app_profiler_overhead_inside_launches_pct")
    assert fig["value"] is None and fig["paired"] == "blocks"
    assert ("Inside 0 launches (blocks of 8 iterations, the profiler paused in every other): "
            "no pair of blocks; 1 launch left out: the profiler did not pause") in a["conclusions"]


def test_the_extent_counts_the_cost_launches() -> None:
    """Three launches per repetition and size (without, with, cost); a study recorded
    before the cost launches planned two."""
    from pathlib import Path

    from mpi_overlap.benchmarks.study.report import extent
    from mpi_overlap.run.rundir import Run

    doc = _doc()  # 1 size
    doc["reps"] = 2
    assert extent(Run(Path("."), {}, doc)) == f"{len(doc['launches'])} of 4 launches done"
    doc["cost_launches"] = [_cost_launch(1, 32, [1.0] * 4)]
    assert extent(Run(Path("."), {}, doc)) == f"{len(doc['launches']) + 1} of 6 launches done"


def test_a_cost_launch_runs_every_modes_iterations_and_at_least_sixty_pairs() -> None:
    from mpi_overlap.analysis.block_pairs import COLD_PAIRS, PAIR_BLOCK
    from mpi_overlap.benchmarks.study.run import (
        APPS,
        MIN_COST_PAIRS,
        StudyOptions,
        cost_iterations,
    )

    least = (MIN_COST_PAIRS + COLD_PAIRS) * 2 * PAIR_BLOCK
    halo, cg = APPS["halo"], APPS["cg"]
    # halo's five modes of 200 already give more; cg's two of 100 would give 11 pairs
    assert cost_iterations(halo, StudyOptions()) == 5 * 200 >= least
    assert cost_iterations(cg, StudyOptions()) == least
    assert (least // PAIR_BLOCK) // 2 - COLD_PAIRS == MIN_COST_PAIRS
    assert cost_iterations(cg, StudyOptions(iterations=10)) == least
    assert cost_iterations(halo, StudyOptions(iterations=400)) == 5 * 400
    # --quick keeps its short launches: every mode's quick iterations, or the asked ones
    assert cost_iterations(cg, StudyOptions(quick=True)) == 2 * 30
    assert cost_iterations(halo, StudyOptions(quick=True, iterations=12)) == 5 * 12
