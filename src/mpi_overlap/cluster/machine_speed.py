"""The machine's speed around each run of the predict check (cluster/predict_check.py;
docs/method.md, "The machine's speed around each run").

Why: a replay keeps the trace's computation as recorded, so a check of it compares runs
that computed at the trace's speed. On this VM kind (2 cores, AMD EPYC) the same stencil
sweep ran 10-80 % longer in bursts of 10-60 s, and 35-55 % longer for 25 minutes,
with nothing else running, no steal time in /proc/stat and nothing the load guard
(core/machine_load.py) counts (2026-12-02). The check's one-node runs computed 14-53 %
longer than their trace at three of five checks the day before. What changes the
machine's speed is outside it (another guest's share of caches, memory or clock), so
only a measurement sees it: a fixed sweep timed on every CPU at once, before and after
each run. A base run starts at the fastest speed seen so far, and the trace is the base
run that computed least (predict_check._judge_base); a run elsewhere starts when the
machine is at the trace's speed and is left out, as a disturbed run is, where a
reference around it differs from the trace's by more than CHANGE_PCT.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import UserError

# A change of 10 % in a computation of 80 % of the run time is 8 % of it: most of the
# check's 10 % for run time. Back-to-back references on a steady machine spread by 1-3 %
# (8.88-9.22 ms a block here, with one of 16 at 10.6).
CHANGE_PCT = 10.0
# 2026-12-02 05:27, 100 references half a second apart: 80 of them 15-94 % slower than the
# fastest (8.96 ms a block, median 12.1), in spells; 05:13-05:19 the machine was at speed
# but for three bursts of 10-60 s. A run waits up to WAIT_S for a reference at the trace's
# speed.
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
    if not exe.is_file():
        raise UserError(f"{exe} is not built: the machine's speed cannot be measured "
                        "(mpi-overlap build)")
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


def change_pct(refs: list[list[float]], against: list[float]) -> float | None:
    """The largest change, slower or faster, of any CPU of `refs` from `against` (per
    CPU), in %; None with no figure to judge by."""
    pcts = [100.0 * abs(x / a - 1.0) for ref in refs if len(ref) == len(against)
            for x, a in zip(ref, against, strict=True) if a == a and x == x and a > 0]
    return max(pcts) if pcts else None


def changed(pct: float | None) -> bool:
    return pct is not None and pct > CHANGE_PCT


def fastest(refs: list[list[float]]) -> list[float]:
    """Per CPU the fastest of `refs` (NaN where none has a figure)."""
    return [min((x for x in col if x == x), default=float("nan"))
            for col in zip(*refs, strict=True)]


def fastest_of(before: list[float], after: list[float]) -> list[float]:
    """A run's speed: per CPU the faster of its two references (a slow spell may begin or
    end across the run; slowdowns only add time)."""
    return fastest([before, after])


@dataclass
class SpeedLog:
    """Every reference of one check (the document keeps them)."""

    exe: Path
    wait_s: float = WAIT_S  # how long at_speed waits at most
    refs: list[list[float]] = field(default_factory=list)

    def take(self) -> list[float]:
        ref = measure(self.exe)
        self.refs.append(ref)
        return ref

    def best(self) -> list[float] | None:
        """The fastest reference so far, per CPU (None before the first)."""
        return fastest(self.refs) if self.refs else None

    def at_speed(self, against: list[float] | None) -> list[float]:
        """A reference taken when the machine runs at `against`'s speed (None: as it
        is), waiting up to `wait_s` for it (the last reference where it never did): what
        a run is started on, since spells here last from seconds to 25 minutes."""
        deadline = time.monotonic() + self.wait_s
        while True:
            ref = self.take()
            if (against is None or not changed(change_pct([ref], against))
                    or time.monotonic() >= deadline):
                return ref
            time.sleep(WAIT_STEP_S)
