"""What the advice rules read of one (posting site → completing site) pair of
profile/analysis/callsites.py, shared by the profile's own rules (advice.py) and the rules a
benchmark package declares (evidence.py): the MPI call families, the pair's evidence and
the words that say where it is. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .profile_values import num

WAITS = frozenset({"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome"})
TESTS = frozenset({"MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"})


@dataclass(frozen=True)
class Pair:
    """One pair as the rules read it: its transfer time and bounds, its sites, the
    evidence an advice item quotes and `where` ("posted by ... and completed by ...")."""

    raw: dict[str, Any]
    post: str
    end: str
    post_fn: str
    end_fn: str
    xfer: float
    lo: float
    hi: float
    sites: dict[str, str]
    evidence: dict[str, Any]
    where: str

    @property
    def one_call(self) -> bool:
        """Posted and completed by the same call at the same site (a blocking call)."""
        return self.post == self.end and self.post_fn == self.end_fn

    @property
    def polled(self) -> bool:
        """Most of its transfers saw a Test-family call between post and completion."""
        return 2 * int(num(self.raw.get("polled"))) >= int(num(self.raw["transfers"]))


def known_pairs(pairs: list[dict[str, Any]]) -> list[Pair]:
    """The pairs whose both sites are known, in their order."""
    out = []
    for p in pairs:
        post, end = p["post"], p["end"]
        post_fn, end_fn = p.get("post_fn") or "?", p.get("end_fn") or "?"
        if "unknown" in (post, end):
            continue
        xfer, lo, hi = num(p["xfer_s"]), num(p["min_s"]), num(p["max_s"])
        evidence = {"transfers": p["transfers"], "xfer_s": xfer, "min_s": lo, "max_s": hi,
                    "nonoverlap_s": max(0.0, xfer - hi), "post_fn": post_fn, "end_fn": end_fn,
                    "polled": int(num(p.get("polled")))}
        out.append(Pair(raw=p, post=post, end=end, post_fn=post_fn, end_fn=end_fn, xfer=xfer,
                        lo=lo, hi=hi, sites={"post": post, "end": end}, evidence=evidence,
                        where=f"posted by {post_fn} at {post} and completed by {end_fn} at "
                              f"{end}"))
    return out
