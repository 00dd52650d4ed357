"""How the report grows with the ranks of a profile: a benchmark, not a test.

`python -m mpi_overlap.tools.devtools report-scale [--ranks 1024,8192] [--source RUN_DIR]
[--form statistics,documents]` takes one real profile run (by default a 2-rank profile of
mo_halo, made first), makes synthetic run directories of N ranks from copies of its rank
profiles (each copy renumbered; the run.json says ranks = N and `synthetic`), held as the
job's statistics alone (--form statistics, the default: what jobs of more than 8 ranks
leave) or as every rank's document, and times `mpi-overlap report` on each in a
child process: once with the analysis (no analysis.json yet) and once more reusing it,
with the package's bytecode compiled beforehand, as an installed package has it.
It reports wall time, the child's peak memory (ru_maxrss) and the sizes of result.json
and report.html, as a table and as JSON (--json FILE). The synthetic directories are
deleted unless --keep is given. Numbers depend on the machine: the table names it.

`--real 2,4,...,64` adds real profile runs of the same program at those rank counts,
oversubscribed on this machine's cores, on the machine's transfer-time table as it is (no
collective calibration per size: its sizes are priced by the size model): per run the
wall time of the whole `profile` command, the files the profiler left (the job's
statistics, the job file and any per-rank files: how many, MiB), rank 0's gather into the
job file and its reduction of the job's statistics, the size of
result.json and the report's time and peak memory. Oversubscribed ranks share the
cores, so the program's own time grows with them; the files and the report are what
grows with the job wherever it runs.

This is what issue 19 asks a benchmark to report ("report on 8 192 synthetic ranks ...
1 024 ranks ...", "real runs of up to 64 oversubscribed ranks here"); its numbers belong
in docs/profiler.md, "Many ranks", and are never asserted by a test (the guide: timings
are benchmarks, not pass/fail).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..core.file_output import write_json
from ..core.json_input import read_json
from ..run.result_file import write_profile_result

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
    form: str = "statistics"  # what result.json holds: FORMS


# What a synthetic run holds: the job's statistics alone, as a job of more than 8 ranks
# leaves them by default (profile.stats.json in result.json's job_stats, no rank
# document), or every rank's document (profile --documents).
FORMS = ("statistics", "documents")


@dataclass(frozen=True)
class RealRun:
    ranks: int
    profile_wall_s: float   # the whole `profile` command: launch, program, collection
    profile_files: int      # what the profiler left: profile.job.jsonl, profile.rank-N.json
    profile_files_mib: float
    result_mib: float
    report_wall_s: float    # `report` with the analysis, as in the synthetic runs
    report_peak_mib: float
    rc: int                 # the first non-zero exit status of the two commands, or 0
    error: str = ""         # why, in one line, when rc is not 0
    gather_s: float | None = None  # rank 0's gather into the job file (result.json job_file)
    reduce_s: float | None = None  # the job's statistics reduced to rank 0 (job_stats)


def _cli() -> list[str]:
    return [sys.executable, "-m", "mpi_overlap.cli"]


def _program() -> Path:
    """SOURCE_PROGRAM built for the default toolchain."""
    from ..platform.build import ensure_built
    from ..platform.toolchains import DEFAULT_TOOLCHAIN, get_toolchain

    return ensure_built(get_toolchain(DEFAULT_TOOLCHAIN)) / "bench" / SOURCE_PROGRAM


def _profile(out: Path, ranks: int, *extra: str, program: Path | None = None,
             limit_s: float | None = None) -> tuple[Path | None, int, str]:
    """`mpi-overlap profile -n ranks [extra] -- SOURCE_PROGRAM` into out: (its run
    directory or None, exit status, last line of its errors, which are kept in
    out/profile-stderr.log). With limit_s, `profile --timeout` stops the program then and
    keeps what it measured; a command still running a minute later is interrupted like a
    user's Ctrl-C, and so is it when this benchmark is (it stops its job before exiting)."""
    out.mkdir(parents=True, exist_ok=True)
    limit = ["--timeout", f"{limit_s:g}"] if limit_s else []
    argv = [*_cli(), "--quiet", "profile", "-n", str(ranks), *limit, *extra, "--out", str(out),
            "--", str(program or _program())]
    log = out / "profile-stderr.log"
    with open(log, "wb") as errors:  # the program writes its own mo_halo.json into cwd
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors, cwd=out)
        try:
            proc.wait(timeout=limit_s + 60 if limit_s else None)
        except (subprocess.TimeoutExpired, KeyboardInterrupt) as stop:
            proc.send_signal(signal.SIGINT)
            proc.wait()
            if isinstance(stop, KeyboardInterrupt):
                raise
    runs = sorted(p for p in out.glob("*") if (p / "result.json").is_file())
    lines = log.read_text(errors="replace").strip().splitlines()
    return (runs[-1] if runs else None), proc.returncode, (lines[-1:] or ["no output"])[0]


