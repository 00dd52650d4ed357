"""How far a transfer-time table can be trusted: per-size estimates from the undisturbed
samples of ping-pong runs, a fit that is non-decreasing in size, and the verdict the table
carries (docs/method.md, "Transfer-time table").

`mo_pingpong` records for every sample its one-way time and the smaller of the two
ranks' CPU shares (thread CPU time / wall time over the sample). MPI ranks busy-poll, so
a rank that kept its core has a share of about 1; one that was descheduled, even for a
fraction of the sample, has less, and its sample is too long by an amount nobody knows.
Here:

1. *Undisturbed* samples are those with a share of at least CLEAN_SHARE; the rest are
   discarded, not averaged in.
2. A size's *estimate* is the QUANTILE (lower quartile) of its undisturbed samples, its
   *spread* their interquartile range relative to the estimate: noise that the share does
   not see (shared caches, interrupts, a neighbour's memory traffic) only adds time, so a
   low quantile resists it, and the lower quartile is still stable with a few samples.
3. The *fit* is the isotonic (non-decreasing) regression of the log estimates over size,
   weighted by the square root of the number of undisturbed samples, refitted without
   the size furthest off while one is more than FIT_SUSPECT off: a larger message never
   moves faster through the same library, noise is multiplicative, a size with many
   samples knows its time better than one with few (but not n times better: samples of
   one visit share its disturbances), and one bad size must not drag its neighbours.
4. The estimate's *interval* is the distribution-free 95 % confidence interval of the
   lower quartile from the order statistics (quantile_interval: binomial ranks; the whole
   sample range when the samples are too few for 95 %).
5. The *verdict* per size and for the table follows the rules of `judge_size` and
   `judge_table` (ok / noisy / suspect; a size with fewer than MIN_CLEAN undisturbed
   samples is *unmeasured* and left out of the table): from the estimate's own
   uncertainty — the interval's width relative to the estimate and the fit's residual
   in units of the interval — never from the machine's load, which is said beside it.
   A suspect size is one whose samples contradict the value the fit gives it; the table
   is suspect only when such sizes leave the fit without support, since its values are
   the fit's.

Samples of several runs (the calibration and its re-measurement of the suspect sizes)
are pooled per size before estimating.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.sizes import format_size

if TYPE_CHECKING:
    import numpy as np

# A sample counts as undisturbed when both ranks had at least this share of its wall time
# on a CPU. Measured shares are bimodal: 1.00-1.01 for undisturbed samples, mostly below
# 0.5 once a rank lost its core for one scheduler slice (docs/benchmarks.md, section pingpong).
CLEAN_SHARE = 0.9
QUANTILE = 0.25
# Fewer undisturbed samples than this: the size is unmeasured (left out of the table).
MIN_CLEAN = 3
# The fit leaves out the size furthest off it while that one is more than FIT_SUSPECT off
# (relative departure), refitting without it, so that one bad size does not drag its
# neighbours.
FIT_SUSPECT = 0.25
# A size's verdict comes from its estimate's own uncertainty: the 95 % interval of the
# lower quartile (quantile_interval) and where the fit lies from it.
# - Interval wider than WIDTH_NOISY of the estimate: noisy (the size's samples do not
#   pin its time down).
# - Fit outside the interval by more than RESIDUAL_NOISY half-widths (|estimate - fit| /
#   half-width) *and* more than FIT_NOISY off: noisy; by more than RESIDUAL_SUSPECT
#   half-widths and more than FIT_SUSPECT off: suspect. The relative floors keep an
#   interval of a few ns (hundreds of quiet samples) from calling a difference no bound
#   would notice a disagreement; the units keep a wide interval from calling noise one.
WIDTH_NOISY = 0.5
# ... and wider than this in seconds: the quiet machine's own jitter at the smallest sizes
# (Debian Open MPI's 4-8 B, about 0.3 µs, had intervals 0.12-0.23 µs wide in 5 quiet
# calibrations), which no relative width can fall below there.
WIDTH_FLOOR_S = 0.25e-6
RESIDUAL_NOISY = 2.0
RESIDUAL_SUSPECT = 4.0
# Above the drift between sizes measured minutes apart on a quiet machine (up to 11.2 %
# off the fit at MPICH's 16-256 B in 5 quiet calibrations, each size's interval a few %).
FIT_NOISY = 0.15
# The sizes on either side of a size whose visits give its interval's visit spread.
VISIT_NEIGHBOURS = 2
# More suspect sizes than this fraction of a class's measured sizes: the fit rests on too
# few agreeing sizes, and the table is suspect. Fewer: each is left out of the fit, which
# carries its neighbours' value there, and the table is noisy.
SUSPECT_SHARE = 0.25
# More unmeasured sizes than this fraction (per class): the table is suspect.
UNMEASURED_SUSPECT = 0.5

VERDICTS = ("ok", "noisy", "suspect")
UNMEASURED = "unmeasured"
UNVERIFIED = "unverified"  # a table of an older format, without a verdict
_RANK = {"ok": 0, "noisy": 1, UNVERIFIED: 1, UNMEASURED: 1, "suspect": 2}


@dataclass
class SizeQuality:
    """One size of one pair class: its samples, estimate, fit and verdict."""

    cls: str
    nbytes: int
    samples: int  # every sample taken
    clean: int  # undisturbed samples
    estimate_s: float | None = None  # QUANTILE of the undisturbed samples
    spread: float | None = None  # (q75 - q25) / q25 of the undisturbed samples
    lo_s: float | None = None  # the estimate's 95 % interval (quantile_interval)
    hi_s: float | None = None
    fitted_s: float | None = None  # the monotone fit at this size
    # QUANTILE of each visit's undisturbed samples, for visits with MIN_CLEAN of them
    visit_estimates: list[float] = field(default_factory=list)
    # each of those visits' own interval width, relative to its estimate
    visit_widths: list[float] = field(default_factory=list)
    visits_clean: int = 0  # visits with at least one undisturbed sample
    # The order statistics' interval before widen_by_visits took in the visits: what
    # the size's own samples pin down (judged by its width)
    samples_lo_s: float | None = None
    samples_hi_s: float | None = None
    verdict: str = "ok"
    reasons: list[str] = field(default_factory=list)
    shares_known: bool = True  # False: a result without per-sample CPU shares

    @property
    def measured(self) -> bool:
        return self.estimate_s is not None and self.verdict != UNMEASURED

    @property
    def departure(self) -> float | None:
        """|estimate - fit| / fit, None when either is missing."""
        if self.estimate_s is None or not self.fitted_s:
            return None
        return abs(self.estimate_s - self.fitted_s) / self.fitted_s

    @property
    def width(self) -> float | None:
        """How well the samples of one moment pin the size's time down: the median of its
        visits' own interval widths relative to their estimates where two visits or more
        have them; else the width of the interval its pooled samples give (before the
        visits widened it); None without either. Pooled samples of visits in different
        machine states give the lower quartile an interval that spans the states when
        about a quarter of the samples are in the faster one (Debian Open MPI, quiet:
        16 B 0.281-0.576 µs from 585 samples), which is the states, not the samples."""
        if len(self.visit_widths) >= 2:
            import statistics

            return statistics.median(self.visit_widths)
        lo, hi = self.samples_interval
        if self.estimate_s is None or lo is None or hi is None:
            return None
        if self.estimate_s <= 0:
            return 0.0 if hi <= 0 else math.inf
        return (hi - lo) / self.estimate_s

    @property
    def samples_interval(self) -> tuple[float | None, float | None]:
        """The interval its pooled samples give, before widen_by_visits took in the
        visits (the interval itself where it did not)."""
        if self.samples_lo_s is not None:
            return self.samples_lo_s, self.samples_hi_s
        return self.lo_s, self.hi_s

    @property
    def residual(self) -> float | None:
        """The fit's residual in units of the interval: |estimate - fit| / half-width
        when the fit lies outside the interval (infinite for an interval of no width),
        0 inside it; None without a fit or an interval."""
        if (self.estimate_s is None or self.fitted_s is None or self.lo_s is None
                or self.hi_s is None):
            return None
        slack = 1e-9 * max(abs(self.hi_s), abs(self.lo_s))  # the fit's round trip via log
        if self.lo_s - slack <= self.fitted_s <= self.hi_s + slack:
            return 0.0
        half = (self.hi_s - self.lo_s) / 2
        return abs(self.estimate_s - self.fitted_s) / half if half > 0 else math.inf


@dataclass
class Pool:
    """The samples of one (class, size) gathered from one or more ping-pong results, and
    where each visit's samples lie in them ([start, end) indices; only results that say
    where their visits end have visits)."""

    samples: list[float] = field(default_factory=list)
    shares: list[float | None] = field(default_factory=list)
    visits: list[tuple[int, int]] = field(default_factory=list)


def pool_results(results: Iterable[dict[str, Any]]) -> dict[tuple[str, int], Pool]:
    """Samples per (class, bytes) of pingpong result documents (or their `results`)."""
    pools: dict[tuple[str, int], Pool] = {}
    for doc in results:
        res = doc.get("results", doc)
        for pair in res.get("pairs", []):
            for s in pair.get("sizes", []):
                pool = pools.setdefault((pair["class"], int(s["bytes"])), Pool())
                samples = [float(x) for x in s.get("samples_s") or []]
                shares = s.get("cpu_share")
                if not samples and finite(s.get("one_way_s")):
                    samples = [float(s["one_way_s"])]  # a summary without its samples
                    shares = None
                pool.visits += _visits(s.get("visit_ends"), len(pool.samples), len(samples))
                pool.samples += samples
                if isinstance(shares, list) and len(shares) == len(samples):
                    pool.shares += [float(x) if finite(x) else 0.0 for x in shares]
                else:
                    pool.shares += [None] * len(samples)
    return pools


def _visits(ends: Any, offset: int, n: int) -> list[tuple[int, int]]:
    """A result's visits ([start, end) in the pool, after `offset` samples) from its
    `visit_ends`; none when it has none or they do not fit its `n` samples (an older or
    damaged result: its samples are then pooled as before, without visits)."""
    if not isinstance(ends, list) or not ends or not all(
            isinstance(e, int) and not isinstance(e, bool) for e in ends):
        return []
    if ends[-1] != n or any(b <= a for a, b in zip([0, *ends], ends, strict=False)):
        return []
    return [(offset + a, offset + b) for a, b in zip([0, *ends[:-1]], ends, strict=True)]


def finite(x: Any) -> bool:
    """A real number (not a bool, NaN or an infinity): a sample or share a document holds."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def estimate(cls: str, nbytes: int, pool: Pool) -> SizeQuality:
    """The estimate and spread of one size from its pooled samples (no fit, no verdict)."""
    import numpy as np  # here, not at import: `profile` reads a table, fits none (issue 38)

    t = np.asarray(pool.samples, dtype=float)
    known = np.array([s is not None for s in pool.shares], dtype=bool)
    shares = np.array([s if s is not None else 0.0 for s in pool.shares], dtype=float)
    ok = np.isfinite(t) & (t >= 0)
    # Samples without a share (an older mo_pingpong) cannot be told apart: all are kept.
    good = ok & (~known | (shares >= CLEAN_SHARE))
    clean = t[good]
    q = SizeQuality(cls=cls, nbytes=nbytes, samples=int(ok.sum()), clean=len(clean),
                    shares_known=bool(known.all()) and len(t) > 0)
    if len(clean) >= (MIN_CLEAN if q.shares_known else 1):
        q25, q75 = np.quantile(clean, [QUANTILE, 0.75])
        q.estimate_s = float(q25)
        q.spread = float((q75 - q25) / q25) if q25 > 0 else 0.0
        q.lo_s, q.hi_s = quantile_interval(clean)
        for a, b in pool.visits:
            mine = t[a:b][good[a:b]]
            q.visits_clean += len(mine) > 0
            if len(mine) >= MIN_CLEAN:
                v = float(np.quantile(mine, QUANTILE))
                q.visit_estimates.append(v)
                v_lo, v_hi = quantile_interval(mine)
                q.visit_widths.append((v_hi - v_lo) / v if v > 0 else 0.0)
    return q


