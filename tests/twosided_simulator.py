"""Random two-rank timelines with messages whose true transfer intervals are known, for the
two-sided bounds (src/mpi_overlap/profile/analysis/twosided_bounds.py; docs/method.md, "Both ends
of a message").

Each rank alternates computation and MPI calls (true times, seconds). A message is posted
at the enter of one of the sender's calls and completes at the exit of that call or a later
one; its receive likewise on the receiver. What physics allows, and the simulator
generates: the sender's transfer (data leaving the send buffer) is an interval of length
xfer inside [send post, min(send completion, receive completion)]; the receiver's (data
arriving) one inside [send post, receive completion], so it may lie before the receive
was posted (an eager message that arrived early). The true overlap of each side is the
length of its interval inside that side's computation.

The profiler sees each rank's clock with an offset of at most its alignment error (a
random one within it is applied to every time of the rank); the bounds are computed from
those observed times.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np


@dataclass
class Rank:
    enter: np.ndarray  # true seconds
    exit: np.ndarray
    eps: float  # alignment error against rank 0
    offset: float  # |offset| <= eps: observed = true + offset

    def comp(self) -> list[tuple[float, float]]:
        """Computation intervals: between a call's exit and the next one's enter."""
        return list(zip(self.exit[:-1].tolist(), self.enter[1:].tolist(), strict=True))

    @property
    def first(self) -> float:
        return float(self.enter[0])

    @property
    def last(self) -> float:
        return float(self.exit[-1])


@dataclass
class SimMessage:
    xfer: float
    post_s: float  # true seconds
    done_s: float
    post_r: float
    done_r: float
    true_s: float  # start of the sender's true transfer interval
    true_r: float  # start of the receiver's
    in_call_s: bool
    in_call_r: bool


def overlap(a: float, b: float, comp: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(b, hi) - max(a, lo)) for lo, hi in comp)


def random_rank(rng: random.Random, eps: float, n_calls: int) -> Rank:
    t = rng.uniform(0, 1e-3)
    enter, exit_ = [], []
    for _ in range(n_calls):
        enter.append(t)
        t += rng.choice((1e-7, rng.uniform(1e-7, 2e-5), rng.uniform(1e-6, 5e-4)))
        exit_.append(t)
        t += rng.choice((0.0, rng.uniform(1e-7, 1e-5), rng.uniform(1e-5, 2e-3)))
    return Rank(np.array(enter), np.array(exit_), eps, rng.uniform(-eps, eps))


def random_message(rng: random.Random, s: Rank, r: Rank) -> SimMessage | None:
    """A message posted and completed at call boundaries; None when the drawn calls leave
    no room for a transfer (the receive completes before the send is posted)."""
    n_s, n_r = len(s.enter), len(r.enter)
    i_s = rng.randrange(n_s)
    j_s = i_s if rng.random() < 0.4 else rng.randrange(i_s, n_s)
    i_r = rng.randrange(n_r)
    j_r = i_r if rng.random() < 0.4 else rng.randrange(i_r, n_r)
    post_s, done_s = float(s.enter[i_s]), float(s.exit[j_s])
    post_r, done_r = float(r.enter[i_r]), float(r.exit[j_r])
    room = min(done_s, done_r) - post_s
    if room <= 0:
        return None
    pick = rng.random()
    xfer = room if pick < 0.15 else rng.uniform(0, room) if pick < 0.8 else rng.uniform(0, 1e-6)
    xfer = min(xfer, room)
    frac_s, frac_r = rng.random(), rng.random()
    true_s = post_s + frac_s * (min(done_s, done_r) - post_s - xfer)
    true_r = post_s + frac_r * (done_r - post_s - xfer)
    return SimMessage(xfer, post_s, done_s, post_r, done_r, true_s, true_r, i_s == j_s,
                      i_r == j_r)


def simulate(rng: random.Random) -> tuple[Rank, Rank, list[SimMessage]]:
    eps_s = rng.choice((0.0, rng.uniform(0, 1e-6), rng.uniform(0, 5e-5)))
    eps_r = rng.choice((0.0, rng.uniform(0, 1e-6), rng.uniform(0, 5e-5)))
    s = random_rank(rng, eps_s, rng.randint(1, 30))
    r = random_rank(rng, eps_r, rng.randint(1, 30))
    msgs = [m for m in (random_message(rng, s, r) for _ in range(rng.randint(1, 20))) if m]
    return s, r, msgs