def make_source(workdir: Path) -> Path:
    """A 2-rank profile run of SOURCE_PROGRAM on the default toolchain, in workdir."""
    run, rc, tail = _profile(workdir / "source", 2)
    if rc != 0 or run is None:
        raise UserError(f"the source profile of {SOURCE_PROGRAM} failed: {tail}")
    return run


def real_limit_s(ranks: int) -> float:
    """How long the program may run at `ranks` oversubscribed ranks (64: 6 min; measured
    35 s on 2 cores) before `profile --timeout` stops it."""
    return 60.0 + 5.0 * ranks


def _machine_table() -> Path:
    """The default toolchain's transfer-time table on this machine (measured when missing)."""
    from .. import benchmarks  # noqa: F401  hands the calibration its ping-pong (registry.py)
    from ..calibration.calibrate import find_or_calibrate
    from ..platform.toolchains import DEFAULT_TOOLCHAIN, get_toolchain

    return find_or_calibrate(get_toolchain(DEFAULT_TOOLCHAIN), ranks=2)


def measure_real(ranks: list[int], workdir: Path, *, keep: bool = False,
                 each: Callable[[RealRun], None] | None = None) -> list[RealRun]:
    """Real profile runs of SOURCE_PROGRAM at each rank count (oversubscribed), each with
    its per-rank files, result.json and one report timed; `each` sees every run as it is
    measured (so an interrupted benchmark has printed what it measured)."""
    table, program = _machine_table(), _program()  # outside the timed part
    env = _installed_like_env()
    runs: list[RealRun] = []
    for n in ranks:
        out = workdir / f"real-{n}"
        t0 = time.perf_counter()
        run_dir, rc, tail = _profile(out, n, "--oversubscribe", "--table", str(table),
                                     "--no-report", program=program, limit_s=real_limit_s(n))
        wall = time.perf_counter() - t0
        files = _profile_files(run_dir) if run_dir else []
        report_wall, peak, report_rc = (_timed_report(run_dir, env) if run_dir
                                        else (0.0, 0.0, 1))
        error = (f"profile: {tail}" if rc else "no run directory" if run_dir is None
                 else f"report: see {run_dir / 'report-stderr.log'}" if report_rc else "")
        run = RealRun(n, wall, len(files), sum(_mib(f) for f in files),
                      _mib(run_dir / "result.json") if run_dir else 0.0, report_wall, peak,
                      rc or report_rc, error, *_end_costs(run_dir))
        runs.append(run)
        if each:
            each(run)
        if not keep:
            shutil.rmtree(out, ignore_errors=True)
    return runs


def _profile_files(run_dir: Path) -> list[Path]:
    return sorted([*run_dir.glob("profile.rank-*.json"), *run_dir.glob("profile.job.jsonl"),
                   *run_dir.glob("profile.stats.json")])


def _end_costs(run_dir: Path | None) -> tuple[float | None, float | None]:
    """What the library took at MPI_Finalize, from result.json: the gather into the job
    file and the reduction of the job's statistics (None: not done, or not recorded)."""
    try:
        result = read_json(run_dir / "result.json") if run_dir else {}
    except UserError:
        return None, None
    job, stats = result.get("job_file"), result.get("job_stats")
    return (job.get("gather_s") if isinstance(job, dict) else None,
            stats.get("reduce_s") if isinstance(stats, dict) else None)


