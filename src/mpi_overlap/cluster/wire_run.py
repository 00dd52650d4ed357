"""`mpi-overlap cluster wire-check`: profile mo_wire_probe with one rank on each of two
emulated nodes while tcpdump captures the bridge, then compare every message's bounds
with the wire (wire_check.py). The profile is an ordinary `profile --trace` run made
through srun; the capture and wire-check.json are written into its run directory."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..profile.documents.rank_documents import read_rank_documents
from .cli_runs import traced_profile
from .control import exec_env
from .layout import BRIDGE, Layout, load_layout
from .syscmd import missing_tools
from .wire_check import analyze_run

CAPTURE = "wire.pcap"


def _start_capture(path: Path) -> subprocess.Popen[bytes]:
    # Headers only (-s 96): lengths come from the IP header. --immediate-mode and -U hand
    # over and write every packet as it comes: in the default buffered mode the last
    # message's packets were still in the kernel's ring when tcpdump was stopped, and
    # lost. Slurm's own traffic is left out.
    cmd = ["tcpdump", "-i", BRIDGE, "-w", str(path), "-s", "96", "-U", "--immediate-mode",
           "--time-stamp-precision", "nano", "tcp and not port 16817 and not port 16818"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    # tcpdump says "listening on ..." once its capture is open, or why not and exits
    line = proc.stderr.readline().decode(errors="replace")
    if "listening" not in line:
        proc.kill()
        rest = proc.stderr.read().decode(errors="replace").strip().splitlines()
        raise UserError(f"wire-check: tcpdump did not start: {(rest or [line.strip()])[-1]}")
    return proc


def _stop_capture(proc: subprocess.Popen[bytes]) -> None:
    time.sleep(0.5)  # the packets of the run's end reach the capture
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _node_of(host: str, layout: Layout) -> str:
    for node in layout.node_list:
        if node.name == host:
            return node.address
    raise UserError(f"wire-check: rank ran on '{host}', not on a node of the cluster")


def run_wire_check(*, toolchain: str, sizes: str, reps: int, out: Path,
                   timeout_s: float = 300) -> tuple[Path, dict[str, Any]]:
    """Profile, capture and compare; returns the run directory and wire-check.json."""
    from ..platform.build import build_dir_for, ensure_built
    from ..platform.toolchains import get_toolchain
    from ..run.slurm_launch import pmi_of

    layout = load_layout()
    if layout is None:
        raise UserError("no cluster is up here: `mpi-overlap cluster up --nodes 2` first")
    if layout.nodes < 2:
        raise UserError("wire-check needs two nodes (`mpi-overlap cluster up --nodes 2`)")
    if missing_tools(["tcpdump"]):
        raise UserError("wire-check needs tcpdump (Debian: apt-get install tcpdump)")
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    probe = build_dir_for(tc) / "bench" / "mo_wire_probe"
    out.mkdir(parents=True, exist_ok=True)
    capture = out / f".{CAPTURE}.{time.time_ns()}"
    launcher = f"srun --mpi={pmi_of(tc)} -N 2"
    tcpdump = _start_capture(capture)
    try:
        run_dir = traced_profile(
            "wire-check", tc.name, ["-n", "2", "--launcher", launcher, "--out", str(out)],
            [str(probe), "--sizes", sizes, "--reps", str(reps)], env=exec_env(),
            timeout_s=timeout_s)
    except UserError:
        capture.unlink(missing_ok=True)
        raise
    finally:
        _stop_capture(tcpdump)
    pcap = run_dir / CAPTURE
    capture.replace(pcap)
    docs = read_rank_documents(run_dir).docs
    if 0 not in docs or 1 not in docs:
        raise UserError(f"wire-check: {run_dir} lacks the profile of rank 0 or 1")
    hosts = [docs[r]["host"] for r in (0, 1)]
    if hosts[0] == hosts[1]:
        raise UserError(f"wire-check: both ranks ran on {hosts[0]}: nothing crossed a wire")
    doc = analyze_run(run_dir, pcap, _node_of(hosts[0], layout), _node_of(hosts[1], layout),
                      layout.rate_bits_per_s, layout.burst_bytes)
    return run_dir, doc
