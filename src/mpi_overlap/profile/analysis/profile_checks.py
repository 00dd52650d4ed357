"""Checks on the bounds of a profile run: every rank's `checks` object merged across ranks.

Both overlap bounds hold only if each transfer, lasting the table's `xfer_time`, fits
into the interval its events give it (docs/method.md, "Checks on the bounds"). The
profiler judges every transfer online (native/profiler/mop_checks.c): an in-call
transfer against the call that holds it, an across-calls transfer against XFER_BEGIN →
XFER_END; and per rank, call by call, the longest in-call transfer against the call's
time, whose excess summed with the across-calls excess is the transfer time *beyond
what the wall clock allows*. A correct table never gets a transfer flagged; a flagged
one means the table overstates it or its data moved outside its interval (an eager
message that arrived while the receiver computed), and its bounds are not trustworthy.

Here: the sums over ranks, per rank, per MPI function and per size bin, the share of
the job's transfer time that flagged transfers carry, and the headline sentence when
that share exceeds FLAG_SHARE_PCT. Pure: no I/O. Profiles written before the checks
existed have no `checks` object: they are listed, and the checks cover the others.

profile/analysis/profile.py adds each rank document with data to a BoundChecks as it goes through
them, and calls `add_checks` at the end of its analysis.
"""

from __future__ import annotations

from typing import Any

from ...core.formatting import fmt_pct, fmt_time
from .profile_values import bin_label, num, pct

CHECKS = ("in-call", "across-calls")
# Above this share of the job's transfer time carried by flagged transfers, the headline
# says that the bounds of those transfers are not trustworthy.
FLAG_SHARE_PCT = 5.0
# The fields of a rank's in_call and across_calls objects besides `flagged`.
PART_FIELDS = {
    "in_call": ("transfers", "xfer_s", "calls", "call_s", "longest_s", "calls_beyond",
                "beyond_s", "unchecked"),
    "across_calls": ("transfers", "xfer_s"),
}
COUNTS = ("transfers", "calls", "calls_beyond", "unchecked", "flagged_transfers")


def _part(checks: dict[str, Any], name: str) -> dict[str, float]:
    """One rank's in_call or across_calls object, its `flagged` object flattened."""
    part = checks.get(name) or {}
    flagged = part.get("flagged") or {}
    out = {k: num(part.get(k)) for k in PART_FIELDS[name]}
    out["flagged_transfers"] = num(flagged.get("transfers"))
    out["flagged_xfer_s"] = num(flagged.get("xfer_s"))
    out["excess_s"] = num(flagged.get("excess_s"))
    return out


def _summed(part: dict[str, Any], name: str) -> dict[str, Any]:
    """The job's in_call or across_calls part, from the job's statistics (summed in the
    reduction's order: profile/documents/job_stats.py)."""
    keys = (*PART_FIELDS[name], "flagged_transfers", "flagged_xfer_s", "excess_s")
    return {k: (int if k in COUNTS else float)(part[k]) for k in keys}


def _check_order(check: str) -> int:
    return CHECKS.index(check) if check in CHECKS else len(CHECKS)


def _breakdown(cells: dict[tuple[Any, str], dict[str, Any]], totals: dict[Any, float]
               ) -> dict[tuple[Any, str], dict[str, Any]]:
    """Per (entry, check) of the job's statistics: flagged transfers, their time and
    excess, the ranks that flagged any (the lowest 16 and how many), and the share of the
    entry's transfer time they carry."""
    return {key: {"transfers": int(c["transfers"]), "xfer_s": c["xfer_s"],
                  "excess_s": c["excess_s"], "ranks": list(c["who"][1]),
                  "ranks_count": c["who"][0], "pct": pct(c["xfer_s"], totals.get(key[0], 0.0))}
            for key, c in cells.items()}


def _rank_entry(doc: dict[str, Any], rank: dict[str, Any]) -> dict[str, Any]:
    checks = doc["profile"]["checks"]
    inc, acr = _part(checks, "in_call"), _part(checks, "across_calls")
    flagged_xfer = inc["flagged_xfer_s"] + acr["flagged_xfer_s"]
    return {
        "rank": int(rank["rank"]),
        "xfer_s": rank["xfer_s"],
        "call_s": rank["call_s"],
        "in_call_xfer_s": inc["xfer_s"],
        "in_call_calls": int(inc["calls"]),
        "in_call_calls_beyond": int(inc["calls_beyond"]),
        "in_call_call_s": inc["call_s"],
        "in_call_longest_s": inc["longest_s"],
        "flagged_transfers": int(inc["flagged_transfers"] + acr["flagged_transfers"]),
        "flagged_xfer_s": flagged_xfer,
        "flagged_pct": pct(flagged_xfer, rank["xfer_s"]),
        "beyond_s": num(checks.get("beyond_s")),
    }


class BoundChecks:
    """The per-rank entries of the analysis's `checks` block, one rank document with data
    at a time (add, in rank order), so the documents need not be held together; the job's
    sums and breakdowns come from the job's statistics (result)."""

    def __init__(self) -> None:
        self.per_rank: list[dict[str, Any]] = []
        self.without: list[int] = []

    def add(self, doc: dict[str, Any], rank: dict[str, Any]) -> None:
        """One rank's document and its per-rank entry (xfer_s, call_s)."""
        checks = (doc.get("profile") or {}).get("checks")
        if not isinstance(checks, dict):  # written before the checks existed
            self.without.append(int(rank["rank"]))
            return
        self.per_rank.append(_rank_entry(doc, rank))

    def result(self, job: dict[str, Any], rankings: dict[str, Any],
               reduced: dict[str, Any]) -> dict[str, Any]:
        """The block, from the job's figures (xfer_s), the rankings (transfer time per
        function and bin: the breakdowns' shares are of those) and the checks of the
        job's statistics (profile/documents/job_stats.py)."""
        return _checks_block(self, job, rankings, reduced)


