"""Advice from a profile's measurements (docs/profiler.md, "Advice"): what to change, where
(call sites), the figures it rests on, and an upper bound on the time it can hide or save.
Pure: the analysis document and the ranks' profiles in, a list of JSON-ready dicts out,
largest bound first.

Rules, each on the (posting site → completing site) pairs of profile/analysis/callsites.py:

* progress — transfers posted by a non-blocking call and completed by a Wait-family call
  with computation between: the bounds leave max − min of their transfer time undecided,
  which only the MPI's progress between calls decides (Shet et al. §2.2: min counts the
  computation only when the library certainly could not have moved the data then).
  Calling MPI_Test in that computation, or the MPI's asynchronous progress, can hide at
  most Σ(max − min). A pair completed by a Test-family call, or most of whose transfers
  saw one between post and completion (the profile's "polled"), already polls: no advice.
* move-computation — the same kind of pair with non-overlapped time (xfer − max > 0):
  there was too little computation between post and completion to hide the transfer
  (max is capped by that computation). Independent computation moved between them can
  hide at most Σ(xfer − max).
* nonblocking — transfers that begin and end inside one blocking call (MPI_Send,
  MPI_Sendrecv, a blocking collective, ...): nothing can overlap them. Posting the
  non-blocking form before computation that does not need the data and completing it
  after can hide at most their transfer time.
* eager-limit — size bins just above this MPI's eager limit (from 1 to 4 times the
  smallest send that needed the receiver, as the toolchain's own `bench sync-overlap` run
  measured it) that lose non-overlapped time: their sends wait for the receiver
  (rendezvous). Raising the MPI setting that governs the limit (the one sync-overlap
  names) above the bin's upper edge sends them eagerly; at most the bin's non-overlapped
  time can be hidden. Only with such a run under the profile's --out directory.
* imbalance — ranks compute unequally: the ranks that compute less wait for the one that
  computes most, inside MPI calls. Evening out the computation can save at most the
  busiest rank's computation minus the mean, per step of the run. Named: the busiest
  rank, and where the least busy rank spends its MPI time. It must hold on CPU time too
  where that was measured (profile/analysis/cpu_time.py): a rank descheduled for other processes
  computes longer by the clock without having more work, and gets no advice.

A rule's advice is given when its bound is at least MIN_SHARE of the job's transfer time
(imbalance: of the busiest rank's computation) and at least MIN_BOUND_S.
"""

from __future__ import annotations

from typing import Any

from ...formatting import fmt_pct, fmt_time
from .cpu_time import imbalance
from .profile_values import num

MIN_SHARE = 0.02
MIN_BOUND_S = 1e-6
TOP = 3  # advice items in the findings (all are in the document)

WAITS = frozenset({"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome"})
TESTS = frozenset({"MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"})
BLOCKING_P2P = frozenset({"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Recv",
                          "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Mrecv"})


def progress_hint(library_version: str | None) -> str:
    """How this MPI's asynchronous progress is switched on, from MPI_Get_library_version."""
    v = library_version or ""
    if "Intel" in v:
        return "I_MPI_ASYNC_PROGRESS=1"
    if "MPICH" in v:
        return "MPICH_ASYNC_PROGRESS=1, a progress thread per rank that needs a core of its own"
    if "Open MPI" in v:
        return ("Open MPI has no general switch: what moves data between calls depends on "
                "its transport")
    return "its asynchronous progress setting"


def _nonblocking_form(fn: str) -> str:
    """MPI_Alltoall → MPI_Ialltoall; point-to-point → MPI_Irecv/MPI_Isend."""
    if fn in BLOCKING_P2P:
        return "MPI_Irecv/MPI_Isend"
    return "MPI_I" + fn[len("MPI_"):].lower() if fn.startswith("MPI_") else "its non-blocking form"


def progress_words(progress: dict[str, Any] | None) -> str:
    """What is known of this MPI's progress between calls: its own `bench progress` run
    (profile/run/toolchain_evidence.py), or how to measure it."""
    progress = progress or {}
    if progress.get("run"):
        return (f" Measured for this MPI (bench progress, {progress['run']}): "
                f"{progress['finding']}.")
    return (" Whether this MPI moves data between its calls was not measured here: "
            f"`mpi-overlap bench progress --mpi {progress.get('toolchain') or 'NAME'}` "
            "measures it, and later "
            "profiles in the same --out directory quote it.")


