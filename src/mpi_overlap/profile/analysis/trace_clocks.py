"""The clocks of a traced run's ranks, as the two-sided analyses read them: each rank's
ticks aligned to rank 0's seconds, how far that alignment may be off (clock_error), and
every thread's MPI call times. Shared by profile/analysis/twosided.py (bounds from both ends)
and profile/analysis/waits.py (waiting), which therefore need not import each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .twosided_bounds import CallTimes

if TYPE_CHECKING:  # imported where used: the trace package imports the analyses
    from ..trace.reader import RankTrace
    from ..trace.timeline import RankTimeline


def clock_error(tr: RankTrace) -> float | None:
    """How far this rank's aligned times may be from rank 0's clock: half the worse of
    the start and end ping-pong round trips, plus what the alignment mispredicts at the
    end measurement (0 when the start-end fit is used). None without both measurements
    (the drift over the run is then unknown)."""
    if tr.rank == 0:
        return 0.0
    e = tr.end
    if tr.sync_rtt_s < 0 or e is None or e.sync_rtt_s < 0:
        return None
    mispredict = abs(float(tr.seconds(e.sync_ticks)) - e.sync_s)
    return max(tr.sync_rtt_s, e.sync_rtt_s) / 2 + mispredict



class Clocks:
    """Aligned seconds and per-thread call times of every traced rank."""

    def __init__(self, timelines: list[RankTimeline]) -> None:
        self.tl = {t.rank: t for t in timelines}
        self.err = {t.rank: clock_error(t.trace) for t in timelines}
        self.calls: dict[tuple[int, int], CallTimes] = {}
        for t in timelines:
            for thread, th in t.threads.items():
                sec = t.trace.seconds
                self.calls[(t.rank, thread)] = CallTimes(
                    sec(th.enter), sec(th.exit), float(sec(th.first)), float(sec(th.last)))

    def s(self, rank: int, ticks: int) -> float:
        return float(self.tl[rank].trace.seconds(ticks))

    def pair_error(self, a: int, b: int) -> float | None:
        ea, eb = self.err.get(a), self.err.get(b)
        return None if ea is None or eb is None else ea + eb
