"""The residual (engine.residuals; docs/method.md, "Predicting by replay"): a hand-worked
blocking halo whose receive-only calls wait for eager faces in flight (the flight is
the model's T, not the residual; send-only and receive-only calls keep a median each);
on another target (the residual on another transport): a hand-worked program where
the target makes an eager send rendezvous and has a smaller per-message time, and on
generated programs that costs which change nothing give the recorded residuals bit for
bit, and that the C pass replays moved residuals as the Python pass does."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from mpi_overlap.predict.engine import replay, residuals
from mpi_overlap.predict.model import Costs
from mpi_overlap.predict.program import (
    RECV_BLOCK,
    RECV_DONE,
    RECV_POST,
    SEND_BLOCK,
    SEND_DONE,
    SEND_POST,
    Msg,
)
from predict_synth import PATTERNS, costs, program, two_ranks
from test_predict_native import c_library  # noqa: F401 (the fixture: the library built here)
from test_predict_same_replay import _bits

US = 1e-6


def test_payload_time_follows_the_end_and_transport_time_swaps_its_floor() -> None:
    """Recorded: an eager 32 KiB message (o_s 50 µs, o_r 5 µs) on a transport whose
    zero-byte time is 10 µs; target: rendezvous, 1 µs. Rank 1's MPI_Isend held 90 µs,
    40 beyond o_s: on the target that work is in the call that completes the send, its
    MPI_Wait (3 µs recorded, an eager send's completion: transport time, 3 - 9 cut to 0).
    Rank 0's MPI_Irecv held 10 µs of transport time: 10 - 9 = 1 µs. Its MPI_Wait's
    15 µs beyond o_r belong to the receive's own work, which stays there."""
    prog = two_ranks([("MPI_Irecv", [(RECV_POST, 0)], 0.0, 10 * US),
                      ("MPI_Wait", [(RECV_DONE, 0)], 1e-3, 1e-3 + 20 * US)],
                     [("MPI_Isend", [(SEND_POST, 0)], 0.0, 90 * US),
                      ("MPI_Wait", [(SEND_DONE, 0)], 200 * US, 203 * US)])
    prog.msgs.append(Msg(1, 0, 32768))
    rec = Costs(T=[60 * US], o_s=[50 * US], o_r=[5 * US], eager=[True], coll=[],
                floor=[10 * US])
    tgt = Costs(T=[6 * US], o_s=[0.0], o_r=[0.0], eager=[False], coll=[], floor=[1 * US])
    as_recorded = residuals(prog, rec)
    assert as_recorded[1]["MPI_Isend (sends)"] == pytest.approx(40 * US)
    assert as_recorded[1]["MPI_Wait (sends)"] == pytest.approx(3 * US)
    assert as_recorded[0] == pytest.approx({"MPI_Irecv (receives)": 10 * US,
                                            "MPI_Wait (receives)": 15 * US})
    moved = residuals(prog, rec, tgt)
    assert moved[1] == pytest.approx({"MPI_Isend (sends)": 0.0, "MPI_Wait (sends)": 40 * US})
    assert moved[0] == pytest.approx({"MPI_Irecv (receives)": 1 * US,
                                      "MPI_Wait (receives)": 15 * US})
    # back again: the send's work goes to its post; the Irecv gets the 9 µs back
    back = residuals(prog, tgt, rec)
    assert back[0]["MPI_Irecv (receives)"] == pytest.approx(19 * US)


def test_time_in_flight_is_not_kept_twice_and_each_kind_has_its_own() -> None:
    """A blocking halo of two ranks along one axis: each MPI_Sendrecv only sends or only
    receives (the other end is MPI_PROC_NULL). Eager 32 KiB faces, T 300 µs, o_s = o_r =
    10 µs. Rank 0's receive waited 340 µs for rank 1's post, then the face's 300 µs in
    flight, then 15 µs: its residual is those 15 µs (not 305, the flight counted again
    on top of T in the replay); rank 1's receive was entered at the send's post and took
    320 µs: 20 µs. Each kind keeps its own median (the sends' 40 and 50 µs), and the
    replay on the recorded costs gives back every recorded exit."""
    prog = two_ranks([("MPI_Sendrecv", [(SEND_BLOCK, 0)], 0.0, 50 * US),
                      ("MPI_Sendrecv", [(RECV_BLOCK, 1)], 60 * US, 715 * US)],
                     [("MPI_Sendrecv", [(RECV_BLOCK, 0)], 0.0, 320 * US),
                      ("MPI_Sendrecv", [(SEND_BLOCK, 1)], 400 * US, 460 * US)])
    prog.msgs += [Msg(0, 1, 32768), Msg(1, 0, 32768)]
    c = Costs(T=[300 * US] * 2, o_s=[10 * US] * 2, o_r=[10 * US] * 2, eager=[True] * 2,
              coll=[])
    resid = residuals(prog, c)
    assert resid[0] == pytest.approx({"MPI_Sendrecv (sends)": 40 * US,
                                      "MPI_Sendrecv (receives)": 15 * US})
    assert resid[1] == pytest.approx({"MPI_Sendrecv (receives)": 20 * US,
                                      "MPI_Sendrecv (sends)": 50 * US})
    rep = replay(prog, c, resid, engine="python")
    for r in range(2):
        assert rep.exit[r][1:3] == pytest.approx([x.exit for x in prog.calls[r][1:3]])


def _with_floors(rng: random.Random, c: Costs, nmsg: int, ncoll: int) -> Costs:
    return replace(c, floor=[rng.choice((1 * US, 10 * US)) for _ in range(nmsg)],
                   coll_floor=[rng.choice((1 * US, 10 * US)) for _ in range(ncoll)])


@pytest.mark.parametrize("seed", range(40))
def test_costs_that_change_nothing_give_the_recorded_residuals(seed: int) -> None:
    rng = random.Random(seed)
    prog = program(rng, rng.randint(1, 6), rng.randint(1, 20), patterns=PATTERNS)
    c = _with_floors(rng, costs(rng, prog), len(prog.msgs), len(prog.colls))
    same = replace(c, T=list(c.T), eager=list(c.eager), floor=list(c.floor))
    assert residuals(prog, c, same) == residuals(prog, c)


@pytest.mark.parametrize("seed", range(20))
def test_c_pass_replays_moved_residuals_as_python(c_library: Path,  # noqa: F811
                                                  seed: int) -> None:
    rng = random.Random(seed)
    prog = program(rng, rng.randint(2, 6), rng.randint(1, 20), patterns=PATTERNS)
    rec = _with_floors(rng, costs(rng, prog), len(prog.msgs), len(prog.colls))
    tgt = _with_floors(rng, costs(rng, prog), len(prog.msgs), len(prog.colls))
    resid = residuals(prog, rec, tgt)
    a = replay(prog, tgt, resid, engine="python")
    b = replay(prog, tgt, resid, engine="c")
    assert b.engine == "c"
    assert _bits(a) == _bits(b)
