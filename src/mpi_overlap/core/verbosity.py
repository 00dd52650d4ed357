"""How much a command prints, chosen once for the whole command (`mpi-overlap --quiet
CMD` / `--verbose CMD`): quiet leaves out the per-run tables and progress bars (status
lines, findings' paths, warnings and errors stay); verbose adds what a command leaves out
by default (characterize's per-run tables). Bound around the command like --nodes
(bound_setting.py) and read where the printing is decided."""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar

from .bound_setting import bound_to
from .errors import UserError

QUIET, NORMAL, VERBOSE = 0, 1, 2

_level: ContextVar[int] = ContextVar("verbosity", default=NORMAL)


def bound(quiet: bool, verbose: bool) -> AbstractContextManager[int]:
    if quiet and verbose:
        raise UserError("give --quiet or --verbose, not both")
    return bound_to(_level, QUIET if quiet else VERBOSE if verbose else NORMAL)


def quiet() -> bool:
    return _level.get() == QUIET


def verbose() -> bool:
    return _level.get() == VERBOSE
