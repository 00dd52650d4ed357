"""`mpi-overlap doctor`: is this machine ready to measure, and what would make it better?

Each check yields a Finding: what was looked at, ok/warn/fail, what was seen, and — for
anything not ok — the fix. Toolchains are checked for real: compile and run a program.
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UserError
from ..core.paths import native_source_dir, state_dir
from ..core.version import version
from ..platform.build import (
    FORTRAN_STATUS,
    FORTRAN_WRAPPERS,
    build_dir_for,
    find_tool,
    fortran_wrapper,
)
from ..platform.toolchains import (
    DEFAULT_TOOLCHAIN,
    INSTALL_MPICH,
    MPI_ENV_PREFIXES,
    WHEEL_PACKAGES,
    Toolchain,
    ensure_version,
    launcher_beside,
    list_toolchains,
    local_environment,
    usable_cores,
)
from ..run.launch import mpiexec_command
from ..run.slurm_launch import (
    LAUNCHER_ENV,
    hydra_reason,
    in_allocation,
    pmi_of,
    slurm_launch,
    srun_command,
)
from . import doctor_probes


@dataclass
class Finding:
    item: str
    level: str  # ok | warn | fail | info
    detail: str
    fix: str = ""


def timer_resolution_ns() -> tuple[float, float]:
    """(clock_getres, smallest non-zero step seen) of CLOCK_MONOTONIC, in ns."""
    nominal = time.clock_getres(time.CLOCK_MONOTONIC) * 1e9
    smallest = float("inf")
    prev = time.monotonic_ns()
    for _ in range(20000):
        now = time.monotonic_ns()
        if now != prev:
            smallest = min(smallest, now - prev)
        prev = now
    return nominal, smallest


def run_checks(probe_toolchains: bool = True) -> list[Finding]:
    out: list[Finding] = [
        Finding(
            "mpi-overlap",
            "info",
            f"{version()} (Python {platform.python_version()}, {sys.executable})",
        ),
        Finding("state directory", "info", str(state_dir())),
    ]
    cores = usable_cores()
    out.append(
        Finding(
            "cores",
            "ok" if cores >= 2 else "warn",
            f"{cores} usable ({os.cpu_count()} online)",
            ""
            if cores >= 2
            else "2 ranks on 1 core share it: timings measure "
            "the scheduler; run on a machine with 2+ cores",
        )
    )
    nominal, seen = timer_resolution_ns()
    out.append(
        Finding(
            "timer",
            "ok" if seen < 1000 else "warn",
            f"CLOCK_MONOTONIC resolution {nominal:g} ns, smallest step seen "
            f"{seen:.0f} ns (from Python; the native harness reports its own)",
            ""
            if seen < 1000
            else "a coarse clock: small-message figures will be "
            "noisy; check the clocksource (/sys/devices/system/clocksource)",
        )
    )
    load1 = os.getloadavg()[0]
    out.append(
        Finding(
            "load",
            "ok" if load1 < 0.5 * cores else "warn",
            f"1-minute load average {load1:.2f}",
            ""
            if load1 < 0.5 * cores
            else "other work is running: timings will be noisy; measure on an idle machine",
        )
    )
    out += _build_tools()
    out += _kernel_settings()
    if probe_toolchains:
        out += _toolchains()
    mpi_env = sorted(k for k in os.environ if k.startswith(MPI_ENV_PREFIXES))
    if mpi_env:
        out.append(
            Finding(
                "MPI environment", "info", "set and recorded with results: " + ", ".join(mpi_env)
            )
        )
    return out


def _build_tools() -> list[Finding]:
    out = []
    cmake = find_tool("cmake")
    if not cmake:
        out.append(Finding("cmake", "fail", "not found", "pip install cmake"))
    else:
        version = _first_line([cmake, "--version"])
        out.append(Finding("cmake", "ok", f"{version} ({cmake})"))
    ninja = find_tool("ninja")
    out.append(
        Finding(
            "ninja",
            "ok" if ninja else "warn",
            ninja or "not found (make is used)",
            "" if ninja else "pip install ninja",
        )
    )
    src = native_source_dir()
    out.append(
        Finding(
            "native sources",
            "ok" if (src / "CMakeLists.txt").is_file() else "fail",
            str(src),
            ""
            if (src / "CMakeLists.txt").is_file()
            else "run from a source checkout or set MPI_OVERLAP_NATIVE_DIR",
        )
    )
    return out


def _kernel_settings() -> list[Finding]:
    out = []
    ptrace = Path("/proc/sys/kernel/yama/ptrace_scope")
    if ptrace.is_file():
        value = ptrace.read_text().strip()
        if value != "0":
            out.append(
                Finding(
                    "ptrace_scope",
                    "warn",
                    f"kernel.yama.ptrace_scope = {value}",
                    "single-copy (CMA) shared-memory transfers may be refused, so "
                    "large on-node messages are copied twice; "
                    "sysctl kernel.yama.ptrace_scope=0 if you may",
                )
            )
    gov = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if gov.is_file():
        value = gov.read_text().strip()
        out.append(
            Finding(
                "CPU frequency governor",
                "ok" if value == "performance" else "warn",
                value,
                ""
                if value == "performance"
                else "frequency scaling makes the work-loop rate drift; use the "
                "performance governor (cpupower frequency-set -g performance)",
            )
        )
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        out.append(
            Finding(
                "running as root",
                "info",
                "Open MPI toolchains get "
                "OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
            )
        )
    return out


def _toolchains() -> list[Finding]:
    out = []
    names = set()
    slurm = _slurm()
    for tc in list_toolchains():
        names.add(tc.name)
        try:
            ensure_version(tc)
            version = (tc.library_version or "").splitlines()[0]
            out.append(
                Finding(f"toolchain {tc.name}", "ok", f"{version} — {tc.mpicc}, {tc.mpiexec}")
            )
        except UserError as err:
            fix = (
                f"mpi-overlap toolchain add {tc.name}"
                if tc.name in WHEEL_PACKAGES
                else INSTALL_MPICH
                if tc.name == DEFAULT_TOOLCHAIN
                else f"mpi-overlap toolchain remove {tc.name}, then add it again"
            )
            out.append(Finding(f"toolchain {tc.name}", "fail", str(err), fix))
            continue
        with doctor_probes.scratch() as workdir:
            out.append(_fortran_interfaces(tc, workdir))
            out.append(_fortran(tc))
            out += _launchers(tc, workdir, srun=slurm is None)
    for name in WHEEL_PACKAGES:
        if name not in names:
            out.append(
                Finding(
                    f"toolchain {name}",
                    "info",
                    "not installed",
                    f"mpi-overlap toolchain add {name}",
                )
            )
    if slurm is not None:
        out.append(slurm)
    return out


FORTRAN_FIX = ("profile Fortran programs with a toolchain that has a Fortran wrapper, e.g. "
               "mpi-overlap toolchain add system --mpicc /usr/bin/mpicc.mpich "
               "--mpiexec /usr/bin/mpiexec.mpich (Debian: apt-get install mpich gfortran)")


def _fortran_interfaces(tc: Toolchain, workdir: Path) -> Finding:
    """Which MPI Fortran interfaces a program can use with this toolchain: a program for
    each compiled and linked with the Fortran wrapper the build would take."""
    what = f"toolchain {tc.name} Fortran"
    wrapper = fortran_wrapper(tc.mpicc)
    if wrapper is None:
        return Finding(what, "warn", f"no Fortran wrapper ({', '.join(FORTRAN_WRAPPERS)}) "
                       f"beside {tc.mpicc}: C programs only", FORTRAN_FIX)
    tried = doctor_probes.fortran_interfaces(wrapper, local_environment(tc), workdir)
    good = [name for name, o in tried.items() if o.ok]
    bad = {name: o for name, o in tried.items() if not o.ok}
    if not bad:
        return Finding(what, "ok", f"{', '.join(good)} compile and link with {wrapper}")
    detail = "; ".join(f"{name} fails: {o.line}" for name, o in bad.items())
    if good:
        detail += f"; {', '.join(good)} compile and link"
    show = "--showme" if tc.flavor == "openmpi" else "-show"
    if not good:
        fix = (f"the wrapper cannot build a program: check that the compiler it calls "
               f"({wrapper} {show}) is installed (Debian: apt-get install gfortran)")
    else:
        fix = (f"programs with {', '.join(bad)} cannot be built with this MPI: it was "
               f"built without that module, or with another Fortran compiler than the one "
               f"{wrapper} calls ({wrapper} {show}; modules belong to one compiler "
               f"version); use {' or '.join(good)}, or an MPI built with this compiler")
    return Finding(what, "warn", f"{detail} ({wrapper})", fix)


def _fortran(tc: Toolchain) -> Finding:
    """Whether programs in Fortran can be profiled with this toolchain: what its build's
    Fortran probe found (profiler/fortran.cmake writes one line), without building, and
    which interfaces' entry points the built library defines: mpif.h and `use mpi` call
    mpi_send_ and the like; mpi_f08 calls mpi_send_f08_..., which the profiler defines
    only for the MPIs whose mpi_f08 it knows (native/profiler/mop_fortran.h)."""
    bdir = build_dir_for(tc)
    status_file = bdir / FORTRAN_STATUS
    what = f"toolchain {tc.name} Fortran profiling"
    if not status_file.is_file():
        return Finding(what, "info", "not known until it is built",
                       f"mpi-overlap build --mpi {tc.name}")
    status = status_file.read_text().strip()
    if not status.startswith("enabled"):
        return Finding(what, "warn", f"C only: {status}", FORTRAN_FIX)
    symbols = doctor_probes.defined_symbols(bdir / "profiler" / "libmpi_overlap.so")
    if symbols is None:
        return Finding(what, "ok", f"profiles Fortran programs: mpif.h, use mpi; use mpi_f08 "
                       f"not known (nm could not read the library) ({status})")
    if not any(s.endswith("_f08_") for s in symbols):
        return Finding(what, "warn", "profiles Fortran programs: mpif.h, use mpi; use "
                       f"mpi_f08 calls are not intercepted ({status})",
                       "this MPI's mpi_f08 bindings are not known to the profiler (it knows "
                       "Open MPI 4 and MPICH 4.0: docs/profiler.md, Fortran): profile "
                       "programs that use mpif.h or use mpi")
    return Finding(what, "ok", f"profiles Fortran programs: mpif.h, use mpi, use mpi_f08 "
                   f"({status})")


def _launchers(tc: Toolchain, workdir: Path, *, srun: bool) -> list[Finding]:
    """Start a 2-rank program with the toolchain's mpiexec on this machine (as runs
    outside an allocation start) and, where Slurm answers, with srun (as runs inside one
    start: slurm_launch.py)."""
    ranks = doctor_probes.HELLO_RANKS
    env = local_environment(tc)
    exe, built = doctor_probes.compile_hello(tc, env, workdir)
    if not built.ok:
        return [Finding(f"toolchain {tc.name} launchers", "fail",
                        f"the {ranks}-rank test program did not compile: {built.line}",
                        f"try it by hand: {tc.mpicc} hello.c")]
    out = []
    cmd = mpiexec_command(tc, ranks, [str(exe)])
    ran = doctor_probes.launch_hello(cmd, env, workdir)
    item = f"toolchain {tc.name} launcher mpiexec"
    if ran.ok:
        out.append(Finding(item, "ok", f"{ranks} ranks started and finished in "
                           f"{ran.elapsed_s:.1f} s ({shlex.join(cmd[:-1])} PROGRAM)"))
    else:
        out.append(Finding(item, "fail", ran.line, _launch_fix(tc, cmd, ran)))
    if srun:
        out.append(_slurm_launcher(tc, exe, workdir, ranks))
    return out


def _slurm_launcher(tc: Toolchain, exe: Path, workdir: Path, ranks: int) -> Finding:
    """The launcher runs use inside an allocation (slurm_launch.py), tried: inside one, the
    very launch a run would make (Hydra's Slurm launcher for an MPICH whose PMI srun cuts,
    plain srun otherwise); outside one, plain srun where it serves the toolchain. Hydra's
    launcher needs the allocation's hosts, so outside one it gets an info line instead of
    a plain srun that runs would not use (and that fails for the MPICH wheel)."""
    if in_allocation():
        try:
            launch = slurm_launch(tc, ranks)
        except UserError as err:
            return Finding(f"toolchain {tc.name} launcher srun", "fail", str(err),
                           "check the allocation (squeue --me) and srun -n 2 hostname")
        assert launch is not None  # inside an allocation there is always one
        cmd, kind, why = [*launch.prefix, str(exe)], launch.kind, f"; {launch.why}"
    elif (reason := hydra_reason(tc)) is not None:
        return Finding(f"toolchain {tc.name} launcher hydra", "info",
                       f"inside a Slurm allocation runs start through Hydra's Slurm launcher "
                       f"({reason}); it needs the allocation's hosts, so it is not tried "
                       "here", "salloc -N 2 -n 2 mpi-overlap doctor tries it")
    else:
        cmd, kind, why = [*srun_command(tc, ranks), str(exe)], "srun", ""
    ran = doctor_probes.launch_hello(cmd, tc.environment(), workdir)
    item = f"toolchain {tc.name} launcher {kind}"
    if ran.ok:
        return Finding(item, "ok", f"{ranks} ranks started and finished in "
                       f"{ran.elapsed_s:.1f} s ({shlex.join(cmd[:-1])} PROGRAM{why})")
    return Finding(item, "fail" if in_allocation() else "warn", ran.line,
                   _launch_fix(tc, cmd, ran, hydra=kind == "hydra"))


def _launch_fix(tc: Toolchain, cmd: list[str], ran: doctor_probes.Outcome, *,
                hydra: bool = False) -> str:
    by_hand = f"run {shlex.join(cmd[:-1])} ./a.out by hand to see all it says"
    if hydra:
        return ("Hydra starts one proxy a node with srun and they call back to this "
                "machine (-localhost): check that the nodes reach it; "
                f"{LAUNCHER_ENV}=srun tries plain srun instead; " + by_hand)
    if cmd[0] == "srun":
        if ran.timed_out and not in_allocation():
            return ("Slurm may have queued the job: run doctor inside an allocation "
                    "(salloc -n 2 mpi-overlap doctor); " + by_hand)
        return (f"srun --mpi=list must list {pmi_of(tc)} (the PMI this MPI needs); "
                + by_hand)
    whose = doctor_probes.launcher_flavor(tc.mpiexec, local_environment(tc))
    if "unknown" not in (whose, tc.flavor) and whose != tc.flavor:
        return (f"{tc.mpiexec} is the launcher of {_FLAVOR_NAMES[whose]}, this toolchain is "
                f"{_FLAVOR_NAMES[tc.flavor]}: mpi-overlap toolchain remove {tc.name}, then "
                f"add it again with --mpiexec naming its own (e.g. {_own_mpiexec(tc)})")
    if ran.timed_out:
        return ("a launcher that hangs often waits for a host name that does not resolve "
                "(hostname) or a port that is blocked; " + by_hand)
    if tc.name == DEFAULT_TOOLCHAIN:
        return f"{by_hand}; reinstall: {INSTALL_MPICH}"
    return by_hand


_FLAVOR_NAMES = {"openmpi": "Open MPI", "intel": "Intel MPI", "mpich": "MPICH (Hydra)"}


def _own_mpiexec(tc: Toolchain) -> str:
    """The launcher that belongs beside the toolchain's mpicc (toolchains.launcher_beside:
    mpicc.mpich -> mpiexec.mpich) when it is not the one registered; else 'PATH'."""
    own = launcher_beside(Path(tc.mpicc))
    if own is not None and Path(own).resolve() != Path(tc.mpiexec).resolve():
        return own
    return "PATH"


def _slurm() -> Finding | None:
    """None when srun is on PATH and Slurm answers (then each toolchain tries srun); else
    one finding saying why srun is not tried."""
    where = shutil.which("srun")
    if where is None:
        return Finding("launcher srun", "fail" if in_allocation() else "info",
                       "not found: runs start with the toolchain's mpiexec; inside a Slurm "
                       "allocation (SLURM_JOB_ID set) they start with srun (or Hydra's Slurm "
                       "launcher, for the MPICH wheel) by themselves, and "
                       "--launcher 'srun --mpi=pmix' names it anywhere",
                       "put srun on PATH" if in_allocation() else "")
    answer = doctor_probes.slurm_answers()
    if answer.ok:
        return None
    return Finding("launcher srun", "fail" if in_allocation() else "info",
                   f"{where} found, but Slurm does not answer (sinfo -h: {answer.line}): "
                   "runs here start with the toolchain's mpiexec",
                   "if this machine should reach a Slurm cluster, check its configuration "
                   "(SLURM_CONF, slurmctld)")


def _first_line(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
        return (proc.stdout.strip().splitlines() or ["?"])[0]
    except (OSError, subprocess.TimeoutExpired):
        return "?"
