"""Reads one rank's timeline trace (trace.rank-N.mopt, written by
native/profiler/mop_trace.c; the format is in docs/profiler.md, "Timeline traces").

A file is a 64-byte header and whole chunks. Version 2 adds what matching a message with
its other end needs: MATCH events (communicator id, tag, peer) after every transfer event,
STATUS events (the source and tag a receive matched) after every completion, and COMMS
chunks (each communicator's members as world ranks); version 1 files are still read (they
have none of these, so their messages cannot be matched by tag and communicator).

Version 3 gives a MATCH event's id the message's datatype layout (0: one contiguous block,
or not known) and adds DTYPES chunks, one per non-contiguous datatype (dtypes.py).

A rank that stopped before MPI_Finalize leaves no END chunk: its trace is read up to its
last flush and says so. Anything else
that does not fit the format (wrong magic, a chunk cut short, an unknown chunk type) is
refused with a one-line UserError naming the file and the byte where it went wrong.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...core.errors import UserError
from .dtypes import Layout, parse_record

MAGIC = b"MOPTRACE"
VERSION = 3
VERSIONS = (1, 2, 3)  # read
HEADER = struct.Struct("<8sIIiidQddIHH")  # 64 bytes
CHUNK = struct.Struct("<IIII")
END = struct.Struct("<QQQQQQIIQdd")  # 80 bytes

FN_NAMES, KIND_NAMES, REGION_NAMES, EVENTS, TRANSFERS, END_CHUNK, COMMS, DTYPES = range(1, 9)
COMM_HEAD = struct.Struct("<QIIII")  # id, flags, local size, remote size, 0

EVENT = np.dtype([("t", "<u8"), ("key", "<u8"), ("bytes", "<i8"), ("type", "u1"),
                  ("kind", "u1"), ("id", "<u2"), ("arg", "<i4")])
TRANSFER = np.dtype([("t_begin", "<u8"), ("t_end", "<u8"), ("key", "<u8"), ("bytes", "<i8"),
                     ("xfer_s", "<f8"), ("min_s", "<f8"), ("max_s", "<f8"), ("peer", "<i4"),
                     ("fn", "<u2"), ("region", "<u2"), ("kind", "u1"), ("case", "u1"),
                     ("flags", "u1"), ("pad", "V5")])
assert EVENT.itemsize == 32 and TRANSFER.itemsize == 72

# mop_event_type (native/profiler/mop_event.h)
EV_ENTER, EV_EXIT, EV_BEGIN, EV_END, EV_INCALL, EV_PINIT, EV_START, EV_FREE = range(1, 9)
EV_REGION_BEGIN, EV_REGION_END, EV_PCONTROL, EV_JOIN, EV_MATCH, EV_STATUS = range(9, 15)
LAST_EVENT = {1: EV_JOIN, 2: EV_STATUS, 3: EV_STATUS}  # the highest event type of each version
# MATCH: kind flags; arg: peer as named (these for the wildcards); bytes: tag or root;
# id (version 3): the message's datatype layout, 0 one contiguous block or not known
MATCH_FROM_STATUS, MATCH_COLL = 1, 2
PEER_ANY, PEER_NULL, TAG_ANY = -2, -3, -1
# COMMS flags
COMM_INTER, COMM_LAZY = 1, 2
# mop_kind and mop_case
KIND_SEND, KIND_RECV = 0, 1
CASE_IN_CALL, CASE_ACROSS, CASE_BEGIN_ONLY, CASE_END_ONLY = range(4)
CASE_NAMES = ("in-call", "across-calls", "begin-only", "end-only")
FLAG_HAS_KEY, FLAG_CLAMPED = 1, 2


@dataclass
class EndRecord:
    events: int
    dropped_events: int
    transfers: int
    dropped_transfers: int
    cap_bytes: int
    bytes: int
    truncated: bool
    threads: int
    sync_ticks: int
    sync_s: float
    sync_rtt_s: float  # < 0: not measured


@dataclass(frozen=True)
class Comm:
    """A communicator as the rank that named it saw it: its id's flags and its members as
    world ranks (local group, and the remote one of an intercommunicator)."""

    flags: int
    local: tuple[int, ...]
    remote: tuple[int, ...]

    def world_rank(self, rank: int) -> int:
        """The world rank of a peer named by `rank` (of the remote group for an
        intercommunicator); -1 when out of range."""
        group = self.remote if self.flags & COMM_INTER else self.local
        return group[rank] if 0 <= rank < len(group) else -1


@dataclass
class RankTrace:
    path: Path
    rank: int
    size: int
    s_per_tick: float
    clock: str
    sync_ticks: int
    sync_s: float
    sync_rtt_s: float  # < 0: not measured
    fn_names: dict[int, str] = field(default_factory=dict)
    kind_names: dict[int, str] = field(default_factory=dict)
    region_names: dict[int, str] = field(default_factory=dict)
    events: dict[int, np.ndarray] = field(default_factory=dict)  # thread -> EVENT array
    transfers: dict[int, np.ndarray] = field(default_factory=dict)  # thread -> TRANSFER array
    end: EndRecord | None = None
    file_bytes: int = 0
    version: int = VERSION
    comms: dict[int, Comm] = field(default_factory=dict)  # communicator id -> members
    dtypes: dict[int, Layout] = field(default_factory=dict)  # layout id -> datatype

    @property
    def threads(self) -> list[int]:
        return sorted(set(self.events) | set(self.transfers))

    def fn(self, fid: int) -> str:
        return self.fn_names.get(fid, f"#{fid}")

    def kind(self, kid: int) -> str:
        return self.kind_names.get(kid, f"kind {kid}")

    def region(self, rid: int) -> str:
        return self.region_names.get(rid, f"#{rid}")

    def seconds(self, ticks: np.ndarray | int) -> np.ndarray | float:
        """Seconds on rank 0's timeline (docs/profiler.md, "Clock alignment")."""
        slope = self.slope()
        diff = np.asarray(ticks, dtype=np.uint64).astype(np.int64) - np.int64(self.sync_ticks)
        return self.sync_s + diff.astype(np.float64) * slope

    def slope(self) -> float:
        """Seconds per tick against rank 0's clock: from the start and end alignments when
        both were measured, else the rank's own rate."""
        e = self.end
        if (e is None or e.sync_rtt_s < 0 or self.sync_rtt_s < 0
                or e.sync_ticks <= self.sync_ticks):
            return self.s_per_tick
        fitted = (e.sync_s - self.sync_s) / (e.sync_ticks - self.sync_ticks)
        # A fit far from the measured rate is a bad measurement, not a clock.
        return fitted if abs(fitted / self.s_per_tick - 1.0) < 0.01 else self.s_per_tick