def quantile_interval(samples: Iterable[float] | np.ndarray, q: float = QUANTILE,
                      level: float = 0.95) -> tuple[float, float]:
    """A distribution-free `level` confidence interval of the `q` quantile of the
    population `samples` were drawn from: the order statistics x(l) <= x(u) (1-based
    ranks) with P(l <= B < u) >= level, B ~ Binomial(n, q) the number of samples below
    the quantile (Hahn and Meeker, "Statistical Intervals", section 5.2), taken as
    symmetric in the binomial's tails as the ranks allow. Too few samples for any pair
    of ranks to reach `level`: the whole sample range, which then covers less.
    Non-finite samples are dropped; none left is a ValueError."""
    import numpy as np  # here, not at import: `profile` reads a table, fits none (issue 38)

    x = np.sort(np.asarray(list(samples) if not isinstance(samples, np.ndarray) else samples,
                           dtype=float))
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        raise ValueError("no finite samples to make an interval from")
    from scipy.stats import binom  # here: scipy.stats takes a second to import

    alpha = 1.0 - level
    lo_rank = max(1, int(binom.ppf(alpha / 2, n, q)))
    hi_rank = min(n, int(binom.ppf(1 - alpha / 2, n, q)) + 1)
    if binom.cdf(hi_rank - 1, n, q) - binom.cdf(lo_rank - 1, n, q) < level:
        return float(x[0]), float(x[-1])
    return float(x[lo_rank - 1]), float(x[hi_rank - 1])


