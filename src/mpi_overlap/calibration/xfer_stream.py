"""The stream of the transfer-time table: per pair class, the time per message of a window
of messages kept back to back (`mo_pingpong --stream`; docs/method.md, "A busy link").

A ping-pong leaves the link idle between its messages. A link with a burst allowance (the
emulated cluster's tbf bucket: 1 ms of the rate, at least 16 KiB) refills it meanwhile, so
the table's largest sizes can be priced as bursts: at 400 Mbit/s its slope between 32 and
64 KiB was 7.6 ns/B where the wire takes 20. LogGP's G (the time per byte of a long
message, the pace of a link kept busy) is a streaming property: the replay serialises a
link direction's messages G s each (predict/model.py), and takes G from the stream where
the table has one.

Each sample is one window (the peer's completions over its second half, after the burst);
the estimate is the lower quartile of the undisturbed samples (CPU share at least
CLEAN_SHARE), with its order-statistic interval, as for the table's points
(xfer_parts.estimate_part). With fewer than MIN_CLEAN undisturbed windows it is the lower
quartile of all of them (at least MIN_CLEAN): a window's pace is the link's, which a rank
losing its core can only slow, never speed up, and on the emulated cluster at 400 Mbit/s
a rank lost 12-31 % of its core in 3 of 5 windows (other processes used 1 % of the CPU:
the kernel's TCP and tbf work is the likely taker), while all 5 took 1,339-1,372 µs per
message (the line's undisturbed count says so). Fewer than
MIN_CLEAN windows at all: no stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .xfer_parts import Part, clean_samples, estimate_part
from .xfer_quality import finite


@dataclass(frozen=True)
class Stream:
    """One class's stream: message size, window, seconds per message (with its interval)
    and how many of its windows were undisturbed of how many."""

    nbytes: int
    window: int
    per_message: Part
    undisturbed: int
    samples: int

    @property
    def per_byte_s(self) -> float:
        """Seconds per byte of a link kept busy (LogGP's G); 0 for a stream of 0 bytes."""
        return self.per_message.value_s / self.nbytes if self.nbytes > 0 else 0.0


def streams_from_pingpong(results: Iterable[dict[str, Any]]) -> dict[str, Stream]:
    """Per class, the stream of pingpong result documents (or their `results`), samples
    pooled over the runs of the same message size and window (the first run's size)."""
    pools: dict[str, tuple[int, int, list[float], list[float]]] = {}
    for doc in results:
        for pair in doc.get("results", doc).get("pairs", []):
            st = pair.get("stream")
            if not isinstance(st, dict):
                continue
            samples, shares = st.get("samples_s") or [], st.get("cpu_share") or []
            if len(samples) != len(shares):
                continue  # samples whose shares are not known cannot be judged
            key = (int(st["bytes"]), int(st["window"]))
            pool = pools.setdefault(pair["class"], (*key, [], []))
            if pool[:2] != key:
                continue
            pool[2].extend(float(x) if finite(x) else -1.0 for x in samples)
            pool[3].extend(float(x) if finite(x) else 0.0 for x in shares)
    out: dict[str, Stream] = {}
    for cls, (nbytes, window, samples, shares) in pools.items():
        # too few undisturbed windows: all of them (a window's pace can only be slowed)
        part = estimate_part(samples, shares) or estimate_part(samples, [1.0] * len(samples))
        if part is not None:
            out[cls] = Stream(nbytes=nbytes, window=window, per_message=part,
                              undisturbed=len(clean_samples(samples, shares)),
                              samples=len(samples))
    return out
