"""`mpi-overlap doctor`: is this machine ready to measure, and what would make it better?

Each check yields a Finding: what was looked at, ok/warn/fail, what was seen, and — for
anything not ok — the fix. Toolchains are checked for real: compile and run a program.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .build import FORTRAN_STATUS, build_dir_for, find_tool
from .errors import UserError
from .paths import native_source_dir, state_dir
from .toolchains import (
    DEFAULT_TOOLCHAIN,
    INSTALL_MPICH,
    MPI_ENV_PREFIXES,
    WHEEL_PACKAGES,
    Toolchain,
    ensure_version,
    list_toolchains,
    usable_cores,
)


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
            f"{__version__} (Python {platform.python_version()}, {sys.executable})",
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
    for tc in list_toolchains():
        names.add(tc.name)
        try:
            ensure_version(tc)
            version = (tc.library_version or "").splitlines()[0]
            out.append(
                Finding(f"toolchain {tc.name}", "ok", f"{version} — {tc.mpicc}, {tc.mpiexec}")
            )
            out.append(_fortran(tc))
        except UserError as err:
            fix = (
                f"mpi-overlap toolchain add {tc.name}"
                if tc.name in WHEEL_PACKAGES
                else INSTALL_MPICH
                if tc.name == DEFAULT_TOOLCHAIN
                else f"mpi-overlap toolchain remove {tc.name}, then add it again"
            )
            out.append(Finding(f"toolchain {tc.name}", "fail", str(err), fix))
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
    return out


def _fortran(tc: Toolchain) -> Finding:
    """Whether programs in Fortran can be profiled with this toolchain: what its build's
    Fortran probe found (profiler/fortran.cmake writes one line), without building."""
    status_file = build_dir_for(tc) / FORTRAN_STATUS
    what = f"toolchain {tc.name} Fortran"
    if not status_file.is_file():
        return Finding(what, "info", "not known until it is built",
                       f"mpi-overlap build --mpi {tc.name}")
    status = status_file.read_text().strip()
    if status.startswith("enabled"):
        return Finding(what, "ok", f"profiles Fortran programs ({status})")
    fix = ("profile Fortran programs with a toolchain that has a Fortran wrapper, e.g. "
           "mpi-overlap toolchain add system --mpicc /usr/bin/mpicc.mpich "
           "(Debian: apt-get install mpich gfortran)")
    return Finding(what, "warn", f"C only: {status}", fix)


def _first_line(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
        return (proc.stdout.strip().splitlines() or ["?"])[0]
    except (OSError, subprocess.TimeoutExpired):
        return "?"
