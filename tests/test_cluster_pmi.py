"""The MPICH wheel across nodes under Slurm (issue 39), on the emulated cluster: by
default its ranks start through Hydra's own Slurm launcher (slurm_launch.py), which
serves PMI itself, so UCX's 4096-byte address no longer goes through slurmstepd's PMI-1
read of 1024 bytes that cut it (docs/cluster.md, "The MPICH wheel under srun").

With plain srun and UCX, 16 of 45 argument lengths from 36 to 80 characters failed in
MPI_Init there ("Destination is unreachable" in UCX's address exchange; slurmstepd:
"value not properly terminated in client request"). Which lengths fail depends on the
sizes of the whole argv and environment, so a test cannot make the fault happen at will;
these check that the default path profiles both ranks, on two nodes, at those lengths,
that a benchmark runs the same way, that the time limit and a Ctrl-C leave nothing of the
job on any node, and that MPI_OVERLAP_SLURM_LAUNCHER=srun (with the OFI netmod, the other
documented way past the fault) returns to plain srun.

The table is given by hand (inter-node class only): no calibration runs here."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cli_helpers import CLI, own_state_dir
from cluster_helpers import NODES, job_processes, on_cluster
from mpi_overlap.cluster import control
from mpi_overlap.cluster.control import exec_env

pytestmark = pytest.mark.mpi

HAND_TABLE = ("mpi-overlap-xfer-table 2\ncreated x\nmachine 0000000000000000 cpu=none\n"
              "toolchain 0000000000000000 none\ntoolchain_name none\nranks 2 nodes 2\n"
              "inter 0 2e-05\ninter 1048576 0.045\n")
BASE_ARGS = ("--grid", "48", "--iterations", "50", "--meta")
LENGTHS = (40, 43, 46, 49, 52, 55)  # characters of the program's arguments, spaces counted
# What a launch through Hydra may take beyond its limit to stop the job and write the run
# (the faults' grace, docs/cluster.md "Faults").
GRACE_S = 30


def _args(length: int) -> list[str]:
    """mo_cg's arguments, BASE_ARGS and a --meta value padded to `length` characters."""
    pad = length - len(" ".join(BASE_ARGS)) - len(" k=")
    return [*BASE_ARGS, "k=" + "x" * pad]


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    """(state directory, inter-only table)."""
    home = own_state_dir(tmp_path)  # builds the programs if needed
    table = tmp_path / "inter.table"
    table.write_text(HAND_TABLE)
    return home, table


def _profile(tmp_path: Path, home: Path, table: Path, out: Path, app: Path, args: list[str],
             env: dict[str, str] | None = None,
             timeout: str = "60") -> subprocess.CompletedProcess[str]:
    return on_cluster("salloc", "-N", "2", "-n", "2", *CLI, "--verbose", "profile", "--nodes",
                      "2", "-n", "2", "--table", str(table), "--force-table", "--no-report",
                      "--timeout", timeout, "--out", str(out), "--", str(app), *args,
                      env={"MPI_OVERLAP_HOME": str(home), **(env or {})}, timeout=300)


