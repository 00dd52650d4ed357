"""The residual (engine.residuals; docs/method.md, "Predicting by replay"): a hand-worked
blocking halo whose receive-only calls wait for eager faces in flight (the flight is
the model's T, not the residual; send-only and receive-only calls keep a mean each);
on another target (the residual on another transport): a hand-worked program where
the target makes an eager send rendezvous and has a smaller per-message time, one whose
receives took longer than the table's T on a link (the time in flight the table does
not price, engine.on_target), and on generated programs that costs which change nothing
give the recorded residuals bit for bit, and that the C pass replays moved residuals
and flight as the Python pass does; a probed message's send-end work delays its data
(engine.departures), so a chain of blocking exchanges waits for all of it."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from mpi_overlap.predict.engine import departures, on_target, replay, residuals, with_flight
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


def _eager_face():
    """Rank 1 sends a 32 KiB message to rank 0: MPI_Isend holding 90 µs and its MPI_Wait
    3 µs; rank 0's MPI_Irecv 10 µs and its MPI_Wait 20 µs, entered long after."""
    prog = two_ranks([("MPI_Irecv", [(RECV_POST, 0)], 0.0, 10 * US),
                      ("MPI_Wait", [(RECV_DONE, 0)], 1e-3, 1e-3 + 20 * US)],
                     [("MPI_Isend", [(SEND_POST, 0)], 0.0, 90 * US),
                      ("MPI_Wait", [(SEND_DONE, 0)], 200 * US, 203 * US)])
    prog.msgs.append(Msg(1, 0, 32768))
    return prog


