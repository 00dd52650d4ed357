"""The datatypes package's documents as typed models (core/schema.py): bench-alignment-v1,
bench-datatypes-v1. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from ...core.schema import Document, register
from ...run.documents import Stats


class Case(Document, kw_only=True, forbid_unknown_fields=True):
    case: str
    kind: Literal[
        "contig",
        "vector_char",
        "vector_int",
        "vector_double",
        "indexed",
        "struct",
        "pack_mpi",
        "pack_loop",
    ]
    offset: Annotated[int, Meta(ge=0)]
    payload_bytes: Annotated[int, Meta(ge=0)]
    extent_bytes: Annotated[int, Meta(ge=0)]
    iterations: Annotated[int, Meta(ge=0)]
    valid: bool
    packed_checksum: Annotated[str, Meta(pattern="^[0-9a-f]{16}$")] | None
    one_way_s: float | None
    time: Stats
    samples_s: list[float | None]


class Size(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    cases: list[Case]


class BenchAlignment(Document, kw_only=True, forbid_unknown_fields=True):
    """(same format as bench-datatypes-v1) 'results' of the datatypes and alignment benchmarks
    (ping-pong of derived datatypes / offset buffers): Per size (payload bytes) and case: a
    sample is one timed block of 'iterations' round trips between ranks 0 and 1; one_way_s
    is the median of block / iterations / 2. 'valid': the receivers found the payload
    correct and the gaps untouched after the case's first exchange. packed_checksum: FNV-1a
    of the packed buffer (pack_mpi, pack_loop), else null."""

    mode: Literal["datatypes", "alignment"]
    struct_extent: Annotated[int, Meta(ge=1)]
    struct_payload: Annotated[int, Meta(ge=1)]
    sizes: list[Size]


class BenchDatatypes(Document, kw_only=True, forbid_unknown_fields=True):
    """'results' of the datatypes and alignment benchmarks (ping-pong of derived datatypes /
    offset buffers): Per size (payload bytes) and case: a sample is one timed block of
    'iterations' round trips between ranks 0 and 1; one_way_s is the median of block /
    iterations / 2. 'valid': the receivers found the payload correct and the gaps untouched
    after the case's first exchange. packed_checksum: FNV-1a of the packed buffer (pack_mpi,
    pack_loop), else null."""

    mode: Literal["datatypes", "alignment"]
    struct_extent: Annotated[int, Meta(ge=1)]
    struct_payload: Annotated[int, Meta(ge=1)]
    sizes: list[Size]


MODELS: dict[str, Any] = {
    "bench-alignment-v1": BenchAlignment,
    "bench-datatypes-v1": BenchDatatypes,
}
register(MODELS)
