"""The profiler's cost inside one launch, from a mini-app's iterations timed in blocks.

A launch of mo_halo or mo_cg with `--profiler-ab N` (native/apps/app_ab.h) runs its timed
iterations in blocks of N, the profiler paused (MPI_Pcontrol(MPI_OVERLAP_PCONTROL_PAUSE))
in every other one, in the order running, paused, paused, running, ... . Each pair of
neighbouring blocks (0 and 1, 2 and 3, ...) holds one of each, milliseconds apart, and so
shares the launch's pace, which pairs of launches on a shared machine do not (docs/
profiler.md, "Memory and cost"). One ratio per pair, running / paused; the ratios of one
launch or of many are combined as launches' are: geometric mean with the Student-t
interval of the log ratios (stats.ratio_ci), and the rank-based estimate and interval
beside it (stats.ratio_ci_rank). Used by the profiler's cost benchmark (its `--apps`) and
by the case studies (`study halo|cg`), which both take their block size and resolution
from here.
"""

from __future__ import annotations

from typing import Any

from .figures import figure
from .stats import ratio_ci, ratio_ci_rank

# Iterations per block: 8 (2 ms of mo_halo, 10 ms of mo_cg here). Measured on this VM
# (docs/profiler.md, "The cost inside one launch"): with shorter blocks part of the cost
# lands in the paused blocks - a rank slowed at the end of a running iteration delays its
# neighbour's next one, which may be paused - and MPICH's mo_halo read, by the rank-based
# estimate, -0.2 % at blocks of 1, +0.25 % at 4, +0.45-0.65 % at 8 to 25; longer blocks
# give fewer pairs, and one hiccup of the machine weighs more in each (Student-t +-3 % at
# 25 against +-0.7 % at 8).
PAIR_BLOCK = 8

# A cost from pairs is resolved when its interval lies within this many percentage points
# of it (issue 40: the profiler's cost on an app known to +-0.5 %), whatever its sign
# (analysis/figures.py, `resolution`).
RESOLUTION_PCT = 0.5


def block_paused(block: int) -> bool:
    """Whether block `block` (from 0) had the profiler paused: app_ab_paused's rule."""
    return bool((block ^ (block >> 1)) & 1)


def block_sums(iter_s: list[float | None], block: int) -> list[float]:
    """Each whole block's time: the sum of its iterations' times. A block with a missing
    iteration time ends the list, as does the last block when it is cut short."""
    out = []
    for start in range(0, len(iter_s) - block + 1, block):
        part = iter_s[start:start + block]
        if any(not isinstance(x, (int, float)) or x <= 0 for x in part):
            break
        out.append(float(sum(part)))  # type: ignore[arg-type]
    return out


def mode_block_sums(result: dict[str, Any] | None, mode: str, block: int,
                    ) -> tuple[dict[str, Any], list[float]]:
    """A mini-app's result (its JSON document): the named mode's record, when it completed
    ({} otherwise), and its whole blocks' times."""
    modes = ((result or {}).get("results") or {}).get("modes") or []
    found = next((m for m in modes if m.get("mode") == mode and m.get("complete")), {})
    return found, block_sums(found.get("iter_time_s") or [], block)


def unmonitored_transfers(counters: list[dict[str, Any]]) -> int:
    """Transfers the ranks recorded with monitoring off (the ranks' profile counters): in a
    launch timed in blocks, the sign that the profiler did not pause (threads in use: it
    refuses, docs/profiler.md), which leaves its pairs without a figure."""
    return sum(int(c.get("unmonitored_transfers", 0)) for c in counters)


def pair_ratios(blocks: list[float]) -> list[float]:
    """Running / paused, one per pair of neighbouring blocks."""
    out = []
    for first in range(0, len(blocks) - 1, 2):
        a, b = blocks[first], blocks[first + 1]
        running, paused = (b, a) if block_paused(first) else (a, b)
        out.append(running / paused)
    return out


# Pairs left out at the start of each launch. Block 0 holds the launch's first iterations
# (the grids' first touch, MPI's first messages to each peer: the launches run without
# warm-up, whose iterations would run with monitoring off), and it is always a running
# block, so its pair reads the cold start as cost. Measured (2026-12-03, study halo
# --reps 4, 16 cost launches of 62 pairs each per MPI): block 0 took 3-47 % longer than
# its launch's median block in all 32, blocks 1-3 mostly within a few %; the first pair
# read over +3 % in 12 of 16 launches on MPICH (the others -24 to +3 %), +8 to +49 % in
# all 16 on Open MPI, and leaving it out moved the pooled geometric mean from +0.53 to
# +0.43 % (MPICH) and from +0.47 to +0.19 % (Open MPI), the rank-based estimate by
# 0.03-0.06 points.
COLD_PAIRS = 1


def warm_pair_ratios(blocks: list[float]) -> list[float]:
    """A launch's pair ratios without its first COLD_PAIRS pairs: what its cost rests on."""
    return pair_ratios(blocks)[COLD_PAIRS:]


def iterations_for_warm_pairs(pairs: int) -> int:
    """The iterations a launch in blocks of PAIR_BLOCK needs for `pairs` warm pairs (what
    warm_pair_ratios keeps)."""
    return (pairs + COLD_PAIRS) * 2 * PAIR_BLOCK


def _pct(r: float | None) -> float | None:
    return None if r is None else 100.0 * (r - 1.0)


def pair_cost(ratios: list[float], ci: float = 0.95) -> dict[str, Any]:
    """The cost the pairs give, in percent of the paused blocks' time: the geometric mean
    with its Student-t interval, and the rank-based estimate with its interval."""
    geomean, low, high = ratio_ci(ratios, ci)
    rank, rank_low, rank_high = ratio_ci_rank(ratios, ci)
    return {
        "pairs": len(ratios),
        "overhead_pct": _pct(geomean),
        "ci95_low_pct": _pct(low),
        "ci95_high_pct": _pct(high),
        "rank_estimate_pct": _pct(rank),
        "rank_ci95_low_pct": _pct(rank_low),
        "rank_ci95_high_pct": _pct(rank_high),
    }


def pair_cost_figure(name: str, label: str, cost: dict[str, Any]) -> dict[str, Any]:
    """A pair_cost as a headline figure: a finding where its interval lies within
    RESOLUTION_PCT of it, its pairs named as blocks (analysis/figures.py)."""
    return figure(name, label, cost["overhead_pct"], "%", "cost",
                  ci=(cost["ci95_low_pct"], cost["ci95_high_pct"]), pairs=cost["pairs"],
                  resolution=RESOLUTION_PCT, paired="blocks")
