"""The replay pass in C (native/replay/replay_engine.c, MPI-free), called through ctypes:
the program laid out in flat arrays, the pass run in C, its answers put back in the
Python pass's shapes (engine.py keeps that pass as the reference; the two give the
same timelines bit for bit: tests/test_predict_native.py).

The library is built with the rest of native/ (`mpi-overlap build`, or any command that
builds a toolchain) into the state directory's build folders, and found there: the
newest libmop_replay_engine.so of a non-sanitised build, or MPI_OVERLAP_REPLAY_LIB. It does not
depend on the MPI, so any toolchain's build will do. Where none is built, engine.replay
runs the Python pass and says so (Replay.engine, and `predict`'s output)."""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from itertools import chain, pairwise
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from ..core.paths import state_dir
from .model import Costs, residual_key
from .program import COLL_BLOCK, Program

LIBRARY = "libmop_replay_engine.so"
ABI = 4  # MOP_REPLAY_ABI in replay_engine.h
OVERLAP_CODES = {"model": 0, "none": 1, "perfect": 2}

_P = ctypes.c_void_p
_ENTER, _EXIT, _OPS, _FN = (attrgetter(a) for a in ("enter", "exit", "ops", "fn"))


class _In(ctypes.Structure):
    _fields_ = [("ranks", ctypes.c_int64), ("call_off", _P), ("enter", _P), ("exit", _P),
                ("add", _P), ("compute", _P), ("op_off", _P), ("op_code", _P),
                ("op_idx", _P), ("msgs", ctypes.c_int64), ("T", _P), ("o_s", _P),
                ("o_r", _P), ("eager", _P), ("hid_s", _P), ("hid_r", _P), ("at_s", _P),
                ("at_r", _P), ("hiding", ctypes.c_int32), ("polls", ctypes.c_int32),
                ("colls", ctypes.c_int64), ("rooted", _P), ("root", _P), ("tcoll", _P),
                ("mem_off", _P), ("members", _P), ("overlap", ctypes.c_int32),
                ("async_progress", ctypes.c_int32), ("lane", _P), ("occupy", _P),
                ("lanes", ctypes.c_int64), ("floor", _P)]


class _Out(ctypes.Structure):
    _fields_ = [("enter", _P), ("exit", _P), ("send_post", _P), ("recv_post", _P),
                ("sync", _P), ("sync_order", _P), ("sync_count", ctypes.c_int64),
                ("ended", _P), ("events", ctypes.c_int64), ("link_wait", _P)]


_found: dict[str, Path] = {}


def library_path() -> Path | None:
    """MPI_OVERLAP_REPLAY_LIB, else the newest built library (sanitised builds left out:
    they need their runtime loaded first), found once per process and state directory,
    so that the pass (library) and the layout (_py_library) load the same file and a
    replay does not search the build folders again. Not found is not kept: a later
    build is found."""
    override = os.environ.get("MPI_OVERLAP_REPLAY_LIB")
    if override:
        return Path(override) if Path(override).is_file() else None
    state = str(state_dir())
    if state not in _found:
        found = [p for p in (state_dir() / "build").glob(f"*/replay/{LIBRARY}")
                 if "-san-" not in p.parent.parent.name]
        if not found:
            return None
        _found[state] = max(found, key=lambda p: p.stat().st_mtime)
    return _found[state]


_loaded: dict[str, Any] = {}


def library() -> tuple[Any, str | None]:
    """(the loaded library or None, why not): loaded once per process and path."""
    path = library_path()
    if path is None and os.environ.get("MPI_OVERLAP_REPLAY_LIB"):
        return None, (f"MPI_OVERLAP_REPLAY_LIB names no file "
                      f"({os.environ['MPI_OVERLAP_REPLAY_LIB']}), so no {LIBRARY}: "
                      "the Python pass replayed")
    if path is None:
        return None, (f"{LIBRARY} is not built (mpi-overlap build builds it with native/): "
                      "the Python pass replayed")
    key = str(path)
    if key not in _loaded:
        try:
            lib = ctypes.CDLL(key)
            lib.mop_replay_abi.restype = ctypes.c_int
            lib.mop_replay.restype = ctypes.c_int
            lib.mop_replay.argtypes = [ctypes.POINTER(_In), ctypes.POINTER(_Out)]
            abi = lib.mop_replay_abi()
            _loaded[key] = (lib, None) if abi == ABI else (
                None, f"{path} is of another version (ABI {abi}, want {ABI}; rebuild it): "
                      "the Python pass replayed")
        except (OSError, AttributeError) as err:
            _loaded[key] = (None, f"{path} cannot be loaded ({err}): the Python pass replayed")
    return _loaded[key]


