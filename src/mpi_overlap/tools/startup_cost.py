"""What `mpi-overlap profile` costs beyond its program's launch: a benchmark, not a test.

`python -m mpi_overlap.tools.devtools profile-startup [--reps K] [--ranks N] [--json FILE]
[-- PROGRAM ARGS]` (`make bench-profile-startup`) times, in K interleaved pairs (bare
first, then profiled first, ...), the program's launch without the profiler — the same
command `--compare-bare` times, the toolchain's launcher starting `env PROGRAM ARGS` — and
the whole `mpi-overlap -q profile -n N --out TMP -- PROGRAM ARGS` command in a child
process, as a user types it: the interpreter's start, the imports, the launch with the
profiler, the collection, the analysis and the report. Per pair it reports both wall
times and their difference, and from run.json the profiled launch's own time, so the
difference splits into the launch's (the profiler inside the ranks) and the command's
(start-up, analysis, report). Beside the wall times, the CPU time of each (user + system,
its processes and the ranks), which a loaded machine stretches less. The package's
bytecode is compiled first, as an installed package has it (report_scale.py). Issue 38
asks the difference to be at most 1 s for a 0.5 s program on an idle machine (median of
5); the machine's load average goes with the figures, which mean little on a loaded
machine and are never asserted by a test.

Default program: profiled_app post-compute-wait 65536 100 from the default toolchain's
build (about 0.6 s on 2 ranks), the program the issue was measured with.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..core.file_output import write_json
from ..core.json_input import read_json
from ..core.values import num
from ..platform.toolchains import get_toolchain
from ..run.launch import launch_command
from .report_scale import _cli, _installed_like_env

DEFAULT_ARGS = ["post-compute-wait", "65536", "100"]
DEFAULT_REPS = 5


@dataclass
class Pair:
    rep: int
    bare_s: float  # the program's launch without the profiler
    profile_s: float  # the whole `mpi-overlap profile` command
    launch_s: float | None  # the profiled launch inside it (run.json elapsed_s)
    bare_cpu_s: float  # user + system time of the bare launch, ranks included
    profile_cpu_s: float  # the same of the profile command

    @property
    def added_s(self) -> float:
        return self.profile_s - self.bare_s


def _timed(cmd: list[str], env: dict[str, str], what: str, log: Path) -> tuple[float, float]:
    """(wall s, CPU s) of `cmd`; os.wait4 gives the child's resource usage with that of
    the processes it waited for (the launcher's ranks). Its errors go to `log`."""
    start = time.perf_counter()
    with open(log, "wb") as errors:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        lines = log.read_text(errors="replace").strip().splitlines() or ["no output"]
        raise UserError(f"{what} failed with status {proc.returncode}: {lines[-1]}")
    return took, usage.ru_utime + usage.ru_stime


def _launch_s(out: Path) -> float | None:
    """The profiled launch's wall time, from the one run directory under `out`."""
    for meta in out.glob("*/run.json"):
        return num(read_json(meta).get("elapsed_s"))
    return None


def measure(app: list[str], reps: int, ranks: int, toolchain: str | None = None) -> list[Pair]:
    tc = get_toolchain(toolchain)
    bare = launch_command(tc, ranks, ["env", *app])
    installed = _installed_like_env()
    env = dict(installed, **tc.environment())
    pairs = []
    with tempfile.TemporaryDirectory(prefix="mo-startup-") as tmp:
        for rep in range(reps):
            out = Path(tmp) / f"rep{rep:02d}"
            profile = [*_cli(), "-q", "profile", "--mpi", tc.name, "-n", str(ranks),
                       "--out", str(out), "--", *app]
            times: dict[str, tuple[float, float]] = {}
            # interleaved: bare first in even pairs, profiled first in odd ones
            order = ("bare", "profile") if rep % 2 == 0 else ("profile", "bare")
            for which in order:
                cmd = bare if which == "bare" else profile
                times[which] = _timed(cmd, env if which == "bare" else installed,
                                      f"the {which} launch", Path(tmp) / f"{which}.log")
            pairs.append(Pair(rep, times["bare"][0], times["profile"][0], _launch_s(out),
                              times["bare"][1], times["profile"][1]))
            shutil.rmtree(out, ignore_errors=True)
    return pairs


def summary(pairs: list[Pair]) -> dict[str, Any]:
    def med(values: list[float]) -> float:
        return statistics.median(values)

    launches = [p.launch_s for p in pairs if p.launch_s is not None]
    return {
        "pairs": len(pairs),
        "bare_s": med([p.bare_s for p in pairs]),
        "profile_s": med([p.profile_s for p in pairs]),
        "added_s": med([p.added_s for p in pairs]),
        "ratio": med([p.profile_s / p.bare_s for p in pairs]),
        "added_cpu_s": med([p.profile_cpu_s - p.bare_cpu_s for p in pairs]),
        # the command beyond its own profiled launch: start-up, analysis, report
        "command_beyond_launch_s": med([p.profile_s - p.launch_s for p in pairs
                                        if p.launch_s is not None]) if launches else None,
    }


def _default_app() -> list[str]:
    from ..platform.build import build_dir_for

    program = build_dir_for(get_toolchain(None)) / "tests" / "profiled_app"
    if not program.is_file():
        raise UserError(f"{program} not found: build the default toolchain first (run any "
                        "`mpi-overlap profile`, or give a program after --)")
    return [str(program), *DEFAULT_ARGS]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m mpi_overlap.tools.devtools profile-startup",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--mpi", default=None, help="toolchain (default: mpich)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.reps < 1 or args.ranks < 1:
        raise UserError("--reps and --ranks must be at least 1")
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    app = program or _default_app()
    load_before = os.getloadavg()[0]
    pairs = measure(app, args.reps, args.ranks, args.mpi)
    load_after = os.getloadavg()[0]
    figures = summary(pairs)
    print(f"program: {' '.join(app)} ({args.ranks} ranks); load average "
          f"{load_before:.2f} before, {load_after:.2f} after, {os.cpu_count()} CPUs")
    print(f"{'pair':>4} {'bare s':>8} {'profile s':>10} {'added s':>8} {'launch s':>9} "
          f"{'bare CPU s':>11} {'profile CPU s':>14}")
    for p in pairs:
        launch = f"{p.launch_s:9.3f}" if p.launch_s is not None else f"{'-':>9}"
        print(f"{p.rep:>4} {p.bare_s:8.3f} {p.profile_s:10.3f} {p.added_s:8.3f} {launch} "
              f"{p.bare_cpu_s:11.3f} {p.profile_cpu_s:14.3f}")
    beyond = figures["command_beyond_launch_s"]
    print(f"median: bare {figures['bare_s']:.3f} s, profile {figures['profile_s']:.3f} s, "
          f"added {figures['added_s']:.3f} s ({figures['ratio']:.2f}x); the command beyond "
          f"its profiled launch {'-' if beyond is None else f'{beyond:.3f} s'}; CPU time "
          f"added {figures['added_cpu_s']:.3f} s")
    if args.json:
        write_json(args.json, {"program": app, "ranks": args.ranks,
                               "load_average": [load_before, load_after],
                               "pairs": [dict(asdict(p), added_s=p.added_s) for p in pairs],
                               "median": figures})
    return 0
