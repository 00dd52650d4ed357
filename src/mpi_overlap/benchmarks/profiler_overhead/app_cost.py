"""The profiler's cost on the mini-apps inside one launch (`bench profiler-overhead --apps`).

Launches on a shared machine each draw a pace for their whole length, so the cost on an
application measured by pairs of launches is as wide as that spread (docs/profiler.md,
"Memory and cost": ±1.2-1.7 % for 10-s mo_halo launches over 8 pairs). Here one launch
of mo_halo or mo_cg runs with `--profiler-ab N` (native/apps/app_ab.h): its timed
iterations go in blocks of N, the profiler paused (MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE):
its wrappers pass every call straight to the MPI) in every other one, in the order
running, paused, paused, running, ... . Each pair of neighbouring blocks (0 and 1, 2 and 3,
...) holds one of each, milliseconds apart, and gives one ratio (running /
paused); the ratios are combined as the launches' are (analysis.py: geometric mean,
Student-t interval of the log ratios, and the rank-based figures beside it), against the
seed's target for real programs: at most 0.9 % (Shet et al. §4.5).

What this leaves out, said with the figure: what a launch pays once (MPI_Init's set-up,
the profiles written at MPI_Finalize: the run's per_launch), and what a paused wrapper
still costs (the interposed call and a test: less than the disabled library's cost per
call, which the msgrate launches measure).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...analysis.block_pairs import PAIR_BLOCK, pair_cost, pair_cost_figure, warm_pair_ratios
from .verdicts import CI_LEVEL, Target, verdict

# The seed's cost of its profiler on real applications: under 0.9 % of run time.
APP_TARGET_PCT = Target("<=", 0.9)


@dataclass(frozen=True)
class AppSpec:
    """One app's launch: its mode, iterations (--quick a tenth) and iterations per block.
    No untimed warm-up: the apps run theirs with monitoring off (MPI_Pcontrol(0)), and the
    analysis takes any transfer recorded so as a pause the profiler refused."""

    program: str  # the key into APP_EXECUTABLES
    mode: str
    iterations: int
    block: int

    def args(self, quick: bool) -> list[str]:
        return ["--modes", self.mode, "--iterations",
                str(self.iterations // 10 if quick else self.iterations),
                "--profiler-ab", str(self.block), "--warmup", "0"]


# Blocks of PAIR_BLOCK iterations (block_pairs.py says why 8). Each launch runs about
# 10 s here (2026-12-03: mo_halo 6.5 s per 40,000 iterations, mo_cg 4.6 s per 8,000):
# mo_cg restarts its solve whenever the residual has fallen by 1e-30 (native/apps/cg.c), so
# it computes numbers of one scale for any number of iterations (it used to underflow to
# NaNs after about 3,350).
APP_LAUNCHES = (
    AppSpec("halo", "nonblocking", 60000, PAIR_BLOCK),
    AppSpec("cg", "allreduce", 16000, PAIR_BLOCK),
)


def analyze_app_cost(record: dict[str, Any], ci: float = CI_LEVEL,
                     null: dict[str, Any] | None = None) -> dict[str, Any]:
    """One app launch's cost: the pairs' geometric mean ratio and intervals, in percent,
    with the verdict against APP_TARGET_PCT (the Student-t interval's, as the launches'). A
    launch whose profile recorded transfers with monitoring off was not paused (threads in
    use: the profiler refuses, docs/profiler.md) and gives no figure. `null`: the same
    launch without the profiler, whose blocks differ in nothing; what its pairs read is
    what the instrument reads where there is nothing to measure (analysis: `null`)."""
    unpaused = int((record.get("profile") or {}).get("unmonitored_transfers") or 0)
    ratios = [] if unpaused else warm_pair_ratios(record.get("block_s") or [])
    figures = pair_cost(ratios, ci)
    return {
        "program": record["program"],
        "mode": record["mode"],
        "block": record["block"],
        **figures,
        "target_pct": APP_TARGET_PCT.value,
        "verdict": verdict(APP_TARGET_PCT, len(ratios), figures["ci95_low_pct"],
                           figures["ci95_high_pct"]),
        "reason": (f"the profiler did not pause: {unpaused} transfers were recorded with "
                   "monitoring off" if unpaused else None),
        "run_time_s": record.get("run_time_s"),
        **({} if null is None else {"null": pair_cost(
            warm_pair_ratios(null.get("block_s") or [])
            if null.get("status") == "complete" else [],
            ci)}),
    }


def app_figure_name(c: dict[str, Any]) -> str:
    return f"mo_{c['program']}_{c['mode']}_inside_launch_pct"


def app_cost_figure(c: dict[str, Any]) -> dict[str, Any]:
    """An app's cost inside one launch as a headline figure: resolved, as the study's, when
    its interval lies within block_pairs.RESOLUTION_PCT of it."""
    return pair_cost_figure(
        app_figure_name(c),
        f"profiler's cost on mo_{c['program']} ({c['mode']}) inside one launch", c)


def _pct_interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f" [{low:+.2f}, {high:+.2f}]"


def app_cost_sentence(c: dict[str, Any]) -> str:
    """'mo_halo (nonblocking), blocks of 8 inside one launch: the profiler costs +0.52 %
    [+0.10, +0.94] (rank-based +0.50 % [+0.12, +0.90]) over 50 pairs: inconclusive ...'"""
    head = f"mo_{c['program']} ({c['mode']}), blocks of {c['block']} inside one launch"
    if c["overhead_pct"] is None:
        return f"{head}: {c.get('reason') or 'no pair of blocks'}"
    rank = ("" if c["rank_estimate_pct"] is None else
            f" (rank-based {c['rank_estimate_pct']:+.2f} %"
            f"{_pct_interval(c['rank_ci95_low_pct'], c['rank_ci95_high_pct'])})")
    null = c.get("null")
    check = ("" if not null or null["overhead_pct"] is None else
             f"; the same launch without the profiler reads {null['overhead_pct']:+.2f} %"
             f"{_pct_interval(null['ci95_low_pct'], null['ci95_high_pct'])} (nothing to "
             "measure)")
    return (f"{head}: the profiler costs {c['overhead_pct']:+.2f} %"
            f"{_pct_interval(c['ci95_low_pct'], c['ci95_high_pct'])}{rank} over {c['pairs']} "
            f"pairs: {c['verdict']} (≤ {c['target_pct']:.1f} %; not counting what a launch "
            f"pays once){check}")
