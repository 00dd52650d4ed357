"""The job's statistics: every rank's measures summed in one fixed order, the binomial tree
the library reduces them in at MPI_Finalize (native/profiler/mop_reduce.h), so that the
statistics made here from the rank documents and the ones rank 0 wrote
(profile.stats.json, schema mpi-overlap/profile-stats) are the same numbers, bit for bit.

The tree: rank r's partial covers ranks [r, r + 2^k) after step k, and each merge is
(lower half) + (upper half). Going through the ranks in order, that is a binary counter:
a stack of partials of 1, 2, 4 … ranks, two of one size merged as soon as they meet, the
rest folded from the right at the end (TreeReducer). A rank without data (disabled, or
no document) is an empty partial in its place: adding 0 changes no sum, the place keeps
the order.

A cell (one size bin, function or region summed over ranks) has the keys the library
writes: transfers, xfer_s, min_s, max_s, nonoverlap_s, calls, comp_s, call_s, ranks (that
have the entry), worst_rank and worst_s (the rank that lost most non-overlapped time there,
lowest on ties)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ...core.json_input import read_json
from ..analysis.profile_values import num
from .job_sites import SITE_TABLES, site_tables, tables_from_file

FIRST = 16  # ranks listed per counter and flagged entry (MOP_JS_FIRST)
STATS_FILE = "profile.stats.json"
STATS_SCHEMA = "mpi-overlap/profile-stats"
MEASURES = ("xfer_s", "min_s", "max_s", "nonoverlap_s")
PEAK_COUNTERS = ("outstanding_peak",)

Cell = dict[str, Any]
Stats = dict[str, Any]
Who = tuple[int, tuple[int, ...]]  # (ranks, the lowest FIRST of them)
SUMMED = ("transfers", *MEASURES, "calls", "comp_s", "call_s", "ranks", "excess_s")
# The checks' parts as the library sums them (mop_jcheck_part), in its order of fields.
PART_COUNTS = ("transfers", "calls", "calls_beyond", "unchecked", "flagged_transfers")
PART_TIMES = ("xfer_s", "call_s", "longest_s", "beyond_s", "flagged_xfer_s", "excess_s")


def _who(a: Who, b: Who) -> Who:
    """a's ranks, then b's (the next ranks), the lowest FIRST kept."""
    return a[0] + b[0], (a[1] + b[1])[:FIRST]


def _cell(entry: dict[str, Any], rank: int) -> Cell:
    xfer, hi = num(entry.get("xfer_s")), num(entry.get("max_s"))
    nonoverlap = max(0.0, xfer - hi)
    return {"transfers": int(num(entry.get("transfers"))), "xfer_s": xfer,
            "min_s": num(entry.get("min_s")), "max_s": hi, "nonoverlap_s": nonoverlap,
            "calls": int(num(entry.get("calls"))), "comp_s": num(entry.get("comp_s")),
            "call_s": num(entry.get("call_s")), "ranks": 1, "worst_rank": rank,
            "worst_s": nonoverlap, "excess_s": 0.0, "who": (0, ())}


def _flag_cell(row: dict[str, Any], rank: int) -> Cell:
    """A flagged row of a rank's checks (by_function, by_bin) as a cell (mop_jflag_of)."""
    return {**_cell({"transfers": row.get("transfers"), "xfer_s": row.get("xfer_s")}, rank),
            "nonoverlap_s": 0.0, "worst_s": 0.0, "excess_s": num(row.get("excess_s")),
            "who": (1, (rank,))}


def merge_cell(a: Cell, b: Cell) -> Cell:
    """a + b, b holding the higher ranks; a new cell (partials are shared by no one, but a
    cell may be one rank's own)."""
    out: Cell = {k: a[k] + b[k] for k in SUMMED}
    out["who"] = _who(a["who"], b["who"])
    better = b["ranks"] and (not a["ranks"] or b["worst_s"] > a["worst_s"] or (
        b["worst_s"] == a["worst_s"] and b["worst_rank"] < a["worst_rank"]))
    src = b if better else a
    out["worst_rank"], out["worst_s"] = src["worst_rank"], src["worst_s"]
    return out


