"""Headline figures: the few numbers of an analysis that other views compare.

Every analysis may list them under "figures"; the settings matrix (report/env_matrix.py)
puts them side by side per environment setting, kind "overlap" (what a setting gains)
next to kind "cost" (what it costs) and "info" (facts such as a detected limit).
"""

from __future__ import annotations

import math
from typing import Any

KINDS = ("overlap", "cost", "info")


def figure(name: str, label: str, value: float | None, unit: str, kind: str) -> dict[str, Any]:
    """One figure; a value that is not a finite number becomes None (JSON null)."""
    assert kind in KINDS, kind
    ok = isinstance(value, (int, float)) and math.isfinite(value)
    return {"name": name, "label": label, "value": float(value) if ok else None,
            "unit": unit, "kind": kind}
