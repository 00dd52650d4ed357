"""Advice gains from replay (issue 36, item 2; docs/method.md, "Advice gains from
replay"): each advice item of a traced profile (profile/analysis/advice.py) replayed with its
change applied, on the same target and model as the prediction, so that the gain counts
what propagates along the chain of waits between ranks; the profile's per-call sum stays
beside it as the local bound.

What each rule's change is in the replay (engine.Change):

* progress (MPI_Test in the computation, or asynchronous progress): the named ends are
  polled from their post, so a rendezvous message moves as soon as its other end's MPI
  has polled it too (an eager one already moves without either end, a non-blocking
  collective synchronises on its posts: neither gains); beside it, the gain with both
  ends of the named messages polled from their posts (MPI_Test on both sides, or the
  MPI's asynchronous progress for these messages);
* move-computation and nonblocking: the named ends are hidden (their transfer costs
  nothing beyond the model's overheads; they still wait for the partner's post); a
  blocking collective named by a nonblocking item costs only its synchronisation;
* eager-limit: the bin's messages move eagerly, without overheads: the send completes at
  its post, the data is in the receiver's MPI the whole time T later;
* imbalance: the work evened out per step: between consecutive collectives over all
  ranks (the steps every rank passes in the same order), each rank's computation is
  scaled so that it computes the ranks' mean for that step (the total kept); without
  such collectives in the same order on every rank, over the whole run.

An item names its ends by call site: the profile's labels of the sites (result.json's
rank documents) against the call site each traced call's ENTER holds (program.Call.site).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..profile.documents.callsites import addresses
from .engine import NO_CHANGE, Change, Replay, call_keys, replay
from .model import Costs, incall_cost
from .program import (
    COLL_BLOCK,
    COLL_DONE,
    COLL_POST,
    RECV_BLOCK,
    RECV_DONE,
    RECV_POST,
    SEND_BLOCK,
    SEND_DONE,
    SEND_POST,
    Program,
)

PAIR_RULES = {"progress": "polled from the post", "move-computation": "hidden",
              "nonblocking": "hidden"}
APPLIED = {**PAIR_RULES, "eager-limit": "sent eagerly", "imbalance": "computation balanced"}

Labels = list[dict[int, set[str]]]  # per rank: call-site address -> the sites' labels


def site_labels(run_dir: Path, ranks: int) -> Labels:
    """Per rank, each call site's address and its labels (result.json's rank documents,
    which collect resolved; a chain of --callsite-depth frames is found by its innermost
    one). Empty where result.json or its documents are missing."""
    out: Labels = [{} for _ in range(ranks)]
    try:
        doc = json.loads((run_dir / "result.json").read_text())
    except (OSError, ValueError):
        return out
    for rd in (doc.get("ranks") or []) if isinstance(doc, dict) else []:
        rank = rd.get("rank") if isinstance(rd, dict) else None
        if not isinstance(rank, int) or not 0 <= rank < ranks:
            continue
        for s in (rd.get("profile") or {}).get("sites") or []:
            found, label = addresses(s), s.get("label")
            if found and isinstance(label, str):
                out[rank].setdefault(found[0], set()).add(label)
    return out


@dataclass
class _Ends:
    """Where each message end and collective membership is posted and completed: per
    side (0 send, 1 receive) message -> (rank, posting call, completing call); per
    collective (rank, posting call, completing call) of each member."""

    msg: tuple[dict[int, list[int]], dict[int, list[int]]] = field(
        default_factory=lambda: ({}, {}))
    coll: list[list[list[int]]] = field(default_factory=list)


def _ends(prog: Program) -> _Ends:
    out = _Ends(coll=[[] for _ in prog.colls])
    for r, cs in enumerate(prog.calls):
        for i, c in enumerate(cs):
            for op, k in c.ops:
                if op < COLL_BLOCK:
                    side = op & 1
                    if op in (SEND_POST, RECV_POST, SEND_BLOCK, RECV_BLOCK):
                        out.msg[side][k] = [r, i, i]
                    elif op in (SEND_DONE, RECV_DONE) and k in out.msg[side]:
                        out.msg[side][k][2] = i
                elif op in (COLL_POST, COLL_BLOCK):
                    out.coll[k].append([r, i, i])
                elif op == COLL_DONE:
                    for m in out.coll[k]:
                        if m[0] == r:
                            m[2] = i
    return out


@dataclass
class Plan:
    """An item's change: what the engine applies, the costs it replays on, how many ends it
    names, and its local figure in the model's terms (the named ends' whole transfer
    times; the property test's bound; for imbalance, gains() puts the critical rank's
    computation taken off)."""

    change: Change
    costs: Costs
    sends: int = 0
    receives: int = 0
    collectives: int = 0
    local_s: float = 0.0


def _matches(prog: Program, labels: Labels, r: int, i: int, label: str, fn: str | None) -> bool:
    c = prog.calls[r][i]
    return label in labels[r].get(c.site, ()) and (not fn or fn == c.fn)


def plan(item: dict[str, Any], prog: Program, labels: Labels, costs: Costs,
         ends: _Ends | None = None) -> Plan | None:
    """The replay change of one advice item; None for a rule the replay does not express."""
    rule = item.get("rule")
    ev = item.get("evidence") or {}
    if rule in PAIR_RULES:
        ends = ends or _ends(prog)
        post, end = (item.get("sites") or {}).get("post"), (item.get("sites") or {}).get("end")
        post_fn, end_fn = ev.get("post_fn"), ev.get("end_fn")
        named: tuple[set[int], set[int]] = (set(), set())
        for side in (0, 1):
            for k, (r, i, j) in ends.msg[side].items():
                if (_matches(prog, labels, r, i, post, post_fn)
                        and _matches(prog, labels, r, j, end, end_fn)):
                    named[side].add(k)
        coll = list(costs.coll)
        ncoll = 0
        for k, members in enumerate(ends.coll):
            if any(_matches(prog, labels, r, i, post, post_fn)
                   and _matches(prog, labels, r, j, end, end_fn) for r, i, j in members):
                ncoll += 1
                if rule != "progress":  # hidden: only its synchronisation is left
                    coll[k] = 0.0
        sets = (frozenset(named[0]), frozenset(named[1]))
        change = Change(polled=sets) if rule == "progress" else Change(hidden=sets)
        local = (sum(costs.T[k] for k in named[0]) + sum(costs.T[k] for k in named[1])
                 + sum(c - x for c, x in zip(costs.coll, coll, strict=True)))
        return Plan(change, replace(costs, coll=coll), len(named[0]), len(named[1]), ncoll,
                    local)
    if rule == "eager-limit":
        lo, hi = ev.get("bin_lo"), ev.get("bin_hi")
        if not isinstance(lo, int) or not isinstance(hi, int):
            return None
        eager, o_s, o_r = list(costs.eager), list(costs.o_s), list(costs.o_r)
        n = 0
        for k, m in enumerate(prog.msgs):
            if lo <= m.nbytes < hi and not eager[k]:
                eager[k], o_s[k], o_r[k] = True, 0.0, 0.0
                n += 1
        return Plan(NO_CHANGE, replace(costs, eager=eager, o_s=o_s, o_r=o_r), n, n, 0,
                    sum(costs.T[k] for k, m in enumerate(prog.msgs) if lo <= m.nbytes < hi))
    if rule == "imbalance":
        factors = balanced(prog)
        return None if factors is None else Plan(Change(compute=factors), costs)
    return None


def _steps(prog: Program) -> list[list[int]]:
    """Per rank, the call indices that start its steps: 0, then each call of a collective
    over all ranks, when every rank calls the same such collectives in the same order;
    else [0] on every rank (one step)."""
    n = prog.ranks
    seqs: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # (collective, call index)
    whole = {k for k, cl in enumerate(prog.colls) if len(cl.members) == n}
    for r, cs in enumerate(prog.calls):
        for i, c in enumerate(cs):
            for op, k in c.ops:
                if op in (COLL_BLOCK, COLL_DONE) and k in whole:
                    seqs[r].append((k, i))
    order = [[k for k, _ in s] for s in seqs]
    if any(o != order[0] for o in order):
        return [[0] for _ in range(n)]
    return [[0] + [i for _, i in s] for s in seqs]


def balanced(prog: Program) -> list[list[float]] | None:
    """Per rank and call, the factor on the computation after it that evens the work out
    per step (_steps): each rank's computation in a step becomes the ranks' mean for it.
    None when no rank computes."""
    starts = _steps(prog)
    gaps = prog.gaps()
    factors = [[1.0] * len(g) for g in gaps]
    nsteps = min((len(s) for s in starts), default=0)
    any_work = False
    for step in range(nsteps):
        spans = [(s[step], s[step + 1] if step + 1 < len(s) else len(g))
                 for s, g in zip(starts, gaps, strict=True)]
        work = [sum(g[a:b]) for g, (a, b) in zip(gaps, spans, strict=True)]
        mean = sum(work) / len(work)
        for f, w, (a, b) in zip(factors, work, spans, strict=True):
            if w > 0:
                f[a:b] = [mean / w] * (b - a)
                any_work = True
    return factors if any_work else None


def _windows(prog: Program, rep: Replay) -> list[tuple[int, float, float]]:
    """Per rank with calls: (rank, its first call's exit, its last call's enter), the window
    engine.figures gives, without the per-call waiting figures() works out too."""
    return [(r, rep.exit[r][0], rep.enter[r][-1]) for r, cs in enumerate(prog.calls)
            if len(cs) >= 2]


def run_s(prog: Program, rep: Replay) -> float:
    w = _windows(prog, rep)
    return max(e for _, _, e in w) - min(s for _, s, _ in w)


def critical_rank(prog: Program, rep: Replay) -> int:
    """The rank that ends last (enters MPI_Finalize last)."""
    return max(_windows(prog, rep), key=lambda x: x[2])[0]


def _own(c: Costs, ops: list[tuple[int, int]], change: Change) -> float:
    """incall_cost with the change's hidden rendezvous ends left out: a hidden end keeps
    only the model's overheads, which for an eager end are incall_cost's own part of it
    (o_s of the send's post, o_r of the receive's completion) and for a rendezvous end
    nothing."""
    hid = change.hidden
    if not (hid[0] or hid[1]):
        return incall_cost(c, ops)
    return incall_cost(c, [(op, k) for op, k in ops
                           if op >= COLL_BLOCK or c.eager[k] or k not in hid[op & 1]])


def held(prog: Program, rep: Replay, c: Costs, resid: list[dict[str, float]],
         change: Change, rank: int) -> float:
    """The time the rank's calls take beyond their own costs (their residual and their
    operations' in-call cost, as the change leaves it): waiting for a partner's post, its
    MPI's progress or a collective's last member; less where a call returned before its
    own cost because its transfer moved during an earlier call's wait (not clamped, so
    that MPI time = this + the own costs exactly)."""
    total = 0.0
    keys = call_keys(prog)[rank]
    for i, call in enumerate(prog.calls[rank][1:-1], start=1):
        if call.ops:
            d = rep.exit[rank][i] - rep.enter[rank][i]
            total += d - resid[rank].get(keys[i], 0.0) - _own(c, call.ops, change)
    return total


def _clean(x: float) -> float:
    """0 for a difference below a picosecond (rounding of equal sums of floats)."""
    return 0.0 if abs(x) < 1e-12 else x


def gains(prog: Program, costs: Costs, resid: list[dict[str, float]], progress: str,
          base: Replay, items: list[dict[str, Any]], labels: Labels) -> list[dict[str, Any]]:
    """Per advice item (in the profile's order): its per-call sum (the profile's bound),
    the replayed gain (the model's run time minus the changed replay's, on the same
    target) and what the change named and removed. `base` is the model's replay."""
    base_run = run_s(prog, base)
    crit = critical_rank(prog, base)
    base_held = held(prog, base, costs, resid, NO_CHANGE, crit)
    ends = _ends(prog)
    out = []
    for n, item in enumerate(items, start=1):
        row: dict[str, Any] = {"item": n, "rule": item.get("rule"), "sites": item.get("sites"),
                               "bound_s": item.get("bound_s"),
                               "applied": APPLIED.get(str(item.get("rule")))}
        p = plan(item, prog, labels, costs, ends)
        if p is None:
            out.append({**row, "replayed_gain_s": None,
                        "note": "the replay does not express this rule"})
            continue
        row["named"] = {"sends": p.sends, "receives": p.receives,
                        "collectives": p.collectives}
        if item.get("rule") in PAIR_RULES and not (p.sends or p.receives or p.collectives):
            out.append({**row, "replayed_gain_s": None,
                        "note": "none of the traced calls is at the item's call sites"})
            continue
        rep = replay(prog, p.costs, resid, "model", progress, p.change)
        if rep.unresolved:
            out.append({**row, "replayed_gain_s": None,
                        "note": "the changed replay could not complete"})
            continue
        local = p.local_s
        if p.change.compute is not None:  # the critical rank's computation taken off
            local = sum(g * (1.0 - f) for g, f
                        in zip(prog.gaps()[crit][:-1], p.change.compute[crit][:-1],
                               strict=True))
        row.update(replayed_gain_s=_clean(base_run - run_s(prog, rep)), critical_rank=crit,
                   waiting_removed_s=_clean(base_held - held(prog, rep, p.costs, resid,
                                                             p.change, crit)),
                   model_local_s=_clean(local))
        if item.get("rule") == "progress":  # both ends of the named messages polled
            both = frozenset(p.change.polled[0] | p.change.polled[1])
            rep2 = replay(prog, p.costs, resid, "model", progress,
                          Change(polled=(both, both)))
            row["both_ends_gain_s"] = (None if rep2.unresolved
                                       else _clean(base_run - run_s(prog, rep2)))
        out.append(row)
    return out
