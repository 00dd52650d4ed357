"""The first sentence of a profile's findings: what dominates the run (docs/profiler.md,
"Reading a profile"). In this order:

1. an idle rank: a rank that spent at least IDLE_SHARE of its time inside MPI calls while
   another rank computed most of its time (known from every rank's profile, traced or
   not); named with the call that held it;
2. waiting for late partners (traced runs): when the matched events show more waiting
   than non-overlapped transfer time and it is a sizeable part of the time in MPI; with
   the computation imbalance that causes it;
3. MPI time that transfers do not explain (untraced runs): the calls took far more than
   the table says the transfers need, so most of it is waiting or library overhead, which
   only a trace separates;
4. otherwise the non-overlapped transfer time (the overlap sentence).

Before all of these: transfers priced with a class of the table that was not measured
for them (inter-node transfers with intra-node times, `inter_as_intra`): every bound on
them rests on the wrong network, so it leads the findings (`table_caveat`) rather than
sitting among the counters at the end.

Also the wording of that overlap sentence: a range that is 0–0 % because every transfer
began and ended inside one blocking call says so, and claims no non-overlapped time (the
calls hid what happened in them); both ends of a range print with one precision, and a
range whose ends print alike is one figure; when the transfers are a negligible part of
the MPI time their absolute times come first. Pure.
"""

from __future__ import annotations

from typing import Any

from ...core.formatting import fmt_pct, fmt_time, pct_between
from .profile_values import pct, rank_list

IDLE_SHARE = 90.0  # % of a rank's time in MPI calls that makes it idle
BUSY_SHARE = 60.0  # ... while another rank spends less than this in MPI
NEGLIGIBLE = 0.01  # transfer time below this part of the MPI call time
WAIT_SIGNIFICANT = 0.10  # waiting above this part of the MPI call time


def _share(v: float | None) -> str:
    """fmt_pct, but a share just under 100 % is not printed as 100 %."""
    if v is not None and 99.95 <= v < 100.0:
        return "over 99.9 %"
    return f"{v:.1f} %" if v is not None and 99.0 < v < 100.0 else fmt_pct(v)


