"""Overlap checked against the wire: the profiler's bounds for each message of
mo_wire_probe (its trace) against the time its bytes crossed the emulated link (a packet
capture). docs/cluster.md, "Overlap checked against the wire", has the method.

For a message the receiver posted before any of its bytes moved, the truth is the share
of its payload that crossed the wire while the receiver computed: each captured frame
occupies the link for its length at the link rate, ending at its timestamp, and counts
for the part of that time outside the receiver's MPI calls. The profiler's bounds as
shares are min/xfer and max/xfer of the same transfer. Two things stand between them and
are stated per message rather than hidden:
- timing: the trace's ticks are put on the capture's clock through the two anchors the
  rank's profile records (each within its stated uncertainty), and a frame is timed to
  its own length on the wire; together `timing_share`;
- the table: the bounds use the table's transfer time, which also counts software time
  around the wire (the sender's overhead before the first byte, the receiver's copy
  after the last); the part of the table's time the wire did not take (or took beyond
  it) can fall on either side, `table_share`.
A message is *inside* when the truth lies in [min, max] widened by timing_share, and
*within the table's error* when it does once table_share is allowed too."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import UserError
from ..profile.analysis.twosided_bounds import CallTimes
from ..profile.documents.rank_documents import read_rank_documents
from ..profile.trace.reader import FLAG_CLAMPED, KIND_RECV, RankTrace, read_trace
from ..profile.trace.timeline import rank_timeline

ETH_HEADER = 14
REGION_PREFIX = "wire/"
BEFORE_POST_S = 1e-3
# Frames with less payload carry MPI's control messages (the barrier, the ready
# message, a rendezvous handshake), not the message's data.
DATA_FRAME_MIN = 256


@dataclass(frozen=True)
class Frame:
    t_end: float  # realtime seconds: the capture's timestamp (the frame has crossed)
    wire_bytes: int  # what occupies the link: Ethernet header and IP packet
    payload: int  # TCP payload
    conn: tuple[int, int] = (0, 0)  # TCP source and destination port
    seq: int = 0  # its first byte in the connection's stream, from the first one seen
    resent: bool = False  # its bytes crossed before: a TCP retransmission


@dataclass
class MessageCheck:
    region: str
    bytes: int
    pattern: str
    xfer_s: float  # the table's transfer time the profiler used
    min_share: float
    max_share: float
    true_share: float  # payload share that crossed while the receiver computed
    wire_s: float  # first frame's start to last frame's end
    payload: int  # captured payload between post and completion
    before_post: int  # payload of other data before the receive was posted (should be 0)
    # what crossed in the BEFORE_POST_S before the post, bytes by kind: "resent" (a TCP
    # retransmission of bytes already delivered), "own head" (the message's own first
    # bytes, within the timing edge of the post: the clocks, not the data, moved),
    # "earlier data" (the connection's bytes before the message's) and "other
    # connection"; the last two, and an own head beyond the edge, make before_post
    before_kinds: dict[str, int]
    timing_share: float
    table_share: float
    clamped: bool  # the profiler's own check fired: the table time exceeded the span
    verdict: str  # inside | within the table's error | outside | no data

    @property
    def width(self) -> float:
        return self.max_share - self.min_share


def read_frames(pcap: Path, sender: str, receiver: str) -> list[Frame]:
    """TCP frames with data (DATA_FRAME_MIN payload bytes or more) from `sender` to
    `receiver` (IPv4 addresses), in order."""
    import dpkt

    frames = []
    first_seq: dict[tuple[int, int], int] = {}
    sent_up_to: dict[tuple[int, int], int] = {}
    try:
        with open(pcap, "rb") as f:
            for ts, buf in dpkt.pcap.Reader(f):
                eth = dpkt.ethernet.Ethernet(buf)
                ip = eth.data
                if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                    continue
                if (dpkt.utils.inet_to_str(ip.src), dpkt.utils.inet_to_str(ip.dst)) != \
                        (sender, receiver):
                    continue
                tcp = ip.data
                payload = ip.len - ip.hl * 4 - tcp.off * 4
                conn = (int(tcp.sport), int(tcp.dport))
                # sequence numbers from the connection's first frame seen, modulo 2^32
                seq = (int(tcp.seq) - first_seq.setdefault(conn, int(tcp.seq))) % (1 << 32)
                resent = seq + payload <= sent_up_to.get(conn, 0)
                sent_up_to[conn] = max(sent_up_to.get(conn, 0), seq + payload)
                if payload >= DATA_FRAME_MIN:
                    frames.append(Frame(float(ts), ETH_HEADER + ip.len, payload, conn, seq,
                                        resent))
    except (OSError, ValueError, dpkt.dpkt.Error) as err:
        raise UserError(f"cannot read the capture {pcap}: {err}") from None
    return frames


def _ticks_to_realtime(profile: dict[str, Any]) -> tuple[float, float, float, float]:
    """(ticks0, realtime0, seconds per tick, uncertainty) from the profile's anchors."""
    anchors = (profile.get("clock") or {}).get("anchors") or []
    if len(anchors) < 2 or anchors[1]["ticks"] <= anchors[0]["ticks"]:
        raise UserError("the receiver's profile has no two clock anchors (a profiler "
                        "older than the wire check?): its trace cannot be put on the "
                        "capture's clock")
    a, b = anchors[0], anchors[1]
    slope = (b["realtime_s"] - a["realtime_s"]) / (b["ticks"] - a["ticks"])
    return (float(a["ticks"]), float(a["realtime_s"]), slope,
            max(a["uncertainty_s"], b["uncertainty_s"]))


