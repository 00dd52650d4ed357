"""What the profiler adds to MPI calls made after a computation: a benchmark, not a test.

`python -m mpi_overlap.tools.devtools cold-calls [--reps K] [--mpi NAME] [--sweep-kb N]
[--iterations N] [--hot-iterations N] [--json FILE]` (`make bench-cold-calls`) launches
native/tests/cold_calls on one rank, with and without libmpi_overlap, in K interleaved
pairs (bare first, then profiled first, ...), each pair twice: cold (each iteration first
sweeps N KB, which evicts what the calls left in the caches, as an application's
computation does) and hot (no sweep, as a message-rate loop). The program times each
call of its iteration on its own (a region begin, MPI_Irecv, MPI_Isend, MPI_Waitall, the
region's end); this reports, per call, the bare ns and the ns the profiler adds (profiled
minus bare, the median over the pairs, and the pairs' range).

Why: in a message-rate loop a call's cost is its instructions; in an application it is
the cache lines it fetches again (docs/profiler.md, "Memory and cost", cold calls). The
apps' cost (the profiler's cost benchmark with `--apps`, `study`) needs seconds of launches to
resolve to ±0.5 %; this resolves a call's cold cost to a few ns in under a minute, so a
change to the wrappers' footprint can be measured before and after. Never asserted by a
test: timings.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..core.file_output import write_json
from ..core.procs import run_tool
from ..platform.toolchains import get_toolchain
from ..run.launch import launch_command
from ..run.preload import ProfilerSetup, profiler_library

PARTS = ("region_begin", "irecv", "isend", "waitall", "region_end")
DEFAULT_REPS = 8
DEFAULT_SWEEP_KB = 4096  # twice the L2 of this project's 2-core VMs
DEFAULT_ITERATIONS = 3000  # cold: ~1 s a launch here
DEFAULT_HOT_ITERATIONS = 200_000  # hot: ~0.1 s a launch here
TIMEOUT_S = 300.0


def _run(cmd: list[str], env: dict[str, str], what: str) -> dict[str, float]:
    """The program's per-call ns per iteration, from the last line of its stdout."""
    try:  # run_tool: on a timeout the launcher's ranks are stopped too
        proc = run_tool(cmd, env=env, timeout_s=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what} ran past {TIMEOUT_S:.0f} s") from None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        said = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"{what} failed with status {proc.returncode}: {said}")
    try:
        return {k: float(v) for k, v in json.loads(lines[-1])["ns_per_iteration"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UserError(f"{what} printed no figures: {lines[-1][:200]}") from None


def measure(reps: int, toolchain: str | None, sweep_kb: int, iterations: int,
            hot_iterations: int) -> dict[str, list[dict[str, Any]]]:
    """Per case ("cold", "hot"), one record per pair: the bare and profiled figures."""
    from ..calibration.calibrate import find_or_calibrate
    from ..run.runner import build

    tc = get_toolchain(toolchain)
    bdir = build(tc, None)
    program = bdir / "tests" / "cold_calls"
    if not program.is_file():
        raise UserError(f"{program} was not built")
    # a table for two ranks serves: the figures are the calls' cost, not their bounds
    table = find_or_calibrate(tc, ranks=2)
    env = tc.environment()
    cases = {"cold": (sweep_kb, iterations), "hot": (0, hot_iterations)}
    pairs: dict[str, list[dict[str, Any]]] = {case: [] for case in cases}
    with tempfile.TemporaryDirectory(prefix="mo-cold-calls-") as tmp:
        profiled = ProfilerSetup(library=profiler_library(bdir), table=table,
                                 outdir=Path(tmp), force_table=True)
        for rep in range(reps):
            for case, (kb, n) in cases.items():
                argv = [str(program), str(kb), str(n)]
                commands = {"bare": launch_command(tc, 1, ["env", *argv]),
                            "profiled": launch_command(tc, 1, profiled.wrap(argv))}
                order = ("bare", "profiled") if rep % 2 == 0 else ("profiled", "bare")
                figures = {which: _run(commands[which], env, f"the {case} {which} launch")
                           for which in order}
                pairs[case].append({"rep": rep, **figures})
    return pairs


def summary(pairs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per call: the bare ns (median) and the added ns (median of the pairs' differences,
    with their smallest and largest)."""
    out: dict[str, dict[str, float]] = {}
    for part in (*PARTS, "calls"):
        parts = PARTS if part == "calls" else (part,)
        bare = [sum(p["bare"][q] for q in parts) for p in pairs]
        added = [sum(p["profiled"][q] for q in parts) - b for p, b in zip(pairs, bare, strict=True)]
        out[part] = {"bare_ns": statistics.median(bare), "added_ns": statistics.median(added),
                     "added_min_ns": min(added), "added_max_ns": max(added)}
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m mpi_overlap.tools.devtools cold-calls",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS)
    parser.add_argument("--mpi", default=None, help="toolchain (default: the default one)")
    parser.add_argument("--sweep-kb", type=int, default=DEFAULT_SWEEP_KB)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--hot-iterations", type=int, default=DEFAULT_HOT_ITERATIONS)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.reps < 1 or args.sweep_kb < 1 or args.iterations < 1 or args.hot_iterations < 1:
        raise UserError("--reps, --sweep-kb, --iterations and --hot-iterations must be at "
                        "least 1")
    load_before = os.getloadavg()[0]
    pairs = measure(args.reps, args.mpi, args.sweep_kb, args.iterations, args.hot_iterations)
    load_after = os.getloadavg()[0]
    figures = {case: summary(p) for case, p in pairs.items()}
    print(f"cold_calls on 1 rank, {args.reps} pairs per case; cold: {args.sweep_kb} KB swept "
          f"before each of {args.iterations} iterations, hot: none, {args.hot_iterations} "
          f"iterations; load average {load_before:.2f} before, {load_after:.2f} after, "
          f"{os.cpu_count()} CPUs")
    print(f"{'ns per iteration':<16}" + "".join(
        f" {case + ' bare':>10} {case + ' added':>11} {'(range)':>16}" for case in figures))
    for part in (*PARTS, "calls"):
        cells = [(f, f"[{f['added_min_ns']:+.0f}, {f['added_max_ns']:+.0f}]")
                 for f in (figures[case][part] for case in figures)]
        print(f"{part:<16}" + "".join(f" {f['bare_ns']:10.1f} {f['added_ns']:+11.1f} {r:>16}"
                                      for f, r in cells))
    if args.json:
        write_json(args.json, {"reps": args.reps, "sweep_kb": args.sweep_kb,
                               "iterations": args.iterations,
                               "hot_iterations": args.hot_iterations,
                               "load_average": [load_before, load_after],
                               "pairs": pairs, "summary": figures})
    return 0
