"""A joint exact test of one event's (epsilon, delta) inequality, from both counts at once.

The Clopper-Pearson certification (:mod:`dpaudit.audit.estimators`) bounds the two
probabilities of an event separately, each at half the test's error probability, and combines
the worst ends of the two intervals.  For approximate DP that rectangle is wasteful: the
numerator count of the best event is hundreds, most of it the ``n delta`` that the inequality
subtracts, so both ends are costly, and the two errors add up where only their combination
matters.  Here the null hypothesis of one event and one epsilon,

    H0(eps):  p0 <= e^eps p1 + delta        (p0 = P[M(d) in E], p1 = P[M(d') in E]),

which every (eps, delta)-DP mechanism satisfies for every event (Dwork & Roth 2014,
Definition 2.4), is tested with one statistic of both counts ``(k0, k1)`` out of ``n`` each:

    Z(k0, k1) = (k0 - c k1 - n delta) / sqrt(k0 + c^2 (k1 + PAD) + 1),

a studentised linear contrast (the pseudo-count :data:`PAD` keeps a small ``k1`` from
under-estimating the variance), made non-increasing in ``k1`` by its running minimum
``T(k0, k1) = min_{j <= k1} Z(k0, j)`` (``Z`` itself increases in ``k0``).  The slope ``c``
is fixed before the certification samples are drawn (the auditor takes ``e^predicted`` from
its selection samples); any ``c > 0`` gives a valid test.

The p-value has a nuisance parameter ``p1``.  It is maximised over a confidence set for it
(Berger & Boos 1994, "P values maximized over a confidence set for the nuisance parameter",
JASA 89(427):1012-1016; the validity argument is short and restated here): with ``C`` the
two-sided Clopper-Pearson interval of ``p1`` at error ``gamma``,

    p(eps) = gamma + sup_{p1 in C} P_{e^eps p1 + delta, p1}[T >= T(k0, k1)]

is a valid p-value of H0(eps): ``P[p(eps) <= u] <= u`` for every ``(p0, p1)`` in H0(eps)
(``P[p1 not in C] <= gamma``; when ``p1`` is in ``C`` the supremum is at least the exact
p-value at the boundary point above the true ``(p0, p1)``, which is at least the one at the
truth, and that is at most ``u - gamma`` with probability at most ``u - gamma``).
(The region ``T >= t`` is an up-set in ``k0`` and a down-set in ``k1``, so its probability
increases in ``p0`` and decreases in ``p1``: the boundary ``p0 = e^eps p1 + delta`` is the
worst case for each ``p1``, and over a cell ``[a, b]`` of ``C`` the probability at
``(e^eps b + delta, a)`` bounds it.  So the supremum computed over a finite grid of cells is an
upper bound, never an approximation from below.)  The null sets grow with ``eps``, so the
exact ``p(eps)`` is non-decreasing in ``eps``, and the bisection returns an ``eps_lower``
at which the computed upper bound on ``p`` is at most ``alpha``.  If ``eps_lower`` exceeds a
mechanism's true epsilon ``eps'`` then ``p(eps') <= p(eps_lower) <= alpha``, an event of
probability at most ``alpha`` -- whether or not the *computed* bounds are monotone in
``eps`` (the bisection only assumes they are, to be fast).  Floating-point error only
enlarges the region whose probability is summed (its threshold is lowered by a relative
``1e-9``; each row's least ``k0`` is checked, and replaced by a smaller one when in doubt),
and the binomial tails are inflated by :data:`TAIL_ALLOWANCE`, so every rounding is on the
conservative side.

Measured gain over the Clopper-Pearson rectangle: see bench/approx_dp_limit.md.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from dpaudit.audit.estimators import (
    SELECTION_SHRINKAGE,
    _wilson,
    clopper_pearson,
)
from dpaudit.deferred_imports import scipy_stats

__all__ = [
    "JOINT_GAMMA_SHARE",
    "approximate_joint_bounds",
    "joint_epsilon_lower",
    "joint_rejects",
    "joint_slope",
    "predicted_joint_bounds",
]


#: Share of a test's error probability spent on the confidence set of the nuisance ``p1``
#: (Berger & Boos 1994 suggest 0.001 of 0.05, i.e. 2%).
JOINT_GAMMA_SHARE = 0.02
#: Initial cells of the grid over the confidence set of ``p1`` (geometric), each split in
#: :data:`SPLIT` where its bound does not pass, for at most :data:`MAX_ROUNDS` rounds and
#: :data:`MAX_CELLS` cells.
CELLS = 16
SPLIT = 4
MAX_ROUNDS = 6
MAX_CELLS = 1024
#: Cells whose probabilities are computed at once (memory: CHUNK x rows doubles).
CHUNK = 64
#: Values of ``p1`` whose masses one test keeps (each a row of at most a few hundred
#: doubles): when a call would go beyond, the kept ones are dropped first.
MASS_CACHE = 4096
#: Relative allowance for the error of SciPy's binomial tails (Boost's ibeta, about 1e-14).
TAIL_ALLOWANCE = 1e-9
#: Rows of the region whose least ``k0`` differs by less than this many standard deviations
#: of ``K0`` are summed as one (with the smaller ``k0``: conservative).
BLOCK_SD = 0.25
#: Absolute allowance per difference of two binomial distribution functions.
ABSOLUTE_ALLOWANCE = 1e-14
#: Most runs of rows summed (coarser runs beyond: still an upper bound).
MAX_BLOCKS = 256
#: Mass of ``K1`` left out of the sum on each side (added back as a bound).
TRUNCATION = 1e-12
#: Pseudo-count added to ``k1`` in the statistic's variance (a small observed ``k1``
#: under-estimates the variance; tuned in bench/approx_dp_limit.py).
PAD = 3.0
#: Factor on the normal quantile in :func:`predicted_joint_bounds` (calibrated against the
#: exact test in bench/approx_dp_limit.py).
PREDICTION_Z_FACTOR = 1.08
#: Largest epsilon searched.
EPS_MAX = 60.0
#: Width of the final bracket of the bisection on epsilon.
RESOLUTION = 5e-4


def joint_slope(predicted: float) -> float:
    """The statistic's slope ``c = e^predicted`` for an event whose selection samples predict
    the bound ``predicted`` (clipped to [0, 50]; 1 when nothing is predicted): the contrast
    ``k0 - c k1`` is then the one the null at the certified epsilon weighs."""
    if not math.isfinite(predicted):
        return 1.0 if predicted < 0 else math.exp(50.0)
    return math.exp(min(max(predicted, 0.0), 50.0))


def _statistic(k0: np.ndarray, k1: np.ndarray, n: int, delta: float, c: float) -> np.ndarray:
    return (k0 - c * k1 - n * delta) / np.sqrt(k0 + c * c * (k1 + PAD) + 1.0)


def _least_k0(j: np.ndarray, t: float, n: int, delta: float, c: float) -> np.ndarray:
    """For each ``j``, an integer at most the least ``k0`` with ``Z(k0, j) >= t`` (``Z``
    increases in ``k0``), from the root of the quadratic, checked in floating point."""
    a = c * j + n * delta
    b = c * c * (j + PAD) + 1.0
    root = a + t * t / 2 + t * np.sqrt(a + b + t * t / 4)  # the larger root of Z = t
    base = np.maximum(np.floor(root) - 2, 0.0)
    k0 = np.full(len(j), np.inf)
    for step in range(5):  # the least integer near the root where the float Z passes
        cand = base + step
        ok = _statistic(cand, j, n, delta, c) >= t
        k0 = np.where(ok & (cand < k0), cand, k0)
    # a root off by more than 2 (never seen): the whole row where the least candidate passed
    # and the one below it passes too, the fifth candidate where none passed (an integer
    # below the least k0 is always safe: it only enlarges the region)
    below = np.maximum(base - 1, 0.0)
    too_high = (k0 == base) & (base > 0) & (_statistic(below, j, n, delta, c) >= t)
    k0 = np.where(too_high, 0.0, k0)
    return np.where(np.isfinite(k0), k0, base + 4)


def _k0_rows(k_lo: int, k_hi: int, t: float, n: int, delta: float, c: float) -> np.ndarray:
    """Least ``k0`` (``n + 1``: none) of the region ``T >= t`` on the rows
    ``k1 = k_lo..k_hi``, ``T(k0, k1) = min_{j <= k1} Z(k0, j)``: the running maximum over
    ``j <= k1`` of the least ``k0`` with ``Z(k0, j) >= t``.

    ``Z`` decreases in ``j`` wherever ``j >= n delta / c`` (its derivative has the sign of
    ``-(V + c N / 2)``, ``N`` and ``V`` its numerator and variance, which is negative there
    whatever ``k0``), so beyond ``J = ceil(n delta / c)`` the least ``k0`` of ``Z`` itself
    does not decrease, and only the rows ``j <= J`` need the running maximum: no array as
    long as ``k1`` is built.
    """
    big_j = min(k_hi, math.ceil(n * delta / c) + 1)
    head = np.maximum.accumulate(_least_k0(np.arange(big_j + 1.0), t, n, delta, c))
    rows = np.arange(k_lo, k_hi + 1.0)
    own = _least_k0(rows, t, n, delta, c)
    k0 = np.where(rows <= big_j, head[np.minimum(rows, big_j).astype(int)], 0.0)
    k0 = np.maximum(k0, np.where(rows > big_j, np.maximum(head[-1], own), 0.0))
    return np.minimum(np.maximum.accumulate(k0), n + 1)


def _blocks(k0_min: np.ndarray, step: float) -> np.ndarray:
    """Start indices of runs of rows whose ``k0_min`` lies within ``step`` of the run's first
    (``k0_min`` is non-decreasing); every row its own run when ``step < 1``."""
    if step < 1 or len(k0_min) < 2:
        return np.arange(len(k0_min))
    key = np.floor((k0_min - k0_min[0]) / step)
    return np.flatnonzero(np.r_[True, key[1:] != key[:-1]])


def _by_row(k0_min: np.ndarray, starts: np.ndarray) -> bool:
    """Whether the runs are few enough rows that each row's probability is summed
    (otherwise each run's, from distribution functions at its ends)."""
    return 3 * len(starts) >= len(k0_min)


def _runs_slack(k0_min: np.ndarray, starts: np.ndarray) -> float:
    """The absolute allowance for the runs' masses: one per difference of two distribution
    functions (each errs by about 1e-16); none when rows are summed one by one."""
    return 0.0 if _by_row(k0_min, starts) else ABSOLUTE_ALLOWANCE * len(starts)


def _row_masses(
    k0_min: np.ndarray, p1: np.ndarray, n: int, lo: int, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """What :func:`_region_probability` needs of ``K1`` at each ``p1[i]``: the mass of each
    run of rows (a row per ``p1``; :func:`_blocks`'s runs ``starts``) and the mass outside
    the rows (one per ``p1``)."""
    binom = scipy_stats.binom
    q = p1[:, None]
    if _by_row(k0_min, starts):  # few rows: the probability of each row
        k1 = np.arange(lo, lo + len(k0_min))
        mass = np.add.reduceat(binom.pmf(k1[None, :], n, q), starts, axis=1)
    else:  # many rows: the probability of each run, from distribution functions at its ends
        edges = np.r_[lo + starts - 1, lo + len(k0_min) - 1]  # run i is (edges[i], edges[i+1]]
        cdf, sf = binom.cdf(edges[None, :], n, q), binom.sf(edges[None, :], n, q)
        upper_half = edges[None, :-1] >= n * q  # the smaller tail: no cancellation near 1
        mass = np.where(upper_half, sf[:, :-1] - sf[:, 1:], cdf[:, 1:] - cdf[:, :-1])
        mass = np.maximum(mass, 0.0)
    outside = binom.cdf(lo - 1, n, p1) + binom.sf(lo + len(k0_min) - 1, n, p1)
    return mass, outside


def _bounded_sum(
    k0_min: np.ndarray,
    starts: np.ndarray,
    p0: np.ndarray,
    n: int,
    mass: np.ndarray,
    outside: np.ndarray,
) -> np.ndarray:
    """:func:`_region_probability` from ``K1``'s masses (:func:`_row_masses`): each run's
    mass times ``P[K0 >= its first row's k0_min]`` at ``p0``, plus the mass outside, inflated
    by the tails' allowances."""
    tail0 = scipy_stats.binom.sf(k0_min[starts][None, :] - 1, n, p0[:, None])
    inside = np.sum(mass * tail0, axis=1)
    return (inside + outside) * (1 + TAIL_ALLOWANCE) + _runs_slack(k0_min, starts)


def _region_probability(
    k0_min: np.ndarray, p0: np.ndarray, p1: np.ndarray, n: int, lo: int, step: float
) -> np.ndarray:
    """Upper bound on ``P[(K0, K1) in region]`` for each pair ``(p0[i], p1[i])``.

    The region is ``k0 >= k0_min[k1 - lo]`` on the rows ``k1 = lo..lo+len(k0_min)-1``; rows
    outside count fully.  Rows are grouped in runs (:func:`_blocks`) and each run counted with
    its first row's ``k0_min``, the smallest (``k0_min`` is non-decreasing): a bound from
    above, exact when ``step < 1``.
    """
    starts = _blocks(k0_min, step)
    return _bounded_sum(k0_min, starts, p0, n, *_row_masses(k0_min, p1, n, lo, starts))


class _Test:
    """The joint test of one pair of counts, prepared once for every ``eps`` it is asked about.

    ``rejects(eps, alpha)`` decides ``p(eps) <= alpha`` by branch and bound over the
    confidence set of ``p1``: each cell ``[a, b]`` is bounded from above by the region's
    probability at ``(e^eps b + delta, a)``; cells whose bound exceeds ``alpha - gamma`` are
    split, until every cell passes (reject) or the probability at a boundary point
    ``(e^eps a + delta, a)`` itself exceeds it (the supremum does: no rejection) or
    :data:`MAX_ROUNDS` splits did not decide (no rejection: the safe answer).
    """

    def __init__(self, k0: int, k1: int, n: int, delta: float, slope: float, gamma: float) -> None:
        # T(k0, k1): the minimum of Z over j <= k1 (the observed point is in its region); Z
        # decreases in j beyond n delta / c (see _k0_rows)
        js = np.r_[np.arange(min(k1, math.ceil(n * delta / slope) + 1) + 1.0), float(k1)]
        t = float(np.min(_statistic(np.full(len(js), float(k0)), js, n, delta, slope)))
        t -= 1e-9 * (1.0 + abs(t))  # a slightly larger region: float error cannot shrink it
        lower, upper = clopper_pearson(k1, n, gamma / 2)  # Berger & Boos's confidence set
        self.lo_p, self.hi_p = float(lower), float(upper)
        self.n, self.delta, self.gamma = n, delta, gamma
        # rows of k1 that carry all but TRUNCATION of the mass at every p1 of the set
        self.k_lo = int(max(0, scipy_stats.binom.ppf(TRUNCATION, n, self.lo_p) - 1))
        k_hi = int(min(n, scipy_stats.binom.isf(TRUNCATION, n, self.hi_p) + 1))
        self.rows = _k0_rows(self.k_lo, k_hi, t, n, delta, slope)
        span = float(min(self.rows[-1], n) - self.rows[0]) if len(self.rows) else 0.0
        self.step = max(BLOCK_SD * math.sqrt(k0 + 1.0), span / MAX_BLOCKS)
        # K1's masses by p1: they do not depend on eps, and the bisection asks about the same
        # cells' ends at every eps (the first grid) and twice per round (bound and point)
        self.starts = _blocks(self.rows, self.step)
        self._masses: dict[float, tuple[np.ndarray, float]] = {}

    def _known_masses(self, p1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`_row_masses` at ``p1``, computed once per value (the same numbers)."""
        new = np.unique(np.array([v for v in p1.tolist() if v not in self._masses]))
        if len(self._masses) + len(new) > MASS_CACHE:
            self._masses.clear()
            new = np.unique(p1)
        for i in range(0, len(new), CHUNK):
            part = new[i : i + CHUNK]
            mass, outside = _row_masses(self.rows, part, self.n, self.k_lo, self.starts)
            for v, row, out in zip(part.tolist(), mass, outside.tolist(), strict=True):
                self._masses[v] = (row, out)
        known = [self._masses[v] for v in p1.tolist()]
        return np.stack([m for m, _ in known]), np.array([o for _, o in known])

    def _probability(self, p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
        """:func:`_region_probability` of the test's region at each ``(p0[i], p1[i])``, in
        chunks of cells (a few hundred kilobytes of matrices at a time)."""
        return np.concatenate(
            [
                _bounded_sum(
                    self.rows,
                    self.starts,
                    p0[i : i + CHUNK],
                    self.n,
                    *self._known_masses(p1[i : i + CHUNK]),
                )
                for i in range(0, len(p0), CHUNK)
            ]
        )

    def rejects(self, eps: float, alpha: float) -> bool:
        threshold = alpha - self.gamma
        if threshold <= 0:
            return False
        if self.lo_p > 0:
            edges = np.geomspace(self.lo_p, self.hi_p, CELLS + 1)
        else:
            edges = np.r_[0.0, np.geomspace(self.hi_p * 1e-6, self.hi_p, CELLS)]
        edges[0], edges[-1] = self.lo_p, self.hi_p  # the set itself, not its rounded ends
        a, b = edges[:-1], edges[1:]
        ratio = math.exp(eps)
        for _ in range(MAX_ROUNDS):
            upper = self._probability(np.minimum(1.0, ratio * b + self.delta), a)
            if np.all(upper <= threshold):
                return True
            a, b = a[upper > threshold], b[upper > threshold]
            point = self._probability(np.minimum(1.0, ratio * a + self.delta), a)
            if np.any(point > threshold) or len(a) * SPLIT > MAX_CELLS:
                return False
            parts = np.linspace(0.0, 1.0, SPLIT + 1)
            grid = a[:, None] + (b - a)[:, None] * parts[None, :]
            a, b = grid[:, :-1].ravel(), grid[:, 1:].ravel()
        return False


def joint_rejects(
    eps: float,
    k0: int,
    k1: int,
    n: int,
    delta: float,
    *,
    alpha: float,
    slope: float,
    gamma: float,
) -> bool:
    """Whether the joint test rejects H0(eps) at ``alpha`` for counts ``(k0, k1)`` of ``n``.

    Args:
        eps: the epsilon of the null hypothesis, >= 0.
        k0: numerator hits, in [0, n].
        k1: denominator hits, in [0, n].
        n: samples per side, >= 1.
        delta: the delta of the null, in [0, 1).
        alpha: the test's error probability, in (0, 1).
        slope: the statistic's ``c`` (fixed before the counts were drawn), > 0.
        gamma: error of the confidence set for ``p1`` (part of ``alpha``), in (0, alpha).

    Returns:
        True when the computed upper bound on the Berger-Boos p-value is at most ``alpha``.
    """
    return _Test(int(k0), int(k1), int(n), float(delta), slope, gamma).rejects(eps, alpha)


def joint_epsilon_lower(
    k0: int,
    k1: int,
    n: int,
    delta: float,
    alpha: float,
    *,
    slope: float,
    gamma_share: float = JOINT_GAMMA_SHARE,
    resolution: float = RESOLUTION,
) -> float:
    """The largest epsilon whose H0 the joint test rejects at ``alpha`` (rounded down).

    Privacy:
        If ``P[M(d) in E] <= e^eps' P[M(d') in E] + delta`` (true for every event when ``M``
        is (eps', delta)-DP), then for counts ``k0 ~ Bin(n, P[M(d) in E])`` and
        ``k1 ~ Bin(n, P[M(d') in E])`` drawn independently of ``slope``,
        ``P[joint_epsilon_lower(k0, k1, ...) > eps'] <= alpha``.

    Args:
        k0: numerator hits, in [0, n].
        k1: denominator hits, in [0, n].
        n: samples per side, >= 1.
        delta: the delta of the claim, in [0, 1).
        alpha: error probability of this test, in (0, 1).
        slope: the statistic's ``c``, > 0, chosen without the counts.
        gamma_share: share of ``alpha`` given to the nuisance confidence set, in (0, 1).
        resolution: width of the final bisection bracket (the result is its verified low
            end), > 0.

    Returns:
        The certified lower bound, ``>= 0`` (0.0 when H0(0) is not rejected).

    Raises:
        ValueError: on counts outside [0, n] or a parameter outside its range.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not (0 <= k0 <= n and 0 <= k1 <= n):
        raise ValueError(f"k0 and k1 must be in [0, n={n}], got {k0!r} and {k1!r}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not (math.isfinite(slope) and slope > 0):
        raise ValueError(f"slope must be a finite number > 0, got {slope!r}")
    if not (math.isfinite(resolution) and resolution > 0):
        raise ValueError(f"resolution must be a finite number > 0, got {resolution!r}")
    if not 0.0 < gamma_share < 1.0:
        raise ValueError(f"gamma_share must be in (0, 1), got {gamma_share!r}")
    gamma = alpha * gamma_share
    if gamma >= 0.5:
        return 0.0

    test = _Test(int(k0), int(k1), int(n), float(delta), float(slope), gamma)

    def rejects(eps: float) -> bool:
        return test.rejects(eps, alpha)

    # bracket around the normal approximation (near the answer): rejects() holds at lo and
    # fails at hi (the bisection assumes it switches once; see the module docstring for why
    # the result is valid either way)
    approx = float(approximate_joint_bounds(np.array([k0]), np.array([k1]), n, delta, alpha)[0])
    guess = approx if math.isfinite(approx) else 0.0
    lo = 0.0
    for width in (0.003, 0.02, 0.1, 0.5):
        if guess - width > 0 and rejects(guess - width):
            lo = guess - width
            break
    else:
        if not rejects(0.0):
            return 0.0
    hi = EPS_MAX
    for up in (0.003, 0.02, 0.1, 1.0):
        if lo + up < hi and not rejects(lo + up):
            hi = lo + up
            break
        if lo + up < hi:
            lo = lo + up  # verified above
    if hi == EPS_MAX and rejects(hi):
        return hi
    while hi - lo > resolution:
        mid = (lo + hi) / 2
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return math.floor(lo * 1e9) / 1e9


def approximate_joint_bounds(
    count_num: np.ndarray, count_den: np.ndarray, n: int, delta: float, alpha: float
) -> np.ndarray:
    """The joint test's bound at (real) counts, by its normal approximation: the largest
    ``eps`` with ``x0 - e^eps x1 - n delta >= z sqrt(x0 + e^(2 eps) (x1 + PAD) + 1)``, ``z`` the
    normal quantile of ``alpha`` times :data:`PREDICTION_Z_FACTOR` (the exact test is more
    conservative than the normal approximation at small counts; calibrated in
    bench/approx_dp_limit.py). An estimate, not a bound: it ranks events and predicts limits.

    Returns:
        Approximate bounds (natural log scale, ``-inf`` when none).
    """
    x0 = np.asarray(count_num, dtype=float)
    x1 = np.asarray(count_den, dtype=float)
    z = -float(ndtri(alpha)) * PREDICTION_Z_FACTOR
    m = n * delta

    def margin(c: np.ndarray) -> np.ndarray:
        return x0 - c * x1 - m - z * np.sqrt(x0 + c * c * (x1 + PAD) + 1.0)

    ok = margin(np.ones_like(x0)) > 0
    lo, hi = np.zeros_like(x0), np.full_like(x0, 60.0)  # on log c
    for _ in range(40):
        mid = (lo + hi) / 2
        passing = margin(np.exp(mid)) > 0
        lo, hi = np.where(passing, mid, lo), np.where(passing, hi, mid)
    return np.where(ok, lo, -np.inf)


def predicted_joint_bounds(
    hits_num: np.ndarray,
    hits_den: np.ndarray,
    n_selection: int,
    n_certification: int,
    level: float,
    delta: float,
) -> np.ndarray:
    """The bound the joint test would certify if fresh samples matched the selection (a
    ranking device, like :func:`dpaudit.audit.estimators.predicted_bounds`, whose signature
    and pessimistic selection frequencies it shares): :func:`approximate_joint_bounds` at the
    expected certification counts, at the test's level ``2 level`` (``level`` being the
    per-bound level of the rectangle the auditor's scorer is built with).

    Returns:
        Predicted bounds (natural log scale, ``-inf`` when nothing is expected).
    """
    sel_lower, _ = _wilson(hits_num, n_selection, SELECTION_SHRINKAGE)
    _, sel_upper = _wilson(hits_den, n_selection, SELECTION_SHRINKAGE)
    return approximate_joint_bounds(
        np.asarray(sel_lower, dtype=float) * n_certification,
        np.asarray(sel_upper, dtype=float) * n_certification,
        n_certification,
        delta,
        2 * level,
    )
