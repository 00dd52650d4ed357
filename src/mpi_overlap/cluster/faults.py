"""`mpi-overlap cluster fault`: the faults a real cluster has, made on the emulated one so
that what a profile or a benchmark does through them can be run and tested (issue 39):
a node's link down (a pulled cable), its link slowed to a trickle (a congested or failing
link), every process of a node killed (a node crash), its slurmd killed, the jobs
cancelled — and `heal`, which makes the cluster usable again without `down`/`up`.

Each fault is applied after `after_s` and, with `for_s`, healed that long after; every
step is one line, with the time it happened, so a test or a user can line it up with
what the job recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UserError
from ..core.procs import signal_all
from . import daemons, network
from .layout import Layout, Node, load_layout

# Near zero but still a rate tbf accepts: a 4 KiB message takes 4 s, a ping-pong of
# 1 MiB about 17 min; nothing crosses in the time a run has, but the link stays up.
TRICKLE_RATE = "8kbit"
# How long `heal` waits for a restarted slurmd to register before it says so.
HEAL_WAIT_S = 60.0


@dataclass(frozen=True)
class Fault:
    name: str
    needs_node: bool
    help: str


FAULTS = {f.name: f for f in (
    Fault("link-down", True, "take the node's link down (a pulled cable)"),
    Fault("slow", True, f"shape the node's link to {TRICKLE_RATE} (a link that crawls)"),
    Fault("kill-node", True, "SIGKILL every process of the node: slurmd, slurmstepd, ranks"),
    Fault("kill-slurmd", True, "SIGKILL the node's slurmd (its running job steps stay)"),
    Fault("cancel", False, "scancel every job on the cluster"),
    Fault("heal", False, "links up at their rate, slurmd restarted, what is left of ended "
                         "jobs killed, nodes back in service"),
)}


def _layout() -> Layout:
    layout = load_layout()
    if layout is None:
        raise UserError("no cluster is up here: `mpi-overlap cluster up --nodes 2` first")
    return layout


def _node(layout: Layout, number: int | None, fault: str) -> Node:
    if number is None:
        raise UserError(f"cluster fault {fault}: name the node with --node 1..{layout.nodes}")
    if not 1 <= number <= layout.nodes:
        raise UserError(f"cluster fault {fault}: --node {number}, the cluster has nodes "
                        f"1..{layout.nodes}")
    return layout.node_list[number - 1]


def _slurm(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30,
                          env={**os.environ, **daemons.environment()})


def _cancel() -> str:
    jobs = _slurm(["squeue", "-h", "-o", "%i"]).stdout.split()
    if not jobs:
        return "no job to cancel"
    _slurm(["scancel", *jobs])
    return f"cancelled job {', '.join(jobs)} (scancel)"


def _kill_node(node: Node) -> str:
    pids = daemons.node_processes(node)
    signal_all(pids, signal.SIGKILL)
    return f"{node.name}: SIGKILL to its {len(pids)} processes (slurmd and any job's)"


def _kill_slurmd(node: Node) -> str:
    pid = daemons.slurmd_pid(node)
    if pid is None:
        return f"{node.name}: slurmd was not running"
    os.kill(pid, signal.SIGKILL)
    return f"{node.name}: SIGKILL to slurmd (pid {pid})"


# A process's environment reads as empty for a moment while it execs (its memory is
# being replaced): a rank caught then would pass for no job's and outlive `heal`. An
# empty read is asked again, this often, this far apart.
ENVIRON_TRIES = 5
ENVIRON_RETRY_S = 0.02


def _job_of(pid: int) -> str | None:
    """The Slurm job a process on a node belongs to: a rank's SLURM_JOB_ID, or the
    `slurmstepd: [JOB.STEP]` of its step daemon; None for anything else."""
    proc = Path(f"/proc/{pid}")
    try:
        cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        if cmd.startswith("slurmstepd: ["):
            return cmd[len("slurmstepd: ["):].split(".", 1)[0].split("]", 1)[0]
        for var in _environ(proc).split(b"\0"):
            if var.startswith(b"SLURM_JOB_ID="):
                return var.split(b"=", 1)[1].decode(errors="replace")
    except OSError:
        pass
    return None


def _environ(proc: Path) -> bytes:
    """/proc/PID/environ, read again while it is empty (a process in its exec), at most
    ENVIRON_TRIES times; a process that has no environment at all costs 80 ms."""
    for attempt in range(ENVIRON_TRIES):
        if attempt:
            time.sleep(ENVIRON_RETRY_S)
        data = (proc / "environ").read_bytes()
        if data:
            return data
    return b""


def _end_orphans(layout: Layout) -> list[str]:
    """Kill what is left on a node of a job Slurm no longer runs: a node cut off while
    Slurm ended its job (node failure) keeps the job's ranks, blocked, after it is back,
    until slurmd's next word with the controller (more than 90 s here)."""
    found: dict[tuple[str, str], list[int]] = {}
    for node in layout.node_list:
        for pid in daemons.node_processes(node):
            job = _job_of(pid)
            if job is not None:
                found.setdefault((node.name, job), []).append(pid)
    # Asked after the scan: a job whose processes were seen is in the queue by then
    # while it runs, so a job starting meanwhile is never taken for an ended one.
    running = set(_slurm(["squeue", "-h", "-o", "%i"]).stdout.split())
    lines = []
    for (name, job), pids in sorted(found.items()):
        if job not in running:
            signal_all(pids, signal.SIGKILL)
            lines.append(f"{name}: SIGKILL to {len(pids)} processes of job {job}, which "
                         "Slurm has ended")
    return lines


