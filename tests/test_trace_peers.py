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

from cli_helpers import run_cli
from mpi_overlap.build import build_dir_for, ensure_built
from mpi_overlap.errors import UserError
from mpi_overlap.toolchains import get_toolchain
from mpi_overlap.trace.convert import read_run
from mpi_overlap.trace.reader import EV_BEGIN, KIND_RECV, KIND_SEND

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
    try:
        tc = get_toolchain(request.param)
    except UserError as err:
        pytest.skip(f"toolchain {request.param}: {err}")
    ensure_built(tc)
    app = build_dir_for(tc) / "tests" / "peers_app"
    base: Path = tmp_path_factory.mktemp(f"peers-{request.param}")
    proc = run_cli("profile", "--mpi", request.param, "-n", "2", "--trace", "--no-report",
                   "--out", str(base / "runs"), "--", str(app), timeout=600, cwd=base)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = sorted(p for p in (base / "runs").iterdir() if (p / "run.json").is_file())
    out: dict[int, dict[int, tuple[int, int]]] = {}
    for trace in read_run(runs[-1]):
        for events in trace.events.values():
            for e in events[events["type"] == EV_BEGIN]:
                out.setdefault(trace.rank, {})[int(e["bytes"])] = (int(e["kind"]), int(e["arg"]))
    return out


@pytest.mark.parametrize("rank", [0, 1])
def test_every_transfer_names_the_other_rank(begins, rank: int) -> None:
    got = {b: kp for b, kp in begins.get(rank, {}).items() if b in POSTED[rank]}
    assert got == {b: (kind, 1 - rank) for b, kind in POSTED[rank].items()}
