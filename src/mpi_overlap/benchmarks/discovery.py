"""The benchmarks that live in their own package (benchmarks/<name>/, a `SPEC` in its
__init__.py, or `SPECS` for the two programs one source builds), found by walking this
package: the registry, the `bench` subcommands, the
report's registrations and the summary card take them from here, so that adding such a
benchmark touches its C program, its package, its docs section and its tests only.

The packages are imported on first use and once; their __init__ declares data only
(spec.py), so finding them costs the CLI's start-up no numpy or scipy.
"""

from __future__ import annotations

import pkgutil
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from ..report.card_item import CardItem
from .spec import BenchmarkSpec

if TYPE_CHECKING:  # only a type here
    from ..analysis.replication import Extract


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


@cache
def evidence_specs() -> tuple[BenchmarkSpec, ...]:
    """The specs that give a profile evidence and an advice rule (spec.Evidence), in the
    specs' order."""
    return tuple(spec for spec in specs() if spec.evidence is not None)


@cache
def card_items() -> tuple[CardItem, ...]:
    """Every line of the summary card in order: the lines the benchmark packages declare
    (spec.CardLine), their cells from their report modules (on first use: those modules
    import the card's helpers)."""
    declared = sorted(((spec.card, spec) for spec in specs() if spec.card is not None),
                      key=lambda line: line[0].order)
    out = []
    for card, spec in declared:
        report = spec.module("report")
        out.append(CardItem(card.label, spec.name, getattr(report, "card_cell", None),
                            from_analysis=getattr(report, "card_from_analysis", None),
                            share=getattr(report, "card_share", None)))
    return tuple(out)


def replicated(name: str) -> Extract | None:
    """The finer quantities benchmark `name`'s analysis declares for --launches
    (`replicated`), None when it declares none or is not a package."""
    spec = spec_of(name)
    return getattr(spec.module("analysis"), "replicated", None) if spec else None


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
