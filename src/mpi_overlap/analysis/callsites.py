"""Call-site rankings of a profile run: the transfers of every (posting site → completing
site) pair, summed over ranks, and the same by posting site and by completing site
(docs/profiler.md, "Call sites").

A site is named by the label profiling/callsites.py gave it ("halo.c:42 (exchange)"), so
ranks whose address-space layouts differ (ASLR) meet at the same line. Site 0 is
"unknown": the posting site of an end-only transfer, the completing site of a
begin-only one. Pure: rank documents in, JSON-ready lists out.
"""

from __future__ import annotations

from typing import Any

from .profile_values import Acc, num, ranking

UNKNOWN = "unknown"


def _sites(prof: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {int(num(s.get("id"))): s for s in prof.get("sites") or []}


def _name(sites: dict[int, dict[str, Any]], sid: int) -> tuple[str, str | None]:
    """(label, MPI function) of a site id; unknown for id 0 and ids the rank did not list."""
    s = sites.get(sid)
    if sid == 0 or s is None:
        return UNKNOWN, None
    return str(s.get("label") or s.get("addr") or UNKNOWN), s.get("fn")


def site_rankings(docs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """rankings["pairs"], ["post_sites"], ["end_sites"], ordered by non-overlapped time."""
    pairs: dict[tuple[str, str], Acc] = {}
    posts: dict[str, Acc] = {}
    ends: dict[str, Acc] = {}
    fn_of: dict[str, str | None] = {}
    calls: dict[str, list[float]] = {}
    for doc in docs:
        rank = int(doc.get("rank", -1))
        prof = doc.get("profile") or {}
        sites = _sites(prof)
        for sid, s in sites.items():
            label, fn = _name(sites, sid)
            fn_of.setdefault(label, fn)
            c = calls.setdefault(label, [0, 0.0])
            c[0] += int(num(s.get("calls")))
            c[1] += num(s.get("call_s"))
        for e in prof.get("pairs") or []:
            post, _ = _name(sites, int(num(e.get("post"))))
            end, _ = _name(sites, int(num(e.get("end"))))
            pairs.setdefault((post, end), Acc()).add(rank, e, ("polled",))
            posts.setdefault(post, Acc()).add(rank, e)
            ends.setdefault(end, Acc()).add(rank, e)

    def site(label: str) -> dict[str, Any]:
        c = calls.get(label, [0, 0.0])
        return {"site": label, "fn": fn_of.get(label), "calls": int(c[0]), "call_s": c[1]}

    return {
        "pairs": ranking(
            pairs,
            lambda k, a: {"post": k[0], "post_fn": fn_of.get(k[0]),
                          "end": k[1], "end_fn": fn_of.get(k[1]),
                          "polled": int(a.extra.get("polled", 0))},
            lambda k: k,
        ),
        "post_sites": ranking(posts, lambda k, a: site(k), lambda k: k),
        "end_sites": ranking(ends, lambda k, a: site(k), lambda k: k),
    }
