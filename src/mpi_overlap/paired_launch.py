"""One launch of a native program, with or without libmpi_overlap preloaded, in its own
subdirectory: the building block of the runs that compare a program with and without
the profiler (profiler_overhead.py, study.py).

A launch records what else ran on the machine meanwhile (busy CPU time that is not ours,
and steal time), because on a shared machine that, not the profiler, often decides the
difference between two launches.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .benchmarks.registry import Benchmark
from .errors import UserError
from .launch import launch_command, run_job
from .rundir import RESULT_FILE, Run, read_json, write_json_atomic
from .runner import (
    analyze_result,
    finish_run,
    join_message,
    program_argv,
    schema_failure,
)
from .schema import result_errors
from .toolchains import Toolchain

# A launch is "disturbed" when other processes (or the hypervisor, as steal time) used more
# than this share of the machine's CPU time while it ran: the ranks then lose CPU to them
# and every timing of the launch is off by an unknown amount. Background daemons use
# well under 1 %.
DISTURBED_SHARE = 0.02


def _host_counters() -> tuple[float, float, float] | None:
    """(busy CPU s of the whole machine, steal s, CPU s of our finished children)."""
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()
        v = [int(x) for x in fields[1:9]]
        hz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    t = os.times()
    # user nice system idle iowait irq softirq steal
    return ((v[0] + v[1] + v[2] + v[5] + v[6]) / hz, v[7] / hz,
            t.children_user + t.children_system)


def host_load(before: tuple[float, float, float] | None,
              after: tuple[float, float, float] | None, wall_s: float) -> dict[str, Any] | None:
    """What else ran on the machine during a launch: busy CPU time not ours (the launcher
    and every rank are waited-for children, so theirs is in os.times)."""
    if before is None or after is None or wall_s <= 0:
        return None
    cpus = os.cpu_count() or 1
    busy, steal, own = (a - b for a, b in zip(after, before, strict=True))
    foreign = max(0.0, busy - own)
    return {
        "cpus": cpus,
        "busy_cpu_s": round(busy, 3),
        "own_cpu_s": round(own, 3),
        "foreign_cpu_s": round(foreign, 3),
        "steal_s": round(steal, 3),
        "foreign_share": round((foreign + steal) / (wall_s * cpus), 5),
    }


@dataclass
class LaunchSetup:
    """What every launch of one run shares."""

    tc: Toolchain
    ranks: int
    launcher: str | None
    prefix: list[str]  # the launcher, for --meta
    library: Path  # libmpi_overlap
    table: Path  # the transfer-time table the profiled launches use
    timeout_s: float | None
    extra_env: dict[str, str] = field(default_factory=dict)


@dataclass
class LaunchOutcome:
    record: dict[str, Any]  # command, status, returncode, message, elapsed_s, host, disturbed
    result: dict[str, Any] | None  # the program's result.json when it wrote a valid one
    argv: list[str]  # the rank command without the profiler


def launch(setup: LaunchSetup, exe: Path, args: list[str], sub: Path, *, profiled: bool,
           meta: list[str]) -> LaunchOutcome:
    """Run `exe args` on setup.ranks ranks in the new directory `sub`; with the profiler,
    its rank profiles land there too (profiling/collect.py reads them)."""
    from .profiling.preload import ProfilerSetup

    sub.mkdir()
    argv = program_argv(exe, args, sub / RESULT_FILE, setup.tc, setup.prefix, meta=meta)
    if profiled:
        rank_cmd = ProfilerSetup(library=setup.library, table=setup.table, outdir=sub).wrap(argv)
    else:
        rank_cmd = ["env", *argv]  # the same exec chain as the profiled launch
    cmd = launch_command(setup.tc, setup.ranks, rank_cmd, setup.launcher)
    env = setup.tc.environment()
    env.update(setup.extra_env)
    before = _host_counters()
    outcome = run_job(cmd, env, sub, timeout_s=setup.timeout_s)
    host = host_load(before, _host_counters(), outcome.elapsed_s)
    status, message = outcome.status, outcome.message
    result = None
    path = sub / RESULT_FILE
    try:
        result = read_json(path) if path.is_file() else None
    except UserError as err:
        message = join_message(message, str(err))
    if result is None:
        if status == "complete":
            status = "failed"
        message = (message or "the program ended") + "; it wrote no results"
    else:
        errors = result_errors(result)
        if errors:
            status, message = schema_failure(errors, status, message)
            result = None
        elif status == "complete" and result.get("status") != "complete":
            status, message = "partial", "the program exited without finishing its results"
    record = {
        "command": cmd,
        "status": status,
        "returncode": outcome.returncode,
        "message": message,
        "elapsed_s": round(outcome.elapsed_s, 6),
        "host": host,
        "disturbed": bool(host and host["foreign_share"] > DISTURBED_SHARE),
    }
    return LaunchOutcome(record=record, result=result, argv=argv)


def collect_profile(sub: Path, setup: LaunchSetup, argv: list[str]) -> dict[str, Any]:
    """The profile-run document of a profiled launch's rank profiles."""
    from .profiling.collect import collect

    return collect(sub, ranks_expected=setup.ranks, app_argv=argv, cwd=os.getcwd(),
                   table=setup.table, forced=False, bins=None)


def finish_launches(bench: Benchmark, run_dir: Path, meta: dict[str, Any], doc: dict[str, Any],
                    stop: dict[str, Any] | None, started: float) -> Run:
    """End a run made of launches: result.json's status (with why it stopped early, when
    launch record `stop` did not complete), its schema check and analysis, then run.json.
    A stopped run takes the launch's timeout/failed/interrupted status, else is partial; a
    result that fails its schema makes a complete run failed. `started`: time.monotonic()."""
    if stop is not None:
        doc["status"] = "incomplete"
        doc["warnings"].append(f"stopped after {stop['dir']}: {stop['status']}"
                               + (f" ({stop['message']})" if stop["message"] else ""))
    else:
        doc["status"] = "complete"
    write_json_atomic(run_dir / RESULT_FILE, doc)
    errors, _ = analyze_result(bench, doc, run_dir)
    status, message, rc = "complete", None, 0
    if stop is not None:
        status = stop["status"] if stop["status"] in ("timeout", "failed", "interrupted") \
            else "partial"
        message = f"launch {stop['dir']} {stop['status']}" + (
            f": {stop['message']}" if stop["message"] else "")
        rc = stop["returncode"]
    if errors:
        status, message = schema_failure(errors, status, message)
    return finish_run(run_dir, meta, status=status, message=message, returncode=rc,
                      elapsed_s=time.monotonic() - started, schema_errors=errors)
