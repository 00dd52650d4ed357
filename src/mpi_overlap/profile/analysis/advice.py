"""Advice from a profile's measurements (docs/profiler.md, "Advice"): what to change, where
(call sites), the figures it rests on, and an upper bound on the time it can hide or save.
Pure: the analysis document and the ranks' profiles in, a list of JSON-ready dicts out,
largest bound first.

Rules, each on the (posting site → completing site) pairs of profile/analysis/callsites.py:

* move-computation — transfers posted by a non-blocking call and completed by a Wait- or
  Test-family call with non-overlapped time (xfer − max > 0): there was too little
  computation between post and completion to hide the transfer (max is capped by that
  computation). Independent computation moved between them can hide at most Σ(xfer − max).
* nonblocking — transfers that begin and end inside one blocking call (MPI_Send,
  MPI_Sendrecv, a blocking collective, ...): nothing can overlap them. Posting the
  non-blocking form before computation that does not need the data and completing it
  after can hide at most their transfer time.
* imbalance — ranks compute unequally: the ranks that compute less wait for the one that
  computes most, inside MPI calls. Evening out the computation can save at most the
  busiest rank's computation minus the mean, per step of the run. Named: the busiest
  rank, and where the least busy rank spends its MPI time. It must hold on CPU time too
  where that was measured (profile/analysis/cpu_time.py): a rank descheduled for other
  processes computes longer by the clock without having more work, and gets no advice.
* the rules the benchmark packages declare (Evidence, evidence.py: what the profile takes
  from the toolchain's own run of the benchmark, profile/run/toolchain_evidence.py, and
  the rule it feeds; handed in from above): each package's rule, run here in the specs'
  order on the analysis document with what its benchmark gave (analysis[key]); their
  module docstrings say what each advises (benchmarks.md, "How a benchmark feeds the
  profile").

A rule's advice is given when its bound is at least MIN_SHARE of the job's transfer time
(imbalance: of the busiest rank's computation) and at least MIN_BOUND_S.
"""

from __future__ import annotations

from typing import Any

from ...core.formatting import fmt_pct, fmt_time
from .advice_pairs import TESTS, WAITS, known_pairs
from .cpu_time import imbalance
from .evidence import declared, sources
from .profile_values import num

MIN_SHARE = 0.02
MIN_BOUND_S = 1e-6
TOP = 3  # advice items in the findings (all are in the document)

BLOCKING_P2P = frozenset({"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Recv",
                          "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Mrecv"})


def _nonblocking_form(fn: str) -> str:
    """MPI_Alltoall → MPI_Ialltoall; point-to-point → MPI_Irecv/MPI_Isend."""
    if fn in BLOCKING_P2P:
        return "MPI_Irecv/MPI_Isend"
    return "MPI_I" + fn[len("MPI_"):].lower() if fn.startswith("MPI_") else "its non-blocking form"


def _pair_advice(pairs: list[dict[str, Any]], threshold: float) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in known_pairs(pairs):
        xfer, hi = p.xfer, p.hi
        if p.one_call:
            bound = max(0.0, xfer - hi)
            if bound >= threshold:
                form = _nonblocking_form(p.post_fn)
                out.append({"rule": "nonblocking", "sites": p.sites, "evidence": p.evidence,
                            "bound_s": bound, "text": (
                                f"{p.post_fn} at {p.post} moves {p.raw['transfers']} transfers "
                                f"({fmt_time(xfer)}) entirely inside the call, where nothing "
                                f"can overlap them: post {form} before computation that "
                                "does not need the data and complete it after; at most "
                                f"{fmt_time(bound)} can be hidden.")})
            continue
        nonoverlap = max(0.0, xfer - hi)
        if p.end_fn in WAITS | TESTS and nonoverlap >= threshold:
            out.append({"rule": "move-computation", "sites": p.sites, "evidence": p.evidence,
                        "bound_s": nonoverlap, "text": (
                            f"Transfers {p.where} lose {fmt_time(nonoverlap)} that no "
                            f"computation between post and completion could hide (at most "
                            f"{fmt_time(hi)} of their {fmt_time(xfer)} had computation "
                            f"beside it): move computation that does not need their data "
                            f"between {p.post} and {p.end}; at most {fmt_time(nonoverlap)} "
                            "can be hidden.")})
    return out


def evidence_keys() -> list[str]:
    """The keys of the profile's result.json and analysis.json under which the benchmark
    packages' evidence lies (Evidence.key), in the specs' order."""
    return [declared(source).key for source in sources()]


