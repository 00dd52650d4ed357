"""Derived-datatype and alignment benchmarks (mo_datatypes, mo_alignment): time per case
and size, slowdown against a baseline measured side by side, and per-byte cost.

Baseline: in `datatypes`, the contiguous send of the same size; in `alignment`, the same
kind of case at offset 0. The slowdown is the ratio of the sample medians; its 95 % CI is
a percentile bootstrap (both sample sets resampled, fixed seed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis.stats import median_bootstrap_ci
from ...core.sizes import format_size

BOOTSTRAP = 2000


def ratio_ci(num: list[float], den: list[float], seed: int = 1) -> tuple[float | None, ...]:
    """(median(num) / median(den), CI low, CI high); Nones when either set is empty."""
    a = np.asarray([x for x in num if x is not None], dtype=float)
    b = np.asarray([x for x in den if x is not None], dtype=float)
    if a.size == 0 or b.size == 0 or not np.median(b) > 0:
        return None, None, None
    return median_bootstrap_ci(a, b, np.divide, reps=BOOTSTRAP, seed=seed)


def _baseline(mode: str, case: dict[str, Any], cases: list[dict[str, Any]]) -> dict | None:
    for c in cases:
        if mode == "alignment":
            if c.get("kind") == case.get("kind") and c.get("offset") == 0:
                return c
        elif c.get("kind") == "contig":
            return c
    return None


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    res = result.get("results") or {}
    mode = res.get("mode") or result.get("benchmark") or "datatypes"
    sizes_out = []
    all_valid = True
    checksums_match = True
    for sz in res.get("sizes") or []:
        cases = sz.get("cases") or []
        rows = []
        for c in cases:
            base = _baseline(mode, c, cases)
            r, lo, hi = (
                ratio_ci(c.get("samples_s") or [], base.get("samples_s") or [])
                if base is not None
                else (None, None, None)
            )
            t = c.get("one_way_s")
            payload = c.get("payload_bytes") or 0
            all_valid = all_valid and bool(c.get("valid"))
            rows.append(
                {
                    "case": c.get("case"),
                    "kind": c.get("kind"),
                    "offset": c.get("offset"),
                    "payload_bytes": payload,
                    "one_way_s": t,
                    "slowdown": r,
                    "slowdown_ci_low": lo,
                    "slowdown_ci_high": hi,
                    "ns_per_byte": t * 1e9 / payload if t is not None and payload else None,
                    "valid": bool(c.get("valid")),
                    "samples": len(c.get("samples_s") or []),
                }
            )
        sums = {c.get("kind"): c.get("packed_checksum") for c in cases if c.get("packed_checksum")}
        match = None
        if "pack_mpi" in sums and "pack_loop" in sums:
            match = sums["pack_mpi"] == sums["pack_loop"]
            checksums_match = checksums_match and match
        sizes_out.append({"bytes": sz.get("bytes"), "cases": rows, "checksums_match": match})
    out = {
        "schema": "mpi-overlap/analysis-datatypes",
        "schema_version": 1,
        "mode": mode,
        "sizes": sizes_out,
        "all_valid": all_valid,
        "checksums_match": checksums_match,
    }
    out["finding"] = finding(out)
    return out


def _case(size: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((c for c in size["cases"] if c["case"] == name), None)


def finding(a: dict[str, Any]) -> str:
    sizes = [s for s in a["sizes"] if s["cases"]]
    if not sizes:
        return "no size was measured"
    if a["mode"] == "alignment":
        worst_v, worst_c = None, None
        for s in sizes:
            for c in s["cases"]:
                if c["slowdown"] is None or c["offset"] == 0:
                    continue
                key = "v" if c["kind"] == "vector_int" else "c"
                cur = worst_v if key == "v" else worst_c
                if cur is None or c["slowdown"] > cur[0]:
                    val = (c["slowdown"], c["offset"], s["bytes"], c["slowdown_ci_low"],
                           c["slowdown_ci_high"])
                    if key == "v":
                        worst_v = val
                    else:
                        worst_c = val
        def ci(w: tuple) -> str:
            lo, hi = w[3], w[4]
            if lo is None or hi is None:
                return ""
            return f", 95 % CI {lo:.2f}-{hi:.2f}" + (", within noise" if lo <= 1.0 <= hi else "")

        parts = []
        if worst_v:
            parts.append(
                f"misaligned strided int vectors take up to {worst_v[0]:.2f}x the time at offset 0 "
                f"(offset {worst_v[1]}, {format_size(worst_v[2])}{ci(worst_v)})"
            )
        if worst_c:
            parts.append(
                f"contiguous buffers up to {worst_c[0]:.2f}x "
                f"(offset {worst_c[1]}, {format_size(worst_c[2])}{ci(worst_c)})"
            )
        return "; ".join(parts) or "no offset was compared"
    s = sizes[-1]
    parts = []
    for name, label in (
        ("vector_char", "stride-2 MPI_CHAR vector"),
        ("vector_int", "MPI_INT vector"),
        ("vector_double", "MPI_DOUBLE vector"),
        ("indexed", "indexed"),
        ("struct", "struct"),
    ):
        c = _case(s, name)
        if c and c["slowdown"] is not None:
            parts.append(f"{label} {c['slowdown']:.1f}x")
    text = (
        f"slower than contiguous at {format_size(s['bytes'])}: "
        + ", ".join(parts)
    )
    pm, pl = _case(s, "pack_mpi"), _case(s, "pack_loop")
    if pm and pl and pm["one_way_s"] and pl["one_way_s"]:
        r = pm["one_way_s"] / pl["one_way_s"]
        text += (
            f"; packing by hand is {r:.2f}x faster than MPI_Pack"
            if r >= 1
            else f"; packing by hand is {1 / r:.2f}x slower than MPI_Pack"
        )
    return text
