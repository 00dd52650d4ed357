"""`mpi-overlap predict RUN_DIR`: a traced profile run replayed on a target (the run's own
table, another table, a link on top of it, the overlap and progress what-ifs), with the
predicted and recorded run time, MPI time and waiting per rank and per call site, in the
terminal and in predict.json in the run directory."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..core.formatting import fmt_time
from ..profile.trace.dtypes import Layout
from .bounds import call_bounds, totals
from .engine import (
    RankFigures,
    Replay,
    call_waits,
    departures,
    figures,
    on_target,
    recorded,
    recorded_link_waits,
    replay,
    sent_from_completion,
    with_flight,
)
from .gains import Labels, gains, site_labels
from .links import link_use
from .model import (
    OVERLAPS,
    PROGRESS,
    Costs,
    Link,
    Target,
    costs,
    moves_into_a_node,
    parse_latency,
    parse_rate,
)
from .program import Program, build_program
from .sites import by_function, by_site
from .words import (
    JOB_FIGURES,
    OUT_FILE,
    SCHEMA,
    SITE_HEADERS,
    SITES_SHOWN,
    change_text,
    gain_text,
    link_lines,
    overlap_rows,
    payload_work_text,
    per_call_text,
    site_cells,
    sites_left_text,
    target_words,
    text_columns,
)


@dataclass
class Request:
    run_dir: Path
    table: Path | None = None
    link: str | None = None
    latency: str | None = None
    overlap: str = "model"
    progress: str = "calls"
    gains: bool = True  # replay each advice item too (one or two replays per item)
    placement: int | None = None  # ranks per node in the target (None: as recorded)
    # time the layouts of the messages the placement packs into a node on 2 ranks here
    # (probe.py), and price their ends' own work with that
    probe: bool = False


def load_program(run_dir: Path) -> tuple[Program, Any, dict[str, Any]]:
    """The run's program, the table it used (XferTable) and its analysis.json ({} when
    it cannot be read)."""
    from ..analysis.run_table import used_table
    from ..profile.documents.rank_documents import RankDocumentStream
    from ..profile.trace.matched_run import read_matched

    run = read_matched(run_dir)  # one line when there is none, or one is not a trace
    traces, timelines, matched = run.traces, run.timelines, run.matched
    size = max(t.size for t in traces)
    if len(traces) != size:
        raise UserError(f"{run_dir}: {size - len(traces)} of {size} ranks left no trace; "
                        "a replay needs every rank")
    # the rank documents wherever the library left them (the job file, per-rank files);
    # one that cannot be read leaves its rank's host unknown
    hosts = {rank: doc["host"] for rank, doc, _ in RankDocumentStream(run_dir)
             if isinstance(doc.get("host"), str)}
    prog = build_program(timelines, matched, hosts)
    if matched.unmatched_sends or matched.unmatched_recvs:
        prog.left_out["sends and receives without a partner in the traces"] = (
            matched.unmatched_sends + matched.unmatched_recvs)
    analysis_path = run_dir / "analysis.json"
    try:
        analysis = json.loads(analysis_path.read_text())
    except (OSError, ValueError):
        analysis = {}
    if not isinstance(analysis, dict):
        analysis = {}
    return prog, used_table(analysis), analysis


def target_of(req: Request, run_table: Any) -> Target:
    from ..calibration.xfer_table import read_table

    if req.overlap not in OVERLAPS:
        raise UserError(f"--overlap {req.overlap}: choose none or perfect")
    if req.progress not in PROGRESS:
        raise UserError(f"--progress {req.progress}: choose async")
    if (req.link is None) != (req.latency is None):
        raise UserError("--link and --latency go together, e.g. --link 200mbit --latency 50us")
    link = None
    if req.link is not None and req.latency is not None:
        link = Link(parse_rate(req.link), parse_latency(req.latency))
    table = read_table(req.table) if req.table is not None else run_table
    if table is None:
        raise UserError(f"{req.run_dir}: the transfer-time table the run used is gone or "
                        "changed since; give one with --table PATH")
    if req.placement is not None and req.placement < 1:
        raise UserError(f"--placement {req.placement}: give the ranks per node, 1 or more")
    return Target(table=table, link=link, overlap=req.overlap, progress=req.progress,
                  placement=req.placement)


def table_with(table: Any, classes: tuple[str, ...]) -> Path | None:
    """This state's table for the MPI build and the kind of machine `table` was made for
    (xfer_table.table_path), where that is another file and prices every one of
    `classes`: what a prediction whose table lacks a class the placement needs can be
    given with --table (a two-node run's table has no intra-node class; `calibrate` on
    one node of that machine makes one, and one on two nodes keeps it)."""
    from ..calibration.xfer_table import read_fitting, table_path

    path = table_path(table.toolchain_name, table.machine_fp, table.toolchain_fp)
    try:
        if table.path is not None and path.is_file() and path.samefile(table.path):
            return None
    except OSError:
        return None
    found = read_fitting(path, table.machine_fp, table.toolchain_fp)
    return path if found is not None and all(found.points.get(c) for c in classes) else None


def _pct(pred: float, rec: float) -> float | None:
    return None if rec <= 0 else 100.0 * (pred - rec) / rec


def _job(figs: list[RankFigures], ranks: list[dict[str, float]]) -> dict[str, Any]:
    """The job's figures; `ranks` each rank's overlap totals (bounds.totals)."""
    start = min(f.start_s for f in figs)
    return {"run_s": max(f.end_s for f in figs) - start,
            "mpi_s": sum(f.mpi_s for f in figs) / len(figs),
            "waiting_s": sum(f.waiting_s for f in figs) / len(figs),
            # summed over the ranks, as the profile's job figures are
            "overlap": {k: sum(t[k] for t in ranks) for k in ranks[0]} if ranks else {}}


def predict(req: Request) -> dict[str, Any]:
    """The prediction document (also written to predict.json in the run directory)."""
    prog, run_table, analysis = load_program(req.run_dir)
    target = target_of(req, run_table)  # refuses a run without its table and no --table
    if not any(len(c) >= 3 for c in prog.calls):
        raise UserError(f"{req.run_dir}: the traces hold no MPI call between MPI_Init and "
                        "MPI_Finalize")
    rec_costs = costs(prog, Target(table=run_table or target.table))
    priced = costs(prog, target)
    packed = [k for k in range(len(prog.msgs)) if moves_into_a_node(rec_costs, priced, k)]
    probed = _probe(req, prog, packed) if req.probe and packed else None
    # the unexplained time on the target, and the time in flight the table does not price
    if probed is None:
        resid, extra = on_target(prog, rec_costs, priced)
        tgt_costs = with_flight(priced, extra)
    else:
        # the messages whose MPI_Isend the target's MPI does not send from move as
        # rendezvous ones do (probe.deferred), whatever the table's eager limit; the packed
        # messages' own work is what the probe timed here, their sends' before their data
        # leaves (departures)
        sent = sent_from_completion(priced, probed["queued"])
        resid, extra = on_target(prog, rec_costs, sent, carried=0.0, probed=probed["work"])
        later = departures(prog, probed["work"])
        probed["departures"] = {"messages": sum(1 for x in later if x > 0.0),
                                "seconds": sum(later)}  # said in payload_work's probe
        probed["deferred"] = len(probed["queued"])
        tgt_costs = with_flight(sent, [x + d for x, d in zip(extra, later, strict=True)])
    started = time.perf_counter()
    rep = replay(prog, tgt_costs, resid, target.overlap, target.progress)
    seconds = time.perf_counter() - started
    if rep.unresolved:
        raise UserError(f"{req.run_dir}: the replay could not complete rank(s) "
                        f"{', '.join(map(str, rep.unresolved))} (a call waits for a partner "
                        "the traces do not hold)")
    as_recorded = recorded(prog)
    waits = call_waits(prog, as_recorded), call_waits(prog, rep)
    rec = figures(prog, as_recorded, waits[0])
    pred = figures(prog, rep, waits[1])
    # the recorded bounds at the recorded table are the profile's; the predicted ones at
    # the target's transfer times on the replayed timeline
    bounds = call_bounds(prog, as_recorded, rec_costs), call_bounds(prog, rep, tgt_costs)
    labels = site_labels(req.run_dir, prog.ranks)
    sites = by_site(prog, as_recorded, rep, waits, labels, bounds)
    over = [totals(b) for b in bounds[0]], [totals(b) for b in bounds[1]]
    rj, pj = _job(rec, over[0]), _job(pred, over[1])
    with_missing = (table_with(target.table, tgt_costs.needed_classes)
                    if tgt_costs.missing_classes else None)
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "run_dir": str(req.run_dir),
        "target": {
            "table": str(target.table.path) if target.table.path else None,
            "table_is_the_runs": req.table is None,
            "link": ({"rate": req.link, "rate_bits_per_s": target.link.rate_bits_per_s,
                      "latency_s": target.link.latency_s,
                      "one_rank_per_node": tgt_costs.link_nodes}
                     if target.link else None),
            "overlap": target.overlap,
            "progress": target.progress,
            "placement": target.placement,
            # priced with the other class: the table has no times for these pairs
            "missing_classes": list(tgt_costs.missing_classes),
            # a table of this state that has them all (None: none found)
            "table_with_missing": str(with_missing) if with_missing else None,
        },
        "recorded": {**rj, "ranks": [_rank(f, over[0]) for f in rec]},
        "predicted": {**pj, "ranks": [_rank(f, over[1]) for f in pred]},
        "error_pct": {k: _pct(pj[k], rj[k]) for k in ("run_s", "mpi_s", "waiting_s")},
        # the pass that ran (engine.replay: "c" where its library is built), and why the
        # Python one where the C one was not there
        "replay": {"events": rep.events, "seconds": seconds, "engine": rep.engine,
                   "engine_note": rep.engine_note,
                   "events_per_s": rep.events / seconds if seconds > 0 else None,
                   "messages": len(prog.msgs), "collectives": len(prog.colls),
                   "calls": sum(max(len(c) - 2, 0) for c in prog.calls),
                   # the recorded receives' time beyond the table's T, moved into the
                   # messages' T on this target (engine.on_target)
                   "flight_moved": {"messages": sum(1 for x in extra if x > 0.0),
                                    "seconds": sum(extra)}},
        "payload_work": _payload_work(prog, packed, rec_costs, priced, target, probed),
        # --probe that had nothing to time, and why
        "probe_note": (None if not req.probe or (probed and probed["cases"]) else
                       "no message moves into a node on this target" if not packed else
                       "the messages it packs into a node are contiguous at both ends: the "
                       "table prices them, and their recorded payload work is left out"),
        "functions": by_function(sites),
        "sites": sites,
        # per link direction: what it carried, how busy it was, what waited for it (the
        # recorded side: the same rule at the recorded times); none under `perfect`
        "links": {"recorded": link_use(prog, rec_costs,
                                       recorded_link_waits(rec_costs, as_recorded), rj["run_s"]),
                  "predicted": (link_use(prog, tgt_costs, rep.link_wait, pj["run_s"])
                                if target.overlap != "perfect" else [])},
        "advice_gains": _advice_gains(req, prog, tgt_costs, resid, target, rep, analysis,
                                      labels),
        "left_out": dict(sorted(prog.left_out.items())),
    }
    from ..core.file_output import write_json

    try:
        write_json(req.run_dir / OUT_FILE, doc)
    except OSError as err:
        raise UserError(f"cannot write {req.run_dir / OUT_FILE}: {err.strerror or err}",
                        74) from None
    return doc


def _probe(req: Request, prog: Program, packed: list[int]) -> dict[str, Any]:
    """The layouts of the packed messages timed on 2 ranks here with the run's MPI
    (probe.py): per case what was timed, and per message its ends' own work (none to time
    where every packed message is contiguous at both ends: no case, no work)."""
    from ..run.rundir import load_run
    from .probe import PROBE_DIR, cases, deferred, end_work, run_probe

    found, index = cases(prog, packed)
    toolchain = load_run(req.run_dir).toolchain
    results = run_probe(req.run_dir, found, toolchain) if found else []
    counts = [0] * len(found)
    for i in index.values():
        counts[i] += 1
    return {"work": end_work(prog, index, results), "queued": deferred(index, results),
            "toolchain": toolchain,
            "dir": str(req.run_dir / PROBE_DIR),
            "cases": [{"send": c.send.words() if c.send else "contiguous",
                       "receive": c.recv.words() if c.recv else "contiguous",
                       "bytes": c.nbytes, "messages": n,
                       **{k: r[k] for k in ("layout_s", "contiguous_s", "error") if k in r}}
                      for c, n, r in zip(found, counts, results, strict=True)]}


def _payload_work(prog: Program, packed: list[int], rec: Costs, priced: Costs,
                  target: Target, probed: dict[str, Any] | None) -> dict[str, Any] | None:
    """Where messages that crossed nodes as recorded stay within one node on the target:
    their count and the job's figures replayed without the time the recorded calls spent
    on their payload beyond the table (engine.on_target with carried=0) and, where the
    prediction used the probe instead, with it kept whole (carried=1): the range's ends;
    None where no message does."""
    if not packed:
        return None
    ends = {"without": 0.0} if probed is None else {"without": 0.0, "kept": 1.0}
    out: dict[str, Any] = {"messages": len(packed)}
    for name, carried in ends.items():
        # the table's protocol and flight, without what the probe measured (its deferred
        # sends and their departures): the range is what the trace and the table say
        resid, extra = on_target(prog, rec, priced, carried=carried)
        rep = replay(prog, with_flight(priced, extra), resid, target.overlap, target.progress)
        job = _job(figures(prog, rep, call_waits(prog, rep)), [])
        out[name] = {k: job[k] for k in ("run_s", "mpi_s", "waiting_s")}
    # the datatype layouts of those messages (trace version 3), most messages first
    # (messages share their rank's Layout objects: each is put in words once)
    said: dict[int, str] = {}

    def words_of(x: Layout) -> str:
        if id(x) not in said:
            said[id(x)] = x.words()
        return said[id(x)]

    layouts: dict[str, int] = {}
    for k in packed:
        for words in {words_of(x) for x in prog.msgs[k].layouts if x is not None}:
            layouts[words] = layouts.get(words, 0) + 1
    out["layouts"] = [{"layout": w, "messages": n}
                      for w, n in sorted(layouts.items(), key=lambda x: -x[1])]
    if probed is not None:
        out["probe"] = {k: v for k, v in probed.items() if k not in ("work", "queued")}
    return out


def _advice_gains(req: Request, prog: Program, c: Costs, resid: list[dict[str, float]],
                  target: Target, rep: Replay, analysis: dict[str, Any],
                  labels: Labels) -> dict[str, Any]:
    """The profile's advice items replayed with their change (gains.py), on this target;
    only under the model's overlap rules (the what-ifs `none` and `perfect` already fix
    every transfer's overlap)."""
    items = analysis.get("advice")
    if not req.gains:
        return {"items": [], "note": "not asked for"}
    if not isinstance(items, list) or not items:
        return {"items": [], "note": "the profile gave no advice"}
    if target.overlap != "model":
        return {"items": [], "note": f"not replayed under --overlap {target.overlap}"}
    return {"items": gains(prog, c, resid, target.progress, rep, items, labels),
            "note": None}


