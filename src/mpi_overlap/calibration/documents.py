"""The failed collective calibrations beside a transfer-time table
(<table>.coll-failures.json, coll-failures-v1) as a typed model (core/schema.py); its
JSON schema generated from it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta

from ..core.schema import Document, register


class CollFailuresFailuresValue(Document, kw_only=True):
    utc: str
    message: str


class CollFailures(Document, kw_only=True):
    """collective calibrations that failed, beside a transfer-time table
    (<table>.coll-failures.json), version 1"""

    schema: Literal["mpi-overlap/coll-failures"]
    schema_version: Literal[1]
    failures: Annotated[
        dict[Annotated[str, Meta(pattern="^[1-9][0-9]*$")], CollFailuresFailuresValue],
        Meta(description="per communicator size (the key, in decimal): the last failed attempt"),
    ]


MODELS: dict[str, Any] = {
    "coll-failures-v1": CollFailures,
}
register(MODELS)
