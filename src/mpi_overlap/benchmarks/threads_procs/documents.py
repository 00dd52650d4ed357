"""The threads_procs package's documents as typed models (core/schema.py): bench-threads-
procs-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ...core.schema import Document, register
from ...run.documents import Stats


class LaunchCountsItem(Document, kw_only=True, forbid_unknown_fields=True):
    workers: Annotated[int, Meta(ge=1)]
    msgs_per_s: float | None
    rate: Stats
    samples_msgs_per_s: list[float | None]
    cpu_share_min: Annotated[
        list[float | None],
        Meta(
            description=(
                "per sample: the lowest ratio of a worker's CPU time "
                "(CLOCK_THREAD_CPUTIME_ID) to its wall time; below 1 the worker was "
                "descheduled (a contended core)"
            )
        ),
    ]


class Launch(Document, kw_only=True, forbid_unknown_fields=True):
    workers_kind: Literal["processes", "threads"]
    requested: str
    provided: str
    call: str
    calls_per_worker: Annotated[int, Meta(ge=0)]
    online_cpus: int
    reps_done: Annotated[int, Meta(ge=0)]
    launch: str | UnsetType = UNSET
    launch_env: dict[str, str] | UnsetType = UNSET
    counts: list[LaunchCountsItem]


class BenchThreadsProcs(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the threads-procs benchmark (message rate of 1..k processes against 1..k
    threads): One entry per launch: a launch with --thread-level single measures 1..k
    processes (k = ranks), one with --thread-level multiple measures 1..k threads of rank 0.
    A sample for c workers: each worker times calls_per_worker calls of MPI_Send(0 B,
    MPI_PROC_NULL); rate = c * calls_per_worker / slowest worker's time. msgs_per_s is the
    median of the samples. The harness merges the launches of one run (launch, launch_env)."""

    launches: list[Launch]


MODELS: dict[str, Any] = {
    "bench-threads-procs-v1": BenchThreadsProcs,
}
register(MODELS)
