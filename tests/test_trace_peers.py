"""A message's peer as a world rank, whatever handle named it: `mpi-overlap profile
--trace` of native/tests/peers_app.c on 2 ranks of the MPICH and the Open MPI wheels.
The profiler translates a communicator's or a window's ranks once and keeps the table
with the handle (native/profiler/mop_peers.c); the program names its peer through a
communicator with the ranks reversed, a communicator that gets that one's freed handle,
an intercommunicator, and windows on both kinds of communicator, the second with the
first's freed handle. A kept translation of a freed handle, or a window's or an
intercommunicator's ranks read as the local group's, would name rank 0 as its own peer."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import profile_test_app_traced
from mpi_overlap.profile.trace.convert import read_run
from mpi_overlap.profile.trace.reader import EV_BEGIN, KIND_RECV, KIND_SEND

pytestmark = pytest.mark.mpi

KIND_RMA_SEND = 4  # mop_event.h: a Put, data from origin to target

# What each rank posts (peers_app.c): bytes -> kind. Rank 0 sends and puts, rank 1
# receives the messages (the puts have no event at the target).
POSTED = {0: {100: KIND_SEND, 200: KIND_SEND, 300: KIND_SEND, 400: KIND_RMA_SEND,
              500: KIND_RMA_SEND},
          1: {100: KIND_RECV, 200: KIND_RECV, 300: KIND_RECV}}


@pytest.fixture(scope="module", params=["mpich", "openmpi"])
def begins(request, tmp_path_factory) -> dict[int, dict[int, tuple[int, int]]]:
    """Per rank, bytes -> (kind, peer) of every transfer's BEGIN event in its trace."""
    base: Path = tmp_path_factory.mktemp(f"peers-{request.param}")
    out: dict[int, dict[int, tuple[int, int]]] = {}
    for trace in read_run(profile_test_app_traced(request.param, "peers_app", base)):
        for events in trace.events.values():
            for e in events[events["type"] == EV_BEGIN]:
                out.setdefault(trace.rank, {})[int(e["bytes"])] = (int(e["kind"]), int(e["arg"]))
    return out


@pytest.mark.parametrize("rank", [0, 1])
def test_every_transfer_names_the_other_rank(begins, rank: int) -> None:
    got = {b: kp for b, kp in begins.get(rank, {}).items() if b in POSTED[rank]}
    assert got == {b: (kind, 1 - rank) for b, kind in POSTED[rank].items()}
