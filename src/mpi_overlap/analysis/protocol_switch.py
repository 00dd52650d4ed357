"""Where a point-to-point protocol switches, from latency per size, and what the MPI says.

Within one protocol the one-way time is close to a line, t(s) = a + b·s: a fixed cost a
(handshakes, a system call) and a cost per byte b. A protocol switch (eager to
rendezvous, a copy path to single-copy CMA) changes the fixed cost, and often lowers b;
a cache boundary at large sizes changes b only, bending the curve upwards. So the ratio
of neighbouring times is the wrong test: it grows with the spacing of the sizes and with
any change of b, and it put "eager -> rendezvous" between 2 and 4 MiB (a cache effect)
while MPICH switches at 8 KiB (1.40 -> 4.20 µs from 4 to 16 KiB).

The size-normalised test: for the step between sizes s[i] and s[i+1], the line through
the two sizes before (i-1, i) and the line through the two after (i+1, i+2) each give a
fixed cost, their value at size 0 (the time less the bytes times the time per byte). A
switch raises it: a_after - a_before. A change of the time per byte alone leaves it (a
cache boundary at the step: both lines meet at 0) or lowers it (a curve bending upwards
over several steps). The raised fixed cost must hold beyond the step: the line through
the next pair (i+2, i+3), where there is one, must show it too (one disturbed size, a
spike, raises only the first line after it). And the step itself must stand out of both
lines: t[i+1] above the line before, extended to s[i+1], and t[i] below the line after,
extended back to s[i] (the steps next to a real jump have one line through the jump, and
so one of these negative). The `rise` of a step is the smallest of these, relative to
t[i]; the
switch is the step with the largest rise, if that is at least MIN_RISE, among the steps
that are real:

- the step itself is larger than the noise: the 95 % intervals of t[i] and t[i+1] are
  disjoint (where they are given);
- it persists: no larger size is faster than t[i+1] by more than PERSIST_TOL (a protocol
  does not get cheaper for larger messages; a disturbed stretch of sizes comes back down:
  one busy-machine launch read 2.3 µs at 4 B, 4.6-5.1 µs from 8 to 512 B, 2.0 µs at 1 KiB).

Steps without two sizes on each side cannot be judged (the first and the last).

The MPI's own threshold comes from its MPI_T control variables (MPICH CH4: the CMA
single-copy threshold MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD, the first size sent that way;
Open MPI: btl_sm_eager_limit, the header included), and the two agree when the step's
interval (below, above] meets [R - HEADER_ALLOWANCE, R]. docs/method.md, "Protocol switch".
"""

from __future__ import annotations

from typing import Any

from .ucx_env import ucx_rndv_thresh

HEADER_ALLOWANCE = 128  # bytes of MPI header that may share the eager buffer with the payload


def positive_cvar(cvars: dict[str, int | None], *names: str) -> tuple[str, int] | None:
    """(name, value) of the first of `names` set to a positive integer; None."""
    for name in names:
        value = cvars.get(name)
        if isinstance(value, int) and value > 0:
            return name, value
    return None


# A fixed-cost step smaller than this share of the time before it is within the noise of
# a busy machine (5-10 % per size) and the curvature of one protocol.
MIN_RISE = 0.25
# A larger size may be this much faster than the size above the step (noise of medians).
PERSIST_TOL = 0.10


def _line(s0: float, t0: float, s1: float, t1: float) -> tuple[float, float]:
    """(intercept, slope) of the line through two points (s0 < s1)."""
    b = (t1 - t0) / (s1 - s0)
    return t0 - b * s0, b


