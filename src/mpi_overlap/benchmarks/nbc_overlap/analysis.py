"""Analysis of the nbc-overlap benchmark: result.json + the rank profiles -> overlap %.

Per collective, size and MPI_Test variant (native/bench/nbc_overlap.c) three measures of
the same loops, side by side:

- OSU (osu_iallreduce etc.):  max(0, 100 − 100·(t_overall − (t_compute − t_test))/t_pure)
  per rank, averaged over the ranks; we use the per-rank median over iterations of
  t_overall − (t_compute − t_test) (never negative, so the value is at most 100);
- IMB-NBC:  100·max(0, min(1, (t_pure + t_CPU − t_ovrl)/max(t_pure, t_CPU))) from the rank
  with the largest t_ovrl (t_CPU: the same work timed alone);
- the profiler's bounds: min % = 100·min_s/xfer_s and max % = 100·max_s/xfer_s of the
  region "<collective>/<bytes>/t<tests>" in each rank's profile, summed over the ranks.

Plus per-rank min/max of the OSU %, and the compute slowdown (work phase without the
tests / work alone − 1). Formulas and sources: docs/benchmarks.md, "nbc-overlap".

Both formulas take t_pure from a loop of its own, so a t_pure disturbed in that loop
moves every overlap computed from it (52 % and 76 % came from t_pure 412/465 µs against
177/106 µs normally). The program measures t_pure again after the overlapped loops; a
case whose two t_pure disagree beyond their intervals, by more than DISTURBED_REL, is
`disturbed`; one whose delivered data were wrong (--validate) is `invalid`. The headline
figures and the finding use the `ok` cases only. An OSU % that the formula's max(0, ...)
raised from below zero even at the favourable quartile is marked `clipped`: the
non-overlapped time exceeded the whole t_pure, outside the formula's range.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...analysis.figures import figure
from ...analysis.overlap_formulas import imb_pct, imb_raw, mean_of, osu_pct, osu_raw
from ...analysis.replication import Point, Quantity
from ...analysis.stats import median_or_none
from ...core.formatting import fmt_num
from ...core.sizes import format_size
from ...core.values import num
from ...profile.analysis.profile_values import overlap_pcts
from ...profile.analysis.profiled_runs import load_profiles, regions_by_name

SCHEMA = "mpi-overlap/analysis"
SCHEMA_VERSION = 1
BENCHMARK = "nbc-overlap"

# Consistency rules (the tests use the same numbers).
LIMITS: dict[str, float] = {
    # OSU % may exceed 100 only by rounding of medians (the per-iteration quantity is >= 0)
    "osu_max_pct": 100.0 + 1e-6,
    # MPI_Test calls "do not lower overlap": the median over the cases of (with − without)
    # must not be below this many points (noise of single cases is larger: checked on
    # the median over all cases of the run)
    "tests_drop_pts": -10.0,
    # t_pure before and after the overlapped loops differ by more than this share of the
    # smaller, with disjoint intervals: the case is disturbed (a 10 % shift of t_pure moves
    # an OSU overlap by up to 10 points).
    "disturbed_rel": 0.10,
}


def _t_pure_check(case: dict[str, Any]) -> str | None:
    """Why the case's t_pure before and after the overlapped loops disagree, or None."""
    for r in range(len(case.get("t_pure_us") or [])):
        vals = [_at(case.get(k), r) for k in ("t_pure_us", "t_pure_ci_low_us",
                                              "t_pure_ci_high_us", "t_pure_after_us",
                                              "t_pure_after_ci_low_us",
                                              "t_pure_after_ci_high_us")]
        if any(v is None for v in vals):
            continue
        a, alo, ahi, b, blo, bhi = vals  # type: ignore[misc]
        disjoint = ahi < blo or bhi < alo
        if disjoint and abs(a - b) > LIMITS["disturbed_rel"] * min(a, b):
            return (f"rank {r}: t_pure {a:.4g} µs [{alo:.4g}–{ahi:.4g}] before the overlapped "
                    f"loops, {b:.4g} µs [{blo:.4g}–{bhi:.4g}] after")
    return None


def _case_verdict(case: dict[str, Any]) -> tuple[str, str | None]:
    """ok / invalid (--validate found wrong data) / disturbed (t_pure moved)."""
    bad = case.get("invalid_elements")
    if isinstance(bad, int) and bad > 0:
        return "invalid", f"{bad} delivered elements differed from the expected data"
    why = _t_pure_check(case)
    return ("disturbed", why) if why else ("ok", None)


def _max_over_ranks(arr: Any) -> float | None:
    vals = [v for v in (num(x) for x in arr or []) if v is not None]
    return max(vals) if vals else None



def _at(arr: Any, r: int) -> float | None:
    return num(arr[r]) if isinstance(arr, list) and r < len(arr) else None


