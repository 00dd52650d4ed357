"""What else ran on the machine while a job of ours ran.

Every timing we take assumes the ranks had their cores. On a laptop or a shared VM other
processes (a build, a browser, another test) and the hypervisor (steal time) take CPU
from them, and a rank that is descheduled for a scheduler slice stalls its partner for
milliseconds: medians move, fits fail, and the numbers are wrong by an amount no single
run can see. So each launch records the machine's load around it, read from /proc:

- busy CPU time of the whole machine and our own (mpi-overlap itself; the launcher and
  its ranks are waited-for children, so theirs is in os.times()), and, inside a Slurm
  allocation, the job's ranks that slurmd started rather than our launcher (job_cpu.py:
  on the emulated cluster every node's ranks run on this machine) and the cluster's own
  daemons (CLUSTER_DAEMONS); what is left of the machine's busy time is *foreign* CPU;
- steal time (the hypervisor ran someone else on our virtual CPUs);
- the load average at the end, and the busiest foreign processes (pid, name, share).

`disturbed` is set when foreign CPU plus steal exceeded DISTURBED_SHARE of the machine's
CPU time and more than the counters resolve (RESOLUTION_TICKS): the analyses and reports
then say so instead of presenting the figures as clean. Linux only; elsewhere `sample()`
returns None and nothing is recorded.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Background daemons use well under 1 % of a machine; a second job, a build or a
# CPU-bound test uses tens of percent.
DISTURBED_SHARE = 0.02
# /proc counts CPU time in whole clock ticks (10 ms at the usual 100 per second), the
# machine's per CPU and field and ours per process, so their difference reads a few ticks
# of foreign CPU where nothing else ran: 112 launches of 0.2-3 s of `study halo` and
# `study cg` on the quiet 2-core VM (2026-12-01) read 0 to 0.06 s, and the 19 called
# disturbed, all under 1 s, by the share alone read 0.01-0.03 s (0.01 s of a 0.2 s launch
# on 2 CPUs is 2.5 %). Up to this many ticks is below what the counters tell apart from
# rounding; a process that really competes for a core takes tens of ticks of such a launch.
RESOLUTION_TICKS = 3
# A foreign process is listed when it used at least this share of one CPU.
BUSY_PROCESS_SHARE = 0.05
MAX_BUSY_PROCESSES = 5
# The cluster's own daemons: they start and serve the job (docs/cluster.md), not foreign.
CLUSTER_DAEMONS = frozenset({"slurmd", "slurmctld", "munged"})

_PROC = "/proc"


@dataclass
class LoadSample:
    """One reading of the machine's counters (seconds of CPU time)."""

    t: float  # time.monotonic()
    busy_s: float  # user + nice + system + irq + softirq, all CPUs
    steal_s: float
    own_s: float  # CPU time of this process and its finished children (os.times)
    # pid -> (name, CPU seconds, start time in clock ticks since boot)
    procs: dict[int, tuple[str, float, int]] = field(default_factory=dict)


