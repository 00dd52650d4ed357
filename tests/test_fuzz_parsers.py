"""Fuzzing every parser the project owns with hypothesis (issue 14, "Fuzzing in CI"):
transfer-time tables, timeline traces, JSON inputs, size lists, --env-matrix specs,
--bins, --trace-cap and toolchain names.

The property, for each: valid input parses (and round-trips where there is a writer);
anything else raises the project's one-line UserError, never another exception.

Bounded so that CI stays fast and reproducible: `derandomize=True` (the examples are a
function of the test, the same on every run), no deadline (a loaded machine must not
fail a test), and a few hundred examples per parser: a few seconds each. For a longer
local hunt: `MO_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz_parsers.py`.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mpi_overlap.calibration.xfer_table import (
    CLASSES,
    COLL_OPS,
    XferTable,
    parse_table,
    read_table,
    render_table,
)
from mpi_overlap.core.errors import UserError
from mpi_overlap.core.json_input import MAX_DEPTH, parse_json, read_json
from mpi_overlap.core.sizes import MAX_SIZE, parse_sizes
from mpi_overlap.platform.toolchains import NAME_PATTERN, check_name
from mpi_overlap.profile.trace import reader
from mpi_overlap.run.env_matrix import parse_env_matrix
from mpi_overlap.run.preload import parse_bins, parse_trace_cap
from property_examples import examples

EXAMPLES = int(os.environ.get("MO_FUZZ_EXAMPLES", examples(200)))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# bad inputs tried / handled cleanly, per parser (printed with -s at the end of the module)
TRIED: Counter[str] = Counter()
CLEAN: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _counts() -> Iterator[None]:
    yield
    for name in sorted(TRIED):
        print(f"\nfuzz {name}: {TRIED[name]} bad inputs tried, {CLEAN[name]} handled cleanly")


def _bad(name: str, parse: Callable[[], Any]) -> Any:
    """Run a parser on input that may be bad: success, or a one-line UserError; any other
    exception fails the test (and is not counted as clean)."""
    TRIED[name] += 1
    try:
        out = parse()
    except UserError as err:
        assert "\n" not in str(err) and str(err).strip(), repr(str(err))
        out = err
    CLEAN[name] += 1
    return out


def _mutations(data: bytes) -> st.SearchStrategy[bytes]:
    """Damaged copies of `data`: cut short, bytes overwritten, inserted or deleted."""
    n = len(data)

    def overwrite(pos: int, junk: bytes) -> bytes:
        return data[:pos] + junk + data[pos + len(junk):]

    return st.one_of(
        st.integers(0, n).map(lambda k: data[:k]),
        st.tuples(st.integers(0, n), st.binary(min_size=1, max_size=8)).map(
            lambda t: overwrite(*t)),
        st.tuples(st.integers(0, n), st.binary(min_size=1, max_size=8)).map(
            lambda t: data[:t[0]] + t[1] + data[t[0]:]),
        st.tuples(st.integers(0, n), st.integers(1, 16)).map(
            lambda t: data[:t[0]] + data[t[0] + t[1]:]),
        st.integers(0, n).map(lambda k: data[:k] + b"7" * 4400 + data[k:]),  # int() limit
    )


# ----- transfer-time tables -------------------------------------------------------------------

_FP = st.text("0123456789abcdef", min_size=16, max_size=16)
_KEY = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
               max_size=30).map(str.strip).filter(lambda k: k == " ".join(k.split()))
_SECONDS = st.floats(0, 10, allow_nan=False).map(lambda t: float(f"{t:.6g}"))


def _series(min_size: int = 1) -> st.SearchStrategy[list[tuple[int, float]]]:
    return st.dictionaries(st.integers(0, 1 << 36), _SECONDS, min_size=min_size,
                           max_size=8).map(lambda d: sorted(d.items()))


@st.composite
def tables(draw: st.DrawFn) -> XferTable:
    points = draw(st.dictionaries(st.sampled_from(CLASSES), _series(), min_size=1))
    coll = draw(st.dictionaries(st.tuples(st.sampled_from(COLL_OPS), st.integers(1, 4096)),
                                _series(), max_size=4))
    name = draw(st.from_regex(NAME_PATTERN, fullmatch=True))
    return XferTable(machine_fp=draw(_FP), machine_key=draw(_KEY), toolchain_fp=draw(_FP),
                     toolchain_key=draw(_KEY), toolchain_name=name, ranks=draw(st.integers(0, 99)),
                     nodes=draw(st.integers(1, 9)), created="2026-01-01T00:00:00Z",
                     points=points, coll=coll)


@FUZZ
@given(tables())
def test_table_valid_round_trips(table: XferTable) -> None:
    back = parse_table(render_table(table))
    assert back.points == table.points and back.coll == table.coll
    assert (back.machine_fp, back.toolchain_fp, back.toolchain_name, back.ranks, back.nodes) == (
        table.machine_fp, table.toolchain_fp, table.toolchain_name, table.ranks, table.nodes)


@FUZZ
@given(st.data())
def test_table_damaged_is_one_line(data: st.DataObject) -> None:
    text = render_table(data.draw(tables())).encode()
    damaged = data.draw(_mutations(text))
    assume(damaged != text)
    out = _bad("table", lambda: parse_table(damaged.decode("utf-8", "replace")))
    if isinstance(out, XferTable):  # what parses must make sense
        for pts in [*out.points.values(), *out.coll.values()]:
            assert all(b >= 0 and math.isfinite(t) and t >= 0 for b, t in pts)
            assert [b for b, _ in pts] == sorted({b for b, _ in pts})


@FUZZ
@given(st.binary(max_size=300))
def test_table_file_of_any_bytes_is_one_line(tmp_path_factory: pytest.TempPathFactory,
                                             raw: bytes) -> None:
    path = tmp_path_factory.mktemp("t") / "x.table"
    path.write_bytes(b"mpi-overlap-xfer-table 2\n" + raw)
    _bad("table", lambda: read_table(path))


# ----- timeline traces ------------------------------------------------------------------------

_NAME = st.text(max_size=12).filter(lambda s: "\0" not in s)


def _chunk(ctype: int, count: int, payload: bytes, thread: int = 0) -> bytes:
    return reader.CHUNK.pack(ctype, thread, count, len(payload)) + payload


def _names(names: dict[int, str]) -> bytes:
    return b"".join(struct.pack("<I", i) + n.encode() + b"\0" for i, n in names.items())


@st.composite
def traces(draw: st.DrawFn) -> bytes:
    size = draw(st.integers(1, 64))
    header = reader.HEADER.pack(reader.MAGIC, reader.VERSION, 0x01020304,
                                draw(st.integers(0, size - 1)), size,
                                draw(st.floats(1e-10, 1e-6)), 1000, 0.0, -1.0, 0,
                                reader.EVENT.itemsize, reader.TRANSFER.itemsize)
    chunks = [_chunk(reader.FN_NAMES, 2, _names({1: "MPI_Isend", 2: "MPI_Wait"})),
              _chunk(reader.REGION_NAMES, 1, _names({0: draw(_NAME)}))]
    n = draw(st.integers(0, 6))
    ev = bytearray(n * reader.EVENT.itemsize)
    for i in range(n):
        struct.pack_into("<QQqBBHi", ev, i * 32, 1000 + i, i, 64, draw(st.integers(1, 11)), 0,
                         1, 0)
    chunks.append(_chunk(reader.EVENTS, n, bytes(ev)))
    if draw(st.booleans()):
        chunks.append(_chunk(reader.END_CHUNK, 1, reader.END.pack(n, 0, 0, 0, 1 << 20,
                                                                  len(ev), 0, 1, 2000, 0.0,
                                                                  -1.0)))
    return header + b"".join(chunks)


@FUZZ
@given(traces())
def test_trace_valid_parses(data: bytes) -> None:
    tr = reader.parse_trace(data, Path("trace.rank-0.mopt"))
    assert 0 <= tr.rank < tr.size and tr.fn(1) == "MPI_Isend"
    assert tr.end is None or tr.end.events == sum(len(e) for e in tr.events.values())


@FUZZ
@given(st.data())
def test_trace_damaged_is_one_line(data: st.DataObject) -> None:
    good = data.draw(traces())
    damaged = data.draw(_mutations(good))
    assume(damaged != good)
    _bad("trace", lambda: reader.parse_trace(damaged, Path("trace.rank-0.mopt")))


# ----- JSON inputs ----------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 63), 1 << 63)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=30)


@FUZZ
@given(st.dictionaries(st.text(max_size=8), _JSON, max_size=6))
def test_json_valid_parses(doc: dict[str, Any]) -> None:
    doc.pop("schema_version", None)
    assert parse_json(json.dumps(doc).encode(), "doc.json") == doc


@FUZZ
@given(st.data())
def test_json_damaged_is_one_line(data: st.DataObject) -> None:
    doc = data.draw(st.dictionaries(st.text(max_size=8), _JSON, min_size=1, max_size=6))
    text = json.dumps(doc).encode()
    damaged = data.draw(st.one_of(_mutations(text), st.binary(max_size=200),
                                  st.integers(MAX_DEPTH - 2, 3 * MAX_DEPTH).map(
                                      lambda d: b"[" * d + b"]" * d)))
    _bad("json", lambda: parse_json(damaged, "doc.json"))


@FUZZ
@given(st.binary(max_size=200))
def test_json_file_of_any_bytes_is_one_line(tmp_path_factory: pytest.TempPathFactory,
                                            raw: bytes) -> None:
    path = tmp_path_factory.mktemp("j") / "result.json"
    path.write_bytes(raw)
    _bad("json", lambda: read_json(path))


# ----- size lists, --bins, --trace-cap --------------------------------------------------------

_SIZE = st.one_of(st.integers(0, 1 << 30).map(str),
                  st.tuples(st.integers(0, 1023), st.sampled_from("kKmMgG")).map(
                      lambda t: f"{t[0]}{t[1]}"))


@FUZZ
@given(st.lists(st.one_of(_SIZE, st.tuples(_SIZE, _SIZE).map(":".join)), min_size=1,
                max_size=5))
def test_sizes_valid_or_one_line(items: list[str]) -> None:
    out = _bad("sizes (valid grammar)", lambda: parse_sizes(",".join(items)))
    if isinstance(out, list):
        assert out == sorted(set(out)) and all(0 <= s <= MAX_SIZE for s in out)


_SIZE_CHARS = (st.text("0123456789kKmMgGtT:,- .x\t", max_size=30) | st.text(max_size=30)
               | st.text("0123456789", min_size=4000, max_size=5000))  # past int()'s limit


@FUZZ
@given(_SIZE_CHARS)
def test_sizes_any_text_is_one_line(text: str) -> None:
    _bad("sizes", lambda: parse_sizes(text))


@FUZZ
@given(_SIZE_CHARS)
def test_bins_and_trace_cap_any_text_is_one_line(text: str) -> None:
    out = _bad("bins", lambda: parse_bins(text))
    if isinstance(out, list):
        assert out == sorted(set(out)) and all(e > 0 for e in out) and len(out) <= 64
    cap = _bad("trace-cap", lambda: parse_trace_cap(text))
    assert isinstance(cap, UserError) or cap > 0


# ----- --env-matrix ---------------------------------------------------------------------------

_VAR = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)


@FUZZ
@given(st.dictionaries(_VAR, st.lists(st.text("abcxyz019._-", min_size=1, max_size=4),
                                      min_size=1, max_size=3, unique=True), max_size=3))
def test_env_matrix_valid_parses(axes: dict[str, list[str]]) -> None:
    variants = parse_env_matrix([f"{k}={','.join(v)}" for k, v in axes.items()])
    assert len(variants) == (math.prod(len(v) for v in axes.values()) if axes else 0)


@FUZZ
@given(st.lists(st.text(max_size=20) | st.text("AB_=,x ", max_size=12), max_size=4))
def test_env_matrix_any_specs_are_one_line(specs: list[str]) -> None:
    _bad("env-matrix", lambda: parse_env_matrix(specs))


# ----- toolchain names ------------------------------------------------------------------------

@FUZZ
@given(st.from_regex(NAME_PATTERN, fullmatch=True))
def test_toolchain_name_valid_is_accepted(name: str) -> None:
    assert check_name(name) == name


@FUZZ
@given(st.text(max_size=80) | st.text("./-_aZ9\n\x1b ", max_size=12))
def test_toolchain_name_anything_else_is_one_line(name: str) -> None:
    out = _bad("toolchain name", lambda: check_name(name))
    if not isinstance(out, UserError):  # accepted: a plain file name inside its directory
        base = Path("/state/build")
        assert (base / out).resolve().parent == base and "\n" not in out
        assert not out.startswith((".", "-")) and len(out) <= 64
