"""The emulated cluster's pieces that need no root: link rates and buckets, the hosts-file
block, slurm.conf, and the wire check's arithmetic (computing spans, verdicts)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from mpi_overlap.cluster import hosts_file, wire_check
from mpi_overlap.cluster.faults import _job_of
from mpi_overlap.cluster.layout import Layout
from mpi_overlap.cluster.slurm_conf import render
from mpi_overlap.core.errors import UserError
from mpi_overlap.profile.analysis.twosided_bounds import CallTimes
from mpi_overlap.profile.trace.reader import TRANSFER


@pytest.mark.parametrize(("rate", "bits", "bucket"), [
    ("1gbit", 1e9, 125000), ("200mbit", 2e8, 25000), ("10mbit", 1e7, 16384),
    ("125mbps", 1e9, 125000), ("2.5gbit", 2.5e9, 312500)])
def test_rates_and_buckets(rate: str, bits: float, bucket: int) -> None:
    layout = Layout(nodes=2, rate=rate)
    assert layout.rate_bits_per_s == bits and layout.burst_bytes == bucket


@pytest.mark.parametrize("kwargs", [{"nodes": 0}, {"nodes": 17}, {"nodes": 2, "rate": "fast"},
                                    {"nodes": 2, "cpus_per_node": 0}])
def test_bad_layouts_are_refused(kwargs: dict) -> None:
    with pytest.raises(UserError):
        Layout(**kwargs)


def test_slurm_conf_names_every_node_with_its_address() -> None:
    text = render(Layout(nodes=3, cpus_per_node=2))
    for i in (1, 2, 3):
        assert f"NodeName=mo-node{i} NodeAddr=198.51.100.{i} CPUs=2" in text
    assert "SlurmctldHost=mo-ctl(198.51.100.254)" in text and "TaskPlugin=task/none" in text


def test_hosts_block_comes_and_goes_leaving_the_rest(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    hosts = tmp_path / "hosts"
    original = "127.0.0.1 localhost\n10.0.0.1 other # kept\n"
    hosts.write_text(original)
    monkeypatch.setattr(hosts_file, "HOSTS", hosts)
    hosts_file.add(Layout(nodes=2))
    assert hosts_file.present() and "198.51.100.2 mo-node2" in hosts.read_text()
    hosts_file.add(Layout(nodes=2))  # again: still one block
    assert hosts.read_text().count(hosts_file.BEGIN) == 1
    hosts_file.remove()
    assert hosts.read_text() == original and not hosts_file.present()


def test_computing_time_is_the_time_between_calls() -> None:
    # the wire check counts a frame's time outside the receiver's calls (CallTimes)
    times = CallTimes(np.array([0.0, 5.0, 9.0]), np.array([1.0, 6.0, 12.0]), 0.0, 12.0)
    assert times.split(0.5, 10.0)[0] == 7.0  # (1, 5) and (6, 9)
    assert times.split(2.0, 4.0)[0] == 2.0
    assert times.split(4.0, 7.0)[0] == 2.0


def _rec(t_begin: int, t_end: int, nbytes: int, xfer: float, lo: float, hi: float) -> np.void:
    rec = np.zeros(1, dtype=TRANSFER)[0]
    rec["t_begin"], rec["t_end"], rec["bytes"] = t_begin, t_end, nbytes
    rec["xfer_s"], rec["min_s"], rec["max_s"] = xfer, lo, hi
    return rec


def test_a_message_is_judged_by_the_share_of_its_bytes_on_the_wire_while_computing() -> None:
    # receive posted at t=0 (ticks are seconds here), computing 0..4 s, MPI_Wait 4..10 s;
    # 10 frames of 100 bytes, each 0.5 s on the wire (1600 bit/s), ending at 1, 2, ... 10 s
    rate = 1600.0
    frames = [wire_check.Frame(float(t), 100, 100) for t in range(1, 11)]
    starts = np.array([f.t_end - 0.5 for f in frames])
    ends = np.array([f.t_end for f in frames])
    times = CallTimes(np.array([-0.1, 4.0]), np.array([0.0, 10.0]), -0.1, 10.0)

    def judge(lo: float, hi: float) -> wire_check.MessageCheck:
        return wire_check._check_one(_rec(0, 10, 1000, 9.5, lo, hi), "wire/1000/partial/0",
                                     float, times, frames, starts, ends, 0.0, rate)

    # frames ending at 1..4 s lie wholly in the computation: 400 of 1000 bytes
    ok = judge(0.35 * 9.5, 0.45 * 9.5)
    assert ok.true_share == pytest.approx(0.4) and ok.verdict == "inside"
    assert ok.wire_s == pytest.approx(9.5) and ok.table_share == pytest.approx(0.0)
    assert judge(0.6 * 9.5, 0.8 * 9.5).verdict == "outside"
    assert ok.payload == 1000 and ok.before_post == 0 and ok.pattern == "partial"


def test_bytes_before_the_post_are_told_apart_by_the_tcp_stream() -> None:
    # the message's frames start at stream byte 1000 on ports (5000, 6000); before the post
    # at t=10 s crossed: a retransmission, the message's own head (0.1 s before: within a
    # 0.2 s edge of the clocks), earlier bytes of the stream, and another connection's
    inside = [wire_check.Frame(10.0 + i, 300, 300, (5000, 6000), 1000 + 300 * i)
              for i in range(3)]
    before = [wire_check.Frame(9.90, 400, 400, (5000, 6000), 600),   # own head
              wire_check.Frame(9.60, 300, 300, (5000, 6000), 0),     # earlier data
              wire_check.Frame(9.50, 300, 300, (5000, 6000), 0, True),  # resent
              wire_check.Frame(9.40, 500, 500, (5001, 6000), 77)]    # other connection
    kinds = wire_check._before_post_kinds(before, inside, 10.0, 0.2)
    assert kinds == {"own head": 400, "earlier data": 300, "resent": 300,
                     "other connection": 500}
    # the same head further before the post than the clocks' edge is not the clocks
    assert wire_check._before_post_kinds(before[:1], inside, 10.0, 0.05) == \
        {"own head early": 400}
    assert wire_check._before_post_kinds([], inside, 10.0, 0.2) == {}


def _exec_done(pid: int) -> None:
    """Popen returns once the child's close-on-exec pipe closes, which the kernel does
    before it writes the new program's arguments and environment: /proc/PID/environ can
    still read empty then (an idle machine's test-quick lost that race once)."""
    deadline = time.monotonic() + 10
    while not Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep"):
        assert time.monotonic() < deadline, f"process {pid} did not start sleep"
        time.sleep(0.005)


def test_an_environment_read_empty_in_an_exec_is_read_again(tmp_path: Path,
                                                           monkeypatch) -> None:
    # the kernel writes a new program's environment after the exec has begun: a rank
    # read in between shows none, and heal would leave it running
    from mpi_overlap.cluster import faults

    proc = tmp_path / "4711"
    proc.mkdir()
    (proc / "cmdline").write_bytes(b"")
    (proc / "environ").write_bytes(b"")
    naps = []

    def exec_ends(seconds: float) -> None:  # the exec is over by the second read
        naps.append(seconds)
        (proc / "environ").write_bytes(b"HOME=/root\0SLURM_JOB_ID=4711\0")

    monkeypatch.setattr(faults.time, "sleep", exec_ends)
    assert faults._environ(proc).split(b"\0")[1] == b"SLURM_JOB_ID=4711"
    assert naps == [faults.ENVIRON_RETRY_S]
    (proc / "environ").write_bytes(b"")
    monkeypatch.setattr(faults.time, "sleep", naps.append)
    assert faults._environ(proc) == b""  # a process without an environment: given up
    assert len(naps) == faults.ENVIRON_TRIES


def test_a_process_is_told_to_a_job_by_its_environment() -> None:
    # heal kills what is left of ended jobs: a rank carries SLURM_JOB_ID, anything else
    # on a node (slurmd itself) belongs to no job and is never taken for one
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    rank = subprocess.Popen(["sleep", "30"], env={**env, "SLURM_JOB_ID": "4711"})
    other = subprocess.Popen(["sleep", "30"], env=env)
    try:
        _exec_done(rank.pid)
        _exec_done(other.pid)
        assert _job_of(rank.pid) == "4711"
        assert _job_of(other.pid) is None
    finally:
        for p in (rank, other):
            p.kill()
            p.wait()
