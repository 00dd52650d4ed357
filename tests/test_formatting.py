"""formatting.py: each function against the exact text the private helpers it replaced
printed (issue 18), with missing values, zero, negatives and the rounding edges."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from mpi_overlap.core.formatting import (
    DASH,
    NA,
    fmt_bytes,
    fmt_mib,
    fmt_num,
    fmt_pct,
    fmt_pct_cell,
    fmt_period,
    fmt_range,
    fmt_s_as_ms,
    fmt_s_as_us,
    fmt_time,
    fmt_us,
    fmt_with_ci,
    is_number,
    pct_between,
    pct_range,
    sig3,
)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (0, True), (1.5, True), (-2, True), (math.nan, True), (math.inf, True),
        (np.float64(1.0), True), (np.float32(1.0), True), (np.int64(3), True),
        (None, False), (True, False), (False, False), ("1.0", False), ([1], False), ({}, False),
    ],
)
def test_is_number(value: Any, want: bool) -> None:
    assert is_number(value) is want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        # html.fmt_num: spec, unit, a dash for anything that is not a number
        ((12.345, ".1f"), "12.3"),
        ((12.345, ".1f", " ns"), "12.3 ns"),
        ((0, "g", " ns"), "0 ns"),
        ((1048576, "d"), "1048576"),
        ((-0.04, ".1f"), "-0.0"),
        ((-3.5, "+.1f"), "-3.5"),
        ((3.5, "+.1f"), "+3.5"),
        ((None, ".1f", " ns"), DASH),
        ((True, ".1f"), DASH),
        (("12", ".1f"), DASH),
        ((math.nan, ".1f"), "nan"),
        # replication._fmt / report.replication._n / env_matrix: .4g
        ((1234.5678, ".4g"), "1235"),
        ((123456.789, ".4g"), "1.235e+05"),
        ((0.000123456, ".4g"), "0.0001235"),
        # knee._fmt (.3g, n/a), matching._ns (.1f, n/a), nbc_overlap._fmt (.0f, —)
        ((None, ".3g", "", NA), NA),
        ((0.0012345, ".3g", "", NA), "0.00123"),
        ((999.5, ".3g", "", NA), "1e+03"),
        ((12.25, ".1f", "", NA), "12.2"),
        ((12.35, ".1f", "", NA), "12.3"),
        ((99.5, ".0f"), "100"),
        ((0.5, ".0f"), "0"),
        ((1.5, ".0f"), "2"),
        ((None, ".0f"), DASH),
    ],
)
def test_fmt_num(args: tuple[Any, ...], want: str) -> None:
    assert fmt_num(*args) == want


def test_fmt_num_missing_marker_of_the_settings_matrix() -> None:
    # report/env_matrix.py: text where a figure is not a number, a dash where it is null
    assert fmt_num("n/a", ".4g", missing="n/a") == "n/a"
    assert fmt_num(True, ".4g", missing=str(True)) == "True"


@pytest.mark.parametrize(
    ("args", "kw", "want"),
    [
        ((29.25, 98.5, ".1f"), {}, "29.2–98.5"),  # profile_grid.frange
        ((0, 0, ".1f"), {}, "0.0–0.0"),
        ((None, 98.5, ".1f"), {}, DASH),
        ((29.2, None, ".1f"), {}, DASH),
        ((True, 1.0, ".1f"), {}, DASH),
        ((-1.005, 2.0, ".2f"), {}, "-1.00–2.00"),  # datatypes' slowdown interval
        ((1.2345, 5.678, ".3g"), {"sep": "…", "missing": "–"}, "1.23…5.68"),  # inflation
        ((None, None, ".3g"), {"sep": "…", "missing": "–"}, "–"),
        ((1e-9, 12345.0, ".4g"), {}, "1e-09–1.234e+04"),
    ],
)
def test_fmt_range(args: tuple[Any, ...], kw: dict[str, str], want: str) -> None:
    assert fmt_range(*args, **kw) == want


@pytest.mark.parametrize(
    ("value", "low", "high", "want"),
    [
        (1.5, 1.25, 2.0, "1.50 [1.25–2.00]"),  # overhead_table.fmt_ci with fmt_us
        (150.25, 99.95, 1000.0, "150 [100.0–1000]"),
        (1.5, None, 2.0, "1.50"),
        (1.5, 1.25, None, "1.50"),
        (None, 1.25, 2.0, DASH),
        (0.0, 0.0, 0.0, "0.00 [0.00–0.00]"),
        (-0.005, -0.01, 0.0, "-0.01 [-0.01–0.00]"),
    ],
)
def test_fmt_with_ci(value: Any, low: Any, high: Any, want: str) -> None:
    assert fmt_with_ci(value, low, high, fmt_us) == want


def test_fmt_with_ci_takes_any_formatter() -> None:
    assert fmt_with_ci(91.04, 68.06, 94.65, fmt_pct_cell) == "91.0 [68.1–94.7]"
    assert fmt_with_ci(12345.6, 1e3, 2e4, lambda v: fmt_num(v, ".4g")) == "1.235e+04 [1000–2e+04]"
    assert fmt_with_ci(None, 1, 2, fmt_pct_cell, missing="?") == "?"


@pytest.mark.parametrize(
    ("value", "want"),
    [
        # profile_values.fmt_pct, the sentence form: whole from 10 up and at 0, else 1 decimal
        (None, DASH),
        (0, "0 %"),
        (0.0, "0 %"),
        (-0.0, "-0 %"),
        (0.04, "0.0 %"),
        (0.05, "0.1 %"),
        (0.44, "0.4 %"),
        (9.94, "9.9 %"),
        (9.95, "9.9 %"),
        (9.96, "10.0 %"),
        (9.995, "10.0 %"),
        (10, "10 %"),
        (10.5, "10 %"),
        (12.4, "12 %"),
        (99.5, "100 %"),
        (99.95, "100 %"),
        (100, "100 %"),
        (-5.0, "-5.0 %"),
        (-50.0, "-50.0 %"),
        (True, DASH),
    ],
)
def test_fmt_pct_sentence_form(value: Any, want: str) -> None:
    assert fmt_pct(value) == want


@pytest.mark.parametrize(
    ("value", "decimals", "kw", "want"),
    [
        # benchmarks/study/analysis._fmt_pct, comm_overlap._fmt_share: ".0f %" or n/a
        (None, 0, {"missing": NA}, NA),
        (12.5, 0, {"missing": NA}, "12 %"),
        (13.5, 0, {"missing": NA}, "14 %"),
        (99.95, 0, {"missing": NA}, "100 %"),
        (-0.4, 0, {"missing": NA}, "-0 %"),
        # comm_overlap._fmt_pct: signed
        (None, 0, {"sign": True, "missing": NA}, NA),
        (0.0, 0, {"sign": True, "missing": NA}, "+0 %"),
        (-0.4, 0, {"sign": True, "missing": NA}, "-0 %"),
        (12.5, 0, {"sign": True, "missing": NA}, "+12 %"),
        (-37.6, 0, {"sign": True, "missing": NA}, "-38 %"),
        # benchmarks/study/report._pct(v, "+.1f"), the run-time change of benchmarks/study/analysis
        (None, 1, {"sign": True}, DASH),
        (-0.04, 1, {"sign": True}, "-0.0 %"),
        (9.95, 1, {"sign": True}, "+9.9 %"),
        (9.96, 1, {"sign": True}, "+10.0 %"),
        # benchmarks/study/report: the profiler's cost, +.2f
        (0.995, 2, {"sign": True}, "+0.99 %"),
        (0.9951, 2, {"sign": True}, "+1.00 %"),
        (-0.005, 2, {"sign": True}, "-0.01 %"),
    ],
)
def test_fmt_pct_fixed_decimals(value: Any, decimals: int, kw: dict[str, Any], want: str) -> None:
    assert fmt_pct(value, decimals, **kw) == want


@pytest.mark.parametrize(
    ("args", "kw", "want"),
    [
        # overhead_table.fmt_pct and profile_grid.fpct: one decimal, no unit, a dash
        ((None,), {}, DASH),
        ((0,), {}, "0.0"),
        ((12.25,), {}, "12.2"),
        ((99.95,), {}, "100.0"),
        ((99.949,), {}, "99.9"),
        ((-0.04,), {}, "-0.0"),
        (("12",), {}, DASH),
        # report/overlap_validation.fmt_pct, sync_overlap._pct: whole numbers
        ((None, 0), {}, DASH),
        ((0.5, 0), {}, "0"),
        ((99.5, 0), {}, "100"),
        ((100.0, 0), {}, "100"),
        # analysis/overlap_validation._fmt_pct: whole numbers, "?" when missing
        ((None, 0), {"missing": "?"}, "?"),
        ((42.4, 0), {"missing": "?"}, "42"),
    ],
)
def test_fmt_pct_cell(args: tuple[Any, ...], kw: dict[str, str], want: str) -> None:
    assert fmt_pct_cell(*args, **kw) == want


@pytest.mark.parametrize(
    ("lo", "hi", "want"),
    [
        (12.0, 85.0, "12 %–85 %"),
        (0.0, 0.0, "0 %"),
        (0.04, 0.0, "0.0 %"),  # ends that round alike are one figure, not '0.0 %–0 %'
        (0.0, 0.04, "0.0 %"),
        (0.0, 0.4, "0.0 %–0.4 %"),  # one precision for both ends
        (3.2, 60.0, "3.2 %–60.0 %"),
        (99.5, 100.0, "100 %"),
        (None, 50.0, "—–50 %"),
        (None, None, DASH),
        (0.44, 9.95, "0.4 %–9.9 %"),
    ],
)
def test_pct_range(lo: Any, hi: Any, want: str) -> None:
    assert pct_range(lo, hi) == want


@pytest.mark.parametrize(
    ("lo", "hi", "want"),
    [
        (0.0, 60.0, "between 0 % and 60 %"),
        # one 463 ns MPI_Irecv among 74 blocking transfers: not 'between 0 % and 0.0 %'
        (0.0, 0.04, "0.0 %"),
        (0.0, 2.5, "between 0.0 % and 2.5 %"),
        (25.0, 67.0, "between 25 % and 67 %"),
        (12.0, 12.4, "12 %"),
    ],
)
def test_pct_between(lo: float, hi: float, want: str) -> None:
    assert pct_between(lo, hi) == want


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (0, "0.00"), (0.0, "0.00"), (-0.0, "-0.00"), (0.004, "0.00"), (0.005, "0.01"),
        (1.005, "1.00"), (2.5, "2.50"), (9.994, "9.99"), (9.995, "9.99"), (9.9951, "10.00"),
        (9.999, "10.00"), (10, "10.0"), (10.05, "10.1"), (12.45, "12.4"), (99.94, "99.9"),
        (99.95, "100.0"), (99.99, "100.0"), (100, "100"), (100.5, "100"), (101.5, "102"),
        (999.5, "1000"), (1234.5678, "1235"), (-9.995, "-9.99"), (-10, "-10.0"), (-150.5, "-150"),
    ],
)
def test_sig3(x: float, want: str) -> None:
    assert sig3(x) == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        # values.fmt_us: the µs cells (sig3), "—" or the caller's marker when missing
        ((None,), DASH),
        ((None, "?"), "?"),
        ((0,), "0.00"),
        ((0.125,), "0.12"),
        ((9.995,), "9.99"),
        ((10.0,), "10.0"),
        ((99.95,), "100.0"),
        ((100.0,), "100"),
        ((-2.5,), "-2.50"),
        ((12345.6,), "12346"),
        ((np.float64(1.5),), "1.50"),
    ],
)
def test_fmt_us(args: tuple[Any, ...], want: str) -> None:
    assert fmt_us(*args) == want


@pytest.mark.parametrize(
    ("seconds", "want"),
    [
        # profile_values.fmt_time and profile_grid.ftime
        (None, DASH),
        ("1", DASH),
        (0, "0 s"),
        (0.0, "0 s"),
        (-0.0, "0 s"),
        (1, "1.00 s"),
        (12.4, "12.4 s"),
        (125.0, "125 s"),
        (0.99949, "999 ms"),
        (0.9995, "1000 ms"),
        (0.00203, "2.03 ms"),
        (0.001, "1.00 ms"),
        (0.00099, "990 µs"),
        (0.00085, "850 µs"),
        (1e-6, "1.00 µs"),
        (9.995e-7, "999 ns"),
        (9.9951e-7, "1000 ns"),
        (1.5e-7, "150 ns"),
        (1e-9, "1.00 ns"),
        (1e-12, "0.00 ns"),
        (-0.0025, "-2.50 ms"),
        (-2.0, "-2.00 s"),
    ],
)
def test_fmt_time(seconds: Any, want: str) -> None:
    assert fmt_time(seconds) == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        ((1.5e-6, ".3g"), "1.5"),  # analysis/stack_floor._us
        ((1.2345e-5, ".3g"), "12.3"),
        ((-4e-7, ".3g"), "-0.4"),
        ((0.0, ".3g"), "0"),
        ((1.5e-6, ".3f"), "1.500"),  # report/stack_floor._us
        ((None, ".3f"), DASH),
        ((2.5e-7, ".2f"), "0.25"),  # datatypes' one-way time
        ((None, ".2f", "?"), "?"),
    ],
)
def test_fmt_s_as_us(args: tuple[Any, ...], want: str) -> None:
    assert fmt_s_as_us(*args) == want


@pytest.mark.parametrize(
    ("args", "kw", "want"),
    [
        ((0.0123456,), {}, "12.35"),  # benchmarks/study/report._ms
        ((None,), {}, DASH),
        ((None,), {"missing": NA}, NA),  # benchmarks/study/analysis._ms
        ((0.000005,), {"missing": NA}, "0.01"),
        ((0.000004,), {"missing": NA}, "0.00"),
        ((-0.0021,), {"missing": NA}, "-2.10"),
        ((1.5,), {}, "1500.00"),
    ],
)
def test_fmt_s_as_ms(args: tuple[Any, ...], kw: dict[str, str], want: str) -> None:
    assert fmt_s_as_ms(*args, **kw) == want


@pytest.mark.parametrize(
    ("us", "want"),
    [
        # polling._fmt_interval
        (0, "0 µs"), (0.5, "0.5 µs"), (50, "50 µs"), (999, "999 µs"), (999.5, "999.5 µs"),
        (1000, "1 ms"), (2500, "2.5 ms"), (1234567, "1234.57 ms"), (10, "10 µs"),
    ],
)
def test_fmt_period(us: float, want: str) -> None:
    assert fmt_period(us) == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        # sync_overlap._fmt_bytes: thousands grouped by spaces, "?" when missing
        ((None, "?"), "?"),
        ((0, "?"), "0"),
        ((999, "?"), "999"),
        ((1000, "?"), "1 000"),
        ((65536, "?"), "65 536"),
        ((1048576, "?"), "1 048 576"),
        ((None,), DASH),
    ],
)
def test_fmt_bytes(args: tuple[Any, ...], want: str) -> None:
    assert fmt_bytes(*args) == want


@pytest.mark.parametrize(
    ("args", "kw", "want"),
    [
        # profile/trace/summary.fmt_mib
        ((0,), {}, "0.0 KiB"),
        ((1000,), {}, "1.0 KiB"),
        ((1023,), {}, "1.0 KiB"),
        ((65536,), {}, "64.0 KiB"),
        ((1048575,), {}, "1024.0 KiB"),
        ((1048576,), {}, "1.0 MiB"),
        ((1572864,), {}, "1.5 MiB"),
        ((3 << 30,), {}, "3072.0 MiB"),
        # json_input._mib: whole MiB, plain bytes below
        ((0, 0), {"below": "bytes"}, "0 bytes"),
        ((1048575, 0), {"below": "bytes"}, "1048575 bytes"),
        ((1048576, 0), {"below": "bytes"}, "1 MiB"),
        ((1572864, 0), {"below": "bytes"}, "2 MiB"),
        ((256 << 20, 0), {"below": "bytes"}, "256 MiB"),
    ],
)
def test_fmt_mib(args: tuple[Any, ...], kw: dict[str, Any], want: str) -> None:
    assert fmt_mib(*args, **kw) == want
