"""CPU time of a Slurm job's own processes that are not the launcher's children (issue 39).

machine_load.py counts as *own* the CPU of mpi-overlap and its waited-for children (the
launcher, and the ranks mpiexec starts below it). Under srun the ranks are not below it:
each node's slurmd starts a `slurmstepd: [JOB.STEP]` that starts that node's ranks. On a
real cluster the ranks of this node run there; on the emulated one (docs/cluster.md) the
ranks of *every* node run on this machine, and counted as foreign they made every
calibration across nodes say "other processes used 100 % of its CPU". The cluster's own
daemons (slurmd, slurmctld, munged) are not foreign either: they are what starts the job.

So while a launch inside an allocation runs, a watcher reads /proc every WATCH_S: the
processes named slurmstepd whose command line names this job (`[JOB.`), and the CPU of
each one's tree (utime + stime of every live process below it, plus cutime + cstime: the
CPU of the children it has reaped, which are gone from /proc). A rank's CPU is then in
exactly one place at any reading. The last reading of each tree stands once it ends (a
slurmstepd nobody reaps stays readable as a zombie with its totals, as on this machine;
elsewhere its last slice, at most WATCH_S, is missed and counts as foreign). Trees that
were there before the launch (earlier steps) count from their first reading. Linux only.
"""

from __future__ import annotations

import itertools
import os
import threading

from ..core.machine_load import proc_stats

_PROC = "/proc"
WATCH_S = 0.5  # one pass over /proc: a few ms of one CPU per reading
# The first readings come sooner. A step is judged the job's by its command line, which
# only a live slurmstepd shows: a step that began and ended between two readings 0.5 s
# apart (a profile of a 0.4 s program across emulated nodes) was never seen alive, and
# its ranks counted as foreign made every such run "disturbed" (70 % other processes).
FIRST_WAITS_S = (0.05, 0.05, 0.1, 0.15, 0.15)  # readings at 0.05, 0.1, 0.2, 0.35, 0.5 s

# (pid, start ticks)
_Key = tuple[int, int]


def _cmdline(pid: int) -> str:
    try:
        with open(f"{_PROC}/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _scan(hz: int) -> dict[int, tuple[str, int, int, float]]:
    """pid -> (name, parent pid, start ticks, CPU s of itself and its reaped children)."""
    out: dict[int, tuple[str, int, int, float]] = {}
    for pid, name, rest in proc_stats():
        try:
            cpu = sum(int(rest[i]) for i in (11, 12, 13, 14)) / hz
            out[pid] = (name, int(rest[1]), int(rest[19]), cpu)
        except (IndexError, ValueError):
            continue
    return out


def step_of(cmdline: str, job_id: str) -> bool:
    """Whether a slurmstepd command line ("slurmstepd: [123.0]") belongs to job `job_id`."""
    return f"[{job_id}." in cmdline or f"[{job_id}]" in cmdline


def tree_totals(procs: dict[int, tuple[str, int, int, float]], roots: set[_Key],
                me: int) -> tuple[dict[_Key, float], set[int]]:
    """CPU seconds of each root's tree (every live process below it counted once: its own
    and its reaped children's CPU), and the pids in them. A tree holding process `me`
    (mpi-overlap itself in a batch step) is left out: machine_load counts that as own
    already. Pure."""
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[_Key, float] = {}
    pids: set[int] = set()
    for pid, start in roots:
        info = procs.get(pid)
        if info is None or info[2] != start:
            continue
        total, todo, tree = 0.0, [pid], []
        while todo and len(tree) < 4096:
            p = todo.pop()
            tree.append(p)
            total += procs[p][3]
            todo += children.get(p, [])
        if me in tree:
            continue
        out[(pid, start)] = total
        pids.update(tree)
    return out, pids


class JobWatch:
    """Follows the CPU of job `job_id`'s slurmstepd trees from a daemon thread."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        self.hz = os.sysconf("SC_CLK_TCK")
        self.first: dict[_Key, float] = {}
        self.last: dict[_Key, float] = {}
        self._names: dict[_Key, bool] = {}  # slurmstepd keys checked: ours or not
        self.pids: set[int] = set()  # every process seen in the job's trees
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> JobWatch:
        self._read(initial=True)
        self._thread.start()
        return self

    def _read(self, *, initial: bool = False) -> None:
        procs = _scan(self.hz)
        for pid, (name, _, start, _) in procs.items():
            key = (pid, start)
            if name == "slurmstepd" and key not in self._names:
                # a zombie's command line is empty: it is judged while alive, or not at all
                line = _cmdline(pid)
                if line:
                    self._names[key] = step_of(line, self.job_id)
        roots = {k for k, ours in self._names.items() if ours}
        totals, pids = tree_totals(procs, roots, os.getpid())
        self.pids |= pids
        for key, total in totals.items():
            self.first.setdefault(key, total if initial else 0.0)
            self.last[key] = max(total, self.last.get(key, 0.0))

    def _watch(self) -> None:
        for wait in itertools.chain(FIRST_WAITS_S, itertools.repeat(WATCH_S)):
            if self._stop.wait(wait):
                return
            self._read()

    def stop(self) -> tuple[float, set[int]]:
        """CPU seconds the job's trees used since the start, and the pids seen in them."""
        self._stop.set()
        self._thread.join(timeout=5.0)
        self._read()
        cpu = sum(max(0.0, v - self.first.get(k, 0.0)) for k, v in self.last.items())
        return cpu, self.pids


def start(job_id: str | None) -> JobWatch | None:
    """A running watch of job `job_id` (None outside an allocation or without /proc)."""
    if not job_id or not os.path.isdir(_PROC):
        return None
    return JobWatch(job_id).start()


__all__ = ["JobWatch", "start", "step_of", "tree_totals"]
