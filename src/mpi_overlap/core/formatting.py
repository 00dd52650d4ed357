"""How numbers read to people: the one place that turns percentages, times, byte counts and
intervals into the text of sentences (analysis findings), terminal tables, report.html and
the CSV tables.

Each function returns `missing` for a value that is not a number (None, a bool, text; DASH
"—" unless the caller asks for "n/a" or "?"), so a hole in a document prints as a marker.
The parameters are the differences between the places that print: decimals, a sign, the
unit after the number, the missing marker. Byte sizes that are whole powers of two ("4 KiB")
are sizes.format_size, the inverse of the size-list grammar.

Imports nothing from the package: every layer may use it.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, Literal

DASH = "—"
NA = "n/a"


def is_number(value: Any) -> bool:
    """A real number (int, float, NumPy's), not a bool: what the functions below format."""
    kind = type(value)  # the two types JSON gives first: large reports call this a lot
    if kind is float or kind is int:
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


# ---------------------------------------------------------------- numbers and intervals


def fmt_num(value: Any, spec: str, unit: str = "", missing: str = DASH) -> str:
    """A number formatted with `spec`, then `unit` ("12.5 ns" from spec ".1f", unit " ns")."""
    return f"{value:{spec}}{unit}" if is_number(value) else missing


def fmt_range(low: Any, high: Any, spec: str, *, sep: str = "–", missing: str = DASH) -> str:
    """'29.2–98.5': both ends formatted with `spec`; `missing` unless both are numbers."""
    if not (is_number(low) and is_number(high)):
        return missing
    return f"{low:{spec}}{sep}{high:{spec}}"


def fmt_with_ci(value: Any, low: Any, high: Any, fmt: Callable[[Any], str],
                missing: str = DASH) -> str:
    """'1.23 [1.10–1.40]': a value and its interval, each through `fmt`; the value alone
    when an end is missing; `missing` when the value is."""
    if not is_number(value):
        return missing
    if not (is_number(low) and is_number(high)):
        return fmt(value)
    return f"{fmt(value)} [{fmt(low)}–{fmt(high)}]"


# ---------------------------------------------------------------- percentages


def fmt_pct(value: Any, decimals: int | None = None, *, sign: bool = False,
            missing: str = DASH) -> str:
    """A percentage with its unit and `decimals` decimals ('12 %', '+3.5 %'), or, with
    decimals None, the sentence form: whole from 10 % up and at 0, one decimal below
    ('12 %', '0.4 %')."""
    return _pct(value, decimals, sign, " %", missing)


def fmt_pct_cell(value: Any, decimals: int = 1, *, missing: str = DASH) -> str:
    """A percentage without its unit, for a column headed % ('12.5', '12' with decimals 0)."""
    return _pct(value, decimals, False, "", missing)


def _pct(value: Any, decimals: int | None, sign: bool, unit: str, missing: str) -> str:
    if not is_number(value):
        return missing
    if decimals is None:
        decimals = 0 if value >= 10 or value == 0 else 1
    return f"{value:{'+' if sign else ''}.{decimals}f}{unit}"


def _range_decimals(lo: Any, hi: Any) -> int:
    """One precision for both ends of a range of shares: the sentence form's one decimal
    when either end needs it (above 0, under 10 %), else whole. Each end on its own would
    read '0 %–0.0 %'."""
    return 1 if any(is_number(v) and 0 < abs(v) < 10 for v in (lo, hi)) else 0


def _pct_ends(lo: Any, hi: Any) -> tuple[str, str]:
    d = _range_decimals(lo, hi)
    return fmt_pct(lo, d), fmt_pct(hi, d)


def pct_range(lo: Any, hi: Any) -> str:
    """'12 %–85 %', '0.4 %–12.0 %' (one precision for both ends), or one figure ('0.0 %')
    when both ends print the same."""
    a, b = _pct_ends(lo, hi)
    return a if a == b else f"{a}–{b}"


def pct_between(lo: Any, hi: Any) -> str:
    """'between 12 % and 85 %' (one precision for both ends, as pct_range), or the one
    figure ('0.0 %') when both ends print the same."""
    a, b = _pct_ends(lo, hi)
    return a if a == b else f"between {a} and {b}"


# ---------------------------------------------------------------- times


def sig3(x: float) -> str:
    """About three significant digits: '850', '12.4', '2.03' (no exponent, no unit)."""
    mag = abs(x)
    return f"{x:.0f}" if mag >= 100 else f"{x:.1f}" if mag >= 10 else f"{x:.2f}"


def fmt_us(value_us: Any, missing: str = DASH) -> str:
    """A time given in µs, with about three significant digits and no unit (table cells
    headed µs): overheads are ~1 µs, transfers ~ms."""
    return sig3(value_us) if is_number(value_us) else missing


def fmt_time(seconds: Any) -> str:
    """A duration with three significant digits and a unit: 2.03 ms, 850 µs, 12.4 s."""
    if not is_number(seconds):
        return DASH
    mag = abs(seconds)
    if mag == 0:
        return "0 s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if mag >= scale:
            return f"{sig3(seconds / scale)} {unit}"
    return f"{sig3(seconds / 1e-9)} ns"


def fmt_s_as_us(seconds: Any, spec: str, missing: str = DASH) -> str:
    """A time given in seconds, as µs formatted with `spec` (no unit)."""
    return f"{seconds * 1e6:{spec}}" if is_number(seconds) else missing


def fmt_s_as_ms(seconds: Any, spec: str = ".2f", missing: str = DASH) -> str:
    """A time given in seconds, as ms formatted with `spec` (no unit)."""
    return f"{seconds * 1e3:{spec}}" if is_number(seconds) else missing


def fmt_period(us: float) -> str:
    """A period given in µs, in its shortest form: '50 µs', '2.5 ms' from 1000 µs on."""
    return f"{us:g} µs" if us < 1000 else f"{us / 1000:g} ms"


# ---------------------------------------------------------------- byte counts


def fmt_bytes(n: Any, missing: str = DASH) -> str:
    """A byte count with its thousands grouped by spaces: '1 048 576' (no unit)."""
    return f"{n:,}".replace(",", " ") if is_number(n) else missing


def fmt_mib(n: int, decimals: int = 1, *, below: Literal["KiB", "bytes"] = "KiB") -> str:
    """A file size: MiB from 1 MiB on ('1.5 MiB'); below that KiB with the same decimals
    ('12.0 KiB') or, with below="bytes", the plain count ('512 bytes')."""
    if n >= 1 << 20:
        return f"{n / (1 << 20):.{decimals}f} MiB"
    return f"{n} bytes" if below == "bytes" else f"{n / 1024:.{decimals}f} KiB"


def opt_text(v: float | None, spec: str) -> str:
    if v is None:
        return DASH
    text = f"{v:{spec}}"
    # "-0 %" reads as a loss: a value that rounds to zero is shown as zero.
    return text.replace("-", "+") if float(text) == 0 and "+" in spec else text


def count_of(n: int, what: str) -> str:
    """'1 event', '3 events': a count with its noun (a regular plural)."""
    return f"{n} {what}" + ("" if n == 1 else "s")
