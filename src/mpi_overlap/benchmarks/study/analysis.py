"""Analysis of a case-study run (run.py here): per problem size and exchange mode, the run
time and MPI time without the profiler, the profiler's min/max overlap bounds with it,
every mode against the app's baseline mode, whether the MPI time a mode saved lies within
the bounds, and what the profiler cost the app. docs/case-studies.md.

Statistics: medians over the repetitions; the bounds are per-rank means (run.py here). The
profiler's cost is the geometric mean over repetitions of (run time summed over every
mode and size with the profiler) / (the same without), with the Student-t interval of
the log ratios; and, inside the cost launches (one per repetition and size, the baseline
timed in blocks with the profiler paused in every other), the pairs of blocks' ratios
pooled (analysis/block_pairs.py), resolved where their interval lies within
RESOLUTION_PCT of the figure.

Prediction: a mode's transfer time hidden behind computation lies, by the bounds,
between min_s and max_s; against the baseline the hidden time gained lies between
Δmin = min_m − max_base (guaranteed) and Δmax = max_m − min_base (possible). Hidden
transfer time is MPI time saved, so the measured saving (fall in MPI time, without the
profiler) should lie in [Δmin, Δmax]: "within the bounds" when it does (± tolerance),
"below" when less was saved than the lower bound guarantees, "above" when more was saved
than any hidden transfer explains (less waiting for the partner or for progress).
The tolerance is 5 % of the baseline's MPI time (timing noise on a shared machine).

The advice loop (docs/case-studies.md, "Following the profiler's advice"): the profile of
the baseline alone bounds what its advice can gain (profile/analysis/advice.py), before any code
changes; the app's other modes are that advice applied. Moving computation between post
and completion (halo `overlap`) can hide at most the baseline's xfer − max; doing that and
calling MPI_Testall during it (halo `overlap-test`: computation moved, progress made) at
most xfer − min; posting the non-blocking collective (cg `iallreduce`) at most
xfer − max. The measured saving (without the profiler) is then held against that bound:
"within the bound", or "beyond the bound" where the mode saved more MPI time than any
transfer time it could hide (less waiting).
"""

from __future__ import annotations

from typing import Any

from ...analysis.block_pairs import pair_cost, pair_cost_figure, warm_pair_ratios
from ...analysis.figures import MIN_PAIRS, figure, resolved_text
from ...analysis.stats import median_or_none, ratio_ci
from ...core.formatting import NA, fmt_pct, fmt_s_as_ms
from ...profile.analysis.library_time import over_launches, over_launches_words

TOLERANCE = 0.05
BOUND_KEYS = ("xfer_s", "min_s", "max_s", "comp_s", "call_s")
# mode -> (advice rule it applies, what it does, the baseline bound it may gain: the part
# of the baseline's transfer time that is not certainly overlapped in that sense)
ADVICE_MODES: dict[str, tuple[str, str, str]] = {
    "overlap": ("move-computation", "move computation between post and MPI_Waitall",
                "max_s"),
    "overlap-test": ("move-computation + progress", "move computation between post and "
                     "completion and call MPI_Testall during it", "min_s"),
    "iallreduce": ("nonblocking", "post MPI_Iallreduce before independent computation",
                   "max_s"),
}


def _median(values: list[float]) -> float | None:
    return median_or_none(float(v) for v in values if isinstance(v, (int, float)))


def _pct(part: float | None, whole: float | None) -> float | None:
    if part is None or whole is None or whole <= 0:
        return None
    return 100.0 * part / whole