def _isotonic(sizes: list[SizeQuality], floor: float) -> np.ndarray:
    """The weighted isotonic regression of the sizes' log estimates (ascending bytes)."""
    import numpy as np  # here, not at import: `profile` reads a table, fits none (issue 38)

    y = np.log([max(q.estimate_s or 0.0, floor) for q in sizes])
    w = np.sqrt([max(q.clean, 1) for q in sizes])
    from scipy.optimize import isotonic_regression  # here: 0.7 s to import, for every command

    return np.exp(isotonic_regression(y, weights=w, increasing=True).x)


def monotone_fit(sizes: list[SizeQuality]) -> None:
    """Set fitted_s of the measured sizes (ascending bytes): the weighted isotonic
    regression of their log estimates, fitted again without the size furthest off it
    while that one is more than FIT_SUSPECT off, so that one bad size does not drag its
    neighbours; a size left out gets the fit of the others, interpolated (the fit
    between its neighbours, which is what the table's lookup would give it)."""
    measured = [q for q in sizes if q.estimate_s is not None]
    if not measured:
        return
    import numpy as np  # here, not at import (issue 38)

    floor = 1e-3 * min((q.estimate_s for q in measured if q.estimate_s), default=1e-9)
    active = list(measured)
    while True:
        fit = _isotonic(active, floor)
        off = [abs(math.log(max(q.estimate_s or 0.0, floor) / f))
               for q, f in zip(active, fit, strict=True)]
        i = int(np.argmax(off))
        if off[i] <= math.log1p(FIT_SUSPECT) or len(active) <= 2:
            break
        del active[i]
    for q, f in zip(active, fit, strict=True):
        q.fitted_s = float(f)
    xs = [q.nbytes for q in active]
    for q in measured:
        if q.fitted_s is None:
            q.fitted_s = float(np.interp(q.nbytes, xs, fit))
    for q in measured:
        if q.estimate_s == 0:
            q.fitted_s = 0.0