def _checks_block(acc: BoundChecks, job: dict[str, Any], rankings: dict[str, Any],
                  reduced: dict[str, Any]) -> dict[str, Any]:
    inc = _summed(reduced["in_call"], "in_call")
    acr = _summed(reduced["across_calls"], "across_calls")
    per_rank = acc.per_rank
    job_xfer = job["xfer_s"]
    flagged_xfer = inc["flagged_xfer_s"] + acr["flagged_xfer_s"]
    flagged_pct = pct(flagged_xfer, job_xfer)
    fn_xfer = {e["fn"]: e["xfer_s"] for e in rankings["functions"]}
    bin_xfer = {(e["lo"], e["hi"]): e["xfer_s"] for e in rankings["bins"]}
    fns = _breakdown(reduced["by_function"], fn_xfer)
    bins = _breakdown(reduced["by_bin"], bin_xfer)
    return {
        "available": bool(per_rank),
        "ranks_without": acc.without,
        "threshold_pct": FLAG_SHARE_PCT,
        "xfer_s": job_xfer,
        "flagged_transfers": inc["flagged_transfers"] + acr["flagged_transfers"],
        "flagged_xfer_s": flagged_xfer,
        "flagged_pct": flagged_pct,
        "flagged": flagged_pct is not None and flagged_pct > FLAG_SHARE_PCT,
        "beyond_s": float(reduced["beyond_s"]),
        "in_call": inc,
        "across_calls": acr,
        "ranks": per_rank,
        "by_function": [
            {"fn": fn, "check": check, **cell}
            for (fn, check), cell in sorted(
                fns.items(), key=lambda kv: (-kv[1]["xfer_s"], kv[0][0], _check_order(kv[0][1]))
            )
        ],
        "by_bin": [
            {"lo": lo, "hi": hi, "label": bin_label(lo, hi), "check": check, **cell}
            for ((lo, hi), check), cell in sorted(
                bins.items(), key=lambda kv: (kv[0][0][0], _check_order(kv[0][1]))
            )
        ],
    }


def check_line(checks: dict[str, Any] | None) -> str | None:
    """The checks' verdict in one sentence, for the answer a report opens with: the
    finding when they put the bounds in doubt (check_finding), otherwise what they found
    and why it does not; None where no rank's checks were recorded."""
    if not checks or not checks.get("available"):
        return None
    if checks.get("flagged"):
        return check_finding(checks)
    judged = (checks["in_call"].get("transfers", 0) or 0) + (
        checks["across_calls"].get("transfers", 0) or 0)
    if not checks.get("flagged_transfers"):
        return (f"Checks on the bounds: each of the {judged:,} transfers judged fits the "
                "interval its events give it, so the bounds stand as measured.")
    return (
        f"Checks on the bounds: {checks['flagged_transfers']:,} of {judged:,} transfers "
        f"({fmt_pct(checks['flagged_pct'])} of the transfer time) do not fit the interval "
        f"their events give them, below the {fmt_pct(checks['threshold_pct'])} that would "
        "put the bounds in doubt (the checks table lists them)."
    )


def check_finding(checks: dict[str, Any]) -> str | None:
    """The headline sentence when flagged transfers carry more than FLAG_SHARE_PCT of the
    transfer time; None otherwise."""
    if not checks.get("flagged"):
        return None
    inc, acr = checks["in_call"], checks["across_calls"]
    parts = []
    if inc["flagged_transfers"]:
        parts.append(f"{inc['flagged_transfers']:,} in-call transfers longer than their call")
    if acr["flagged_transfers"]:
        parts.append(
            f"{acr['flagged_transfers']:,} across-call transfers longer than the time from "
            "their post to their completion"
        )
    worst = max(checks["ranks"], key=lambda r: (r["beyond_s"], -r["rank"]), default=None)
    where = ""
    if worst is not None and worst["beyond_s"] > 0:
        held = ""
        if worst["in_call_calls_beyond"]:
            held = (
                f" ({worst['in_call_calls_beyond']:,} of its {worst['in_call_calls']:,} calls "
                "holding in-call transfers were shorter than their longest transfer)"
            )
        where = (
            f"; on rank {worst['rank']} the table puts {fmt_time(worst['beyond_s'])} of "
            f"transfer time beyond what the wall clock allows{held}"
        )
    return (
        f"Checks on the bounds: transfers carrying {fmt_pct(checks['flagged_pct'])} of the "
        f"transfer time ({checks['flagged_transfers']:,} transfers, "
        f"{fmt_time(checks['flagged_xfer_s'])}) do not fit the interval that held them: "
        + " and ".join(parts)
        + where
        + ". Either the transfer-time table overstates these transfers or their data moved "
        "outside the call (an eager message that arrived while the receiver computed, or "
        "that left after a send had returned): the lower and upper bounds of these "
        "transfers are not trustworthy. Recalibrate (mpi-overlap calibrate) on a quiet "
        "machine, or, if the table is right, read them as evidence of early arrival."
    )


def add_checks(doc: dict[str, Any], checks: BoundChecks, reduced: dict[str, Any]) -> None:
    """Adds the `checks` block to the analysis document `doc` from the per-rank entries
    `checks` holds and the job's statistics' checks (`reduced`), and its sentence to the
    findings, right after the first (the overlap figure it qualifies) when the checks
    failed for more than FLAG_SHARE_PCT."""
    doc["checks"] = checks.result(doc["job"], doc["rankings"], reduced)
    sentence = check_finding(doc["checks"])
    if sentence:
        doc["findings"].insert(min(1, len(doc["findings"])), sentence)
