"""Call sites in the job's statistics (profile/documents/job_stats.py; native/profiler/
mop_job_stats.h): a rank's sites, site pairs, and the pairs summed per posting and per
completing site, each named as the library names them, so that every rank running the
object meets at the same name whatever ASLR did:

- where a site is: "<path>+0x<file offset>" of the executable mapping that holds its
  address (address − start + the mapping's offset, as mop_places.c computes it from
  /proc/self/maps and as a rank document's "maps" give it), "0x<address>" where none does;
  a chain's frames (--callsite-depth) joined by " < ", innermost first; "" for the unknown
  site;
- a site's name: where, a tab, the MPI function called there ("" for the unknown site);
- a pair's name: the two sites' names joined by PAIR_SEP.

Within a rank, the pairs are summed per site in the order of the rank's pair table (the
document's order), as the library sums them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .callsites import Mapping, addresses, mappings

SITE_TABLES = ("sites", "pairs", "post_sites", "end_sites")
PAIR_SEP = "\x1f"
UNKNOWN = "unknown"

Cell = dict[str, Any]
OWN_SUMMED = ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s", "calls", "call_s")


def place(addr: int, maps: list[Mapping]) -> str:
    for m in maps:
        if m.start <= addr < m.end:
            return f"{m.path}+{addr - m.start + m.offset:#x}"
    return f"{addr:#x}"


def where_of(site: dict[str, Any] | None, maps: list[Mapping]) -> str:
    """Where a site of a rank document is ("" for the unknown site)."""
    if site is None or not site.get("id"):
        return ""
    return " < ".join(place(a, maps) for a in addresses(site))


def _add_own(table: dict[str, Cell], name: str, cell: Cell) -> None:
    """One rank's cells of one name summed in their order: its ranks stay 1, its worst
    is its sum (mop_js_add_own)."""
    mine = table.get(name)
    if mine is None:
        table[name] = dict(cell)
        return
    for k in OWN_SUMMED:
        mine[k] += cell[k]
    mine["worst_s"] = mine["nonoverlap_s"]


def site_tables(doc: dict[str, Any], rank: int, cell: Callable[[dict[str, Any], int], Cell]
                ) -> tuple[dict[str, dict[str, Cell]], dict[str, str]]:
    """The four tables of one rank's document, and the label its document gives each place
    (profile/documents/callsites.py resolved them when the run was collected)."""
    prof = doc.get("profile") or {}
    maps = mappings(doc)
    by_id = {int(s.get("id") or 0): s for s in prof.get("sites") or []}
    names: dict[int, str] = {}
    labels: dict[str, str] = {}
    tables: dict[str, dict[str, Cell]] = {t: {} for t in SITE_TABLES}

    def name(sid: int) -> str:
        if sid not in names:
            site = by_id.get(sid) if sid else None
            where = where_of(site, maps)
            if site is not None and where:
                labels.setdefault(where, str(site.get("label") or where))
            fn = str((site or {}).get("fn") or "") if where else ""
            names[sid] = f"{where}\t{fn}"
        return names[sid]

    for sid, site in by_id.items():
        _add_own(tables["sites"], name(sid),
                 cell({"calls": site.get("calls"), "call_s": site.get("call_s")}, rank))
    for e in prof.get("pairs") or []:
        post, end = name(int(e.get("post") or 0)), name(int(e.get("end") or 0))
        c = cell(e, rank)
        _add_own(tables["post_sites"], post, c)
        _add_own(tables["end_sites"], end, c)
        _add_own(tables["pairs"], f"{post}{PAIR_SEP}{end}", {**c, "calls": int(e.get("polled")
                                                                             or 0)})
    return tables, labels


def tables_from_file(doc: dict[str, Any], cell: Callable[[dict[str, Any]], Cell]
                     ) -> dict[str, dict[str, Cell]]:
    """The four tables of profile.stats.json, keyed by name as site_tables keys them."""
    out: dict[str, dict[str, Cell]] = {t: {} for t in SITE_TABLES}
    for e in doc.get("sites") or []:
        out["sites"][f"{e['site']}\t{e['fn']}"] = cell(e)
    for t in ("post_sites", "end_sites"):
        for e in doc.get(t) or []:
            out[t][f"{e['site']}\t{e['fn']}"] = cell(e)
    for e in doc.get("pairs") or []:
        key = f"{e['post']}\t{e['post_fn']}{PAIR_SEP}{e['end']}\t{e['end_fn']}"
        out["pairs"][key] = {**cell(e), "calls": int(e["polled"])}
    return out


def split(name: str) -> tuple[str, str]:
    """(where, function) of a site's name."""
    where, _, fn = name.partition("\t")
    return where, fn


def places(tables: dict[str, dict[str, Cell]]) -> set[str]:
    """Every place the tables name (not the unknown site's "")."""
    out: set[str] = set()
    for t, table in tables.items():
        for name in table:
            for site in (name.split(PAIR_SEP) if t == "pairs" else [name]):
                where = split(site)[0]
                if where:
                    out.add(where)
    return out


def places_in_file(doc: dict[str, Any]) -> set[str]:
    """Every place profile.stats.json names (not the unknown site's "")."""
    out = {e["site"] for t in ("sites", "post_sites", "end_sites") for e in doc.get(t) or []}
    out |= {e[k] for e in doc.get("pairs") or [] for k in ("post", "end")}
    out.discard("")
    return out
