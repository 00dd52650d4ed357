"""The overlap bounds of a message from both of its ends (docs/method.md, "Both ends of a
message"): the windows in which its transfer must lie once the other end's times are
known, and the paper's case-2 formulas (Shet et al., §2.2) over such a window.

A message's transfer lasts `xfer` (the a-priori table's time) and lies within
[sender's post, receiver's completion]: its data cannot leave before the send is posted,
and the receive returns only once the data is in its buffer. On each side the window is
intersected with what that side knows of its own transfer:

* sender: [its post, min(its completion, receiver's completion + ε)]: the send buffer is
  the user's again at the send's completion, and the data has arrived by the receiver's;
* receiver: [sender's post − ε, its completion]: the data may have arrived before the
  receive was posted (eager protocols), so the window may reach back before the post;
  when the send was certainly posted after the receive (sender's post − ε ≥ receiver's
  post), the window lies inside the receiver's own [post, completion].

ε is the alignment error between the two ranks' clocks (the sum of each rank's error
against rank 0), added on the side that widens the window, so a window holds the true
interval whatever the clocks' offsets within that error. Over a window W of the thread
that posted the transfer, with comp = its computation in W, lib = its time inside MPI
calls in W and unknown = the part of W outside its first and last event:

    max = min(comp + unknown, xfer),   min = max(0, xfer − lib − unknown),

and min is cut to max when the window is shorter than xfer allows (counted).

With the transfer model's parts (a table of format 4), a message of an eager size whose
data had certainly arrived before its receive was posted (`arrived_window`) is split on
the receiver: its last part, o_r, is inside the receive (overlapping nothing), the rest,
xfer − o_r, in the window before it that the send's times give.
Pure: numpy arrays in, floats out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

ROUNDING = 1e-9  # relative: sums of seconds that differ by less are equal


@dataclass(frozen=True)
class Bounds:
    lo: float
    hi: float
    clamped: bool = False  # xfer did not fit the window's time: min cut to max


class CallTimes:
    """One thread's outermost MPI calls as [enter, exit] seconds (sorted, disjoint) and
    the span of its events [first, last]: the computation and library time of any window."""

    def __init__(self, enter: np.ndarray, exit_: np.ndarray, first: float, last: float) -> None:
        # numpy here: an untraced profile makes no CallTimes, and its analysis (profile's
        # start-up, issue 38) does without numpy's import
        import numpy as np

        self.enter = np.asarray(enter, dtype=np.float64)
        self.exit = np.maximum(np.asarray(exit_, dtype=np.float64), self.enter)
        self.first, self.last = float(first), float(last)
        dur = self.exit - self.enter
        self.cum = np.concatenate(([0.0], np.cumsum(dur)))  # call time before call i

    def _lib_before(self, t: float) -> float:
        """Time inside calls before t."""
        k = int(self.enter.searchsorted(t, side="right")) - 1
        if k < 0:
            return 0.0
        return float(self.cum[k] + min(max(t - self.enter[k], 0.0), self.exit[k] - self.enter[k]))

    def split(self, a: float, b: float) -> tuple[float, float, float]:
        """(computation, library, unknown) seconds of [a, b]."""
        if b <= a:
            return 0.0, 0.0, 0.0
        ka, kb = max(a, self.first), min(b, self.last)
        known = max(0.0, kb - ka)
        lib = min(known, max(0.0, self._lib_before(kb) - self._lib_before(ka))) if known else 0.0
        return known - lib, lib, (b - a) - known


def case2(xfer: float, comp: float, lib: float, unknown: float = 0.0) -> Bounds:
    """The paper's case 2 over a window split into computation, library time and time of
    unknown use (which counts against each bound)."""
    hi = min(comp + unknown, xfer)
    lo = max(0.0, xfer - lib - unknown)
    if lo > hi:  # beyond rounding (a window exactly xfer long): the table overstates it
        return Bounds(hi, hi, lo - hi > ROUNDING * xfer)
    return Bounds(lo, hi)


def window_bounds(calls: CallTimes, a: float, b: float, xfer: float) -> Bounds:
    comp, lib, unknown = calls.split(a, b)
    return case2(xfer, comp, lib, unknown)


def sender_window(post_s: float, done_s: float | None, done_r: float,
                  eps: float) -> tuple[float, float]:
    """The sender's window; done_s None: its completion was not seen."""
    end = done_r + eps if done_s is None else min(done_s, done_r + eps)
    return post_s, end


def receiver_window(post_s: float, post_r: float, done_r: float,
                    eps: float) -> tuple[float, float, bool]:
    """The receiver's window and whether it lies inside the receive's own [post,
    completion] (the send was posted after the receive, beyond the clock error)."""
    start = post_s - eps
    return start, done_r, start >= post_r


def arrived_window(post_s: float, done_s: float | None, post_r: float, latency: float,
                   eps: float) -> tuple[float, float] | None:
    """Where an eager message's transfer before its receive lies, when its data had
    certainly arrived before the receive was posted (docs/method.md, "The transfer model's
    parts"): an eager send's data is in flight from its post and arrives at most `latency`
    (the model's L) after the send returns, so by done_s + L + ε on the receiver's clock.
    If that is no later than the receive's post, the receive holds only o_r and the rest
    of the transfer, xfer − o_r, lies in [post_s − ε, done_s + L + ε]; else None (the
    whole transfer keeps the receiver's window)."""
    if done_s is None:
        return None
    arrived_by = done_s + latency + eps
    if arrived_by > post_r:
        return None
    return post_s - eps, arrived_by


def intersect(a: Bounds, b: Bounds) -> Bounds:
    """Two valid bounds of one quantity: the tighter of each end."""
    lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
    if lo > hi:  # only by rounding between two computations of one figure
        lo = hi
    return Bounds(lo, hi, a.clamped or b.clamped)