def check_messages(trace: RankTrace, profile: dict[str, Any], frames: list[Frame],
                   rate_bits_per_s: float, burst_bytes: int) -> list[MessageCheck]:
    """One check per received message of a `wire/...` region of the receiver's trace.
    `burst_bytes`: the link's token bucket, whose worth of frames may cross at once."""
    tick0, real0, slope, anchor_unc = _ticks_to_realtime(profile)

    def real(ticks: float) -> float:
        return real0 + (ticks - tick0) * slope

    timeline = rank_timeline(trace)
    starts = np.array([f.t_end - f.wire_bytes * 8 / rate_bits_per_s for f in frames])
    ends = np.array([f.t_end for f in frames])
    frame_s = max((f.wire_bytes * 8 / rate_bits_per_s for f in frames), default=0.0)
    edge_s = anchor_unc + frame_s + burst_bytes * 8 / rate_bits_per_s
    checks = []
    for thread, records in trace.transfers.items():
        calls = timeline.threads.get(thread)
        if calls is None:
            continue
        times = CallTimes(np.array([real(t) for t in calls.enter.tolist()]),
                          np.array([real(t) for t in calls.exit.tolist()]),
                          real(calls.first), real(calls.last))
        for rec in records:
            region = trace.region(int(rec["region"]))
            if int(rec["kind"]) != KIND_RECV or not region.startswith(REGION_PREFIX):
                continue
            checks.append(_check_one(rec, region, real, times, frames, starts, ends,
                                     edge_s, rate_bits_per_s))
    return sorted(checks, key=lambda c: c.region)


def _check_one(rec: np.void, region: str, real: Any, times: CallTimes,
               frames: list[Frame], starts: np.ndarray, ends: np.ndarray, edge_s: float,
               rate: float) -> MessageCheck:
    post, done = real(float(rec["t_begin"])), real(float(rec["t_end"]))
    nbytes, xfer = int(rec["bytes"]), float(rec["xfer_s"])
    parts = region[len(REGION_PREFIX):].split("/")
    pattern = parts[1] if len(parts) > 1 else "?"
    inside = np.nonzero((ends > post) & (starts < done))[0]
    # Bytes that crossed in the last BEFORE_POST_S before the receive was posted: none
    # can be this message's (the probe's ready handshake), and the last message ended
    # --gap-us (3 ms) earlier; a count here means the probe's precondition failed.
    before = np.nonzero((ends <= post) & (ends > post - BEFORE_POST_S))[0]
    payload = sum(frames[i].payload for i in inside)
    before_kinds = _before_post_kinds([frames[i] for i in before],
                                      [frames[i] for i in inside], post, edge_s)
    weighted = 0.0
    for i in inside:
        s, e = float(starts[i]), float(ends[i])
        # the part of the frame's time on the wire, within [post, done], outside calls
        computing = times.split(max(s, post), min(e, done))[0]
        weighted += frames[i].payload * computing / (e - s)
    true_share = weighted / payload if payload else float("nan")
    wire_s = float(ends[inside].max() - starts[inside].min()) if len(inside) else 0.0
    min_share = float(rec["min_s"]) / xfer if xfer > 0 else 0.0
    max_share = float(rec["max_s"]) / xfer if xfer > 0 else 0.0
    # Bytes that the anchors' clock error, one frame's time on the wire or a bucket's
    # worth crossing at once could move across the edge of a computing span (two edges
    # at most in one message).
    timing = min(1.0, 2 * edge_s * rate / 8 / payload) if payload else 1.0
    table = abs(xfer - wire_s) / xfer if xfer > 0 else 1.0
    if not payload:
        verdict = "no data"
    elif min_share - timing <= true_share <= max_share + timing:
        verdict = "inside"
    elif min_share - timing - table <= true_share <= max_share + timing + table:
        verdict = "within the table's error"
    else:
        verdict = "outside"
    return MessageCheck(region=region, bytes=nbytes, pattern=pattern, xfer_s=xfer,
                        min_share=min_share, max_share=max_share, true_share=true_share,
                        wire_s=wire_s, payload=payload,
                        before_post=sum(v for k, v in before_kinds.items()
                                        if k not in ("resent", "own head")),
                        before_kinds=before_kinds,
                        timing_share=timing, table_share=table,
                        clamped=bool(int(rec["flags"]) & FLAG_CLAMPED), verdict=verdict)