def _py_library() -> Any:
    """The library's layout functions (replay_layout.c) through ctypes.PyDLL (the GIL
    held), where it has them and was built for this Python's version; else None."""
    path = library_path()
    if path is None or os.environ.get("MPI_OVERLAP_REPLAY_LAYOUT") == "python":
        return None
    key = "py:" + str(path)
    if key not in _loaded:
        try:
            py = ctypes.PyDLL(str(path))
            py.mop_replay_py_version.restype = ctypes.c_int
            ok = py.mop_replay_py_version() >> 16 == sys.hexversion >> 16
        except (OSError, AttributeError):
            ok = False
        if ok:
            py.mop_replay_layout.restype = ctypes.c_int64
            py.mop_replay_layout.argtypes = [ctypes.py_object, ctypes.py_object,
                                             ctypes.c_int64, ctypes.c_int64, *[_P] * 6]
        _loaded[key] = py if ok else None
    return _loaded[key]


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def _buf(values: Any, dtype: Any) -> np.ndarray:
    """A contiguous array of `values`, at least one element long (ctypes hands C an
    address, which an empty array may not have)."""
    a = np.ascontiguousarray(values, dtype=dtype)
    return a if a.size else np.zeros(1, dtype=dtype)


def _flags(ks: frozenset[int], m: int) -> np.ndarray:
    out = np.zeros(max(m, 1), dtype=np.uint8)
    idx = [k for k in ks if 0 <= k < m]
    if idx:
        out[idx] = 1
    return out


Result = tuple[list[list[float]], list[list[float]], list[float], list[float],
               list[dict[int, float]], int, list[int], list[float]]


@dataclass
class Layout:
    """A program in the C pass's arrays, made on its first replay and kept on it
    (Program.layout): the replays after it (each advice item's, gains.py) start from
    here. `key` is what a program's changes after its first replay would most likely
    alter (its ranks, calls, messages, collectives): a program whose key moved is laid
    out again; a Program is not meant to change once replayed (build_program and the
    tests make it whole first)."""

    key: tuple[int, ...]
    call_off: list[int]      # per rank + 1, as Python ints (the answers' slices)
    a_call_off: np.ndarray
    enter: np.ndarray        # per call
    exit: np.ndarray
    duration: np.ndarray     # exit - enter
    nops: np.ndarray
    op_off: np.ndarray
    op_code: np.ndarray      # per operation
    op_idx: np.ndarray
    fn_names: list[str]      # the functions, and each call's index in them
    fn_id: np.ndarray
    key_names: list[str]     # the residuals' keys (engine.call_key), each call's index
    key_id: np.ndarray
    rank_of: np.ndarray      # per call: its rank
    mem_off: np.ndarray
    members: np.ndarray      # per member slot: its rank
    owner: np.ndarray        # per member slot: its collective
    roots: np.ndarray


def _key(prog: Program) -> tuple[int, ...]:
    return (id(prog.calls), len(prog.calls), sum(map(len, prog.calls)), len(prog.msgs),
            len(prog.colls))


def layout(prog: Program) -> Layout | None:
    """The program's Layout (kept on it), None for a program without calls or whose
    objects are of another shape (the Python pass answers it)."""
    key = _key(prog)
    kept = prog.layout
    if isinstance(kept, Layout) and kept.key == key:
        return kept
    calls = prog.calls
    n = len(calls)
    lens = np.fromiter(map(len, calls), dtype=np.int64, count=n)
    a_call_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=a_call_off[1:])
    total = int(a_call_off[-1])
    if total == 0:
        return None
    try:
        got = _calls_in_c(calls, total) or _calls_in_python(calls, total)
    except (TypeError, ValueError, AttributeError):
        return None
    enter, exit_, nops, fn_id, names, op_code, op_idx = got
    op_off = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(nops, out=op_off[1:])
    key_names, key_id = _keys(names, fn_id, nops, op_off, op_code)
    nc = len(prog.colls)
    sizes = [len(cl.members) for cl in prog.colls]
    mem_off = np.zeros(nc + 1, dtype=np.int64)
    np.cumsum(np.asarray(sizes, dtype=np.int64), out=mem_off[1:])
    nslots = int(mem_off[-1])
    members = np.fromiter(chain.from_iterable(cl.members for cl in prog.colls),
                          dtype=np.int64, count=nslots)
    out = Layout(key=key, call_off=a_call_off.tolist(), a_call_off=a_call_off,
                 enter=enter, exit=exit_, duration=exit_ - enter, nops=nops, op_off=op_off,
                 op_code=op_code, op_idx=op_idx, fn_names=names, fn_id=fn_id,
                 key_names=key_names, key_id=key_id,
                 rank_of=np.repeat(np.arange(n, dtype=np.int64), lens),
                 mem_off=mem_off, members=_buf(members, np.int64),
                 owner=np.repeat(np.arange(nc, dtype=np.int64), sizes),
                 roots=_buf([cl.root for cl in prog.colls], np.int64))
    prog.layout = out
    return out


