"""The communicator-size model's error as calibrate states it (coll_size_model.py): each
calibrated series of an op with three or more sizes predicted from the others, exactly as
the profiler's lookup would price that size."""

from __future__ import annotations

import math

import pytest

from mpi_overlap.calibration.coll_size_model import describe, held_out, model_errors
from mpi_overlap.calibration.xfer_table import parse_table
from test_xfer_table_coll import _text


def _table(series: dict[tuple[str, int], list[tuple[int, float]]]):
    return parse_table(_text()).with_coll(series)


def test_a_table_that_follows_the_model_has_no_error() -> None:
    # bcast: 1 µs + 2 µs per doubling; alltoall: 4 µs per rank (at both message sizes)
    series = {("bcast", n): [(0, (1 + 2 * math.log2(n)) * 1e-6),
                             (1024, (2 + 4 * math.log2(n)) * 1e-6)] for n in (2, 4, 8, 16)}
    series |= {("alltoall", n): [(0, 4e-6 * n), (1024, 8e-6 * n)] for n in (2, 3, 4)}
    table = _table(series)
    runs = held_out(table)
    assert {(h.op, h.comm_size, h.between) for h in runs} == {
        ("bcast", 2, False), ("bcast", 4, True), ("bcast", 8, True), ("bcast", 16, False),
        ("alltoall", 2, False), ("alltoall", 3, True), ("alltoall", 4, False)}
    assert all(e == pytest.approx(0.0, abs=1e-12) for h in runs for e in h.errors)
    errs = model_errors(table)
    assert [(m.between, m.series, m.points) for m in errs] == [(True, 3, 6), (False, 4, 8)]


def test_the_error_is_the_prediction_against_the_measurement() -> None:
    # bcast, linear in log2 p. 4 ranks (4 µs) predicted from 2 (2 µs) and 8 (8 µs): 5 µs,
    # +25 %. 8 extrapolated from 2 and 4 (2 µs per doubling): 6 µs, -25 %; 2 from 4 and 8
    # (4 µs per doubling): 0 µs, -100 %.
    table = _table({("bcast", 2): [(0, 2e-6)], ("bcast", 4): [(0, 4e-6)],
                    ("bcast", 8): [(0, 8e-6)]})
    by = {h.comm_size: h for h in held_out(table)}
    assert by[4].errors == [pytest.approx(0.25)] and by[4].between
    assert by[8].errors == [pytest.approx(-0.25)] and not by[8].between
    assert by[2].errors == [pytest.approx(-1.0)]
    between, beyond = model_errors(table)
    assert between.median_abs == pytest.approx(0.25) and between.worst.comm_size == 4
    assert beyond.median_abs == pytest.approx(0.625)
    assert beyond.worst_abs == pytest.approx(1.0) and beyond.worst.comm_size == 2
    lines = describe(table)
    assert lines[0].startswith("communicator-size model, between calibrated sizes: median "
                               "error 25 %, worst 25 % (bcast on 4 ranks)")
    assert "worst 100 % (bcast on 2 ranks)" in lines[1]


def test_ops_without_three_sizes_or_without_a_model_say_nothing() -> None:
    table = _table({("bcast", 2): [(0, 2e-6)], ("bcast", 4): [(0, 4e-6)],
                    ("neighbor_alltoall", 2): [(0, 1e-6)], ("neighbor_alltoall", 4): [(0, 2e-6)],
                    ("neighbor_alltoall", 8): [(0, 3e-6)]})
    assert held_out(table) == [] and describe(table) == []
