"""One launch of a native program, with or without libmpi_overlap preloaded, in its own
subdirectory: the building block of the runs that compare a program with and without
the profiler (the profiler's cost and the case studies: their packages' run.py).

A launch records what else ran on the machine meanwhile (machine_load.py), because on a
shared machine that, not the profiler, often decides the difference between two launches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.documents import result_errors
from ..core.errors import UserError
from ..platform.toolchains import Toolchain
from .launch import launch_command, run_job
from .run_kind import Benchmark
from .rundir import RESULT_FILE, Run, read_json, write_json_atomic
from .runner import (
    analyze_result,
    finish_run,
    join_message,
    program_argv,
    schema_failure,
)


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
           meta: list[str], callsites: bool = True,
           env_extra: dict[str, str] | None = None) -> LaunchOutcome:
    """Run `exe args` on setup.ranks ranks in the new directory `sub`; with the profiler,
    its rank profiles land there too (profile/documents/collect.py reads them); `callsites` False
    turns its call-site tables off; `env_extra` is set for this launch alone (a setting of
    the profiler that one launch of a repetition measures)."""
    from .preload import ProfilerSetup

    sub.mkdir()
    argv = program_argv(exe, args, sub / RESULT_FILE, setup.tc, setup.prefix, meta=meta)
    if profiled:
        rank_cmd = ProfilerSetup(library=setup.library, table=setup.table, outdir=sub,
                                 callsites=callsites).wrap(argv)
    else:
        rank_cmd = ["env", *argv]  # the same exec chain as the profiled launch
    cmd = launch_command(setup.tc, setup.ranks, rank_cmd, setup.launcher)
    env = setup.tc.environment()
    env.update(setup.extra_env)
    env.update(env_extra or {})
    outcome = run_job(cmd, env, sub, timeout_s=setup.timeout_s)
    host = outcome.host_load
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
        "disturbed": bool(host and host["disturbed"]),
    }
    return LaunchOutcome(record=record, result=result, argv=argv)


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
