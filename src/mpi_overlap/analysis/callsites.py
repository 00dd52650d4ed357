"""Call-site rankings of a profile run: the transfers of every (posting site → completing
site) pair, summed over ranks, and the same by posting site and by completing site
(docs/profiler.md, "Call sites").

A site is named by the label profiling/callsites.py gave it ("halo.c:42 (exchange)"), so
ranks whose address-space layouts differ (ASLR) meet at the same line. Site 0 is
"unknown": the posting site of an end-only transfer, the completing site of a
begin-only one. Pure: rank documents in, JSON-ready lists out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .profile_values import Acc, acc_of, cell_of, num, ranking

UNKNOWN = "unknown"


def _sites(prof: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {int(num(s.get("id"))): s for s in prof.get("sites") or []}


def _name(sites: dict[int, dict[str, Any]], sid: int) -> tuple[str, str | None]:
    """(label, MPI function) of a site id; unknown for id 0 and ids the rank did not list."""
    s = sites.get(sid)
    if sid == 0 or s is None:
        return UNKNOWN, None
    return str(s.get("label") or s.get("addr") or UNKNOWN), s.get("fn")


class SiteRankings:
    """rankings["pairs"], ["post_sites"], ["end_sites"], summed one rank document at a time
    (add), so the documents need not be held together; ordered by non-overlapped time."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[str, str], Acc] = {}
        self.posts: dict[str, Acc] = {}
        self.ends: dict[str, Acc] = {}
        self.fn_of: dict[str, str | None] = {}
        self.calls: dict[str, list[float]] = {}

    def add(self, doc: dict[str, Any]) -> None:
        rank = int(doc.get("rank", -1))
        prof = doc.get("profile") or {}
        sites = _sites(prof)
        for sid, s in sites.items():
            label, fn = _name(sites, sid)
            self.fn_of.setdefault(label, fn)
            c = self.calls.setdefault(label, [0, 0.0])
            c[0] += int(num(s.get("calls")))
            c[1] += num(s.get("call_s"))
        for e in prof.get("pairs") or []:
            post, _ = _name(sites, int(num(e.get("post"))))
            end, _ = _name(sites, int(num(e.get("end"))))
            cell = cell_of(e)  # once for the three rankings it goes into
            acc_of(self.pairs, (post, end)).add(rank, e, ("polled",), cell)
            acc_of(self.posts, post).add(rank, e, cell=cell)
            acc_of(self.ends, end).add(rank, e, cell=cell)

    def result(self) -> dict[str, list[dict[str, Any]]]:
        fn_of, calls = self.fn_of, self.calls

        def site(label: str) -> dict[str, Any]:
            c = calls.get(label, [0, 0.0])
            return {"site": label, "fn": fn_of.get(label), "calls": int(c[0]), "call_s": c[1]}

        return {
            "pairs": ranking(
                self.pairs,
                lambda k, a: {"post": k[0], "post_fn": fn_of.get(k[0]),
                              "end": k[1], "end_fn": fn_of.get(k[1]),
                              "polled": int(a.extra.get("polled", 0))},
                lambda k: k,
            ),
            "post_sites": ranking(self.posts, lambda k, a: site(k), lambda k: k),
            "end_sites": ranking(self.ends, lambda k, a: site(k), lambda k: k),
        }


def site_rankings(docs: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """rankings["pairs"], ["post_sites"], ["end_sites"] of these rank documents."""
    acc = SiteRankings()
    for doc in docs:
        acc.add(doc)
    return acc.result()
