"""Advice gains from replay (issue 36, item 2; src/mpi_overlap/predict/gains.py): each
advice item replayed with its change on the model it was predicted with.

- the issue's acceptance case, on a synthetic trace: rank 1 is the critical path, so
  hiding rank 0's transfer gains nothing although its per-call sum is positive, while
  hiding rank 1's end of the same message gains its transfer time;
- a chain: hiding one end lets its rank send earlier to the rank that ends last, which
  gains more than the hidden transfer itself (its waiting goes);
- the property on generated programs (tests/predict_synth.py): the replayed gain never
  exceeds the named ends' own transfer times (the per-call sum in the model's terms;
  for imbalance the computation taken off that rank) by more than the waiting removed on
  the rank that ended last;
- imbalance: the work evened out per step between whole-job collectives;
- the item's ends found by call site, and what is not replayed says why."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.predict.engine import replay, residuals
from mpi_overlap.predict.gains import critical_rank, gains, plan, run_s
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
T = 10e-6  # a rendezvous message's whole time


# call sites: an address per (rank's) call, and the profile's label of each
LABELS = [{0x10: {"a.c:10 (send)"}, 0x11: {"a.c:11 (send)"}, 0x12: {"a.c:12 (recv)"}},
          {0x20: {"b.c:20 (recv)"}, 0x21: {"b.c:21 (recv)"}, 0x22: {"b.c:22 (send)"}}]


def _item(rule: str, post: str, end: str, post_fn: str, end_fn: str,
          bound: float = 1e-3) -> dict:
    return {"rule": rule, "sites": {"post": post, "end": end}, "bound_s": bound,
            "evidence": {"post_fn": post_fn, "end_fn": end_fn}}


def _critical_path_program() -> tuple[Program, Costs]:
    """Rank 0 posts a rendezvous MPI_Isend at 0 and waits for it at 0.1 ms; rank 1 computes
    5 ms, receives with MPI_Recv, computes 5 ms more: rank 1 is the critical path."""
    prog = two_ranks([("MPI_Isend", [(SEND_POST, 0)], 0.0, 0.0, 0x10),
                      ("MPI_Wait", [(SEND_DONE, 0)], 1e-4, 5e-3 + T, 0x11)],
                     [("MPI_Recv", [(RECV_BLOCK, 0)], 5e-3, 5e-3 + T, 0x20)], (0.0, 5e-3))
    prog.msgs.append(Msg(0, 1, 65536))
    return prog, Costs(T=[T], o_s=[0.0], o_r=[0.0], eager=[False], coll=[])


def test_hiding_rank_0s_transfer_off_the_critical_path_gains_nothing() -> None:
    prog, c = _critical_path_program()
    resid = [{}, {}]
    base = replay(prog, c, resid)
    assert critical_rank(prog, base) == 1
    # the profile's advice for rank 0's send: its whole transfer is not overlapped
    send = _item("move-computation", "a.c:10 (send)", "a.c:11 (send)", "MPI_Isend",
                 "MPI_Wait", bound=T)
    recv = _item("nonblocking", "b.c:20 (recv)", "b.c:20 (recv)", "MPI_Recv", "MPI_Recv",
                 bound=T)
    rows = gains(prog, c, resid, "calls", base, [send, recv], LABELS)
    assert rows[0]["named"] == {"sends": 1, "receives": 0, "collectives": 0}
    assert rows[0]["bound_s"] > 0 and rows[0]["model_local_s"] == pytest.approx(T)
    assert rows[0]["replayed_gain_s"] == pytest.approx(0.0, abs=1e-12)
    # rank 0 does leave its MPI_Wait sooner (the change did apply), the run does not end
    changed = plan(send, prog, LABELS, c)
    assert changed is not None
    rep = replay(prog, changed.costs, resid, change=changed.change)
    assert rep.exit[0][2] == pytest.approx(1e-4)
    assert base.exit[0][2] == pytest.approx(5e-3 + T)
    # rank 1's end of the same message is on the critical path: its transfer time is gained
    assert rows[1]["named"] == {"sends": 0, "receives": 1, "collectives": 0}
    assert rows[1]["replayed_gain_s"] == pytest.approx(T)


def test_a_chain_gains_more_than_the_hidden_transfer_by_the_waiting_it_removes() -> None:
    """Rank 1 waits in MPI_Wait from 0 for a rendezvous message rank 0 posts at 0.5 ms and
    polls only at 1.5 ms; rank 1 then computes 2 ms and sends to rank 0, which waits for
    it in MPI_Recv and ends last. Hiding rank 1's receive lets it leave at rank 0's post
    (0.5 ms): rank 0 gains about 1 ms, a hundred times the hidden transfer, and loses as
    much waiting."""
    prog = two_ranks([("MPI_Isend", [(SEND_POST, 0)], 5e-4, 5e-4, 0x10),
                      ("MPI_Wait", [(SEND_DONE, 0)], 1.5e-3, 1.5e-3 + T, 0x11),
                      ("MPI_Recv", [(RECV_BLOCK, 1)], 1.5e-3 + T, 3.5e-3 + 2 * T, 0x12)],
                     [("MPI_Irecv", [(RECV_POST, 0)], 0.0, 0.0, 0x20),
                      ("MPI_Wait", [(RECV_DONE, 0)], 0.0, 1.5e-3 + T, 0x21),
                      ("MPI_Send", [(SEND_BLOCK, 1)], 3.5e-3 + T, 3.5e-3 + T, 0x22)],
                     (1e-5, 0.0))
    prog.msgs += [Msg(0, 1, 65536), Msg(1, 0, 8)]
    c = Costs(T=[T, 1e-6], o_s=[0.0, 0.0], o_r=[0.0, 0.0], eager=[False, True], coll=[])
    resid = [{}, {}]
    base = replay(prog, c, resid)
    assert critical_rank(prog, base) == 0
    item = _item("move-computation", "b.c:20 (recv)", "b.c:21 (recv)", "MPI_Irecv",
                 "MPI_Wait")
    (row,) = gains(prog, c, resid, "calls", base, [item], LABELS)
    assert row["replayed_gain_s"] == pytest.approx(1e-3 + T)
    assert row["replayed_gain_s"] > 50 * row["model_local_s"]
    assert row["waiting_removed_s"] == pytest.approx(1e-3 + T)
    assert row["replayed_gain_s"] <= row["model_local_s"] + row["waiting_removed_s"] + EPS


def _with_sites(rng: random.Random, prog: Program) -> list[dict[int, set[str]]]:
    """Gives every call one of a few call sites per function (so that an item names some
    of a function's calls, not all), and the labels of them."""
    labels: list[dict[int, set[str]]] = []
    for cs in prog.calls:
        mine: dict[int, set[str]] = {}
        for c in cs:
            c.site = (hash(c.fn) & 0xFFFF) * 8 + rng.randrange(3) + 1
            mine[c.site] = {f"s{c.site:x}"}
        labels.append(mine)
    return labels


def _random_item(rng: random.Random, prog: Program, labels) -> dict | None:
    """An item of a pair rule naming the sites of a random message end or collective."""
    ends = []
    for r, cs in enumerate(prog.calls):
        posts: dict[tuple[int, int], int] = {}
        for i, c in enumerate(cs):
            for op, k in c.ops:
                if op in (SEND_POST, RECV_POST):
                    posts[(op & 1, k)] = i
                elif op in (SEND_DONE, RECV_DONE) and (op & 1, k) in posts:
                    ends.append((r, posts[(op & 1, k)], i))
                elif op in (SEND_BLOCK, RECV_BLOCK, COLL_BLOCK):
                    ends.append((r, i, i))
    if not ends:
        return None
    r, i, j = rng.choice(ends)
    a, b = prog.calls[r][i], prog.calls[r][j]
    rule = rng.choice(("progress", "move-computation", "nonblocking"))
    return _item(rule, next(iter(labels[r][a.site])), next(iter(labels[r][b.site])),
                 a.fn, b.fn)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), ranks=st.integers(1, 6), rounds=st.integers(1, 20),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=4, unique=True),
       progress=st.sampled_from(("calls", "async")))