def _keys(names: list[str], fn_id: np.ndarray, nops: np.ndarray, op_off: np.ndarray,
          op_code: np.ndarray) -> tuple[list[str], np.ndarray]:
    """engine.call_key of every call, as an index into the keys that occur: its
    function's and its kind (model.call_kind: per operation bit 0 a send's end, bit 1 a
    receive's, bit 2 a collective's), worked out on the arrays."""
    total = len(fn_id)
    bits = np.where(op_code[:int(op_off[-1])] >= COLL_BLOCK, 4,
                    np.left_shift(1, op_code[:int(op_off[-1])] & 1)).astype(np.int64)
    kind = np.zeros(total, dtype=np.int64)
    has = nops > 0
    if bits.size:
        kind[has] = np.bitwise_or.reduceat(bits, op_off[:-1][has])
    code = fn_id * 8 + kind
    seen = np.flatnonzero(np.bincount(code, minlength=1))
    where = np.zeros(max(int(code.max(initial=0)) + 1, 1), dtype=np.int64)
    where[seen] = np.arange(len(seen))
    return ([residual_key(names[int(x) >> 3], int(x) & 7) for x in seen.tolist()],
            where[code])


Calls = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str], np.ndarray,
              np.ndarray]


def _calls_in_c(calls: list[list[Any]], total: int) -> Calls | None:
    """Per call: enter, exit, number of operations, function index (into the names);
    per operation: code, index; read by replay_layout.c, None where it is not built (for
    this Python) or finds objects of another shape."""
    py = _py_library()
    if py is None:
        return None
    enter, exit_ = np.empty(total), np.empty(total)
    nops, fn_id = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    room = 2 * total + 16  # one walk where calls make at most 2 operations on average
    while True:
        op_code = np.empty(room, dtype=np.int32)
        op_idx = np.empty(room, dtype=np.int64)
        index: dict[str, int] = {}
        got = py.mop_replay_layout(calls, index, total, room, _ptr(enter), _ptr(exit_),
                                   _ptr(nops), _ptr(fn_id), _ptr(op_code), _ptr(op_idx))
        if got < 0:
            return None
        if got <= room:
            break
        room = got
    op_code, op_idx = _buf(op_code[:got], np.int32), _buf(op_idx[:got], np.int64)
    return enter, exit_, nops, fn_id, list(index), op_code, op_idx


def _calls_in_python(calls: list[list[Any]], total: int) -> Calls:
    """_calls_in_c's arrays with C-level iteration (map, chain) over the objects: a
    Python loop over the calls cost as much as the Python pass itself."""
    allc = list(chain.from_iterable(calls))
    enter = np.fromiter(map(_ENTER, allc), dtype=np.float64, count=total)
    exit_ = np.fromiter(map(_EXIT, allc), dtype=np.float64, count=total)
    ops = list(map(_OPS, allc))
    nops = np.fromiter(map(len, ops), dtype=np.int64, count=total)
    flat_ops = np.fromiter(chain.from_iterable(chain.from_iterable(ops)), dtype=np.int64,
                           count=2 * int(nops.sum())).reshape(-1, 2)
    fns = list(map(_FN, allc))
    names = list(set(fns))
    fn_id = np.fromiter(map({f: i for i, f in enumerate(names)}.__getitem__, fns),
                        dtype=np.int64, count=total)
    return (enter, exit_, nops, fn_id, names, _buf(flat_ops[:, 0], np.int32),
            _buf(flat_ops[:, 1], np.int64))