def _rank(f: RankFigures, over: list[dict[str, float]]) -> dict[str, Any]:
    return {"rank": f.rank, "run_s": f.end_s - f.start_s, "mpi_s": f.mpi_s,
            "waiting_s": f.waiting_s, "overlap": over[f.rank]}


def _describe_gains(g: dict[str, Any]) -> list[str]:
    rows = g.get("items") or []
    if not rows:
        return [f"advice gains: {g['note']}"] if g.get("note") else []
    out = ["Advice replayed with its change (gain = predicted run time minus the changed "
           "replay's; the profile's per-call sum beside it):"]
    for row in rows:
        where = ", ".join(f"{k} {v}" for k, v in (row.get("sites") or {}).items() if v)
        head = f"  {row['item']}. {row['rule']}" + (f" ({where})" if where else "")
        bound = per_call_text(row)
        per_call = f"per-call sum {bound}" if bound is not None else ""
        gain = gain_text(row)
        if gain is None:
            out.append(f"{head}: {per_call}; not replayed: {row.get('note')}")
            continue
        named = row.get("named") or {}
        what = ", ".join(f"{n} {k}" for k, n in named.items() if n)
        out.append(f"{head}: replayed gain {gain}"
                   + f", {per_call} [{row['applied']}{': ' + what if what else ''}; "
                   f"waiting removed on rank {row['critical_rank']}, the last to end: "
                   f"{fmt_time(row['waiting_removed_s'])}]")
    return out


