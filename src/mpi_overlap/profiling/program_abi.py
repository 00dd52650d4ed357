"""Which MPI a program was linked with, so that `profile` refuses, in one line, to run a
program under a toolchain whose library it cannot load (and whose profiler, preloaded,
would then crash it) — the usual slip when `--mpi` names several toolchains.

The answer comes from the program's ELF dynamic section (DT_NEEDED, read with
pyelftools): MPICH, Intel MPI and MVAPICH share one ABI (libmpi.so.12 / libmpich.so.12);
Open MPI 3–5 is libmpi.so.40; a program built for the standard MPI ABI (libmpi_abi.so)
runs with any library that provides it, so it is never refused here. A script, a static
program or anything unreadable is not judged either: the launch itself will tell.
"""

from __future__ import annotations

import re
from pathlib import Path

# soname pattern → ABI family; the toolchains' flavors map onto the same families
_SONAME_FAMILY = (
    (re.compile(r"lib(mpi|mpich)\.so\.12(\.|$)"), "mpich"),
    (re.compile(r"libmpi\.so\.40(\.|$)"), "openmpi"),
)
_FLAVOR_FAMILY = {"mpich": "mpich", "intel": "mpich", "openmpi": "openmpi"}
FAMILY_NAME = {"mpich": "the MPICH ABI (MPICH, Intel MPI, MVAPICH)", "openmpi": "Open MPI"}

PLACEHOLDER = "{mpi}"  # in the program's arguments: the toolchain's name, per run


def needed_libraries(path: str | Path) -> list[str] | None:
    """DT_NEEDED of an ELF file, or None when it is not one (or cannot be read)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    return [t.needed for t in section.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
            return []
    except (OSError, ELFError, ValueError):
        return None


def program_family(path: str | Path) -> tuple[str, str] | None:
    """(ABI family, the soname that says so) of the MPI library a program needs, or None
    when it needs none that is known (the standard ABI, a script, static linking)."""
    for soname in needed_libraries(path) or []:
        for pattern, family in _SONAME_FAMILY:
            if pattern.match(soname):
                return family, soname
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
            f"toolchain's mpicc and name the builds with {PLACEHOLDER}, e.g. "
            f"mpi-overlap profile --mpi mpich --mpi openmpi -- ./app-{PLACEHOLDER}")


def for_toolchain(argv: list[str], toolchain: str) -> list[str]:
    """The program's arguments with {mpi} replaced by the toolchain's name."""
    return [arg.replace(PLACEHOLDER, toolchain) for arg in argv]
