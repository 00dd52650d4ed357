"""Call-site rankings of a profile run: the transfers of every (posting site → completing
site) pair, summed over ranks, and the same by posting site and by completing site
(docs/profiler.md, "Call sites"), from the job's statistics.

A site is named by the label profile/documents/callsites.py gave it ("halo.c:42 (exchange)"), so
ranks whose address-space layouts differ (ASLR) meet at the same line. Site 0 is
"unknown": the posting site of an end-only transfer, the completing site of a
begin-only one. Pure: the job's statistics in, JSON-ready lists out.
"""

from __future__ import annotations

from typing import Any

from ..documents.job_sites import PAIR_SEP, split
from ..documents.job_stats import merge_cell
from .profile_values import cell_ranking

UNKNOWN = "unknown"

Cell = dict[str, Any]


def site_rankings(stats: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """rankings["pairs"], ["post_sites"], ["end_sites"] of the job's statistics
    (profile/documents/job_stats.py: the library's reduction, or the same over the documents),
    their places named by the labels collect resolved (site_labels). Cells whose places
    share a label (ranks whose sites have other addresses, or one line holding several
    calls) are merged in name order; a rank is then counted once per place."""
    labels: dict[str, str] = stats.get("site_labels") or {}

    def named(name: str) -> tuple[str, str | None]:
        where, fn = split(name)
        return (labels.get(where, where), fn or None) if where else (UNKNOWN, None)

    def by_label(table: dict[str, Cell], key_of: Any) -> dict[Any, Cell]:
        out: dict[Any, Cell] = {}
        for name in sorted(table):
            key = key_of(name)
            out[key] = table[name] if key not in out else merge_cell(out[key], table[name])
        return out

    fn_of: dict[str, str | None] = {}
    for name in sorted(stats["sites"]):
        label, fn = named(name)
        fn_of.setdefault(label, fn)
    calls = by_label(stats["sites"], lambda n: named(n)[0])

    def pair_key(name: str) -> tuple[str, str]:
        post, _, end = name.partition(PAIR_SEP)
        return named(post)[0], named(end)[0]

    def site(label: str) -> dict[str, Any]:
        c = calls.get(label)
        return {"site": label, "fn": fn_of.get(label), "calls": int(c["calls"]) if c else 0,
                "call_s": c["call_s"] if c else 0.0}

    return {
        "pairs": cell_ranking(
            by_label(stats["pairs"], pair_key),
            lambda k, c: {"post": k[0], "post_fn": fn_of.get(k[0]), "end": k[1],
                          "end_fn": fn_of.get(k[1]), "polled": int(c["calls"])},
            lambda k: k,
        ),
        "post_sites": cell_ranking(by_label(stats["post_sites"], lambda n: named(n)[0]),
                                   lambda k, c: site(k), lambda k: k),
        "end_sites": cell_ranking(by_label(stats["end_sites"], lambda n: named(n)[0]),
                                  lambda k, c: site(k), lambda k: k),
    }