def test_payload_time_follows_the_end_and_transport_time_swaps_its_floor() -> None:
    """Recorded: an eager 32 KiB message (o_s 50 µs, o_r 5 µs) on a transport whose
    zero-byte time is 10 µs; target: rendezvous, 1 µs. Rank 1's MPI_Isend held 90 µs,
    40 beyond o_s: on the target that work is in the call that completes the send, its
    MPI_Wait (3 µs recorded, an eager send's completion: transport time, 3 - 9 cut to 0).
    Rank 0's MPI_Irecv held 10 µs of transport time: 10 - 9 = 1 µs. Its MPI_Wait's
    15 µs beyond o_r belong to the receive's own work, which stays there."""
    prog = _eager_face()
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
    320 µs: 20 µs. Each kind keeps its own mean (the sends' 40 and 50 µs), and the
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


def test_a_rendezvous_wait_for_the_partners_next_call_is_not_kept_twice() -> None:
    """A rendezvous face (T 50 µs) from rank 0, which posts it at 0 and computes until its
    MPI_Wait at 300 µs; rank 1 posted its receive before and waits from 20 µs, until the
    face has moved (350 µs) and 5 µs more. The replay moves a rendezvous message once
    both ends have polled it (rank 0 first does so in its MPI_Wait), so rank 1's wait
    for it is the model's: its residual is the 5 µs (330 µs before, kept and then waited
    again), rank 0's the 2 µs beyond T, and the replay on the recorded costs gives back
    every recorded exit. A send whose receiver polls late is the mirror case."""
    prog = two_ranks([("MPI_Isend", [(SEND_POST, 0)], 0.0, 1 * US),
                      ("MPI_Wait", [(SEND_DONE, 0)], 300 * US, 352 * US)],
                     [("MPI_Irecv", [(RECV_POST, 0)], 0.0, 1 * US),
                      ("MPI_Wait", [(RECV_DONE, 0)], 20 * US, 355 * US)])
    prog.msgs.append(Msg(0, 1, 32768))
    c = Costs(T=[50 * US], o_s=[0.0], o_r=[0.0], eager=[False], coll=[])
    resid = residuals(prog, c)
    assert resid[1]["MPI_Wait (receives)"] == pytest.approx(5 * US)
    assert resid[0]["MPI_Wait (sends)"] == pytest.approx(2 * US)
    rep = replay(prog, c, resid, engine="python")
    for r in range(2):
        assert rep.exit[r][1:3] == pytest.approx([x.exit for x in prog.calls[r][1:3]])
    # the receiver late instead: its MPI_Wait at 300 µs is where the face moves, and the
    # sender's wait from 20 µs until then is the model's too
    late = two_ranks([("MPI_Isend", [(SEND_POST, 0)], 0.0, 1 * US),
                      ("MPI_Wait", [(SEND_DONE, 0)], 20 * US, 354 * US)],
                     [("MPI_Irecv", [(RECV_POST, 0)], 0.0, 1 * US),
                      ("MPI_Wait", [(RECV_DONE, 0)], 300 * US, 351 * US)])
    late.msgs.append(Msg(0, 1, 32768))
    resid = residuals(late, c)
    assert resid[0]["MPI_Wait (sends)"] == pytest.approx(4 * US)
    assert resid[1]["MPI_Wait (receives)"] == pytest.approx(1 * US)


def _late_faces(hosts: list[str]) -> tuple:
    """Rank 1 sends five eager 32 KiB faces (MPI_Send, 10 µs = o_s) to rank 0, which
    posted each receive long before and enters its MPI_Wait 300 µs after the send, when
    the model has the face in (T 100 µs, o_r 10 µs): each wait is o_r plus 20, 220, 20,
    220, 220 µs unexplained."""
    extra = [20, 220, 20, 220, 220]
    r0 = []
    r1 = []
    for k, x in enumerate(extra):
        t = (k + 1) * 1e-3
        r0 += [("MPI_Irecv", [(RECV_POST, k)], t - 500 * US, t - 499 * US),
               ("MPI_Wait", [(RECV_DONE, k)], t + 300 * US, t + (310 + x) * US)]
        r1 += [("MPI_Send", [(SEND_BLOCK, k)], t, t + 10 * US)]
    prog = two_ranks(r0, r1)
    prog.msgs += [Msg(1, 0, 32768) for _ in extra]
    prog.hosts = hosts
    rec = Costs(T=[100 * US] * 5, o_s=[10 * US] * 5, o_r=[10 * US] * 5, eager=[True] * 5,
                coll=[])
    return prog, rec


def test_time_beyond_the_tables_flight_scales_with_the_targets_t() -> None:
    """The waits' least (FLIGHT_QUANTILE, 0.1, of 20, 20, 220, 220, 220: 20 µs) is the
    call's own; the rest (0, 200, 0, 200, 200 µs) is the face's time beyond the table's
    T, 0, 2, 0, 2, 2 times the recorded T of 100 µs: median 2. On a target with T 40 µs
    each face gets 2 x 40 = 80 µs more in flight and the wait keeps 20 µs. On the
    recorded costs, on a slower target (T 200 µs) and between ranks on one host nothing
    moves: the mean of the waits, 140 µs, stays in the call."""
    prog, rec = _late_faces(["n0", "n1"])
    as_recorded = residuals(prog, rec)
    assert as_recorded[0]["MPI_Wait (receives)"] == pytest.approx(140 * US)
    assert on_target(prog, rec, rec) == (as_recorded, [0.0] * 5)
    faster = replace(rec, T=[40 * US] * 5)
    resid, extra = on_target(prog, rec, faster)
    assert resid[0]["MPI_Wait (receives)"] == pytest.approx(20 * US)
    assert resid[0]["MPI_Irecv (receives)"] == pytest.approx(1 * US)
    assert resid[1] == as_recorded[1]
    assert extra == pytest.approx([80 * US] * 5)
    flown = with_flight(faster, extra)
    assert [t / US for t in flown.T] == pytest.approx([120.0] * 5)
    # the replay: each face is in rank 0's MPI 120 - 10 µs after its send; the wait
    # returns o_r and its 20 µs after that or after its enter, the later
    rep = replay(prog, flown, resid, engine="python")
    assert [rep.exit[0][2 * k + 2] for k in range(5)] == pytest.approx(
        [max(rep.enter[0][2 * k + 2], rep.send_post[k] + 110 * US) + 30 * US
         for k in range(5)])
    slower = replace(rec, T=[200 * US] * 5)
    assert on_target(prog, rec, slower)[1] == [0.0] * 5
    assert on_target(prog, rec, slower)[0][0]["MPI_Wait (receives)"] == pytest.approx(140 * US)
    one_host, _ = _late_faces(["n0", "n0"])
    assert on_target(one_host, rec, faster)[1] == [0.0] * 5


def test_a_target_that_packs_crossed_messages_into_a_node_keeps_the_typical_call() -> None:
    """The late faces' waits (20, 220, 20, 220, 220 µs beyond o_r) keep their mean, 140 µs,
    where the transport stays; on a target that puts both ranks on one node the network's
    tail goes with it, and the call keeps the median, 220 µs (engine.on_target)."""
    prog, rec = _late_faces(["n0", "n1"])
    rec = replace(rec, lane=[0] * 5, occupy=[0.0] * 5)
    assert residuals(prog, rec)[0]["MPI_Wait (receives)"] == pytest.approx(140 * US)
    assert residuals(prog, rec, rec)[0]["MPI_Wait (receives)"] == pytest.approx(140 * US)
    packed = replace(rec, lane=[-1] * 5, occupy=[0.0] * 5)
    assert residuals(prog, rec, packed)[0]["MPI_Wait (receives)"] == pytest.approx(220 * US)


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
    prog.hosts = [f"n{r % 2}" for r in range(prog.ranks)]  # the flight moves too
    resid, extra = on_target(prog, rec, tgt)
    tgt = with_flight(tgt, extra)
    a = replay(prog, tgt, resid, engine="python")
    b = replay(prog, tgt, resid, engine="c")
    assert b.engine == "c"
    assert _bits(a) == _bits(b)


def test_payload_work_of_a_message_packed_into_a_node_is_a_range() -> None:
    """The first test's message, recorded between two nodes (lane 0) and replayed within
    one (lane -1, as --placement 2 makes it): carried whole (carried=1, the prediction)
    the send's 40 µs of own work goes to its MPI_Wait as before; left out (carried=0,
    the range's other end) it goes nowhere, and the receive's own 15 µs in its MPI_Wait
    go too. The transport's floor swap of the other calls is the same at both ends. A
    message that stays between nodes keeps its work at either end."""
    prog = _eager_face()
    rec = Costs(T=[60 * US], o_s=[50 * US], o_r=[5 * US], eager=[True], coll=[],
                floor=[10 * US], lane=[0], occupy=[0.0])
    packed = Costs(T=[6 * US], o_s=[0.0], o_r=[0.0], eager=[False], coll=[], floor=[1 * US],
                   lane=[-1], occupy=[0.0])
    kept = on_target(prog, rec, packed)
    assert kept == on_target(prog, rec, packed, carried=1.0)
    assert kept[0][1] == pytest.approx({"MPI_Isend (sends)": 0.0, "MPI_Wait (sends)": 40 * US})
    assert kept[0][0] == pytest.approx({"MPI_Irecv (receives)": 1 * US,
                                        "MPI_Wait (receives)": 15 * US})
    left = on_target(prog, rec, packed, carried=0.0)[0]
    assert left[1] == pytest.approx({"MPI_Isend (sends)": 0.0, "MPI_Wait (sends)": 0.0})
    assert left[0] == pytest.approx({"MPI_Irecv (receives)": 1 * US,
                                     "MPI_Wait (receives)": 0.0})
    apart = replace(packed, lane=[0])
    assert on_target(prog, rec, apart, carried=0.0) == on_target(prog, rec, apart)


@pytest.mark.parametrize("seed", range(60))
def test_leaving_the_payload_work_out_never_ends_a_rank_later(seed: int) -> None:
    """On generated programs recorded over two nodes (rank r on node r % 2) and packed
    into one: the replay without the carried payload work (carried=0) ends no rank later
    than the prediction (every cost it drops is one a call waits out in the max-plus
    pass), so the range's ends are ordered."""
    rng = random.Random(seed)
    prog = program(rng, rng.randint(2, 6), rng.randint(1, 20), patterns=PATTERNS)
    prog.hosts = [f"n{r % 2}" for r in range(prog.ranks)]
    rec = _with_floors(rng, costs(rng, prog), len(prog.msgs), len(prog.colls))
    rec = replace(rec, lane=[0 if (m.sender - m.receiver) % 2 else -1 for m in prog.msgs],
                  occupy=[0.0] * len(prog.msgs))
    tgt = _with_floors(rng, costs(rng, prog), len(prog.msgs), len(prog.colls))
    tgt = replace(tgt, lane=[-1] * len(prog.msgs), occupy=[0.0] * len(prog.msgs))
    ends = []
    for carried in (1.0, 0.0):
        resid, extra = on_target(prog, rec, tgt, carried=carried)
        rep = replay(prog, with_flight(tgt, extra), resid, engine="python")
        ends.append([max(x) for x in rep.exit])
    assert all(low <= whole + 1e-15 for low, whole in zip(ends[1], ends[0], strict=True))


def _blocking_chain():
    """mo_halo blocking on two ranks: rank 0 sends a face (MPI_Sendrecv, its receive from
    MPI_PROC_NULL), rank 1 receives it and sends one back the same way; recorded across
    two nodes (lane 0)."""
    prog = two_ranks([("MPI_Sendrecv", [(SEND_BLOCK, 0)], 0.0, 20 * US),
                      ("MPI_Sendrecv", [(RECV_BLOCK, 1)], 20 * US, 300 * US)],
                     [("MPI_Sendrecv", [(RECV_BLOCK, 0)], 0.0, 150 * US),
                      ("MPI_Sendrecv", [(SEND_BLOCK, 1)], 150 * US, 170 * US)])
    prog.hosts = ["n0", "n1"]
    prog.msgs += [Msg(0, 1, 32768), Msg(1, 0, 32768)]
    rec = Costs(T=[100 * US] * 2, o_s=[10 * US] * 2, o_r=[5 * US] * 2, eager=[True] * 2,
                coll=[], floor=[1 * US] * 2, lane=[0] * 2, occupy=[0.0] * 2)
    return prog, rec


@pytest.mark.parametrize("eager", [True, False])
def test_a_probed_sends_work_delays_its_data_so_a_blocking_chain_waits_for_it(
        eager: bool) -> None:
    """Packed into one node with each end's layout work probed at W: the face leaves W
    later (its packing), so rank 0, which waits for rank 1's face that waited for its
    own, ends 2 W later than where the send's work sat only in the sender's call after
    its data had left (receive ends' W on the chain already). A rendezvous send's W is
    its move's: in T, and in no call besides (on_target leaves it out)."""
    prog, rec = _blocking_chain()
    w = 30 * US
    tgt = Costs(T=[8 * US] * 2, o_s=[2 * US if eager else 0.0] * 2,
                o_r=[1 * US if eager else 0.0] * 2, eager=[eager] * 2, coll=[],
                floor=[0.5 * US] * 2, lane=[-1] * 2, occupy=[0.0] * 2)
    probed = {0: w, 1: w}
    resid, extra = on_target(prog, rec, tgt, carried=0.0, probed=probed)
    later = departures(prog, probed)
    assert later == [w, w]
    ends = []
    for moved in ([0.0, 0.0], later):
        c = with_flight(tgt, [x + d for x, d in zip(extra, moved, strict=True)])
        ends.append([x[2] for x in replay(prog, c, resid, engine="python").exit])
    assert ends[1][0] - ends[0][0] == pytest.approx(2 * w)
    sends = resid[0]["MPI_Sendrecv (sends)"], resid[1]["MPI_Sendrecv (sends)"]
    if eager:  # the sender's call holds its work as well: it packs
        assert all(x >= w for x in sends)
    else:
        assert all(x < w for x in sends)
