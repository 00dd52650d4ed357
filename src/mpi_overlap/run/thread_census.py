"""How many threads of a running job compete for how many cores, read from /proc.

Every benchmark assumes each thread its ranks run has a core. MPICH_ASYNC_PROGRESS=1
gives every rank a progress thread: two ranks on a 2-core machine (each rank bound to
one core) then run four threads on two cores, pure times go from 0.2 µs-scale to 2-6 ms
and an "overlap" is whatever the scheduler made of it (issue 15). Nothing in the ranks'
own timings says so, so the launcher watches the job from outside while it runs:

- every SAMPLE_S it lists the threads of the launcher and every process below it (the
  ranks), with their CPU time from /proc/<pid>/task/<tid>/stat;
- a thread that ran for at least ACTIVE_SHARE of a CPU between two readings is *active*
  (a rank that polls, a progress thread; idle helper threads use ~0);
- a process's cores are its Cpus_allowed_list.

An interval is oversubscribed when a process had more active threads than its cores,
or all of them together more than the union of their cores; the job is when at least
half of its intervals were. A job too short for one interval gives no reading
(`intervals` 0): the guard (run_guard.py) then falls back on what its environment
predicts. Linux only: elsewhere `start` returns None and nothing is recorded.

Watching the job's processes, the census also keeps every one it saw (`left_behind`):
once the launcher has ended, those still running are what it left behind, which the
launch stops (launch.py).
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections import Counter
from typing import Any

from ..core.machine_load import read_stat
from ..core.procs import alive, descendants, start_time

_PROC = "/proc"
# First reading soon after the start, then one per SAMPLE_S: cheap (one pass over
# /proc), and a benchmark runs for seconds to minutes.
FIRST_S = 0.3
# Before it, one look at the processes below the launcher, for `left_behind` only: a job
# that fails at once (an MPI_Abort at start-up) may end before the first reading, and
# MPICH's ranks run about 16 ms after mpiexec starts (2026-12-04).
EARLY_S = 0.1
SAMPLE_S = 1.0
# A thread that ran for at least this share of a CPU between two readings is *active*:
# it competes for a core. A rank that polls and its progress thread get a core, or
# their share of one (two threads on the one core a rank is bound to, beside other load:
# 0.2 each, seen); an idle helper thread (MPICH's "async" thread, the profiler's snapshot
# thread, Open MPI's event thread) uses ~0.
ACTIVE_SHARE = 0.05
MAX_PROCESSES = 8

# (pid, tid, start ticks) -> (CPU seconds, thread name)
_Tasks = dict[tuple[int, int, int], tuple[float, str]]


def parse_cpu_list(text: str) -> set[int]:
    """The CPUs of a list such as "0-3,8,10-11" (Cpus_allowed_list); empty when unreadable."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        lo, sep, hi = part.partition("-")
        try:
            cpus.update(range(int(lo), int(hi) + 1) if sep else (int(lo),))
        except ValueError:
            continue
    return cpus