def _variant(
    case: dict[str, Any], var: dict[str, Any], profiles: dict[int, dict[str, Any]],
    problems: list[str],
) -> dict[str, Any]:
    nranks = len(case.get("t_pure_us") or [])
    ranks = []
    sum_x = sum_lo = sum_hi = 0.0
    have_prof = bool(profiles)
    for r in range(nranks):
        t_pure = _at(case.get("t_pure_us"), r)
        t_cpu = _at(case.get("t_cpu_us"), r)
        ovr = _at(var.get("t_overall_us"), r)
        comp = _at(var.get("t_compute_us"), r)
        test = _at(var.get("t_test_us"), r)
        nonov = _at(var.get("t_nonoverlap_us"), r)
        q25, q75 = _at(var.get("t_nonoverlap_q25_us"), r), _at(var.get("t_nonoverlap_q75_us"), r)
        slow = None
        if comp is not None and test is not None and t_cpu and t_cpu > 0:
            slow = 100.0 * ((comp - test) / t_cpu - 1.0)
        region = regions_by_name(profiles.get(r)).get(str(var.get("region"))) if have_prof else None
        pmin = pmax = None
        if have_prof and region is None and r in profiles:
            problems.append(f"rank {r}: no region '{var.get('region')}' in its profile")
        if region is not None:
            xfer = num(region.get("xfer_s"))
            lo, hi = num(region.get("min_s")), num(region.get("max_s"))
            if xfer is not None and lo is not None and hi is not None and xfer > 0:
                pmin, pmax = overlap_pcts(xfer, lo, hi)
                sum_x, sum_lo, sum_hi = sum_x + xfer, sum_lo + lo, sum_hi + hi
        ranks.append({
            "rank": r,
            "t_pure_us": t_pure,
            "t_cpu_us": t_cpu,
            "t_overall_us": ovr,
            "t_compute_us": comp,
            "t_test_us": test,
            "t_wait_us": _at(var.get("t_wait_us"), r),
            "t_nonoverlap_us": nonov,
            "osu_pct": osu_pct(t_pure, nonov),
            "osu_raw_pct": osu_raw(t_pure, nonov),
            "osu_raw_q25_pct": osu_raw(t_pure, q25),
            # the interquartile range of the per-iteration quantity, as overlap %
            "osu_pct_iqr": [osu_pct(t_pure, q75), osu_pct(t_pure, q25)],
            "imb_pct": imb_pct(t_pure, t_cpu, ovr),
            "imb_raw_pct": imb_raw(t_pure, t_cpu, ovr),
            "compute_slowdown_pct": slow,
            "profiler_min_pct": pmin,
            "profiler_max_pct": pmax,
        })
    osu = [r["osu_pct"] for r in ranks if r["osu_pct"] is not None]
    # Raised to 0 by max(0, ...) even at the favourable quartile of the non-overlapped time.
    clipped = [r["osu_raw_q25_pct"] for r in ranks
               if r["osu_raw_q25_pct"] is not None and r["osu_raw_q25_pct"] < 0.0]
    ovrl = [(r["t_overall_us"], r) for r in ranks if r["t_overall_us"] is not None]
    worst = max(ovrl, key=lambda t: t[0])[1] if ovrl else None
    pmin = pmax = None
    if sum_x > 0:
        pmin, pmax = overlap_pcts(sum_x, sum_lo, sum_hi)
    return {
        "tests": int(var.get("tests", 0)),
        "region": var.get("region"),
        "osu_pct": mean_of(osu),
        "osu_rank_min_pct": min(osu) if osu else None,
        "osu_rank_max_pct": max(osu) if osu else None,
        "osu_raw_max_pct": max((r["osu_raw_pct"] for r in ranks if r["osu_raw_pct"] is not None),
                               default=None),
        "osu_clipped": bool(clipped),
        "osu_raw_clipped_pct": max(clipped) if clipped else None,
        "t_overall_p90_us": _max_over_ranks(var.get("t_overall_p90_us")),
        "t_overall_p99_us": _max_over_ranks(var.get("t_overall_p99_us")),
        "imb_pct": worst["imb_pct"] if worst else None,
        # IMB's own clipping hid a value outside [0, 100] (kept here as it was)
        "imb_raw_pct": worst["imb_raw_pct"] if worst else None,
        "imb_rank": worst["rank"] if worst else None,
        "compute_slowdown_pct": mean_of([r["compute_slowdown_pct"] for r in ranks]),
        "profiler_min_pct": pmin,
        "profiler_max_pct": pmax,
        "ranks": ranks,
    }