def _change_pct(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or old <= 0:
        return None
    return 100.0 * (new / old - 1.0)


def _cell(launches: list[dict[str, Any]], local: int, mode: str) -> dict[str, Any]:
    """One (size, mode): medians of its numbers over the repetitions."""
    def values(profiled: bool, key: str) -> list[float]:
        out = []
        for x in launches:
            if x["local"] != local or x["profiled"] != profiled or x["status"] != "complete":
                continue
            row = next((m for m in x["modes"] if m["mode"] == mode), None)
            if row is not None and row.get(key) is not None:
                out.append(row[key])
        return out

    def bound(key: str) -> float | None:
        return _median([x["bounds"][mode][key] for x in launches
                        if x["local"] == local and x["profiled"] and x["status"] == "complete"
                        and x.get("profile_status") == "complete" and x.get("bounds")
                        and mode in x["bounds"]])

    bounds = {k: bound(k) for k in BOUND_KEYS}
    xfer = bounds["xfer_s"]
    run_without, run_with = _median(values(False, "run_time_s")), _median(
        values(True, "run_time_s"))
    return {
        "local": local,
        "mode": mode,
        "reps": len(values(False, "run_time_s")),
        "run_time_s": run_without,
        "mpi_time_s": _median(values(False, "mpi_time_s")),
        "per_iter_us": _median(values(False, "per_iter_us")),
        "run_time_profiled_s": run_with,
        "profiler_ratio": (run_with / run_without) if run_with and run_without else None,
        **bounds,
        "min_pct": _pct(bounds["min_s"], xfer),
        "max_pct": _pct(bounds["max_s"], xfer),
        "nonoverlap_s": None if xfer is None or bounds["max_s"] is None
        else max(0.0, xfer - bounds["max_s"]),
    }


def _compare(cell: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """A mode against the baseline of the same size."""
    def diff(key: str) -> float | None:
        a, b = cell.get(key), base.get(key)
        return None if a is None or b is None else a - b

    saved = None if cell["mpi_time_s"] is None or base["mpi_time_s"] is None \
        else base["mpi_time_s"] - cell["mpi_time_s"]
    # Hidden time lies in [min, max] in each mode, so the gain over the baseline lies in
    # [min_m - max_base, max_m - min_base] (interval subtraction).
    gain_lo = None if cell["min_s"] is None or base["max_s"] is None \
        else cell["min_s"] - base["max_s"]
    gain_hi = None if cell["max_s"] is None or base["min_s"] is None \
        else cell["max_s"] - base["min_s"]
    tol = TOLERANCE * (base["mpi_time_s"] or 0.0)
    if gain_lo is None or gain_hi is None:
        prediction = "no data"
    elif gain_lo > tol:
        prediction = "a saving for sure"
    elif gain_hi > tol:
        prediction = "a saving at most"
    elif gain_hi < -tol:
        prediction = "a loss for sure"
    else:
        prediction = "no saving"
    if saved is None or gain_lo is None or gain_hi is None:
        verdict = "no data"
    elif saved < gain_lo - tol:
        verdict = "below the bounds"
    elif saved > max(gain_hi, 0.0) + tol:
        verdict = "above the bounds"
    else:
        verdict = "within the bounds"
    return {
        "mode": cell["mode"],
        "against": base["mode"],
        "run_time_change_pct": _change_pct(cell["run_time_s"], base["run_time_s"]),
        "mpi_time_change_pct": _change_pct(cell["mpi_time_s"], base["mpi_time_s"]),
        "mpi_saved_s": saved,
        "hidden_gain_min_s": gain_lo,
        "hidden_gain_max_s": gain_hi,
        "min_pct_change": diff("min_pct"),
        "max_pct_change": diff("max_pct"),
        "tolerance_s": tol,
        "prediction": prediction,
        # MPI time saved beyond the most transfer time the bounds let become hidden: less
        # waiting for the partner or for progress, not transfer hidden behind computation.
        "saved_beyond_bounds_s": None if saved is None or gain_hi is None
        or saved - max(gain_hi, 0.0) <= tol else saved - max(gain_hi, 0.0),
        "verdict": verdict,
    }


def _sentence(size: dict[str, Any], cmp: dict[str, Any], cell: dict[str, Any],
              base: dict[str, Any]) -> str:
    mpi = cmp["mpi_time_change_pct"]
    run = cmp["run_time_change_pct"]
    moved = NA if mpi is None else (f"cuts MPI time {-mpi:.0f} %" if mpi < 0
                                    else f"adds {mpi:.0f} % MPI time")
    lo, hi, base_lo, base_hi = (fmt_pct(v, 0, missing=NA) for v in (
        cell["min_pct"], cell["max_pct"], base["min_pct"], base["max_pct"]))
    gain_lo, gain_hi, saved = (fmt_s_as_ms(v, missing=NA) for v in (
        cmp["hidden_gain_min_s"], cmp["hidden_gain_max_s"], cmp["mpi_saved_s"]))
    return (f"{size['local']}^3 per rank ({size['face_bytes']:,} B faces): {cmp['mode']} "
            f"{moved} against {cmp['against']} (run time "
            f"{fmt_pct(run, 1, sign=True, missing=NA)}); overlap bounds {lo}–{hi} against "
            f"{base_lo}–{base_hi}, i.e. {cmp['prediction']} of {gain_lo}–{gain_hi} ms hidden; "
            f"measured {saved} ms less MPI time: {cmp['verdict']}"
            + ("" if cmp["saved_beyond_bounds_s"] is None else
               f" ({fmt_s_as_ms(cmp['saved_beyond_bounds_s'])} ms saved beyond any transfer "
               "time the bounds allow: less waiting, not hidden transfer)"))


def advice_checks(cells: list[dict[str, Any]], base: dict[str, Any],
                  comparisons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per mode that applies the baseline's advice: the bound the baseline's profile set
    on it, and the MPI time the mode saved."""
    out = []
    for cmp in comparisons:
        spec = ADVICE_MODES.get(cmp["mode"])
        if spec is None:
            continue
        rule, what, lower = spec
        xfer, lo = base.get("xfer_s"), base.get(lower)
        bound = None if xfer is None or lo is None else max(0.0, xfer - lo)
        saved, tol = cmp["mpi_saved_s"], cmp["tolerance_s"]
        if bound is None or saved is None:
            verdict = "no data"
        elif saved <= bound + tol:
            verdict = "within the bound"
        else:
            verdict = "beyond the bound"
        out.append({"mode": cmp["mode"], "rule": rule, "advice": what, "bound_s": bound,
                    "saved_s": saved, "tolerance_s": tol, "verdict": verdict})
    return out


def _advice_sentence(size: dict[str, Any], base_mode: str, check: dict[str, Any]) -> str:
    saved = check["saved_s"]
    outcome = (f"saved {fmt_s_as_ms(saved, missing=NA)} ms of MPI time"
               if saved is None or saved >= 0
               else f"spent {fmt_s_as_ms(-saved, missing=NA)} ms more in MPI")
    text = (f"{size['local']}^3 per rank: the profile of {base_mode} said that to "
            f"{check['advice']} could hide at most {fmt_s_as_ms(check['bound_s'], missing=NA)} "
            "ms per rank; "
            f"{check['mode']} does it and {outcome}: {check['verdict']}")
    if check["verdict"] == "beyond the bound":
        text += " (more than any transfer it could hide: it also waits less)"
    return text


def _overhead(launches: list[dict[str, Any]], sizes: int) -> dict[str, Any]:
    """With/without ratio of the run times summed over every mode and size of one
    repetition (sums, so the short runs of small sizes, where a single queue flush is a
    large fraction, weigh by their length); and the same per unit of computation
    (_per_computation)."""
    pairs: dict[int, dict[bool, list[tuple[float, float | None]]]] = {}
    disturbed_reps: set[int] = set()
    for x in launches:
        if x["status"] != "complete" or not x["modes"]:
            continue
        total = sum(float(m["run_time_s"]) for m in x["modes"])
        pairs.setdefault(x["rep"], {}).setdefault(x["profiled"], []).append(
            (total, _computation(x["modes"])))
        if x.get("disturbed"):
            disturbed_reps.add(x["rep"])
    used = [rep for rep, p in pairs.items()
            if len(p.get(True, [])) == sizes and len(p.get(False, [])) == sizes
            and sum(t for t, _ in p[False]) > 0]

    def figures(reps: list[int]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The run-time ratio's figures over these repetitions, and per unit of
        computation (None where the launches cannot give it)."""
        ratios = [sum(t for t, _ in pairs[rep][True]) / sum(t for t, _ in pairs[rep][False])
                  for rep in reps]
        return (_ratio_figures(ratios),
                _per_computation({rep: pairs[rep] for rep in reps}, disturbed_reps))

    whole, per = figures(used)
    disturbed = sum(1 for rep in used if rep in disturbed_reps)
    # what the profiled launches paid once, outside the modes' run times above
    once = over_launches([x["library_s"] for x in launches if x["status"] == "complete"
                          and x["profiled"] and x.get("library_s")])
    # where the guard saw other work in some pairs, the same figures without them: one
    # disturbed pair can move a 30-pair interval several-fold (a study beside a second job
    # gave +1.30 % [-3.8, +6.7] per unit of computation with 4 such pairs, -0.12 %
    # [-0.92, +0.69] without them)
    calm = [rep for rep in used if rep not in disturbed_reps]
    undisturbed = None
    if disturbed and calm:
        undisturbed, calm_per = figures(calm)
        if calm_per:
            undisturbed["per_computation"] = calm_per
    # (no key where the launches cannot give it: studies recorded before read as before)
    return {**whole,
            "disturbed_launches": sum(1 for x in launches if x.get("disturbed")),
            "disturbed_pairs": disturbed, **({"per_computation": per} if per else {}),
            **({"once_per_launch": once} if once else {}),
            **({"undisturbed": undisturbed} if undisturbed else {})}


def _inside_launches(cost_launches: list[dict[str, Any]]) -> dict[str, Any]:
    """The cost inside launches: every complete cost launch's pairs of blocks (running /
    paused) pooled, and per size. A launch whose ranks recorded transfers with monitoring
    off was not paused (the profiler refuses where threads call MPI) and is left out."""
    by_size: dict[int, list[float]] = {}
    used = refused = 0
    for x in cost_launches:
        if x.get("status") != "complete":
            continue
        if x.get("unmonitored_transfers"):
            refused += 1
            continue
        used += 1
        by_size.setdefault(int(x["local"]), []).extend(
            warm_pair_ratios(x.get("block_s") or []))
    pooled = [r for ratios in by_size.values() for r in ratios]
    return {**pair_cost(pooled),
            "block": next((int(x["block"]) for x in cost_launches if x.get("block")), None),
            "launches": used, "refused": refused,
            "by_size": [{"local": n, **pair_cost(r)} for n, r in sorted(by_size.items())]}


def _inside_sentence(inside: dict[str, Any]) -> str:
    """'Inside 10 launches (blocks of 8 iterations, profiler paused in every other): …'"""
    head = (f"Inside {inside['launches']} launch{'es' if inside['launches'] != 1 else ''} "
            f"(blocks of {inside['block']} iterations, the profiler paused in every other)")
    if inside["overhead_pct"] is None:
        return f"{head}: no pair of blocks" + (
            f"; {inside['refused']} launch{'es' if inside['refused'] != 1 else ''} left "
            "out: the profiler did not pause"
            if inside["refused"] else "")
    ci = ("" if inside["ci95_low_pct"] is None else
          f" [{inside['ci95_low_pct']:+.2f}, {inside['ci95_high_pct']:+.2f}]")
    rank = ("" if inside["rank_estimate_pct"] is None else
            f" (rank-based {inside['rank_estimate_pct']:+.2f} %"
            + ("" if inside["rank_ci95_low_pct"] is None else
               f" [{inside['rank_ci95_low_pct']:+.2f}, {inside['rank_ci95_high_pct']:+.2f}]")
            + ")")
    sizes = ", ".join(f"{x['local']}^3 {x['overhead_pct']:+.2f} %" for x in inside["by_size"]
                      if x["overhead_pct"] is not None)
    return (f"{head}: the profiler's cost on the app {inside['overhead_pct']:+.2f} %{ci}{rank}"
            f" over {inside['pairs']} pairs of blocks" + (f" ({sizes})" if sizes else "")
            + "; not counting what a launch pays once")


def _undisturbed_sentence(calm: dict[str, Any]) -> str:
    """'Over the 26 undisturbed pairs: …': the cost without the pairs the guard marked."""
    per = calm.get("per_computation")
    return (f"Over the {calm['pairs']} undisturbed pairs: the profiler's cost on the app "
            f"{pct_with_ci(calm)}"
            + (f"; per unit of its computation {pct_with_ci(per)}" if per else ""))


def pct_with_ci(ratio_figures: dict[str, Any]) -> str:
    """'+0.40 % [+0.21 %, +0.69 %]': a _ratio_figures cost in percent with its interval."""
    return (fmt_pct(ratio_figures.get("overhead_pct"), 2, sign=True)
            + f" [{fmt_pct(pct_of_ratio(ratio_figures.get('ci95_low')), 2, sign=True)}, "
            f"{fmt_pct(pct_of_ratio(ratio_figures.get('ci95_high')), 2, sign=True)}]")


def _once_sentence(once: dict[str, Any]) -> str:
    return (f"Once per launch the profiler took {over_launches_words(once)}, outside the "
            "modes' run times")


def _ratio_figures(ratios: list[float]) -> dict[str, Any]:
    geo, lo, hi = ratio_ci(ratios)
    return {"pairs": len(ratios), "ratios": ratios, "geomean": geo, "ci95_low": lo,
            "ci95_high": hi, "overhead_pct": None if geo is None else 100.0 * (geo - 1.0)}


def _computation(modes: list[dict[str, Any]]) -> float | None:
    """A launch's computation: its modes' run time less their MPI time (the mean over the
    ranks, which the profiler's calls are in); None where a mode lacks it."""
    if any(m.get("mpi_time_s_mean") is None for m in modes):
        return None
    return sum(float(m["run_time_s"]) - float(m["mpi_time_s_mean"]) for m in modes)


def _per_computation(pairs: dict[int, dict[bool, list[tuple[float, float | None]]]],
                     disturbed_reps: set[int]) -> dict[str, Any] | None:
    """The with/without ratio of run time per unit of computation, (run/computation with)
    / (run/computation without), per repetition. A launch's speed (how fast this machine
    runs that launch's computation and copies: 1.26-1.40 ms per iteration from one quiet
    launch of mo_halo to the next here) multiplies its computation and its run time
    alike and cancels; what the profiler adds to the MPI calls does not. It assumes the
    profiler leaves the computation's speed alone (its code runs only inside MPI calls;
    the benchmark of the profiler's cost measures what it does to a compute-bound
    launch). None where a launch lacks its MPI time per rank (recorded before it was
    kept)."""
    ratios = []
    for p in pairs.values():
        w, wo = p[True], p[False]
        if any(c is None or c <= 0 for _, c in (*w, *wo)):
            return None
        ratios.append((sum(t for t, _ in w) / sum(c or 0.0 for _, c in w))
                      / (sum(t for t, _ in wo) / sum(c or 0.0 for _, c in wo)))
    return {**_ratio_figures(ratios),
            "disturbed_pairs": sum(1 for rep in pairs if rep in disturbed_reps)}


def analyze_study(result: dict[str, Any]) -> dict[str, Any]:
    launches = result.get("launches") or []
    baseline = result.get("baseline")
    modes: list[str] = []
    for x in launches:
        modes += [m["mode"] for m in x["modes"] if m["mode"] not in modes]
    sizes_out = []
    conclusions = []
    for size in result.get("sizes") or []:
        cells = [_cell(launches, size["local"], m) for m in modes]
        base = next((c for c in cells if c["mode"] == baseline), None)
        comparisons = [] if base is None else [_compare(c, base) for c in cells
                                              if c["mode"] != baseline]
        for cmp in comparisons:
            cell = next(c for c in cells if c["mode"] == cmp["mode"])
            conclusions.append(_sentence(size, cmp, cell, base))
        checks = [] if base is None else advice_checks(cells, base, comparisons)
        conclusions += [_advice_sentence(size, baseline or "?", c) for c in checks]
        sizes_out.append({**size, "cells": cells, "comparisons": comparisons,
                          "advice": checks})
    overhead = _overhead(launches, len(result.get("sizes") or []))
    # a run from before the cost launches, or stopped before the first, has none
    inside = (_inside_launches(result["cost_launches"]) if result.get("cost_launches")
              else None)
    if inside is not None:
        overhead["inside_launches"] = inside
        conclusions.append(_inside_sentence(inside))
    once = overhead.get("once_per_launch")
    if once:
        conclusions.append(_once_sentence(once))
    if overhead.get("undisturbed"):
        conclusions.append(_undisturbed_sentence(overhead["undisturbed"]))
    agree = [c["verdict"] for s in sizes_out for c in s["comparisons"]]
    right = sum(v == "within the bounds" for v in agree)
    judged = sum(v != "no data" for v in agree)
    best = _best(sizes_out)
    cost = figure("app_profiler_overhead_pct", "profiler's cost on the app (run time)",
                  overhead["overhead_pct"], "%", "cost",
                  ci=(pct_of_ratio(overhead["ci95_low"]), pct_of_ratio(overhead["ci95_high"])),
                  pairs=overhead["pairs"], disturbed=overhead["disturbed_pairs"])
    per = overhead.get("per_computation")
    per_cost = None if per is None else figure(
        PER_COMPUTATION, "profiler's cost on the app per unit of its computation",
        per["overhead_pct"], "%", "cost",
        ci=(pct_of_ratio(per["ci95_low"]), pct_of_ratio(per["ci95_high"])),
        pairs=per["pairs"], disturbed=per["disturbed_pairs"])
    inside_cost = None if inside is None else pair_cost_figure(
        INSIDE_LAUNCHES, "profiler's cost on the app inside launches (blocks paused and "
        "running)", inside)
    finding = _finding(result.get("app"), sizes_out, best, cost, per_cost, right, judged,
                       inside_cost)
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": result.get("benchmark"),
        "app": result.get("app"),
        "baseline": baseline,
        "modes": modes,
        "sizes": sizes_out,
        "profiler_overhead": overhead,
        "prediction": {"agreed": right, "judged": judged},
        "conclusions": conclusions,
        "finding": finding,
        "figures": [
            figure("best_mpi_saving_pct", "largest MPI-time cut against the baseline",
                   None if best is None else -best["mpi_time_change_pct"], "%", "overlap"),
            cost,
            figure("app_profiler_overhead_ci_low_pct", "profiler's cost, 95 % CI low",
                   pct_of_ratio(overhead["ci95_low"]), "%", "cost"),
            figure("app_profiler_overhead_ci_high_pct", "profiler's cost, 95 % CI high",
                   pct_of_ratio(overhead["ci95_high"]), "%", "cost"),
            *([per_cost] if per_cost is not None else []),
            *([inside_cost] if inside_cost is not None else []),
        ],
    }


# the figure of the profiler's cost per unit of computation (_per_computation)
PER_COMPUTATION = "app_profiler_overhead_per_computation_pct"
# the figure of the profiler's cost inside launches (_inside_launches), a finding where its
# interval lies within block_pairs.RESOLUTION_PCT of it
INSIDE_LAUNCHES = "app_profiler_overhead_inside_launches_pct"


def pct_of_ratio(ratio: float | None) -> float | None:
    return None if ratio is None else 100.0 * (ratio - 1.0)


def _best(sizes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The comparison with the largest MPI-time cut, at the largest size that has one."""
    for size in reversed(sizes):
        cmps = [c for c in size["comparisons"] if c["mpi_time_change_pct"] is not None]
        if cmps:
            best = min(cmps, key=lambda c: c["mpi_time_change_pct"])
            return {**best, "local": size["local"]}
    return None


def _finding(app: Any, sizes: list[dict[str, Any]], best: dict[str, Any] | None,
             cost: dict[str, Any], per_cost: dict[str, Any] | None, right: int,
             judged: int, inside: dict[str, Any] | None = None) -> str:
    if best is None:
        text = f"{app}: no mode could be compared with the baseline"
    else:
        cut = best["mpi_time_change_pct"]
        run = best["run_time_change_pct"]
        text = (f"{app} at {best['local']}^3 per rank: {best['mode']} "
                + (f"cuts MPI time {-cut:.0f} %" if cut < 0
                   else f"does not cut MPI time ({cut:+.0f} %)")
                + f" against {best['against']} (run time "
                + fmt_pct(run, 1, sign=True, missing=NA) + f"); the measured MPI-time "
                f"change lay within the profiler's bounds in {right} of {judged} mode "
                "comparisons")
    # the figure as the summary card says it: a number only where its launches resolve it
    said = cost_words(cost, per_cost, inside)
    if said:
        text += f"; profiler cost on the app {said}"
    return text


def cost_words(cost: dict[str, Any] | None, per_cost: dict[str, Any] | None,
               inside: dict[str, Any] | None = None) -> str | None:
    """The profiler's cost as the finding and the card say it: inside launches where the
    study has cost launches, by launches, and per unit of computation where the launches
    have it; each a number only where resolved."""
    said = resolved_text(cost, 1.0, " %", "+.2f")
    within = resolved_text(inside, 1.0, " %", "+.2f")
    if within:
        said = f"inside launches {within}" + (f"; by launches {said}" if said else "")
    per = resolved_text(per_cost, 1.0, " %", "+.2f")
    if per and per_cost is not None:
        # what a user asks of a cost is how large it can be: the interval's upper end,
        # where enough undisturbed pairs give one
        ci, pairs = per_cost.get("ci95") or [None, None], per_cost.get("pairs") or 0
        if (ci[1] is not None and pairs >= MIN_PAIRS
                and 2 * (per_cost.get("disturbed") or 0) <= pairs):
            per += f", at most {ci[1]:+.2f} %"
        said = f"{said}; per unit of its computation {per}" if said else per
    return said
