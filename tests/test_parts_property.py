"""The bounds with the transfer model's parts (docs/method.md, "The transfer model's parts"),
against a simulator that knows where every transfer's parts lie.

The simulated program alternates computation (cut now and then by a region boundary) with
blocking point-to-point calls, non-blocking posts and waits. A table with parts says which
sizes move eagerly. The truth the simulator places, as the model states it:

* an eager blocking send (MPI_Send, MPI_Bsend, MPI_Rsend) holds o_s in its call and its
  tail, the one-way time less o_s, runs from the call's exit on: its true overlap is the
  computation inside [exit, exit + tail];
* a rendezvous send, MPI_Ssend and every blocking receive lie inside their call
  (a receive's transfer into the user's buffer begins at its post): true overlap 0;
* a non-blocking transfer lies inside [post's enter, completion's exit], placed at random,
  when it fits there; an eager one that does not fit has a part between its own overhead
  (o_s sending, o_r receiving) and the span inside it, the rest outside.

Every transfer's [min, max] from `mop_replay` must contain its true overlap, in every
generated case, also when more tails run at once than the engine keeps (MOP_MAX_TAILS).
The in-call check must flag exactly the calls shorter than what they must hold: o_s of an
eager send, o_r of an eager receive, the whole one-way time otherwise; the across-calls
check likewise the post -> completion spans.
"""

from __future__ import annotations

import json
import random
import subprocess
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from property_examples import examples

