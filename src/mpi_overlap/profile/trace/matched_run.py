"""A traced run read for both ends of its messages: its traces (convert.read_run), each
rank's timeline (timeline.py) and the messages and collectives matched across ranks
(match.py). The two-sided analysis, the OTF2 export and `predict` all start from it.

Version-1 traces record no communicators or tags, so nothing can be matched: that is its
own error (OldTraces), which the analysis turns into its "not analysed" reason and the
commands into their one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core.errors import UserError
from .convert import read_run
from .match import Matched, match_messages
from .reader import RankTrace
from .timeline import RankTimeline, rank_timeline

OLD_TRACES = "the traces are of format version 1, which records no communicators or tags"


class OldTraces(UserError):
    """Traces of format version 1: nothing in them can be matched."""


@dataclass(frozen=True)
class MatchedRun:
    traces: list[RankTrace]  # in rank order
    timelines: list[RankTimeline]
    matched: Matched


def read_matched(run_dir: Path, *, why: str = "") -> MatchedRun:
    """The run's traces, timelines and matching; UserError (one line) where the run has no
    readable trace, OldTraces where they are of version 1 (`why`: what the caller needed
    them for, said after the reason)."""
    traces = read_run(run_dir)
    if any(t.version < 2 for t in traces):
        raise OldTraces(f"{run_dir}: {OLD_TRACES}{why}: profile again with --trace")
    timelines = [rank_timeline(t) for t in traces]
    return MatchedRun(traces, timelines, match_messages(timelines))