def _no_checks() -> dict[str, Any]:
    return {"in_call": dict.fromkeys((*PART_COUNTS, *PART_TIMES), 0),
            "across_calls": dict.fromkeys((*PART_COUNTS, *PART_TIMES), 0), "beyond_s": 0.0,
            "by_function": {}, "by_bin": {}}


def empty() -> Stats:
    """The statistics of a rank without data (disabled, or no document)."""
    return {"ranks": 1, "ranks_with_data": 0, "totals": None, "cases": {}, "counters": {},
            "cases_ranks": {}, "counters_ranks": {}, "checks": _no_checks(),
            "by_bin": {}, "by_function": {}, "by_region": {}, "site_labels": {},
            **{t: {} for t in SITE_TABLES}}


def _part(checks: dict[str, Any], name: str, call_fields: bool) -> dict[str, Any]:
    """One rank's checks.in_call or checks.across_calls (mop_js_checks_of_rank)."""
    part = checks.get(name) or {}
    flagged = part.get("flagged") or {}
    out: dict[str, Any] = dict.fromkeys((*PART_COUNTS, *PART_TIMES), 0)
    out["transfers"] = int(num(part.get("transfers")))
    out["xfer_s"] = num(part.get("xfer_s"))
    if call_fields:
        for k in ("calls", "calls_beyond", "unchecked"):
            out[k] = int(num(part.get(k)))
        for k in ("call_s", "longest_s", "beyond_s"):
            out[k] = num(part.get(k))
    out["flagged_transfers"] = int(num(flagged.get("transfers")))
    out["flagged_xfer_s"] = num(flagged.get("xfer_s"))
    out["excess_s"] = num(flagged.get("excess_s"))
    return out


def _checks_of(prof: dict[str, Any], rank: int) -> dict[str, Any]:
    checks = prof.get("checks")
    if not isinstance(checks, dict):  # a profile written before the checks existed
        return _no_checks()
    return {
        "in_call": _part(checks, "in_call", True),
        "across_calls": _part(checks, "across_calls", False),
        "beyond_s": num(checks.get("beyond_s")),
        "by_function": {(str(r.get("fn")), str(r.get("check"))): _flag_cell(r, rank)
                        for r in checks.get("by_function") or []},
        "by_bin": {((int(num(r.get("lo"))), r.get("hi")), str(r.get("check"))):
                   _flag_cell(r, rank) for r in checks.get("by_bin") or []},
    }


