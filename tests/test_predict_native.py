"""The replay pass in C (native/replay/replay_engine.c, through predict/native.py) gives
the Python pass's timelines bit for bit (engine.py's _pass, the reference): on generated
programs (tests/predict_synth.py) under every overlap and progress rule, with and
without the changes advice gains apply (hidden ends, ends polled from their post,
rescaled computation), with and without a shared link; on the fixture's cases of
tests/test_predict_same_replay.py against their recorded digests; and where the C pass
leaves a program to Python (a NaN time) or is not built, the Python pass answers and
says why.

The library is compiled here from its sources with its CMake target's floating-point
flags (no FMA contraction, no fast math; -O2 where the build's Release uses -O3: the bits
do not depend on it; the layout of the program's objects, replay_layout.c, against this
Python's headers), so that the test needs no native build of an MPI toolchain; skipped
without a C compiler. Both layouts are checked: replay_layout.c's and native.py's own
(MPI_OVERLAP_REPLAY_LAYOUT=python, where the library has no layout)."""

from __future__ import annotations

import functools
import json
import random
import shutil
import subprocess
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.predict import native
from mpi_overlap.predict.engine import Change, replay, residuals
from mpi_overlap.predict.program import Coll
from predict_synth import PATTERNS, costs, program, shared_link
from property_examples import examples
from test_predict_same_replay import CASES, DIGESTS, OVERLAPS, _bits, _case, _change, digest

SOURCES = [Path(__file__).resolve().parents[1] / "native" / "replay" / name
           for name in ("replay_engine.c", "replay_layout.c")]
FLAGS = ["-std=c11", "-O2", "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Wextra",
         "-Werror", "-fPIC", "-shared"]


@pytest.fixture(scope="module", params=["c", "python"])
def c_library(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The library, with the program laid out by it (param "c") or by native.py."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the C replay pass")
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        pytest.skip(f"no Python headers in {include} for replay_layout.c")
    lib = tmp_path_factory.mktemp("replay") / native.LIBRARY
    subprocess.run([cc, *FLAGS, f"-I{include}", "-o", str(lib), *map(str, SOURCES), "-lm"],
                   check=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MPI_OVERLAP_REPLAY_LIB", str(lib))
        if request.param == "python":
            mp.setenv("MPI_OVERLAP_REPLAY_LAYOUT", "python")
        else:
            assert native._py_library() is not None  # the layout in C is used
        yield lib


def _both(prog, c, resid, overlap: str, progress: str, change: Change) -> tuple[str, str]:
    a = replay(prog, c, resid, overlap, progress, change, engine="c")
    b = replay(prog, c, resid, overlap, progress, change, engine="python")
    assert a.engine == "c" and b.engine == "python"
    # the link waits too (Replay.link_wait: not in the recorded digests, which predate it)
    return _bits(a) + repr(a.link_wait), _bits(b) + repr(b.link_wait)


def _same_under_every_rule(rng: random.Random, prog, c, kind: str) -> None:
    """The C and Python passes give the same bits under every overlap and progress rule,
    with the Change of `kind`."""
    resid = residuals(prog, c)
    change = _change(rng, prog, kind)
    for overlap in OVERLAPS:
        for progress in ("calls", "async"):
            got, want = _both(prog, c, resid, overlap, progress, change)
            assert got == want, f"{overlap}/{progress}/{kind}"


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ranks=st.integers(1, 12), rounds=st.integers(1, 25),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=5, unique=True),
       kind=st.sampled_from(("none", "hidden", "polled", "compute")))
def test_c_pass_is_the_python_pass(c_library: Path, seed: int, ranks: int, rounds: int,
                                   patterns: list[str], kind: str) -> None:
    rng = random.Random(seed)
    prog = program(rng, ranks, rounds, patterns=tuple(patterns))
    _same_under_every_rule(rng, prog, costs(rng, prog), kind)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ranks=st.integers(2, 12), rounds=st.integers(1, 25),
       hosts=st.integers(1, 4),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=5, unique=True),
       kind=st.sampled_from(("none", "hidden", "polled", "compute")))
def test_c_pass_is_the_python_pass_on_a_shared_link(c_library: Path, seed: int, ranks: int,
                                                     rounds: int, hosts: int,
                                                     patterns: list[str], kind: str) -> None:
    """With link directions shared (model.link_waits; `none` then floored by the model's
    replay), the same bits."""
    rng = random.Random(seed)
    prog = program(rng, ranks, rounds, patterns=tuple(patterns))
    _same_under_every_rule(rng, prog, shared_link(rng, prog, costs(rng, prog), hosts), kind)


def test_c_pass_matches_the_recorded_digests(c_library: Path) -> None:
    """Every case of tests/test_predict_same_replay.py, replayed by the C pass only."""
    want = json.loads(DIGESTS.read_text())
    c_replay = functools.partial(replay, engine="c")
    checked = 0
    for i in range(CASES + 2):
        name, prog, seed, kinds, progress = _case(i)
        got = digest(prog, seed, kinds, progress, replay_fn=c_replay)
        if got["inputs"] != want[name]["inputs"]:
            continue  # another platform's draws (test_predict_same_replay.py skips them)
        assert got["replays"] == want[name]["replays"], name
        checked += 1
    if not checked:
        pytest.skip("this platform draws other programs than the recorded ones")


def test_a_nan_time_is_left_to_the_python_pass(c_library: Path) -> None:
    """A NaN computation factor puts a NaN time in the heap, whose order Python's tuples
    define their own way: the C pass hands the program back, the Python pass answers."""
    rng = random.Random(5)
    prog = program(rng, 4, 6)
    c = costs(rng, prog)
    resid = residuals(prog, c)
    factors = [[1.0] * len(cs) for cs in prog.calls]
    factors[1][2] = float("nan")
    change = Change(compute=factors)
    auto = replay(prog, c, resid, change=change)
    assert auto.engine == "python" and auto.engine_note
    assert _bits(auto) == _bits(replay(prog, c, resid, change=change, engine="python"))


def test_without_the_library_the_python_pass_answers(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("MPI_OVERLAP_REPLAY_LIB", str(tmp_path / "absent.so"))
    rng = random.Random(2)
    prog = program(rng, 3, 4)
    c = costs(rng, prog)
    rep = replay(prog, c, residuals(prog, c))
    assert rep.engine == "python"
    assert rep.engine_note is not None and native.LIBRARY in rep.engine_note
    with pytest.raises(RuntimeError, match="not available"):
        replay(prog, c, residuals(prog, c), engine="c")


def test_a_collective_op_of_a_non_member_is_left_to_the_python_pass(c_library: Path) -> None:
    """A rank with an operation on a collective it is not a member of (no traced run makes
    one): the Python pass's dicts take it as an entry; the C pass, which keeps a slot per
    member, hands the program back."""
    rng = random.Random(11)
    prog = program(rng, 3, 4, patterns=("collective",))
    c = costs(rng, prog)
    prog.colls[0] = Coll("allreduce", (0, 1), -1, 8)
    resid = residuals(prog, c)
    auto = replay(prog, c, resid)
    assert auto.engine == "python" and auto.engine_note
    assert _bits(auto) == _bits(replay(prog, c, resid, engine="python"))
