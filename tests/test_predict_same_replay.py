"""The replay engine's speed work changed no result: on generated programs
(tests/predict_synth.py), under every overlap and progress rule, with and without changes
that hide, poll from the post or rescale the computation (engine.Change, as advice gains
apply them), the engine gives bit for bit the replay of the engine before it: every
call's enter and exit, every post, every collective's synchronisation times, the event
count and the ranks left waiting.

The engine before (src/mpi_overlap/predict/engine.py at 9fddfad) replayed the same fixed
cases once, and tests/fixtures/predict_replay_digests.json keeps a SHA-256 of its replays
per case: a case's digest changes when any float of any of its replays does (repr is
exact). A deliberate change of the replay's rules makes new digests (write_digests
below), said in its commit. The generated programs come from random.expovariate, whose
logarithm is the platform's libm: the fixture also keeps a digest of each case's program
and costs, and a platform that draws other ones skips with that reason (the replays
would differ for it, not for the engine)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from mpi_overlap.predict.engine import NO_CHANGE, Change, Replay, replay, residuals
from mpi_overlap.predict.program import SEND_BLOCK, Program
from predict_synth import PATTERNS, costs, program

DIGESTS = Path(__file__).parent / "fixtures" / "predict_replay_digests.json"
CASES = 120
KINDS = ("none", "hidden", "polled", "compute")
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


def case_shape(i: int) -> tuple[int, int, tuple[str, ...]]:
    """Case i's ranks (1-9), rounds (1-30) and patterns (1-5 of them)."""
    rng = random.Random(f"shape-{i}")
    return (rng.randint(1, 9), rng.randint(1, 30),
            tuple(rng.sample(PATTERNS, rng.randint(1, len(PATTERNS)))))


def left_waiting_program() -> Program:
    """A receive whose send was taken out: its rank (and whoever waits for it) is left
    waiting."""
    prog = program(random.Random(7), 6, 20, patterns=("exchange", "blocking", "collective"))
    for cs in prog.calls:
        for call in cs:
            if any(op == SEND_BLOCK for op, _ in call.ops):  # the first MPI_Send
                call.ops = []
                return prog
    raise AssertionError("the program has no MPI_Send")


def digest(prog: Program, seed: int, kinds: tuple[str, ...], progress: tuple[str, ...],
           replay_fn: Callable[..., Replay] = replay,
           check: Callable[[Replay], None] | None = None) -> dict[str, str]:
    """SHA-256 of the program with its costs drawn from `seed` ("inputs"), and of every
    replay of it ("replays"): per kind of change, under every overlap rule and each of
    `progress`."""
    rng = random.Random(seed)
    c = costs(rng, prog)
    # What the draw made, field by field: a field Costs gains later (with its default)
    # must not read as another platform's program and skip every case.
    drawn = (prog, c.T, c.o_s, c.o_r, c.eager, c.coll)
    inputs = hashlib.sha256(repr(drawn).encode()).hexdigest()
    resid = residuals(prog, c)
    h = hashlib.sha256()
    for kind in kinds:
        change = _change(rng, prog, kind)
        for overlap in OVERLAPS:
            for prog_rule in progress:
                rep = replay_fn(prog, c, resid, overlap, prog_rule, change)
                if check is not None:
                    check(rep)
                h.update(_bits(rep).encode())
    return {"inputs": inputs, "replays": h.hexdigest()}


Case = tuple[str, Program, int, tuple[str, ...], tuple[str, ...]]


def _case(i: int) -> Case:
    """(name, program, seed, kinds, progress rules) of the fixture's case i: CASES
    generated ones, then a larger program, then one that leaves ranks waiting."""
    if i == CASES:
        return "larger", program(random.Random(3), 48, 40), 3, KINDS, PROGRESS
    if i == CASES + 1:
        return "left waiting", left_waiting_program(), 7, ("none",), ("calls",)
    ranks, rounds, patterns = case_shape(i)
    return (f"case {i} ({ranks} ranks, {rounds} rounds, {'/'.join(patterns)})",
            program(random.Random(i), ranks, rounds, patterns=patterns), i, KINDS, PROGRESS)


def write_digests(replay_fn: Callable[..., Replay] = replay) -> None:
    """Write the fixture from `replay_fn` (after a deliberate change of the rules)."""
    cases = [_case(i) for i in range(CASES + 2)]
    DIGESTS.write_text(json.dumps({name: digest(p, seed, kinds, prog, replay_fn)
                                   for name, p, seed, kinds, prog in cases}, indent=1)
                       + "\n")


@pytest.mark.parametrize("case", range(CASES + 2))
def test_same_replay_as_before(case: int) -> None:
    name, prog, seed, kinds, progress = _case(case)
    want = json.loads(DIGESTS.read_text())[name]

    def left_waiting(rep: Replay) -> None:
        assert rep.unresolved  # the rank whose send was taken out, and its waiters

    got = digest(prog, seed, kinds, progress,
                 check=left_waiting if name == "left waiting" else None)
    if got["inputs"] != want["inputs"]:
        pytest.skip(f"{name}: this platform draws another program (its libm's log in "
                    "random.expovariate), which the recorded replays are not of")
    assert got["replays"] == want["replays"], \
        f"{name}: the replay differs from the engine's before 88d9c2b"
