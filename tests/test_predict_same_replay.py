"""The replay engine's speed work changed no result: on generated programs
(tests/predict_synth.py), under every overlap and progress rule, with and without changes
that hide, poll from the post or rescale the computation (engine.Change, as advice gains
apply them), the engine gives bit for bit the replay of the engine before it
(tests/predict_engine_ref.py): every call's enter and exit, every post, every
collective's synchronisation times, the event count and the ranks left waiting."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.predict.engine import NO_CHANGE, Change, Replay, replay, residuals
from mpi_overlap.predict.program import SEND_BLOCK, Program
from predict_engine_ref import replay as replay_before
from predict_synth import PATTERNS, costs, program

OVERLAPS = ("model", "none", "perfect")
PROGRESS = ("calls", "async")


def _bits(rep: Replay) -> str:
    """Everything a replay gives, as text that is equal exactly when every float is (repr
    is exact and spells NaN one way)."""
    return repr((rep.enter, rep.exit, rep.send_post, rep.recv_post,
                 [sorted(d.items()) for d in rep.coll_sync], rep.events, rep.unresolved))


def _change(rng: random.Random, prog: Program, kind: str) -> Change:
    msgs = range(len(prog.msgs))

    def some() -> frozenset[int]:
        return frozenset(k for k in msgs if rng.random() < 0.3)

    if kind == "hidden":
        return Change(hidden=(some(), some()))
    if kind == "polled":
        return Change(polled=(some(), some()))
    if kind == "compute":
        return Change(compute=[[rng.uniform(0.0, 2.0) for _ in cs] for cs in prog.calls])
    return NO_CHANGE


def _same(prog: Program, seed: int, kinds: tuple[str, ...]) -> None:
    rng = random.Random(seed)
    c = costs(rng, prog)
    resid = residuals(prog, c)
    for kind in kinds:
        change = _change(rng, prog, kind)
        for overlap in OVERLAPS:  # gains.py replays changes under the model only
            for progress in PROGRESS:
                got = replay(prog, c, resid, overlap, progress, change)
                want = replay_before(prog, c, resid, overlap, progress, change)
                assert _bits(got) == _bits(want), (kind, overlap, progress)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), ranks=st.integers(1, 9), rounds=st.integers(1, 30),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=5, unique=True))
def test_same_replay_as_before(seed: int, ranks: int, rounds: int,
                               patterns: list[str]) -> None:
    prog = program(random.Random(seed), ranks, rounds, patterns=tuple(patterns))
    _same(prog, seed, ("none", "hidden", "polled", "compute"))


def test_same_replay_as_before_when_a_rank_is_left_waiting() -> None:
    """A receive whose send was taken out: its rank (and whoever waits for it) is left
    waiting, in the same state as before."""
    prog = program(random.Random(7), 6, 20, patterns=("exchange", "blocking", "collective"))
    for cs in prog.calls:
        for call in cs:
            if any(op == SEND_BLOCK for op, _ in call.ops):  # the first MPI_Send
                call.ops = []
                break
        else:
            continue
        break
    rng = random.Random(7)
    c = costs(rng, prog)
    resid = residuals(prog, c)
    for overlap in OVERLAPS:
        got = replay(prog, c, resid, overlap)
        assert got.unresolved
        assert _bits(got) == _bits(replay_before(prog, c, resid, overlap))


def test_same_replay_as_before_on_a_larger_program() -> None:
    prog = program(random.Random(3), 48, 40)
    _same(prog, 3, ("none", "hidden", "polled", "compute"))