def _before_post_kinds(before: list[Frame], inside: list[Frame], post: float,
                       edge_s: float) -> dict[str, int]:
    """The bytes that crossed shortly before the post, by what they were (MessageCheck's
    before_kinds), told apart by the TCP stream: a retransmission repeats bytes already
    sent; the message's own head is the stream's bytes just below its first frame's."""
    if not before:
        return {}
    own = min(inside, key=lambda f: f.seq) if inside else None
    kinds: dict[str, int] = {}
    # from the message's first byte down: a run of frames that ends where the next begins
    head_from = own.seq if own is not None else None
    for f in sorted(before, key=lambda f: -f.seq):
        if f.resent:
            kind = "resent"
        elif own is None or f.conn != own.conn:
            kind = "other connection"
        elif head_from is not None and f.seq + f.payload == head_from:
            head_from = f.seq
            kind = "own head" if f.t_end > post - edge_s else "own head early"
        else:
            kind = "earlier data"
        kinds[kind] = kinds.get(kind, 0) + f.payload
    return kinds


def summarize(checks: list[MessageCheck]) -> dict[str, Any]:
    n = len(checks)
    counts = {v: sum(c.verdict == v for c in checks)
              for v in ("inside", "within the table's error", "outside", "no data")}
    widths = [c.width for c in checks if c.payload]
    return {"messages": n, **{k.replace(" ", "_").replace("'", ""): v for k, v in counts.items()},
            "bracketed": counts["inside"] + counts["within the table's error"],
            "median_width": float(np.median(widths)) if widths else None,
            "max_timing_share": max((c.timing_share for c in checks), default=None),
            "max_table_share": max((c.table_share for c in checks), default=None),
            "data_before_post": sum(c.before_post > 0 for c in checks),
            "before_post_explained": {k: sum(c.before_kinds.get(k, 0) for c in checks)
                                      for k in ("resent", "own head")},
            "clamped": sum(c.clamped for c in checks)}


def analyze_run(run_dir: Path, pcap: Path, sender: str, receiver: str,
                rate_bits_per_s: float, burst_bytes: int,
                receiver_rank: int = 1) -> dict[str, Any]:
    """The wire check of a profiled mo_wire_probe run, written to wire-check.json."""
    trace_path = run_dir / f"trace.rank-{receiver_rank}.mopt"
    profile = read_rank_documents(run_dir).docs.get(receiver_rank)
    if not trace_path.is_file() or profile is None:
        raise UserError(f"{run_dir} has no trace and profile of rank {receiver_rank} "
                        "(profile --trace of mo_wire_probe makes them)")
    checks = check_messages(read_trace(trace_path), profile, read_frames(pcap, sender, receiver),
                            rate_bits_per_s, burst_bytes)
    if not checks:
        raise UserError(f"no message of mo_wire_probe ({REGION_PREFIX}... regions) in "
                        f"{trace_path}")
    doc = {"schema": "mpi-overlap/wire-check", "schema_version": 1,
           "capture": str(pcap), "sender": sender, "receiver": receiver,
           "rate_bits_per_s": rate_bits_per_s, "burst_bytes": burst_bytes,
           "table": profile.get("table"),
           "summary": summarize(checks),
           "messages": [{**asdict(c), "width": c.width} for c in checks]}
    (run_dir / "wire-check.json").write_text(json.dumps(doc, indent=1) + "\n")
    return doc
