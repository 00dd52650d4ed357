"""Hinge fit of a post-work-wait curve: where does work stop hiding the message?

Model (docs/benchmarks.md, "overhead"): iter_t = b + s * max(0, x - k), x = work_t.
b is the flat level (base_t), k the knee (largest work still hidden), s the slope
after the knee (1 when the message costs the CPU nothing beyond its overhead).

The fit is exact, not a grid search: for k inside the interval between two
neighbouring x values the model is linear in (b, s, c = -s*k) (Hudson 1966), and the
candidates k = each x are linear in (b, s). All candidates are solved at once from
per-step sums (count, sum y, sum y^2), so a bootstrap replicate costs a few small
matrix products and B = 400 replicates take milliseconds.

Input is plain arrays, independent of any JSON layout; units are µs in the reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.formatting import NA, fmt_num
from .stats import percentile_ci

F64 = NDArray[np.float64]

# Level of every interval the fit reports (percentile bootstrap).
CI_LEVEL = 0.95

# --- limits (tuned on synthetic curves, tests/test_knee.py; reported in the analysis) ---
# Fewer steps leave the three parameters barely determined; the native sweep takes many more.
MIN_STEPS = 4
# Drop a sample above median + 5 robust sigmas of its step: timing noise is one-sided
# (interrupts, preemption only add time) and a least-squares fit follows outliers.
OUTLIER_SIGMAS = 5.0
# Steps with fewer samples have no reliable median/MAD to judge outliers by.
OUTLIER_MIN_SAMPLES = 5
# Floor of the robust sigma relative to the median: a coarse timer can give MAD = 0.
OUTLIER_SCALE_FLOOR = 0.01
# work_t must span at least this fraction of iter_t, else work does not grow at all
# (a work loop removed by the optimizer) and no knee can be seen.
MIN_X_SPAN = 0.05
# The fitted curve must rise above base_t by RISE_SIGMAS residual sigmas and by
# RISE_MIN_FRACTION of base_t: less is within the noise or too short to measure a slope.
RISE_SIGMAS = 3.0
RISE_MIN_FRACTION = 0.10
# The post-knee slope rests on at least this many steps beyond the knee.
MIN_POST_KNEE_STEPS = 2
# A line explains the data "as well" when the hinge lowers the residual sum of squares
# by less than this fraction; with a line slope below SLOPE_MIN that is no knee at all.
LINE_GAIN_MIN = 0.10
# iter_t cannot grow slower than the work it contains (s < 1 only through noise);
# s > 1 is CPU stolen by progress, but beyond 1.5 the measurement itself is suspect.
SLOPE_MIN = 0.7
SLOPE_MAX = 1.5
# Availability intervals wider than this (percentage points) say nothing useful.
MAX_AVAILABILITY_CI_WIDTH = 30.0
# Robust sigma of the residuals relative to the fitted iter_t above which single figures
# are not trusted: at 25 % one sample says little about a 10 % effect.
MAX_REL_NOISE = 0.25

LIMITS: dict[str, float] = {
    "min_steps": MIN_STEPS,
    "outlier_sigmas": OUTLIER_SIGMAS,
    "outlier_min_samples": OUTLIER_MIN_SAMPLES,
    "min_x_span": MIN_X_SPAN,
    "rise_sigmas": RISE_SIGMAS,
    "rise_min_fraction": RISE_MIN_FRACTION,
    "min_post_knee_steps": MIN_POST_KNEE_STEPS,
    "line_gain_min": LINE_GAIN_MIN,
    "slope_min": SLOPE_MIN,
    "slope_max": SLOPE_MAX,
    "max_availability_ci_width": MAX_AVAILABILITY_CI_WIDTH,
    "max_rel_noise": MAX_REL_NOISE,
}

VERDICTS = ("ok", "noisy", "no-knee", "odd-shape", "incomplete")
MAD_TO_SIGMA = 1.4826  # MAD of a normal distribution times this is its sigma


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95 % percentile-bootstrap interval (None: not computable)."""

    value: float | None = None
    ci95_low: float | None = None
    ci95_high: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return asdict(self)


@dataclass(frozen=True)
class HingeParams:
    """One least-squares hinge fit: base b, knee k, slope s, residual sum of squares."""

    base: float
    knee: float
    slope: float
    rss: float


@dataclass(frozen=True)
class FitDiagnostics:
    n_steps: int
    n_samples: int
    n_outliers: int
    origin: float
    rel_noise: float | None = None
    rss_hinge: float | None = None
    rss_line: float | None = None
    line_slope: float | None = None