def _declared(a: dict[str, Any], docs: list[dict[str, Any]], threshold: float,
              ) -> list[dict[str, Any]]:
    """The items of the rules the benchmark packages declare (Evidence, evidence.py), in
    the specs' order, each given what its benchmark's run gave the profile and named by
    the rule its spec declares."""
    out: list[dict[str, Any]] = []
    for source in sources():
        given = declared(source)
        rule = source.function(given.advise)
        out += [{"rule": given.rule, **item}
                for item in rule(a, docs, threshold, a.get(given.key))]
    return out


def busiest_site_entry(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The sites entry (a known site) with the most MPI call time on one rank."""
    sites = [s for s in (doc.get("profile") or {}).get("sites") or [] if s.get("id")]
    return max(sites, key=lambda s: num(s.get("call_s")), default=None)


def _busiest_site(doc: dict[str, Any]) -> tuple[str, str | None, float] | None:
    """The call site with the most MPI call time on one rank: (label, function, seconds)."""
    best = busiest_site_entry(doc)
    if best is None or not num(best.get("call_s")):
        return None
    label = str(best.get("label") or best.get("addr") or "unknown")
    return label, best.get("fn"), num(best.get("call_s"))


def _imbalance(a: dict[str, Any], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # On wall-clock time and, where measured, on CPU time (profile/analysis/cpu_time.py): where
    # only the first holds, the findings say how long the rank was descheduled instead.
    test = imbalance(a.get("ranks") or [])
    if test is None or test.on_cpu is False:
        return []
    busiest, idlest, mean, excess = (test.wall.busiest, test.wall.least, test.wall.mean_s,
                                     test.wall.excess_s)
    cpu_words, cpu_evidence = "", {}
    if test.cpu is not None:
        excess = min(excess, test.cpu.excess_s)  # descheduled time is not saved by moving work
        cpu_words = (f"; on the CPU {fmt_time(num(busiest['comp_cpu_s']))} and "
                     f"{fmt_time(num(idlest['comp_cpu_s']))}, mean "
                     f"{fmt_time(test.cpu.mean_s)}")
        cpu_evidence = {"busiest_comp_cpu_s": busiest["comp_cpu_s"],
                        "least_comp_cpu_s": idlest["comp_cpu_s"],
                        "mean_comp_cpu_s": test.cpu.mean_s}
    doc = next((d for d in docs if int(d.get("rank", -1)) == idlest["rank"]), {})
    site = _busiest_site(doc)
    where = ""
    if site is not None:
        where = (f"; rank {idlest['rank']} spends the most MPI time in {site[1] or '?'} at "
                 f"{site[0]} ({fmt_time(site[2])})")
    return [{"rule": "imbalance", "sites": {"wait": site[0] if site else None},
             "evidence": {"busiest_rank": busiest["rank"], "busiest_comp_s": busiest["comp_s"],
                          "least_rank": idlest["rank"], "least_comp_s": idlest["comp_s"],
                          "mean_comp_s": mean,
                          "least_call_s": idlest["call_s"], "busiest_call_s": busiest["call_s"],
                          **cpu_evidence},
             "bound_s": excess, "text": (
                 f"Load imbalance: rank {busiest['rank']} computes {fmt_time(busiest['comp_s'])}, "
                 f"rank {idlest['rank']} {fmt_time(idlest['comp_s'])} (mean "
                 f"{fmt_time(mean)}{cpu_words}); the ranks that compute less wait for rank "
                 f"{busiest['rank']} inside MPI calls{where}. Give rank {busiest['rank']} "
                 f"less of the work; the run can end at most {fmt_time(excess)} sooner.")}]


def advice(a: dict[str, Any], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every piece of advice the measurements support, largest bound first."""
    threshold = max(MIN_BOUND_S, MIN_SHARE * num(a["job"]["xfer_s"]))
    out = _pair_advice(a["rankings"].get("pairs") or [], threshold)
    out += _declared(a, docs, threshold)
    pair_rules = len(out)  # the rules that rest on the transfer-time bounds
    out += _imbalance(a, docs)
    checks = a.get("checks") or {}
    if checks.get("flagged"):  # the transfer-time bounds these rest on failed their checks
        for x in out[:pair_rules]:
            x["evidence"]["bounds_flagged_pct"] = checks.get("flagged_pct")
            x["text"] += (f" The checks on the bounds flagged transfers carrying "
                          f"{fmt_pct(checks.get('flagged_pct'))} of the transfer time: "
                          "recalibrate before acting on this figure.")
    out.sort(key=lambda x: (-x["bound_s"], x["rule"]))
    return out


def advice_findings(items: list[dict[str, Any]]) -> list[str]:
    """The top TOP items as sentences for the findings."""
    return [f"Advice {i}: {x['text']}" for i, x in enumerate(items[:TOP], start=1)]
