"""The error_checking package's documents as typed models (core/schema.py): bench-error-
checking-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, UnsetType

from ...core.schema import Document, register
from ...run.documents import Stats


class LaunchTestsItem(Document, kw_only=True, forbid_unknown_fields=True):
    name: str
    messages_per_sample: Annotated[int, Meta(ge=0)]
    ns_per_msg: float | None
    ns: Stats
    samples_ns: list[float | None]


class Launch(Document, kw_only=True, forbid_unknown_fields=True):
    cvar: str | None
    cvar_value: int | None
    cvar_note: str | None
    env: dict[str, str | None]
    reps_done: Annotated[int, Meta(ge=0)]
    launch: str | UnsetType = UNSET
    launch_env: dict[str, str] | UnsetType = UNSET
    tests: list[LaunchTestsItem]


class BenchErrorChecking(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the error-checking benchmark (small-message costs with argument checking
    on/off): One entry per launch (one argument-checking setting each, from the
    environment). cvar/cvar_value: the control variable read back through MPI_T after
    MPI_Init (null: none found or not readable, cvar_note says which). Tests: pingpong-0B/8B
    (ns per message = round trip / 2) and proc-null-send (ns per MPI_Send to MPI_PROC_NULL);
    ns_per_msg is the median of the samples."""

    launches: list[Launch]


MODELS: dict[str, Any] = {
    "bench-error-checking-v1": BenchErrorChecking,
}
register(MODELS)