def judge_size(q: SizeQuality) -> None:
    """The size's verdict and its reasons (the rules of docs/method.md): from the width of
    its estimate's interval and the fit's residual in units of that interval; how many
    samples were disturbed is said, never judged (the interval already pays for it)."""
    q.reasons = []
    if q.estimate_s is None:
        q.verdict = UNMEASURED
        q.reasons.append(f"{q.clean} of {q.samples} samples undisturbed")
        return
    worst = "ok"

    def flag(level: str, why: str) -> None:
        nonlocal worst
        if _RANK[level] > _RANK[worst]:
            worst = level
        q.reasons.append(why)

    z, d, w = q.residual, q.departure, q.width
    if z is not None and d is not None and z > RESIDUAL_NOISY and d > FIT_NOISY:
        flag("suspect" if z > RESIDUAL_SUSPECT and d > FIT_SUSPECT else "noisy",
             f"estimate {q.estimate_s * 1e6:.3g} µs is {100 * d:.0f} % off the monotone fit "
             f"{(q.fitted_s or 0) * 1e6:.3g} µs, {_units(z)} its interval's half-width "
             f"outside it")
    if w is not None and w > WIDTH_NOISY and w * (q.estimate_s or 0.0) > WIDTH_FLOOR_S:
        if len(q.visit_widths) >= 2:
            flag("noisy", f"its visits' own 95 % intervals are {100 * w:.0f} % of their "
                          f"estimates wide (median of {len(q.visit_widths)}; "
                          f"{q.clean} undisturbed samples)")
        else:
            lo, hi = q.samples_interval
            flag("noisy", f"the estimate's 95 % interval {_us(lo)}–{_us(hi)} µs is "
                          f"{100 * w:.0f} % of it wide ({q.clean} undisturbed samples)")
    if not q.shares_known:
        flag("noisy", "no per-sample CPU shares: disturbed samples cannot be told apart")
    q.verdict = worst


