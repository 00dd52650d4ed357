"""`--env-matrix`: run one benchmark over a set of environment settings.

Each `--env-matrix VAR=v1,v2,...` adds an axis; the variants are every combination, in
the order given (the first variant is the baseline the report compares against). A
variant is a dict of variables set for the launch (run.json's env_overrides) and a label
naming the run, e.g. "mpich MPICH_ASYNC_PROGRESS=1".

The matrix applies to whatever benchmark command is running: the CLI's run options bind
it for the duration of the command (`bound`), and bench_session asks for it
(`current`). The binding lives in a ContextVar so that nothing else has to pass it along.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..core.bound_setting import bound_to
from ..core.errors import UserError

MAX_VARIANTS = 32
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Variant:
    env: tuple[tuple[str, str], ...]

    @property
    def overrides(self) -> dict[str, str]:
        return dict(self.env)

    def label(self, toolchain: str) -> str:
        settings = " ".join(f"{k}={v}" for k, v in self.env)
        return f"{toolchain} {settings}" if settings else toolchain


def parse_env_matrix(specs: tuple[str, ...] | list[str]) -> list[Variant]:
    """The variants of the given axes; [] when there are none. Bad input: UserError."""
    axes: list[tuple[str, list[str]]] = []
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise UserError(f"--env-matrix '{spec}': expected VAR=value1,value2,... "
                            "(VAR a shell variable name)")
        if any(name == seen for seen, _ in axes):
            raise UserError(f"--env-matrix: {name} is given twice; put all its values in one "
                            f"option ({name}=a,b,...)")
        vals = [v.strip() for v in values.split(",")]
        if not values.strip() or any(v == "" for v in vals):
            raise UserError(f"--env-matrix '{spec}': empty value in the list")
        if len(set(vals)) != len(vals):
            raise UserError(f"--env-matrix '{spec}': a value is repeated")
        axes.append((name, vals))
    if not axes:
        return []
    combos = list(itertools.product(*(vals for _, vals in axes)))
    if len(combos) > MAX_VARIANTS:
        raise UserError(f"--env-matrix gives {len(combos)} variants; at most {MAX_VARIANTS} "
                        "(each is a full run)")
    names = [name for name, _ in axes]
    return [Variant(tuple(zip(names, combo, strict=True))) for combo in combos]


_current: ContextVar[tuple[Variant, ...]] = ContextVar("env_matrix", default=())


@contextmanager
def bound(specs: tuple[str, ...] | list[str]) -> Iterator[list[Variant]]:
    """Parse the specs and make them the current matrix inside the block."""
    variants = parse_env_matrix(specs)
    with bound_to(_current, tuple(variants)):
        yield variants


def current() -> list[Variant]:
    """The matrix bound by the running command; [Variant(())] (one plain run) when none."""
    return list(_current.get()) or [Variant(())]


__all__ = ["MAX_VARIANTS", "Variant", "bound", "current", "parse_env_matrix"]