def _bad(path: Path, what: str) -> UserError:
    return UserError(f"{path}: {what}")


def _names(path: Path, payload: bytes, count: int, offset: int) -> dict[int, str]:
    out: dict[int, str] = {}
    pos = 0
    for _ in range(count):
        if pos + 4 > len(payload):
            raise _bad(path, f"corrupt name table in the chunk at byte {offset}")
        (ident,) = struct.unpack_from("<I", payload, pos)
        nul = payload.find(b"\0", pos + 4)
        if nul < 0:
            raise _bad(path, f"corrupt name table in the chunk at byte {offset}")
        out[ident] = payload[pos + 4:nul].decode("utf-8", "replace")
        pos = nul + 1
    if pos != len(payload):
        raise _bad(path, f"corrupt name table in the chunk at byte {offset}")
    return out


def _comms(path: Path, payload: bytes, count: int, offset: int, out: dict[int, Comm]) -> None:
    pos = 0
    for _ in range(count):
        if pos + COMM_HEAD.size > len(payload):
            raise _bad(path, f"corrupt communicator table in the chunk at byte {offset}")
        ident, flags, n, m, _zero = COMM_HEAD.unpack_from(payload, pos)
        pos += COMM_HEAD.size
        if pos + 4 * (n + m) > len(payload):
            raise _bad(path, f"corrupt communicator table in the chunk at byte {offset}")
        ranks = struct.unpack_from(f"<{n + m}i", payload, pos)
        pos += 4 * (n + m)
        out[ident] = Comm(flags, tuple(ranks[:n]), tuple(ranks[n:]))
    if pos != len(payload):
        raise _bad(path, f"corrupt communicator table in the chunk at byte {offset}")


def read_trace(path: Path) -> RankTrace:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror or err}") from None
    return parse_trace(data, path)


