"""Replay speed (issue 36 asks for at least 1 M events/s on one core): the engine's events
per second on a generated program (tests/predict_synth.py, 64 ranks) beside a plain pass
over the same events (every call's enter and exit and every operation visited once, a
sum of their times: what any replay has to do at least), so that the ratio says how much
the model itself costs. Three replays are timed: the program's first (the C pass where
its library is built, native.py, with the program's layout into its arrays included),
a second of the same program (laid out already: what each advice item's replay costs,
gains.py), and the Python pass (engine.py's reference, the engine before the C pass).
Each is the best of `repeats` passes, all four taken in turns, so that other work on the
machine touches them alike; wall time, and beside it the process's CPU time, the one-core
figure where the machine is shared. The figures are printed (pytest -s) and kept in
$PREDICT_SPEED_OUT when set; `python tests/test_predict_speed.py RANKS ROUNDS` prints
them for another program (8192 20: the 8,192-rank one of docs/method.md). The test checks
only that every pass replays every event, the same timelines, and that the rates were
measured, not a speed (timings on shared machines are noise)."""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from mpi_overlap.predict.engine import Replay, replay, residuals
from mpi_overlap.predict.program import Program
from predict_synth import costs, program


def plain_pass(prog: Program) -> tuple[int, float]:
    """Visit every event once: (events, a sum so that nothing is skipped)."""
    events = 0
    total = 0.0
    for calls in prog.calls:
        for call in calls[1:-1]:
            events += 2 + len(call.ops)
            total += call.exit - call.enter
            for _op, k in call.ops:
                total += k
    return events, total


def measure(ranks: int = 64, rounds: int = 400, seed: int = 1,
            repeats: int = 3) -> dict[str, float | int | str]:
    rng = random.Random(seed)
    prog = program(rng, ranks, rounds)
    c = costs(rng, prog)
    resid = residuals(prog, c)
    names = ("first", "again", "python", "plain")
    best = dict.fromkeys(names, float("inf"))
    cpu = dict.fromkeys(names, float("inf"))  # the process's CPU time: one core's figure

    def timed(name: str, fn: Callable[[], Replay | tuple[int, float]]) -> Any:
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best[name] = min(best[name], time.perf_counter() - t0)
        cpu[name] = min(cpu[name], time.process_time() - c0)
        return out

    for _ in range(repeats):
        prog.layout = None  # as a program never replayed
        first = timed("first", lambda: replay(prog, c, resid))
        again = timed("again", lambda: replay(prog, c, resid))
        python = timed("python", lambda: replay(prog, c, resid, engine="python"))
        events, _ = timed("plain", lambda: plain_pass(prog))
    for rep in (first, again, python):
        assert rep.unresolved == []
        # the engine enters and leaves every call and handles each operation once
        assert rep.events == events == prog.events()
    # the same timelines (repr: exact, and NaN, the last call's exit, equal to itself)
    assert repr((first.enter, first.exit)) == repr((python.enter, python.exit))
    out: dict[str, float | int | str] = {"ranks": ranks, "events": events,
                                         "engine": first.engine}
    for name, t in best.items():
        out[f"{name}_s"] = t
        out[f"{name}_events_per_s"] = events / t
        out[f"{name}_cpu_s"] = cpu[name]
        out[f"{name}_cpu_events_per_s"] = events / cpu[name] if cpu[name] > 0 else 0.0
        if name != "plain":
            out[f"{name}_ratio"] = t / best["plain"]
    # the headline: the first replay, as `predict` makes it
    out["replay_events_per_s"] = out["first_events_per_s"]
    out["ratio"] = out["first_ratio"]
    return out


def describe(out: dict[str, Any]) -> str:
    def rate(name: str) -> str:
        text = (f"{out[name + '_events_per_s'] / 1e6:.2f} M events/s, "
                f"{out[name + '_cpu_events_per_s'] / 1e6:.2f} per CPU second")
        if name != "plain":
            text += f", {out[name + '_ratio']:.2f}x the plain pass"
        return text

    return (f"replay of {out['events']} events of {out['ranks']} ranks ({out['engine']} "
            f"pass): first {out['first_s']:.3f} s ({rate('first')}); again "
            f"({rate('again')}); Python pass ({rate('python')}); plain pass "
            f"({rate('plain')})")


def test_replay_speed() -> None:
    out = measure()
    print("\n" + describe(out))
    path = os.environ.get("PREDICT_SPEED_OUT")
    if path:
        with open(path, "w") as fh:
            json.dump(out, fh, indent=1)
    assert int(out["events"]) > 100_000
    assert all(float(out[f"{k}_events_per_s"]) > 0 for k in ("first", "again", "python",
                                                             "plain"))


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    print(describe(measure(*args, repeats=int(os.environ.get("REPEATS", "3")))))
