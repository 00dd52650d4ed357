"""The emulated cluster for the tests that need one (test_cluster*.py): its layout, what
is left of it, and commands run where its Slurm reaches it (the `cluster` fixture that
brings it up and down is in conftest.py)."""

from __future__ import annotations

import subprocess

from cli_helpers import run_cli
from mpi_overlap.cluster import control

NODES = ("mo-node1", "mo-node2")
# 200 Mbit/s: the rate this machine's tbf holds with a small bucket (25 kB), so that the
# wire check times bytes to within a few per cent of a 1 MiB message (docs/cluster.md)
LINK = "200mbit"
# 2 CPUs a node: characterize's one-node placement puts both ranks on one.
LAYOUT = ("--nodes", "2", "--link", LINK, "--cpus-per-node", "2")


def nothing_left() -> list[str]:
    return control.status().parts()


def on_cluster(*argv: str, env: dict[str, str] | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_cli("cluster", "exec", "--", *argv, env=env, timeout=timeout)