def _us(x: float | None) -> str:
    return f"{(x or 0.0) * 1e6:.3g}"


def _units(z: float) -> str:
    return "infinitely many times" if math.isinf(z) else f"{z:.1f} times"


def judge(results: Iterable[dict[str, Any]]) -> dict[str, list[SizeQuality]]:
    """Every size of every class of the pooled results, estimated, fitted and judged
    (ascending bytes per class)."""
    pools = pool_results(results)
    out: dict[str, list[SizeQuality]] = {}
    for (cls, nbytes), pool in sorted(pools.items()):
        out.setdefault(cls, []).append(estimate(cls, nbytes, pool))
    for sizes in out.values():
        widen_by_visits(sizes)
        monotone_fit(sizes)
        for q in sizes:
            judge_size(q)
    return out


def visit_spread(sizes: list[SizeQuality]) -> tuple[float, int] | None:
    """(s, df): the pooled standard deviation of the log visit estimates about their
    size's mean, over a class's sizes with two visit estimates or more, and its degrees
    of freedom; None when no size has two. The machine's state (another tenant on the
    host, the clock's speed) can move every size's time between visits seconds apart by
    more than one visit's samples vary, and the samples' CPU shares cannot see it."""
    import numpy as np  # here, not at import (issue 38)

    ss, df = 0.0, 0
    for q in sizes:
        v = np.log([x for x in q.visit_estimates if x > 0])
        if len(v) >= 2:
            ss += float(((v - v.mean()) ** 2).sum())
            df += len(v) - 1
    return (math.sqrt(ss / df), df) if df else None


def widen_by_visits(sizes: list[SizeQuality], level: float = 0.95) -> None:
    """Widen each measured size's interval to hold its estimate's uncertainty from the
    visits too: est·exp(±t·s/√k), k its visits with undisturbed samples, s the visit
    spread pooled over it and its VISIT_NEIGHBOURS nearest sizes on either side (they
    share the machine's state; small messages move with it more than large ones: s
    0.1-0.3 at 0-1 KiB, 0.03-0.1 above 64 KiB on this VM) or, with fewer than 2 degrees
    of freedom there, over the class, and t Student's quantile at `level` with s's
    degrees of freedom. The order statistics' interval (quantile_interval) assumes
    independent samples; samples of one visit share its state, so alone it can be a few
    ns wide while visits differ by 40 %."""
    whole = visit_spread(sizes)
    if whole is None:
        return
    from scipy.stats import t as student  # here: scipy.stats takes a second to import

    for i, q in enumerate(sizes):
        if q.estimate_s is None or q.lo_s is None or q.hi_s is None or not q.visits_clean:
            continue
        near = sizes[max(0, i - VISIT_NEIGHBOURS):i + VISIT_NEIGHBOURS + 1]
        spread = visit_spread(near)
        sd, df = spread if spread is not None and spread[1] >= 2 else whole
        half = float(student.ppf(0.5 + level / 2, df)) * sd / math.sqrt(q.visits_clean)
        q.samples_lo_s, q.samples_hi_s = q.lo_s, q.hi_s
        q.lo_s = min(q.lo_s, q.estimate_s * math.exp(-half))
        q.hi_s = max(q.hi_s, q.estimate_s * math.exp(half))


def worst(verdicts: Iterable[str]) -> str:
    """The worst of some verdicts (unmeasured and unverified count as noisy)."""
    level = max((_RANK.get(v, 2) for v in verdicts), default=0)
    return "ok" if level == 0 else "noisy" if level == 1 else "suspect"


def size_list(flagged: list[SizeQuality], every: list[SizeQuality], most: int = 4) -> str:
    """The flagged sizes as text, runs of neighbours in `every` (ascending) joined:
    '16 B, 1 MiB–64 MiB'; after `most` items, how many more."""
    index = {q.nbytes: i for i, q in enumerate(every)}
    runs: list[list[int]] = []
    for q in sorted(flagged, key=lambda q: q.nbytes):
        if runs and index[q.nbytes] == index[runs[-1][-1]] + 1:
            runs[-1].append(q.nbytes)
        else:
            runs.append([q.nbytes])
    names = [format_size(r[0]) if len(r) == 1 else f"{format_size(r[0])}–{format_size(r[-1])}"
             for r in runs]
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most
                                      else "")