def test_gain_never_exceeds_the_local_sum_by_more_than_the_waiting_removed(
        seed: int, ranks: int, rounds: int, patterns: list[str], progress: str) -> None:
    rng = random.Random(seed)
    prog = program(rng, ranks, rounds, patterns=tuple(patterns))
    labels = _with_sites(rng, prog)
    c = costs(rng, prog)
    resid = residuals(prog, c)
    base = replay(prog, c, resid, "model", progress)
    items = [x for x in (_random_item(rng, prog, labels) for _ in range(3)) if x]
    items.append({"rule": "imbalance", "sites": {}, "bound_s": 1e-3, "evidence": {}})
    for row in gains(prog, c, resid, progress, base, items, labels):
        if row["rule"] == "imbalance" and row["replayed_gain_s"] is None:
            continue  # no rank computes
        assert row["replayed_gain_s"] is not None, row
        assert row["rule"] == "imbalance" or sum(row["named"].values()) > 0
        assert (row["replayed_gain_s"]
                <= row["model_local_s"] + row["waiting_removed_s"] + 1e-12), row


def test_imbalance_evens_the_work_out_per_step() -> None:
    """Two steps, each ended by an MPI_Allreduce: rank 0 computes 3 ms then 1 ms, rank 1
    1 ms then 3 ms. Evened out per step both compute 2 ms in each: the run gains 2 ms (over
    the whole run both ranks already compute 4 ms: no scaling would see it)."""
    ops = []
    for r, (w1, w2) in enumerate(((3e-3, 1e-3), (1e-3, 3e-3))):
        ops.append([("MPI_Allreduce", [(COLL_BLOCK, 0)], w1, 3e-3, 0x30 + r),
                    ("MPI_Allreduce", [(COLL_BLOCK, 1)], 3e-3 + w2, 6e-3, 0x30 + r)])
    prog = two_ranks(*ops, tails=(0.0, 0.0))
    prog.colls += [Coll("allreduce", (0, 1), -1, 8), Coll("allreduce", (0, 1), -1, 8)]
    c = Costs(T=[], o_s=[], o_r=[], eager=[], coll=[0.0, 0.0])
    resid = [{}, {}]
    base = replay(prog, c, resid)
    assert run_s(prog, base) == pytest.approx(6e-3)
    item = {"rule": "imbalance", "sites": {"wait": None}, "bound_s": 1e-3, "evidence": {}}
    (row,) = gains(prog, c, resid, "calls", base, [item], [{}, {}])
    assert row["applied"] == "computation balanced"
    assert row["replayed_gain_s"] == pytest.approx(2e-3)
    # the critical rank's computation is unchanged in all (one step shorter, one
    # longer): the gain is waiting removed
    assert row["model_local_s"] == pytest.approx(0.0, abs=1e-12)
    assert row["waiting_removed_s"] == pytest.approx(2e-3)


