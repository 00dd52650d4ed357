"""How the report grows with the ranks of a profile: a benchmark, not a test.

`python -m mpi_overlap.devtools report-scale [--ranks 1024,8192] [--source RUN_DIR]` takes
one real profile run (by default a 2-rank profile of mo_halo, made first), makes synthetic
run directories of N ranks from copies of its rank profiles (each copy renumbered; the
run.json says ranks = N and `synthetic`), and times `mpi-overlap report` on each in a
child process: once with the analysis (no analysis.json yet) and once more reusing it.
It reports wall time, the child's peak memory (ru_maxrss) and the sizes of result.json
and report.html, as a table and as JSON (--json FILE). The synthetic directories are
deleted unless --keep is given. Numbers depend on the machine: the table names it.

This is what issue 19 asks a benchmark to report ("report on 8 192 synthetic ranks ...
1 024 ranks ..."); its numbers belong in docs/profiler.md, "Scale", and are never
asserted by a test (the guide: timings are benchmarks, not pass/fail).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import UserError
from .file_output import write_json
from .json_input import read_json

DEFAULT_RANKS = (1024, 8192)
# The program profiled when no --source is given: a halo exchange with regions, several
# call sites and both blocking and non-blocking calls, so its rank profiles are typical.
SOURCE_PROGRAM = "mo_halo"


@dataclass(frozen=True)
class Timing:
    ranks: int
    phase: str  # "analyse and report" or "report again"
    wall_s: float
    peak_mib: float
    result_mib: float
    report_html_mib: float
    rc: int


def _cli() -> list[str]:
    return [sys.executable, "-m", "mpi_overlap.cli"]


def make_source(workdir: Path) -> Path:
    """A 2-rank profile run of SOURCE_PROGRAM on the default toolchain, in workdir."""
    from .build import ensure_built
    from .toolchains import DEFAULT_TOOLCHAIN, get_toolchain

    program = ensure_built(get_toolchain(DEFAULT_TOOLCHAIN)) / "bench" / SOURCE_PROGRAM
    out = workdir / "source"
    proc = subprocess.run([*_cli(), "--quiet", "profile", "-n", "2", "--out", str(out), "--",
                           str(program)], capture_output=True, text=True, check=False,
                          cwd=workdir)  # the program writes its own mo_halo.json there
    runs = sorted(p for p in out.glob("*") if (p / "result.json").is_file())
    if proc.returncode != 0 or not runs:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise UserError(f"the source profile of {SOURCE_PROGRAM} failed: {tail[0]}")
    return runs[-1]


def synthesize(source: Path, ranks: int, out: Path) -> None:
    """A run directory of `ranks` ranks whose profiles are copies of the source's, in turn."""
    result = read_json(source / "result.json")
    base = result.get("ranks") or []
    if result.get("benchmark") != "profile" or not base:
        raise UserError(f"{source}: not a profile run with rank profiles")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # Rank documents are written one by one into the array: a copy of 8 192 parsed rank
    # documents would be the very memory this benchmark measures in the report.
    head = dict(result, ranks=[], ranks_expected=ranks, missing_ranks=[])
    head_text = json.dumps(head)
    marker = '"ranks": []'
    if marker not in head_text:
        raise UserError(f"{source}: result.json has no rank list to fill")
    before, after = head_text.split(marker, 1)
    with open(out / "result.json", "w", encoding="utf-8") as fh:
        fh.write(before + '"ranks": [')
        for i in range(ranks):
            doc = dict(base[i % len(base)], rank=i, size=ranks)  # shallow: only these two
            fh.write(("," if i else "") + json.dumps(doc))
        fh.write("]" + after)
    meta = read_json(source / "run.json")
    meta["ranks"] = ranks
    meta["synthetic"] = f"{ranks} copies of the rank profiles of {source}"
    write_json(out / "run.json", meta)


def _timed_report(run_dir: Path) -> tuple[float, float, int]:
    """(wall s, peak MiB, exit status) of `mpi-overlap report run_dir` in a child, whose
    errors go to run_dir/report-stderr.log (a pipe nobody reads could fill and block it).
    os.wait4 rather than Popen.wait: it returns the child's own resource usage."""
    t0 = time.perf_counter()
    with open(run_dir / "report-stderr.log", "wb") as errors:
        proc = subprocess.Popen([*_cli(), "report", str(run_dir)],
                                stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024.0, proc.returncode


def _mib(path: Path) -> float:
    return path.stat().st_size / 2**20 if path.is_file() else 0.0


def measure(source: Path, ranks: list[int], workdir: Path, *, keep: bool = False
            ) -> list[Timing]:
    timings: list[Timing] = []
    for n in ranks:
        run_dir = workdir / f"ranks-{n}"
        synthesize(source, n, run_dir)
        for phase in ("analyse and report", "report again"):
            wall, peak, rc = _timed_report(run_dir)
            timings.append(Timing(n, phase, wall, peak, _mib(run_dir / "result.json"),
                                  _mib(run_dir / "report.html"), rc))
        if not keep:  # one at a time: 8 192 ranks take a quarter of a gigabyte
            shutil.rmtree(run_dir, ignore_errors=True)
    return timings


def machine() -> str:
    return f"{platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}"


def render(timings: list[Timing], source: Path) -> str:
    lines = [f"report on synthetic ranks (copies of {source}); {machine()}",
             f"{'ranks':>7}  {'phase':<20} {'wall s':>8} {'peak MiB':>9} "
             f"{'result MiB':>10} {'html MiB':>9}"]
    for t in timings:
        failed = "" if t.rc == 0 else f"  (exit {t.rc}; --keep keeps its report-stderr.log)"
        lines.append(f"{t.ranks:>7}  {t.phase:<20} {t.wall_s:>8.2f} {t.peak_mib:>9.0f} "
                     f"{t.result_mib:>10.1f} {t.report_html_mib:>9.1f}{failed}")
    return "\n".join(lines)


def _parse_ranks(text: str) -> list[int]:
    try:
        ranks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(
            f"--ranks takes whole numbers separated by commas (got '{text}')") from None
    if not ranks or min(ranks) < 1:
        raise UserError(f"--ranks takes positive numbers (got '{text}')")
    return ranks


def main(argv: list[str]) -> int:
    """devtools report-scale [--ranks N,N] [--source RUN_DIR] [--json FILE] [--keep]"""
    parser = argparse.ArgumentParser(prog="devtools report-scale",
                                     description="Time the report on synthetic ranks.")
    parser.add_argument("--ranks", default=",".join(map(str, DEFAULT_RANKS)),
                        help="rank counts, comma-separated")
    parser.add_argument("--source", type=Path, help="a profile run directory to copy")
    parser.add_argument("--json", type=Path, help="also write the timings here")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic runs")
    args = parser.parse_args(argv)
    ranks = _parse_ranks(args.ranks)
    workdir = Path(tempfile.mkdtemp(prefix="mpi-overlap-report-scale-"))
    try:
        source = args.source or make_source(workdir)
        if not (source / "result.json").is_file():
            raise UserError(f"{source}: not a run directory with a result.json")
        timings = measure(source, ranks, workdir, keep=args.keep)
        print(render(timings, source))
        if args.json:
            write_json(args.json, {"machine": machine(), "source": str(source),
                                   "timings": [asdict(t) for t in timings]})
        return 0 if all(t.rc == 0 for t in timings) else 1
    finally:
        if args.keep:
            print(f"kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
