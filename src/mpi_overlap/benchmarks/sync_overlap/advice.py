"""The advice rule this benchmark feeds (spec.Evidence, rule "eager-limit"; run by
profile/analysis/advice.py with the others; docs/profiler.md, "Advice"): size bins just
above this MPI's eager limit (from 1 to EAGER_REACH times the smallest send that needed the
receiver, as the toolchain's own run of this benchmark measured it, evidence.py) that lose
non-overlapped time: their sends wait for the receiver (rendezvous). Raising the MPI
setting that governs the limit (the one the run names) above the bin's upper edge sends
them eagerly; at most the bin's non-overlapped time can be hidden. Only with such a run
under the profile's --out directory. Pure."""

from __future__ import annotations

from typing import Any

from ...core.formatting import fmt_time
from ...profile.analysis.profile_values import num

EAGER_REACH = 4  # bins starting below this many times the eager limit are "just above"


def advise(a: dict[str, Any], docs: list[dict[str, Any]], threshold: float,
           limit: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The rule's items, one per size bin it holds for, in the bins' order (named by the
    spec's Evidence.rule where the profile's advice runs them)."""
    if not limit or not limit.get("first_no_bytes"):
        return []
    first_no = int(limit["first_no_bytes"])
    out = []
    for b in a["rankings"].get("bins") or []:
        lo, hi = int(num(b.get("lo"))), b.get("hi")
        if hi is None or hi <= first_no or lo >= EAGER_REACH * first_no:
            continue  # below the limit (eager already), or far above it
        bound = num(b.get("nonoverlap_s"))
        if bound < threshold:
            continue
        setting = limit.get("setting")
        how = (f"raise {setting} (now {limit['setting_bytes']} B) above {hi} B"
               if setting else "raise the MPI's eager limit for this transport above "
               f"{hi} B")
        out.append({"sites": {"bin": b.get("label")},
                    "evidence": {"bin_lo": lo, "bin_hi": hi, "nonoverlap_s": bound,
                                 "transfers": b.get("transfers"),
                                 "last_eager_bytes": limit["last_yes_bytes"],
                                 "first_rendezvous_bytes": first_no, "run": limit["run"]},
                    "bound_s": bound, "text": (
                        f"Messages of {b.get('label')} lose {fmt_time(bound)} not overlapped "
                        f"and lie just above this MPI's eager limit: the largest send that "
                        f"completed without its receiver was {limit['last_yes_bytes']} B, the "
                        f"smallest that waited for it {first_no} B (bench sync-overlap, "
                        f"{limit['run']}). To send them eagerly, {how}, or send them in "
                        f"pieces below {limit['last_yes_bytes']} B; at most "
                        f"{fmt_time(bound)} can be hidden.")})
    return out