def top_call_entry(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The by_function entry with the most call time on one rank (ties: the last name)."""
    fns = (doc.get("profile") or {}).get("by_function") or []
    return max(fns, key=lambda f: (float(f.get("call_s") or 0.0), str(f.get("fn"))),
               default=None)


def _top_call(doc: dict[str, Any]) -> tuple[str, float] | None:
    """The function with the most call time on one rank, and that time."""
    best = top_call_entry(doc)
    if best is None or not best.get("call_s"):
        return None
    return str(best["fn"]), float(best["call_s"])


def idle_ranks(a: dict[str, Any], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ranks in MPI calls at least IDLE_SHARE % of their time while another computes."""
    ranks = [r for r in a["ranks"] if r["in_totals"] and r["mpi_share_pct"] is not None]
    busy = [r for r in ranks if r["mpi_share_pct"] < BUSY_SHARE]
    if not busy:
        return []
    by_rank = {int(d.get("rank", -1)): d for d in docs}
    out = []
    for r in ranks:
        if r["mpi_share_pct"] < IDLE_SHARE:
            continue
        top = _top_call(by_rank.get(r["rank"], {}))
        out.append({
            "rank": r["rank"], "mpi_share_pct": r["mpi_share_pct"], "call_s": r["call_s"],
            "comp_s": r["comp_s"], "top_fn": top[0] if top else None,
            "top_fn_share_pct": pct(top[1], r["call_s"]) if top else None,
        })
    return out


def all_in_call(a: dict[str, Any]) -> bool:
    """Every transfer began and ended inside one blocking call (case 1) and none was an
    eager send whose tail overlapped what followed (docs/method.md, "The transfer
    model's parts"): 0–0 % by construction, not a measured absence of overlap."""
    cases, total = a.get("cases") or {}, a["job"]["transfers"]
    return total > 0 and cases.get("in-call", 0) == total and not a["job"].get("max_pct")


def overlap_range_words(a: dict[str, Any]) -> str:
    """'25 %–67 %', or the in-call wording for a 0–0 % that nothing could measure."""
    job = a["job"]
    if all_in_call(a):
        return ("0–0 %: every transfer began and ended inside one blocking call, which this "
                "layer cannot see into")
    return pct_between(job["min_pct"], job["max_pct"])


# What an all-in-call profile can say instead of a non-overlapped time: the calls held the
# transfers, and what ran inside them (or after an eager send returned) is unseen here.
IN_CALL_UNSEEN = ("so the 0 % is no measured absence of overlap: both ends of each "
                  "message (profile --trace) can show what these calls hid")


def overlap_sentence(a: dict[str, Any], who: str) -> str:
    job = a["job"]
    both = "each message counted on its sender and on its receiver"
    lead = ""
    if job["call_s"] > 0 and job["xfer_s"] < NEGLIGIBLE * job["call_s"]:
        lead = (f"Transfers took only {fmt_time(job['xfer_s'])} of the "
                f"{fmt_time(job['call_s'])} spent in MPI calls ({job['transfers']} transfers, "
                f"{who}; {both}). ")
        if all_in_call(a):
            return (lead + f"Overlap of that transfer time: {overlap_range_words(a)}, "
                    f"{IN_CALL_UNSEEN}.")
        return (lead + f"Overlap of that transfer time: {overlap_range_words(a)}; at least "
                f"{fmt_time(job['nonoverlap_s'])} of it was not overlapped.")
    rng = overlap_range_words(a)
    if all_in_call(a):
        return (f"Overlap {rng}, {IN_CALL_UNSEEN} ({fmt_time(job['xfer_s'])} transfer time, "
                f"{job['transfers']} transfers, {who}; {both}).")
    return (f"Overlap {rng} of {fmt_time(job['xfer_s'])} transfer time ({job['transfers']} "
            f"transfers, {who}; {both}); at least {fmt_time(job['nonoverlap_s'])} "
            f"({fmt_pct(job['nonoverlap_pct'])}) was not overlapped with computation.")


def _idle_text(idle: list[dict[str, Any]], a: dict[str, Any]) -> str:
    active = [r for r in a["ranks"] if r["in_totals"] and r["mpi_share_pct"] is not None
              and r["mpi_share_pct"] < BUSY_SHARE]
    if len(idle) == 1:
        i = idle[0]
        who = f"Rank {i['rank']} is idle: {_share(i['mpi_share_pct'])} of its time in MPI calls"
        if i["top_fn"]:
            who += (f", {_share(i['top_fn_share_pct'])} of that in {i['top_fn']} "
                    f"({fmt_time(i['call_s'])} in MPI against {fmt_time(i['comp_s'])} computing)")
    else:
        fns = sorted({i["top_fn"] for i in idle if i["top_fn"]})
        who = (f"Ranks {rank_list(i['rank'] for i in idle)} are idle: "
               f"{_share(min(i['mpi_share_pct'] for i in idle))} or more of their time in "
               "MPI calls" + (f", mostly in {', '.join(fns)}" if fns else ""))
    busy = ", ".join(f"rank {r['rank']} computes {_share(100 - r['mpi_share_pct'])}"
                     for r in active[:3])
    more = f" (and {len(active) - 3} more)" if len(active) > 3 else ""
    return (f"{who}, while {busy}{more} of its time: the run is limited by its busy "
            f"rank{'s' if len(active) > 1 else ''}, not by communication.")


def _waiting_text(a: dict[str, Any]) -> str | None:
    ts = a.get("two_sided") or {}
    w = ts.get("waiting") if ts.get("available") else None
    job = a["job"]
    if not w or job["call_s"] <= 0:
        return None
    nonoverlap = (ts.get("job") or {}).get("nonoverlap_s", job["nonoverlap_s"])
    total = w["total_s"]
    if total < WAIT_SIGNIFICANT * job["call_s"] or total < nonoverlap:
        return None
    parts = [(w["late_sender_s"], "late senders"), (w["late_receiver_s"], "late receivers"),
             (w["collective_s"], "the last arrival at collectives")]
    parts_text = ", ".join(f"{fmt_time(s)} for {what}" for s, what in parts if s > 0)
    worst = max(w["ranks"], key=lambda r: (r["waiting_s"], -r["rank"]), default=None)
    top_fn = w["functions"][0]["fn"] if w["functions"] else None
    comps = [r["comp_s"] for r in a["ranks"] if r["in_totals"]]
    imbalance = ""
    if len(comps) > 1 and max(comps) > 0:
        lo_r = min((r for r in a["ranks"] if r["in_totals"]), key=lambda r: r["comp_s"])
        hi_r = max((r for r in a["ranks"] if r["in_totals"]), key=lambda r: r["comp_s"])
        imbalance = (f"; computation per rank ranges from {fmt_time(lo_r['comp_s'])} "
                     f"(rank {lo_r['rank']}) to {fmt_time(hi_r['comp_s'])} "
                     f"(rank {hi_r['rank']})")
    where = (f"; most on rank {worst['rank']} ({fmt_time(worst['waiting_s'])}"
             + (f", mostly in {top_fn}" if top_fn else "") + ")") if worst else ""
    return (f"Waiting for late partners dominates: {fmt_time(total)} of the "
            f"{fmt_time(job['call_s'])} in MPI calls ({parts_text}){where}, against "
            f"{fmt_time(nonoverlap)} of transfer not overlapped{imbalance}.")


def _unexplained_text(a: dict[str, Any]) -> str | None:
    job = a["job"]
    ts = a.get("two_sided")
    if ts and ts.get("available"):
        return None  # a trace separates waiting: _waiting_text says what it found
    if job["call_s"] <= 0 or job["xfer_s"] >= NEGLIGIBLE * job["call_s"]:
        return None
    return (f"MPI calls took {fmt_time(job['call_s'])} ({fmt_pct(job['mpi_share_pct'])} of "
            f"the time in calls and computation) but the transfers only "
            f"{fmt_time(job['xfer_s'])}: most MPI time is waiting or library overhead, not "
            "moving data; profile with --trace to separate waiting for late partners from "
            "transfer.")


def table_caveat(a: dict[str, Any]) -> str | None:
    """The sentence for transfers priced with a class the table does not have (None when
    every transfer had its own class)."""
    counters = a.get("counters") or {}
    priced = int(counters.get("inter_as_intra") or 0)
    if priced <= 0:
        return None
    inter = max(priced, int(counters.get("inter_node_transfers") or 0))
    return (f"Transfers priced with times not measured for them: {priced:,} of {inter:,} "
            "transfers with a peer on another node used the table's intra-node times, as "
            "it has no inter-node class, so their bounds describe this node's shared "
            "memory, not the network; 'mpi-overlap calibrate -n 2 --nodes 2' inside the "
            "allocation measures the inter-node class (mpi-overlap profile does so itself "
            "on the next run).")


def headline(a: dict[str, Any], docs: list[dict[str, Any]]) -> dict[str, Any]:
    """{"kind", "text", "idle_ranks"} (and "table_caveat" when a transfer was priced with
    a class not measured for it): what the findings lead with."""
    out = _lead(a, docs)
    caveat = table_caveat(a)
    return {**out, "table_caveat": caveat} if caveat else out


def _lead(a: dict[str, Any], docs: list[dict[str, Any]]) -> dict[str, Any]:
    idle = idle_ranks(a, docs)
    if idle:
        return {"kind": "idle-rank", "text": _idle_text(idle, a), "idle_ranks": idle}
    text = _waiting_text(a)
    if text:
        return {"kind": "waiting", "text": text, "idle_ranks": []}
    text = _unexplained_text(a)
    if text:
        return {"kind": "mpi-time-unexplained", "text": text, "idle_ranks": []}
    return {"kind": "transfer", "text": None, "idle_ranks": []}
