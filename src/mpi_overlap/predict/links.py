"""What each link direction did in a replay: per ordered pair of nodes that messages
cross, how much it carried, how long it was busy (its messages' G s, the time the
replay holds it for each: model.link_waits) and how long messages waited for it.

The predicted side is the replay's own bookkeeping (Replay.link_wait, set by the pass
as it starts each transfer); the recorded side applies the same rule at the recorded
times (engine.recorded_link_waits), so it is the model's reading of the traced run,
not a measurement of its wire. A direction busy most of the run, with messages
waiting, is what limits a program on a slower link (docs/method.md, "A busy link")."""

from __future__ import annotations

import math
from typing import Any

from .model import Costs
from .program import Program


def link_use(prog: Program, c: Costs, waits: list[float], run_s: float) -> list[dict[str, Any]]:
    """Per direction of `c` (Costs.lane, named by Costs.lane_nodes): messages, bytes,
    busy seconds and share of `run_s`, and the messages that waited (a wait above 0;
    NaN, a transfer that never started, is not counted) with their total and longest
    wait. Empty where no message crosses nodes."""
    if not c.lane:
        return []
    rows: dict[int, dict[str, Any]] = {}
    for k, x in enumerate(c.lane):
        if x < 0:
            continue
        row = rows.get(x)
        if row is None:
            src, dst = c.lane_nodes[x] if x < len(c.lane_nodes) else (str(x), "?")
            row = rows[x] = {"from": src, "to": dst, "messages": 0, "bytes": 0,
                             "busy_s": 0.0, "waited": 0, "wait_s": 0.0, "longest_wait_s": 0.0}
        row["messages"] += 1
        row["bytes"] += max(prog.msgs[k].nbytes, 0)
        row["busy_s"] += c.occupy[k]
        w = waits[k] if k < len(waits) else math.nan
        if w == w and w > 0.0:
            row["waited"] += 1
            row["wait_s"] += w
            row["longest_wait_s"] = max(row["longest_wait_s"], w)
    out = [rows[x] for x in sorted(rows)]
    for row in out:
        row["busy_share"] = row["busy_s"] / run_s if run_s > 0 else None
    return out
