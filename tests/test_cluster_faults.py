"""Faults across nodes (issue 39, item 3): a profile of one rank per node on the emulated
cluster while `cluster fault` takes node 2's link down, slows it to a trickle, kills every
process of the node, kills its slurmd, or cancels the job. Each run must end within its
time limit plus a stated grace, keep what the surviving ranks measured, name the missing
ranks and why, exit with its documented status, and leave no process of the job on any
node; after `cluster fault heal` the same cluster runs the next job.

The table is given by hand (inter-node class only), so no calibration runs here: the
tests look at what the faults do to a profile, not at the figures."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from pathlib import Path

import pytest

from cli_helpers import CLI, own_state_dir, run_cli
from cluster_helpers import NODES, job_processes, on_cluster
from mpi_overlap.cluster.control import exec_env

pytestmark = pytest.mark.mpi

# The profile's own limit, and what it may take beyond it to stop the job, collect the
# snapshots and write the run (docs/cluster.md, "Faults"). The fault comes as soon as both
# ranks' snapshots count inter-node transfers: 1.7-2.4 s after the command started, beside
# two busy loops and other work (load 3-11), 1.9-2.2 s idle (2026-12-01); the limit leaves
# four times that for a slower start, and each test asserts that its fault came inside
# the limit. link-down and slow wait the limit out, so it is most of their time (with
# 30 s: 39 s each; with 15: 25; with 10: 19-20, the profile ending 6 s past its limit).
LIMIT_S = 10
GRACE_S = 30
# One rank per node, blocking exchanges of 64 KiB: about 7 s at 200 Mbit/s, so the
# program is still exchanging when the fault comes, and kill-slurmd (whose program goes
# on to its end) ends inside the limit on an idle machine (9.2 s of the 10 here); a
# slower start lets the limit stop it, which FAULTS allows (3).
APP_ARGS = ("blocking", "65536", "1500")
HAND_TABLE = ("mpi-overlap-xfer-table 2\ncreated x\nmachine 0000000000000000 cpu=none\n"
              "toolchain 0000000000000000 none\ntoolchain_name none\nranks 2 nodes 2\n"
              "inter 0 2e-05\ninter 1048576 0.045\n")

# fault: the exit statuses a run may end with (docs/cluster.md, "Faults", has what each
# did here). 3: the profile's time limit stopped a job that could not go on (a link down
# or crawling, a node gone; with slurmd killed the program ends whole, but srun cannot
# hear so and waits for the limit; 0 where it did). A cancelled job is ended by SIGTERM
# and the profile exits with the program's status, 128 + 15, as for any program killed.
# The MPICH wheel starts through Hydra's Slurm launcher (issue 39): a node killed or a
# job cancelled ends the srun step of Hydra's proxies, and mpiexec ends the job at once
# with its own status, 255, which is the launcher's, not the program's: the profile, with
# ranks missing, exits 3 (under plain srun a killed node's step waited for the limit, 3,
# and a cancelled one ended with the ranks' 143). A cancel may also reach the ranks first:
# mpiexec then reports them killed by SIGTERM as MPICH's mpiexec does, with the signal's
# number, 15, the program's status (a fresh clone's run).
FAULTS = {
    "link-down": (3,),
    "slow": (3,),
    "kill-node": (3,),
    "kill-slurmd": (0, 3),
    "cancel": (143, 15, 3),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_profile_across_nodes_through_a_fault(cluster: None, tmp_path: Path,
                                                fault: str) -> None:
    from mpi_overlap.platform.build import build_dir_for
    from mpi_overlap.platform.toolchains import get_toolchain

    statuses = FAULTS[fault]
    home = own_state_dir(tmp_path)
    table = tmp_path / "inter.table"
    table.write_text(HAND_TABLE)
    app = build_dir_for(get_toolchain("mpich")) / "tests" / "profiled_app"
    out = tmp_path / "runs"
    # snapshots every second: a rank killed with its node leaves what it measured
    argv = [*CLI, "cluster", "exec", "--", "salloc", "-N", "2", "-n", "2", *CLI, "profile",
            "--nodes", "2", "-n", "2", "--timeout", str(LIMIT_S), "--snapshot", "1",
            "--table", str(table), "--force-table", "--out", str(out), "--", str(app),
            *APP_ARGS]
    env = {**exec_env(), "MPI_OVERLAP_HOME": str(home)}
    start = time.monotonic()
    job = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        _wait_for_exchanges(job, out)
        made = run_cli("cluster", "fault", fault, *(["--node", "2"] if fault != "cancel"
                                                     else []), timeout=120)
        assert made.returncode == 0, made.stderr
        # the fault came inside the limit (counted here from before the launcher started)
        fault_at = time.monotonic() - start
        assert fault_at < LIMIT_S, (fault_at, made.stdout)
        stdout, stderr = job.communicate(timeout=LIMIT_S + GRACE_S + 60)
        _check_the_run(fault, statuses, job, made.stdout, stdout, stderr,
                       time.monotonic() - start, out)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
        # healed whatever happened: a failed check must not leave the node down for the
        # next fault
        healed = run_cli("cluster", "fault", "heal", timeout=120)
    assert healed.returncode == 0, healed.stderr
    # Healed, nothing of the job is left on any node, nor here (the MPICH wheel's mpiexec,
    # srun and Hydra's proxies: issue 39): a node cut off keeps its ranks until Slurm
    # reaches it again, as a real one does (measured: gone 1-14 s after the heal)
    deadline = time.monotonic() + 60
    while job_processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert job_processes() == [], job_processes()
    after = on_cluster("srun", "-N", "2", "hostname", timeout=120)
    assert after.returncode == 0, (after.stderr, healed.stdout)
    assert sorted(after.stdout.split()) == list(NODES)


def _wait_for_exchanges(job: subprocess.Popen[str], out: Path) -> None:
    """Until both ranks' snapshots (written whole, by rename, every second) count
    transfers between the nodes: the program is exchanging across the link."""
    deadline = time.monotonic() + 120
    while True:
        counts = []
        for doc in out.glob("*/profile.rank-*.json"):
            # a rank's first snapshot may not be there yet
            with contextlib.suppress(OSError, ValueError, KeyError):
                counts.append(json.loads(doc.read_text())["profile"]["counters"]
                              ["inter_node_transfers"])
        if len(counts) == 2 and min(counts) > 0:
            return
        assert job.poll() is None and time.monotonic() < deadline, job.communicate(timeout=60)
        time.sleep(0.2)


def _check_the_run(fault: str, statuses: tuple[int, ...], job: subprocess.Popen[str],
                   made: str, stdout: str, stderr: str, took: float, out: Path) -> None:
    said = f"{fault}: {made}\n--- stdout\n{stdout[-2500:]}\n--- stderr\n{stderr[-2500:]}"
    assert "Traceback" not in stderr, said
    assert took <= LIMIT_S + GRACE_S, (took, said)
    assert job.returncode in statuses, (job.returncode, said)

    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    meta = json.loads((run_dir / "run.json").read_text())
    if meta.get("returncode") == 255 and meta["launcher"]["kind"] == "hydra" \
            and meta.get("status") == "partial":
        # Hydra's own status for a lost proxy is named, not passed on as the program's.
        # Not where the time limit ended the run: stopping the session can make mpiexec
        # end with the same 255 (its proxies go first: "assert (!closed) failed"), and
        # the run then says it timed out (fc24 and a rerun under load: link-down, slow)
        assert job.returncode == 3 and "Hydra's mpiexec ended the job" in stderr, said
    if meta.get("status") == "timeout":
        assert job.returncode == 3 and "timed out after" in stdout, said
    result = json.loads((run_dir / "result.json").read_text())
    ranks = {d["rank"]: d for d in result["ranks"]}
    # rank 0 (node 1) survived every fault: what it measured is kept
    assert 0 in ranks and ranks[0]["profile"]["counters"]["inter_node_transfers"] > 0, said
    # rank 1 is there too: whole, or its last snapshot
    assert 1 in ranks and ranks[1]["profile"]["counters"]["inter_node_transfers"] > 0, said
    named = " ".join(result["warnings"])
    if result["missing_ranks"]:
        assert "ranks wrote no profile" in named, said
    for doc in ranks.values():
        if doc["status"] != "complete":
            assert f"rank(s) {doc['status']}" in named, said
    if job.returncode != 0:
        assert result["status"] == "incomplete" or all(
            d["status"] == "complete" for d in ranks.values()), said
