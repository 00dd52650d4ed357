"""munged, slurmctld and one slurmd per emulated node: started from Debian's packages
with the cluster's own key, socket and configuration, found again by their PID files.

slurmd is started with nsenter into the node's network namespace, not `ip netns exec`,
which remounts /sys and leaves slurmd without /sys/fs/cgroup. Each slurmd gets its own
host name (a UTS namespace) and its own node-local TmpFS (a mount namespace binds a
per-node directory on the one path slurm.conf names): two slurmstepds on one machine
would otherwise both make <TmpFS>/spmix_appdir_* and one fails (--mpi=pmix); and its own
/dev/shm, where MPI keeps its shared-memory segments. /tmp stays
shared, as a cluster's shared file system would be: run directories there must be seen
by every node."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import UserError
from ..core.procs import KILL_GRACE_S, alive, signal_all
from .layout import CONTROLLER, NODE_PREFIX, RUNTIME_DIR, Layout, Node, netns_path
from .slurm_conf import CTLD_PID, MUNGE_DIR, MUNGE_SOCKET, NODE_TMPFS, SLURM_CONF, SLURM_DIR, render
from .syscmd import run

MUNGE_PID = MUNGE_DIR / "munged.pid"
TOOLS = ("ip", "tc", "nsenter", "unshare", "munged", "mungekey", "slurmctld", "slurmd",
         "srun", "sinfo", "scontrol")


def environment() -> dict[str, str]:
    """What a command needs to reach the cluster's Slurm (srun, sbatch, sinfo)."""
    return {"SLURM_CONF": str(SLURM_CONF)}


def _start_munge() -> None:
    MUNGE_DIR.mkdir(mode=0o711, parents=True, exist_ok=True)
    os.chmod(MUNGE_DIR, 0o711)
    key = MUNGE_DIR / "munge.key"
    run(["mungekey", "--create", "--force", f"--keyfile={key}"], what="cluster up (munge key)")
    os.chmod(key, 0o600)
    run(["munged", "--force", f"--socket={MUNGE_SOCKET}", f"--key-file={key}",
         f"--pid-file={MUNGE_PID}", f"--log-file={MUNGE_DIR / 'munged.log'}",
         f"--seed-file={MUNGE_DIR / 'munged.seed'}"], what="cluster up (munged)")


def _start_ctld() -> None:
    (SLURM_DIR / "ctld").mkdir(parents=True, exist_ok=True)
    # slurmctld checks that its host name is the configured SlurmctldHost.
    run(["unshare", "--uts", "sh", "-c",
         f'hostname {CONTROLLER} && exec slurmctld -c -f "{SLURM_CONF}"'],
        what="cluster up (slurmctld)")


def _node_tmp(node: Node) -> Path:
    return SLURM_DIR / f"tmp-{node.name}"


def _start_slurmd(node: Node) -> None:
    tmp = _node_tmp(node)
    tmp.mkdir(parents=True, exist_ok=True)
    os.chmod(tmp, 0o1777)
    # /dev/shm of its own too: MPI's shared-memory segments are named per job and host,
    # and ranks of one job on two emulated nodes would meet in one /dev/shm (MPICH's
    # MPI_Init then failed with "Out of memory" in MPIDI_POSIX_comm_bootstrap, 4 ranks a
    # node on 4 nodes).
    script = (f'hostname {node.name} && mount --bind "{tmp}" "{NODE_TMPFS}" && '
              f'mount -t tmpfs -o mode=1777 shm-{node.name} /dev/shm && '
              f'exec slurmd -f "{SLURM_CONF}" -N {node.name}')
    run(["nsenter", f"--net={netns_path(node)}", "unshare", "--uts", "--mount",
         "--propagation", "private", "sh", "-c", script],
        what=f"cluster up (slurmd on {node.name})")


def start(layout: Layout) -> None:
    SLURM_DIR.mkdir(parents=True, exist_ok=True)
    NODE_TMPFS.mkdir(mode=0o1777, parents=True, exist_ok=True)
    SLURM_CONF.write_text(render(layout))
    _start_munge()
    _start_ctld()
    for node in layout.node_list:
        _start_slurmd(node)


def daemon_names(layout: Layout) -> set[str]:
    """The names `running()` gives the cluster's own daemons (their PID files' stems);
    any other name there is a job's process."""
    return {MUNGE_PID.stem, CTLD_PID.stem, *(f"slurmd-{n.name}" for n in layout.node_list)}