def synthesize(source: Path, ranks: int, out: Path, form: str = "documents") -> None:
    """A run directory of `ranks` ranks whose profiles are copies of the source's, in turn:
    their documents, or (form "statistics") the job's statistics made from them as the
    library makes them (profile/documents/stats_file.py) and no document."""
    result = read_json(source / "result.json")
    base = result.get("ranks") or []
    if result.get("benchmark") != "profile" or not base:
        raise UserError(f"{source}: not a profile run with rank profiles")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # Rank documents are written one by one, as `profile` writes them (one per line,
    # result_file.py): a copy of 8 192 parsed rank documents would be the very
    # memory this benchmark measures in the report.
    head = dict(result, ranks=[], ranks_expected=ranks, missing_ranks=[])
    copies = (dict(base[i % len(base)], rank=i, size=ranks)  # shallow: only these two
              for i in range(ranks))
    if form == "statistics":
        from ..profile.documents.stats_file import stats_document

        head.update(job_file=None, job_stats=stats_document(list(copies), ranks, labels=True))
        copies = iter(())
    write_profile_result(out / "result.json", head, copies)
    meta = read_json(source / "run.json")
    meta["ranks"] = ranks
    meta["synthetic"] = (f"{ranks} copies of the rank profiles of {source}"
                         + (", as the job's statistics" if form == "statistics" else ""))
    write_json(out / "run.json", meta)


