"""The mini-apps' cost inside one launch (benchmarks/profiler_overhead/app_cost.py): blocks
of iterations alternately with the profiler running and paused, a ratio per pair of
neighbouring blocks, combined as the launches' ratios are."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpi_overlap.analysis.block_pairs import (
    block_paused,
    block_sums,
    pair_ratios,
    warm_pair_ratios,
)
from mpi_overlap.benchmarks.profiler_overhead.app_cost import (
    APP_LAUNCHES,
    analyze_app_cost,
    app_cost_sentence,
)
from mpi_overlap.benchmarks.profiler_overhead.verdicts import MEETS, MISSES, SPANS


def test_blocks_alternate_running_paused_paused_running() -> None:
    # native/apps/app_ab.h's rule; each pair holds one of each, the paused one second in
    # even pairs and first in odd ones
    assert [block_paused(b) for b in range(8)] == [False, True, True, False,
                                                   False, True, True, False]
    for first in range(0, 200, 2):
        assert block_paused(first) != block_paused(first + 1)


def test_block_sums_keep_whole_blocks_only() -> None:
    assert block_sums([1.0, 2.0, 3.0, 4.0, 5.0], 2) == [3.0, 7.0]  # the last is cut short
    assert block_sums([1.0, None, 3.0, 4.0], 1) == [1.0]  # a missing time ends the list
    assert block_sums([], 3) == []


def _blocks(pairs: int, cost: float, paused_s: float = 0.1) -> list[float]:
    """Blocks whose running ones take (1 + cost) times the paused ones."""
    return [paused_s * (1.0 if block_paused(b) else 1.0 + cost) for b in range(2 * pairs)]


def test_each_pair_gives_running_over_paused() -> None:
    assert pair_ratios(_blocks(4, 0.02)) == pytest.approx([1.02] * 4)
    assert pair_ratios([1.0, 2.0, 4.0]) == [0.5]  # an odd last block has no partner


def test_a_launchs_cold_first_block_is_not_read_as_cost() -> None:
    """Block 0 (always running) holds the launch's first iterations: 20 % slower here, as
    Open MPI's first blocks were; its pair is left out, and the cost is the other pairs'."""
    blocks = _blocks(40, 0.004)
    blocks[0] *= 1.2
    assert pair_ratios(blocks)[0] == pytest.approx(1.2 * 1.004)
    assert warm_pair_ratios(blocks) == pytest.approx([1.004] * 39)
    a = analyze_app_cost({"program": "halo", "mode": "nonblocking", "block": 8,
                          "block_s": blocks})
    assert a["pairs"] == 39 and a["overhead_pct"] == pytest.approx(0.4, abs=1e-9)


@given(st.lists(st.floats(0.05, 0.2), min_size=12, max_size=60),
       st.floats(-0.02, 0.03))
def test_a_known_cost_comes_back_whatever_the_pace(paces: list[float], cost: float) -> None:
    """Each pair drew its own pace; the cost is the same factor in every pair."""
    blocks = []
    for i, pace in enumerate(paces):
        for b in (2 * i, 2 * i + 1):
            blocks.append(pace * (1.0 if block_paused(b) else 1.0 + cost))
    a = analyze_app_cost({"program": "halo", "mode": "nonblocking", "block": 10,
                          "block_s": blocks})
    assert a["pairs"] == len(paces) - 1  # the first, cold pair is left out
    assert a["overhead_pct"] == pytest.approx(100 * cost, abs=1e-9)
    assert a["rank_estimate_pct"] == pytest.approx(100 * cost, abs=1e-9)


def _noisy(pairs: int, cost: float, spread: float) -> dict:
    blocks = []
    for i in range(pairs):
        wobble = 1.0 + spread * math.sin(7.3 * i)  # deterministic, symmetric noise
        for b in (2 * i, 2 * i + 1):
            blocks.append(0.1 * (wobble if block_paused(b) else 1.0 + cost))
    return {"program": "cg", "mode": "allreduce", "block": 80, "block_s": blocks,
            "run_time_s": 10.0}


def test_the_verdict_is_the_whole_interval_against_0_9_percent() -> None:
    assert analyze_app_cost(_noisy(50, 0.002, 0.002))["verdict"] == MEETS
    assert analyze_app_cost(_noisy(50, 0.03, 0.002))["verdict"] == MISSES
    wide = analyze_app_cost(_noisy(50, 0.005, 0.05))
    assert wide["verdict"] == SPANS
    assert wide["ci95_low_pct"] < 0.9 < wide["ci95_high_pct"]
    assert wide["target_pct"] == pytest.approx(0.9)


def test_the_sentence_names_the_app_its_figures_and_what_it_leaves_out() -> None:
    a = analyze_app_cost(_noisy(50, 0.002, 0.002))
    text = app_cost_sentence(a)
    assert text.startswith("mo_cg (allreduce), blocks of 80 inside one launch: the profiler "
                           "costs +0.20 %")
    assert "over 49 pairs: meets target (≤ 0.9 %" in text  # the cold first left out
    assert "rank-based" in text and "not counting what a launch pays once" in text
    none = analyze_app_cost({"program": "halo", "mode": "nonblocking", "block": 10,
                             "block_s": []})
    assert none["verdict"] == "no data" and "no pair of blocks" in app_cost_sentence(none)


def test_a_launch_the_profiler_did_not_pause_gives_no_figure() -> None:
    """Threads in use: the pauses were taken as MPI_Pcontrol(0), so the 'paused' blocks
    ran every wrapper; their transfers were recorded with monitoring off."""
    record = _noisy(50, 0.002, 0.002) | {"profile": {"unmonitored_transfers": 400}}
    a = analyze_app_cost(record)
    assert a["pairs"] == 0 and a["overhead_pct"] is None and a["verdict"] == "no data"
    assert a["reason"] == ("the profiler did not pause: 400 transfers were recorded with "
                           "monitoring off")
    assert app_cost_sentence(a).endswith(": " + a["reason"])
    assert analyze_app_cost(_noisy(50, 0.002, 0.002))["reason"] is None


def test_quick_launches_are_a_tenth_in_blocks_as_long() -> None:
    for app in APP_LAUNCHES:
        full, quick = app.args(False), app.args(True)
        assert full[full.index("--iterations") + 1] == str(app.iterations)
        assert quick[quick.index("--iterations") + 1] == str(app.iterations // 10)
        # the spill of a running iteration into the next is the same at any length
        assert full[full.index("--profiler-ab") + 1] == quick[quick.index("--profiler-ab") + 1]
        # no warm-up with monitoring off: its transfers would read as a refused pause
        assert full[full.index("--warmup") + 1] == "0"
        assert app.iterations // 10 >= 2 * 6 * app.block  # enough pairs for an interval


def test_the_launch_without_the_profiler_reads_what_blocks_give_with_nothing_to_measure() -> None:
    with_it = _noisy(50, 0.004, 0.002)
    without = _noisy(50, 0.0, 0.002) | {"status": "complete"}
    a = analyze_app_cost(with_it, null=without)
    assert a["null"]["pairs"] == 49
    assert abs(a["null"]["overhead_pct"]) < 0.05
    assert a["null"]["ci95_low_pct"] <= 0.0 <= a["null"]["ci95_high_pct"]
    assert a["overhead_pct"] == pytest.approx(0.4, abs=0.05)  # the cost is not changed by it
    assert "; the same launch without the profiler reads +0.0" in app_cost_sentence(a)
    # a null launch that did not complete gives no pairs, and the sentence leaves it out
    failed = analyze_app_cost(with_it, null=without | {"status": "timeout"})
    assert failed["null"]["pairs"] == 0 and "without the profiler" not in app_cost_sentence(failed)
    # runs before the null launch have no key
    assert "null" not in analyze_app_cost(with_it)