def find_switch(sizes: list[int], times: list[float | None],
                lows: list[float | None] | None = None,
                highs: list[float | None] | None = None) -> dict[str, Any] | None:
    """The step (below_bytes, above_bytes] with the largest rise of the fixed cost among
    the real ones (lows/highs: the times' 95 % intervals, when known), or None when no step
    can be judged. Every judged step is listed in `steps` (for the report), with why it
    was not taken."""
    n = len(sizes)
    lows, highs = lows or [None] * n, highs or [None] * n
    pts = [(s, t, lo, hi) for s, t, lo, hi in zip(sizes, times, lows, highs, strict=True)
           if t is not None]
    steps = []
    for i in range(1, len(pts) - 2):
        (s_a, t_a, _, _), (s_b, t_b, _, hi_b), (s_c, t_c, lo_c, _), (s_d, t_d, _, _) = \
            pts[i - 1:i + 3]
        a_before, b_before = _line(s_a, t_a, s_b, t_b)
        a_after, b_after = _line(s_c, t_c, s_d, t_d)
        above_before = t_c - (a_before + b_before * s_c)
        below_after = (a_after + b_after * s_b) - t_b
        lifts = [a_after - a_before, above_before, below_after]
        if i + 3 < len(pts):
            (s_e, t_e, _, _) = pts[i + 3]
            lifts.append(_line(s_d, t_d, s_e, t_e)[0] - a_before)
        lift = min(lifts)
        rejected = None
        if hi_b is not None and lo_c is not None and lo_c <= hi_b:
            rejected = "the step is within the noise (the intervals of the two times overlap)"
        elif any(t < (1.0 - PERSIST_TOL) * t_c for _, t, _, _ in pts[i + 2:]):
            rejected = "it does not persist: a larger size is faster than the size above it"
        steps.append({"below_bytes": s_b, "above_bytes": s_c,
                      "t_below_s": t_b, "t_above_s": t_c,
                      "fixed_before_s": a_before, "fixed_after_s": a_after,
                      "per_byte_before_s": b_before, "per_byte_after_s": b_after,
                      "rise": lift / t_b if t_b > 0 else 0.0,
                      "rejected": rejected})
    if not steps:
        return None
    real = [st for st in steps if st["rejected"] is None]
    best = max(real, key=lambda st: st["rise"], default=None)
    if best is None or best["rise"] < MIN_RISE:
        return {"found": False, "min_rise": MIN_RISE, "steps": steps, **_none()}
    return {"found": True, "min_rise": MIN_RISE, "steps": steps,
            **{k: best[k] for k in ("below_bytes", "above_bytes", "rise", "t_below_s",
                                    "t_above_s", "fixed_before_s", "fixed_after_s")}}


def _none() -> dict[str, Any]:
    return {"below_bytes": None, "above_bytes": None, "rise": None, "t_below_s": None,
            "t_above_s": None, "fixed_before_s": None, "fixed_after_s": None}


def reported_switch(cvars: dict[str, int | None]) -> dict[str, Any]:
    """The first payload size the MPI's control variables put on the other protocol."""
    cma = positive_cvar(cvars, "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD")
    if cma:
        return {"bytes": cma[1], "source": cma[0], "family": "mpich-ch4",
                "note": f"MPICH CH4: messages from {cma[0]} = {cma[1]} B on go single-copy "
                        "through CMA (a rendezvous), smaller ones through shared-memory cells"}
    eager = positive_cvar(cvars, "btl_sm_eager_limit", "btl_vader_eager_limit")
    if eager:
        return {"bytes": eager[1], "source": eager[0], "family": "openmpi-ob1",
                "note": f"Open MPI: {eager[0]} = {eager[1]} B (header included) ends the eager "
                        "protocol"}
    return {"bytes": None, "source": None, "family": None,
            "note": "no control variable this analysis knows names the switch"}


def network_switch(result: dict[str, Any]) -> dict[str, Any]:
    """reported_switch for ranks on different nodes, where the shared-memory thresholds
    do not apply: UCX's eager/rendezvous switch, UCX_RNDV_THRESH, when the run set it."""
    value = ucx_rndv_thresh(result)
    if value is not None:
        return {"bytes": value, "source": "UCX_RNDV_THRESH", "family": "ucx-tcp",
                "note": f"across nodes: UCX switches to rendezvous at UCX_RNDV_THRESH = "
                        f"{value} B"}
    return {"bytes": None, "source": None, "family": "network",
            "note": "across nodes the MPI's shared-memory thresholds do not apply; the "
                    "network transport's switch (UCX: UCX_RNDV_THRESH) is automatic unless "
                    "set: set it to compare"}


def agreement(switch: dict[str, Any] | None, reported: int | None) -> bool | None:
    """Whether the found step (below, above] meets [reported - header, reported]; None
    when either is unknown."""
    if reported is None or not switch or not switch.get("found"):
        return None
    return switch["below_bytes"] < reported and switch["above_bytes"] >= reported - HEADER_ALLOWANCE


__all__ = ["MIN_RISE", "PERSIST_TOL", "agreement", "find_switch", "network_switch",
           "reported_switch"]