def analyze(
    result: dict[str, Any],
    run_dir: Path | None = None,
    *,
    profiles: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The analysis document of one result (and the profiles beside it). `profiles`
    (rank -> profile.rank-N.json document) overrides reading run_dir (tests)."""
    res = result.get("results") or {}
    loaded = bool(res.get("profiler_loaded"))
    problems: list[str] = []
    if profiles is None:
        profiles, read_problems = load_profiles(run_dir) if loaded else ({}, [])
        problems += read_problems
    if not loaded:
        bounds_note = "the benchmark ran without the profiler: no bounds"
    elif not profiles:
        bounds_note = "no profile.rank-N.json beside result.json: bounds are missing"
    else:
        bounds_note = None
    cases = []
    for case in res.get("cases") or []:
        variants = [_variant(case, v, profiles if loaded else {}, problems)
                    for v in case.get("variants") or []]
        pure = [v for v in (num(x) for x in case.get("t_pure_us") or []) if v is not None]
        after = [v for v in (num(x) for x in case.get("t_pure_after_us") or []) if v is not None]
        lows = [v for v in (num(x) for x in case.get("t_pure_ci_low_us") or []) if v is not None]
        highs = [v for v in (num(x) for x in case.get("t_pure_ci_high_us") or [])
                 if v is not None]
        verdict, reason = _case_verdict(case)
        bad = case.get("invalid_elements")
        cases.append({
            "collective": case.get("collective"),
            "bytes": int(case.get("bytes", 0)),
            "iterations": int(case.get("iterations", 0)),
            "t_pure_us": median_or_none(pure),
            "t_pure_ci_us": [min(lows), max(highs)] if lows and highs else None,
            "t_pure_after_us": median_or_none(after),
            "t_pure_p90_us": _max_over_ranks(case.get("t_pure_p90_us")),
            "t_pure_p99_us": _max_over_ranks(case.get("t_pure_p99_us")),
            "t_pure_max_us": num(case.get("t_pure_max_us")),
            "valid": None if not isinstance(bad, int) else bad == 0,
            "verdict": verdict,
            "reason": reason,
            "variants": variants,
        })

    tests = int(res.get("tests", 0))
    # The headline uses the cases whose t_pure held and whose data were right.
    trusted = [c for c in cases if c["verdict"] == "ok"]
    sized = [c for c in trusted if c["collective"] != "Ibarrier"]
    largest = max((c["bytes"] for c in sized), default=None)
    smallest = min((c["bytes"] for c in sized), default=None)

    def var_of(c: dict[str, Any], t: int) -> dict[str, Any] | None:
        return next((v for v in c["variants"] if v["tests"] == t), None)

    def at_largest(key: str, t: int) -> float | None:
        vals = []
        for c in sized:
            v = var_of(c, t)
            if c["bytes"] == largest and v is not None:
                vals.append(v[key])
        return mean_of(vals)

    all_t0 = [v["osu_pct"] for c in trusted for v in c["variants"]
              if v["tests"] == 0 and v["osu_pct"] is not None]
    all_imb = [v["imb_pct"] for c in trusted for v in c["variants"]
               if v["tests"] == 0 and v["imb_pct"] is not None]
    diffs = []
    for c in cases:
        a, b = var_of(c, 0), var_of(c, tests) if tests > 0 else None
        if a and b and a["osu_pct"] is not None and b["osu_pct"] is not None:
            diffs.append(b["osu_pct"] - a["osu_pct"])
    iar = next((c for c in sized if c["collective"] == "Iallreduce" and c["bytes"] == smallest),
               None)
    checks = {
        "osu_within_0_100": all(
            v["osu_raw_max_pct"] is None or v["osu_raw_max_pct"] <= LIMITS["osu_max_pct"]
            for c in cases for v in c["variants"]),
        "profiler_min_le_max": all(
            (v["profiler_min_pct"] is None or v["profiler_min_pct"] <= v["profiler_max_pct"])
            and all(r["profiler_min_pct"] is None or r["profiler_min_pct"] <= r["profiler_max_pct"]
                    for r in v["ranks"])
            for c in cases for v in c["variants"]),
        "tests_gain_median_pts": median_or_none(diffs),
        "tests_not_lower": (None if not diffs
                            else median_or_none(diffs) >= LIMITS["tests_drop_pts"]),  # type: ignore[operator]
        "cases_tests_lower_by_10": sum(1 for d in diffs if d < -10.0),
        "cases_compared": len(diffs),
        "cases_disturbed": sum(c["verdict"] == "disturbed" for c in cases),
        "cases_invalid": sum(c["verdict"] == "invalid" for c in cases),
        "cases_validated": sum(c["valid"] is not None for c in cases),
        "variants_clipped": sum(v["osu_clipped"] for c in cases for v in c["variants"]),
    }
    osu_l0, osu_lt = at_largest("osu_pct", 0), at_largest("osu_pct", tests) if tests else None
    imb_l0 = at_largest("imb_pct", 0)
    pmin_l0, pmax_l0 = at_largest("profiler_min_pct", 0), at_largest("profiler_max_pct", 0)
    slow_l0 = at_largest("compute_slowdown_pct", 0)
    figures = [
        figure("osu_overlap_pct_largest",
               f"OSU overlap at {format_size(largest or 0)} "
               "(mean over collectives, no MPI_Test)",
               osu_l0, "%", "overlap"),
        figure("osu_overlap_pct_largest_tests",
               f"OSU overlap at "
               f"{format_size(largest or 0)} with {tests} MPI_Test calls",
               osu_lt, "%", "overlap"),
        figure("imb_overlap_pct_largest",
               f"IMB overlap at {format_size(largest or 0)} "
               "(mean over collectives)",
               imb_l0, "%", "overlap"),
        figure("osu_overlap_min_pct", "lowest OSU overlap, any case (no MPI_Test)",
               min(all_t0) if all_t0 else None, "%", "overlap"),
        figure("osu_overlap_max_pct", "highest OSU overlap, any case (no MPI_Test)",
               max(all_t0) if all_t0 else None, "%", "overlap"),
        figure("imb_overlap_max_pct", "highest IMB overlap, any case (no MPI_Test)",
               max(all_imb) if all_imb else None, "%", "overlap"),
        figure("profiler_min_pct_largest",
               f"profiler min bound at "
               f"{format_size(largest or 0)} (mean)",
               pmin_l0, "%", "overlap"),
        figure("profiler_max_pct_largest",
               f"profiler max bound at "
               f"{format_size(largest or 0)} (mean)",
               pmax_l0, "%", "overlap"),
        figure("iallreduce_small_t_pure_us",
               f"Iallreduce {format_size(smallest or 0)} "
               "post + wait (t_pure)",
               iar["t_pure_us"] if iar else None, "us", "cost"),
        figure("compute_slowdown_pct_largest",
               f"compute slowdown at "
               f"{format_size(largest or 0)} (no MPI_Test)",
               slow_l0, "%", "info"),
    ]
    if not cases:
        finding = "no case measured"
    elif not trusted:
        finding = (f"no trustworthy case: {checks['cases_disturbed']} of {len(cases)} disturbed "
                   f"(t_pure moved between its two loops), {checks['cases_invalid']} with wrong "
                   "data")
    else:
        ncoll = len({c["collective"] for c in cases})
        parts = [f"{ncoll} collectives at {format_size(largest or 0)}: OSU overlap "
                 f"{fmt_num(osu_l0, '.0f')} % without MPI_Test"]
        if tests:
            parts[0] += f", {fmt_num(osu_lt, '.0f')} % with {tests} tests"
        parts.append(f"IMB {fmt_num(imb_l0, '.0f')} %")
        if pmin_l0 is not None:
            parts.append(f"profiler bounds {fmt_num(pmin_l0, '.0f')}–{fmt_num(pmax_l0, '.0f')} %")
        if all_t0:
            parts.append(f"OSU range {min(all_t0):.0f}–{max(all_t0):.0f} % over all cases")
        if iar and iar["t_pure_us"] is not None:
            parts.append(f"Iallreduce {format_size(smallest or 0)} costs {iar['t_pure_us']:.2f} µs")
        left = [f"{checks[k]} {what}" for k, what in (
            ("cases_disturbed", "disturbed (t_pure moved between its two loops)"),
            ("cases_invalid", "with wrong data")) if checks[k]]
        if left:
            parts.append(f"{' and '.join(left)} of {len(cases)} cases left out")
        finding = "; ".join(parts)
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "benchmark": BENCHMARK,
        "tests": tests,
        "largest_bytes": largest,
        "bounds": {"available": bool(loaded and profiles), "note": bounds_note},
        "cases": cases,
        "checks": checks,
        "problems": problems,
        "finding": finding,
        "figures": figures,
    }


# ---- the quantities compared across launches (analysis/replication.py)

def replicated(analysis: dict[str, Any]) -> Iterator[tuple[Quantity, Point]]:
    for c in analysis.get("cases") or []:
        at = f"{c.get('collective')} {format_size(int(c.get('bytes', 0)))}"
        key = f"{c.get('collective')}/{c.get('bytes')}"
        ci = c.get("t_pure_ci_us") or [None, None]
        yield (Quantity(f"{key}/t_pure", f"{at} t_pure", "µs"),
               Point(num(c.get("t_pure_us")), num(ci[0]), num(ci[1]), c.get("verdict")))
        for v in c.get("variants") or []:
            yield (Quantity(f"{key}/t{v.get('tests')}/osu", f"{at} OSU overlap, "
                            f"{v.get('tests')} tests", "%"),
                   Point(num(v.get("osu_pct")), verdict=c.get("verdict")))
