"""Trace format versions (profile/trace/reader.py): version-1 files (written before message
matching) are still read, and a run made of them gets a two-sided analysis that says why
there is none; version 2's event types, and only its, are accepted. Files are built here
byte by byte (no MPI)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from mpi_overlap.core.errors import UserError
from mpi_overlap.profile.analysis.twosided import two_sided
from mpi_overlap.profile.trace import reader as rd
from mpi_overlap.profile.trace.timeline import rank_timeline


def _events(*rows: tuple[int, int, int, int, int, int, int]) -> bytes:
    """(type, t, key, bytes, kind, id, arg) rows as 32-byte events."""
    arr = np.zeros(len(rows), dtype=rd.EVENT)
    for i, (typ, t, key, nbytes, kind, ident, arg) in enumerate(rows):
        arr[i] = (t, key, nbytes, typ, kind, ident, arg)
    return arr.tobytes()


def write_trace(path: Path, version: int, events: bytes, comms: bytes = b"") -> None:
    head = rd.HEADER.pack(rd.MAGIC, version, 0x01020304, 0, 1, 1e-9, 0, 0.0, -1.0, 1,
                          rd.EVENT.itemsize, rd.TRANSFER.itemsize)
    n = len(events) // rd.EVENT.itemsize
    body = rd.CHUNK.pack(rd.EVENTS, 0, n, len(events)) + events
    if comms:
        body += rd.CHUNK.pack(rd.COMMS, 0, 1, len(comms)) + comms
    end = rd.END.pack(n, 0, 0, 0, 1 << 20, len(head) + len(body), 0, 1, 0, 0.0, -1.0)
    path.write_bytes(head + body + rd.CHUNK.pack(rd.END_CHUNK, 0, 0, len(end)) + end)


CALL = ((rd.EV_ENTER, 100, 0, 0, 0, 1, 0), (rd.EV_EXIT, 200, 0, 0, 0, 0, 0))


def test_a_version_1_trace_is_read_and_left_unmatched(tmp_path: Path) -> None:
    write_trace(tmp_path / "trace.rank-0.mopt", 1, _events(*CALL))
    tr = rd.read_trace(tmp_path / "trace.rank-0.mopt")
    assert tr.version == 1 and tr.comms == {}
    tl = rank_timeline(tr)
    assert list(tl.threads[0].enter) == [100] and tl.messages == []
    ts = two_sided(tmp_path, {"ranks": [], "rankings": {}}, None)
    assert ts is not None and not ts["available"]
    assert "version 1" in ts["reason"] and "--trace" in ts["reason"]


def test_version_2_events_only_in_version_2(tmp_path: Path) -> None:
    match = (rd.EV_MATCH, 100, 7, 3, 0, 0, 1)
    write_trace(tmp_path / "v1.mopt", 1, _events(*CALL, match))
    with pytest.raises(UserError, match="unknown type 13"):
        rd.read_trace(tmp_path / "v1.mopt")
    comm = struct.pack("<QIIII", 7, 0, 2, 0, 0) + struct.pack("<2i", 0, 1)
    write_trace(tmp_path / "v2.mopt", 2, _events(*CALL, match), comm)
    tr = rd.read_trace(tmp_path / "v2.mopt")
    assert tr.version == 2 and tr.comms[7].local == (0, 1)
    assert tr.comms[7].world_rank(1) == 1 and tr.comms[7].world_rank(2) == -1


def test_a_truncated_communicator_table_is_one_line(tmp_path: Path) -> None:
    comm = struct.pack("<QIIII", 7, 0, 3, 0, 0) + struct.pack("<2i", 0, 1)  # 3 said, 2 given
    write_trace(tmp_path / "bad.mopt", 2, _events(*CALL), comm)
    with pytest.raises(UserError, match="corrupt communicator table"):
        rd.read_trace(tmp_path / "bad.mopt")
