"""The transfer model's parts (docs/method.md, "The transfer model's parts"): per pair class
and size, the sender's overhead o_s, the receiver's overhead o_r, the gap g and the latency
L, each with its 95 % interval, and whether the size moves eagerly.

One number per size (half a ping-pong round trip, the table's `seconds`) stands for the
whole transfer. An eager MPI_Send returns after its own part, o_s, and the rest of the
transfer happens after the call; a receive of data that has already arrived holds only
o_r. netgauge's PRTT (Hoefler et al.) and the parametrized LogP of Kielmann et al.
measure these parts; `mo_pingpong --parts-max` measures them the same way (its file
comment says how), and this module turns its samples into estimates:

* each part's estimate is the lower quartile of its undisturbed samples (CPU share at
  least CLEAN_SHARE), as for the one-way time, with the order-statistic interval of
  `quantile_interval`;
* L(s) = T(s) - o_s(s) - o_r(s) (LogP's one-way time o_s + L + o_r), not below 0, its
  interval from the parts' intervals and the table's point: the latency the table
  reports is L at its smallest size;
* a size is *eager* when its send returns without its receiver taking any part: while
  rank 0 waits a delay D (3 T + 5 µs) outside MPI before it polls for and receives the
  message of o_r, the peer's MPI_Send (`sender_s`) takes under LATE_SHARE of D (median
  over the samples). A send that needs the receive (rendezvous), or only the receiver's
  progress (Open MPI 4.1 above its 256 B inline sends: 1 KiB took 4.5 ms beside a
  computing receiver), waits D and more, and the model must count it whole. Results
  without `sender_s` (older mo_pingpong) judge by o_s: eager when o_s's upper interval
  end is at most EAGER_SHARE of T(s). The eager limit of a class is the largest size up
  to which every measured size is eager.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .xfer_quality import CLEAN_SHARE, MIN_CLEAN, QUANTILE, finite, quantile_interval

PART_NAMES = ("o_s", "o_r", "g")
# A send returns measurably before its transfer is done when its time is at most this
# share of the one-way time. Measured (docs/method.md): eager sizes' o_s/T was 0.14-0.41
# on the MPICH wheel and Debian Open MPI 4.1, rendezvous sizes' 0.91-1.16.
EAGER_SHARE = 0.75
# A send that returned in under this share of the receiver's delay did not wait for it.
LATE_SHARE = 0.5
# Fewer late-receiver samples than this: the protocol is judged by o_s (EAGER_SHARE).
LATE_MIN = 3
EAGER = "eager"
RENDEZVOUS = "rendezvous"


@dataclass(frozen=True)
class Part:
    """One part's estimate and its 95 % interval (seconds)."""

    value_s: float
    lo_s: float
    hi_s: float


@dataclass(frozen=True)
class SizeParts:
    """The parts of one size of one pair class."""

    nbytes: int
    protocol: str  # EAGER or RENDEZVOUS
    o_s: Part
    o_r: Part
    g: Part

    @property
    def eager(self) -> bool:
        return self.protocol == EAGER

    def latency(self, one_way_s: float, one_way_lo_s: float | None = None,
                one_way_hi_s: float | None = None) -> Part:
        """L = T - o_s - o_r (not below 0) with T the table's one-way time here; its
        interval from the ends of T's and the parts' intervals."""
        lo_t = one_way_s if one_way_lo_s is None else one_way_lo_s
        hi_t = one_way_s if one_way_hi_s is None else one_way_hi_s
        return Part(value_s=max(0.0, one_way_s - self.o_s.value_s - self.o_r.value_s),
                    lo_s=max(0.0, lo_t - self.o_s.hi_s - self.o_r.hi_s),
                    hi_s=max(0.0, hi_t - self.o_s.lo_s - self.o_r.lo_s))


def clean_samples(samples: list[float], shares: list[float]) -> list[float]:
    """The samples taken with a CPU share of at least CLEAN_SHARE (finite, not negative)."""
    return [t for t, s in zip(samples, shares, strict=False)
            if finite(t) and t >= 0 and finite(s) and s >= CLEAN_SHARE]


