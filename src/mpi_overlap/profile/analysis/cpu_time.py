"""Computation as CPU time (docs/method.md, "Computation as CPU time"): how long each rank
was descheduled during its computation, and whether a load imbalance holds on the time the
ranks actually computed rather than on wall-clock time.

A rank's computation (`comp_s`) is wall-clock time between its MPI calls, so it includes
the time the rank was descheduled while other processes ran: two traced runs of one code
beside foreign load named a different "busiest" rank each time. The profiler reads the
computing thread's CPU clock around the pieces of computation at least `cpu.min_piece_s`
long (docs/profiler.md, "Computation as CPU time"); `cpu.off_cpu_s` is the time those
pieces spent off the CPU. Off the CPU is either descheduled (runnable while another
process held the CPU) or the program's own waiting (sleep, I/O); the scheduler's run-queue
wait of the rank's thread over the run, `cpu.run_delay_s`, bounds the first. So, per rank:

    descheduled_s = min(off_cpu_s, run_delay_s)   (off_cpu_s where the kernel gives none)
    comp_cpu_s    = max(0, comp_s − descheduled_s)

The imbalance test (profile/analysis/advice.py's rule): the busiest rank's computation exceeds
the ranks' mean by at least IMBALANCE_SHARE of it. It must hold on wall-clock time (the
ranks wait for each other) and on comp_cpu_s, naming the same rank (the work is uneven).
Where it holds on wall-clock time only, the difference is other processes': the analysis
says how long the busiest rank was descheduled instead of advising. Ranks without the
figures (a library before them, MPI_OVERLAP_CPU=0) are tested on wall-clock time alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.formatting import fmt_time
from .profile_values import num

IMBALANCE_SHARE = 0.10  # busiest rank's computation above the mean by this share
MIN_EXCESS_S = 1e-6


def rank_figures(doc: dict[str, Any], comp_s: float) -> dict[str, float]:
    """A rank entry's comp_cpu_s and descheduled_s from its document's "cpu" object; none
    without one (a library before it, a disabled rank) or where the reads were off
    (min_piece_s null), so such a run's analysis reads as before."""
    cpu = doc.get("cpu")
    if not isinstance(cpu, dict) or not isinstance(cpu.get("off_cpu_s"), (int, float)) \
            or cpu.get("min_piece_s", 1.0) is None:
        return {}
    off = max(0.0, float(cpu["off_cpu_s"]))
    delay = cpu.get("run_delay_s")
    desched = min(off, float(delay)) if isinstance(delay, (int, float)) else off
    desched = min(desched, comp_s)
    return {"comp_cpu_s": max(0.0, comp_s - desched), "descheduled_s": desched}


@dataclass
class Uneven:
    """One measure's imbalance: the busiest and least busy rank entries, the mean and the
    busiest rank's excess over it."""

    busiest: dict[str, Any]
    least: dict[str, Any]
    mean_s: float
    excess_s: float

    def holds(self, key: str) -> bool:
        top = num(self.busiest[key])
        return top > 0 and self.excess_s >= IMBALANCE_SHARE * top and \
            self.excess_s >= MIN_EXCESS_S


def uneven(ranks: list[dict[str, Any]], key: str) -> Uneven:
    values = [num(r[key]) for r in ranks]
    mean = sum(values) / len(values)
    busiest = max(ranks, key=lambda r: (num(r[key]), -r["rank"]))
    least = min(ranks, key=lambda r: (num(r[key]), r["rank"]))
    return Uneven(busiest, least, mean, num(busiest[key]) - mean)


@dataclass
class Imbalance:
    """The imbalance test on both clocks; cpu None where some rank has no CPU figures."""

    wall: Uneven
    cpu: Uneven | None

    @property
    def on_cpu(self) -> bool | None:
        """Whether the CPU time confirms it (None: not measured)."""
        if self.cpu is None:
            return None
        return self.cpu.holds("comp_cpu_s") and \
            self.cpu.busiest["rank"] == self.wall.busiest["rank"]


def imbalance(ranks: list[dict[str, Any]]) -> Imbalance | None:
    """The test over the ranks in the totals, or None where wall-clock time is even (or
    fewer than two ranks)."""
    ranks = [r for r in ranks if r.get("in_totals")]
    if len(ranks) < 2:
        return None
    wall = uneven(ranks, "comp_s")
    if not wall.holds("comp_s"):
        return None
    with_cpu = all(isinstance(r.get("comp_cpu_s"), (int, float)) for r in ranks)
    return Imbalance(wall, uneven(ranks, "comp_cpu_s") if with_cpu else None)


def descheduled_finding(ranks: list[dict[str, Any]]) -> str | None:
    """The sentence that stands where the imbalance advice would be when wall-clock and CPU
    time disagree: how long the busiest rank was descheduled."""
    test = imbalance(ranks)
    if test is None or test.on_cpu is not False or test.cpu is None:
        return None
    b = test.wall.busiest
    cpu = ", ".join(f"rank {r['rank']} {fmt_time(num(r['comp_cpu_s']))}"
                    for r in sorted(ranks, key=lambda r: r["rank"]) if r.get("in_totals"))
    on_cpu = (f"rank {test.cpu.busiest['rank']} computes most"
              if test.cpu.holds("comp_cpu_s") else
              f"no rank computes {IMBALANCE_SHARE * 100:.0f} % more than the mean")
    return (f"Rank {b['rank']} was descheduled for {fmt_time(num(b['descheduled_s']))} "
            f"(other processes): its computation took {fmt_time(num(b['comp_s']))} of "
            f"wall-clock time, the ranks' mean {fmt_time(test.wall.mean_s)}, but on the CPU "
            f"({cpu}) {on_cpu}, so this is no load imbalance and gets no advice.")
