"""The benchmarks that live in their own package (benchmarks/<name>/, a `SPEC` in its
__init__.py, or `SPECS` for the two programs one source builds), found by walking this
package: the registry, the `bench` subcommands, the
report's registrations and the summary card take them from here, so that adding such a
benchmark touches its C program, its package, its docs section and its tests only.

The packages are imported on first use and once; their __init__ declares data only
(spec.py), so finding them costs the CLI's start-up no numpy or matplotlib.
"""

from __future__ import annotations

import pkgutil
from functools import cache
from importlib import import_module

from .spec import BenchmarkSpec


@cache
def specs() -> tuple[BenchmarkSpec, ...]:
    """Every package's spec, in the order of their names."""
    package = import_module(__package__)
    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        module = import_module(f"{__package__}.{info.name}")
        declared = getattr(module, "SPECS", None) or (getattr(module, "SPEC", None),)
        mine = [s for s in declared if isinstance(s, BenchmarkSpec)]
        if not mine:
            raise RuntimeError(f"benchmarks/{info.name}/ declares no SPEC or SPECS")
        found += mine
    names = [s.name for s in found]
    if len(set(names)) != len(names):
        raise RuntimeError(f"two benchmark packages declare the same name: {sorted(names)}")
    for spec in found:
        if spec.command_group not in ("bench", "", None) or (
                spec.command_group == "" and not spec.command):
            raise RuntimeError(f"{spec.name}: command_group {spec.command_group!r} needs "
                               f"'bench', None, or '' with a command of its own")
    return tuple(found)


def spec_of(name: str) -> BenchmarkSpec | None:
    """The spec of benchmark `name`, None when it is not one of the packages."""
    return next((s for s in specs() if s.name == name), None)


def spec_with_role(role: str) -> BenchmarkSpec:
    """The benchmark another command runs for `role` (spec.role: "p2p-table",
    "collective-table"); exactly one package declares each."""
    found = [s for s in specs() if s.role == role]
    if len(found) != 1:
        raise RuntimeError(f"{len(found)} benchmark packages declare role {role!r}, not one")
    return found[0]
