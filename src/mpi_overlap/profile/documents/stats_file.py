"""profile.stats.json made in Python from rank documents: the document the library writes
at MPI_Finalize (native/profiler/mop_job_stats.c), the same tables reduced in the same
order (job_stats.py), the same per-rank rows and size bins. For synthetic jobs of any
size (report_scale.py) and to check the library's file against its documents; a real run
has the library's own (reduce_s and largest_message are then not measured here: null and
0)."""

from __future__ import annotations

from typing import Any

from ..analysis.headline import top_call_entry
from ..analysis.profile_values import num
from .callsites import mappings
from .job_sites import PAIR_SEP, split, where_of
from .job_stats import FIRST, STATS_SCHEMA, Cell, Stats, fnv1a64, reduce_documents

CHECK_ORDER = ("in-call", "across-calls")
MEASURES = ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s")


def _measures(c: Cell) -> dict[str, Any]:
    return {k: c[k] for k in MEASURES}


def _ranked(c: Cell) -> dict[str, Any]:
    worst = c["worst_rank"] if c["ranks"] and c["worst_s"] > 0 else None
    return {**_measures(c), "ranks": c["ranks"], "worst_rank": worst, "worst_s": c["worst_s"]}


def _who(w: tuple[int, tuple[int, ...]] | None) -> dict[str, Any]:
    n, first = w or (0, ())
    return {"n": n, "first": list(first[:FIRST])}


def _bin_key(lo_hi: tuple[int, int | None]) -> dict[str, Any]:
    return {"lo": lo_hi[0], "hi": lo_hi[1]}


def _site(name: str, where_key: str = "site", fn_key: str = "fn") -> dict[str, Any]:
    where, fn = split(name)
    return {where_key: where, fn_key: fn}


def _row(doc: dict[str, Any]) -> dict[str, Any]:
    """One rank's row (mop_job_row_of_rank) from its document."""
    disabled = doc.get("status") == "disabled"
    prof = doc.get("profile") or {}
    t = prof.get("totals") or {}
    checks = prof.get("checks") or {}
    inc, acr = checks.get("in_call") or {}, checks.get("across_calls") or {}
    flagged_in, flagged_ac = inc.get("flagged") or {}, acr.get("flagged") or {}
    row: dict[str, Any] = {
        "rank": int(doc["rank"]), "disabled": disabled, "wall_s": num(doc.get("wall_s")),
        "host": str(doc.get("host") or "")[:63], "top_fn": "", "top_fn_call_s": 0.0,
        "busiest_site": None, "busiest_site_call_s": 0.0,
        "comp_off_cpu_s": None, "run_delay_s": None,  # the document's "cpu" (NaN → null there)
        **dict.fromkeys(("transfers", "in_call_calls", "in_call_calls_beyond",
                         "flagged_transfers"), 0),
        **dict.fromkeys(("xfer_s", "min_s", "max_s", "nonoverlap_s", "comp_s", "call_s",
                         "in_call_xfer_s", "in_call_call_s", "in_call_longest_s",
                         "flagged_xfer_s", "beyond_s"), 0.0),
    }
    if disabled:
        return row
    xfer, hi = num(t.get("xfer_s")), num(t.get("max_s"))
    row.update(transfers=int(num(t.get("transfers"))), xfer_s=xfer, min_s=num(t.get("min_s")),
               max_s=hi, nonoverlap_s=max(0.0, xfer - hi), comp_s=num(t.get("comp_s")),
               call_s=num(t.get("call_s")), in_call_xfer_s=num(inc.get("xfer_s")),
               in_call_calls=int(num(inc.get("calls"))),
               in_call_calls_beyond=int(num(inc.get("calls_beyond"))),
               in_call_call_s=num(inc.get("call_s")), in_call_longest_s=num(inc.get("longest_s")),
               flagged_transfers=int(num(flagged_in.get("transfers"))
                                     + num(flagged_ac.get("transfers"))),
               flagged_xfer_s=num(flagged_in.get("xfer_s")) + num(flagged_ac.get("xfer_s")),
               beyond_s=num(checks.get("beyond_s")))
    cpu = doc.get("cpu") or {}
    row.update(comp_off_cpu_s=cpu.get("off_cpu_s") if cpu.get("min_piece_s") else None,
               run_delay_s=cpu.get("run_delay_s"))
    top = top_call_entry(doc)
    if top is not None:
        row.update(top_fn=str(top.get("fn"))[:47], top_fn_call_s=num(top.get("call_s")))
    known = [s for s in prof.get("sites") or [] if s.get("id")]
    if known:  # the first with the most call time (mop_js_row_digest)
        best = max(known, key=lambda s: num(s.get("call_s")))
        name = f"{where_of(best, mappings(doc))}\t{best.get('fn') or ''}"
        row.update(busiest_site=f"{fnv1a64(name):016x}",
                   busiest_site_call_s=num(best.get("call_s")))
    return row


