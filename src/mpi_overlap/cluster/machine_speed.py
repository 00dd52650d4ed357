"""The machine's speed around each run of the predict check (cluster/predict_check.py;
docs/method.md, "The machine's speed around each run").

Why: a replay keeps the trace's computation as recorded, so a check of it compares runs
that computed as the trace did. On this VM kind (2 cores, AMD EPYC) the same stencil
sweep ran 10-80 % longer in bursts of 10-60 s with nothing else running, no steal time
in /proc/stat and nothing the load guard (core/machine_load.py) counts: 2026-12-02, a C
sweep pinned to each core for 10 minutes, 50 sweeps in 8.9-9.1 ms (10-s medians) and,
in three bursts, 10.2-16.2. The check's one-node runs computed 14-53 % longer than their
trace at three of five checks that day. What slows the machine is outside it (another
guest's share of caches, memory or clock), so only a measurement sees it: a fixed sweep
timed on every CPU at once, before and after each run. A run with a reference slower
than the check's fastest by more than SLOW_PCT is left out, as a disturbed run is.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

# A slowdown of 10 % in a computation of 80 % of the run time is 8 % of it: most of the
# check's 10 % for run time. Back-to-back references on a quiet machine spread by 1-3 %
# (8.88-9.22 ms a block here, with one of 16 at 10.6).
SLOW_PCT = 10.0
# 2026-12-02 05:27, 100 references half a second apart: 80 of them 15-94 % slower than the
# fastest (8.96 ms a block, median 12.1), in spells; 05:13-05:19 the machine was at speed
# but for three bursts of 10-60 s. A run waits up to WAIT_S for a reference at speed.
WAIT_S = 30.0
WAIT_STEP_S = 0.5
MAX_CPUS = 64
TIMEOUT_S = 30


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))[:MAX_CPUS]


def measure(exe: Path) -> list[float]:
    """One reference: mo_machine_speed's median block time on each CPU this process may
    use, all CPUs at once (as a run's ranks use them), in seconds, by CPU; NaN for a CPU
    whose sweep gave no figure."""
    procs = [subprocess.Popen([str(exe), str(cpu)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL) for cpu in _cpus()]
    out = []
    for p in procs:
        try:
            text, _ = p.communicate(timeout=TIMEOUT_S)
            out.append(float(text.split()[0]) if p.returncode == 0 else float("nan"))
        except (subprocess.TimeoutExpired, ValueError, IndexError):
            p.kill()
            p.wait()
            out.append(float("nan"))
    return out


@dataclass
class SpeedLog:
    """Every reference of one check; its fastest per CPU is the machine at full speed."""

    exe: Path
    wait_s: float = WAIT_S  # how long at_speed waits at most
    refs: list[list[float]] = field(default_factory=list)

    def take(self) -> list[float]:
        ref = measure(self.exe)
        self.refs.append(ref)
        return ref

    def at_speed(self) -> list[float]:
        """A reference taken when the machine is at its best speed so far, waiting up to
        `wait_s` for it (the last reference where it never was): what a run is started
        on, since slow spells here last from seconds to minutes."""
        deadline = time.monotonic() + self.wait_s
        while True:
            ref = self.take()
            if not is_slow(self.slowdown_pct([ref])) or time.monotonic() >= deadline:
                return ref
            time.sleep(WAIT_STEP_S)

    def best(self) -> list[float]:
        cols = zip(*self.refs, strict=True) if self.refs else ()
        return [min((x for x in col if x == x), default=float("nan")) for col in cols]

    def slowdown_pct(self, refs: list[list[float]]) -> float | None:
        """How much slower than the fastest the slowest CPU of `refs` was; None with no
        figure to judge by."""
        best = self.best()
        pcts = [100.0 * (x / b - 1.0) for ref in refs if len(ref) == len(best)
                for x, b in zip(ref, best, strict=True) if b == b and x == x and b > 0]
        return max(pcts) if pcts else None


def is_slow(pct: float | None) -> bool:
    return pct is not None and pct > SLOW_PCT
