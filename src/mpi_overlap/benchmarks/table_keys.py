"""What a transfer-time table is filed under (calibration/xfer_table.py: the machine and the
MPI library, each as text and as a fingerprint), as the two benchmarks that measure a table
(pingpong for the point-to-point role, collectives for the collective one) write it into
their results: one declaration for both documents' models."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ..core.schema import Document

Fp = Annotated[str, Meta(pattern="^[0-9a-f]{16}$")]


class TableKeys(Document, kw_only=True):
    """The table's keys in a benchmark's results (a base of its model)."""

    machine_key: Annotated[
        str, Meta(description="cpu=<model name>;ncpu=<online CPUs> of rank 0's node")
    ]
    machine_fp: Fp
    toolchain_key: Annotated[
        str,
        Meta(
            max_length=200,
            description="MPI_Get_library_version, whitespace collapsed, cut to 200 characters",
        ),
    ]
    toolchain_fp: Fp
