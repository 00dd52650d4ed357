"""The replay engine's what-ifs on generated programs (tests/predict_synth.py): with the
same computation, `--overlap perfect` never predicts a later end (of any rank, so never a
longer run) than the model's replay, and `--overlap none` never an earlier one, under
both progress rules; every replay completes (the generated programs cannot deadlock);
and the engine's hand-worked cases (docs/method.md, "Predicting by replay")."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.predict.engine import figures, recorded, replay, residuals
from mpi_overlap.predict.model import Costs
from mpi_overlap.predict.program import (
    COLL_BLOCK,
    RECV_BLOCK,
    RECV_DONE,
    RECV_POST,
    SEND_BLOCK,
    SEND_DONE,
    SEND_POST,
    Coll,
    Msg,
    Program,
)
from predict_synth import PATTERNS, costs, program, two_ranks
from property_examples import examples

EPS = 1e-12


def _ends(prog: Program, c: Costs, overlap: str, progress: str) -> list[float]:
    rep = replay(prog, c, residuals(prog, c), overlap, progress)
    assert rep.unresolved == []
    return [f.end_s for f in figures(prog, rep)]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), ranks=st.integers(1, 7), rounds=st.integers(1, 25),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=4, unique=True),
       progress=st.sampled_from(("calls", "async")))
def test_perfect_never_longer_none_never_shorter(seed: int, ranks: int, rounds: int,
                                                 patterns: list[str], progress: str) -> None:
    rng = random.Random(seed)
    prog = program(rng, ranks, rounds, patterns=tuple(patterns))
    c = costs(rng, prog)
    model = _ends(prog, c, "model", progress)
    perfect = _ends(prog, c, "perfect", progress)
    none = _ends(prog, c, "none", progress)
    for p, m, n in zip(perfect, model, none, strict=True):
        assert p <= m + EPS and m <= n + EPS
    assert max(perfect) <= max(model) + EPS <= max(none) + 2 * EPS


def test_eager_receive_of_data_that_arrived_holds_only_o_r() -> None:
    """Rank 1 sends 4 KiB at once (eager: o_s 1 µs, o_r 0.5 µs, T 4 µs); rank 0 computes
    5 ms, then MPI_Recv: the receive holds o_r, rank 0 waits for nothing."""
    prog = two_ranks([("MPI_Recv", [(RECV_BLOCK, 0)], 5e-3, 5e-3 + 0.5e-6)],
                     [("MPI_Send", [(SEND_BLOCK, 0)], 0.0, 1e-6)])
    prog.msgs.append(Msg(1, 0, 4096))
    c = Costs(T=[4e-6], o_s=[1e-6], o_r=[0.5e-6], eager=[True], coll=[])
    resid = [{}, {}]
    rep = replay(prog, c, resid)
    assert rep.exit[0][1] - rep.enter[0][1] == pytest.approx(0.5e-6)
    assert rep.exit[1][1] - rep.enter[1][1] == pytest.approx(1e-6)
    # the late sender: rank 1 computes 5 ms before it sends, rank 0 waits 5 ms + T
    prog = two_ranks([("MPI_Recv", [(RECV_BLOCK, 0)], 0.0, 5e-3 + 4e-6)],
                     [("MPI_Send", [(SEND_BLOCK, 0)], 5e-3, 5e-3 + 1e-6)])
    prog.msgs.append(Msg(1, 0, 4096))
    rep = replay(prog, c, resid)
    assert rep.exit[0][1] == pytest.approx(5e-3 + 4e-6)
    f = figures(prog, rep)
    assert f[0].waiting_s == pytest.approx(5e-3)
    assert figures(prog, recorded(prog))[0].waiting_s == pytest.approx(5e-3)


def test_eager_isend_holds_its_o_s() -> None:
    """An eager MPI_Isend (o_s 20 µs of 4 KiB), 1 ms of computation, then its MPI_Wait:
    the post holds o_s, as MPI_Send would, and the wait finds the send done; under
    `perfect` the post costs nothing; under `none` it holds o_s too, and the wait
    waits for the receive, 5 ms later."""
    prog = two_ranks([("MPI_Recv", [(RECV_BLOCK, 0)], 5e-3, 5e-3 + 1e-6)],
                     [("MPI_Isend", [(SEND_POST, 0)], 0.0, 20e-6),
                      ("MPI_Wait", [(SEND_DONE, 0)], 1.02e-3, 1.021e-3)])
    prog.msgs.append(Msg(1, 0, 4096))
    c = Costs(T=[30e-6], o_s=[20e-6], o_r=[1e-6], eager=[True], coll=[])
    for overlap, held in (("model", 20e-6), ("none", 20e-6), ("perfect", 0.0)):
        rep = replay(prog, c, [{}, {}], overlap)
        assert rep.exit[1][1] - rep.enter[1][1] == pytest.approx(held), overlap
        waited = rep.exit[1][2] - rep.enter[1][2]
        assert waited == pytest.approx(0.0) if overlap != "none" else waited > 3e-3


def test_rendezvous_moves_when_both_ends_are_in_the_calls_that_complete_it() -> None:
    """A rendezvous message (T 10 µs) posted with MPI_Isend at 10 µs, its MPI_Irecv at 0;
    the receiver computes until its MPI_Wait at 1 ms: with progress in calls it moves from
    there (both ends in their completing calls), with async progress from the send's
    post."""
    prog = two_ranks([("MPI_Irecv", [(RECV_POST, 0)], 0.0, 0.0),
                      ("MPI_Wait", [(RECV_DONE, 0)], 1e-3, 1e-3 + 1e-5)],
                     [("MPI_Isend", [(SEND_POST, 0)], 1e-5, 1e-5),
                      ("MPI_Wait", [(SEND_DONE, 0)], 2e-5, 1e-3 + 1e-5)])
    prog.msgs.append(Msg(1, 0, 65536))
    c = Costs(T=[10e-6], o_s=[0.0], o_r=[0.0], eager=[False], coll=[])
    resid = [{}, {}]
    calls = replay(prog, c, resid, progress="calls")
    assert calls.exit[0][2] == pytest.approx(1e-3 + 10e-6)
    assert calls.exit[1][2] == pytest.approx(1e-3 + 10e-6)
    async_ = replay(prog, c, resid, progress="async")
    assert async_.exit[0][2] == pytest.approx(1e-3)  # moved long before the wait
    assert async_.exit[1][2] == pytest.approx(1e-5 + 10e-6)
    # a receiver blocked in MPI_Recv from 0 waits for the sender's MPI_Wait at 1 ms
    prog = two_ranks([("MPI_Recv", [(RECV_BLOCK, 0)], 0.0, 1e-3 + 1e-5)],
                     [("MPI_Isend", [(SEND_POST, 0)], 0.0, 0.0),
                      ("MPI_Wait", [(SEND_DONE, 0)], 1e-3, 1e-3 + 1e-5)])
    prog.msgs.append(Msg(1, 0, 65536))
    calls = replay(prog, c, resid, progress="calls")
    assert calls.exit[0][1] == pytest.approx(1e-3 + 10e-6)
    assert replay(prog, c, resid, progress="async").exit[0][1] == pytest.approx(10e-6)
    # MPI_Isend, then MPI_Recv on both ranks (a wait on the Isend after it): each send
    # moves while its rank waits in MPI_Recv, so neither waits for the other's MPI_Wait
    prog = two_ranks([("MPI_Isend", [(SEND_POST, 0)], 0.0, 0.0),
                      ("MPI_Recv", [(RECV_BLOCK, 1)], 0.0, 1e-5),
                      ("MPI_Wait", [(SEND_DONE, 0)], 1e-5, 1e-5)],
                     [("MPI_Isend", [(SEND_POST, 1)], 0.0, 0.0),
                      ("MPI_Recv", [(RECV_BLOCK, 0)], 1e-3, 1e-3 + 1e-5),
                      ("MPI_Wait", [(SEND_DONE, 1)], 1e-3 + 1e-5, 1e-3 + 1e-5)])
    prog.msgs += [Msg(0, 1, 65536), Msg(1, 0, 65536)]
    c2 = Costs(T=[10e-6, 10e-6], o_s=[0.0, 0.0], o_r=[0.0, 0.0], eager=[False, False],
               coll=[])
    rep = replay(prog, c2, resid)
    assert rep.unresolved == []
    # rank 0 waits in MPI_Recv from 0 (it polls its Isend there); rank 1 polls at 1 ms
    assert rep.exit[0][2] == pytest.approx(1e-3 + 10e-6)
    assert rep.exit[1][2] == pytest.approx(1e-3 + 10e-6)


def test_collective_leaves_at_the_last_enter_plus_its_time() -> None:
    prog = two_ranks([("MPI_Allreduce", [(COLL_BLOCK, 0)], 0.0, 2e-3)],
                     [("MPI_Allreduce", [(COLL_BLOCK, 0)], 2e-3 - 5e-6, 2e-3)])
    prog.colls.append(Coll("allreduce", (0, 1), -1, 8))
    c = Costs(T=[], o_s=[], o_r=[], eager=[], coll=[5e-6])
    rep = replay(prog, c, [{}, {}])
    assert rep.exit[0][1] == pytest.approx(2e-3)
    assert rep.exit[1][1] == pytest.approx(2e-3)
    assert figures(prog, rep)[0].waiting_s == pytest.approx(2e-3 - 5e-6)
    assert replay(prog, c, [{}, {}], "perfect").exit[0][1] == pytest.approx(2e-3 - 5e-6)
