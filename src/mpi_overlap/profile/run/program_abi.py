"""Which MPI a program was linked with, so that `profile` refuses, in one line, to run a
program under a toolchain whose library it cannot load (and whose profiler, preloaded,
would then crash it) — the usual slip when `--mpi` names several toolchains.

The answer comes from the program's ELF dynamic section (DT_NEEDED, read by
elf_read.py), every MPI library in it, C, C++ and Fortran alike: a Fortran program linked
with --as-needed names only its binding library (Open MPI's libmpi_mpifh, libmpi_usempif08,
libmpi_usempi_ignore_tkr; MPICH's libmpifort or libmpichfort), never libmpi itself.
MPICH, Intel MPI and MVAPICH share one ABI (sonames .so.12); Open MPI 3–5 is .so.40. When
the program names none of them, the libraries it needs that can be found (its RUNPATH or
RPATH, LD_LIBRARY_PATH, the usual system folders) are read the same way, a few levels deep:
a program built on a solver library gets MPI through it. A program built for the standard
MPI ABI (libmpi_abi.so) runs with any library that provides it, so it is never refused
here. A script, a static program or anything unreadable is not judged either: the launch
itself will tell.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .elf_read import DT_NEEDED, DT_RPATH, DT_RUNPATH, dynamic_strings

# soname pattern → ABI family; the toolchains' flavors map onto the same families. The
# bindings (C++, Fortran's mpif.h, `use mpi`, `use mpi_f08`) carry their MPI's soname
# version, so each is as telling as libmpi itself.
_SONAME_FAMILY = (
    (re.compile(r"lib(mpi|mpich|mpicxx|mpichcxx|mpifort|mpichfort)\.so\.12(\.|$)"),
     "mpich"),
    (re.compile(r"lib(mpi|mpi_cxx|mpi_mpifh|mpi_usempif08|mpi_usempi_ignore_tkr|mpi_usempi"
                r"|mpi_java)\.so\.40(\.|$)"), "openmpi"),
)
_STANDARD_ABI = re.compile(r"libmpi_abi\.so(\.|$)")
# where the loader looks when neither the program nor the environment says (ld.so's
# defaults and Debian's multiarch folders); the cache itself is not read
_SYSTEM_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
                "/usr/local/lib")
_MAX_DEPTH = 3  # the program, its libraries, theirs: MPI comes in within a few steps
_MAX_FILES = 64  # a bound on the files read for one program
_FLAVOR_FAMILY = {"mpich": "mpich", "intel": "mpich", "openmpi": "openmpi"}
FAMILY_NAME = {"mpich": "the MPICH ABI (MPICH, Intel MPI, MVAPICH)", "openmpi": "Open MPI"}

PLACEHOLDER = "{mpi}"  # in the program's arguments: the toolchain's name, per run


def _dynamic(path: str | Path) -> tuple[list[str], list[str]] | None:
    """(DT_NEEDED, search folders from DT_RUNPATH or DT_RPATH) of an ELF file, or None
    when it is not one (or cannot be read)."""
    found = dynamic_strings(str(path))
    if found is None:
        return None
    runpath = [d for entry in found[DT_RUNPATH] for d in entry.split(":")]
    rpath = [d for entry in found[DT_RPATH] for d in entry.split(":")]
    try:
        origin = str(Path(path).resolve().parent)
    except OSError:
        return None
    dirs = [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
            for d in (runpath or rpath) if d]
    return found[DT_NEEDED], dirs


def needed_libraries(path: str | Path) -> list[str] | None:
    """DT_NEEDED of an ELF file, or None when it is not one (or cannot be read)."""
    found = _dynamic(path)
    return None if found is None else found[0]


def soname_family(soname: str) -> str | None:
    """The ABI family an MPI library's soname belongs to, or None when it is none known."""
    for pattern, family in _SONAME_FAMILY:
        if pattern.match(soname):
            return family
    return None


def _locate(soname: str, dirs: list[str]) -> Path | None:
    """Where the loader would find a library, as far as can be told without ld.so.cache."""
    env = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    for folder in [*dirs, *env, *_SYSTEM_DIRS]:
        candidate = Path(folder) / soname
        if candidate.is_file():
            return candidate
    return None


def program_family(path: str | Path) -> tuple[str, str] | None:
    """(ABI family, the soname that says so) of the MPI library a program needs, or None
    when it needs none that is known (the standard ABI, a script, static linking). The
    program's own needs come first; the libraries it needs are read only when those name
    no MPI library."""
    level = [Path(path)]
    seen: set[str] = set()  # sonames already queued, so each library is read once
    files = 0
    for _depth in range(_MAX_DEPTH):
        below: list[Path] = []
        for file in level:
            files += 1
            dynamic = _dynamic(file) if files <= _MAX_FILES else None
            if dynamic is None:
                continue
            needed, dirs = dynamic
            if any(_STANDARD_ABI.match(soname) for soname in needed):
                return None  # runs with any library that provides the standard ABI
            for soname in needed:
                family = soname_family(soname)
                if family is not None:
                    return family, soname
            for soname in needed:
                where = _locate(soname, dirs) if soname not in seen else None
                seen.add(soname)
                if where is not None:
                    below.append(where)
        level = below
    return None


def mismatch(path: str | Path, toolchain: str, flavor: str, shown: str = "") -> str | None:
    """Why the program cannot run with this toolchain, or None when it can (or when
    nothing is known either way); `shown` names it as the user did."""
    found = program_family(path)
    wanted = _FLAVOR_FAMILY.get(flavor)
    if found is None or wanted is None or found[0] == wanted:
        return None
    family, soname = found
    return (f"{shown or path} is linked with {FAMILY_NAME[family]} ({soname}), but "
            f"toolchain '{toolchain}' is {FAMILY_NAME[wanted]}: build the program with each "
            f"toolchain's mpicc (or mpif90) and name the builds with {PLACEHOLDER}, e.g. "
            f"mpi-overlap profile --mpi mpich --mpi openmpi -- ./app-{PLACEHOLDER}")


def for_toolchain(argv: list[str], toolchain: str) -> list[str]:
    """The program's arguments with {mpi} replaced by the toolchain's name."""
    return [arg.replace(PLACEHOLDER, toolchain) for arg in argv]
