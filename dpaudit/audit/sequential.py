"""Sequential, anytime-valid certification: stop sampling as soon as the answer is known.

The fixed-size certification (:mod:`dpaudit.audit.estimators`) draws all n certification
samples per dataset, then bounds the chosen event's two probabilities by Clopper-Pearson.
Here the samples come in batches; after each batch the two probabilities are bounded by
**confidence sequences**, bounds that hold at every sample size simultaneously, so the audit
may stop whenever it likes and the bound it reports keeps its confidence:

* Robbins' beta-binomial mixture (Robbins 1970, "Statistical methods related to the law of
  the iterated logarithm", Ann. Math. Statist. 41; Howard, Ramdas, McAuliffe, Sekhon 2021,
  "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49,
  Section 3 and the beta-binomial mixture of their Appendix): for Bernoulli(p) samples with
  S_t hits among t, ``M_t(p) = B(a + S_t, b + t - S_t) / (B(a, b) p^S_t (1 - p)^(t - S_t))``
  is the Beta(a, b) mixture of the likelihood ratios q^S (1-q)^(t-S) / p^S (1-p)^(t-S), each
  a nonnegative martingale of mean 1 under p, hence so is M_t(p).  Ville's inequality:
  ``P[exists t: M_t(p) >= 1/alpha] <= alpha``.  So ``{p : M_t(p) < 1/alpha}`` contains the
  true p at every t at once with probability >= 1 - alpha, and its ends at any stopping
  time (in particular at the batch ends the audit looks at, chosen by the data) are a lower
  and an upper confidence bound.  ``M_t`` is decreasing in p below S_t / t and increasing
  above, so each end is one root, found by Brent's method and then verified on its safe
  side.
* The certified bound at a look is the fixed-size one with these ends in place of
  Clopper-Pearson's: ``log((p_num_lower - delta) / p_den_upper)``
  (:func:`~dpaudit.audit.estimators.epsilon_lower_bound`, rounded down), each end at level
  ``(1 - confidence) / (2 tests)`` (Bonferroni over both sides and every test, as the
  fixed-size test splits it).  With probability >= confidence every end holds at every
  look, so the bound reported at the stop -- whatever the stopping rule -- exceeds the true
  epsilon with probability <= 1 - confidence: the guarantee of the fixed-size test.

Stopping rules (they change only how many samples are drawn, never the guarantee):

* *violation*: some event's certified bound exceeds the claimed epsilon;
* *futile*: for every event, even the optimistic ends (``p_num_upper``, ``p_den_lower``: the
  most the data allow) drawn at the whole budget would certify at most the claim, at their
  expected counts -- the remaining budget cannot reach the claim;
* *budget*: the budget is spent.

Cost: a confidence sequence is wider than Clopper-Pearson at the same n (about
sqrt(log n) wider), so a run that spends its whole budget certifies a little less than
the fixed-size test; the gain is the samples not drawn when the answer comes early.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaln

from dpaudit.audit.batches import EventCounts
from dpaudit.audit.estimators import epsilon_lower_bound

__all__ = [
    "PRIOR",
    "SequentialOutcome",
    "certify_sequentially",
    "mixture_lower",
    "mixture_upper",
    "runner_counter",
    "schedule",
]

#: The Beta(a, b) mixing prior of the confidence sequence (Jeffreys).
PRIOR = (0.5, 0.5)
#: Relative allowance on the log-martingale: a p is excluded only when log M_n(p) exceeds
#: the threshold by this fraction of the magnitudes summed (float error of betaln and of the
#: logs is far below it), so a computed end lies outside the exact one.
_ROUND = 1e-12


def _log_martingale(k: float, n: float, p: float) -> tuple[float, float]:
    """log M_n(p) for k hits in n samples, and the magnitude its float error scales with."""
    a, b = PRIOR
    mix = float(betaln(a + k, b + n - k) - betaln(a, b))
    like = (k * math.log(p) if k > 0 else 0.0) + ((n - k) * math.log1p(-p) if n > k else 0.0)
    return mix - like, abs(mix) + abs(like) + 1.0


def _excluded(k: float, n: float, p: float, threshold: float) -> bool:
    """Whether log M_n(p) >= threshold, certainly (beyond the float error allowance)."""
    value, scale = _log_martingale(k, n, p)
    return value - _ROUND * (scale + threshold) >= threshold


def _end(k: float, n: float, alpha: float, lower: bool) -> float:
    """The lower (or upper) end of {p : M_n(p) < 1/alpha}, on its safe side.

    The sequence always holds k/n (the mixture is at most the largest likelihood, so
    M_n(k/n) <= 1 < 1/alpha); below it M_n decreases in p, above it increases, so each end
    is one root.  Brent's method finds it between k/n and the far end (1e-300, or 1 - 2^-53),
    then the point is moved outward until :func:`_excluded` verifies it: the value returned
    is always excluded by the exact sequence (0 or 1, the trivial ends, when the far end is
    not, or nothing is excluded yet).
    """
    if (lower and k <= 0) or (not lower and k >= n):
        return 0.0 if lower else 1.0
    threshold = math.log(1.0 / alpha)
    centre, far = k / n, (1e-300 if lower else 1.0 - 2.0**-53)
    if not _excluded(k, n, far, threshold):
        return 0.0 if lower else 1.0

    def gap(p: float) -> float:
        return _log_martingale(k, n, p)[0] - threshold

    lo, hi = (far, centre) if lower else (centre, far)
    root = float(brentq(gap, lo, hi, xtol=1e-300, rtol=4 * 2.0**-52, maxiter=200))
    step = 1e-12
    while True:
        candidate = root * (1 - step) if lower else 1.0 - (1.0 - root) * (1 - step)
        if (candidate <= far) if lower else (candidate >= far):
            return 0.0 if lower else 1.0
        if _excluded(k, n, candidate, threshold):
            return candidate
        step *= 16


def mixture_lower(k: int | float, n: int | float, alpha: float) -> float:
    """Time-uniform lower confidence bound on p from k hits in n Bernoulli(p) samples: the
    lower end of Robbins' beta-binomial confidence sequence at level alpha (module
    docstring); holds at every n simultaneously with probability >= 1 - alpha.

    Args:
        k: hits, in [0, n].
        n: samples, >= 0.
        alpha: error probability, in (0, 1).

    Returns:
        A float in [0, k / n] (0.0 when nothing is excluded yet).
    """
    return _end(float(k), float(n), alpha, lower=True)


def mixture_upper(k: int | float, n: int | float, alpha: float) -> float:
    """Time-uniform upper confidence bound on p (the upper end of the same sequence).

    Returns:
        A float in [k / n, 1].
    """
    return _end(float(k), float(n), alpha, lower=False)


def schedule(budget: int, first: int, growth: float = 2.0) -> list[int]:
    """The cumulative sample sizes at which the certification looks: ``first``, then
    ``growth`` times more each look, the last one the whole ``budget``.

    Args:
        budget: samples per dataset at most, >= 1.
        first: samples at the first look, >= 1 (capped at the budget).
        growth: factor between looks, > 1.

    Returns:
        Increasing sizes ending at ``budget``.
    """
    if budget < 1 or first < 1 or growth <= 1:
        raise ValueError(
            f"schedule needs budget >= 1, first >= 1, growth > 1, got {budget}, {first}, {growth}"
        )
    sizes, n = [], float(min(first, budget))
    while round(n) < budget:
        sizes.append(round(n))
        n *= growth
    return [*sizes, budget]


@dataclass(frozen=True)
class SequentialOutcome:
    """Where a sequential certification stopped and what it certified.

    Attributes:
        epsilon_lower: the best certified bound at the stop (rounded down; valid at the
            confidence, whatever the stop).
        event: index of the event that certified it.
        p_numerator_lower, p_denominator_upper: its confidence-sequence ends.
        hits_numerator, hits_denominator: its counts at the stop (per test, arrays).
        samples: samples per dataset drawn at the stop.
        budget: the samples per dataset allowed.
        looks: looks made.
        reason: ``"violation"``, ``"futile"`` or ``"budget"``.
    """

    epsilon_lower: float
    event: int
    p_numerator_lower: float
    p_denominator_upper: float
    hits_numerator: tuple[int, ...]
    hits_denominator: tuple[int, ...]
    samples: int
    budget: int
    looks: int
    reason: str
    confidence: float = 0.95
    tests: int = 1

    @property
    def samples_saved(self) -> int:
        """Samples per dataset not drawn (budget - samples)."""
        return self.budget - self.samples

    @property
    def ends(self) -> tuple[float, float]:
        """``(p_numerator_lower, p_denominator_upper)`` of the certifying event."""
        return self.p_numerator_lower, self.p_denominator_upper

    def hits_by_dataset(self, numerators: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The counts as ``(hits on d0, hits on d1)`` per test, given each test's numerator
        dataset (0 or 1), the layout of the fixed-size certification."""
        num, den = np.array(self.hits_numerator), np.array(self.hits_denominator)
        first = np.array(numerators) == 0
        return np.where(first, num, den), np.where(first, den, num)

    def describe(self) -> str:
        """One clause for the result's correction text."""
        return (
            f"sequential: Robbins' beta-binomial confidence sequences (anytime valid), each end "
            f"at level {(1 - self.confidence) / (2 * self.tests):.3g}; stopped after "
            f"{self.samples:,} of {self.budget:,} samples a side at look {self.looks} "
            f"({self.reason})"
        )


