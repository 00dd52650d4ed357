"""The run layer's documents as typed models (core/schema.py): run.json (run-v1), the
envelope of every benchmark's result.json (result-v1), and what run.json says of the
machine's load (host-load-v1) and of the job's threads (threads-v1). Their JSON schemas
are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ..core.schema import Document, register


class HostLoadBusyProcessesItem(Document, kw_only=True, forbid_unknown_fields=True):
    pid: int
    name: str
    cpu_share: Annotated[float, Meta(ge=0, description="CPU seconds / wall seconds")]


class HostLoad(Document, kw_only=True, forbid_unknown_fields=True):
    """What else ran on the machine during a launch (machine_load.py), version 1"""

    cpus: Annotated[int, Meta(ge=1)]
    wall_s: Annotated[
        Annotated[float, Meta(ge=0)] | UnsetType, Meta(description="time between the two readings")
    ] = UNSET
    busy_cpu_s: Annotated[float, Meta(description="busy CPU seconds of the whole machine")]
    own_cpu_s: Annotated[
        float, Meta(description="CPU seconds of mpi-overlap, the launcher and the ranks below it")
    ]
    job_cpu_s: Annotated[
        Annotated[float, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "inside a Slurm allocation: CPU seconds of the job's processes that "
                "slurmd started (its ranks on this machine's nodes; job_cpu.py)"
            )
        ),
    ] = UNSET
    cluster_cpu_s: Annotated[
        Annotated[float, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "inside a Slurm allocation: CPU seconds of the cluster's daemons "
                "(slurmd, slurmctld, munged)"
            )
        ),
    ] = UNSET
    foreign_cpu_s: Annotated[
        float, Meta(ge=0, description="busy minus own, job and cluster: other processes")
    ]
    steal_s: Annotated[float, Meta(description="time the hypervisor gave to other guests")]
    foreign_share: Annotated[
        float, Meta(ge=0, description="(foreign + steal) / (wall time * cpus)")
    ]
    loadavg_1min: float | UnsetType | None = UNSET
    busy_processes: Annotated[
        list[HostLoadBusyProcessesItem] | UnsetType,
        Meta(description="foreign processes that used at least 5 % of a CPU, busiest first"),
    ] = UNSET
    disturbed: Annotated[
        bool | UnsetType,
        Meta(description="foreign_share above 2 % and foreign CPU beyond the counters' "
                         "resolution: the timings of this launch are suspect"),
    ] = UNSET


class ThreadsProcessesItem(Document, kw_only=True, forbid_unknown_fields=True):
    pid: int
    name: str
    active_threads: Annotated[int, Meta(ge=0)]
    cores: Annotated[int, Meta(ge=0, description="CPUs in its Cpus_allowed_list")]


class Threads(Document, kw_only=True, forbid_unknown_fields=True):
    """How many threads of a job ran on how many cores (thread_census.py), version 1"""

    intervals: Annotated[
        int, Meta(ge=0, description="readings compared (0: the job was too short to be watched)")
    ]
    interval_s: Annotated[float, Meta(gt=0)] | UnsetType = UNSET
    active_share: Annotated[
        float | UnsetType, Meta(description="share of a CPU from which a thread counts as active")
    ] = UNSET
    active_threads_median: Annotated[
        Annotated[float, Meta(ge=0)] | None,
        Meta(description="active threads of the job in the median interval"),
    ]
    active_threads_max: Annotated[int, Meta(ge=0)] | None
    oversubscribed_intervals: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(
            description=("intervals with more active threads than cores (of a process, or of all)")
        ),
    ] = UNSET
    oversubscribed: Annotated[
        bool, Meta(description="at least half of the intervals were oversubscribed")
    ]
    processes: Annotated[
        list[ThreadsProcessesItem] | UnsetType,
        Meta(description="the processes of the interval with the most active threads"),
    ] = UNSET
    threads_max: Annotated[
        int,
        Meta(ge=0, description="threads of the job's processes (active or not), most seen at once"),
    ]
    processes_max: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    cores_allowed: Annotated[
        list[int],
        Meta(description="CPUs the active processes may run on (Cpus_allowed_list), union"),
    ]
    cores_usable: Annotated[int, Meta(ge=1, description="CPUs the launcher may run on")]


class RunToolchain(Document, kw_only=True):
    name: str
    kind: Literal["wheel", "system"]
    mpi_library_version: str
    mpicc: str
    mpiexec: str


class RunLauncher(Document, kw_only=True, forbid_unknown_fields=True):
    """what started the ranks and why: the user's --launcher; inside a Slurm allocation srun,
    or Hydra's Slurm launcher for the MPICH wheel (issue 39); else this machine's mpiexec"""

    kind: Literal["user", "srun", "hydra", "mpiexec"]
    why: str


class RunGuardOversubscribed(Document, kw_only=True, forbid_unknown_fields=True):
    basis: Literal["measured", "expected"]
    active_threads: float
    cores: int
    expected_active_threads: int | UnsetType = UNSET
    expected_why: str | UnsetType = UNSET
    reason: str
    change: Annotated[str, Meta(description="what to change to measure without oversubscription")]


class RunGuard(Document, kw_only=True, forbid_unknown_fields=True):
    """the run-level verdict from threads and host_load (run_guard.py): oversubscribed (more
    active threads than cores: overlap and cost figures are withheld), disturbed (other
    processes took CPU time) or ok"""

    verdict: Literal["ok", "disturbed", "oversubscribed"]
    oversubscribed: RunGuardOversubscribed | None
    disturbed: Annotated[str | None, Meta(description="machine_load.describe of host_load")]


class RunXferTable(Document, kw_only=True, forbid_unknown_fields=True):
    """the transfer-time table a profiled run used: when it was made, whether this run made it,
    and then the run-level verdict of that calibration (table_note.py)"""

    path: str
    created: str | None
    made_in_this_run: bool | None
    calibration_verdict: Literal["ok", "disturbed", "oversubscribed"] | None
    calibration_note: str | None


class RunReplicate(Document, kw_only=True, forbid_unknown_fields=True):
    """one of K launches of the same benchmark and setting (--launches K); the report compares
    the launches of a group (replication.py)"""

    group: str
    index: Annotated[int, Meta(ge=1)]
    of: Annotated[int, Meta(ge=1)]
    label: Annotated[str, Meta(description="the label the launches of the group share")]


class Run(Document, kw_only=True):
    """mpi-overlap run directory metadata (run.json), version 1"""

    schema: Literal["mpi-overlap/run"]
    schema_version: Literal[1]
    benchmark: str
    run_id: str
    toolchain: RunToolchain
    ranks: Annotated[int, Meta(ge=1)]
    command: list[str]
    launcher: Annotated[
        RunLauncher | UnsetType,
        Meta(
            description=(
                "what started the ranks and why: the user's --launcher; inside a "
                "Slurm allocation srun, or Hydra's Slurm launcher for the MPICH wheel"
                " (issue 39); else this machine's mpiexec"
            )
        ),
    ] = UNSET
    env_overrides: dict[str, str] | UnsetType = UNSET
    nodes: Annotated[
        Annotated[int, Meta(ge=1)] | UnsetType,
        Meta(
            description=(
                "--nodes: the ranks were spread over this many nodes (srun -N); "
                "absent when not asked"
            )
        ),
    ] = UNSET
    started_utc: str
    finished_utc: str | None
    elapsed_s: float | None
    status: Annotated[
        Literal["running", "complete", "partial", "timeout", "failed", "interrupted"],
        Meta(
            description=(
                "complete: the benchmark finished; partial: it stopped early but left"
                " results; timeout: killed at the time limit (results so far kept); "
                "failed: non-zero exit; interrupted: stopped by the user"
            )
        ),
    ]
    returncode: int | None
    message: str | None
    timeout_s: float | UnsetType | None = UNSET
    host_load: Annotated[
        HostLoad | UnsetType | None,
        Meta(
            description=(
                "what else ran on the machine while the job ran (launches of a "
                "multi-launch run: the busiest); null where /proc cannot be read"
            )
        ),
    ] = UNSET
    threads: Annotated[
        Threads | UnsetType | None,
        Meta(
            description=(
                "how many of the job's threads ran on how many cores while it ran "
                "(launches of a multi-launch run: the most oversubscribed); null "
                "where /proc cannot be read"
            )
        ),
    ] = UNSET
    guard: Annotated[
        RunGuard | UnsetType,
        Meta(
            description=(
                "the run-level verdict from threads and host_load (run_guard.py): "
                "oversubscribed (more active threads than cores: overlap and cost "
                "figures are withheld), disturbed (other processes took CPU time) or "
                "ok"
            )
        ),
    ] = UNSET
    xfer_table: Annotated[
        RunXferTable | UnsetType,
        Meta(
            description=(
                "the transfer-time table a profiled run used: when it was made, "
                "whether this run made it, and then the run-level verdict of that "
                "calibration (table_note.py)"
            )
        ),
    ] = UNSET
    replicate: Annotated[
        RunReplicate | UnsetType,
        Meta(
            description=(
                "one of K launches of the same benchmark and setting (--launches K); "
                "the report compares the launches of a group (replication.py)"
            )
        ),
    ] = UNSET


class Provenance(Document, kw_only=True, forbid_unknown_fields=True):
    tool_version: str
    date_utc: Annotated[str, Meta(description="ISO 8601, UTC, when the benchmark started")]
    mpi_library_version: Annotated[str, Meta(description="MPI_Get_library_version, verbatim")]
    mpi_standard_version: Annotated[str, Meta(description="MPI_Get_version as major.minor")]
    toolchain: Annotated[
        str, Meta(description="name of the mpi-overlap toolchain, or 'unknown' when run by hand")
    ]
    launcher: Annotated[
        str, Meta(description="the launch command line, as given by the runner, or 'unknown'")
    ]
    ranks: Annotated[int, Meta(ge=1)]
    hosts: Annotated[list[str], Meta(description="MPI_Get_processor_name per rank")]
    cpu_binding: Annotated[
        list[str],
        Meta(description="per rank: the CPUs its affinity mask allows, as a list like '0-1,4'"),
    ]
    mpi_env: Annotated[
        dict[str, str],
        Meta(
            description=(
                "environment variables (rank 0) that change MPI behaviour: MPICH_*, "
                "MPIR_CVAR_*, HYDRA_*, OMPI_*, PMIX_*, PRTE_*, I_MPI_*, FI_*, UCX_*, "
                "PSM2_*, MV2_*, SLURM_CPU_BIND*"
            )
        ),
    ]
    command_line: list[str]
    compiler: str
    meta: Annotated[
        dict[str, str] | UnsetType, Meta(description="other --meta KEY=VALUE pairs from the runner")
    ] = UNSET


class HarnessTimer(Document, kw_only=True, forbid_unknown_fields=True):
    clock: str
    resolution_ns: Annotated[float, Meta(description="clock_getres")]
    measured_tick_ns: Annotated[
        float, Meta(description="smallest non-zero difference between consecutive reads")
    ]
    read_overhead_ns: Annotated[float, Meta(description="median cost of one timer read")]


class Stats(Document, kw_only=True, forbid_unknown_fields=True):
    """Summary of n samples. ci95 is the 95 % confidence interval of the mean (Student t); with
    n < 2 it equals [mean, mean]."""

    n: Annotated[int, Meta(ge=0)]
    min: float | None
    median: float | None
    mean: float | None
    max: float | None
    stdev: float | None
    ci95_low: float | None
    ci95_high: float | None


class HarnessWork(Document, kw_only=True, forbid_unknown_fields=True):
    """The calibrated work loop: work(units) is a dependent arithmetic chain the compiler
    cannot remove."""

    units_per_us: Annotated[float, Meta(gt=0)]
    calibration: Annotated[Stats, Meta(description="units/us over the calibration samples")]
    stable: Annotated[
        bool,
        Meta(
            description=(
                "false when the calibration samples vary by more than the stability "
                "limit, or the rate drifted by the end of the run"
            )
        ),
    ]
    recheck_units_per_us: Annotated[
        float | None, Meta(description="rate measured again at the end of the run")
    ]
    drift: Annotated[float | None, Meta(description="relative change recheck/units_per_us - 1")]


class Harness(Document, kw_only=True, forbid_unknown_fields=True):
    timer: HarnessTimer
    work: Annotated[
        HarnessWork,
        Meta(
            description=(
                "The calibrated work loop: work(units) is a dependent arithmetic "
                "chain the compiler cannot remove."
            )
        ),
    ]
    options: Annotated[dict[str, Any], Meta(description="every option in force, after defaults")]


class Result(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap benchmark result, version 1: Written by every native benchmark (rank 0). The
    envelope (provenance, harness) is common; 'results' is defined per benchmark in
    bench-<name>-v1.schema.json."""

    schema: Literal["mpi-overlap/result"]
    schema_version: Literal[1]
    benchmark: Annotated[str, Meta(pattern="^[a-z][a-z0-9-]*$")]
    status: Annotated[
        Literal["running", "complete"],
        Meta(
            description=(
                "'running' while the benchmark is still writing (file rewritten after"
                " every completed unit of work), 'complete' at the end. A file left "
                "as 'running' was cut short."
            )
        ),
    ]
    provenance: Provenance
    harness: Harness
    results: dict[str, Any]
    warnings: list[str]


MODELS: dict[str, Any] = {
    "host-load-v1": HostLoad,
    "threads-v1": Threads,
    "run-v1": Run,
    "result-v1": Result,
}
register(MODELS)
