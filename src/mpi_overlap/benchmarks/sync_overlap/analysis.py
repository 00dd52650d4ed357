"""Analysis of a sync-overlap run: where MPI_Isend stops completing without the receiver
(the eager / buffer limit) and whether that agrees with the limit the MPI reports.

Per size, the send-test samples say whether rank 0's send completed (MPI_Test true after
its work) while rank 1 had not yet posted the receive; a size counts as completing when at
least half of its samples did. The limit is the interval [last_yes, first_no): last_yes is
the largest measured size below which every measured size completed, first_no the smallest
that did not. The MPI's own limit comes from its MPI_T control variables (rules in
`reported_limit`); they agree when the interval meets [R - HEADER_ALLOWANCE, R], R being
the largest payload the MPI's setting lets through, less up to HEADER_ALLOWANCE bytes of
the MPI's own header in the same buffer. docs/benchmarks.md, section sync-overlap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis.figures import figure
from ...analysis.protocol_switch import HEADER_ALLOWANCE, positive_cvar
from ...analysis.stats import bootstrap_medians, median_bootstrap_ci, percentile_ci
from ...analysis.ucx_env import ucx_rndv_thresh
from ...core.formatting import fmt_bytes
from ...core.sources import cite

BENCHMARK = "sync-overlap"
OB1_INLINE_BYTES = 256  # Open MPI ob1's own cap on its inline send path (pml_ob1_isend.c)


def detect_limit(points: list[dict[str, Any]], key: str = "completed") -> dict[str, Any]:
    """[last_yes, first_no] from points with "bytes" and a boolean `key`.

    status: "bracketed" (both found), "all-complete" (no size failed: the limit lies above
    the sweep), "none-complete" (the smallest size already failed) or "no-points".
    monotonic is false when some size above first_no completed again."""
    pts = sorted((p for p in points if p.get(key) is not None), key=lambda p: p["bytes"])
    if not pts:
        return {"status": "no-points", "last_yes_bytes": None, "first_no_bytes": None,
                "monotonic": True, "width_bytes": None}
    nos = [p["bytes"] for p in pts if not p[key]]
    first_no = min(nos) if nos else None
    below = [p["bytes"] for p in pts if p[key] and (first_no is None or p["bytes"] < first_no)]
    last_yes = max(below) if below else None
    monotonic = first_no is None or not any(p[key] and p["bytes"] > first_no for p in pts)
    if first_no is None:
        status = "all-complete"
    elif last_yes is None:
        status = "none-complete"
    else:
        status = "bracketed"
    width = first_no - last_yes if status == "bracketed" else None
    return {"status": status, "last_yes_bytes": last_yes, "first_no_bytes": first_no,
            "monotonic": monotonic, "width_bytes": width}



def reported_limit(cvars: dict[str, int | None]) -> dict[str, Any]:
    """The largest payload (bytes, header included where the MPI counts it) that the MPI's
    control variables say a send completes with on one node, before the receiver posts.

    MPICH CH4 (POSIX shared memory): a message goes into one iqueue cell when it fits
    (MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE, header included) and is below the CMA
    single-copy threshold (MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD: from there on the receiver
    reads the sender's buffer, a rendezvous). Open MPI (ob1 + btl sm / vader): a send
    completes at once only on the inline path, btl_sm_max_inline_send; ob1 itself caps that
    path at 256 B in its code, and btl_sm_eager_limit (header included) only decides
    eager against rendezvous: an eager fragment completes when the receiver has taken it."""
    cell = positive_cvar(cvars, "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE")
    if cell:
        cma = positive_cvar(cvars, "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD")
        # The cell counts its header, so at equal settings the cell binds first.
        name, value = (cma[0], cma[1] - 1) if cma and cma[1] < cell[1] else cell
        note = (f"MPICH CH4: one shared-memory cell of {cell[1]} B (header included)"
                + (f", CMA single-copy rendezvous from {cma[1]} B; the smaller governs ({name})"
                   if cma else "; no CMA threshold listed"))
        return {"bytes": value, "source": name, "family": "mpich-ch4", "note": note}
    inline = positive_cvar(cvars, "btl_sm_max_inline_send", "btl_vader_max_inline_send")
    if inline:
        eager = positive_cvar(cvars, "btl_sm_eager_limit", "btl_vader_eager_limit")
        note = (f"Open MPI ob1: {inline[0]} = {inline[1]} B (ob1 caps its inline path at "
                f"{OB1_INLINE_BYTES} B in code)"
                + (f"; {eager[0]} = {eager[1]} B (header included) decides eager against "
                   "rendezvous, but an eager fragment above the inline path completes only "
                   "when the receiver has taken it" if eager else ""))
        return {"bytes": inline[1], "source": inline[0], "family": "openmpi-ob1", "note": note}
    intel = cvars.get("MPIR_CVAR_INTEL_SHM_EAGER_THRESHOLD")
    if intel is not None:
        return {"bytes": None, "source": None, "family": "intel",
                "note": f"Intel MPI: MPIR_CVAR_INTEL_SHM_EAGER_THRESHOLD = {intel} (-1: chosen at "
                        "run time) is its eager threshold, not a limit on sends completing "
                        "without the receiver, so it is not compared"}
    return {"bytes": None, "source": None, "family": None,
            "note": "no control variable this analysis knows names the limit"}


def network_limit(result: dict[str, Any]) -> dict[str, Any] | None:
    """Across nodes (the program's flags went over its side channel and it read both ends'
    socket buffers): the MPI's shared-memory settings do not apply. Over UCX the switch
    from eager (the send completes once the kernel holds its bytes) to rendezvous (it
    waits for the receiver) is UCX_RNDV_THRESH: its value when the run set it, else
    unknown ("auto"). Measured on the emulated cluster (docs/cluster.md): the limit
    followed UCX_RNDV_THRESH=512K to 520 192–524 288 B and did not follow the sender's
    tcp_wmem maximum (4 → 2 MiB) or the receiver's tcp_rmem maximum (32 → 1 MiB)."""
    res = result.get("results") or {}
    buffers = res.get("socket_buffers")
    if not buffers:
        return None
    wmem, rmem = buffers["sender_tcp_wmem"], buffers["receiver_tcp_rmem"]
    kernel = (f"the kernel may hold up to the sender's tcp_wmem maximum "
              f"({fmt_bytes(wmem[2], '?')} B) and the receiver's tcp_rmem maximum "
              f"({fmt_bytes(rmem[2], '?')} B) of a message")
    value = ucx_rndv_thresh(result)
    if value is not None:
        return {"bytes": value, "source": "UCX_RNDV_THRESH", "family": "ucx-tcp",
                "note": f"across nodes: UCX sends eagerly below UCX_RNDV_THRESH = "
                        f"{fmt_bytes(value, '?')} B and by rendezvous (waiting for the receiver) "
                        f"from there; {kernel}"}
    return {"bytes": None, "source": None, "family": "network",
            "note": "across nodes the MPI's shared-memory settings do not apply; the network "
                    "transport's eager/rendezvous switch decides (UCX: UCX_RNDV_THRESH, "
                    f"automatic unless set: set it to compare); {kernel}"}


def agreement(limit: dict[str, Any], reported: int | None) -> bool | None:
    """Whether the detected interval [last_yes, first_no) meets [reported - header,
    reported]; None when either is unknown."""
    if reported is None or limit.get("status") != "bracketed":
        return None
    return (limit["last_yes_bytes"] <= reported
            and limit["first_no_bytes"] > reported - HEADER_ALLOWANCE)


def _median_ci(samples: list[Any]) -> tuple[float | None, float | None, float | None]:
    arr = np.asarray([s for s in samples or [] if s is not None], dtype=float)
    if arr.size == 0:
        return None, None, None
    rng = np.random.default_rng(1)
    reps = bootstrap_medians(rng, arr, 1000)
    lo, hi = percentile_ci(reps)
    return float(np.median(arr)), lo, hi


def _slowdown(work: list[Any], alone: list[Any]) -> tuple[float | None, float | None, float | None]:
    a = np.asarray([s for s in work or [] if s is not None], dtype=float)
    b = np.asarray([s for s in alone or [] if s is not None], dtype=float)
    if a.size == 0 or b.size == 0 or np.median(b) <= 0:
        return None, None, None
    ratio, lo, hi = median_bootstrap_ci(a, b, np.divide)
    return (100.0 * (ratio - 1.0), None if lo is None else 100.0 * (lo - 1.0),
            None if hi is None else 100.0 * (hi - 1.0))


def _row(p: dict[str, Any]) -> dict[str, Any]:
    wait, wait_lo, wait_hi = _median_ci(p.get("wait_samples_ns") or [])
    ratio, ratio_lo, ratio_hi = _median_ci(p.get("tp1_ratio_samples") or [])
    slow, slow_lo, slow_hi = _slowdown(p.get("work_samples_ns") or [],
                                       p.get("alone_samples_ns") or [])
    return {
        "bytes": p["bytes"], "phase": p.get("phase"),
        "completed_fraction": p.get("completed_fraction"), "completed": bool(p.get("completed")),
        "wait_us": None if wait is None else wait / 1e3,
        "wait_ci95_us": [None if wait_lo is None else wait_lo / 1e3,
                         None if wait_hi is None else wait_hi / 1e3],
        "isend_us": None if (p.get("isend_ns") or {}).get("median") is None
        else p["isend_ns"]["median"] / 1e3,
        "tp1_ratio": ratio, "tp1_ratio_ci95": [ratio_lo, ratio_hi],
        "seed_alone_fraction": p.get("seed_alone_fraction"),
        "seed_receiver_alone": None if p.get("seed_alone_fraction") is None
        else p["seed_alone_fraction"] >= 0.5,
        "compute_slowdown_pct": slow, "compute_slowdown_ci95_pct": [slow_lo, slow_hi],
    }


def _finding(limit: dict[str, Any], rep: dict[str, Any], agree: bool | None,
             rows: list[dict[str, Any]]) -> str:
    st = limit["status"]
    if st == "bracketed":
        yes, no = (fmt_bytes(limit[k], "?") for k in ("last_yes_bytes", "first_no_bytes"))
        head = f"MPI_Isend completes without the receiver up to {yes} B (limit in {yes}–{no} B)"
    elif st == "all-complete":
        head = (f"MPI_Isend completed without the receiver at every size up to "
                f"{fmt_bytes(max(r['bytes'] for r in rows), '?')} B (limit above the sweep)")
    elif st == "none-complete":
        head = (f"MPI_Isend did not complete without the receiver even at "
                f"{fmt_bytes(limit['first_no_bytes'], '?')} B")
    else:
        return "no sizes measured"
    if rep["family"] in ("network", "ucx-tcp"):
        head = "across two nodes, " + head
    if rep["bytes"] is None:
        tail = ("; the network transport's threshold is not known (UCX_RNDV_THRESH unset)"
                if rep["family"] == "network" else "; the MPI reports no known limit")
    else:
        verdict = {True: "agrees", False: "disagrees", None: "cannot be compared"}[agree]
        tail = f"; {rep['source']} = {fmt_bytes(rep['bytes'], '?')} B {verdict}"
        if agree:
            tail += f" (within {HEADER_ALLOWANCE} B of header)"
    big = max(rows, key=lambda r: r["bytes"]) if rows else None
    if big and big["wait_us"] is not None:
        tail += f"; rank 0 then waits {big['wait_us']:.0f} µs at {fmt_bytes(big['bytes'], '?')} B"
    return head + tail


def _figures(limit: dict[str, Any], rep: dict[str, Any], agree: bool | None,
             rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    big = max(rows, key=lambda r: r["bytes"]) if rows else {}
    small = min(rows, key=lambda r: r["bytes"]) if rows else {}
    seed = [r["seed_receiver_alone"] for r in rows if r["seed_receiver_alone"] is not None]
    slow = [r["compute_slowdown_pct"] for r in rows if r["compute_slowdown_pct"] is not None]
    return [
        figure("eager_limit_bytes", "largest send completing without the receiver",
               limit["last_yes_bytes"], "B", "info"),
        figure("eager_limit_first_no_bytes", "smallest send needing the receiver",
               limit["first_no_bytes"], "B", "info"),
        figure("mpi_reported_limit_bytes", f"MPI-reported limit ({rep['source'] or 'none'})",
               rep["bytes"], "B", "info"),
        figure("limit_agrees", "detected limit agrees with the MPI's",
               None if agree is None else float(agree), "bool", "info"),
        figure("seed_overlap_pct",
               "sizes whose receive completed without the sender (the test of "
               f"{cite('002', 'Figure 1')})",
               100.0 * sum(seed) / len(seed) if seed else None, "%", "overlap"),
        figure("wait_largest_us", f"rank 0 MPI_Wait at {big.get('bytes')} B",
               big.get("wait_us"), "us", "cost"),
        figure("isend_small_us", f"MPI_Isend call at {small.get('bytes')} B",
               small.get("isend_us"), "us", "cost"),
        figure("compute_slowdown_pct", "compute slowdown (median over sizes)",
               float(np.median(slow)) if slow else None, "%", "cost"),
    ]


def analyze(result: dict[str, Any]) -> dict[str, Any]:
    res = result.get("results") or {}
    points = res.get("points") or []
    rows = [_row(p) for p in sorted(points, key=lambda p: p["bytes"])]
    limit = detect_limit(rows)
    seed_limit = detect_limit(rows, "seed_receiver_alone")
    cvars = {c["name"]: c.get("value") for c in res.get("mpi_cvars") or []}
    rep = network_limit(result) or reported_limit(cvars)
    agree = agreement(limit, rep["bytes"])
    return {
        "schema": "mpi-overlap/analysis",
        "schema_version": 1,
        "benchmark": BENCHMARK,
        "order": res.get("order"),
        "points": rows,
        "limit": limit,
        "native_limit": res.get("limit"),
        "seed_limit": seed_limit,
        "seed_needs_sender_bytes": [r["bytes"] for r in rows if r["seed_receiver_alone"] is False],
        "mpi_cvars": res.get("mpi_cvars") or [],
        "reported": rep,
        "header_allowance_bytes": HEADER_ALLOWANCE,
        "agrees": agree,
        "finding": _finding(limit, rep, agree, rows),
        "figures": _figures(limit, rep, agree, rows),
    }
