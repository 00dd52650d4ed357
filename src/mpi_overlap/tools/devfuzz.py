"""Fuzzing of the native parsers for a fixed time (`python -m mpi_overlap.tools.devtools fuzz`,
run by `make fuzz` and `make test`).

The libFuzzer targets in native/tests/fuzz/ (size lists, the benchmarks' command line,
the transfer-time table, the JSON writer's strings) are built with clang into a tree of
their own (no MPI: the parsers are MPI-free) and each runs for `seconds` on its seed
corpus, native/tests/fuzz/corpus/<target>/, which also keeps every crash input found as
a regression case (libFuzzer runs the seeds first). New corpus entries go to the state
directory, so the tree is not touched. Where clang cannot build a fuzzer (no clang, no
libFuzzer runtime: Debian's clang and libclang-rt-dev; .ci/run installs them), it says
so and skips.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..core.errors import UserError
from ..core.paths import native_source_dir, state_dir
from ..platform.build import find_tool

DEFAULT_SECONDS = 15
SECONDS_ENV = "MO_FUZZ_SECONDS"
_DONE = re.compile(r"Done (\d+) runs in (\d+) second")


def fuzz_dir() -> Path:
    return native_source_dir() / "tests" / "fuzz"


def libfuzzer_available(clang: str) -> bool:
    """Whether clang links a program with -fsanitize=fuzzer,address,undefined."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "t.c"
        src.write_text("#include <stddef.h>\n#include <stdint.h>\n"
                       "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n"
                       "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)"
                       " { (void)d; (void)n; return 0; }\n")
        proc = subprocess.run([clang, "-fsanitize=fuzzer,address,undefined", str(src), "-o",
                               str(Path(tmp) / "t")], capture_output=True, check=False)
        return proc.returncode == 0


def _build(clang: str) -> Path:
    cmake, ninja = find_tool("cmake"), find_tool("ninja")
    if not cmake:
        raise UserError("cmake not found; pip install cmake")
    bdir = state_dir() / "build" / "fuzz-clang"
    gen = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else []
    for cmd in ([cmake, "-S", str(fuzz_dir()), "-B", str(bdir), f"-DCMAKE_C_COMPILER={clang}",
                 *gen], [cmake, "--build", str(bdir)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise UserError(f"building the fuzz targets failed:\n{proc.stdout}{proc.stderr}")
    return bdir


def _run_target(exe: Path, bdir: Path, seconds: int) -> tuple[bool, str, str]:
    """Runs one target: (passed, its line for stdout, what to say on stderr: the end of
    its log on failure)."""
    name = exe.name.removeprefix("fuzz_")
    seeds = fuzz_dir() / "corpus" / name
    work = bdir / "corpus" / name
    artifacts = bdir / "artifacts" / name
    work.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    cmd = [str(exe), f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
           f"-artifact_prefix={artifacts}/", str(work)]
    if seeds.is_dir():
        cmd.append(str(seeds))
    dictionary = fuzz_dir() / f"{name}.dict"
    if dictionary.is_file():
        cmd.append(f"-dict={dictionary}")
    log = bdir / f"{exe.name}.log"
    with open(log, "w") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    text = log.read_text(errors="replace")
    done = _DONE.search(text)
    runs = f"{int(done.group(1)):,} inputs in {done.group(2)} s" if done else "no summary"
    if rc == 0:
        return True, f"devtools: fuzz {name}: {runs}, no failure", ""
    found = sorted(artifacts.iterdir(), key=lambda p: p.stat().st_mtime)
    where = f"; input kept in {found[-1]}" if found else ""
    tail = "\n".join(text.splitlines()[-30:])
    return False, "", (f"devtools: fuzz {name}: FAILED (exit {rc}){where}; log {log}\n{tail}\n"
                       f"devtools: fix the cause, then copy the input into {seeds}/ as a "
                       "regression case")


def fuzz(seconds: int | None = None) -> int:
    if seconds is None:
        seconds = int(os.environ.get(SECONDS_ENV, DEFAULT_SECONDS))
    clang = shutil.which("clang")
    if not clang or not libfuzzer_available(clang):
        what = "no clang on PATH" if not clang else f"{clang} cannot link libFuzzer"
        print(f"devtools: note: {what}: the native parsers are not fuzzed here (Debian: "
              "apt-get install clang libclang-rt-dev; .ci/run does)", file=sys.stderr)
        return 0
    bdir = _build(clang)
    targets = sorted(p for p in bdir.glob("fuzz_*") if p.is_file() and os.access(p, os.X_OK))
    if not targets:
        raise UserError(f"no fuzz targets were built in {bdir}")
    # Each target is one single-threaded process: as many at once as there are cores, so
    # `make test` waits seconds x targets / cores, each target still fuzzed `seconds`.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda exe: _run_target(exe, bdir, seconds), targets))
    for passed, line, failure in results:  # in the targets' order, whatever ended first
        if passed:
            print(line, flush=True)
        else:
            print(failure, file=sys.stderr, flush=True)
    return 0 if all(passed for passed, _, _ in results) else 1