def _installed_like_env() -> dict[str, str]:
    """The environment of the timed children, with this package's bytecode compiled first
    (into its __pycache__ folders, which git ignores): as pip leaves an installed package.
    Without it a source checkout run with PYTHONDONTWRITEBYTECODE (this machine's default)
    compiles every module it imports on every run, which is not what a user's `report`
    pays (0.1 s of 2 at 1 024 ranks). Not PYTHONPYCACHEPREFIX: under it, every installed
    library's bytecode would be looked for there too, and compiled again."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    package = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], env=env,
                   stdout=subprocess.DEVNULL, check=False)
    return env


def _timed_report(run_dir: Path, env: dict[str, str] | None = None
                  ) -> tuple[float, float, int]:
    """(wall s, peak MiB, exit status) of `mpi-overlap report run_dir` in a child, whose
    errors go to run_dir/report-stderr.log (a pipe nobody reads could fill and block it).
    os.wait4 rather than Popen.wait: it returns the child's own resource usage."""
    t0 = time.perf_counter()
    with open(run_dir / "report-stderr.log", "wb") as errors:
        proc = subprocess.Popen([*_cli(), "report", str(run_dir)],
                                stdout=subprocess.DEVNULL, stderr=errors, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024.0, proc.returncode


def _mib(path: Path) -> float:
    return path.stat().st_size / 2**20 if path.is_file() else 0.0


def measure(source: Path, ranks: list[int], workdir: Path, *, keep: bool = False,
            forms: tuple[str, ...] = ("statistics",)) -> list[Timing]:
    timings: list[Timing] = []
    env = _installed_like_env()
    for n in ranks:
        for form in forms:
            run_dir = workdir / f"ranks-{n}-{form}"
            synthesize(source, n, run_dir, form)
            for phase in ("analyse and report", "report again"):
                wall, peak, rc = _timed_report(run_dir, env)
                timings.append(Timing(n, phase, wall, peak, _mib(run_dir / "result.json"),
                                      _mib(run_dir / "report.html"), rc, form))
        if not keep:  # one at a time: 8 192 ranks take a quarter of a gigabyte
            shutil.rmtree(run_dir, ignore_errors=True)
    return timings


def machine() -> str:
    return f"{platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}"


Columns = list[tuple[str, str]]  # (header, value spec); a header takes its value's width


WIDTH = re.compile(r"[<>^]?\d*")  # the alignment and width at the start of a spec


def _head(title: str, columns: Columns) -> str:
    return f"{title}\n" + " ".join(f"{h:{WIDTH.match(vs).group()}}" for h, vs in columns)


def _row(columns: Columns, values: list[Any], note: str) -> str:
    return " ".join(f"{v:{vs}}" for v, (_, vs) in zip(values, columns, strict=True)) + note


SYNTHETIC_COLUMNS: Columns = [
    ("  ranks", ">8"), ("form", "<11"), ("phase", "<20"), ("wall s", ">8.2f"),
    ("peak MiB", ">9.0f"), ("result MiB", ">10.1f"), ("html MiB", ">9.1f")]
REAL_COLUMNS: Columns = [
    ("  ranks", ">8"), ("profile s", ">9.1f"), ("files", ">6"), ("files MiB", ">9.2f"),
    ("gather ms", ">9"), ("reduce ms", ">9"), ("result MiB", ">10.2f"), ("report s", ">8.2f"),
    ("peak MiB", ">8.0f")]


def render(timings: list[Timing], source: Path) -> str:
    rows = [_row(SYNTHETIC_COLUMNS,
                 [t.ranks, t.form, t.phase, t.wall_s, t.peak_mib, t.result_mib,
                  t.report_html_mib],
                 "" if t.rc == 0 else f"  (exit {t.rc}; --keep keeps its report-stderr.log)")
            for t in timings]
    title = f"report on synthetic ranks (copies of {source}); {machine()}"
    return "\n".join([_head(title, SYNTHETIC_COLUMNS), *rows])


def real_head() -> str:
    return _head(f"real profile runs of {SOURCE_PROGRAM}, oversubscribed; {machine()}",
                 REAL_COLUMNS)


def real_row(r: RealRun) -> str:
    gather = "-" if r.gather_s is None else f"{r.gather_s * 1e3:.1f}"
    reduce = "-" if r.reduce_s is None else f"{r.reduce_s * 1e3:.1f}"
    return _row(REAL_COLUMNS, [r.ranks, r.profile_wall_s, r.profile_files, r.profile_files_mib,
                               gather, reduce, r.result_mib, r.report_wall_s,
                               r.report_peak_mib],
                "" if r.rc == 0 else f"  (exit {r.rc}: {r.error}; --keep keeps the run)")


def _parse_ranks(text: str, flag: str = "--ranks") -> list[int]:
    try:
        ranks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(
            f"{flag} takes whole numbers separated by commas (got '{text}')") from None
    if not ranks or min(ranks) < 1:
        raise UserError(f"{flag} takes positive numbers (got '{text}')")
    return ranks


def main(argv: list[str]) -> int:
    """devtools report-scale [--ranks N,N] [--real N,N] [--source RUN_DIR] [--json FILE]
    [--keep]"""
    parser = argparse.ArgumentParser(
        prog="devtools report-scale",
        description="Time the report on synthetic ranks, and on real runs.")
    parser.add_argument("--ranks", help="synthetic rank counts, comma-separated (default: "
                        f"{','.join(map(str, DEFAULT_RANKS))}; none with --real alone)")
    parser.add_argument("--real", help="also real profile runs at these rank counts, "
                        "oversubscribed (e.g. 2,4,8,16,32,64)")
    parser.add_argument("--source", type=Path, help="a profile run directory to copy")
    parser.add_argument("--json", type=Path, help="also write the timings here")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic runs")
    parser.add_argument("--form", default="statistics",
                        help="what the synthetic runs hold, comma-separated: statistics (the "
                        "job's statistics alone, as jobs of more than 8 ranks leave them), "
                        "documents (every rank's document); default: statistics")
    args = parser.parse_args(argv)
    forms = tuple(f.strip() for f in args.form.split(",") if f.strip())
    if not forms or any(f not in FORMS for f in forms):
        raise UserError(f"--form takes {' and '.join(FORMS)}, comma-separated "
                        f"(got '{args.form}')")
    real = _parse_ranks(args.real, "--real") if args.real is not None else []
    if args.ranks is not None:
        ranks = _parse_ranks(args.ranks)
    else:  # the synthetic default, unless only real runs were asked for
        ranks = [] if real else list(DEFAULT_RANKS)
    if args.source is not None and not ranks:
        raise UserError("--source is copied into synthetic ranks: give --ranks with it")
    workdir = Path(tempfile.mkdtemp(prefix="mpi-overlap-report-scale-"))
    try:
        timings: list[Timing] = []
        source = args.source
        if ranks:
            source = source or make_source(workdir)
            if not (source / "result.json").is_file():
                raise UserError(f"{source}: not a run directory with a result.json")
            timings = measure(source, ranks, workdir, keep=args.keep, forms=forms)
            print(render(timings, source))
        real_runs: list[RealRun] = []
        if real:
            print(real_head(), flush=True)
            real_runs = measure_real(real, workdir, keep=args.keep,
                                     each=lambda r: print(real_row(r), flush=True))
        if args.json:
            write_json(args.json, {"machine": machine(),
                                   "source": str(source) if source else None,
                                   "timings": [asdict(t) for t in timings],
                                   "real": [asdict(r) for r in real_runs]})
        return 0 if all(t.rc == 0 for t in [*timings, *real_runs]) else 1
    finally:
        if args.keep:
            print(f"kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
