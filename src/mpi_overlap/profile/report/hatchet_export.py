"""A profile as Hatchet's literal format (a list of trees of {frame, metrics,
children}), which `hatchet.GraphFrame.from_literal` and `thicket.Thicket.from_literal`
read (docs/profiler.md, "Data out").

One tree, so that one GraphFrame answers every question:

    program                                  the job's totals
    ├─ MPI function (type "function")        the profile's ranking by function
    │  └─ call site (type "call site")       file:line as the profile names it
    │     └─ post → completion (type "pair") the pair's transfers
    ├─ "by size" → each size bin
    └─ "by region" → each region

A function holds the sites where it was called that posted or completed transfers (sites
that did neither are not in the analysis); a pair hangs under its posting site only, so
every pair is one node, and `transfers` … `nonoverlap_s` add up from pairs to sites to
functions (a transfer counts to the function that posted it). What a site completed is
in its `completed_*` metrics, which add up over sites to functions and to the job's
transfers. In
traced runs (`--trace`) waiting for late partners is on the function, size-bin and
region nodes and the root; the trace does not tie a wait to its call site, so sites and
pairs have none. The numbers are the analysis' (profile/analysis/profile.py, analysis/
callsites.py, profile/analysis/waits.py), so the export says what the report says; a breakdown's
node holds the sums of its children. `worst_rank` is the rank losing most at that node,
-1 when none lost any. A metric missing at a node is one the profile does not have there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.errors import UserError
from ...core.file_output import write_json
from ...run.rundir import load_run
from ..analysis.callsites import UNKNOWN
from .profile_table import analysis_of
from .profile_waits import available

# the measures of transfers, summed over entries
XFER = ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s")
# the numeric measures a ranking entry (or the job) carries that sum over entries
SUMMED = (*XFER, "calls", "call_s", "comp_s")
# measures that do not sum: the overlap range in % of xfer_s, how many ranks have the entry
RATIOS = ("min_pct", "max_pct", "ranks")
# waiting for late partners, in all and by pattern (profile/analysis/waits.py)
WAITS = ("waiting_s", "late_sender_s", "late_receiver_s", "collective_s")
COMPLETED = tuple(f"completed_{m}" for m in XFER)


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _metrics(entry: dict[str, Any], keys: tuple[str, ...] = (*SUMMED, *RATIOS)
             ) -> dict[str, float]:
    out = {m: float(entry[m]) for m in keys if _num(entry.get(m))}
    if "worst_rank" in entry:
        out["worst_rank"] = float(-1 if entry["worst_rank"] is None else entry["worst_rank"])
    return out


def _waits(entry: dict[str, Any] | None) -> dict[str, float]:
    return {m: float(entry[m]) for m in WAITS if entry and _num(entry.get(m))}


def _node(name: str, kind: str, metrics: dict[str, float],
          children: list[dict[str, Any]] | None = None, **frame: str) -> dict[str, Any]:
    node: dict[str, Any] = {"frame": {"name": name, "type": kind, **frame},
                            "metrics": metrics}
    if children:
        node["children"] = children
    return node


def _sums(nodes: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[str, float]:
    return {m: sum(n["metrics"].get(m, 0.0) for n in nodes) for m in keys
            if any(m in n["metrics"] for n in nodes)}


def _breakdown(title: str, kind: str, name_key: str, entries: list[dict[str, Any]],
               waits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    children = [_node(str(e[name_key]), kind,
                      {**_metrics(e), **_waits(waits.get(str(e[name_key])))})
                for e in entries]
    return _node(title, "breakdown", _sums(children, (*SUMMED, *WAITS)), children)


def _fn(fn: Any) -> str:
    """The MPI function as the tree names it: the unknown site's has none."""
    return str(fn) if fn else UNKNOWN


def _site_key(label: Any, fn: Any) -> tuple[str, str]:
    return str(label), _fn(fn)