SETTINGS = settings(max_examples=examples(80), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
NS = 1e-9
# (bytes, one-way s, o_s, o_r): eager up to 4 KiB, rendezvous above (o_s ~ T there).
TABLE = [(0, 2e-6, 3e-7, 1e-7), (4096, 4e-6, 1e-6, 2e-7), (65536, 14e-6, 13e-6, 12e-6)]
EAGER_LIMIT = 4096
MAX_TAILS = 16  # MOP_MAX_TAILS in native/profiler/mop_process.h
# The engine keeps a tail's length in clock ticks (1 ns in the replay), rounded.
TICK = 1e-9


def interp(nbytes: int, col: int) -> float:
    """The table's column `col` (1: one-way time, 2: o_s, 3: o_r) at `nbytes`, as the
    engine interpolates it (beyond the last point: the last slope, not negative)."""
    pts = [(row[0], row[col]) for row in TABLE]
    if nbytes <= pts[0][0]:
        return pts[0][1]
    for (b0, y0), (b1, y1) in pairwise(pts):
        if nbytes <= b1:
            return y0 + (y1 - y0) * (nbytes - b0) / (b1 - b0)
    (b0, y0), (b1, y1) = pts[-2], pts[-1]
    return y1 + max(0.0, (y1 - y0) / (b1 - b0)) * (nbytes - b1)


@dataclass
class Truth:
    fn: str
    nbytes: int
    overlap: float | None  # seconds; None: flagged, no truth the bounds must hold
    flagged: bool   # its check must flag it


def overlap_with(comp: list[tuple[int, int]], a: int, b: int) -> int:
    return sum(max(0, min(b, y) - max(a, x)) for x, y in comp)


def simulate(seed: int, nsteps: int) -> tuple[str, list[Truth]]:
    """A replay stream and the truth of its in-call and non-blocking transfers."""
    rnd = random.Random(seed)
    lines = [f"table {b} {t!r}" for b, t, _, _ in TABLE]
    lines += [f"table parts {b} {s!r} {r!r}" for b, _, s, r in TABLE]
    lines.append(f"table eager_limit {EAGER_LIMIT}")
    t = 1000
    comp: list[tuple[int, int]] = []
    truths: list[Truth] = []
    tails: list[tuple[int, int, Truth]] = []  # (start, end, truth) of eager sends
    pending: list[tuple[int, int, int]] = []  # (key, bytes, post enter) of Isends
    key = 1
    for _ in range(nsteps):
        # computation, sometimes cut by a region boundary (a split without a call)
        d = rnd.choice([0, 50, 300, 1000, 3000, 20000])
        if d and rnd.random() < 0.3:
            cut = t + rnd.randrange(d)
            lines += [f"region_begin {cut} r", f"region_end {cut} r"]
        comp.append((t, t + d))
        t += d
        action = rnd.random()
        nbytes = rnd.choice([0, 8, 1000, 4096, 8192, 65536])
        x = interp(nbytes, 1)
        eager = nbytes <= EAGER_LIMIT
        o_s, o_r = min(interp(nbytes, 2), x), min(interp(nbytes, 3), x)
        if action < 0.45:  # a blocking send
            fn = rnd.choice(["MPI_Send", "MPI_Bsend", "MPI_Ssend"])
            dur = rnd.choice([10, 200, 1000, 5000, 20000])
            lines += [f"enter {t} {fn}", f"incall {t} {nbytes} send {fn} 1", f"exit {t + dur}"]
            need = o_s if eager and fn != "MPI_Ssend" else x
            tr = Truth(fn, nbytes, 0.0, flagged=dur * NS < need - 1e-15)
            truths.append(tr)
            if eager and fn != "MPI_Ssend" and x > o_s:
                tails.append((t + dur, t + dur + round((x - o_s) / NS), tr))
            t += dur
        elif action < 0.75:  # a blocking receive
            dur = rnd.choice([10, 150, 500, 3000, 20000])
            lines += [f"enter {t} MPI_Recv", f"incall {t} {nbytes} recv MPI_Recv 1",
                      f"exit {t + dur}"]
            need = o_r if eager else x
            truths.append(Truth("MPI_Recv", nbytes, 0.0, flagged=dur * NS < need - 1e-15))
            t += dur
        elif action < 0.9 or not pending:  # a non-blocking post
            dur = rnd.choice([10, 100])
            fn, kind = rnd.choice([("MPI_Isend", "send"), ("MPI_Irecv", "recv")])
            lines += [f"enter {t} {fn}", f"begin {t} {key} {nbytes} {kind} {fn} 1",
                      f"exit {t + dur}"]
            pending.append((key, nbytes, t, fn, kind))
            key += 1
            t += dur
        else:  # a wait: long enough for every pending transfer, or not (then an eager
            # one needs only its overhead inside, and the rest is the model's)
            longest = max(int(interp(b, 1) / NS) + 1 for _, b, _, _, _ in pending)
            dur = rnd.choice([10, 1000]) + (longest if rnd.random() < 0.6 else 0)
            lines.append(f"enter {t} MPI_Waitall")
            for k, b, _, _, _ in pending:
                lines.append(f"end {t + dur} {k} {b}")
            lines.append(f"exit {t + dur}")
            for _k, b, t0, fn, kind in pending:
                xb, span = int(interp(b, 1) / NS), t + dur - t0
                x = interp(b, 1)
                need = x
                if b <= EAGER_LIMIT:
                    need = min(interp(b, 2 if kind == "send" else 3), x)
                if xb <= span:  # it fits: inside, anywhere
                    inside = xb
                elif need <= span * NS:  # the part inside is between need and the span
                    inside = rnd.randint(min(span, int(need / NS) + 1), span)
                else:  # not even need fits: flagged, its bounds are not the model's
                    truths.append(Truth(fn, b, None, flagged=True))
                    continue
                start = rnd.randrange(t0, t + dur - inside + 1)
                truths.append(Truth(fn, b, overlap_with(comp, start, start + inside) * NS,
                                    flagged=False))
            pending = []
            t += dur
    lines.append(f"finish {t}")
    for start, end, tr in tails:
        tr.overlap = overlap_with(comp, start, end) * NS
    return "\n".join(lines) + "\n", truths


@pytest.fixture(scope="module")
def mop_replay() -> Path:
    exe = ensure_built(get_toolchain("mpich")) / "profiler" / "mop_replay"
    assert exe.is_file(), f"{exe} was not built"
    return exe


def replay(exe: Path, text: str) -> dict:
    proc = subprocess.run([str(exe)], input=text, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, f"mop_replay failed: {proc.stderr}\n{text}"
    return json.loads(proc.stdout)


@given(st.integers(0, 2**32 - 1), st.integers(1, 60))
@SETTINGS
def test_bounds_contain_the_true_overlap(mop_replay: Path, seed: int, nsteps: int) -> None:
    text, truths = simulate(seed, nsteps)
    doc = replay(mop_replay, text)
    got = [t for t in doc["transfers"] if t["case"] in ("in-call", "across-calls")]
    # Transfers are reported as they close (a tail when it has passed): compare as multisets
    # per (fn, bytes), every truth inside some reported bounds, each report used once.
    free = list(got)
    for tr in sorted(truths, key=lambda t: t.overlap is None):  # the flagged ones last
        match = next((g for g in free if g["fn"] == tr.fn and g["bytes"] == tr.nbytes
                      and (tr.overlap is None
                           or g["min_s"] - TICK <= tr.overlap <= g["max_s"] + TICK)), None)
        assert match is not None, (tr, [g for g in free if g["fn"] == tr.fn], text)
        free.remove(match)
    assert not free


@given(st.integers(0, 2**32 - 1), st.integers(1, 60))
@SETTINGS
def test_the_check_flags_only_calls_shorter_than_their_part(mop_replay: Path, seed: int,
                                                            nsteps: int) -> None:
    text, truths = simulate(seed, nsteps)
    doc = replay(mop_replay, text)
    checks = doc["profile"]["checks"]
    nonblocking = ("MPI_Isend", "MPI_Irecv")
    assert checks["in_call"]["flagged"]["transfers"] == sum(
        t.flagged for t in truths if t.fn not in nonblocking)
    assert checks["across_calls"]["flagged"]["transfers"] == sum(
        t.flagged for t in truths if t.fn in nonblocking)


def test_an_eager_send_tail_overlaps_the_computation_after_it(mop_replay: Path) -> None:
    """Worked example: MPI_Send of 4 KiB (one-way 4 µs, o_s 1 µs) returns at 2 µs; the
    program computes 1.5 µs, receives for 0.3 µs (o_r 0.2 µs: the data had arrived, not
    flagged), computes on: the 3 µs tail overlaps 1.5 + 1.2 µs. A send followed at once by
    a long receive overlaps 0.1 µs; a 64 KiB (rendezvous) send shorter than its one-way
    time is flagged and overlaps nothing."""
    head = "".join(f"table {b} {t!r}\n" for b, t, _, _ in TABLE)
    head += "".join(f"table parts {b} {s!r} {r!r}\n" for b, _, s, r in TABLE)
    text = head + f"""table eager_limit {EAGER_LIMIT}
enter 1000 MPI_Send
incall 1000 4096 send MPI_Send 1
exit 2000
enter 3500 MPI_Recv
incall 3500 4096 recv MPI_Recv 1
exit 3800
enter 10000 MPI_Send
incall 10000 4096 send MPI_Send 1
exit 11000
enter 11100 MPI_Recv
incall 11100 4096 recv MPI_Recv 1
exit 20000
enter 30000 MPI_Send
incall 30000 65536 send MPI_Send 1
exit 31000
finish 40000
"""
    doc = replay(mop_replay, text)
    sends = [(t["bytes"], round(t["min_s"] * 1e9), round(t["max_s"] * 1e9))
             for t in doc["transfers"] if t["fn"] == "MPI_Send"]
    assert sends == [(4096, 2700, 2700), (4096, 100, 100), (65536, 0, 0)]
    checks = doc["profile"]["checks"]["in_call"]
    assert checks["flagged"]["transfers"] == 1
    assert checks["flagged"]["xfer_s"] == pytest.approx(14e-6)


def test_without_parts_a_blocking_send_stays_whole(mop_replay: Path) -> None:
    """A table without parts (version 3 and older): in-call [0, 0] and the whole one-way
    time against the call, as before."""
    text = """table 0 2e-6
table 4096 4e-6
enter 1000 MPI_Send
incall 1000 4096 send MPI_Send 1
exit 2000
finish 9000
"""
    doc = replay(mop_replay, text)
    (tr,) = doc["transfers"]
    assert (tr["min_s"], tr["max_s"]) == (0, 0)
    assert doc["profile"]["checks"]["in_call"]["flagged"]["transfers"] == 1


def test_more_tails_than_the_engine_keeps_stay_bounds(mop_replay: Path) -> None:
    """MOP_MAX_TAILS + 4 eager sends of 10 ns each back to back, then computation: the
    sends beyond what the engine keeps get [0, tail], the others their exact overlap, the
    tail less the calls after their own (send i returns at 1010 + 10 i, the last call
    at 1200)."""
    head = "".join(f"table {b} {t!r}\n" for b, t, _, _ in TABLE)
    head += "".join(f"table parts {b} {s!r} {r!r}\n" for b, _, s, r in TABLE)
    lines = [head + f"table eager_limit {EAGER_LIMIT}"]
    t = 1000
    for _ in range(MAX_TAILS + 4):
        lines += [f"enter {t} MPI_Send", f"incall {t} 0 send MPI_Send 1", f"exit {t + 10}"]
        t += 10
    lines += [f"enter {t + 100000} MPI_Barrier", f"exit {t + 100010}", f"finish {t + 100020}"]
    doc = replay(mop_replay, "\n".join(lines) + "\n")
    tail_ns = round((2e-6 - 3e-7) / NS)
    got = sorted((round(x["min_s"] * 1e9), round(x["max_s"] * 1e9)) for x in doc["transfers"])
    exact = [tail_ns - (1200 - (1010 + 10 * i)) for i in range(MAX_TAILS)]
    assert got == sorted([(0, tail_ns)] * 4 + [(x, x) for x in exact])
