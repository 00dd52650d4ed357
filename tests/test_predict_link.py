"""A link direction carries one message's G s at a time (model.link_waits, the replay
pass's book; docs/method.md, "Predicting by replay", "A busy link"): two messages posted
together on one direction, the second arrives G s after the first started; on two
directions, two pairs of hosts or one host nothing waits; where no two messages overlap
on a direction the replay is the one without the rule; the wait at the recorded times is
taken out of the recorded calls' residual, so that an own-table replay does not count it
twice; and perfect <= model <= none with the rule on generated programs."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.calibration.xfer_parts import EAGER, Part, SizeParts
from mpi_overlap.calibration.xfer_stream import Stream
from mpi_overlap.calibration.xfer_table import XferTable
from mpi_overlap.predict.engine import figures, replay, residuals
from mpi_overlap.predict.model import Costs, Link, Target, costs, link_waits
from mpi_overlap.predict.program import (
    RECV_DONE,
    RECV_POST,
    SEND_DONE,
    SEND_POST,
    Call,
    Msg,
    Program,
)
from predict_synth import PATTERNS, program, shared_link
from predict_synth import costs as random_costs
from property_examples import examples
from test_predict_same_replay import _bits

EPS = 1e-12
SIZE = 4096


def _table() -> XferTable:
    """4 KiB eager in 100 µs between nodes (10 µs within one), 8 KiB 80 µs more: G s of
    4 KiB is 80 µs."""
    def parts(n: int) -> SizeParts:
        return SizeParts(n, EAGER, Part(1e-6, 1e-6, 1e-6), Part(1e-6, 1e-6, 1e-6),
                         Part(1e-6, 1e-6, 1e-6))

    return XferTable(
        machine_fp="0" * 16, machine_key="m", toolchain_fp="0" * 16, toolchain_key="t",
        toolchain_name="mpich", ranks=2, nodes=2, created="2026-12-01T00:00:00Z",
        points={"inter": [(0, 10e-6), (SIZE, 100e-6), (2 * SIZE, 180e-6)],
                "intra": [(0, 1e-6), (SIZE, 10e-6), (2 * SIZE, 18e-6)]},
        parts={(cls, n): parts(n) for cls in ("inter", "intra") for n in (0, SIZE)},
        eager_limits={"inter": SIZE, "intra": SIZE})


def _exchange(hosts: list[str], pairs: list[tuple[int, int]]) -> Program:
    """Each (sender, receiver) pair's message of 4 KiB posted at 0 (a sender's MPI_Isend
    calls one after the other, 1 µs each), the receivers in MPI_Irecv then MPI_Waitall
    from 0, the senders in MPI_Waitall after their posts."""
    prog = Program(calls=[], hosts=hosts)
    prog.msgs = [Msg(s, r, SIZE) for s, r in pairs]
    for rank in range(len(hosts)):
        cs = [Call("MPI_Init", 0.0, 0.0)]
        t = 0.0
        for op, side in ((RECV_POST, 1), (SEND_POST, 0)):
            for k, pair in enumerate(pairs):
                if pair[side] == rank:
                    cs.append(Call("MPI_Irecv" if side else "MPI_Isend", t, t + 1e-6, [(op, k)]))
                    t += 1e-6
        done = [(SEND_DONE if s == rank else RECV_DONE, k)
                for k, (s, r) in enumerate(pairs) if rank in (s, r)]
        cs.append(Call("MPI_Waitall", t, t + 1e-6, done))
        cs.append(Call("MPI_Finalize", 1e-3, 1e-3))
        prog.calls.append(cs)
    return prog


def _waitall_exits(prog: Program, c: Costs) -> list[float]:
    rep = replay(prog, c, [{} for _ in prog.calls], engine="python")
    assert rep.unresolved == []
    return [rep.exit[r][-2] for r in range(prog.ranks)]


def test_the_second_message_on_one_direction_waits_for_the_first() -> None:
    """Rank 0 posts two 4 KiB faces to rank 1 on another host, 1 µs apart: the first
    arrives at T (100 µs), the second starts when the first's G s (80 µs) is over and
    arrives T after that, 180 µs, where without the rule it would arrive at 1 µs + T."""
    prog = _exchange(["a", "b"], [(0, 1), (0, 1)])
    c = costs(prog, Target(_table()))
    assert c.lane == [0, 0] and c.occupy == pytest.approx([80e-6, 80e-6])
    whole = c.T
    assert whole == pytest.approx([100e-6, 100e-6])
    got = _waitall_exits(prog, c)[1]
    assert got == pytest.approx(80e-6 + 100e-6)
    assert _waitall_exits(prog, replace(c, lane=[], occupy=[]))[1] == pytest.approx(101e-6)
    # the same faces 80 µs apart or more: nothing waits
    assert link_waits(c, [0.0, 80e-6]) == [0.0, 0.0]
    assert link_waits(c, [0.0, 1e-6]) == pytest.approx([0.0, 79e-6])
    # the replay says each message's wait: the second posted 1 µs after the first
    rep = replay(prog, c, [{} for _ in prog.calls], engine="python")
    assert rep.link_wait == pytest.approx([0.0, 79e-6])
    assert replay(prog, replace(c, lane=[], occupy=[]), [{} for _ in prog.calls],
                  engine="python").link_wait == [0.0, 0.0]


def test_g_is_the_stream_s_time_per_byte_where_the_table_has_one() -> None:
    """The table's stream: 64 KiB messages kept back to back, 1.31 ms each (about the
    wire at 400 Mbit/s): G = 1.31e-3 / 65536 = 19.99 ns/B where the table's slope between
    4 and 8 KiB is 19.53, so a 4 KiB face holds its direction 81.875 µs, not 80; the
    stream of the other class leaves this one's slope; a --link adds its 8 / rate."""
    stream = Stream(nbytes=65536, window=32, per_message=Part(1.31e-3, 1.3e-3, 1.32e-3),
                    undisturbed=5, samples=5)
    prog = _exchange(["a", "b"], [(0, 1)])
    table = replace(_table(), streams={"inter": stream})
    assert costs(prog, Target(table)).occupy == pytest.approx([1.31e-3 / 65536 * SIZE])
    assert costs(prog, Target(table)).occupy[0] == pytest.approx(81.875e-6)
    other = replace(_table(), streams={"intra": stream})
    assert costs(prog, Target(other)).occupy == pytest.approx([80e-6])
    link = Link(rate_bits_per_s=1e9, latency_s=0.0)  # 8 ns/B: 32.768 µs for 4 KiB more
    assert costs(prog, Target(table, link)).occupy == pytest.approx([81.875e-6 + 32.768e-6])
    # the stream changes G only: T, o_s and o_r are the ping-pong's
    assert costs(prog, Target(table)).T == costs(prog, Target(_table())).T