def _allowed(pid: int) -> set[int]:
    try:
        with open(f"{_PROC}/{pid}/status") as fh:
            for line in fh:
                if line.startswith("Cpus_allowed_list:"):
                    return parse_cpu_list(line.split(":", 1)[1])
    except OSError:
        pass
    return set()


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def most_active(censuses: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Of several launches' censuses, the oversubscribed one with the most active threads
    (what a run made of several launches records: one oversubscribed launch makes the run
    so)."""
    return max(censuses, key=lambda c: (bool(c.get("oversubscribed")),
                                        c.get("active_threads_median") or 0), default=None)


def _tasks(pid: int, hz: int) -> _Tasks:
    out: _Tasks = {}
    try:
        tids = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        stat = read_stat(f"{_PROC}/{pid}/task/{tid}/stat")
        if stat is None:
            continue
        name, rest = stat
        try:
            cpu = (int(rest[11]) + int(rest[12])) / hz
            out[(pid, int(tid), int(rest[19]))] = (cpu, name)
        except (IndexError, ValueError):
            continue
    return out


class Census:
    """Watches the threads of process `root` and its descendants from a daemon thread
    until `stop()`."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.hz = os.sysconf("SC_CLK_TCK")
        self.active: list[int] = []  # active threads per interval
        self.over: list[bool] = []  # per interval: more active threads than cores
        self.worst: list[dict[str, Any]] = []  # processes of the interval with the most
        self.threads_max = 0
        self.processes_max = 0
        self.cores: set[int] = set()
        self._allowed: dict[int, set[int]] = {}
        # Every process seen below the root (pid -> start time in clock ticks): what the
        # launcher may leave behind when it ends (`left_behind`).
        self.seen: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> Census:
        self._thread.start()
        return self

    def _reading(self) -> tuple[float, _Tasks]:
        pids = descendants(self.root)
        tasks: _Tasks = {}
        for pid in pids:
            tasks.update(_tasks(pid, self.hz))
        self.seen.update((pid, start) for pid, tid, start in tasks
                         if tid == pid and pid != self.root)
        self.processes_max = max(self.processes_max, len(pids))
        self.threads_max = max(self.threads_max, len(tasks))
        return time.monotonic(), tasks

    def _cores_of(self, pid: int) -> set[int]:
        if pid not in self._allowed:  # binding is set at exec; read once per process
            self._allowed[pid] = _allowed(pid)
        return self._allowed[pid]

    def _interval(self, before: tuple[float, _Tasks], after: tuple[float, _Tasks]) -> None:
        dt = after[0] - before[0]
        if dt <= 0:
            return
        per_pid: Counter[int] = Counter()
        names: dict[int, str] = {}
        for key, (cpu, name) in after[1].items():
            if key in before[1] and (cpu - before[1][key][0]) / dt >= ACTIVE_SHARE:
                per_pid[key[0]] += 1
                names.setdefault(key[0], name)
        cores: set[int] = set()
        procs = []
        over = False
        for pid, n in per_pid.items():
            mine = self._cores_of(pid)
            cores |= mine
            over = over or (bool(mine) and n > len(mine))
            procs.append({"pid": pid, "name": names[pid][:64], "active_threads": n,
                          "cores": len(mine)})
        self.cores |= cores
        total = sum(per_pid.values())
        over = over or (bool(cores) and total > len(cores))
        if not self.active or total > max(self.active):
            self.worst = sorted(procs, key=lambda p: -p["active_threads"])[:MAX_PROCESSES]
        self.active.append(total)
        self.over.append(over)

    def _look(self) -> None:
        """Records the processes below the root (`seen`) without reading their threads."""
        for pid in descendants(self.root)[1:]:  # the root comes first
            if (started := start_time(pid)) is not None:
                self.seen[pid] = started

    def _watch(self) -> None:
        if self._stop.wait(EARLY_S):
            return
        self._look()
        if self._stop.wait(max(0.0, FIRST_S - EARLY_S)):
            return
        last = self._reading()
        while not self._stop.wait(SAMPLE_S):
            now = self._reading()
            self._interval(last, now)
            last = now

    def left_behind(self) -> dict[int, int]:
        """The processes seen below the root that still run (pid -> start time): after the
        launcher ended, what it left behind (ranks of MPICH's proxies, which start sessions
        of their own, are not found by the session). Call after `stop`."""
        # list(): one step under the GIL, should a stop that timed out leave the watch
        # still adding to it
        return {pid: start for pid, start in list(self.seen.items()) if alive(pid, start)}

    def stop(self) -> dict[str, Any]:
        """The census (the "threads" object of run.json)."""
        self._stop.set()
        self._thread.join(timeout=5.0)
        n = len(self.active)
        return {
            "intervals": n,
            "interval_s": SAMPLE_S,
            "active_share": ACTIVE_SHARE,
            "active_threads_median": statistics.median(self.active) if n else None,
            "active_threads_max": max(self.active) if n else None,
            "oversubscribed_intervals": sum(self.over),
            "oversubscribed": bool(n) and 2 * sum(self.over) >= n,
            "processes": self.worst,
            "threads_max": self.threads_max,
            "processes_max": self.processes_max,
            "cores_allowed": sorted(self.cores),
            "cores_usable": _usable_cores(),
        }


def start(root: int) -> Census | None:
    """A running census of process `root` and its descendants; None where /proc cannot
    be read."""
    if not os.path.isdir(f"{_PROC}/self/task"):
        return None
    return Census(root).start()


__all__ = ["ACTIVE_SHARE", "Census", "most_active", "parse_cpu_list", "start"]
