"""A benchmark run made of several launches of one program (a setting that MPI fixes at
MPI_Init: the thread level, an environment variable such as MPIR_CVAR_ERROR_CHECKING).

Each launch gets a subdirectory (`launch-<i>-<name>/`: its stdout/stderr and result);
the run directory's result.json is the first launch's document whose `results.launches`
array is the concatenation of every launch's `results.launches`, each entry tagged with
its launch name and environment. The run is complete only when every launch is.
"""

from __future__ import annotations

import copy

from ..core.errors import UserError
from ..core.machine_load import busiest
from ..core.ui import Ui
from ..platform.build import executable
from ..platform.toolchains import Toolchain
from .launch import launch_command, run_job
from .run_kind import Benchmark, Launch
from .rundir import RESULT_FILE, Run, begin_run, new_run_dir, write_json_atomic
from .runner import (
    RunOptions,
    build,
    finish_run,
    initial_run_meta,
    join_message,
    program_argv,
    read_result,
    settle_result,
)
from .slurm_launch import requested_nodes
from .thread_census import most_active


def merge_results(parts: list[tuple[Launch, dict | None]]) -> dict | None:
    """One result document from the launches' documents (None when none wrote one)."""
    docs = [(launch, doc) for launch, doc in parts if doc is not None]
    if not docs:
        return None
    merged = copy.deepcopy(docs[0][1])
    entries = []
    warnings: list[str] = []
    for launch, doc in docs:
        for entry in (doc.get("results") or {}).get("launches") or []:
            entries.append({**entry, "launch": launch.name, "launch_env": dict(launch.env)})
        warnings += [f"{launch.name}: {w}" for w in doc.get("warnings") or []]
    merged["results"] = {"launches": entries}
    merged["warnings"] = warnings
    complete = len(docs) == len(parts) and all(d.get("status") == "complete" for _, d in docs)
    merged["status"] = "complete" if complete else "running"  # "running": cut short
    return merged


def run_launches(
    bench: Benchmark, tc: Toolchain, bench_args: list[str], opts: RunOptions, ui: Ui
) -> Run:
    assert bench.launches is not None
    launches = bench.launches(opts.ranks, opts.quick)
    # Refuse a bad launcher or placement before spending minutes on a build (and before
    # a run directory exists that nothing would fill).
    nodes = requested_nodes()
    for launch in launches:
        if nodes is not None and (launch.ranks or opts.ranks) < nodes:
            raise UserError(f"{bench.name}: its '{launch.name}' launch starts "
                            f"{launch.ranks or opts.ranks} rank(s), which cannot be spread over "
                            f"--nodes {nodes}: it measures on one node (run it without --nodes)")
    launcher_prefix = launch_command(tc, opts.ranks, [], opts.launcher)
    bdir = build(tc, ui)
    run_dir = new_run_dir(opts.out_base, bench.name, tc.name)
    cmds = []
    for i, launch in enumerate(launches):
        sub = run_dir / f"launch-{i + 1}-{launch.name}"
        sub.mkdir(parents=True, exist_ok=True)
        argv = program_argv(
            executable(bdir, bench.program), [*bench_args, *launch.args], sub / RESULT_FILE, tc,
            launcher_prefix, progress=True,
            meta=[f"launch={launch.name}"] + ([f"label={opts.label}"] if opts.label else []),
        )
        cmds.append((launch, sub, launch_command(tc, launch.ranks or opts.ranks, argv,
                                                 opts.launcher)))
    meta = initial_run_meta(bench.name, tc, opts, cmds[0][2], run_dir)
    meta["launches"] = [
        {"name": launch.name, "command": cmd, "env": dict(launch.env)} for launch, _, cmd in cmds
    ]
    begin_run(run_dir, meta)

    status, message, rc, elapsed = "complete", None, 0, 0.0
    parts: list[tuple[Launch, dict | None]] = []
    loads: list[dict] = []
    censuses: list[dict] = []
    for i, (launch, sub, cmd) in enumerate(cmds):
        env = tc.environment()
        env.update(opts.env_overrides)
        env.update(dict(launch.env))
        what = f"{bench.name} ({tc.name}, launch {i + 1}/{len(cmds)}: {launch.name})"
        with ui.progress(what) as progress:
            outcome = run_job(cmd, env, sub, timeout_s=opts.timeout_s, progress=progress)
        elapsed += outcome.elapsed_s
        if outcome.host_load:
            loads.append(outcome.host_load)
        if outcome.threads:
            censuses.append(outcome.threads)
        doc, problem = read_result(sub / RESULT_FILE, None)
        parts.append((launch, doc))
        if problem:
            message = join_message(message, f"launch {launch.name}: {problem}")
        if outcome.status != "complete":
            status, rc = outcome.status, outcome.returncode
            message = join_message(message, f"launch {launch.name}: {outcome.message}")
            break
    result = merge_results(parts)
    if result is not None:
        write_json_atomic(run_dir / RESULT_FILE, result)
    status, message, errors = settle_result(
        bench, result, run_dir, status, message, who="a launch"
    )
    return finish_run(run_dir, meta, status=status, message=message, returncode=rc,
                      elapsed_s=elapsed, schema_errors=errors, host_load=busiest(loads),
                      threads=most_active(censuses))


__all__ = ["merge_results", "run_launches"]