def _clock_ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def read_stat(path: str) -> tuple[str, list[str]] | None:
    """(name, the fields after it) of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat
    file, or None when it is gone. The fields count from the state: [0] state, [1] ppid,
    [3] session, [11] utime, [12] stime, [19] start time (clock ticks since boot)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    # The name is in parentheses and may itself hold spaces or parentheses.
    left, right = raw.find("("), raw.rfind(")")
    if left < 0 or right < left:
        return None
    return raw[left + 1:right], raw[right + 2:].split()


def pids() -> list[int]:
    """The processes /proc lists now (none where it cannot be read)."""
    try:
        return [int(e) for e in os.listdir(_PROC) if e.isdigit()]
    except OSError:
        return []


def proc_stats() -> Iterator[tuple[int, str, list[str]]]:
    """(pid, name, read_stat's fields) of every process /proc lists now; one gone
    meanwhile is left out, and nothing where /proc cannot be read."""
    for pid in pids():
        stat = read_stat(f"{_PROC}/{pid}/stat")
        if stat is not None:
            yield pid, stat[0], stat[1]


def _proc_stat(pid: int, hz: int) -> tuple[str, float, int, int] | None:
    """(name, CPU s, start ticks, parent pid) of one process, or None when it is gone."""
    stat = read_stat(f"{_PROC}/{pid}/stat")
    if stat is None:
        return None
    name, rest = stat
    try:
        ppid = int(rest[1])
        cpu = (int(rest[11]) + int(rest[12])) / hz
        start = int(rest[19])
    except (IndexError, ValueError):
        return None
    return name, cpu, start, ppid


def _processes(hz: int) -> tuple[dict[int, tuple[str, float, int]], dict[int, int]]:
    procs: dict[int, tuple[str, float, int]] = {}
    parents: dict[int, int] = {}
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return procs, parents
    for entry in entries:
        if not entry.isdigit():
            continue
        info = _proc_stat(int(entry), hz)
        if info is not None:
            name, cpu, start, ppid = info
            procs[int(entry)] = (name, cpu, start)
            parents[int(entry)] = ppid
    return procs, parents


def sample() -> LoadSample | None:
    """The machine's counters now; None where /proc cannot be read."""
    try:
        with open(f"{_PROC}/stat") as fh:
            fields = fh.readline().split()
        v = [int(x) for x in fields[1:9]]
        hz = _clock_ticks()
    except (OSError, ValueError, IndexError):
        return None
    t = os.times()
    procs, _ = _processes(hz)
    # user nice system idle iowait irq softirq steal
    return LoadSample(t=time.monotonic(), busy_s=(v[0] + v[1] + v[2] + v[5] + v[6]) / hz,
                      steal_s=v[7] / hz,
                      own_s=t.user + t.system + t.children_user + t.children_system,
                      procs=procs)


def _ours(pid: int, parents: dict[int, int], me: int) -> bool:
    """Whether `pid` is this process or one of its descendants (a job still running)."""
    seen = 0
    while pid > 1 and seen < 64:
        if pid == me:
            return True
        pid = parents.get(pid, 0)
        seen += 1
    return False


def _used(before: LoadSample, pid: int, cpu: float, start: int) -> float:
    old = before.procs.get(pid)
    # The same pid with another start time is a new process: all its CPU is new.
    return cpu - old[1] if old is not None and old[2] == start else cpu


def cluster_cpu(before: LoadSample, after: LoadSample) -> float:
    """CPU seconds the cluster's daemons (CLUSTER_DAEMONS) used between two samples."""
    return sum(max(0.0, _used(before, pid, cpu, start))
               for pid, (name, cpu, start) in after.procs.items() if name in CLUSTER_DAEMONS)


def _busy_processes(before: LoadSample, wall_s: float,
                    job_pids: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """Foreign processes that used at least BUSY_PROCESS_SHARE of a CPU since `before`
    (not ours, not the job's `job_pids`, not the cluster's daemons)."""
    hz = _clock_ticks()
    now, parents = _processes(hz)
    me = os.getpid()
    busy = []
    for pid, (name, cpu, start) in now.items():
        if _ours(pid, parents, me) or pid in job_pids or name in CLUSTER_DAEMONS:
            continue
        used = _used(before, pid, cpu, start)
        if used / wall_s >= BUSY_PROCESS_SHARE:
            busy.append({"pid": pid, "name": name[:64], "cpu_share": round(used / wall_s, 3)})
    busy.sort(key=lambda p: -p["cpu_share"])
    return busy[:MAX_BUSY_PROCESSES]


def between(before: LoadSample | None, after: LoadSample | None, *,
            job: tuple[float, set[int]] | None = None) -> dict[str, Any] | None:
    """What else ran between two samples (the "host_load" object of run.json), or None.
    `job`, for a launch inside a Slurm allocation: the CPU seconds of the job's processes
    outside our tree and their pids (job_cpu.py); the cluster's daemons are then not
    foreign either."""
    if before is None or after is None:
        return None
    wall_s = after.t - before.t
    if wall_s <= 0:
        return None
    cpus = os.cpu_count() or 1
    busy = after.busy_s - before.busy_s
    steal = after.steal_s - before.steal_s
    own = after.own_s - before.own_s
    job_cpu_s, job_pids = job if job is not None else (0.0, set())
    cluster = cluster_cpu(before, after) if job is not None else 0.0
    foreign = max(0.0, busy - own - job_cpu_s - cluster)
    try:
        load1 = os.getloadavg()[0]
    except OSError:
        load1 = None
    share = (foreign + steal) / (wall_s * cpus)
    return {
        "cpus": cpus,
        "wall_s": round(wall_s, 3),
        "busy_cpu_s": round(busy, 3),
        "own_cpu_s": round(own, 3),
        **({"job_cpu_s": round(job_cpu_s, 3), "cluster_cpu_s": round(cluster, 3)}
           if job is not None else {}),
        "foreign_cpu_s": round(foreign, 3),
        "steal_s": round(steal, 3),
        "foreign_share": round(share, 5),
        "loadavg_1min": None if load1 is None else round(load1, 2),
        "busy_processes": _busy_processes(before, wall_s, frozenset(job_pids)),
        "disturbed": (share > DISTURBED_SHARE
                      and foreign + steal > RESOLUTION_TICKS / _clock_ticks()),
    }


def describe(load: dict[str, Any] | None) -> str | None:
    """One sentence for a disturbed run ("other processes used 48 % of the machine's CPU
    (python3 pid 812 99 % of a CPU, ...)"), None when it was not disturbed."""
    if not load or not load.get("disturbed"):
        return None
    parts = [f"other processes used {100 * load['foreign_share']:.0f} % of the machine's "
             f"CPU time while it ran"]
    if load.get("steal_s"):
        parts.append(f"(steal {load['steal_s']:.2f} s)")
    procs = load.get("busy_processes") or []
    if procs:
        parts.append("— busiest: " + ", ".join(
            f"{p['name']} (pid {p['pid']}, {100 * p['cpu_share']:.0f} % of a CPU)"
            for p in procs[:3]))
    return " ".join(parts) + "; its timings may be off by an amount no run can see"


def busiest(loads: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Of several launches' loads, the one with the largest foreign share (what a run made
    of several launches records: one disturbed launch makes the run disturbed)."""
    return max(loads, key=lambda x: x["foreign_share"], default=None)
