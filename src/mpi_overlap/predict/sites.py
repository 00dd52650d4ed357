"""Per call site figures of a prediction (issue 36, item 1): each traced call's time and
waiting, recorded and replayed, summed over the ranks per call site and MPI function, so
that a prediction says where in the program the time goes or moves.

A call site is named by the profile's label for the call's return address (result.json's
rank documents through gains.site_labels: file:line where the program has debug
information, else function and object), so that one line of the source is one row
whatever each rank's addresses; an address the profile does not name keeps its hex value,
a call without one is "unknown"."""

from __future__ import annotations

from typing import Any

from .bounds import CallBounds
from .engine import Replay
from .gains import Labels
from .program import Program

UNKNOWN = "unknown"


def site_name(labels: set[str] | None, addr: int) -> str:
    """The site's label (several labels of one address, from --callsite-depth chains that
    end in it, joined in order), else its address."""
    if labels:
        return " / ".join(sorted(labels))
    return f"{addr:#x}" if addr else UNKNOWN


# the bounds' figures of a row, each recorded_ and predicted_ (bounds.py)
BOUND_KEYS = ("xfer_s", "min_s", "max_s")


def by_site(prog: Program, rec: Replay, pred: Replay,
            waits: tuple[list[list[float]], list[list[float]]],
            labels: Labels,
            bounds: tuple[list[CallBounds], list[CallBounds]]) -> list[dict[str, Any]]:
    """Per (call site, MPI function): its calls and ranks, and the calls' time and waiting
    (engine.call_waits: `waits` is (recorded, predicted)) summed over the ranks, recorded
    and predicted; the transfers these calls posted and their overlap bounds (bounds.py:
    `bounds` is (recorded, predicted)), likewise; the largest recorded time first. The
    calls between MPI_Init and MPI_Finalize, as the per-rank MPI time counts them, so the
    rows add up to it."""
    rec_w, pred_w = waits
    rec_b, pred_b = bounds
    acc: dict[tuple[str, str], list[Any]] = {}
    names: dict[tuple[int, int], str] = {}
    for r, cs in enumerate(prog.calls):
        own = labels[r] if r < len(labels) else {}
        ren, rex, pen, pex = rec.enter[r], rec.exit[r], pred.enter[r], pred.exit[r]
        rw, pw = rec_w[r], pred_w[r]
        rb, pb = rec_b[r], pred_b[r]
        for i in range(1, len(cs) - 1):
            c = cs[i]
            name = names.get((r, c.site))
            if name is None:
                name = names[(r, c.site)] = site_name(own.get(c.site), c.site)
            a = acc.get((name, c.fn))
            if a is None:
                a = acc[(name, c.fn)] = [0, set(), 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0,
                                         0.0, 0.0, 0.0]
            a[0] += 1
            a[1].add(r)
            a[2] += rex[i] - ren[i]
            a[3] += pex[i] - pen[i]
            a[4] += rw[i]
            a[5] += pw[i]
            if rb.transfers[i]:
                a[6] += rb.transfers[i]
                a[7] += rb.xfer_s[i]
                a[8] += rb.min_s[i]
                a[9] += rb.max_s[i]
                a[10] += pb.xfer_s[i]
                a[11] += pb.min_s[i]
                a[12] += pb.max_s[i]
    rows = [{"site": site, "fn": fn, "calls": a[0], "ranks": len(a[1]), "recorded_s": a[2],
             "predicted_s": a[3], "recorded_waiting_s": a[4], "predicted_waiting_s": a[5],
             "transfers": a[6],
             **{f"recorded_{k}": v for k, v in zip(BOUND_KEYS, a[7:10], strict=True)},
             **{f"predicted_{k}": v for k, v in zip(BOUND_KEYS, a[10:13], strict=True)}}
            for (site, fn), a in acc.items()]
    return sorted(rows, key=lambda row: (-row["recorded_s"], row["site"], row["fn"]))


def by_function(site_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per MPI function: its calls and their time summed over the ranks, recorded and
    replayed, and the transfers they posted with their bounds (by_site's rows added up per
    function), the largest recorded first: where the model gains or loses time."""
    keys = ("calls", "recorded_s", "predicted_s", "transfers",
            *(f"{side}_{k}" for side in ("recorded", "predicted") for k in BOUND_KEYS))
    acc: dict[str, dict[str, Any]] = {}
    for row in site_rows:
        a = acc.setdefault(row["fn"], dict.fromkeys(keys, 0))
        for k in keys:
            a[k] += row[k]
    rows = [{"fn": fn, **a} for fn, a in acc.items()]
    return sorted(rows, key=lambda row: (-row["recorded_s"], row["fn"]))