def _describe_sites(rows: list[dict[str, Any]]) -> list[str]:
    """The call sites with the most recorded MPI time, as columns (the rest counted)."""
    if not rows:
        return []
    cells = [site_cells(r) for r in rows[:SITES_SHOWN]]
    cells = [(_cut(c[0], 48), *c[1:]) for c in cells]
    out = [f"MPI time by call site, all ranks (the {len(cells)} of {len(rows)} with the "
           "most recorded time):", *text_columns(SITE_HEADERS, cells)]
    left = sites_left_text(rows, SITES_SHOWN)
    if left:
        out.append(f"  and {left}")
    return out


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def describe(doc: dict[str, Any]) -> list[str]:
    t = doc["target"]
    rec, pred = doc["recorded"], doc["predicted"]
    lines = [f"Replay on {target_words(t)}:",
             f"{'':22}{'recorded':>12}{'predicted':>12}{'change':>10}"]
    for key, name in JOB_FIGURES:
        lines.append(f"{name:22}{fmt_time(rec[key]):>12}{fmt_time(pred[key]):>12}"
                     f"{change_text(doc, key):>10}")
    over = overlap_rows(doc)
    if over:
        n = doc["recorded"]["overlap"]["transfers"]
        lines.append(f"the {n} transfers the profile counts, all ranks (overlap bounds):")
        lines += [f"  {name:20}{r:>12}{p:>12}{ch:>10}" for name, r, p, ch in over]
    lines.append("per rank (recorded → predicted): run time, MPI time, waiting")
    for r, p in zip(rec["ranks"], pred["ranks"], strict=True):
        lines.append(f"  rank {r['rank']}: {fmt_time(r['run_s'])} → {fmt_time(p['run_s'])}, "
                     f"{fmt_time(r['mpi_s'])} → {fmt_time(p['mpi_s'])}, "
                     f"{fmt_time(r['waiting_s'])} → {fmt_time(p['waiting_s'])}")
    top = doc["functions"][:5]
    if top:
        lines.append("MPI time by function, all ranks (recorded → predicted): " + "; ".join(
            f"{f['fn']} ×{f['calls']} {fmt_time(f['recorded_s'])} → "
            f"{fmt_time(f['predicted_s'])}" for f in top))
    lines += link_lines(doc)
    lines += _describe_sites(doc.get("sites") or [])
    rp = doc["replay"]
    rate = rp["events_per_s"]
    lines.append(f"{rp['calls']} calls, {rp['messages']} messages, {rp['collectives']} "
                 f"collectives; {rp['events']} events replayed in {fmt_time(rp['seconds'])}"
                 + (f" ({rate / 1e6:.2f} M events/s" if rate else "")
                 + (f", {'C' if rp.get('engine') == 'c' else 'Python'} pass)" if rate else ""))
    if rp.get("engine_note"):
        lines.append(f"note: {rp['engine_note']}")
    moved = rp.get("flight_moved") or {}
    if moved.get("messages"):
        lines.append(f"note: {moved['messages']} messages got {fmt_time(moved['seconds'])} in "
                     "flight beyond the table's T, the share of T the recorded receives took "
                     "longer (docs/method.md, \"The time in flight the table does not price\")")
    payload = payload_work_text(doc)
    if payload:
        lines.append(f"note: {payload}")
    if doc.get("probe_note"):
        lines.append(f"note: --probe timed nothing: {doc['probe_note']}")
    lines += _describe_gains(doc.get("advice_gains") or {})
    for why, n in doc["left_out"].items():
        lines.append(f"note: left out: {n} {why}")
    found = t.get("table_with_missing")
    for cls in t.get("missing_classes") or []:
        other = "inter" if cls == "intra" else "intra"
        lines.append(f"note: the table has no {cls}-node times: those messages were priced "
                     f"with its {other}-node times ("
                     + (f"this MPI's table for that machine has them: --table {found}"
                        if found else "give a table that has both with --table") + ")")
    lines.append(f"wrote {Path(doc['run_dir']) / OUT_FILE}")
    return lines