@dataclass(frozen=True)
class KneeResult:
    """Estimates (None values unless the verdict allows them), verdict and diagnostics.

    `params` keeps the raw point fit even when the estimates are withheld, for plots.
    """

    verdict: str
    reason: str | None
    base: Estimate
    knee: Estimate
    overhead: Estimate
    availability_pct: Estimate
    slope: Estimate
    compute_slowdown_pct: Estimate
    fit: FitDiagnostics
    params: HingeParams | None


# ---------------------------------------------------------------- the exact fit


def _candidates(xg: F64, n: F64, sy: F64, syy: F64) -> tuple[F64, F64, F64, F64]:
    """Least-squares (b, k, s, rss) for every knee candidate; shapes (B, n_candidates).

    xg: sorted distinct x (G,), shifted so xg[0] == 0 for conditioning; n: samples per
    x (G,); sy: per-x sums of y (B, G); syy: total sum of y^2 (B,).
    Candidates: k = xg[m] for m < G-1, then the interior optimum of each interval
    (xg[j], xg[j+1]) with at least two x values after it (NaN rss where it falls outside).
    """
    g = xg.size
    t0 = sy.sum(axis=1)
    # k = xg[m]: y = b + s*h with h = max(0, x - k)
    knots = xg[:-1]
    h = np.maximum(0.0, xg[None, :] - knots[:, None])  # (M, G)
    s0, s1, s2 = n.sum(), h @ n, (h * h) @ n
    t1 = sy @ h.T  # (B, M)
    det = s0 * s2 - s1 * s1
    b_e = (s2 * t0[:, None] - s1 * t1) / det
    s_e = (s0 * t1 - s1 * t0[:, None]) / det
    rss_e = syy[:, None] - b_e * t0[:, None] - s_e * t1
    k_e = np.broadcast_to(knots, b_e.shape)
    if g < 3:
        return b_e, k_e, s_e, rss_e
    # k inside (xg[j], xg[j+1]): y = b + s*x*I + c*I, I = [x > k], k = -c/s
    j = np.arange(g - 2)
    ind = (np.arange(g)[None, :] > j[:, None]).astype(float)  # (J, G)
    v = np.stack([np.ones_like(ind), ind * xg[None, :], ind], axis=-1)  # (J, G, 3)
    gram = np.einsum("jgp,g,jgq->jpq", v, n, v)
    rhs = np.einsum("bg,jgp->bjp", sy, v)  # (B, J, 3)
    theta = np.einsum("jpq,bjq->bjp", np.linalg.inv(gram), rhs)
    rss_i = syy[:, None] - (theta * rhs).sum(axis=-1)
    b_i, s_i, c_i = theta[..., 0], theta[..., 1], theta[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        k_i = -c_i / s_i
    inside = (k_i > xg[j]) & (k_i < xg[j + 1])
    rss_i = np.where(inside, rss_i, np.nan)
    return (
        np.concatenate([b_e, b_i], axis=1),
        np.concatenate([k_e, k_i], axis=1),
        np.concatenate([s_e, s_i], axis=1),
        np.concatenate([rss_e, rss_i], axis=1),
    )


def _best(xg: F64, n: F64, sy: F64, syy: F64) -> tuple[F64, F64, F64, F64, F64, F64]:
    """Best hinge per replicate: (b, k, s, rss), plus the line's (slope, rss)."""
    b, k, s, rss = _candidates(xg, n, sy, syy)
    pick = np.argmin(np.where(np.isfinite(rss), rss, np.inf), axis=1)
    rows = np.arange(b.shape[0])
    # candidate 0 is k = min x: one straight line through all the data
    return b[rows, pick], k[rows, pick], s[rows, pick], rss[rows, pick], s[:, 0], rss[:, 0]


def _group(x: F64, n: F64, sy: F64) -> tuple[F64, F64, F64]:
    """Merge steps with equal x (the fit needs distinct x), sorted by x."""
    xg, inverse = np.unique(x, return_inverse=True)
    member = np.zeros((x.size, xg.size))
    member[np.arange(x.size), inverse] = 1.0
    return xg, n @ member, sy @ member


def _prepare(x: ArrayLike, ys: Sequence[ArrayLike]) -> tuple[F64, list[F64]]:
    xa = np.asarray(x, dtype=float).ravel()
    if xa.size != len(ys):
        raise ValueError(f"{xa.size} x values but {len(ys)} sample arrays")
    arrays = [np.asarray(y, dtype=float).ravel() for y in ys]
    keep = [i for i, y in enumerate(arrays) if y.size and np.isfinite(xa[i])]
    return xa[keep], [arrays[i][np.isfinite(arrays[i])] for i in keep]


def hinge_fit(x: ArrayLike, ys: Sequence[ArrayLike]) -> HingeParams | None:
    """Least-squares hinge through all samples (no outlier trimming, no bootstrap).

    x: one value per step; ys: the samples of each step. None with < 3 distinct x.
    """
    xa, arrays = _prepare(x, ys)
    if np.unique(xa).size < 3:
        return None
    b, k, s, rss, _, _ = _fit_batch(xa, arrays, 0, None)
    return HingeParams(float(b[0]), float(k[0]), float(s[0]), float(rss[0]))


def _fit_batch(
    xa: F64, arrays: list[F64], bootstrap: int, rng: np.random.Generator | None
) -> tuple[F64, F64, F64, F64, F64, F64]:
    """Fit the data (row 0) and `bootstrap` resampled copies (rows 1..) in one batch.

    x and y are shifted so the normal equations are well conditioned (the hinge is
    shift-invariant); b and k come back unshifted.
    """
    x0, y0 = float(xa.min()), float(np.median(np.concatenate(arrays)))
    n = np.array([y.size for y in arrays], dtype=float)
    sy = np.empty((bootstrap + 1, len(arrays)))
    syy = np.zeros(bootstrap + 1)
    for i, y in enumerate(arrays):
        y = y - y0
        sy[0, i] = y.sum()
        syy[0] += (y * y).sum()
        if bootstrap:
            assert rng is not None
            res = y[rng.integers(0, y.size, size=(bootstrap, y.size))]
            sy[1:, i] = res.sum(axis=1)
            syy[1:] += (res * res).sum(axis=1)
    xg, ng, syg = _group(xa - x0, n, sy)
    b_all, k_all, s_all, rss_all, line_s, line_rss = _best(xg, ng, syg, syy)
    return b_all + y0, k_all + x0, s_all, rss_all, line_s, line_rss


# ---------------------------------------------------------------- analysis


def _trim(y: F64) -> F64:
    """Drop high outliers (see OUTLIER_SIGMAS)."""
    if y.size < OUTLIER_MIN_SAMPLES:
        return y
    med = float(np.median(y))
    scale = max(MAD_TO_SIGMA * float(np.median(np.abs(y - med))), OUTLIER_SCALE_FLOOR * abs(med))
    return y[y <= med + OUTLIER_SIGMAS * scale]


def _est(value: float, reps: F64, lo_clip: float = -np.inf, hi_clip: float = np.inf) -> Estimate:
    """Point value and percentile interval; JSON has no NaN, so undefined values are None."""
    lo, hi = percentile_ci(np.clip(reps, lo_clip, hi_clip), CI_LEVEL)
    if not np.isfinite(value):
        return Estimate(None, lo, hi)
    return Estimate(float(np.clip(value, lo_clip, hi_clip)), lo, hi)


def clip_problem(raw: Estimate, shown: Estimate, lo: float, hi: float, what: str,
                 unit: str) -> tuple[str, str] | None:
    """(verdict, reason) when clipping `raw` to [lo, hi] for display hides a problem: the
    interval became a point (the whole interval lay outside: "odd-shape"), or the point
    estimate lies further outside than its interval reaches in ("noisy": -57 % [-70, 4]
    would show as 0.0 [0.0-4.0], read as a measurement; -2 % [-5, 3] is 0 within its
    noise and passes). None when nothing was clipped that matters."""
    if raw.value is None or raw.ci95_low is None or raw.ci95_high is None:
        return None
    where = (f"{what} {fmt_num(raw.value, '.3g', missing=NA)} {unit} before clipping to "
             f"[{lo:g}, {hi:g}] (95 % CI {fmt_num(raw.ci95_low, '.3g', missing=NA)} to "
             f"{fmt_num(raw.ci95_high, '.3g', missing=NA)})")
    if (shown.ci95_low is not None and shown.ci95_low == shown.ci95_high
            and raw.ci95_high > raw.ci95_low):
        return "odd-shape", f"{where}: the interval was clipped to a point"
    outside = max(lo - raw.value, raw.value - hi)
    reach_in = raw.ci95_high - lo if raw.value < lo else hi - raw.ci95_low
    if outside > 0 and outside > reach_in:
        return "noisy", (f"{where}: the estimate lies further outside its physical range than "
                         "its interval reaches in")
    return None


def fit_knee(
    x: ArrayLike,
    ys: Sequence[ArrayLike],
    *,
    origin: float = 0.0,
    complete: bool = True,
    bootstrap: int = 400,
    seed: int | Sequence[int] = 12345,
) -> KneeResult:
    """Fit the hinge to all samples, bootstrap 95 % intervals, and judge the result.

    x: work_t per step (its median); ys: iter_t samples per step. origin: the fixed
    cost of one loop iteration without work or message (barrier, timer), which both
    work_t and iter_t contain; availability is (k - origin) / (b - origin).
    complete=False marks a sweep cut short (verdict "incomplete", estimates kept).
    """
    xa, raw = _prepare(x, ys)
    kept = [_trim(y) for y in raw]
    n_samples = int(sum(y.size for y in kept))
    n_outliers = int(sum(y.size for y in raw)) - n_samples
    n_steps = int(xa.size)
    empty = Estimate()
    diag = FitDiagnostics(n_steps, n_samples, n_outliers, float(origin))

    def result(verdict: str, reason: str | None, **kw: object) -> KneeResult:
        fields: dict[str, object] = {
            "base": empty,
            "knee": empty,
            "overhead": empty,
            "availability_pct": empty,
            "slope": empty,
            "compute_slowdown_pct": empty,
            "fit": diag,
            "params": None,
        }
        fields.update(kw)
        return KneeResult(verdict, reason, **fields)  # type: ignore[arg-type]

    incomplete: str | None = None
    if not complete:
        incomplete = "the sweep was cut short before iter_t rose far enough"
    elif n_steps < MIN_STEPS:
        incomplete = f"only {n_steps} steps with data (need {MIN_STEPS})"
    if np.unique(xa).size < 3:
        return result("incomplete", incomplete or f"only {np.unique(xa).size} distinct work_t")

    rng = np.random.default_rng(seed)
    b_all, k_all, s_all, rss_all, line_s, line_rss = _fit_batch(xa, kept, bootstrap, rng)
    b, k, s = float(b_all[0]), float(k_all[0]), float(s_all[0])
    params = HingeParams(b, k, s, float(rss_all[0]))

    pred = b + s * np.maximum(0.0, xa - k)
    # Timing noise grows with the time measured, so the noise is judged relative to the
    # fitted value (else a long work range would look noisy); sigma is its size at base_t.
    rel = [(y - p) / p for y, p in zip(kept, pred, strict=True) if p > 0]
    rel_noise: float | None = None
    if rel:
        r = np.concatenate(rel)
        rel_noise = MAD_TO_SIGMA * float(np.median(np.abs(r - np.median(r))))
    sigma = (rel_noise or 0.0) * abs(b)
    diag = FitDiagnostics(
        n_steps,
        n_samples,
        n_outliers,
        float(origin),
        rel_noise,
        float(rss_all[0]),
        float(line_rss[0]),
        float(line_s[0]),
    )

    reps = slice(1, None)
    span = b_all - origin
    with np.errstate(divide="ignore", invalid="ignore"):
        avail = 100.0 * (k_all - origin) / span
    avail = np.where(span > 0, avail, np.nan)
    estimates = {
        "base": _est(b, b_all[reps]),
        "knee": _est(k, k_all[reps]),
        "overhead": _est(b - k, (b_all - k_all)[reps]),
        # physically bounded; a knee beyond base_t is judged on the overhead below
        "availability_pct": _est(float(avail[0]), avail[reps], 0.0, 100.0),
        "slope": _est(s, s_all[reps]),
        "compute_slowdown_pct": _est(100.0 * (s - 1.0), 100.0 * (s_all[reps] - 1.0)),
    }

    if incomplete:
        return result("incomplete", incomplete, params=params, **estimates)
    no_knee = _no_knee_reason(xa, kept, params, estimates["slope"], sigma, diag)
    if no_knee:
        return result("no-knee", no_knee, params=params)
    # Judged unclipped: clipping to [0, 100] would hide a knee below the loop cost.
    raw_availability = _est(float(avail[0]), avail[reps])
    verdict, reason = _judge(estimates, rel_noise, raw_availability)
    return result(verdict, reason, params=params, **estimates)


def _no_knee_reason(
    xa: F64,
    kept: list[F64],
    p: HingeParams,
    slope: Estimate,
    sigma: float,
    diag: FitDiagnostics,
) -> str | None:
    """Why the data show no knee, or None when they do."""
    # the fitted top of the curve: steadier than the last step's samples alone
    last = p.base + p.slope * max(0.0, float(xa.max()) - p.knee)
    x_span = float(xa.max() - xa.min())
    level = float(np.median(np.concatenate(kept)))
    if x_span < MIN_X_SPAN * abs(level):
        return (
            f"work_t barely grows (span {x_span:.3g} µs at iter_t {level:.3g} µs): "
            "the work loop was optimised away or the work range is too short"
        )
    need = max(RISE_SIGMAS * sigma, RISE_MIN_FRACTION * abs(p.base))
    if last - p.base < need:
        return (
            f"iter_t never rose above base_t (top {last:.3g} µs vs base "
            f"{p.base:.3g} ± {sigma:.2g} µs): extend the work range"
        )
    if slope.ci95_low is not None and slope.ci95_low <= 0.0:
        return (
            f"the slope after the knee is not significantly above 0 ({p.slope:.3g}, "
            f"95 % CI {fmt_num(slope.ci95_low, '.3g', missing=NA)} to "
            f"{fmt_num(slope.ci95_high, '.3g', missing=NA)})"
        )
    assert diag.rss_line is not None and diag.line_slope is not None
    gain = (diag.rss_line - p.rss) / diag.rss_line if diag.rss_line > 0 else 0.0
    if gain < LINE_GAIN_MIN and diag.line_slope < SLOPE_MIN:
        return (
            f"a straight line of slope {diag.line_slope:.3g} fits as well as a knee "
            f"(hinge lowers the squared error by {100 * gain:.0f} %): no knee in the work range"
        )
    post = int(np.unique(xa[xa > p.knee]).size)
    if post < MIN_POST_KNEE_STEPS:
        return (
            f"iter_t rises only at the last {post} step(s) (knee {p.knee:.3g} µs): "
            "the slope after the knee cannot be measured; extend the work range"
        )
    return None


def _judge(e: dict[str, Estimate], rel_noise: float | None,
           raw_availability: Estimate | None = None) -> tuple[str, str | None]:
    """odd-shape / noisy / ok for a curve that has a knee. `raw_availability`: the
    availability before it is clipped to [0, 100] for display."""
    s, o, a = e["slope"], e["overhead"], e["availability_pct"]
    assert s.value is not None and o.value is not None
    s_ci = (f"{s.value:.3g} (95 % CI {fmt_num(s.ci95_low, '.3g', missing=NA)} to "
            f"{fmt_num(s.ci95_high, '.3g', missing=NA)})")
    if s.ci95_high is not None and s.ci95_high < SLOPE_MIN:
        return "odd-shape", (
            f"iter_t grows slower than the work after the knee: slope {s_ci} < {SLOPE_MIN}"
        )
    if s.ci95_low is not None and s.ci95_low > SLOPE_MAX:
        return "odd-shape", (
            f"iter_t grows much faster than the work after the knee: slope {s_ci} > "
            f"{SLOPE_MAX}; the measurement is suspect"
        )
    if o.ci95_high is not None and o.ci95_high < 0.0:
        return "odd-shape", (
            f"the knee lies beyond base_t (overhead {o.value:.3g} µs, 95 % CI up to "
            f"{o.ci95_high:.3g}): more work hidden than the transfer takes"
        )
    r = raw_availability
    if r is not None and r.ci95_high is not None and r.ci95_high < 0.0:
        # The knee lies below the loop cost c: less work hidden than the barrier alone
        # takes. Seen when a disturbed zero-work step raised c (a 4-sample median of
        # 1.05, 3.83, 2.66, 1.06 µs against ~1.0 µs at every other step).
        return "odd-shape", (
            f"the knee lies below the loop cost (availability "
            f"{fmt_num(r.value, '.3g', missing=NA)} % before clipping, 95 % CI up to "
            f"{r.ci95_high:.3g}): the zero-work baseline is "
            "suspect, most likely a disturbed zero-work step"
        )
    clipped = clip_problem(r, a, 0.0, 100.0, "availability", "%") if r else None
    if clipped:
        return clipped
    if a.ci95_low is not None and a.ci95_high is not None:
        width = a.ci95_high - a.ci95_low
        if width > MAX_AVAILABILITY_CI_WIDTH:
            return "noisy", (
                f"availability 95 % CI is {width:.0f} points wide ({a.ci95_low:.0f} to "
                f"{a.ci95_high:.0f} %), more than {MAX_AVAILABILITY_CI_WIDTH:.0f}"
            )
    if rel_noise is not None and rel_noise > MAX_REL_NOISE:
        return "noisy", (
            f"residual noise is {100 * rel_noise:.0f} % of base_t "
            f"(limit {100 * MAX_REL_NOISE:.0f} %)"
        )
    if not SLOPE_MIN <= s.value <= SLOPE_MAX:
        return "noisy", f"slope after the knee {s_ci} is outside {SLOPE_MIN} to {SLOPE_MAX}"
    return "ok", None