def run(lib: Any, prog: Program, c: Costs, resid: list[dict[str, float]], overlap: str,
        progress: str, hidden: tuple[frozenset[int], frozenset[int]],
        polled: tuple[frozenset[int], frozenset[int]], compute: list[list[float]] | None,
        rooted: list[int], floor: list[list[float]] | None = None) -> Result | None:
    """The pass in C: (enter, exit, send posts, receive posts, collectives'
    synchronisation, events, ranks left waiting, each message's wait for its link
    direction), or None where the Python pass must
    answer (a state it answers with an error, a NaN time, no memory)."""
    calls = prog.calls
    n = len(calls)
    if len(resid) < n:
        return None
    lay = layout(prog)
    if lay is None:
        return None
    total = len(lay.enter)
    # what each call adds when it returns: its key's residual on its rank (0 for a key
    # without one) where it has operations, else its recorded duration
    per_rank = np.array([[res.get(f, 0.0) for f in lay.key_names] for res in resid[:n]],
                        dtype=np.float64).reshape(n, len(lay.key_names))
    a_add = np.where(lay.nops > 0, per_rank[lay.rank_of, lay.key_id], lay.duration)
    a_compute = None
    if compute is not None:
        if len(compute) < n or any(len(compute[r]) < len(cs) for r, cs in enumerate(calls)):
            return None
        a_compute = np.fromiter(chain.from_iterable(
            row if len(row) == len(cs) else row[:len(cs)]
            for row, cs in zip(compute, calls, strict=False)), dtype=np.float64, count=total)
    m, nc = len(prog.msgs), len(prog.colls)
    if min(len(c.T), len(c.o_s), len(c.o_r), len(c.eager)) < m or len(c.coll) < nc:
        return None
    T, o_s, o_r = (_buf(x, np.float64) for x in (c.T, c.o_s, c.o_r))
    lane = occupy = a_floor = None
    lanes = 0
    if c.lane:  # a shared link (model.link_waits)
        if min(len(c.lane), len(c.occupy)) < m:
            return None
        lane, occupy = _buf(c.lane[:m], np.int64), _buf(c.occupy[:m], np.float64)
        lanes = int(lane.max(initial=-1)) + 1
    if floor is not None:
        if len(floor) < n or any(len(floor[r]) < len(cs) for r, cs in enumerate(calls)):
            return None
        a_floor = np.fromiter(chain.from_iterable(
            row[:len(cs)] for row, cs in zip(floor, calls, strict=False)),
            dtype=np.float64, count=total)
    eager = _buf(c.eager, np.uint8)
    hs, hr, ps_, pr_ = (_flags(s, m) for s in (*hidden, *polled))
    a_rooted = _buf(rooted, np.int32)
    tcoll = _buf(c.coll, np.float64)
    nslots = int(lay.mem_off[-1])
    # answers (the pass writes only what it reaches)
    o_enter = np.full(total, np.nan)
    o_exit = np.full(total, np.nan)
    s_post = np.full(max(m, 1), np.nan)
    r_post = np.full(max(m, 1), np.nan)
    sync = np.empty(max(nslots, 1))
    sync_order = np.empty(max(nslots, 1), dtype=np.int64)
    ended = np.zeros(n, dtype=np.uint8)
    link_wait = np.full(max(m, 1), np.nan)
    args = _In(n, _ptr(lay.a_call_off), _ptr(lay.enter), _ptr(lay.exit), _ptr(a_add),
               None if a_compute is None else _ptr(a_compute),
               _ptr(lay.op_off), _ptr(lay.op_code), _ptr(lay.op_idx), m, _ptr(T), _ptr(o_s),
               _ptr(o_r), _ptr(eager), _ptr(hs), _ptr(hr), _ptr(ps_), _ptr(pr_),
               int(bool(hidden[0] or hidden[1])), int(bool(polled[0] or polled[1])),
               nc, _ptr(a_rooted), _ptr(lay.roots), _ptr(tcoll), _ptr(lay.mem_off),
               _ptr(lay.members), OVERLAP_CODES[overlap], int(progress == "async"),
               None if lane is None else _ptr(lane), None if occupy is None else _ptr(occupy),
               lanes, None if a_floor is None else _ptr(a_floor))
    res = _Out(_ptr(o_enter), _ptr(o_exit), _ptr(s_post), _ptr(r_post), _ptr(sync),
               _ptr(sync_order), 0, _ptr(ended), 0, _ptr(link_wait))
    if lib.mop_replay(ctypes.byref(args), ctypes.byref(res)) != 0:
        return None
    le, lx = o_enter.tolist(), o_exit.tolist()
    enters = [le[a:b] for a, b in pairwise(lay.call_off)]
    exits = [lx[a:b] for a, b in pairwise(lay.call_off)]
    csync: list[dict[int, float]] = [{} for _ in range(nc)]
    if res.sync_count:
        order = sync_order[:res.sync_count]
        for j, x, v in zip(lay.owner[order].tolist(), lay.members[order].tolist(),
                           sync[order].tolist(), strict=True):
            csync[j][x] = v
    unresolved = np.flatnonzero(ended == 0).tolist()
    return (enters, exits, s_post[:m].tolist(), r_post[:m].tolist(), csync, int(res.events),
            unresolved, link_wait[:m].tolist())
