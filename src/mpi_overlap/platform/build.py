"""Configure and build native/ with CMake, once per toolchain, into the state directory.

The build directory is keyed by the toolchain's identity, so different MPIs never share
object files. A stamp (hash of the sources and the configuration) lets repeated commands
skip CMake entirely; when the sources change, CMake rebuilds what changed and the build
is shown as a progress bar.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from ..core.errors import UserError
from ..core.locks import state_lock
from ..core.paths import native_source_dir, state_dir
from ..core.procs import stop_session
from ..core.ui import ProgressFn
from .toolchains import Toolchain, ensure_version

_SOURCE_SUFFIXES = {".c", ".h", ".txt", ".cmake", ".in", ".py", ".json", ".f90", ".F90"}
_NINJA_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\]")
_MAKE_PROGRESS = re.compile(r"^\[\s*(\d+)%\]")


def werror_default() -> bool:
    """Warnings are errors in CI (CI=true), and merely shown elsewhere."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


# What the build's Fortran probe found, one line (native/profiler/fortran.cmake writes it):
# "enabled: <wrapper>" or "skipped: <why>".
FORTRAN_STATUS = Path("profiler") / "fortran-status.txt"


FORTRAN_WRAPPERS = ("mpifort", "mpif90", "mpif77")


def fortran_wrapper(mpicc: str) -> str | None:
    """The MPI Fortran compiler wrapper the build would take for `mpicc`, or None. The
    same search as native/profiler/fortran.cmake (keep the two alike): in the directory
    of mpicc, its name with 'mpicc' replaced by mpifort, mpif90, mpif77 (mpicc.mpich ->
    mpifort.mpich), then the same beside each target of its symbolic links (Debian's
    alternatives), at most 9 steps."""
    path: str | None = mpicc if os.sep in mpicc else shutil.which(mpicc)
    for _ in range(9):
        if not path:
            return None
        folder, name = os.path.split(path)
        if "mpicc" in name:
            for wrapper in FORTRAN_WRAPPERS:
                candidate = os.path.join(folder, name.replace("mpicc", wrapper))
                if os.path.exists(candidate):
                    return candidate
        path = (os.path.join(folder, os.readlink(path)) if os.path.islink(path) else None)
    return None


def build_dir_for(tc: Toolchain, variant: str = "release") -> Path:
    return state_dir() / "build" / f"{tc.name}-{tc.identity()}-{variant}"


def source_hash(src: Path) -> str:
    """The hash of the sources' names and contents (and VERSION's). Files unchanged since
    this process last hashed them (same names, sizes and modification times) are not read
    again: `profile` asks twice, for its build and for the calibration's fingerprint
    (0.1 s each on a loaded machine, issue 38)."""
    files = [path for path in sorted(src.rglob("*"))
             if path.is_file() and (path.suffix in _SOURCE_SUFFIXES
                                    or path.name == "CMakeLists.txt")]
    version = src.parent / "VERSION"
    if version.is_file():
        files.append(version)
    seen = tuple((str(p), st.st_size, st.st_mtime_ns) for p, st in
                 ((p, p.stat()) for p in files))
    cached = _hashed.get(src)
    if cached is not None and cached[0] == seen:
        return cached[1]
    h = hashlib.sha256()
    for path in files:
        if path != version:
            h.update(str(path.relative_to(src)).encode())
        h.update(path.read_bytes())
    _hashed[src] = (seen, h.hexdigest())
    return h.hexdigest()


# source_hash's last answer per folder, with the (name, size, mtime) of the files it read
_hashed: dict[Path, tuple[tuple[tuple[str, int, int], ...], str]] = {}


def find_tool(name: str) -> str | None:
    """Prefer the tool installed into this Python environment (the cmake/ninja wheels)."""
    local = Path(sysconfig.get_path("scripts")) / name
    if local.is_file():
        return str(local)
    return shutil.which(name)


