"""The transfer-time table's collective series (format versions 2 to 4): the documented lines,
round trip, version 1 still read, merging series of several communicator sizes, the same
lookup and fallbacks as the C profiler (the numbers of native/tests/test_xfer_table.c),
one-line errors for bad `coll` lines, and calibrate's compact view (no MPI needed)."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import pytest
from rich.console import Console

from mpi_overlap.calibration.calibrate import print_coll_table
from mpi_overlap.calibration.xfer_table import (
    BLOCKING_COLL_OPS,
    COLL_OPS,
    coll_series,
    format_table,
    parse_table,
    read_table,
    render_table,
    write_table,
)
from mpi_overlap.core.errors import UserError
from test_xfer_table import MACHINE_FP, TOOLCHAIN_FP, _result

NATIVE = Path(__file__).resolve().parents[1] / "native"
US = 1e-6

# bcast on 2 ranks: 0 B 2 µs, 1 KiB 4 µs, 2 KiB 8 µs; on 4 ranks 0 B 3 µs, 1 KiB 6 µs;
# on 8 ranks 0 B 5 µs (as in test_xfer_table.c). p2p intra: 0 B 0.2875 µs ... (_result).
SERIES = {
    ("bcast", 2): [(0, 2e-6), (1024, 4e-6), (2048, 8e-6)],
    ("bcast", 4): [(0, 3e-6), (1024, 6e-6)],
    ("bcast", 8): [(0, 5e-6)],
    ("ibcast", 2): [(0, 7e-6)],
}


def _text() -> str:
    return format_table(_result(), "mpich", created="2026-01-01T00:00:00Z", coll=SERIES)


def test_ops_are_those_of_the_profiler() -> None:
    header = (NATIVE / "profiler" / "mop_coll_ops.h").read_text()
    assert tuple(re.findall(r'X\(\w+, "(\w+)"\)', header)) == BLOCKING_COLL_OPS
    assert COLL_OPS[len(BLOCKING_COLL_OPS)] == "ibarrier" and len(COLL_OPS) == 44


def test_format_is_the_documented_one() -> None:
    lines = _text().splitlines()
    assert lines[0] == "mpi-overlap-xfer-table 4"
    i = lines.index("# coll op comm_size bytes seconds")
    assert lines[i - 1] == "intra 1048576 0.00012 ok 0.00012 0 16 20 0.00012 0.00012"  # after p2p
    # by communicator size, then in the order of mop_coll_ops.h (blocking before "i")
    assert lines[i + 1:] == [
        "coll bcast 2 0 2e-06",
        "coll bcast 2 1024 4e-06",
        "coll bcast 2 2048 8e-06",
        "coll ibcast 2 0 7e-06",
        "coll bcast 4 0 3e-06",
        "coll bcast 4 1024 6e-06",
        "coll bcast 8 0 5e-06",
        "end",
    ]


def test_round_trip(tmp_path: Path) -> None:
    path = write_table(tmp_path / "t.table", _result(), "mpich", coll=SERIES)
    table = read_table(path)
    assert table.version == 4 and table.coll == SERIES
    assert table.coll_sizes == [2, 4, 8]
    assert table.has_coll(4) and not table.has_coll(3)
    assert render_table(table) == path.read_text()


def test_version_1_is_still_read_and_written_back_as_4() -> None:
    v1 = "\n".join(line.split(" ok ")[0] for line in format_table(_result(), "mpich")
                   .replace("xfer-table 4", "xfer-table 1", 1).splitlines()
                   if not line.startswith(("verdict", "end"))) + "\n"
    table = parse_table(v1)
    assert table.verdict == "unverified"
    assert table.version == 1 and table.coll == {} and table.coll_sizes == []
    assert table.points["intra"][0] == (0, 2.875e-7)
    # its collectives fall back to the intra-node point-to-point time, counted
    assert table.lookup_coll("allreduce", 2, 0) == (2.875e-7, ["coll_uncalibrated"])
    assert render_table(table.with_coll({("bcast", 2): [(0, 1e-6)]})).startswith(
        "mpi-overlap-xfer-table 4\n")


def test_merging_replaces_only_the_sizes_measured() -> None:
    table = parse_table(_text())
    merged = table.with_coll({("allreduce", 4): [(1024, 9e-6), (0, 8e-6)]})
    # size 4 now has only what was measured for it (sorted); sizes 2 and 8 are kept
    assert merged.coll == {
        ("bcast", 2): SERIES[("bcast", 2)],
        ("ibcast", 2): SERIES[("ibcast", 2)],
        ("bcast", 8): SERIES[("bcast", 8)],
        ("allreduce", 4): [(0, 8e-6), (1024, 9e-6)],
    }
    assert table.coll == SERIES  # the original is untouched


@pytest.mark.parametrize(
    ("op", "comm_size", "nbytes", "want_us", "flags"),
    [
        ("bcast", 2, 512, 3.0, []),
        ("bcast", 2, 1536, 6.0, []),
        ("bcast", 2, 4096, 16.0, ["table_extrapolated"]),
        ("bcast", 4, 512, 4.5, []),
        # other sizes: linear in log2 p between the calibrated sizes around, beyond them
        # the slope of the two nearest (bcast grows like log p)
        ("bcast", 3, 0, 2 + math.log2(1.5), ["coll_size_extrapolated"]),
        ("bcast", 5, 1024, 6 - math.log2(5 / 4),
         ["coll_size_extrapolated", "table_extrapolated"]),
        ("bcast", 7, 512, 4.5 + 0.5 * math.log2(7 / 4),
         ["coll_size_extrapolated", "table_extrapolated"]),
        ("bcast", 100, 0, 5 + 2 * math.log2(100 / 8), ["coll_size_extrapolated"]),
        ("bcast", 1, 1024, 2.0, ["coll_size_extrapolated"]),
        ("ibcast", 6, 0, 7.0, ["coll_size_extrapolated"]),  # one size of its own: nearest
        ("bcast", 0, 0, 2.0, ["coll_size_extrapolated"]),  # no real size: nearest, no model
        ("ibcast", 2, 0, 7.0, []),
        ("ibcast", 8, 0, 7.0, ["coll_size_extrapolated"]),
        ("igather", 2, 0, 0.2875, ["coll_uncalibrated"]),
        # p2p intra between 1 KiB (1 µs) and 1 MiB (120 µs)
        ("iallreduce", 2, 2048, 1.0 + 119.0 * 1024 / (1048576 - 1024), ["coll_uncalibrated"]),
    ],
)
def test_lookup_like_the_profiler(op: str, comm_size: int, nbytes: int, want_us: float,
                                  flags: list[str]) -> None:
    table = parse_table(_text())
    got, got_flags = table.lookup_coll(op, comm_size, nbytes)
    assert got == pytest.approx(want_us * US, rel=1e-12)
    assert got_flags == flags


MODELLED = ["coll_size_extrapolated"]


@pytest.mark.parametrize(
    ("op", "comm_size", "want_us", "flags"),
    [
        # moves p blocks: linear in p (2 ranks 10 µs, 4 ranks 40 µs); 1 rank would be
        # -5 µs: never below 0
        ("alltoall", 3, 25.0, MODELLED), ("alltoall", 8, 100.0, MODELLED),
        ("alltoall", 1, 0.0, MODELLED),
        ("ialltoall", 3, 25.0, ["coll_nb_as_blocking", *MODELLED]),  # the blocking op's
        # times falling with p are not extrapolated further down, either way
        ("allgather", 16, 8.0, MODELLED), ("allgather", 1, 9.0, MODELLED),
        # a neighbourhood collective's cost is its topology's: the nearest size
        ("neighbor_alltoall", 4, 4.0, MODELLED), ("neighbor_alltoall", 6, 6.0, MODELLED),
    ],
)
def test_size_model_like_the_profiler(op: str, comm_size: int, want_us: float,
                                      flags: list[str]) -> None:
    """The numbers of test_coll_lookup in native/tests/test_xfer_table.c."""
    table = parse_table(_text()).with_coll({
        ("alltoall", 2): [(0, 10e-6)], ("alltoall", 4): [(0, 40e-6)],
        ("allgather", 2): [(0, 9e-6)], ("allgather", 4): [(0, 8e-6)],
        ("neighbor_alltoall", 2): [(0, 4e-6)], ("neighbor_alltoall", 8): [(0, 6e-6)],
    })
    got, got_flags = table.lookup_coll(op, comm_size, 0)
    if want_us == 0.0:
        assert got == 0.0
    else:
        assert got == pytest.approx(want_us * US, rel=1e-12)
    assert got_flags == flags


def test_series_of_no_real_size_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        parse_table(_text()).with_coll({("bcast", 0): [(0, 1e-6)]})


def test_nonblocking_falls_back_to_blocking() -> None:
    table = parse_table(_text()).with_coll({("allreduce", 4): [(0, 8e-6)]})
    assert table.lookup_coll("iallreduce", 4, 0) == (8e-6, ["coll_nb_as_blocking"])
    assert table.lookup_coll("iallreduce", 2, 0) == (
        8e-6, ["coll_nb_as_blocking", "coll_size_extrapolated"])


def _one_line(err: UserError) -> str:
    text = str(err)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("coll bcast 2 0", "expected 'coll <op> <comm_size> <bytes> <seconds>'"),
        ("coll bcast 2 0 1e-6 9", "expected 'coll <op>"),
        ("coll bcast two 0 1e-6", "expected 'coll <op>"),
        ("coll broadcast 2 0 1e-6", "unknown collective 'broadcast'"),
        ("coll bcast 0 0 1e-6", "communicator size must be at least 1"),
        ("coll bcast 2 0 -1e-6", "bytes and seconds must be finite and not negative"),
        ("coll bcast 2 0 nan", "bytes and seconds must be finite"),
        ("coll bcast 2 2048 1e-6", "coll bcast 2 sizes must increase (2048 after 2048)"),
    ],
)
def test_bad_coll_lines_are_one_line_errors(tmp_path: Path, line: str, fragment: str) -> None:
    text = _text().replace("end\n", line + "\nend\n")
    lineno = len(text.splitlines()) - 1
    path = tmp_path / "t.table"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        read_table(path)
    msg = _one_line(err.value)
    assert f"{path}, line {lineno}: " in msg and fragment in msg, msg


def _collectives_result() -> dict:
    def point(nbytes: int, t: float | None) -> dict:
        return {"bytes": nbytes, "iterations": 10, "time_s": t, "mean_s": t, "min_s": t,
                "max_s": t, "rank_mean_s": t}

    return {"results": {
        "comm_size": 3, "nodes": 1, "machine_fp": MACHINE_FP, "toolchain_fp": TOOLCHAIN_FP,
        "series": [
            {"op": "barrier", "sizes": [point(0, 1.5e-6)]},
            {"op": "ibcast", "sizes": [point(1024, 3e-6), point(0, 2e-6),
                                       point(65536, float("nan"))]},
            {"op": "iscan", "sizes": []},  # cut short before its first size
        ]}}


def test_series_from_a_collectives_result() -> None:
    assert coll_series(_collectives_result()) == {
        ("barrier", 3): [(0, 1.5e-6)],
        ("ibcast", 3): [(0, 2e-6), (1024, 3e-6)],  # sorted, the NaN left out
    }


def test_compact_view() -> None:
    table = parse_table(_text())
    out = io.StringIO()
    print_coll_table(Console(file=out, width=200), table, 2)
    text = out.getvalue()
    assert "collectives on 2 ranks" in text
    row = next(ln for ln in text.splitlines() if " bcast " in ln)
    # blocking / non-blocking at 0 B and 1 KiB; not measured: —
    assert re.search(r"2 / 7 .*4 / — .*— / —", row), row
    assert "also for communicator sizes 4, 8" in text
    # bcast has three sizes: the size model's error, 4 ranks predicted from 2 and 8:
    # +17 % at 0 B (3.5 against 3 µs), -25 % at 1 KiB (4.5 against 6 µs)
    assert ("communicator-size model, between calibrated sizes: median error 21 %, worst "
            "25 % (bcast on 4 ranks); 2 message sizes of 1 series") in text
    out = io.StringIO()
    print_coll_table(Console(file=out, width=200), table, 16)
    assert "no collective times for 16 ranks" in out.getvalue()


def test_a_size_slower_than_a_larger_one_takes_the_larger_one_s_time() -> None:
    """A disturbed small size (191 µs at 0 B beside 6.5 µs at 1 KiB, measured beside
    other work) is capped by the larger sizes: a larger message is never faster."""
    res = _collectives_result()
    res["results"]["series"] = [{"op": "iallreduce", "sizes": [
        {"bytes": b, "iterations": 10, "time_s": t, "mean_s": t, "min_s": t, "max_s": t,
         "rank_mean_s": t}
        for b, t in [(0, 1.91e-4), (1024, 6.45e-6), (65536, 7.5e-4), (1 << 20, 1.5e-2)]]}]
    assert coll_series(res)[("iallreduce", 3)] == [
        (0, 6.45e-6), (1024, 6.45e-6), (65536, 7.5e-4), (1 << 20, 1.5e-2)]