def heal(layout: Layout) -> list[str]:
    """Every link up at the cluster's rate, every dead slurmd started again, what is left
    of ended jobs killed, and each node back in Slurm's service (not down or drained);
    one line per thing that needed it."""
    what = "cluster fault heal"
    lines = []
    for node in layout.node_list:
        if not network.link_is_up(node):
            network.set_link(node, True, what=what)
            lines.append(f"{node.name}: link up")
        network.shape(node, layout.rate, layout.burst_bytes, what=what)
        if daemons.slurmd_pid(node) is None:
            daemons.restart_slurmd(node)
            lines.append(f"{node.name}: slurmd started again")
    lines += _end_orphans(layout)
    deadline = time.monotonic() + HEAL_WAIT_S
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        states = daemons.node_states()
        bad = [n.name for n in layout.node_list
               if any(s in states.get(n.name, "unk") for s in ("down", "drain", "unk", "*"))]
        if not bad:
            break
        for name in bad:  # a node Slurm set down while its slurmd was gone
            _slurm(["scontrol", "update", f"nodename={name}", "state=resume"])
        time.sleep(0.5)
    else:
        raise UserError(f"{what}: nodes not back in service in {HEAL_WAIT_S:.0f} s "
                        f"(sinfo: {states or 'no answer'})")
    lines.append("links at " + layout.rate + "; nodes in service: " +
                 ", ".join(f"{k} {v}" for k, v in sorted(states.items())))
    return lines


def inject(name: str, number: int | None, after_s: float, for_s: float | None,
           say: Callable[[str], None]) -> None:
    """Apply fault `name` (to node `number`) after `after_s` s, heal `for_s` s later when
    given; each step is passed to `say` as it happens."""
    fault = FAULTS.get(name)
    if fault is None:
        raise UserError(f"cluster fault: unknown fault '{name}' (one of "
                        f"{', '.join(FAULTS)})")
    if after_s < 0 or (for_s is not None and for_s < 0):
        raise UserError("cluster fault: --after and --for take seconds ≥ 0")
    layout = _layout()
    node = _node(layout, number, name) if fault.needs_node else None
    start = time.monotonic()

    def stamp(line: str) -> None:
        say(f"fault +{time.monotonic() - start:.1f} s: {line}")

    time.sleep(after_s)
    what = f"cluster fault {name}"
    if name == "heal":
        for line in heal(layout):
            stamp(line)
        return
    if name == "link-down":
        assert node is not None
        network.set_link(node, False, what=what)
        stamp(f"{node.name}: link down")
    elif name == "slow":
        assert node is not None
        network.shape(node, TRICKLE_RATE, layout.burst_bytes, what=what)
        stamp(f"{node.name}: link shaped to {TRICKLE_RATE}")
    elif name == "kill-node":
        assert node is not None
        stamp(_kill_node(node))
    elif name == "kill-slurmd":
        assert node is not None
        stamp(_kill_slurmd(node))
    else:
        stamp(_cancel())
    if for_s is not None:
        time.sleep(for_s)
        for line in heal(layout):
            stamp(line)
