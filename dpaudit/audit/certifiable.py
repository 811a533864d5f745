"""The statistical limit of a certified bound: what one event can certify at a sample size.

The auditor certifies ``ln((p_num_lower - delta) / p_den_upper)`` from one-sided
Clopper-Pearson bounds on fresh samples (:mod:`dpaudit.audit.estimators`).  Even a perfect
event search cannot beat that formula: with ``n`` samples a side, an event of probabilities
``(p, q)`` certifies about what the formula gives at the *expected* counts ``n p`` and
``n q``.  Maximised over a family of events (the threshold events of a mechanism, say), that
is the **statistical limit** of an audit with ``n`` samples: for the Gaussian mechanism
(sigma 1, sensitivity 1, delta 1e-5, exact epsilon 4.377) one threshold event certifies at most
about 3.81 at 10^7 samples a side and 4.29 at 10^9 (one test, 95% confidence).

Public functions:

* :func:`statistical_limit` -- the limit of a family of events at ``samples`` a side;
* :func:`samples_needed` -- the inverse: samples a side for a limit of ``target``;
* :func:`threshold_probabilities` -- the threshold events ``x >= t`` of a Gaussian or Laplace
  pair in closed form (tail-accurate), to feed the two functions above;
* :func:`empirical_limit` -- the limit estimated from observed outputs (the auditor's
  selection samples), printed beside an audit's result.

The expected counts ``n p`` are used as they are, not rounded: the Clopper-Pearson bound is
the incomplete-beta quantile, which is defined (and monotone) for real counts and equals the
exact binomial bound at integers.  The limit is a *prediction* of what an audit certifies
(observed counts scatter around their expectations, so a single audit may land above or below
it); it is rounded down like every certified bound, so that comparing an audit with it is
never flattering to the audit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from dpaudit.audit.estimators import (
    SELECTION_SHRINKAGE,
    _wilson,
    bound_level,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
)
from dpaudit.audit.joint import approximate_joint_bounds, joint_epsilon_lower, joint_slope
from dpaudit.audit.validation import check_confidence, check_delta

__all__ = [
    "StatisticalLimit",
    "counted_frequencies",
    "empirical_limit",
    "samples_needed",
    "statistical_limit",
    "threshold_frequencies",
    "threshold_probabilities",
]

#: Default thresholds of :func:`threshold_probabilities`, per unit of the noise scale.
THRESHOLD_POINTS = 4001
#: Events whose exact bound is computed (the best by the Wilson approximation).
REFINED = 64
#: Ranks from each end of the sorted observed values used as thresholds (when there are many).
GRID_RANKS = 5000
#: Least hits on both sides of an event whose frequencies estimate a limit: rarer events
#: frequencies scatter so widely that the maximum over them is mostly luck.
MIN_HITS = 5
#: The values of ``method``.
METHODS = ("clopper-pearson", "joint", "joint-approx")
#: Events at which the joint test's limit is evaluated: denominator probabilities this many
#: times the rectangle's best event's (the joint test's best events are rarer).
JOINT_FACTORS = (0.35, 0.5, 0.7, 1.0)
JOINT_EVENTS = len(JOINT_FACTORS)
#: Resolution of the joint test's bisection in a limit (a prediction: coarser is enough).
JOINT_RESOLUTION = 2e-3
#: The slope of the joint statistic at an event: e^(rectangle's bound + this).
JOINT_SLOPE_SHIFT = 0.1
#: Largest sample count :func:`samples_needed` searches (10^18 per side).
MAX_SEARCH_SAMPLES = 10**18


@dataclass(frozen=True)
class StatisticalLimit:
    """The best bound one event of a family certifies at expected counts.

    Attributes:
        epsilon: the limit (natural log scale), rounded down; 0.0 when no event certifies.
        index: index of the best event in the family (``-1`` when none certifies).
        p_numerator: numerator probability of the best event.
        p_denominator: denominator probability of the best event.
        samples: samples per side at which the limit is taken.
        delta: the delta subtracted from the numerator.
        confidence: family-wise confidence of the certification it predicts.
        tests: Bonferroni count of the certification it predicts.
    """

    epsilon: float
    index: int
    p_numerator: float
    p_denominator: float
    samples: int
    delta: float
    confidence: float
    tests: int

    def __float__(self) -> float:
        return self.epsilon

    def __str__(self) -> str:
        return (
            f"statistical limit {math.floor(self.epsilon * 1e4) / 1e4:.4f} at {self.samples:,} "
            f"samples per side (one event at expected counts, delta={self.delta:g}, "
            f"confidence {self.confidence:g}, {self.tests} test(s))"
        )


def _probabilities(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1 or len(arr) == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of probabilities")
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        bad = arr[~((arr >= 0.0) & (arr <= 1.0))][0]
        raise ValueError(f"{name} must hold probabilities in [0, 1], got {bad!r}")
    return arr


def _check_common(samples: object, delta: object, confidence: object, tests: object) -> None:
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples must be an integer >= 1, got {samples!r}")
    check_delta(delta)
    check_confidence(confidence)
    if isinstance(tests, bool) or not isinstance(tests, (int, np.integer)) or tests < 1:
        raise ValueError(f"tests must be an integer >= 1, got {tests!r}")


def _limit_values(
    p_num: np.ndarray, p_den: np.ndarray, samples: int, delta: float, level: float
) -> np.ndarray:
    """Natural-log bound of every event at expected counts (``-inf`` where none).

    The exact Clopper-Pearson bounds are computed for the :data:`REFINED` events that the
    Wilson score approximation ranks best (the exact bound is a smooth, unimodal function of
    a threshold, and the Wilson ranking agrees with it near the top); every other event gets
    ``-inf``.  So the maximum is the exact formula's, at a fraction of the cost.
    """
    w_lower, _ = _wilson(p_num * samples, samples, level)
    _, w_upper = _wilson(p_den * samples, samples, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = np.log(np.maximum(w_lower - delta, 0.0) / w_upper)
    values = np.full(len(p_num), -np.inf)
    top = np.argsort(-approx, kind="stable")[:REFINED]
    top = top[np.isfinite(approx[top])] if np.isfinite(approx[top]).any() else top
    lower = clopper_pearson_lower(p_num[top] * samples, samples, level)
    upper = clopper_pearson_upper(p_den[top] * samples, samples, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (lower - delta) / upper
        values[top] = np.where(ratio > 0, np.log(np.where(ratio > 0, ratio, 1.0)), -np.inf)
    return values


def statistical_limit(
    p_numerator: Sequence[float] | np.ndarray,
    p_denominator: Sequence[float] | np.ndarray,
    *,
    samples: int,
    delta: float = 0.0,
    confidence: float = 0.95,
    tests: int = 1,
    method: str = "clopper-pearson",
) -> StatisticalLimit:
    """The best certified lower bound one event of a family reaches at expected counts.

    Evaluates the auditor's certification formula
    ``ln((CP_lower(n p) - delta) / CP_upper(n q))`` with each one-sided Clopper-Pearson bound at
    level ``(1 - confidence) / (2 tests)`` (:func:`dpaudit.audit.estimators.bound_level`) at the
    expected counts of every event, and keeps the largest.

    Args:
        p_numerator: ``P[M(d) in E_i]`` of each event ``E_i`` (numerator dataset), in [0, 1].
        p_denominator: ``P[M(d') in E_i]`` of the same events, same length, in [0, 1].
        samples: certification samples per dataset, >= 1 (an audit of ``samples`` draws a
            side certifies on ``(1 - selection_fraction) * samples`` of them).
        delta: the delta of the claim, in [0, 1).
        confidence: family-wise confidence, in (0, 1).
        tests: number of tests the certification is corrected for, >= 1 (an audit with
            ``certify_top=k`` makes ``2 k``).
        method: the certification whose limit is taken: ``"clopper-pearson"`` (the
            rectangle, each bound at ``(1 - confidence) / (2 tests)``: the issue's reference
            numbers) or ``"joint"`` (:mod:`dpaudit.audit.joint` at level
            ``(1 - confidence) / tests``, evaluated at the expected counts rounded to integers
            for :data:`JOINT_EVENTS` events around the rectangle's best, the rarer side
            included: the joint test favours rarer events); ``"joint-approx"`` the joint
            test's normal approximation
            (:func:`dpaudit.audit.joint.approximate_joint_bounds`, an estimate within about
            0.01 of the exact test at these counts, and much faster: the limit an audit
            prints).

    Returns:
        A :class:`StatisticalLimit` (``float(limit)`` is the epsilon, rounded down).

    Raises:
        ValueError: on probabilities outside [0, 1], arrays of different lengths, or a
            parameter outside its range (the message names it).
    """
    p_num = _probabilities("p_numerator", p_numerator)
    p_den = _probabilities("p_denominator", p_denominator)
    if p_num.shape != p_den.shape:
        raise ValueError(
            f"p_numerator and p_denominator must have equal lengths, got {len(p_num)} and "
            f"{len(p_den)}"
        )
    _check_common(samples, delta, confidence, tests)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    level = bound_level(1.0 - confidence, int(tests))
    values = _limit_values(p_num, p_den, int(samples), float(delta), level)
    i = int(np.argmax(values))
    if not np.isfinite(values[i]):
        return StatisticalLimit(0.0, -1, 0.0, 0.0, int(samples), float(delta), confidence, tests)
    if method == "joint":
        return _joint_limit(p_num, p_den, values, int(samples), float(delta), confidence, tests)
    if method == "joint-approx":
        approx = approximate_joint_bounds(
            p_num * samples, p_den * samples, int(samples), float(delta), (1 - confidence) / tests
        )
        i = int(np.argmax(approx))
        eps = max(0.0, math.floor(float(approx[i]) * 1e4) / 1e4) if np.isfinite(approx[i]) else 0.0
        return StatisticalLimit(
            eps, i, float(p_num[i]), float(p_den[i]), int(samples), float(delta), confidence, tests
        )
    # the certified formula itself (rounded down, float safety margins) at the best event
    lower = clopper_pearson_lower(p_num[i] * samples, int(samples), level)
    upper = clopper_pearson_upper(p_den[i] * samples, int(samples), level)
    eps = epsilon_lower_bound(float(lower), float(upper), float(delta))
    return StatisticalLimit(
        eps, i, float(p_num[i]), float(p_den[i]), int(samples), float(delta), confidence, tests
    )


def _joint_limit(
    p_num: np.ndarray,
    p_den: np.ndarray,
    values: np.ndarray,
    samples: int,
    delta: float,
    confidence: float,
    tests: int,
) -> StatisticalLimit:
    """:func:`statistical_limit` for the joint test: at :data:`JOINT_EVENTS` events whose
    denominator probability is the rectangle's best one's times :data:`JOINT_FACTORS`
    (among the events the rectangle certifies, the one it ranks best within 5% of each
    target), counts rounded."""
    finite = np.flatnonzero(np.isfinite(values))
    best = int(np.argmax(values))
    picks = set()
    for factor in JOINT_FACTORS:
        target = math.log(max(p_den[best], 1e-300) * factor)
        gaps = np.abs(np.log(np.maximum(p_den[finite], 1e-300)) - target)
        near = finite[gaps <= max(float(gaps.min()), 0.05)]  # the best of those nearest
        picks.add(int(near[int(np.argmax(values[near]))]))
    found = (0.0, -1)
    for i in sorted(picks):
        eps = joint_epsilon_lower(
            round(float(p_num[i]) * samples),
            round(float(p_den[i]) * samples),
            samples,
            delta,
            (1.0 - confidence) / tests,
            slope=joint_slope(float(values[i]) + JOINT_SLOPE_SHIFT),
            resolution=JOINT_RESOLUTION,
        )
        found = max(found, (eps, i))
    eps, i = found
    if i < 0:
        return StatisticalLimit(0.0, -1, 0.0, 0.0, samples, delta, confidence, tests)
    return StatisticalLimit(
        eps, i, float(p_num[i]), float(p_den[i]), samples, delta, confidence, tests
    )


def samples_needed(
    target: float,
    p_numerator: Sequence[float] | np.ndarray,
    p_denominator: Sequence[float] | np.ndarray,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    tests: int = 1,
) -> int:
    """Fewest samples per side whose statistical limit reaches ``target`` (within 0.1%).

    The limit grows with the sample count towards the family's plug-in supremum
    ``max_i ln((p_i - delta) / q_i)``; this bisects on ``log n`` and returns the upper end
    of the final bracket, so ``statistical_limit(..., samples=result) >= target``.

    Args:
        target: the epsilon lower bound wanted, > 0.
        p_numerator: numerator probability of each event, in [0, 1].
        p_denominator: denominator probability of each event, in [0, 1].
        delta: the delta of the claim, in [0, 1).
        confidence: family-wise confidence, in (0, 1).
        tests: number of tests the certification is corrected for, >= 1.

    Returns:
        Samples per side (certification samples).

    Raises:
        ValueError: if ``target`` is not a positive number, or no sample count up to
            10^18 reaches it (e.g. it is at or above the family's plug-in supremum).
    """
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not target > 0:
        raise ValueError(f"target must be a number > 0, got {target!r}")
    if not math.isfinite(target):
        raise ValueError(f"target must be finite, got {target!r}")

    def reaches(n: int) -> bool:
        found = statistical_limit(
            p_numerator, p_denominator, samples=n, delta=delta, confidence=confidence, tests=tests
        )
        return found.epsilon >= target

    if not reaches(MAX_SEARCH_SAMPLES):
        raise ValueError(
            f"target {target!r} is not reached by any sample count up to "
            f"{MAX_SEARCH_SAMPLES:.0e} per side for these events (their plug-in supremum is "
            "the most any sample count approaches)"
        )
    lo, hi = 0.0, math.log(MAX_SEARCH_SAMPLES)  # reaches(e^hi), not reaches(e^lo) (n = 1)
    if reaches(1):
        return 1
    while hi - lo > 1e-3:
        mid = (lo + hi) / 2
        if reaches(math.ceil(math.exp(mid))):
            hi = mid
        else:
            lo = mid
    return math.ceil(math.exp(hi))


def threshold_probabilities(
    noise: str,
    *,
    sensitivity: float = 1.0,
    scale: float = 1.0,
    thresholds: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The threshold events ``x >= t`` of an additive-noise pair, in closed form.

    The numerator is ``sensitivity + noise``, the denominator ``noise``; for ``"gaussian"``
    the noise is ``N(0, scale^2)``, for ``"laplace"`` ``Laplace(0, scale)``.  (Both are
    symmetric, so the events ``x <= t`` of the reverse direction give the same family.)
    Tail probabilities are computed without cancellation (``ndtr(-z)``; ``exp``), so rare
    events down to about 1e-300 are exact to rounding.

    Args:
        noise: ``"gaussian"`` or ``"laplace"``.
        sensitivity: the shift between the two output distributions, > 0.
        scale: sigma (Gaussian) or b (Laplace), > 0.
        thresholds: thresholds ``t``; default a grid of :data:`THRESHOLD_POINTS` from
            ``sensitivity / 2`` to ``sensitivity + 40 scale``.

    Returns:
        ``(thresholds, p_numerator, p_denominator)``.

    Raises:
        ValueError: on an unknown noise or a non-positive sensitivity or scale.
    """
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
    for name, value in (("sensitivity", sensitivity), ("scale", scale)):
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    if thresholds is None:
        t = np.linspace(sensitivity / 2, sensitivity + 40 * scale, THRESHOLD_POINTS)
    else:
        t = np.atleast_1d(np.asarray(thresholds, dtype=float))
        if t.ndim != 1 or len(t) == 0 or not np.all(np.isfinite(t)):
            raise ValueError("thresholds must be a non-empty 1-D sequence of finite numbers")
    if noise == "gaussian":
        return t, ndtr((sensitivity - t) / scale), ndtr(-t / scale)

    def tail(z: np.ndarray) -> np.ndarray:  # P[Laplace(0, 1) >= z]
        return np.where(z >= 0, 0.5 * np.exp(-np.abs(z)), 1.0 - 0.5 * np.exp(-np.abs(z)))

    return t, tail((t - sensitivity) / scale), tail(t / scale)


def threshold_frequencies(
    values0: np.ndarray,
    values1: np.ndarray,
    *,
    min_hits: int = MIN_HITS,
    shrink: float | None = SELECTION_SHRINKAGE,
) -> tuple[np.ndarray, np.ndarray]:
    """Observed probabilities of the threshold events of a real feature, both directions.

    The events are ``x >= t`` and ``x <= t`` (thresholds: the observed values, thinned to a
    rank grid dense in both tails when there are many), each with either dataset as the
    numerator; events seen fewer than ``min_hits`` times on either side are left out
    (a zero frequency is no estimate of a rare probability).  With ``shrink``, each
    frequency is replaced by a one-sided score bound at level ``shrink`` on the side that
    lowers the event's bound (numerator down, denominator up), the device that ranks events
    in selection (:data:`dpaudit.audit.estimators.SELECTION_SHRINKAGE`): the maximum over
    many events of raw frequencies favours the luckiest rare event, and a limit taken at more
    samples than were observed magnifies that luck.

    Args:
        values0: feature values under d0 (NaN ignored).
        values1: feature values under d1.
        min_hits: least hits on either side of an event kept, >= 1.
        shrink: level of the pessimistic score bounds in (0, 0.5), or None for raw
            frequencies.

    Returns:
        ``(p_numerator, p_denominator)`` frequencies (empty when a sample is).
    """
    s0 = np.sort(values0[~np.isnan(values0)])
    s1 = np.sort(values1[~np.isnan(values1)])
    if len(s0) == 0 or len(s1) == 0:
        return np.zeros(0), np.zeros(0)
    grid = np.unique(np.concatenate([s0, s1]))
    if len(grid) > 4 * GRID_RANKS:
        geo = np.geomspace(1, len(grid), GRID_RANKS)
        ranks = np.unique(np.r_[geo, len(grid) + 1 - geo].astype(int)) - 1
        grid = grid[np.clip(ranks, 0, len(grid) - 1)]
    n0, n1 = len(s0), len(s1)
    ge = (n0 - np.searchsorted(s0, grid, "left"), n1 - np.searchsorted(s1, grid, "left"))
    le = (np.searchsorted(s0, grid, "right"), np.searchsorted(s1, grid, "right"))
    return counted_frequencies(ge, le, (n0, n1), min_hits=min_hits, shrink=shrink)


def counted_frequencies(
    ge: tuple[np.ndarray, np.ndarray],
    le: tuple[np.ndarray, np.ndarray],
    sizes: tuple[int, int],
    *,
    min_hits: int = MIN_HITS,
    shrink: float | None = SELECTION_SHRINKAGE,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`threshold_frequencies` from hit counts on a threshold grid (streamed selection
    keeps counts, not values: :mod:`dpaudit.audit.streaming`).

    Args:
        ge: hits of ``x >= t`` per threshold under d0 and under d1.
        le: hits of ``x <= t`` per threshold under d0 and under d1.
        sizes: samples behind the counts under d0 and under d1 (NaN excluded), each >= 1.
        min_hits: least hits on either side of an event kept, >= 1.
        shrink: level of the pessimistic score bounds in (0, 0.5), or None.

    Returns:
        ``(p_numerator, p_denominator)`` frequencies.
    """
    p_num, p_den = [], []
    for hits in (ge, le):
        for numerator in (0, 1):
            keep = (hits[1 - numerator] >= min_hits) & (hits[numerator] >= min_hits)
            if shrink is None:
                p_num.append(hits[numerator][keep] / sizes[numerator])
                p_den.append(hits[1 - numerator][keep] / sizes[1 - numerator])
            else:
                p_num.append(_wilson(hits[numerator][keep], sizes[numerator], shrink)[0])
                p_den.append(_wilson(hits[1 - numerator][keep], sizes[1 - numerator], shrink)[1])
    return np.concatenate(p_num), np.concatenate(p_den)


def empirical_limit(
    values0: np.ndarray,
    values1: np.ndarray,
    *,
    samples: int,
    delta: float,
    confidence: float,
    tests: int,
    min_hits: int = MIN_HITS,
) -> StatisticalLimit | None:
    """The statistical limit of the threshold events of a real feature, estimated from data.

    :func:`statistical_limit` of the :func:`threshold_frequencies` of the two samples.  An
    *estimate*: the frequencies carry sampling error, and the maximum over many events is
    biased upwards (the rarest events most).

    Args:
        values0: feature values under d0 (NaN ignored).
        values1: feature values under d1.
        samples: certification samples per side the limit is taken at.
        delta: the delta of the claim.
        confidence: family-wise confidence.
        tests: Bonferroni count of the certification.
        min_hits: least hits on either side of an event considered, >= 1.

    Returns:
        The estimated limit, or None when the samples are empty or no event qualifies.
    """
    num, den = threshold_frequencies(values0, values1, min_hits=min_hits)
    if len(num) == 0:
        return None
    return statistical_limit(
        num, den, samples=samples, delta=delta, confidence=confidence, tests=tests
    )
