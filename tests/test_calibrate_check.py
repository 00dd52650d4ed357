"""`calibrate --check` judges each size by the limit it prints (calibration/
calibrate_check.py): the change printed beside a size is the number judged, against ±25 %
both ways. It printed "1 MiB: table 119 µs, now 90.8 µs (-24 %, ok)" and then "stale,
recalibrate (faster now at 1 MiB, beyond ±25 %)": its limit for faster was −20 %."""

from __future__ import annotations

import pytest

from mpi_overlap.calibration.calibrate_check import LIMIT_PCT, compare

US = 1e-6


@pytest.mark.parametrize("table_us, now_us, verdict, change, kind", [
    (119, 90.8, "ok", -24, "within"),  # the reported case: -24 % is within ±25 %
    (119, 90.8, "noisy", -24, "within"),
    (100, 75.2, "ok", -25, "within"),  # prints -25 %: not beyond -25 %
    (100, 74.4, "ok", -26, "faster"),
    (100, 50.0, "noisy", -50, "faster"),  # faster is proof whatever the samples
    (100, 125.4, "ok", 25, "within"),
    (100, 126.0, "ok", 26, "slower"),
    (100, 160.0, "noisy", 60, "unknown"),  # slower on disturbed samples proves nothing
])
def test_the_limit_judged_is_the_limit_printed(table_us: float, now_us: float, verdict: str,
                                               change: int, kind: str) -> None:
    got = compare(table_us * US, now_us * US, verdict)
    assert (got.change_pct, got.kind) == (change, kind)
    words = got.words()
    assert words.startswith(f"{change:+d} %: ")
    assert f"{LIMIT_PCT} %" in words
    assert ("within" in words) == (kind == "within")


def test_every_change_the_lines_print_is_judged_by_the_printed_limit() -> None:
    """From -60 % to +60 % in steps of 0.1 %: stale exactly where the printed whole
    percentage lies beyond the printed ±LIMIT_PCT."""
    for tenth in range(-600, 601):
        got = compare(100 * US, (100 + tenth / 10) * US, "ok")
        assert (got.kind != "within") == (abs(got.change_pct) > LIMIT_PCT), (tenth, got)
