"""Headline figures: the few numbers of an analysis that other views compare.

Every analysis may list them under "figures"; the settings matrix (report/env_matrix.py)
puts them side by side per environment setting, kind "overlap" (what a setting gains)
next to kind "cost" (what it costs) and "info" (facts such as a detected limit).
"""

from __future__ import annotations

from typing import Any

from ..core.formatting import opt_text
from ..core.values import num

KINDS = ("overlap", "cost", "info")


def figure(name: str, label: str, value: float | None, unit: str, kind: str, *,
           ci: tuple[float | None, float | None] | None = None, pairs: int | None = None,
           disturbed: int | None = None, resolution: float | None = None,
           paired: str | None = None) -> dict[str, Any]:
    """One figure; a value that is not a finite number becomes None (JSON null). A figure
    estimated from repeated launches also carries its 95 % interval (`ci95`), how many
    launch pairs it rests on (`pairs`) and how many of those were disturbed: the summary
    card prints it as a finding only where those resolve it (report/summary_card.py). A
    figure with a `resolution` is resolved when its interval lies within that much of it
    on either side (issue 40's ±0.5 % for the profiler's cost), instead of by its distance
    from no effect. `paired` "blocks": its pairs are blocks of iterations inside launches
    (analysis/block_pairs.py), not launches."""
    assert kind in KINDS, kind
    assert paired in (None, "blocks"), paired
    out: dict[str, Any] = {"name": name, "label": label, "value": num(value),
                           "unit": unit, "kind": kind}
    if ci is not None:
        out["ci95"] = [num(ci[0]), num(ci[1])]
    if pairs is not None:
        out["pairs"] = int(pairs)
    if disturbed is not None:
        out["disturbed"] = int(disturbed)
    if resolution is not None:
        out["resolution"] = float(resolution)
    if paired is not None:
        out["paired"] = paired
    return out


# A figure from repeated launches is a finding only when it rests on at least MIN_PAIRS
# pairs, at most half of them disturbed, and its 95 % interval is narrower than the
# figure's distance from "no effect" (a ratio of 1, a change of 0 %). That asks more than
# a known sign (an interval of +0.2 to +2.2 % around +1.2 excludes 0): it asks the size to
# within half of itself (both ends within half the figure of it), and the card says why
# instead of printing a number it does not know that well. A figure that states its
# `resolution` asks instead that both ends lie within it: a cost of +0.3 % known to
# ±0.25 % answers "is it under 0.9 %?", though not its size to within half of itself.
MIN_PAIRS = 3
NO_EFFECT = {"ratio": 1.0, "%": 0.0}


def _shown(fig: dict[str, Any], v: float, scale: float, spec: str) -> str:
    """A value of the figure as a change from no effect (a ratio 1.03 as +3.0 with
    scale 100)."""
    return opt_text((v - NO_EFFECT.get(str(fig.get("unit")), 0.0)) * scale, spec)


def _interval(fig: dict[str, Any]) -> tuple[float, float] | None:
    ci = fig.get("ci95")
    return (ci[0], ci[1]) if isinstance(ci, list) and None not in ci else None


def unresolved(fig: dict[str, Any], scale: float = 1.0, unit: str = "",
               spec: str = "+.1f") -> str | None:
    """Why a figure from repeated launches is not a finding ("not resolved (…)"), or None
    when it is one. `scale`, `unit` and `spec` print it as the cell would print the value
    (a ratio 1.03 as +3.0 %)."""
    value, pairs, ci = fig.get("value"), fig.get("pairs"), _interval(fig)
    if value is None:
        return None
    disturbed = fig.get("disturbed") or 0
    null = NO_EFFECT.get(str(fig.get("unit")), 0.0)
    kind = "block pair" if fig.get("paired") == "blocks" else "launch pair"
    why = None
    if isinstance(pairs, int) and pairs < MIN_PAIRS:
        why = f"{pairs} {kind}{'s' if pairs != 1 else ''}, fewer than {MIN_PAIRS}"
    elif isinstance(pairs, int) and disturbed * 2 > pairs:
        why = f"{disturbed} of {pairs} {kind}s disturbed"
    elif ci is not None and isinstance(fig.get("resolution"), (int, float)):
        if max(value - ci[0], ci[1] - value) > fig["resolution"]:
            # two decimals, so that a margin against a ±0.5 resolution shows
            why = (f"95 % CI {_shown(fig, ci[0], scale, '+.2f')} to "
                   f"{_shown(fig, ci[1], scale, '+.2f')}{unit} reaches further than "
                   f"±{fig['resolution'] * scale:g}{unit} from the "
                   f"{_shown(fig, value, scale, spec)}{unit} measured")
    elif ci is not None and ci[1] - ci[0] > abs(value - null):
        why = (f"95 % CI {_shown(fig, ci[0], scale, '+.1f')} to "
               f"{_shown(fig, ci[1], scale, '+.1f')}{unit} is wider than the "
               f"{_shown(fig, value, scale, spec)}{unit} measured")
    elif ci is None and "ci95" in fig and isinstance(pairs, int):
        why = f"no interval from {pairs} {kind}s"
    return f"not resolved ({why})" if why else None


def resolved_text(fig: dict[str, Any] | None, scale: float, unit: str,
                  spec: str = "+.1f") -> str | None:
    """A figure as the card prints it: its value when resolved (marked when some of its
    launches were disturbed), why not otherwise; None when there is no figure."""
    if fig is None or fig.get("value") is None:
        return None
    why = unresolved(fig, scale, unit, spec)
    if why:
        return why
    notes = []
    ci = _interval(fig)
    if ci is not None:
        notes.append(f"95 % CI {_shown(fig, ci[0], scale, '+.1f')} to "
                     f"{_shown(fig, ci[1], scale, '+.1f')}{unit}")
    disturbed = fig.get("disturbed") or 0
    if disturbed:
        notes.append(f"{disturbed} of {fig.get('pairs')} launch pairs disturbed")
    return (_shown(fig, fig["value"], scale, spec) + unit
            + (f" ({'; '.join(notes)})" if notes else ""))
