"""Developer entry points used by the Makefile (not part of the user CLI).

`python -m mpi_overlap.devtools ctest` builds native/ for the default toolchain with
warnings as errors and AddressSanitizer + UndefinedBehaviorSanitizer, then runs ctest
(the C unit tests and the small MPI smoke tests) in that build.
"""

from __future__ import annotations

import subprocess
import sys

from .build import ensure_built, find_tool
from .errors import UserError
from .toolchains import get_toolchain
from .ui import Ui

SANITIZERS = "address,undefined"


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
    cmd = [ctest_exe, "--test-dir", str(bdir), "--output-on-failure", "--timeout", "300"]
    return subprocess.run(cmd, env=env, check=False).returncode


def main(argv: list[str]) -> int:
    if argv[:1] == ["ctest"]:
        try:
            return ctest(argv[1] if len(argv) > 1 else None)
        except UserError as err:
            print(f"devtools: error: {err}", file=sys.stderr)
            return 2
    print("usage: python -m mpi_overlap.devtools ctest [TOOLCHAIN]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
