"""The emulated cluster for the tests that need one (test_cluster*.py): its layout, what
is left of it, and commands run where its Slurm reaches it (the `cluster` fixture that
brings it up and down is in conftest.py)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator

from cli_helpers import run_cli
from mpi_overlap.cluster import control

NODES = ("mo-node1", "mo-node2")
# 200 Mbit/s: the rate this machine's tbf holds with a small bucket (25 kB), so that the
# wire check times bytes to within a few per cent of a 1 MiB message (docs/cluster.md)
LINK = "200mbit"


def layout_args(link: str) -> tuple[str, ...]:
    """`cluster up`'s arguments for the tests' cluster with its links at `link`. 2 CPUs a
    node: characterize's one-node placement puts both ranks on one."""
    return ("--nodes", "2", "--link", link, "--cpus-per-node", "2")


LAYOUT = layout_args(LINK)
# For a test whose claim holds at any rate and whose time is the link's: a first
# calibration across nodes (ping-pong to 4 MiB, the parts to 1 MiB, the collectives' 25 s
# budget) took 73 s of a fresh clone's test at 200 Mbit/s
FAST_LINK = "1gbit"


@contextlib.contextmanager
def links_at(rate: str) -> Iterator[None]:
    """The cluster's links at `rate` for a block, then at LINK again, even when the block
    fails: `cluster up` at another rate reshapes the links of the cluster that is up (tc
    only; Slurm and the nodes are not touched)."""
    changed = run_cli("cluster", "up", *layout_args(rate), timeout=180)
    assert changed.returncode == 0 and f"to {rate}" in changed.stdout + changed.stderr, (
        changed.stdout, changed.stderr)
    interrupted = False
    try:
        yield
    except KeyboardInterrupt:
        # The session ends (Ctrl-C, or TERM: conftest.py) and the module's fixture takes
        # the cluster down next. Reshaped first, `up` could find the interrupted job's
        # processes still on a node and bring a new cluster up only for it to go down
        # (test_cluster_recovery's TERM test, 2026-12-01: 10.4-11.5 s from the TERM to
        # pytest's end in 4 of 6 runs, 1.7-2.1 in 2; 1.6-1.7 in 3 of 3 without).
        interrupted = True
        raise
    finally:
        if not interrupted:
            back = run_cli("cluster", "up", *LAYOUT, timeout=180)
            assert back.returncode == 0, back.stderr


def nothing_left() -> list[str]:
    return control.status().parts()


def on_cluster(*argv: str, env: dict[str, str] | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_cli("cluster", "exec", "--", *argv, env=env, timeout=timeout)


def job_processes() -> list[str]:
    """What is left of jobs: processes on the nodes other than the cluster's daemons, and
    processes here that belong to a Slurm job (SLURM_JOB_ID in their environment: salloc's
    children, a launcher such as mpiexec or srun, Hydra's proxies), named `pid cmd`."""
    from pathlib import Path

    from mpi_overlap.cluster.daemons import daemon_names

    st = control.status()
    assert st.layout is not None
    left = [k for k in st.daemons if k not in daemon_names(st.layout)]
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"\0SLURM_JOB_ID=" not in b"\0" + (proc / "environ").read_bytes():
                continue
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] != "Z":
            left.append(f"{proc.name} {cmd.strip()[:120]}")
    return left