def estimate_part(samples: list[float], shares: list[float]) -> Part | None:
    """The lower quartile of the undisturbed samples with its interval; None with fewer
    than MIN_CLEAN of them."""
    clean = clean_samples(samples, shares)
    if len(clean) < MIN_CLEAN:
        return None
    import numpy as np  # here, not at import: `profile` reads a table, fits none (issue 38)

    lo, hi = quantile_interval(clean, QUANTILE)
    value = float(np.quantile(clean, QUANTILE))  # as the one-way time's estimate
    return Part(value_s=value, lo_s=min(lo, value), hi_s=max(hi, value))


def pool_parts(results: Iterable[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Every part's samples and shares per (class, bytes), pooled over pingpong result
    documents (or their `results`)."""
    pools: dict[tuple[str, int], dict[str, Any]] = {}
    for doc in results:
        res = doc.get("results", doc)
        for pair in res.get("pairs", []):
            for size in pair.get("sizes", []):
                parts = size.get("parts")
                if not isinstance(parts, dict):
                    continue
                pool = pools.setdefault((pair["class"], int(size["bytes"])),
                                        {**{k: ([], []) for k in PART_NAMES}, "late": []})
                pool["late"].extend(_late(parts.get("o_r") or {}))
                for name in PART_NAMES:
                    part = parts.get(name) or {}
                    samples = [float(x) for x in part.get("samples_s") or []
                               if isinstance(x, (int, float))]
                    shares = part.get("cpu_share") or []
                    if len(shares) != len(samples):
                        continue  # samples whose shares are not known cannot be judged
                    pool[name][0].extend(samples)
                    pool[name][1].extend(float(x) if finite(x) else 0.0 for x in shares)
    return pools


def _late(o_r: dict[str, Any]) -> list[float]:
    """The peer's send time over the receiver's delay, per o_r sample that has both."""
    sender, delay = o_r.get("sender_s") or [], o_r.get("delay_s") or []
    if not isinstance(sender, list) or not isinstance(delay, list) or len(sender) != len(delay):
        return []
    return [float(s) / float(d) for s, d in zip(sender, delay, strict=True)
            if finite(s) and finite(d) and s >= 0 and d > 0]


def protocol_of(late: list[float], o_s: Part, one_way_s: float) -> str:
    """EAGER or RENDEZVOUS: by the late receiver where there are LATE_MIN samples or more
    (the median of the peer's send time over the delay below LATE_SHARE: it returned
    without the receive), else by o_s against the one-way time (EAGER_SHARE)."""
    if len(late) >= LATE_MIN:
        import statistics

        return EAGER if statistics.median(late) < LATE_SHARE else RENDEZVOUS
    return EAGER if o_s.hi_s <= EAGER_SHARE * one_way_s else RENDEZVOUS


def size_parts(nbytes: int, pool: dict[str, Any], one_way_s: float) -> SizeParts | None:
    """The parts of one size from its pooled samples and the table's one-way time there;
    None when a part has too few undisturbed samples."""
    est = {name: estimate_part(*pool[name]) for name in PART_NAMES}
    if any(p is None for p in est.values()):
        return None
    o_s, o_r, g = est["o_s"], est["o_r"], est["g"]
    assert o_s is not None and o_r is not None and g is not None
    protocol = protocol_of(pool.get("late") or [], o_s, one_way_s)
    return SizeParts(nbytes=nbytes, protocol=protocol, o_s=o_s, o_r=o_r, g=g)


def parts_from_pingpong(results: list[dict[str, Any]],
                        points: dict[str, list[tuple[int, float]]]
                        ) -> dict[tuple[str, int], SizeParts]:
    """The parts of every size that has a point in `points` (the table's, per class) and
    parts measured in `results`."""
    out: dict[tuple[str, int], SizeParts] = {}
    for (cls, nbytes), pool in sorted(pool_parts(results).items()):
        one_way = dict(points.get(cls, [])).get(nbytes)
        if one_way is None:
            continue
        parts = size_parts(nbytes, pool, one_way)
        if parts is not None:
            out[(cls, nbytes)] = parts
    return out


def eager_limit(parts: dict[tuple[str, int], SizeParts], cls: str) -> int | None:
    """The largest size up to which every size of `cls` with parts is eager; None when the
    smallest is not (or the class has none)."""
    limit = None
    for (c, nbytes), p in sorted(parts.items()):
        if c != cls:
            continue
        if not p.eager:
            break
        limit = nbytes
    return limit
