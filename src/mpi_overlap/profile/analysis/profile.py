"""Analysis of a profile run: the per-rank profiles of result.json merged across ranks.

Input: the profile-run-v1 document `mpi-overlap profile` collects (one profile-rank-v1
document per rank). Output: analysis-profile-v1 (document.py). Pure but for the
run's timeline traces, read when a run directory is given (profile/analysis/twosided.py).

Measures follow the source's §2.2–2.3 (Shet et al.): per rank the data transfer time
(`xfer_s`), the minimum and maximum overlapped transfer time (`min_s`, `max_s`), user
computation time (`comp_s`) and MPI call time (`call_s`); derived here:

* non-overlapped time `nonoverlap_s = xfer_s − max_s`: the least transfer time that was
  *not* overlapped with computation (§2.3, item 1), clamped at 0 against rounding;
* the overlap range `min_pct`–`max_pct` = 100·min/xfer – 100·max/xfer (null when
  xfer = 0);
* the MPI share `mpi_share_pct` = 100·call/(call + comp) (null when both are 0).

Job figures are sums over the ranks that reported data (percentages of the sums, so a
rank weighs by its transfer time); across-rank statistics give min / median / max and
which rank is which; rankings of regions, posting functions and size bins are summed
over ranks and ordered by the non-overlapped time they lose. Counters that mean a
transfer was not attributed precisely are listed with their meaning, and the findings
are sentences computed from the numbers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ...core.formatting import fmt_pct, fmt_time, pct_range
from ...core.sources import CITATIONS
from ..documents import job_stats
from .advice import advice, advice_findings, busiest_site_entry, evidence_keys
from .callsites import site_rankings
from .cpu_time import descheduled_finding, rank_figures
from .document import CASES, RANK_MEASURES
from .headline import headline, overlap_sentence, top_call_entry
from .library_time import LibraryTime, library_time_finding
from .profile_checks import BoundChecks, add_checks, check_finding
from .profile_values import (
    bin_label,
    cell_ranking,
    measures,
    num,
    overlap_pcts,
    pct,
    rank_list,
    share,
)

SCHEMA = "mpi-overlap/analysis"
SCHEMA_VERSION = 1
BENCHMARK = "profile"

# A rank with this status has no measurements (profiling was refused).
NO_DATA_STATUS = "disabled"
PARTIAL_STATUS = ("incomplete", "running")
# Counters that are bookkeeping, not attribution problems.
BOOKKEEPING = ("events", "flushes", "idle_steps", "pick_epochs", "pick_trials",
               "pick_idle_epochs", "outstanding_peak")
# Cases and counters that mean some transfer time was not attributed precisely.
UNATTRIBUTED: dict[str, str] = {
    "begin-only": "transfers whose completion was never observed (freed, handle reused or "
    "still open at the end): counted with min 0 and max = their full transfer time",
    "end-only": "completions whose start was never observed (e.g. posted while monitoring "
    "was off or by an unwrapped call): counted with min 0 and max = full transfer time, "
    "under the completing function",
    "handle_reused": "a request handle came back for a new request while its transfer was "
    "still open: the old transfer was closed as begin-only",
    "freed_active": "MPI_Request_free on an active request: its transfer was closed as "
    "begin-only (its end cannot be observed)",
    "start_unknown": "MPI_Start of a persistent request whose creation was not seen: that "
    "transfer is in no measure",
    "free_unknown": "MPI_Request_free of a request the profiler did not know: nothing was "
    "closed, a transfer may have been missed",
    "unfinished": "transfers still open when the program ended: closed as begin-only",
    "region_mismatch": "a region ended that was not the innermost open one: region "
    "attribution near it may be off",
    "region_overflow": "regions nested deeper than 64 levels: deeper levels were attributed "
    "to the 64th",
    "table_extrapolated": "message sizes outside the transfer-time table: their transfer "
    "time was extrapolated",
    "inter_as_intra": "point-to-point transfers with a peer on another node priced with "
    "the intra-node times: the table has no inter-node class (`mpi-overlap calibrate "
    "--nodes 2` inside a Slurm allocation measures it)",
    "coll_size_extrapolated": "collectives on a communicator size the table has no series "
    "for: their transfer time came from the calibrated sizes by the size model (docs/"
    "method.md), or from the nearest size where the op has one or is a neighbourhood "
    "collective",
    "coll_nb_as_blocking": "non-blocking collectives without a calibrated series of their "
    "own: the blocking operation's transfer time was used",
    "coll_uncalibrated": "collectives without any calibrated series: the intra-node "
    "point-to-point time of the same size was used (mpi-overlap calibrate -n N measures them)",
    "xfer_exceeds_span": "across-call transfers whose table time exceeded the whole time "
    "between begin and end: the minimum bound was cut to the maximum (the table overstates "
    "these, or their data moved early; see the checks on the bounds)",
    "xfer_exceeds_call": "in-call transfers whose table time exceeded the call that held "
    "them: the table overstates these, or their data moved outside the call (see the checks "
    "on the bounds)",
    "out_of_memory": "the profiler could not allocate request tracking: some transfers were "
    "not tracked",
    "unmonitored_transfers": "transfers while monitoring was off (MPI_Pcontrol(0)): in no measure",
    "nested_calls": "MPI calls made from inside another MPI call: their time counts to the "
    "outer call",
    "rma_other_thread": "one-sided operations completed by another thread's synchronization "
    "call: ended at their own thread's next one-sided call (later, so looser bounds)",
    "rma_freed_pending": "one-sided operations still pending when their window was freed (their "
    "completion was not seen): ended at MPI_Win_free",
    "cross_thread_untracked": "requests the table of posting threads could not hold: if "
    "another thread completed one, it shows as begin-only + end-only",
}
# Non-zero counters that are worth a line but change no measure.
INFO_COUNTERS: dict[str, str] = {
    "inter_node_transfers": "point-to-point transfers with a peer on another node: their "
    "transfer time is the table's inter-node class (the others' the intra-node class)",
    "cancelled": "cancelled requests: not counted as transfers",
    "proc_null": "requests to MPI_PROC_NULL: they move no data and are not transfers",
    "inactive_completions": "completions of persistent requests that were not started: "
    "nothing to close",
    "grequest_completions": "generalized requests (MPI_Grequest_start) completed: not "
    "transfers",
    "handle_shared": "request handles the MPI gave out again while outstanding (one shared "
    "handle for requests complete at once, e.g. Open MPI's for MPI_PROC_NULL): all tracked, "
    "completed oldest first",
    "cross_thread_completions": "requests completed by another thread than the one that "
    "posted them: closed on the posting thread's timeline (docs/profiler.md, Threads)",
}
# Per-rank non-overlapped times within this relative spread are called even.
EVEN_SPREAD = 0.05
# Relative slack for "min ≤ max ≤ xfer" checks on sums of floating-point numbers.
REL_TOL = 1e-9


# ---------------------------------------------------------------- per rank


def _rank_entry(doc: dict[str, Any]) -> dict[str, Any]:
    prof = doc.get("profile") or {}
    totals = prof.get("totals") or {}
    m = measures(totals)
    comp, call = num(totals.get("comp_s")), num(totals.get("call_s"))
    min_pct, max_pct = overlap_pcts(m["xfer_s"], m["min_s"], m["max_s"])
    wall = doc.get("wall_s")
    return {
        "rank": int(doc.get("rank", -1)),
        "status": str(doc.get("status", "unknown")),
        "reason": doc.get("reason"),
        "host": doc.get("host"),
        "wall_s": float(wall) if isinstance(wall, (int, float)) else None,
        "in_totals": doc.get("status") != NO_DATA_STATUS,
        **m,
        "comp_s": comp,
        "call_s": call,
        **rank_figures(doc, comp),  # computation as CPU time (profile/analysis/cpu_time.py)
        "min_pct": min_pct,
        "max_pct": max_pct,
        "nonoverlap_pct": pct(m["nonoverlap_s"], m["xfer_s"]),
        "mpi_share_pct": pct(call, call + comp),
    }


def _unique_ranks(docs: Iterable[dict[str, Any]], warnings: list[str]
                  ) -> Iterable[dict[str, Any]]:
    """The documents in rank order, each rank once (a second one is named in warnings). A
    list is sorted; documents read one at a time from a result.json (LazyRanks) come in
    the order collect wrote them, rank order, and are not held to be sorted."""
    def once() -> Iterator[dict[str, Any]]:
        seen: set[int] = set()
        for doc in docs:
            rank = int(doc.get("rank", -1))
            if rank in seen:
                warnings.append(f"rank {rank} appears twice in result.json: the second is "
                                "ignored")
                continue
            seen.add(rank)
            yield doc

    if not isinstance(docs, list):
        return once()
    return sorted(once(), key=lambda d: int(d.get("rank", -1)))


def _digest(doc: dict[str, Any]) -> dict[str, Any]:
    """What the headline, the advice and the trace summary read of one rank's document,
    in its shape: the rank, its MPI's version, its trace object, its top function by call
    time and its busiest call site; not its tables."""
    top, site = top_call_entry(doc), busiest_site_entry(doc)
    out = {"rank": doc.get("rank", -1), "mpi_library_version": doc.get("mpi_library_version"),
           "profile": {"by_function": [top] if top else [], "sites": [site] if site else []}}
    if "trace" in doc:
        out["trace"] = doc["trace"]
    return out


def _consistency(doc: dict[str, Any]) -> list[str]:
    """Warnings for totals that break min ≤ max ≤ xfer (more than rounding)."""
    totals = (doc.get("profile") or {}).get("totals") or {}
    xfer, lo, hi = num(totals.get("xfer_s")), num(totals.get("min_s")), num(totals.get("max_s"))
    slack = REL_TOL * max(xfer, 1e-300)
    rank = doc.get("rank")
    out = []
    if lo > hi + slack:
        out.append(f"rank {rank}: min_s {lo:.6g} > max_s {hi:.6g}; min % was cut to max %")
    if hi > xfer + slack:
        out.append(f"rank {rank}: max_s {hi:.6g} > xfer_s {xfer:.6g}; max % was cut to 100 %")
    return out


def _across(ranks: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """min / median / max of one measure over ranks, and which rank holds min and max.

    Ranks whose value is null (no transfer time for percentages) are left out; ties go
    to the lowest rank number. Median of an even count is the mean of the middle two.
    """
    vals = [(r[key], r["rank"]) for r in ranks if r.get(key) is not None]
    if not vals:
        return {
            "n": 0,
            "min": None,
            "min_rank": None,
            "median": None,
            "max": None,
            "max_rank": None,
        }
    lo = min(vals, key=lambda v: (v[0], v[1]))
    hi = min(vals, key=lambda v: (-v[0], v[1]))
    return {
        "n": len(vals),
        "min": lo[0],
        "min_rank": lo[1],
        "median": float(statistics.median(v for v, _ in vals)),
        "max": hi[0],
        "max_rank": hi[1],
    }


# ---------------------------------------------------------------- counters


def _notes(
    counts: dict[str, int],
    where: dict[str, tuple[int, tuple[int, ...]]],
    names: Iterable[str],
    meanings: dict[str, str],
    source: str,
) -> list[dict[str, Any]]:
    """Non-zero cases or counters with what they mean and the ranks that had them (the
    job's statistics list the lowest 16 and count them all)."""
    out = []
    for name in names:
        count = counts.get(name, 0)
        if count:
            n, first = where.get(name, (0, ()))
            out.append(
                {
                    "name": name,
                    "source": source,
                    "count": count,
                    "ranks": list(first),
                    "ranks_count": n,
                    "meaning": meanings.get(
                        name, "counter not known to this analysis version: check docs/profiler.md"
                    ),
                }
            )
    return out


# ---------------------------------------------------------------- findings


def _entry_name(entry: dict[str, Any]) -> str:
    """The name of a ranking entry: a bin's label, a function or a region."""
    for key in ("label", "fn", "region"):
        if key in entry:
            return str(entry[key])
    return "?"


def lead_findings(doc: dict[str, Any]) -> list[str]:
    """The findings that answer the question a profile is run for, in their order: the
    headline with its caveats, both ends, the checks on the bounds and the advice; what
    follows them (the rankings' sentences, the MPI share, trace and cost lines) is
    detail. Read from the findings the run guard lets be shown (run_guard.apply), so an
    oversubscribed run leads with its withheld sentence and a disturbed one is marked."""
    findings = list(doc.get("findings") or [])
    if not doc.get("ranks") or "rankings" not in doc:
        return findings[:1]
    from ..run.compare_bare import sentences as cost_sentences
    from ..trace.summary import trace_finding

    detail = set(_findings(doc)[1:]) | set(trace_finding(doc.get("trace")))
    detail.update(cost_sentences(doc.get("cost")))
    detail.add(library_time_finding(doc.get("library_time")) or "")
    lead = []
    for sentence in findings:
        if sentence in detail:
            break
        lead.append(sentence)
    return lead


def _findings(doc: dict[str, Any]) -> list[str]:
    """A few sentences, every number computed from the analysis document."""
    job, ranks = doc["job"], [r for r in doc["ranks"] if r["in_totals"]]
    out: list[str] = []
    if not ranks:
        return ["No rank reported measurements: there is nothing to characterise."]
    n = len(ranks)
    who = f"{n} rank{'s' if n != 1 else ''}"
    if job["xfer_s"] <= 0:
        out.append(
            f"No data transfer time was recorded on {who} ({job['transfers']} transfers): "
            "overlap percentages are undefined."
        )
    else:
        out.append(overlap_sentence(doc, who))
    worst = doc["worst_rank"]
    if worst is not None and n > 1:
        across = doc["across_ranks"]["nonoverlap_s"]
        if across["max"] - across["min"] <= EVEN_SPREAD * across["max"]:
            lo, hi = fmt_time(across["min"]), fmt_time(across["max"])
            out.append(
                "Non-overlapped time is even across ranks: "
                + (f"{lo} on every rank." if lo == hi else f"{lo} to {hi} per rank.")
            )
        else:
            out.append(
                f"Worst rank: rank {worst['rank']} with {fmt_time(worst['nonoverlap_s'])} not "
                f"overlapped ({fmt_pct(worst['share_pct'])} of the job's non-overlapped time; "
                f"overlap {pct_range(worst['min_pct'], worst['max_pct'])}); "
                f"per-rank median {fmt_time(across['median'])}, least "
                f"{fmt_time(across['min'])} on rank {across['min_rank']}."
            )
    for key, one, many in (
        ("bins", "Bin", "Bins"),
        ("functions", "Transfers posted by", "Transfers posted by"),
        ("regions", "Region", "Regions"),
    ):
        entries = doc["rankings"][key]
        top = entries[0] if entries else None
        if top is None or not top["nonoverlap_s"] or (key == "regions" and len(entries) < 2):
            continue
        names = [_entry_name(top)] + [
            _entry_name(e)
            for e in entries[1:]
            if top["nonoverlap_s"] - e["nonoverlap_s"] <= REL_TOL * top["nonoverlap_s"]
        ]
        each = " each" if len(names) > 1 else ""
        verb = "loses" if len(names) == 1 and key != "functions" else "lose"
        who_ = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        out.append(
            f"{many if len(names) > 1 else one} {who_} {verb} {fmt_pct(top['share_pct'])}{each} "
            f"of the non-overlapped time ({fmt_time(top['nonoverlap_s'])}{each}"
            + (
                ""
                if len(names) > 1
                else f"; overlap there {pct_range(top['min_pct'], top['max_pct'])}"
            )
            + ")."
        )
    mpi = doc["across_ranks"]["mpi_share_pct"]
    if job["mpi_share_pct"] is not None:
        spread = ""
        if n > 1 and mpi["n"]:
            spread = (
                f"; per rank {fmt_pct(mpi['min'])} on rank {mpi['min_rank']} to "
                f"{fmt_pct(mpi['max'])} on rank {mpi['max_rank']}"
            )
        out.append(
            f"MPI calls took {fmt_pct(job['mpi_share_pct'])} of the time spent in MPI calls "
            f"and computation ({fmt_time(job['call_s'])} of "
            f"{fmt_time(job['call_s'] + job['comp_s'])}{spread})."
        )
    notes = doc["unattributed"]
    if notes:
        listed = ", ".join(f"{n_['name']} {n_['count']}" for n_ in notes)
        out.append(f"Not attributed precisely: {listed} (see the notes).")
    else:
        info = doc.get("info_counters") or []
        counted = ("; counted for information, not anomalies: "
                   + ", ".join(f"{n_['name']} {n_['count']}" for n_ in info)) if info else ""
        out.append(
            "Every transfer was attributed precisely: no begin-only or end-only "
            f"transfers and no anomaly counted{counted}."
        )
    return out


# ---------------------------------------------------------------- the document


def _stats_record(reduced: dict[str, Any] | None, stats_only: bool) -> dict[str, Any]:
    """Where the job's sums and rankings came from: rank 0's reduction inside the job,
    with what it cost and whether the rank documents were kept too, or the same reduction
    over the rank documents here."""
    if not reduced:
        return {"source": "documents"}
    return {"source": "library", "ranks": reduced["ranks"], "reduce_s": reduced["reduce_s"],
            "largest_message": reduced["largest_message"], "documents": not stats_only}


BinCells = dict[tuple[int, int | None], dict[int, dict[str, float]]]


def _add_bins_of_rank(cells: BinCells, doc: dict[str, Any]) -> None:
    """Adds one rank's size bins (transfer time and bounds) to the per bin × rank cells."""
    rank = int(doc.get("rank", -1))
    for entry in (doc.get("profile") or {}).get("by_bin") or []:
        key = (int(num(entry.get("lo"))), entry.get("hi"))
        m = measures(entry)
        cell = cells.setdefault(key, {}).setdefault(
            rank, {"xfer_s": 0.0, "min_s": 0.0, "max_s": 0.0, "transfers": 0}
        )
        for k in ("xfer_s", "min_s", "max_s", "transfers"):
            cell[k] += m[k]


def _bins_by_rank(cells: BinCells, rank_ids: list[int]) -> dict[str, Any]:
    """Per size bin × rank: transfer time and overlap range, for the per-rank plots."""
    keys = sorted(cells, key=lambda k: (k[0], math.inf if k[1] is None else k[1]))
    bins, min_m, max_m, xfer_m, tr_m = [], [], [], [], []
    for key in keys:
        bins.append({"lo": key[0], "hi": key[1], "label": bin_label(key[0], key[1])})
        row_min, row_max, row_x, row_t = [], [], [], []
        for rank in rank_ids:
            c = cells[key].get(rank)
            lo_pct, hi_pct = (
                overlap_pcts(c["xfer_s"], c["min_s"], c["max_s"]) if c else (None, None)
            )
            row_min.append(lo_pct)
            row_max.append(hi_pct)
            row_x.append(c["xfer_s"] if c else 0.0)
            row_t.append(int(c["transfers"]) if c else 0)
        min_m.append(row_min)
        max_m.append(row_max)
        xfer_m.append(row_x)
        tr_m.append(row_t)
    return {
        "ranks": rank_ids,
        "bins": bins,
        "min_pct": min_m,
        "max_pct": max_m,
        "xfer_s": xfer_m,
        "transfers": tr_m,
    }


def analyze_profile(result: dict[str, Any], run_dir: Path | None = None) -> dict[str, Any]:
    """The analysis document (analysis-profile-v1, document.py) of one profile run;
    with the run directory, its timeline traces (if any) add both ends of every message
    (profile/analysis/twosided.py)."""
    warnings: list[str] = []
    reduced = result.get("job_stats")
    stats_only = bool(reduced) and not len(result.get("ranks") or [])
    if stats_only:
        # statistics only: the rows stand for the documents (profile/documents/job_stats.py)
        docs: Iterable[dict[str, Any]] = job_stats.row_documents(reduced)
    else:
        docs = _unique_ranks(result.get("ranks") or [], warnings)
    # One pass over the rank documents, in rank order: each is summed into what the
    # analysis needs and only a digest of it is kept (_digest), so a source that reads
    # documents one at a time never has them all in memory.
    ranks: list[dict[str, Any]] = []
    digests: list[dict[str, Any]] = []
    included_digests: list[dict[str, Any]] = []
    # The job's sums and rankings: rank 0's reduction when the run has one, otherwise the
    # same reduction, in the same order, over the documents (profile/documents/job_stats.py).
    tree = None if reduced else job_stats.TreeReducer()
    bin_cells: BinCells = {}
    checks = BoundChecks()
    library = LibraryTime()
    forced = bool((result.get("table") or {}).get("forced"))
    unprocessed: list[int] = []
    expected = int(num(result.get("ranks_expected"))) or 0
    for d in docs:
        entry = _rank_entry(d)
        ranks.append(entry)
        if tree is not None:
            tree.push_rank(entry["rank"], job_stats.of_rank(d))
        digest = _digest(d)
        digests.append(digest)
        library.add(d)
        forced = forced or bool((d.get("table") or {}).get("forced"))
        if d.get("processing") == "off":
            unprocessed.append(entry["rank"])
        if not entry["in_totals"]:
            continue
        included_digests.append(digest)
        warnings.extend(_consistency(d))
        _add_bins_of_rank(bin_cells, d)
        checks.add(d, entry)
    included = [r for r in ranks if r["in_totals"]]
    expected = expected or len(ranks)

    missing = sorted(int(r) for r in result.get("missing_ranks") or [])
    if not ranks:
        warnings.append("no rank wrote a profile: nothing to analyse")
    if missing:
        warnings.append(
            f"ranks {rank_list(missing)} wrote no profile: job figures cover "
            f"{len(included)} of {expected} ranks"
        )
    disabled = [r for r in ranks if not r["in_totals"]]
    if disabled:
        warnings.append(
            f"rank(s) {rank_list(r['rank'] for r in disabled)} disabled "
            f"({disabled[0]['reason'] or 'no reason given'}): left out of every figure"
        )
    for status in PARTIAL_STATUS:
        these = [r for r in ranks if r["status"] == status]
        if these:
            reason = these[0]["reason"] or "the program stopped before MPI_Finalize"
            warnings.append(
                f"rank(s) {rank_list(r['rank'] for r in these)} {status} ({reason}): their "
                "figures cover only the time until their last profile was written"
            )
    if unprocessed:
        warnings.append(
            f"rank(s) {rank_list(unprocessed)} counted their events without processing "
            "them (MPI_OVERLAP_PROCESS=0, a measure of the profiler's cost): they measured "
            "no transfer, call or computation"
        )
    if forced:
        warnings.append(
            "the transfer-time table was forced (--force-table): it may describe another "
            "machine or MPI, and every transfer time and percentage depends on it"
        )

    if tree is not None:
        tree.pad(expected)
    stats = job_stats.from_file(reduced) if reduced else tree.result()
    totals = stats["totals"] or {}
    sums = {
        k: totals.get(k, 0.0)
        for k in ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s", "comp_s", "call_s")
    }
    job_min_pct, job_max_pct = overlap_pcts(sums["xfer_s"], sums["min_s"], sums["max_s"])
    job = {
        "ranks": len(included),
        **sums,
        "transfers": int(sums["transfers"]),
        "min_pct": job_min_pct,
        "max_pct": job_max_pct,
        "nonoverlap_pct": pct(sums["nonoverlap_s"], sums["xfer_s"]),
        "nonoverlap_max_s": max(0.0, sums["xfer_s"] - sums["min_s"]),
        "mpi_share_pct": pct(sums["call_s"], sums["call_s"] + sums["comp_s"]),
    }
    across = {key: _across(included, key) for key in RANK_MEASURES}
    worst = None
    if included and sums["nonoverlap_s"] > 0:
        w = min(included, key=lambda r: (-r["nonoverlap_s"], r["rank"]))
        worst = {
            "rank": w["rank"],
            "nonoverlap_s": w["nonoverlap_s"],
            "share_pct": pct(w["nonoverlap_s"], sums["nonoverlap_s"]),
            "min_pct": w["min_pct"],
            "max_pct": w["max_pct"],
        }

    functions = stats["by_function"]
    total_call = sum(c["call_s"] for c in functions.values())
    rankings = {
        "regions": cell_ranking(
            stats["by_region"],
            lambda k, c: {"region": k, "comp_s": c["comp_s"], "call_s": c["call_s"]},
            lambda k: k,
        ),
        "functions": cell_ranking(
            functions,
            lambda k, c: {
                "fn": k,
                "calls": int(c["calls"]),
                "call_s": c["call_s"],
                "call_share_pct": share(c["call_s"], total_call),
            },
            lambda k: k,
        ),
        "bins": cell_ranking(
            stats["by_bin"],
            lambda k, c: {"lo": k[0], "hi": k[1], "label": bin_label(k[0], k[1])},
            lambda k: k[0],
        ),
    }
    rankings.update(site_rankings(stats))
    call_time = sorted(
        (
            {
                "fn": fn,
                "calls": int(c["calls"]),
                "call_s": c["call_s"],
                "share_pct": share(c["call_s"], total_call),
            }
            for fn, c in functions.items()
        ),
        key=lambda e: (-e["call_s"], e["fn"]),
    )

    cases = {**dict.fromkeys(CASES, 0), **stats["cases"]}
    counters = dict(sorted(stats["counters"].items()))
    case_where, counter_where = stats["cases_ranks"], stats["counters_ranks"]
    unknown = sorted(
        c
        for c in counters
        if c not in UNATTRIBUTED and c not in INFO_COUNTERS and c not in BOOKKEEPING
    )
    unattributed = _notes(cases, case_where, ("begin-only", "end-only"), UNATTRIBUTED, "case")
    unattributed += _notes(
        counters,
        counter_where,
        [c for c in UNATTRIBUTED if c not in CASES] + unknown,
        UNATTRIBUTED,
        "counter",
    )
    info = _notes(counters, counter_where, INFO_COUNTERS, INFO_COUNTERS, "counter")

    complete = (
        result.get("status") == "complete"
        and not missing
        and bool(ranks)
        and all(r["status"] == "complete" for r in ranks)
    )
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "benchmark": BENCHMARK,
        "method": {
            "name": "overlap-bounds",
            "source": f"{CITATIONS['000']}, §2.2–2.3: min/max overlapped transfer time per process",
            "nonoverlap": "xfer_s − max_s (at least this much transfer time not overlapped)",
            "percent_of": "xfer_s",
            "bins": result.get("bins"),
            "table": result.get("table"),
        },
        "status": "complete" if complete else "incomplete",
        "ranks_expected": expected,
        "ranks_reported": [r["rank"] for r in ranks],
        "missing_ranks": missing,
        "partial_ranks": [r["rank"] for r in ranks if r["status"] in PARTIAL_STATUS],
        "disabled_ranks": [r["rank"] for r in disabled],
        "warnings": warnings,
        "job": job,
        "ranks": ranks,
        "across_ranks": across,
        "worst_rank": worst,
        "rankings": rankings,
        "call_time": call_time,
        "bins_by_rank": _bins_by_rank(bin_cells, [r["rank"] for r in included]),
        "cases": cases,
        "counters": counters,
        "unattributed": unattributed,
        "info_counters": info,
        "callsites": result.get("callsites"),
        "job_file": result.get("job_file"),
        "job_stats": _stats_record(reduced, stats_only),
        "cost": result.get("cost"),
        # what the toolchain's own benchmark runs gave the advice (evidence.py)
        **{key: result.get(key) for key in evidence_keys()},
    }
    out["findings"] = _findings(out)
    # Checks on the bounds (their headline sentence goes right after the overlap figure).
    add_checks(out, checks, stats["checks"])
    # Timeline traces (profile --trace): where they are, and where the cap cut them.
    from ..trace.summary import trace_finding, trace_summary, trace_warnings

    out["trace"] = trace_summary(digests)
    out["findings"] += trace_finding(out["trace"])
    warnings.extend(trace_warnings(out["trace"]))
    # Both ends of every message (traced runs), then what the findings lead with.
    from ...analysis.run_table import used_table
    from .twosided import two_sided, two_sided_findings

    # the run's table, read once: its parts for both ends, its intervals for the caveat
    table = used_table(out)
    out["two_sided"] = two_sided(run_dir, out, result.get("bins"), table)
    out["findings"][1:1] = two_sided_findings(out["two_sided"])
    out["headline"] = headline(out, included_digests)
    # Advice from the measurements (profile/analysis/advice.py): the top items after the overlap
    # figure and the checks on the bounds that qualify it (the advice rests on those
    # bounds), every item in the document.
    from ..run.compare_bare import sentences as cost_sentences

    out["findings"] += cost_sentences(out["cost"])
    # the profiler's own time once per launch, beside what it cost this program
    out["library_time"] = library.result(out["job_file"], out["job_stats"])
    once = library_time_finding(out["library_time"])
    if once:
        out["findings"].append(once)
    out["advice"] = advice(out, included_digests)
    checks = check_finding(out["checks"])
    at = (out["findings"].index(checks) + 1 if checks in out["findings"]
          else min(1, len(out["findings"])))
    out["findings"][at:at] = advice_findings(out["advice"])
    # where a rank's wall-clock computation was other processes' doing: said where its
    # imbalance advice would have been (profile/analysis/cpu_time.py)
    desched = descheduled_finding(out["ranks"])
    if desched:
        out["findings"].insert(at, desched)
    if out["headline"]["text"]:
        out["findings"].insert(0, out["headline"]["text"])
    # The table's uncertainty, said only where it moves the answer (table_sensitivity.py).
    from .table_sensitivity import caveat, within_intervals

    out["table_interval"] = within_intervals(out["rankings"]["bins"], table) if table else None
    said = caveat(out["job"], out["table_interval"])
    if said:
        out["findings"].insert(1 if out["headline"]["text"] else 0, said)
    if out["headline"].get("table_caveat"):  # before all: every bound on them rests on it
        out["findings"].insert(0, out["headline"]["table_caveat"])
    return out