def _function_nodes(rankings: dict[str, Any], waits: dict[str, dict[str, Any]]
                    ) -> list[dict[str, Any]]:
    """Each MPI function of the profile with its call sites and their pairs."""
    pairs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in rankings.get("pairs") or []:
        pair = _node(f"{p['post']} → {p['end']}", "pair", _metrics(p, (*XFER, *RATIOS, "polled")),
                     post=str(p["post"]), end=str(p["end"]), post_fn=_fn(p.get("post_fn")),
                     end_fn=_fn(p.get("end_fn")))
        pairs.setdefault(_site_key(p["post"], p.get("post_fn")), []).append(pair)
    # every site that posted or completed, in the rankings' order (most lost first)
    sites: dict[tuple[str, str], dict[str, float]] = {}
    for s in rankings.get("post_sites") or []:
        sites[_site_key(s["site"], s.get("fn"))] = _metrics(s)
    for s in rankings.get("end_sites") or []:
        done = {f"completed_{m}": float(s[m]) for m in XFER if _num(s.get(m))}
        key = _site_key(s["site"], s.get("fn"))
        if key in sites:
            sites[key].update(done)
        else:
            sites[key] = {**_metrics(s, ("calls", "call_s")), **done}
    by_fn: dict[str, list[dict[str, Any]]] = {}
    for (label, fn), metrics in sites.items():
        by_fn.setdefault(fn, []).append(
            _node(label, "call site", metrics, pairs.get((label, fn)), fn=fn))
    out = []
    ranked = {str(e["fn"]): e for e in rankings.get("functions") or []}
    for fn in [*ranked, *sorted(set(by_fn) - set(ranked))]:
        children = by_fn.get(fn, [])
        # a function the ranking lacks (the unknown site's): the sums of its sites
        own = _metrics(ranked[fn]) if fn in ranked else _sums(children, SUMMED)
        out.append(_node(fn, "function",
                         {**own, **_sums(children, COMPLETED), **_waits(waits.get(fn))},
                         children))
    return out


def hatchet_literal(analysis: dict[str, Any], program: str) -> list[dict[str, Any]]:
    rankings = analysis["rankings"]
    two_sided = available(analysis)  # traced runs: waiting for late partners
    waiting: dict[str, Any] = two_sided["waiting"] if two_sided else {}

    def waits_by(table: str, key: str) -> dict[str, dict[str, Any]]:
        return {str(e[key]): e for e in waiting.get(table) or []}

    functions = _function_nodes(rankings, waits_by("functions", "fn"))
    children = [
        *functions,
        _breakdown("by size", "size-bin", "label", rankings["bins"], waits_by("bins", "label")),
        _breakdown("by region", "region", "region", rankings["regions"],
                   waits_by("regions", "region")),
    ]
    root = _metrics(analysis["job"])
    # Hatchet takes the metric columns from the root's metrics: the root has each of them,
    # from the job where it has a total, else as the sum over the nodes that have it.
    root.setdefault("calls", float(sum(e["calls"] for e in rankings["functions"])))
    worst = analysis.get("worst_rank")
    root["worst_rank"] = float(worst["rank"]) if isinstance(worst, dict) else -1.0
    pairs = rankings.get("pairs") or []
    if pairs:
        root["polled"] = float(sum(p.get("polled") or 0 for p in pairs))
    ends = rankings.get("end_sites") or []
    if ends:
        root.update({f"completed_{m}": float(sum(s[m] for s in ends)) for m in XFER})
    root.update(_waits({"waiting_s": waiting.get("total_s"), **waiting}) if waiting else {})
    return [_node(program, "program", root, children)]


def export_hatchet(run_dir: Path, out: Path | None) -> Path:
    """Write the profile run's literal to `out` (default: <run_dir>/hatchet.json)."""
    run = load_run(run_dir)
    analysis = analysis_of(run) if run.benchmark == "profile" else None
    if not analysis or not analysis.get("ranks"):
        raise UserError(f"{run_dir}: not a profile run with results (`mpi-overlap profile` "
                        "makes one)")
    argv = ((run.result or {}).get("app") or {}).get("argv") or ["program"]
    target = out or run.path / "hatchet.json"
    write_json(target, hatchet_literal(analysis, Path(str(argv[0])).name))
    return target