def node_states() -> dict[str, str]:
    """Each node's state as sinfo gives it (idle, alloc, down*, ...); empty when Slurm
    does not answer."""
    proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True,
                          text=True, env={**os.environ, **environment()}, check=False,
                          timeout=30)
    return dict(ln.split(None, 1) for ln in proc.stdout.splitlines() if " " in ln)


def wait_idle(layout: Layout, timeout_s: float = 60) -> None:
    """Until every node is idle in Slurm's view, or one line saying which are not."""
    deadline = time.monotonic() + timeout_s
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        states = node_states()
        if states and all(states.get(n.name) == "idle" for n in layout.node_list):
            return
        time.sleep(0.5)
    raise UserError(f"cluster up: the nodes did not become idle in {timeout_s:.0f} s "
                    f"(sinfo: {states or 'no answer'}); see the logs in {SLURM_DIR}")


def _namespace_inodes(pattern: str = f"{NODE_PREFIX}*") -> set[tuple[int, int]]:
    out = set()
    for path in Path("/run/netns").glob(pattern):
        try:
            st = os.stat(path)
            out.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    return out


def _read_pid(pidfile: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(pidfile.read_text().split()[0])
    return None


def _in_namespaces(inodes: set[tuple[int, int]]) -> Iterator[tuple[int, bool, str]]:
    """(pid, in one of the network namespaces `inodes`, command line) of every process
    but this one."""
    me = os.getpid()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == me:
            continue
        try:
            st = os.stat(proc / "ns" / "net")
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        yield int(proc.name), (st.st_dev, st.st_ino) in inodes, cmd


def _pids() -> dict[str, int]:
    """Our processes: the daemons by their PID files, and anything else running in a
    node's network namespace (slurmstepd, the ranks of a job) or naming the runtime
    directory on its command line (a daemon whose PID file is gone)."""
    found: dict[str, int] = {}
    for pidfile in [MUNGE_PID, CTLD_PID, *SLURM_DIR.glob("slurmd-*.pid")]:
        pid = _read_pid(pidfile)
        if pid is not None:
            found[pidfile.stem] = pid
    for pid, in_node, cmd in _in_namespaces(_namespace_inodes()):
        if (in_node or str(RUNTIME_DIR) in cmd) and pid not in found.values():
            name = cmd.split(" ", 1)[0].rsplit("/", 1)[-1] or "process"
            found[f"{name}-{pid}"] = pid
    return {k: v for k, v in found.items() if alive(v)}


def node_processes(node: Node) -> list[int]:
    """The live processes in `node`'s network namespace: its slurmd, slurmstepd and the
    ranks of a job (what a node's crash takes with it)."""
    return sorted(pid for pid, in_node, _ in _in_namespaces(_namespace_inodes(node.name))
                  if in_node and alive(pid))


def slurmd_pid(node: Node) -> int | None:
    """The node's slurmd when it runs."""
    pid = _read_pid(SLURM_DIR / f"slurmd-{node.name}.pid")
    return pid if pid is not None and alive(pid) else None


def restart_slurmd(node: Node) -> None:
    """Start the node's slurmd again (after a fault killed it); Slurm returns the node to
    service when it registers (ReturnToService=2)."""
    _start_slurmd(node)


def running() -> dict[str, int]:
    return _pids()


# A job's step daemon ignores SIGTERM (Slurm signals a step's tasks through it, and only
# KILL ends it): with its slurmd going down too, nothing else will, so the grace is not
# waited for it. `cluster down` of a running job took 5.1 s, the grace, for the two steps'
# slurmstepd; every other process was gone 0.05 s after the TERM (2026-12-01).
TERM_IGNORED = "slurmstepd"


def stop(timeout_s: float = KILL_GRACE_S) -> list[str]:
    """Stop every daemon of ours (TERM, then KILL); returns those still alive."""
    pids = _pids()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        signal_all(sorted(pids.values()), sig)
        waited = [p for name, p in pids.items()
                  if sig != signal.SIGTERM or not name.startswith(TERM_IGNORED)]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and any(alive(p) for p in waited):
            time.sleep(0.1)
    return [f"{name} (pid {pid})" for name, pid in pids.items() if alive(pid)]
