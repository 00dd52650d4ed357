"""Numbers read from JSON documents that may hold null, NaN, booleans or anything else
where a number is expected (a torn file, an older schema, a hand-edited run)."""

from __future__ import annotations

import math
from typing import Any


def num(value: Any) -> float | None:
    """A finite number, or None (null, missing, NaN or a non-number in the file)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None