def _profiled_on_both_nodes(out: Path, said: str) -> dict:
    """run.json of the one run under `out`, both ranks profiled, one on each node."""
    (run_dir,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    result = json.loads((run_dir / "result.json").read_text())
    ranks = {d["rank"]: d for d in result["ranks"]}
    assert sorted(ranks) == [0, 1] and result["missing_ranks"] == [], said
    for rank in ranks.values():
        assert rank["status"] == "complete", said
        assert rank["profile"]["counters"]["inter_node_transfers"] > 0, said
    hosts = [json.loads((run_dir / f"profile.rank-{r}.json").read_text())["host"]
             for r in (0, 1)]
    assert hosts == list(NODES), said
    return json.loads((run_dir / "run.json").read_text())


def _no_job_left() -> None:
    """Nothing of the job on any node or here (launchers, proxies, ranks), within 10 s."""
    deadline = time.monotonic() + 10
    while job_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job_processes() == []


def _mpich_bench(name: str) -> Path:
    from mpi_overlap.platform.build import build_dir_for
    from mpi_overlap.platform.toolchains import get_toolchain

    return build_dir_for(get_toolchain("mpich")) / name


def test_the_wheel_profiles_through_hydra_whatever_the_argument_length(
        cluster: None, tmp_path: Path) -> None:
    if os.environ.get("MPIR_CVAR_CH4_NETMOD"):
        pytest.skip("MPIR_CVAR_CH4_NETMOD is set here: this test is about UCX")
    home, table = _setup(tmp_path)
    app = _mpich_bench("bench/mo_cg")
    for length in LENGTHS:
        args = _args(length)
        assert len(" ".join(args)) == length
        out = tmp_path / f"runs-{length}"
        proc = _profile(tmp_path, home, table, out, app, args)
        said = f"{length} characters:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        assert proc.returncode == 0, said
        assert "mpi/pmi2" not in proc.stderr and "MPI_Init" not in proc.stderr, said
        run = _profiled_on_both_nodes(out, said)
        command = run["command"]
        assert command[1:7] == ["-launcher", "slurm", "-hosts", "mo-node1:1,mo-node2:1",
                                "-n", "2"], command
        # the address the proxies call back: the bridge's, derived from the route
        assert command[7:9] == ["-localhost", "198.51.100.254"], command
        assert run["launcher"]["kind"] == "hydra" and "1024 bytes" in run["launcher"]["why"]
        # --verbose says it in one line, naming the run
        (line,) = [ln for ln in proc.stderr.splitlines() if ": launcher hydra (" in ln]
        assert line.startswith(run["run_id"]), line
        _no_job_left()


def test_a_benchmark_across_nodes_runs_through_hydra(cluster: None, tmp_path: Path) -> None:
    home, _ = _setup(tmp_path)
    out = tmp_path / "runs"
    # one small point: what is checked is how and where the ranks ran
    proc = on_cluster("salloc", "-N", "2", "-n", "2", *CLI, "bench", "polling", "--quick",
                      "--sizes", "1k", "--intervals", "10", "--samples", "3", "-n", "2",
                      "--nodes", "2", "--out", str(out), env={"MPI_OVERLAP_HOME": str(home)},
                      timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if (p / "result.json").is_file()]
    result = json.loads((run_dir / "result.json").read_text())
    provenance = result["provenance"]
    assert provenance["hosts"] == list(NODES), provenance
    assert " -launcher slurm -hosts mo-node1:1,mo-node2:1 -n 2 " in provenance["launcher"]
    assert json.loads((run_dir / "run.json").read_text())["launcher"]["kind"] == "hydra"
    _no_job_left()


def _wait_for_ranks(job: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not any(k.startswith("profiled_app") for k in control.status().daemons):
        assert job.poll() is None and time.monotonic() < deadline, job.communicate()
        time.sleep(0.2)


def _profile_pid() -> int:
    """The `profile` CLI running inside the allocation (SLURM_JOB_ID in its environment)."""
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            env = (proc / "environ").read_bytes()
        except OSError:
            continue
        if b"mpi_overlap.cli" in cmd and b"profile" in cmd and b"\0SLURM_JOB_ID=" in b"\0" + env:
            return int(proc.name)
    raise AssertionError("no profile running inside an allocation")


def test_the_time_limit_and_ctrl_c_end_a_hydra_job_everywhere(
        cluster: None, tmp_path: Path) -> None:
    """Hydra's proxies run as an srun step under mpiexec: the profile's limit (which stops
    its launcher's session) and a Ctrl-C of the whole command must reach the ranks on
    both nodes. profiled_app exchanges for about 20 s."""
    home, table = _setup(tmp_path)
    app = _mpich_bench("tests/profiled_app")
    limit = 8
    start = time.monotonic()
    proc = _profile(tmp_path, home, table, tmp_path / "limit", app,
                    ["blocking", "65536", "3000"], timeout=str(limit))
    took = time.monotonic() - start
    said = f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 3 and "timed out after 8 s" in proc.stdout + proc.stderr, said
    assert took <= limit + GRACE_S, (took, said)
    _no_job_left()

    # Ctrl-C (SIGINT) of the profile inside the allocation
    argv = [*CLI, "cluster", "exec", "--", "salloc", "-N", "2", "-n", "2", *CLI, "profile",
            "--nodes", "2", "-n", "2", "--table", str(table), "--force-table", "--no-report",
            "--timeout", "60", "--out", str(tmp_path / "ctrl-c"), "--", str(app),
            "blocking", "65536", "3000"]
    job = subprocess.Popen(argv, env={**exec_env(), "MPI_OVERLAP_HOME": str(home)},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        _wait_for_ranks(job)
        time.sleep(1)
        stopped = time.monotonic()
        os.kill(_profile_pid(), signal.SIGINT)
        stdout, stderr = job.communicate(timeout=GRACE_S + 30)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    said = f"{stdout[-2000:]}\n{stderr[-3000:]}"
    assert time.monotonic() - stopped <= GRACE_S, said
    assert job.returncode != 0 and "Traceback" not in stderr, said
    _no_job_left()


def test_the_knob_returns_to_srun_where_ofi_gets_past_the_fault(
        cluster: None, tmp_path: Path) -> None:
    """MPI_OVERLAP_SLURM_LAUNCHER=srun: plain srun --mpi=pmi2, as before issue 39's fix;
    with the OFI netmod exported (the other way past the fault: a short address) the
    wheel profiles there too."""
    home, table = _setup(tmp_path)
    app = _mpich_bench("bench/mo_cg")
    for length in (40, 52):
        out = tmp_path / f"runs-{length}"
        proc = _profile(tmp_path, home, table, out, app, _args(length),
                        env={"MPI_OVERLAP_SLURM_LAUNCHER": "srun",
                             "MPIR_CVAR_CH4_NETMOD": "ofi"})
        said = f"{length} characters:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        assert proc.returncode == 0, said
        run = _profiled_on_both_nodes(out, said)
        assert run["command"][:6] == ["srun", "--mpi=pmi2", "-n", "2", "-N", "2"], run
        assert run["launcher"] == {"kind": "srun", "why": "MPI_OVERLAP_SLURM_LAUNCHER=srun"}
        _no_job_left()