def test_items_that_name_no_traced_call_say_so() -> None:
    prog, c = _critical_path_program()
    base = replay(prog, c, [{}, {}])
    items = [_item("progress", "x.c:1 (f)", "x.c:2 (f)", "MPI_Irecv", "MPI_Wait"),
             {"rule": "something-new", "sites": {}, "bound_s": 1e-3, "evidence": {}}]
    rows = gains(prog, c, [{}, {}], "calls", base, items, LABELS)
    assert [r["replayed_gain_s"] for r in rows] == [None, None]
    assert "none of the traced calls" in rows[0]["note"]
    assert "does not express" in rows[1]["note"]
    # the function must match too: the send's sites with another function name nothing
    wrong = _item("move-computation", "a.c:10 (send)", "a.c:11 (send)", "MPI_Irecv",
                  "MPI_Wait")
    assert gains(prog, c, [{}, {}], "calls", base, [wrong], LABELS)[0]["replayed_gain_s"] \
        is None


def test_eager_limit_sends_the_bin_eagerly() -> None:
    """Rank 1's MPI_Recv is late: a rendezvous MPI_Send of rank 0 waits for it (late
    receiver); sent eagerly it returns at once and rank 0, which ends last, gains the
    wait."""
    prog = two_ranks([("MPI_Send", [(SEND_BLOCK, 0)], 0.0, 2e-3 + T, 0x10)],
                     [("MPI_Recv", [(RECV_BLOCK, 0)], 2e-3, 2e-3 + T, 0x20)], (3e-3, 0.0))
    prog.msgs.append(Msg(0, 1, 20000))
    c = Costs(T=[T], o_s=[0.0], o_r=[0.0], eager=[False], coll=[])
    base = replay(prog, c, [{}, {}])
    item = {"rule": "eager-limit", "sites": {"bin": "16 KiB–32 KiB"}, "bound_s": 2e-3,
            "evidence": {"bin_lo": 16384, "bin_hi": 32768}}
    (row,) = gains(prog, c, [{}, {}], "calls", base, [item], LABELS)
    assert row["named"]["sends"] == 1
    assert row["replayed_gain_s"] == pytest.approx(2e-3 + T)
    other = {**item, "evidence": {"bin_lo": 32768, "bin_hi": 65536}}
    assert gains(prog, c, [{}, {}], "calls", base, [other], LABELS)[0][
        "replayed_gain_s"] == pytest.approx(0.0, abs=1e-12)