def ensure_built(
    tc: Toolchain,
    *,
    progress: ProgressFn | None = None,
    werror: bool | None = None,
    sanitize: str = "",
    force: bool = False,
    target: str | None = None,
) -> Path:
    """Return the build directory of `tc`, configuring and building when needed; with
    `target`, only that CMake target and what it depends on (the directory is then
    stamped as built for that target alone)."""
    ensure_version(tc)
    src = native_source_dir()
    if not (src / "CMakeLists.txt").is_file():
        raise UserError(f"native sources not found at {src} (set MPI_OVERLAP_NATIVE_DIR)")
    cmake = find_tool("cmake")
    if not cmake:
        raise UserError("cmake not found; install it: pip install 'mpi-overlap[mpich]' (or "
                        "pip install cmake, or apt-get install cmake)")
    werror = werror_default() if werror is None else werror
    variant = "release" if not sanitize else "san-" + sanitize.replace(",", "-")
    bdir = build_dir_for(tc, variant)
    # The directory already encodes the toolchain and sanitizers; -Werror is what else
    # changes the configuration, and the interpreter that runs the wrapper generator
    # (it needs pympistandard, installed beside this package).
    config = f"werror={werror} python={sys.executable} unit_tests={_unit_tests(sanitize)}"
    stamp = bdir / ".mpi-overlap-stamp"
    built_for = config + (f" target={target}" if target else "")
    wanted = hashlib.sha256((source_hash(src) + built_for).encode()).hexdigest()
    if not force and _stamped(stamp, wanted):
        return bdir
    # One build of a directory at a time (locks.py); a command that waited finds it done.
    with state_lock(f"build-{bdir.name}", f"building native/ for toolchain '{tc.name}'"):
        if not force and _stamped(stamp, wanted):
            return bdir
        _configure_and_build(tc, cmake, src, bdir, config, werror, sanitize, progress, force,
                             target)
        stamp.write_text(wanted + "\n")
    return bdir


def _unit_tests(sanitize: str) -> bool:
    """Whether a build makes the MPI-free unit tests: where they run, the sanitizer builds
    of `make ctest`, and not the release builds commands use (the same code in every
    toolchain's tree, 3-4 s of compiler CPU each)."""
    return bool(sanitize)


def _stamped(stamp: Path, wanted: str) -> bool:
    return stamp.is_file() and stamp.read_text().strip() == wanted


def _configure_and_build(tc: Toolchain, cmake: str, src: Path, bdir: Path, config: str,
                         werror: bool, sanitize: str, progress: ProgressFn | None,
                         force: bool, target: str | None = None) -> None:
    env = tc.environment()
    bdir.mkdir(parents=True, exist_ok=True)
    stamp = bdir / ".mpi-overlap-stamp"
    stamp.unlink(missing_ok=True)  # a build stopped half-way is not a finished one
    if force or not (bdir / "CMakeCache.txt").is_file() or not _same_config(bdir, config):
        ninja = find_tool("ninja")
        cmd = [
            cmake,
            "-S",
            str(src),
            "-B",
            str(bdir),
            f"-DMPI_C_COMPILER={tc.mpicc}",
            f"-DMPIEXEC_EXECUTABLE={tc.mpiexec}",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DMO_WERROR={'ON' if werror else 'OFF'}",
            f"-DMO_SANITIZE={sanitize}",
            f"-DMO_UNIT_TESTS={'ON' if _unit_tests(sanitize) else 'OFF'}",
            f"-DMO_PYTHON={sys.executable}",
        ]
        if ninja:
            cmd += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
        if (bdir / "CMakeCache.txt").is_file():
            # A changed configuration on an old cache: start clean, CMake caches too much.
            shutil.rmtree(bdir)
            bdir.mkdir(parents=True)
        if progress:
            progress(0, 1, f"configuring native build for {tc.name}")
        _run(cmd, env, bdir / "configure.log", f"configuring native/ for toolchain '{tc.name}'")
        (bdir / ".mpi-overlap-config").write_text(config)

    build_cmd = [cmake, "--build", str(bdir), "--parallel", str(os.cpu_count() or 2),
                 *(["--target", target] if target else [])]
    _run(
        build_cmd,
        env,
        bdir / "build.log",
        f"building native/ for toolchain '{tc.name}'",
        progress=progress,
    )


def _same_config(bdir: Path, config: str) -> bool:
    marker = bdir / ".mpi-overlap-config"
    return marker.is_file() and marker.read_text() == config


def _run(
    cmd: list[str], env: dict[str, str], log: Path, what: str, progress: ProgressFn | None = None
) -> None:
    with open(log, "w") as fh:
        # A session of its own, stopped as a whole if we are (a signal, an error): a
        # compiler must not go on writing into a build directory nobody waits for.
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            errors="replace", bufsize=1, start_new_session=True,
        )
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                fh.write(line)
                if progress:
                    _report_progress(progress, line, what)
            rc = proc.wait()
        except BaseException:
            stop_session(proc)
            raise
    if rc != 0:
        errors = [ln.strip() for ln in log.read_text().splitlines() if "error" in ln.lower()]
        first = errors[0] if errors else f"see {log}"
        raise UserError(f"{what} failed: {first} (full log: {log})")


def _report_progress(progress: ProgressFn, line: str, what: str) -> None:
    m = _NINJA_PROGRESS.match(line)
    if m:
        progress(int(m.group(1)), int(m.group(2)), what)
        return
    m = _MAKE_PROGRESS.match(line)
    if m:
        progress(int(m.group(1)), 100, what)


def executable(bdir: Path, name: str) -> Path:
    exe = bdir / "bench" / name
    if not exe.is_file():
        raise UserError(f"benchmark program {exe} was not built")
    return exe