def _checks(stats: Stats) -> dict[str, Any]:
    c = stats["checks"]
    inc = {k: c["in_call"][k] for k in ("transfers", "xfer_s", "calls", "call_s", "longest_s",
                                        "calls_beyond", "beyond_s", "unchecked",
                                        "flagged_transfers", "flagged_xfer_s", "excess_s")}
    acr = {k: c["across_calls"][k] for k in ("transfers", "xfer_s", "flagged_transfers",
                                             "flagged_xfer_s", "excess_s")}

    def flag(cell: Cell) -> dict[str, Any]:
        return {"transfers": cell["transfers"], "xfer_s": cell["xfer_s"],
                "excess_s": cell["excess_s"], "ranks": _who(cell["who"])}

    return {
        "in_call": inc, "across_calls": acr, "beyond_s": c["beyond_s"],
        "by_function": [{"fn": fn, "check": check, **flag(cell)}
                        for (fn, check), cell in sorted(c["by_function"].items(),
                                                        key=lambda kv: f"{kv[0][0]}\t{kv[0][1]}")],
        "by_bin": [{**_bin_key(b), "check": check, **flag(cell)}
                   for (b, check), cell in sorted(c["by_bin"].items(),
                                                  key=lambda kv: (kv[0][0][0],
                                                                  CHECK_ORDER.index(kv[0][1])))],
    }


def stats_document(docs: list[dict[str, Any]], ranks: int, *, labels: bool = False
                   ) -> dict[str, Any]:
    """profile.stats.json of a job whose rank documents, in rank order, are `docs` (every
    rank at MPI_Finalize, complete or disabled); with labels, the call sites' labels the
    documents give (site_labels: what collect adds to the library's file)."""
    stats = reduce_documents(docs, ranks)
    rows = [_row(d) for d in docs]
    disabled = [d for d in docs if d.get("status") == "disabled"]
    totals = stats["totals"] or dict.fromkeys((*MEASURES, "comp_s", "call_s"), 0.0)
    counters = dict(stats["counters"])
    bins = sorted(stats["by_bin"], key=lambda b: b[0])
    per_rank_bins = [{(int(num(e.get("lo"))), e.get("hi")): e
                      for e in (d.get("profile") or {}).get("by_bin") or []}
                     if d.get("status") != "disabled" else {} for d in docs]

    def column(b: tuple[int, int | None], key: str) -> list[Any]:
        zero: Any = 0 if key == "transfers" else 0.0
        return [(int(num(p[b][key])) if key == "transfers" else num(p[b][key]))
                if b in p else zero for p in per_rank_bins]

    return {
        "schema": STATS_SCHEMA, "schema_version": 1,
        "ranks": stats["ranks"], "ranks_with_data": stats["ranks_with_data"],
        "order": "binomial tree over MPI_COMM_WORLD ranks",
        "reduce_s": None, "largest_message": 0,
        "mpi_library_version": docs[0].get("mpi_library_version") if docs else None,
        "disabled_reason": (disabled[0].get("reason") or "no reason given") if disabled
        else None,
        "totals": {k: totals[k] for k in (*MEASURES, "comp_s", "call_s")},
        "cases": stats["cases"], "counters": counters,
        "cases_ranks": {k: _who(stats["cases_ranks"].get(k)) for k in stats["cases"]},
        "counters_ranks": {k: _who(stats["counters_ranks"].get(k)) for k in counters},
        "checks": _checks(stats),
        "by_bin": [{**_bin_key(b), **_ranked(stats["by_bin"][b])} for b in bins],
        "by_function": [{"fn": k, "calls": c["calls"], "call_s": c["call_s"], **_ranked(c)}
                        for k, c in sorted(stats["by_function"].items())],
        "by_region": [{"region": k, "comp_s": c["comp_s"], "call_s": c["call_s"],
                       **_ranked(c)} for k, c in sorted(stats["by_region"].items())],
        "sites": [{**_site(k), "calls": c["calls"], "call_s": c["call_s"], "ranks": c["ranks"]}
                  for k, c in sorted(stats["sites"].items())],
        "post_sites": [{**_site(k), **_ranked(c)} for k, c in sorted(stats["post_sites"].items())],
        "end_sites": [{**_site(k), **_ranked(c)} for k, c in sorted(stats["end_sites"].items())],
        "pairs": [{**_site(k.partition(PAIR_SEP)[0], "post", "post_fn"),
                   **_site(k.partition(PAIR_SEP)[2], "end", "end_fn"), "polled": c["calls"],
                   **_ranked(c)} for k, c in sorted(stats["pairs"].items())],
        "rank_bins": [{**_bin_key(b), **{k: column(b, k) for k in ("transfers", "xfer_s",
                                                                  "min_s", "max_s")}}
                      for b in bins],
        "rank_rows": {k: [r[k] for r in rows] for k in rows[0]} if rows else {},
        **({"site_labels": stats["site_labels"]} if labels else {}),
    }
