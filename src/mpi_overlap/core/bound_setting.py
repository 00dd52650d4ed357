"""A command-wide setting bound around a command (--launches, --nodes, --env-matrix): made
current for the block and restored after it, read where the runs are made."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def bound_to(var: ContextVar[T], value: T) -> Iterator[T]:
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)