def _certified(k_num: np.ndarray, k_den: np.ndarray, n: int, level: float, delta: float):
    lowers = [mixture_lower(int(k), n, level) for k in k_num]
    uppers = [mixture_upper(int(k), n, level) for k in k_den]
    bounds = [epsilon_lower_bound(lo, up, delta) for lo, up in zip(lowers, uppers, strict=True)]
    j = int(np.argmax(bounds))
    return bounds[j], j, lowers[j], uppers[j]


def _futile(
    k_num: np.ndarray,
    k_den: np.ndarray,
    n: int,
    budget: int,
    level: float,
    delta: float,
    eps: float,
) -> bool:
    """Whether no event could certify above ``eps`` with the whole budget even at its
    optimistic ends' expected counts (a stopping rule only: the guarantee does not use it)."""
    for kn, kd in zip(k_num, k_den, strict=True):
        p_num = mixture_upper(int(kn), n, level)
        p_den = mixture_lower(int(kd), n, level)
        best = epsilon_lower_bound(
            mixture_lower(p_num * budget, budget, level),
            mixture_upper(p_den * budget, budget, level),
            delta,
        )
        if best > eps:
            return False
    return True


def certify_sequentially(
    count: Callable[[int, int], tuple[np.ndarray, np.ndarray]],
    *,
    epsilon: float,
    delta: float,
    budget: int,
    confidence: float,
    tests: int,
    first: int = 1000,
    growth: float = 2.0,
) -> SequentialOutcome:
    """Certify the chosen events on batches of fresh samples, stopping as soon as the
    answer is known (module docstring).

    Args:
        count: ``count(look, n)`` draws n fresh samples per dataset (the look's own seed)
            and returns ``(numerator_hits, denominator_hits)``: for each test, the hits of
            its event among the numerator dataset's and the denominator dataset's samples.
        epsilon: the claimed epsilon.
        delta: the claimed delta (enters the bound as in the fixed-size test).
        budget: samples per dataset at most.
        confidence: family-wise confidence, in (0, 1).
        tests: number of tests the confidence is split over (both sides of each are bounded
            at ``(1 - confidence) / (2 tests)``).
        first: samples per dataset at the first look.
        growth: factor between looks.

    Returns:
        A :class:`SequentialOutcome`.
    """
    level = (1.0 - confidence) / (2 * tests)
    k_num: np.ndarray | None = None
    k_den: np.ndarray | None = None
    drawn, looks, reason = 0, 0, "budget"
    bound, j, lower, upper = 0.0, 0, 0.0, 1.0
    for size in schedule(budget, first, growth):
        num, den = count(looks, size - drawn)
        k_num = np.asarray(num, dtype=np.int64) + (0 if k_num is None else k_num)
        k_den = np.asarray(den, dtype=np.int64) + (0 if k_den is None else k_den)
        drawn, looks = size, looks + 1
        bound, j, lower, upper = _certified(k_num, k_den, drawn, level, delta)
        if bound > epsilon:
            reason = "violation"
            break
        if drawn < budget and _futile(k_num, k_den, drawn, budget, level, delta, epsilon):
            reason = "futile"
            break
    if k_num is None or k_den is None:  # pragma: no cover - a schedule has one look or more
        raise RuntimeError("no look was made")
    return SequentialOutcome(
        epsilon_lower=bound,
        event=j,
        p_numerator_lower=lower,
        p_denominator_upper=upper,
        hits_numerator=tuple(int(x) for x in k_num),
        hits_denominator=tuple(int(x) for x in k_den),
        samples=drawn,
        budget=budget,
        looks=looks,
        reason=reason,
        confidence=confidence,
        tests=tests,
    )


def runner_counter(
    runner: Any, pair: Any, key: tuple[int, ...], events: Sequence[Any], numerators: Sequence[int]
) -> Callable[[int, int], tuple[np.ndarray, np.ndarray]]:
    """The ``count`` of :func:`certify_sequentially` for the Monte Carlo auditor: each look
    tallies n fresh samples of ``pair.d0`` and ``pair.d1`` through ``runner.tally`` at seed
    positions ``key + (dataset, look)`` (never the fixed-size certification's), and returns
    each event's hits on its numerator and its denominator dataset."""
    first = np.array(numerators) == 0

    def count(look: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        counted = runner.tally(
            [(pair.d0, n, (*key, 0, look)), (pair.d1, n, (*key, 1, look))],
            [EventCounts(tuple(events))],
        )
        h0, h1 = np.asarray(counted[0][0]), np.asarray(counted[1][0])
        return np.where(first, h0, h1), np.where(first, h1, h0)

    return count