@pytest.mark.parametrize(("hosts", "pairs"), [
    (["a", "b"], [(0, 1), (1, 0)]),  # two directions of one pair of hosts
    (["a", "b", "c", "d"], [(0, 1), (2, 3)]),  # two pairs of hosts
    (["a", "a"], [(0, 1), (0, 1)]),  # one host
])
def test_no_wait_on_two_directions_two_pairs_or_one_host(hosts: list[str],
                                                         pairs: list[tuple[int, int]]) -> None:
    prog = _exchange(hosts, pairs)
    c = costs(prog, Target(_table()))
    assert _waitall_exits(prog, c) == _waitall_exits(prog, replace(c, lane=[], occupy=[]))
    assert replay(prog, c, [{} for _ in prog.calls], engine="python").link_wait == [0.0, 0.0]


def test_lanes_follow_the_placement() -> None:
    """--placement 2 puts ranks 0-1 and 2-3 on one node each: 0->1 stays on its node,
    0->2 and 1->3 share the direction node0->node1, 2->0 is the other direction; one
    node (--placement 4) shares nothing."""
    prog = _exchange([""] * 4, [(0, 1), (0, 2), (1, 3), (2, 0)])
    c = costs(prog, Target(_table(), placement=2))
    assert c.lane == [-1, 0, 0, 1]
    assert c.occupy == pytest.approx([0.0, 80e-6, 80e-6, 80e-6])
    assert costs(prog, Target(_table(), placement=4)).lane == [-1] * 4


def test_the_recorded_wait_is_taken_out_of_the_residual() -> None:
    """The recorded run of the first case, as the rule says it went (rank 1's MPI_Waitall
    returned at 180 µs): with the rule, its residual is 0 and the replay gives 180 µs; a
    residual measured without the rule holds the 79 µs the link took, and the replay with
    the rule would count them twice."""
    prog = _exchange(["a", "b"], [(0, 1), (0, 1)])
    prog.calls[1][-2].exit = 180e-6
    c = costs(prog, Target(_table()))
    resid = residuals(prog, c)
    assert resid[1]["MPI_Waitall (receives)"] == pytest.approx(0.0, abs=1e-12)
    rep = replay(prog, c, resid, engine="python")
    assert rep.exit[1][-2] == pytest.approx(180e-6)
    bare = replace(c, lane=[], occupy=[])
    held = residuals(prog, bare)[1]["MPI_Waitall (receives)"]
    assert held == pytest.approx(79e-6)
    assert replay(prog, bare, residuals(prog, bare), engine="python").exit[1][-2] == (
        pytest.approx(180e-6))


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), ranks=st.integers(2, 7), rounds=st.integers(1, 25),
       hosts=st.integers(1, 3),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=4, unique=True),
       progress=st.sampled_from(("calls", "async")))
def test_perfect_never_longer_none_never_shorter_on_a_shared_link(
        seed: int, ranks: int, rounds: int, hosts: int, patterns: list[str],
        progress: str) -> None:
    rng = random.Random(seed)
    prog = program(rng, ranks, rounds, patterns=tuple(patterns))
    c = shared_link(rng, prog, random_costs(rng, prog), hosts)
    resid = residuals(prog, c)
    ends = {}
    for overlap in ("perfect", "model", "none"):
        rep = replay(prog, c, resid, overlap, progress, engine="python")
        assert rep.unresolved == []
        ends[overlap] = [f.end_s for f in figures(prog, rep)]
    for p, m, n in zip(ends["perfect"], ends["model"], ends["none"], strict=True):
        assert p <= m + EPS and m <= n + EPS


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), ranks=st.integers(1, 7), rounds=st.integers(1, 25),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=4, unique=True))
def test_no_time_on_a_direction_is_the_replay_without_the_rule(
        seed: int, ranks: int, rounds: int, patterns: list[str]) -> None:
    """Every pair of ranks its own direction, each message holding it 0 s: no message
    waits, and every overlap and progress rule gives the replay without lanes bit for
    bit."""
    rng = random.Random(seed)
    prog = program(rng, ranks, rounds, patterns=tuple(patterns))
    c = random_costs(rng, prog)
    lanes: dict[tuple[int, int], int] = {}
    free = replace(c, lane=[lanes.setdefault((m.sender, m.receiver), len(lanes))
                            for m in prog.msgs], occupy=[0.0] * len(prog.msgs))
    resid = residuals(prog, c)
    for overlap in ("perfect", "model", "none"):
        for progress in ("calls", "async"):
            a = replay(prog, c, resid, overlap, progress, engine="python")
            b = replay(prog, free, resid, overlap, progress, engine="python")
            assert _bits(a) == _bits(b), f"{overlap}/{progress}"
