"""Developer entry points used by the Makefile (not part of the user CLI).

`python -m mpi_overlap.tools.devtools ctest` builds native/ for the default toolchain with
warnings as errors and AddressSanitizer + UndefinedBehaviorSanitizer, then runs ctest
(the C unit tests and the small MPI smoke tests) in that build. It then builds a second
tree with ThreadSanitizer and runs the tests labelled "threads" there (the profiler's
thread unit test and the 8-thread MPI stress test; docs/profiler.md, "Threads"), or says
why it cannot where the compiler has no ThreadSanitizer.

`python -m mpi_overlap.tools.devtools fuzz [SECONDS]` fuzzes the native parsers with libFuzzer
for SECONDS each (devfuzz.py).

`python -m mpi_overlap.tools.devtools report-scale` times the report on thousands of synthetic
ranks (report_scale.py; `make bench-report-scale`).

`python -m mpi_overlap.tools.devtools schemas DIR` writes the JSON schema of every typed
document, generated from its model, into DIR (schemas.py).

`python -m mpi_overlap.tools.devtools profile-startup` times `mpi-overlap profile` beside its
program's bare launch (startup_cost.py; `make bench-profile-startup`).

`python -m mpi_overlap.tools.devtools cold-calls` prices each MPI call the profiler wraps
after a sweep of the caches and without one (cold_calls.py; `make bench-cold-calls`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from ..core.errors import UserError
from ..core.ui import Ui
from ..platform.build import ensure_built, find_tool
from ..platform.toolchains import Toolchain, get_toolchain
from .devfuzz import fuzz

SANITIZERS = "address,undefined"
# ThreadSanitizer cannot be combined with AddressSanitizer: a build of its own, in which
# only the tests about threads run.
THREAD_SANITIZER = "thread"
THREAD_LABEL = "threads"
# The CMake target of what the tests of THREAD_LABEL run (native/tests/CMakeLists.txt): the
# ThreadSanitizer build makes only that, since only they run there.
THREAD_TARGET = "mo_threads_tests"


def _run_ctest(ctest_exe: str, bdir: Path, env: dict[str, str], *extra: str) -> int:
    cmd = [ctest_exe, "--test-dir", str(bdir), "--output-on-failure", "--timeout", "300", *extra]
    return subprocess.run(cmd, env=env, check=False).returncode


def tsan_available(tc: Toolchain) -> bool:
    """Whether the toolchain's compiler builds and links a program with -fsanitize=thread."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "t.c"
        src.write_text("int main(void) { return 0; }\n")
        proc = subprocess.run(
            [tc.mpicc, "-fsanitize=thread", str(src), "-o", str(Path(tmp) / "t")],
            env=tc.environment(), capture_output=True, check=False,
        )
        return proc.returncode == 0


def ctest(toolchain: str | None = None) -> int:
    tc = get_toolchain(toolchain)
    ui = Ui()
    with ui.progress(f"build ({tc.name}, {SANITIZERS})") as progress:
        bdir = ensure_built(tc, progress=progress, werror=True, sanitize=SANITIZERS)
    ctest_exe = find_tool("ctest")
    if not ctest_exe:
        raise UserError("ctest not found; pip install cmake")
    env = tc.environment()
    # MPI libraries keep allocations alive until exit by design; leak reports from them
    # would bury real findings. Our own unit tests run without MPI, with leak checking.
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    rc = _run_ctest(ctest_exe, bdir, env)
    if not tsan_available(tc):
        print(f"devtools: note: {tc.mpicc} cannot build with -fsanitize=thread: the thread "
              "tests do not run under ThreadSanitizer here", file=sys.stderr)
        return rc
    with ui.progress(f"build ({tc.name}, {THREAD_SANITIZER})") as progress:
        tdir = ensure_built(tc, progress=progress, werror=True, sanitize=THREAD_SANITIZER,
                            target=THREAD_TARGET)
    trc = _run_ctest(ctest_exe, tdir, tc.environment(), "-L", THREAD_LABEL)
    return rc or trc


USAGE = ("usage: python -m mpi_overlap.tools.devtools ctest [TOOLCHAIN] | fuzz [SECONDS] | "
         "report-scale [--ranks N,N] [--real N,N] [--source RUN_DIR] [--json FILE] [--keep] | "
         "profile-startup [--reps K] [--ranks N] [--json FILE] [-- PROGRAM ARGS] | "
         "cold-calls [--reps K] [--mpi NAME] [--sweep-kb N] [--iterations N] "
         "[--hot-iterations N] [--json FILE] | schemas DIR")


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["ctest"] and len(argv) <= 2:
            return ctest(argv[1] if len(argv) > 1 else None)
        if argv[:1] == ["report-scale"]:
            from .report_scale import main as report_scale

            return report_scale(argv[1:])
        if argv[:1] == ["profile-startup"]:
            from .startup_cost import main as profile_startup

            return profile_startup(argv[1:])
        if argv[:1] == ["cold-calls"]:
            from .cold_calls import main as cold_calls

            return cold_calls(argv[1:])
        if argv[:1] == ["schemas"] and len(argv) == 2:
            from .schemas import write_schemas

            print(f"{len(write_schemas(Path(argv[1])))} schemas written to {argv[1]}")
            return 0
        if argv[:1] == ["fuzz"] and len(argv) <= 2:
            if len(argv) == 2 and not argv[1].isdigit():
                print(f"devtools: error: SECONDS must be a whole number (got '{argv[1]}')",
                      file=sys.stderr)
                return 2
            return fuzz(int(argv[1]) if len(argv) == 2 else None)
    except UserError as err:
        print(f"devtools: error: {err}", file=sys.stderr)
        return 2
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