def _merge_checks(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {
        **{p: {k: a[p][k] + b[p][k] for k in a[p]} for p in ("in_call", "across_calls")},
        "beyond_s": a["beyond_s"] + b["beyond_s"],
        "by_function": _merge_table(a["by_function"], b["by_function"]),
        "by_bin": _merge_table(a["by_bin"], b["by_bin"]),
    }


def _merge_who(a: dict[str, Who], b: dict[str, Who]) -> dict[str, Who]:
    out = dict(a)
    for k, w in b.items():
        out[k] = _who(out[k], w) if k in out else w
    return out


def of_rank(doc: dict[str, Any]) -> Stats:
    """One rank's statistics from its document, as the library makes them from the
    measures that document was written from (mop_job_stats_of_rank)."""
    if doc.get("status") == "disabled":
        return empty()
    rank = int(doc.get("rank", -1))
    prof = doc.get("profile") or {}
    totals = prof.get("totals") or {}
    cases = {k: int(num(v)) for k, v in (prof.get("cases") or {}).items()}
    counters = {k: int(num(v)) for k, v in (prof.get("counters") or {}).items()}
    sites, labels = site_tables(doc, rank, _cell)
    return {
        **sites,
        "site_labels": labels,
        "ranks": 1,
        "ranks_with_data": 1,
        "totals": _cell(totals, rank),
        "cases": cases,
        "counters": counters,
        "cases_ranks": {k: (1, (rank,)) for k, v in cases.items() if v},
        "counters_ranks": {k: (1, (rank,)) for k, v in counters.items() if v},
        "checks": _checks_of(prof, rank),
        "by_bin": {(int(num(e.get("lo"))), e.get("hi")): _cell(e, rank)
                   for e in prof.get("by_bin") or []},
        "by_function": {str(e.get("fn")): _cell(e, rank) for e in prof.get("by_function") or []},
        "by_region": {str(e.get("region")): _cell(e, rank)
                      for e in prof.get("by_region") or []},
    }


def _merge_table(a: dict[Any, Cell], b: dict[Any, Cell]) -> dict[Any, Cell]:
    out = dict(a)
    for key, cell in b.items():
        mine = out.get(key)
        out[key] = cell if mine is None else merge_cell(mine, cell)
    return out


def merge(a: Stats, b: Stats) -> Stats:
    """a + b, b holding the ranks after a's (mop_job_stats_merge)."""
    if a["totals"] is None or b["totals"] is None:
        totals = a["totals"] if b["totals"] is None else b["totals"]
    else:
        totals = merge_cell(a["totals"], b["totals"])
    counters = dict(a["counters"])
    for k, v in b["counters"].items():
        counters[k] = max(counters.get(k, 0), v) if k in PEAK_COUNTERS else counters.get(k, 0) + v
    cases = dict(a["cases"])
    for k, v in b["cases"].items():
        cases[k] = cases.get(k, 0) + v
    return {
        "ranks": a["ranks"] + b["ranks"],
        "ranks_with_data": a["ranks_with_data"] + b["ranks_with_data"],
        "totals": totals,
        "cases": cases,
        "counters": counters,
        "cases_ranks": _merge_who(a["cases_ranks"], b["cases_ranks"]),
        "counters_ranks": _merge_who(a["counters_ranks"], b["counters_ranks"]),
        "checks": _merge_checks(a["checks"], b["checks"]),
        "site_labels": {**b["site_labels"], **a["site_labels"]},  # the lower rank's first
        **{t: _merge_table(a[t], b[t]) for t in SITE_TABLES},
        **{t: _merge_table(a[t], b[t]) for t in ("by_bin", "by_function", "by_region")},
    }


class TreeReducer:
    """Partials of ranks pushed in rank order, merged in the library's tree order; holds
    about log2(ranks) partials."""

    def __init__(self, combine: Callable[[Any, Any], Any] | None = None) -> None:
        self._merge = combine or merge  # another combine shows the order (the tests)
        self._stack: list[tuple[int, Any]] = []  # (ranks covered, partial)
        self.pushed = 0

    def push(self, stats: Any) -> None:
        size, part = 1, stats
        while self._stack and self._stack[-1][0] == size:
            lower = self._stack.pop()[1]
            part, size = self._merge(lower, part), 2 * size
        self._stack.append((size, part))
        self.pushed += 1

    def push_rank(self, rank: int, stats: Stats) -> None:
        """rank's statistics in its place: the ranks before it that had none (no
        document) are empty places; a rank already placed is left out."""
        if rank < self.pushed:
            return
        self.pad(rank)
        self.push(stats)

    def pad(self, ranks: int) -> None:
        """Empty places up to `ranks` ranks: the job's ranks that had no document."""
        while self.pushed < ranks:
            self.push(empty())

    def result(self) -> Any:
        """The whole: the partials left folded from the right (the tree's last ranks are
        the smallest subtrees, merged first)."""
        if not self._stack:
            return empty()
        part = self._stack[-1][1]
        for _, lower in reversed(self._stack[:-1]):
            part = self._merge(lower, part)
        return part


def reduce_documents(docs: Iterable[dict[str, Any]], ranks: int) -> Stats:
    """The job's statistics from rank documents in rank order (ranks 0 … ranks−1; a
    missing rank is an empty place)."""
    tree = TreeReducer()
    for doc in docs:
        tree.push_rank(int(doc.get("rank", -1)), of_rank(doc))
    tree.pad(ranks)
    return tree.result()


# ---------------------------------------------------------------- the library's file


def _table_of(entries: list[dict[str, Any]], key: str) -> dict[Any, Cell]:
    return {((int(e["lo"]), e["hi"]) if key == "bin" else str(e[key])): _file_cell(e)
            for e in entries}


def _who_of(entry: dict[str, Any]) -> Who:
    return int(entry["n"]), tuple(int(r) for r in entry["first"])


def _flags_of(entries: list[dict[str, Any]], key: str) -> dict[Any, Cell]:
    out = {}
    for e in entries:
        k = ((int(e["lo"]), e["hi"]) if key == "bin" else str(e["fn"]), str(e["check"]))
        who = _who_of(e["ranks"])
        out[k] = {"transfers": int(e["transfers"]), "xfer_s": e["xfer_s"],
                  "excess_s": e["excess_s"], "ranks": who[0], "who": who}
    return out


def _checks_from_file(doc: dict[str, Any]) -> dict[str, Any]:
    parts = {p: {**dict.fromkeys((*PART_COUNTS, *PART_TIMES), 0), **doc[p]}
             for p in ("in_call", "across_calls")}
    return {**parts, "beyond_s": doc["beyond_s"],
            "by_function": _flags_of(doc["by_function"], "fn"),
            "by_bin": _flags_of(doc["by_bin"], "bin")}


def _file_cell(e: dict[str, Any]) -> Cell:
    cell = {**{c: e.get(c, 0 if c in ("transfers", "calls", "ranks") else 0.0)
               for c in (*SUMMED, "worst_rank", "worst_s")}, "who": (0, ())}
    if cell["worst_rank"] is None:  # no rank lost time here: the file names none
        cell["worst_rank"] = -1  # a rank number still, so that cells can be merged
    return cell


def from_file(doc: dict[str, Any]) -> Stats:
    """profile.stats.json as Stats (the form reduce_documents gives); its call sites'
    labels are those collect added (site_labels), if any."""
    return {
        **tables_from_file(doc, _file_cell),
        "site_labels": dict(doc.get("site_labels") or {}),
        "ranks": int(doc["ranks"]),
        "ranks_with_data": int(doc["ranks_with_data"]),
        "totals": {**doc["totals"], "calls": 0, "ranks": int(doc["ranks_with_data"])}
        if doc["ranks_with_data"] else None,
        "cases": dict(doc["cases"]),
        "counters": dict(doc["counters"]),
        "cases_ranks": {k: _who_of(v) for k, v in doc["cases_ranks"].items() if v["n"]},
        "counters_ranks": {k: _who_of(v) for k, v in doc["counters_ranks"].items() if v["n"]},
        "checks": _checks_from_file(doc["checks"]),
        "by_bin": _table_of(doc["by_bin"], "bin"),
        "by_function": _table_of(doc["by_function"], "fn"),
        "by_region": _table_of(doc["by_region"], "region"),
    }


def read_stats_file(run_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(profile.stats.json, None), (None, None) when there is none, or (None, why) when it
    cannot be used."""
    path = run_dir / STATS_FILE
    if not path.is_file():
        return None, None
    try:
        doc = read_json(path)
    except Exception as exc:  # a damaged file is a warning, never the end of the report
        return None, f"{STATS_FILE}: cannot read it ({exc})"
    if not isinstance(doc, dict) or doc.get("schema") != STATS_SCHEMA:
        return None, f"{STATS_FILE}: not a {STATS_SCHEMA} document"
    return doc, None


def fnv1a64(text: str) -> int:
    """FNV-1a 64 of a string's UTF-8 bytes (mop_job_hash)."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _rank_bins(doc: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Per rank, its size bins with transfers (profile.stats.json's rank_bins), as the
    by_bin entries of its document."""
    out: list[list[dict[str, Any]]] = [[] for _ in doc["rank_rows"]["rank"]]
    for b in doc.get("rank_bins") or []:
        for i, n in enumerate(b["transfers"]):
            if n:
                out[i].append({"lo": b["lo"], "hi": b["hi"], "transfers": n,
                               "xfer_s": b["xfer_s"][i], "min_s": b["min_s"][i],
                               "max_s": b["max_s"][i]})
    return out


def _sites_by_hash(doc: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The known call sites of profile.stats.json by the hash a row names its busiest by,
    as a document's sites entry (id, label, function)."""
    labels = doc.get("site_labels") or {}
    out = {}
    for e in doc.get("sites") or []:
        if e["site"]:
            out[fnv1a64(f"{e['site']}\t{e['fn']}")] = {
                "id": 1, "label": labels.get(e["site"], e["site"]), "fn": e["fn"] or None}
    return out


def row_documents(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """profile.stats.json's per-rank rows as rank documents holding just what the rows
    hold: status, host, wall time, totals, the computation's time off the CPU, size bins,
    the checks' per-rank figures, the function with the most call time and the busiest
    call site (what the headline and the advice name); what the analysis goes through
    when the run kept no documents
    (--statistics-only). The flagged figures are the rank's in-call and across-calls ones
    summed, put under in-call (adding the across-calls 0 changes nothing)."""
    rows = doc["rank_rows"]
    bins = _rank_bins(doc)
    sites = _sites_by_hash(doc)
    out = []
    for i, rank in enumerate(rows["rank"]):
        def col(key: str, i: int = i) -> Any:
            return rows[key][i]

        top = [{"fn": col("top_fn"), "call_s": col("top_fn_call_s")}] if col("top_fn") else []
        busiest = col("busiest_site")
        site = sites.get(int(busiest, 16)) if busiest else None
        out.append({
            "rank": rank,
            "status": "disabled" if col("disabled") else "complete",
            # the lowest disabled rank's reason (the statistics keep one)
            "reason": doc.get("disabled_reason") if col("disabled") else None,
            "host": col("host") or None,
            "wall_s": col("wall_s"),
            "mpi_library_version": doc.get("mpi_library_version"),
            # computation as CPU time (profile/analysis/cpu_time.py); absent from older files
            **({"cpu": {"off_cpu_s": rows["comp_off_cpu_s"][i],
                        "run_delay_s": rows["run_delay_s"][i]}}
               if rows.get("comp_off_cpu_s") and rows["comp_off_cpu_s"][i] is not None
               else {}),
            "profile": {
                "by_bin": bins[i],
                "by_function": top,
                "sites": [{**site, "call_s": col("busiest_site_call_s")}] if site else [],
                "totals": {k: col(k) for k in ("transfers", "xfer_s", "min_s", "max_s",
                                                "comp_s", "call_s")},
                "checks": {
                    "in_call": {"xfer_s": col("in_call_xfer_s"), "calls": col("in_call_calls"),
                                "calls_beyond": col("in_call_calls_beyond"),
                                "call_s": col("in_call_call_s"),
                                "longest_s": col("in_call_longest_s"),
                                "flagged": {"transfers": col("flagged_transfers"),
                                            "xfer_s": col("flagged_xfer_s")}},
                    "across_calls": {"flagged": {"transfers": 0, "xfer_s": 0.0}},
                    "beyond_s": col("beyond_s"),
                },
            },
        })
    return out


def comparable(stats: Stats) -> dict[str, Any]:
    """Stats with the worst rank of a cell that lost nothing set to None, as the library
    writes it: the form in which two reductions are compared."""
    def cells(table: dict[Any, Cell]) -> dict[Any, Cell]:
        return {k: {**{f: c[f] for f in (*SUMMED, "worst_s")},
                    "worst_rank": c["worst_rank"] if c["ranks"] and c["worst_s"] > 0 else None}
                for k, c in table.items()}

    def flags(table: dict[Any, Cell]) -> dict[Any, Any]:
        return {k: (c["transfers"], c["xfer_s"], c["excess_s"], c["who"])
                for k, c in table.items()}

    checks = stats["checks"]

    totals = None
    if stats["totals"] is not None:
        totals = {k: stats["totals"][k] for k in ("transfers", *MEASURES, "comp_s", "call_s")}
    return {"ranks": stats["ranks"], "ranks_with_data": stats["ranks_with_data"],
            "totals": totals, "cases": stats["cases"], "counters": stats["counters"],
            "cases_ranks": stats["cases_ranks"], "counters_ranks": stats["counters_ranks"],
            "checks": {**{p: checks[p] for p in ("in_call", "across_calls", "beyond_s")},
                       "by_function": flags(checks["by_function"]),
                       "by_bin": flags(checks["by_bin"])},
            **{t: cells(stats[t]) for t in ("by_bin", "by_function", "by_region",
                                            *SITE_TABLES)}}