def parse_trace(data: bytes, path: Path) -> RankTrace:
    """The trace in `data` (the bytes of the file at `path`, which names it in errors)."""
    if len(data) < HEADER.size:
        raise _bad(path, f"not a trace: {len(data)} bytes, shorter than the "
                         f"{HEADER.size}-byte header")
    (magic, version, order, rank, size, spt, sync_ticks, sync_s, sync_rtt, clock, ev_bytes,
     tr_bytes) = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise _bad(path, "not an mpi-overlap trace (wrong magic)")
    if version not in VERSIONS:
        raise _bad(path, f"trace format version {version}; this mpi-overlap reads versions "
                         f"{', '.join(map(str, VERSIONS))}")
    if order != 0x01020304 or ev_bytes != EVENT.itemsize or tr_bytes != TRANSFER.itemsize:
        raise _bad(path, "corrupt header (byte order or record sizes)")
    if not spt > 0 or rank < 0 or size < 1 or rank >= size:
        raise _bad(path, f"corrupt header (rank {rank} of {size}, {spt} s per tick)")
    tr = RankTrace(path=path, rank=rank, size=size, s_per_tick=spt,
                   clock="tsc" if clock == 0 else "monotonic", sync_ticks=sync_ticks,
                   sync_s=sync_s, sync_rtt_s=sync_rtt, file_bytes=len(data), version=version)
    events: dict[int, list[np.ndarray]] = {}
    transfers: dict[int, list[np.ndarray]] = {}
    off = HEADER.size
    view = memoryview(data)
    while off < len(data):
        if tr.end is not None:
            raise _bad(path, f"corrupt: data after the end record at byte {off}")
        if off + CHUNK.size > len(data):
            raise _bad(path, f"truncated at byte {len(data)}: a chunk header at byte {off} is "
                             "cut short")
        ctype, thread, count, nbytes = CHUNK.unpack_from(data, off)
        start = off + CHUNK.size
        if start + nbytes > len(data):
            raise _bad(path, f"truncated at byte {len(data)}: the chunk at byte {off} needs "
                             f"{nbytes} bytes")
        payload = view[start:start + nbytes]  # no copy: event chunks are most of the file
        if ctype in (EVENTS, TRANSFERS):
            dt = EVENT if ctype == EVENTS else TRANSFER
            if nbytes != count * dt.itemsize:
                raise _bad(path, f"corrupt chunk at byte {off}: {count} records in {nbytes} "
                                 "bytes")
            arr = np.frombuffer(payload, dtype=dt)
            (events if ctype == EVENTS else transfers).setdefault(thread, []).append(arr)
        elif ctype == FN_NAMES:
            tr.fn_names.update(_names(path, bytes(payload), count, off))
        elif ctype == KIND_NAMES:
            tr.kind_names.update(_names(path, bytes(payload), count, off))
        elif ctype == REGION_NAMES:
            tr.region_names.update(_names(path, bytes(payload), count, off))
        elif ctype == COMMS and version >= 2:
            _comms(path, bytes(payload), count, off, tr.comms)
        elif ctype == DTYPES and version >= 3:
            try:
                layout = parse_record(bytes(payload))
            except (ValueError, IndexError, struct.error) as err:
                raise _bad(path, f"corrupt datatype record in the chunk at byte {off}: "
                                 f"{err}") from None
            tr.dtypes[layout.ident] = layout
        elif ctype == END_CHUNK:
            if nbytes != END.size:
                raise _bad(path, f"corrupt end record at byte {off}")
            vals = END.unpack(payload)
            tr.end = EndRecord(*vals[:6], bool(vals[6]), *vals[7:])  # type: ignore[arg-type]
        else:
            raise _bad(path, f"corrupt: unknown chunk type {ctype} at byte {off}")
        off = start + nbytes
    tr.events = {t: np.concatenate(a) for t, a in events.items()}
    tr.transfers = {t: np.concatenate(a) for t, a in transfers.items()}
    for t, ev in tr.events.items():
        bad = (ev["type"] < EV_ENTER) | (ev["type"] > LAST_EVENT[version])
        if bad.any():
            raise _bad(path, f"corrupt: thread {t} has an event of unknown type "
                             f"{int(ev['type'][bad][0])}")
    for t, x in tr.transfers.items():
        if (x["case"] > CASE_END_ONLY).any():
            raise _bad(path, f"corrupt: thread {t} has a transfer of unknown case")
    return tr
