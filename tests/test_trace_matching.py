"""Both ends of every message on a real MPI: `mpi-overlap profile --trace` of
native/tests/matching_app.c (tags received out of order, MPI_ANY_SOURCE/MPI_ANY_TAG
receives, one tag on three communicators, Sendrecv, persistent requests, collectives on a
split communicator) on 2 ranks of the MPICH and the Open MPI wheels, whose constants for
the wildcards differ. Every logical message has its own size, so a pair whose two ends
disagree on the size is a wrong match (profile/trace/match.py; docs/profiler.md, "Message
matching")."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from cli_helpers import profile_test_app_traced
from mpi_overlap.profile.trace.convert import read_run
from mpi_overlap.profile.trace.match import match_messages
from mpi_overlap.profile.trace.reader import KIND_SEND
from mpi_overlap.profile.trace.timeline import rank_timeline
from mpi_overlap.run.rundir import load_run

pytestmark = pytest.mark.mpi

# (sender, bytes) of every pair the program makes (matching_app.c's header)
EXPECTED = Counter({(0, 100): 1, (0, 200): 1, (0, 300): 1, (0, 400): 1, (0, 500): 1,
                    (0, 550): 1, (0, 600): 1, (0, 700): 1, (0, 800): 1, (1, 800): 1,
                    (0, 900): 2})


@pytest.fixture(scope="module", params=["mpich", "openmpi"])
def run(request, tmp_path_factory):
    base: Path = tmp_path_factory.mktemp(f"matching-{request.param}")
    return load_run(profile_test_app_traced(request.param, "matching_app", base))


def test_every_message_is_matched_with_its_own_other_end(run) -> None:
    timelines = [rank_timeline(t) for t in read_run(run.path)]
    m = match_messages(timelines)
    assert (m.unmatched_sends, m.unmatched_recvs, m.unnamed) == (0, 0, 0)
    got = Counter()
    for s, r in m.pairs:
        assert s.kind == KIND_SEND and s.rank != r.rank
        assert s.bytes == r.bytes, (s, r)  # sizes are unique per message: a wrong pair shows
        assert (s.comm, s.tag) == (r.comm, r.tag) and s.peer == r.rank and r.peer == s.rank
        got[(s.rank, s.bytes)] += 1
    assert got == EXPECTED
    # the split communicator, the duplicate and MPI_COMM_WORLD: three ids, the same on
    # both ranks
    comms = [{c for c, info in t.trace.comms.items() if not info.flags} for t in timelines]
    assert comms[0] == comms[1] and len(comms[0]) >= 3
    # Barrier on split, Allreduce and Bcast on MPI_COMM_WORLD: one instance each, both ranks
    assert len(m.collectives) == 3 and m.coll_mismatched == 0
    assert all(sorted(inst) == [0, 1] for inst in m.collectives.values())


def test_the_analysis_reports_the_matching(run) -> None:
    ts = run.analysis["two_sided"]
    assert ts["available"] and ts["matched"] == sum(EXPECTED.values())
    assert ts["unmatched_sends"] == ts["unmatched_receives"] == ts["unnamed"] == 0