def _pair_advice(pairs: list[dict[str, Any]], threshold: float,
                 hint: str, known: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in pairs:
        post, end = p["post"], p["end"]
        post_fn, end_fn = p.get("post_fn") or "?", p.get("end_fn") or "?"
        if "unknown" in (post, end):
            continue
        xfer, lo, hi = num(p["xfer_s"]), num(p["min_s"]), num(p["max_s"])
        evidence = {"transfers": p["transfers"], "xfer_s": xfer, "min_s": lo, "max_s": hi,
                    "nonoverlap_s": max(0.0, xfer - hi), "post_fn": post_fn, "end_fn": end_fn,
                    "polled": int(num(p.get("polled")))}
        sites = {"post": post, "end": end}
        where = f"posted by {post_fn} at {post} and completed by {end_fn} at {end}"
        if post == end and post_fn == end_fn:
            bound = max(0.0, xfer - hi)
            if bound >= threshold:
                form = _nonblocking_form(post_fn)
                out.append({"rule": "nonblocking", "sites": sites, "evidence": evidence,
                            "bound_s": bound, "text": (
                                f"{post_fn} at {post} moves {p['transfers']} transfers "
                                f"({fmt_time(xfer)}) entirely inside the call, where nothing "
                                f"can overlap them: post {form} before computation that "
                                "does not need the data and complete it after; at most "
                                f"{fmt_time(bound)} can be hidden.")})
            continue
        polled = 2 * int(num(p.get("polled"))) >= int(num(p["transfers"]))
        if end_fn in WAITS and hi - lo >= threshold and not polled:
            out.append({"rule": "progress", "sites": sites, "evidence": evidence,
                        "bound_s": hi - lo, "text": (
                            f"Transfers {where} had computation between them that could "
                            f"hide up to {fmt_time(hi)}, but "
                            + (f"only {fmt_time(lo)} of it is certain" if lo > 0
                               else "none of it is certain")
                            + ": the rest depends on whether the MPI "
                            "moves their data while no MPI call is made. Call MPI_Test on "
                            f"these requests in the computation between {post} and {end}, "
                            f"or enable the MPI's asynchronous progress: {hint}. At most "
                            f"{fmt_time(hi - lo)} can be hidden." + known)})
        nonoverlap = max(0.0, xfer - hi)
        if end_fn in WAITS | TESTS and nonoverlap >= threshold:
            out.append({"rule": "move-computation", "sites": sites, "evidence": evidence,
                        "bound_s": nonoverlap, "text": (
                            f"Transfers {where} lose {fmt_time(nonoverlap)} that no "
                            f"computation between post and completion could hide (at most "
                            f"{fmt_time(hi)} of their {fmt_time(xfer)} had computation "
                            f"beside it): move computation that does not need their data "
                            f"between {post} and {end}; at most {fmt_time(nonoverlap)} "
                            "can be hidden.")})
    return out


EAGER_REACH = 4  # bins starting below this many times the eager limit are "just above"


def _eager(a: dict[str, Any], threshold: float) -> list[dict[str, Any]]:
    limit = a.get("eager_limit")
    if not limit or not limit.get("first_no_bytes"):
        return []
    first_no = int(limit["first_no_bytes"])
    out = []
    for b in a["rankings"].get("bins") or []:
        lo, hi = int(num(b.get("lo"))), b.get("hi")
        if hi is None or hi <= first_no or lo >= EAGER_REACH * first_no:
            continue  # below the limit (eager already), or far above it
        bound = num(b.get("nonoverlap_s"))
        if bound < threshold:
            continue
        setting = limit.get("setting")
        how = (f"raise {setting} (now {limit['setting_bytes']} B) above {hi} B"
               if setting else "raise the MPI's eager limit for this transport above "
               f"{hi} B")
        out.append({"rule": "eager-limit", "sites": {"bin": b.get("label")},
                    "evidence": {"bin_lo": lo, "bin_hi": hi, "nonoverlap_s": bound,
                                 "transfers": b.get("transfers"),
                                 "last_eager_bytes": limit["last_yes_bytes"],
                                 "first_rendezvous_bytes": first_no, "run": limit["run"]},
                    "bound_s": bound, "text": (
                        f"Messages of {b.get('label')} lose {fmt_time(bound)} not overlapped "
                        f"and lie just above this MPI's eager limit: the largest send that "
                        f"completed without its receiver was {limit['last_yes_bytes']} B, the "
                        f"smallest that waited for it {first_no} B (bench sync-overlap, "
                        f"{limit['run']}). To send them eagerly, {how}, or send them in "
                        f"pieces below {limit['last_yes_bytes']} B; at most "
                        f"{fmt_time(bound)} can be hidden.")})
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
    version = next((d.get("mpi_library_version") for d in docs), None)
    known = progress_words(a.get("progress"))
    out = _pair_advice(a["rankings"].get("pairs") or [], threshold, progress_hint(version),
                       known)
    out += _eager(a, threshold)
    pair_rules = len(out)
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
