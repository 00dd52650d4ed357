"""Datatype layouts in a trace (docs/profiler.md, "Datatype layouts"): `mpi-overlap profile
--trace` of native/tests/datatypes_app.c on 2 ranks of the MPICH and the Open MPI wheels,
whose combiner and order constants differ. Contiguous data has no layout; each other
datatype's constructor tree is written once, its contiguous blocks worked out from it
(profile/trace/dtypes.py) as the program's own numbers give them; a freed datatype's
handle, handed out again, is described again; both ends of a message name the same shape.
Reading: a record that does not hold together is one line."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from cli_helpers import profile_test_app_traced
from mpi_overlap.core.errors import UserError
from mpi_overlap.profile.trace.convert import read_run
from mpi_overlap.profile.trace.dtypes import HEAD, parse_record
from mpi_overlap.profile.trace.timeline import rank_timeline

# tag -> (size, extent, true extent, blocks of one element from the true lower bound,
# the constructors down to the predefined type) as datatypes_app.c's header says; None:
# contiguous, no layout
EXPECTED: dict[int, tuple[int, int, int, list[tuple[int, int]], str] | None] = {
    1: None,
    2: None,
    3: (64, 136, 136, [(0, 16), (40, 16), (80, 16), (120, 16)], "vector of MPI_DOUBLE"),
    4: (48, 192, 80, [(0, 16), (32, 16), (64, 16)], "subarray of MPI_INT"),
    5: (48, 192, 84, [(0, 12), (24, 12), (48, 12), (72, 12)], "subarray of MPI_INT"),
    6: (9, 16, 9, [(0, 9)], "resized of struct of 2 types"),
    7: (12, 16, 12, [(0, 12)], "MPI_DOUBLE_INT"),
    8: (12, 36, 36, [(0, 4), (16, 4), (32, 4)], "vector of MPI_FLOAT"),
    9: (48, 192, 80, [(0, 16), (32, 16), (64, 16)], "dup of subarray of MPI_INT"),
    10: (64, 136, 136, [(0, 16), (40, 16), (80, 16), (120, 16)], "vector of MPI_DOUBLE"),
    11: (16, 32, 32, [(0, 8), (24, 8)], "hindexed of MPI_DOUBLE"),
}


@pytest.fixture(scope="module", params=["mpich", "openmpi"])
def timelines(request, tmp_path_factory):
    base: Path = tmp_path_factory.mktemp(f"dtypes-{request.param}")
    run_dir = profile_test_app_traced(request.param, "datatypes_app", base)
    return [rank_timeline(t) for t in read_run(run_dir)]


@pytest.mark.mpi
def test_each_message_names_its_layout_and_the_trace_describes_it(timelines) -> None:
    for tl in timelines:
        by_tag = {m.tag: m for m in tl.messages if m.comm}
        assert sorted(by_tag) == sorted(EXPECTED), tl.rank
        for tag, want in EXPECTED.items():
            msg = by_tag[tag]
            if want is None:
                assert msg.layout == 0, (tl.rank, tag)
                continue
            layout = tl.trace.dtypes[msg.layout]
            size, extent, true_extent, blocks, shape = want
            got = (layout.size, layout.extent, layout.true_extent, layout.blocks)
            assert got == (size, extent, true_extent, blocks), (tl.rank, tag, layout)
            assert layout.words().startswith(shape + ":"), layout.words()
        # one layout per datatype while it lives: step 10's vector, made again after
        # step 3's was freed (and step 8's took its place), is described again
        ids = [by_tag[t].layout for t in (3, 8, 10)]
        assert len(set(ids)) == 3 and by_tag[9].layout != by_tag[4].layout
        assert set(tl.trace.dtypes) == {m.layout for m in by_tag.values() if m.layout}


@pytest.mark.mpi
def test_both_ends_name_the_same_shape(timelines) -> None:
    ends = [{m.tag: tl.trace.dtypes.get(m.layout) for m in tl.messages if m.comm}
            for tl in timelines]
    for tag in EXPECTED:
        a, b = ends[0][tag], ends[1][tag]
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert (a.size, a.extent, a.blocks) == (b.size, b.extent, b.blocks)


def _record(values: list[int], names: bytes = b"", flags: int = 0) -> bytes:
    pad = b"\0" * (-len(names) % 8)
    return (HEAD.pack(1, flags, len(values), len(names), 64, 136, 0, 136)
            + struct.pack(f"<{len(values)}q", *values) + names + pad)


def test_a_record_reads_as_written_and_a_cut_one_has_no_blocks() -> None:
    # vector(4, 2, 5) of an 8-byte named type
    layout = parse_record(_record([3, 3, 0, 1, 4, 2, 5, 0, 8], b"MPI_DOUBLE\0"))
    assert layout.blocks == [(0, 16), (40, 16), (80, 16), (120, 16)]
    assert layout.words() == ("vector of MPI_DOUBLE: 4 block(s) of 16 B in 64 B "
                              "(extent 136 B)")
    cut = parse_record(_record([3, 3], flags=1))
    assert cut.tree is None and cut.blocks is None and "cut short" in cut.words()
    # darray and unknown constructors: the tree without blocks
    other = parse_record(_record([99, 0, 0, 0]))
    assert other.blocks is None and other.tree is not None


def test_a_damaged_record_is_one_line(tmp_path: Path) -> None:
    from mpi_overlap.profile.trace.reader import DTYPES, read_trace

    good = _record([3, 3, 0, 1, 4, 2, 5, 0, 8], b"MPI_DOUBLE\0")
    with pytest.raises(ValueError):
        parse_record(good[:-8])
    path = tmp_path / "trace.rank-0.mopt"
    head = struct.pack("<8sIIiidQddIHH", b"MOPTRACE", 3, 0x01020304, 0, 1, 1e-9, 0, 0.0, -1.0,
                       1, 32, 72)
    bad = good[:-16]
    path.write_bytes(head + struct.pack("<IIII", DTYPES, 0, 1, len(bad)) + bad)
    with pytest.raises(UserError, match="corrupt datatype record in the chunk at byte 64"):
        read_trace(path)


@pytest.mark.mpi
def test_the_probe_builds_every_layout_again_and_times_it(timelines, tmp_path: Path) -> None:
    """mo_layout_probe (predict --probe) builds each recorded datatype again from its tree
    and times it in an exchange beside the same bytes contiguous: every case of the
    program's, sent and received with the same datatype, gets both times (step 11's
    reaches below its buffer's address: the probe's buffers make room for it)."""
    from mpi_overlap.predict.probe import Case, run_probe

    tl = timelines[0]
    msgs = {m.tag: m for m in tl.messages if m.comm and m.layout}
    found = [Case(tl.trace.dtypes[m.layout], tl.trace.dtypes[m.layout], m.bytes)
             for _, m in sorted(msgs.items())]
    results = run_probe(tmp_path, found, "mpich")
    assert len(results) == len(found) == 9
    for case, r in zip(found, results, strict=True):
        assert "error" not in r, (case.send.words(), r)
        assert r["bytes"] == case.nbytes and r["layout_s"] > 0 and r["contiguous_s"] > 0