def _class_suspect(sizes: list[SizeQuality], bad: list[SizeQuality]) -> str | None:
    """Why a class's suspect sizes make its fit untrustworthy, or None when the fit
    stands without them: too many of them (more than SUSPECT_SHARE of the measured
    sizes), or the largest measured size among them (its value would come from the
    smaller sizes' fit, flat, where a larger message takes longer)."""
    measured = [q for q in sizes if q.measured]
    if not bad or not measured:
        return None
    if len(bad) > SUSPECT_SHARE * len(measured):
        return (f"{len(bad)} of {len(measured)} measured sizes are more than "
                f"{100 * FIT_SUSPECT:.0f} % off the monotone fit of the others")
    if measured[-1] in bad:
        return (f"the largest measured size, {format_size(measured[-1].nbytes)}, is off the "
                "fit of the smaller ones, which cannot stand in for it")
    return None


def judge_table(classes: dict[str, list[SizeQuality]],
                host_load: dict[str, Any] | None = None) -> tuple[str, str]:
    """(verdict, one-line reason) of a table from its sizes' verdicts; the machine's load
    while measuring (machine_load.py) is said beside it, not judged: the sizes' intervals
    already show what it did to the estimates.

    Suspect when a class's suspect sizes leave its fit without support (_class_suspect)
    or more than UNMEASURED_SUSPECT of its sizes are unmeasured: the table's values
    there cannot be trusted. Noisy when a size is suspect (left out of the fit, which
    carries its neighbours' value there), noisy or unmeasured. Ok otherwise."""
    parts: list[str] = []
    level = "ok"
    for cls, sizes in classes.items():
        if not sizes:
            continue
        bad = [q for q in sizes if q.verdict == "suspect"]
        noisy = [q for q in sizes if q.verdict == "noisy"]
        missing = [q for q in sizes if q.verdict == UNMEASURED]
        prefix = f"{cls}: " if len(classes) > 1 else ""
        unsupported = _class_suspect(sizes, bad)
        if unsupported:
            parts.append(f"{prefix}suspect: {unsupported} ({size_list(bad, sizes)}; "
                         f"{bad[0].reasons[0]})")
        elif bad:
            parts.append(f"{prefix}left out of the fit, which carries the neighbours' value "
                         f"there: {size_list(bad, sizes)} ({bad[0].reasons[0]})")
        too_few = len(missing) > UNMEASURED_SUSPECT * len(sizes)
        if too_few:
            parts.append(f"{prefix}{len(missing)} of {len(sizes)} sizes had too few "
                         "undisturbed samples to be measured")
        elif missing:
            parts.append(f"{prefix}not measured (too few undisturbed samples, left out) at "
                         f"{size_list(missing, sizes)}")
        if noisy:
            parts.append(f"{prefix}noisy at {size_list(noisy, sizes)} ({noisy[0].reasons[0]})")
        spread = visit_spread(sizes)
        if spread is not None:  # said, not judged: the intervals carry it
            parts.append(f"{prefix}a size's visits, seconds apart, typically differed by "
                         f"±{100 * math.expm1(spread[0]):.0f} %, which the intervals include")
        this = ("suspect" if unsupported or too_few
                else "noisy" if bad or noisy or missing else "ok")
        level = worst([level, this])
    clean = sum(q.clean for s in classes.values() for q in s)
    total = sum(q.samples for s in classes.values() for q in s)
    n = sum(len(s) for s in classes.values())
    parts.append(f"{n} sizes, " if level == "ok" else "")
    parts[-1] += f"{clean} of {total} samples undisturbed"
    if host_load and host_load.get("foreign_share") is not None:
        parts.append(f"other processes used {100 * host_load['foreign_share']:.0f} % of the "
                     "CPU while measuring (the intervals include its effect)")
    return level, "; ".join(parts)


def suspect_sizes(classes: dict[str, list[SizeQuality]]) -> list[int]:
    """The sizes worth measuring again: suspect or unmeasured in any class."""
    return sorted({q.nbytes for sizes in classes.values() for q in sizes
                   if q.verdict in ("suspect", UNMEASURED)})
