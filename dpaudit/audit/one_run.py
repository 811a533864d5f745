"""One-run auditing of a training algorithm with m canaries (Steinke, Nasr, Jagielski 2023).

Steinke, Nasr and Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023,
arXiv 2305.08846) audit an algorithm from a single run: each of m canaries is included in the
input independently with probability 1/2 (S_i uniform on {-1, +1}); from the output the
auditor guesses T_i in {-1, 0, +1} for every canary (0 abstains) and counts its correct
guesses W = #{i : T_i = S_i}.  With r = ||T||_1 guesses fixed in advance:

* pure DP (Theorem 3.1 of the paper): if the algorithm is epsilon-DP with respect to each
  canary, W is stochastically dominated by Binomial(r, q), q = e^eps / (1 + e^eps), so
  ``P[W >= v] <= P[Binomial(r, q) >= v]``;
* approximate DP (Section 5 of the paper: its main result Theorem 5.2 in the closed form of
  Corollary 5.4, which the paper's own code in its appendix computes; the numbering is that
  of arXiv v1 as cited by other implementations -- the formula below is checked against
  the paper's code and, in the tests, against a mechanism whose count
  distribution is known exactly): if the algorithm is (epsilon, delta)-DP,

      P[W >= v] <= P[Bin(r, q) >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i.

  (The maximum over i > v adds nothing: there the window is P[Bin < v] <= its value at
  i = v, divided by a larger i.)

The right-hand side is the p-value of the hypothesis "the algorithm is (epsilon, delta)-DP"
for the observed count v.  :func:`one_run_epsilon_lower` returns the largest epsilon the
observed count rejects at level ``1 - confidence`` (split equally over ``tests`` guess
counts, a union bound), by bisection in which the lower end is always a *verified* point:

Soundness of the bisection.  Every evaluation is at a float q; the bound is computed from
SciPy's binomial tails with the same relative allowance as the Clopper-Pearson bounds of
:mod:`dpaudit.audit.estimators` (checked against mpmath in tests/audit/test_one_run.py), and
the value returned is ``logit(q)`` rounded down for the largest verified q.  If the true
epsilon* were below the returned value, the algorithm would be (logit(q), delta)-DP, and the
test "W >= t(q)" (t(q) the least count rejected at q) has probability at most the level.
These tests reject on upper sets of counts, so their union over all q with
logit(q) > epsilon* is one of them: the returned bound exceeds epsilon* with probability at
most the level, whether or not the p-value is monotone in epsilon (with delta > 0 it need not
be; the bisection then may stop short of the supremum, never beyond a verified point).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
from scipy.special import betainc, betaincc

from dpaudit.audit.estimators import CDF_ALLOWANCE
from dpaudit.audit.validation import check as _check
from dpaudit.audit.validation import check_confidence, check_delta, check_epsilon
from dpaudit.audit.validation import is_int as _is_int
from dpaudit.deferred_imports import scipy_stats
from dpaudit.numeric import mp_precision, mpf_to_float

__all__ = [
    "GRID_RATIO",
    "GRID_STEPS",
    "MIN_GUESSES",
    "count_correct",
    "default_guesses",
    "one_run_curve",
    "one_run_epsilon_lower",
    "one_run_p_value",
    "one_run_theory",
]

#: Absolute allowance added to every computed tail: SciPy's binomial terms below the float
#: range come back as 0, so a tail is never reported below its true value by more than this.
TAIL_FLOOR = 1e-250
#: The bisection's upper end: q = 1/(1 + e^-40) is 1.0 in floats, where P[Bin(r, 1) >= v] = 1
#: rejects nothing, so the bracket always holds a failing end.
_EPS_MAX = 40.0
_BISECTION_STEPS = 60


def _tail_bound(m: int, r: int, v: int, q: float, delta: float) -> float:
    """Upper bound on the theorem's p-value at accuracy ``q`` (a float in [1/2, 1]).

    ``P[Bin(r, q) >= v] = I_q(v, r - v + 1)`` (regularized incomplete beta) plus the delta
    term of Theorem 5.2 / Corollary 5.4 (:func:`_window_max`), each inflated by the relative
    allowance :data:`~dpaudit.audit.estimators.CDF_ALLOWANCE` and :data:`TAIL_FLOOR`.
    """
    if v <= 0:
        return 1.0
    total = _upper_tail(r, v, q)
    if delta > 0.0:
        # Theorem 5.2 / Corollary 5.4 (Steinke, Nasr, Jagielski 2023): the delta term
        # 2 m delta max_i P[v - i <= Bin < v] / i
        total += 2.0 * m * delta * _window_max(r, v, q) * (1.0 + CDF_ALLOWANCE)
    return min(1.0, total)


def _upper_tail(r: int, v: int, q: float) -> float:
    """Upper bound on ``P[Bin(r, q) >= v]`` (v >= 1)."""
    return float(betainc(v, r - v + 1, q)) * (1.0 + CDF_ALLOWANCE) + TAIL_FLOOR


#: Standard deviations below the mean under which the window sums are not summed term by
#: term: the mass there enters through one incomplete-beta tail (sound, see _window_max).
_WINDOW_SDS = 40.0


def _window_max(r: int, v: int, q: float) -> float:
    """Upper bound on ``max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i`` (v >= 1).

    The pmf is summed from v - 1 down to ``lo`` (about 40 standard deviations below the mean,
    so the work is O(sqrt(r) + v - r q), not O(v)); for the i reaching below ``lo`` the window
    is at most the window down to ``lo`` plus ``P[Bin < lo]`` and i is at least
    ``v - lo + 1``, which bounds their ratio.
    """
    sd = math.sqrt(r * q * (1.0 - q))
    lo = min(v - 1, max(0, math.floor(r * q - _WINDOW_SDS * sd) - 1))
    pmf = scipy_stats.binom.pmf(np.arange(v - 1, lo - 1, -1), r, q)
    windows = np.cumsum(pmf) * (1.0 + CDF_ALLOWANCE) + TAIL_FLOOR
    alpha = float(np.max(windows / np.arange(1, len(windows) + 1)))
    if lo > 0:
        below = float(betaincc(lo, r - lo + 1, q)) * (1.0 + CDF_ALLOWANCE) + TAIL_FLOOR
        alpha = max(alpha, (float(windows[-1]) + below) / (len(windows) + 1))
    return alpha


def _rejects(m: int, r: int, v: int, q: float, delta: float, level: float) -> bool:
    """Whether the p-value bound at ``q`` is at most ``level`` (the delta term is computed
    only when the binomial tail alone is not already above it)."""
    if v <= 0 or _upper_tail(r, v, q) > level:
        return False
    return _tail_bound(m, r, v, q, delta) <= level


def _check_counts(m: Any, r: Any, v: Any) -> None:
    for name, value in (("m", m), ("r", r), ("v", v)):
        if not _is_int(value):
            raise TypeError(f"{name} must be an integer, got {value!r}")
    if m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    if not 0 <= r <= m:
        raise ValueError(f"r (guesses) must be in [0, m] = [0, {m}], got {r!r}")
    if not 0 <= v <= r:
        raise ValueError(f"v (correct guesses) must be in [0, r] = [0, {r}], got {v!r}")


def _check_level(delta: Any, confidence: Any, tests: Any) -> float:
    check_delta(delta)
    check_confidence(confidence)
    _check("tests", tests, _is_int(tests) and tests >= 1, "an integer >= 1")
    return (1.0 - float(confidence)) / int(tests)


def _accuracy(epsilon: float) -> float:
    """q = e^eps / (1 + e^eps), the accuracy of epsilon-DP randomized response (a float)."""
    return 1.0 / (1.0 + math.exp(-epsilon))


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """The p-value of "(epsilon, delta)-DP" for v correct guesses out of r among m canaries.

    Theorem 3.1 (delta = 0) and Theorem 5.2 / Corollary 5.4 (delta > 0) of Steinke, Nasr,
    Jagielski 2023 (module docstring), at q = e^eps/(1+e^eps) evaluated in floats, with the
    binomial tails' allowances added: an upper bound on ``P[W >= v]`` under the hypothesis
    (up to the one-ulp rounding of q; :func:`one_run_epsilon_lower` avoids even that by
    testing at float q).

    Args:
        m: number of canaries, >= 1.
        r: number of guesses, in [0, m].
        v: number of correct guesses, in [0, r].
        epsilon: the epsilon of the hypothesis, >= 0.
        delta: the delta of the hypothesis, in [0, 1).

    Returns:
        A float in [0, 1].

    Raises:
        TypeError: if m, r or v is not an integer.
        ValueError: if not ``0 <= v <= r <= m``, ``m >= 1``, epsilon >= 0, delta in [0, 1).
    """
    _check_counts(m, r, v)
    check_epsilon(epsilon)
    check_delta(delta)
    return _tail_bound(int(m), int(r), int(v), _accuracy(float(epsilon)), float(delta))


def one_run_epsilon_lower(
    m: int,
    r: int,
    v: int,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    tests: int = 1,
) -> float:
    """Certified lower bound on epsilon from v correct guesses out of r (m canaries).

    The largest verified epsilon whose p-value (:func:`one_run_p_value`) is at most
    ``(1 - confidence) / tests``, rounded down; 0.0 when even epsilon = 0 is not rejected.
    Holds with probability >= ``1 - (1 - confidence)/tests`` when the r guesses were fixed
    before the run (or, with ``tests`` guess counts tried, for all of them together).

    Args:
        m: number of canaries (each included with probability 1/2), >= 1.
        r: number of guesses (abstentions excluded), in [0, m].
        v: number of correct guesses, in [0, r].
        delta: the delta of the hypothesis, in [0, 1).
        confidence: family-wise confidence, in (0, 1).
        tests: number of (k+, k-) guess counts the confidence is split over (union bound).

    Returns:
        A float >= 0, rounded down.

    Raises:
        TypeError, ValueError: on arguments outside the ranges above (message names them).
    """
    _check_counts(m, r, v)
    level = _check_level(delta, confidence, tests)
    return _certify(int(m), int(r), int(v), float(delta), level)


def _certify(m: int, r: int, v: int, delta: float, level: float) -> float:
    if not _rejects(m, r, v, 0.5, delta, level):
        return 0.0
    lo, hi = 0.0, _EPS_MAX  # invariant: the bound at _accuracy(lo) is verified <= level
    q_lo = 0.5
    for _ in range(_BISECTION_STEPS):
        mid = (lo + hi) / 2
        q = _accuracy(mid)
        if _rejects(m, r, v, q, delta, level):
            lo, q_lo = mid, q
        else:
            hi = mid
    # the hypothesis tested was (logit(q_lo), delta)-DP: report logit(q_lo), rounded down
    with mp_precision(200):
        qm = mpmath.mpf(q_lo)
        return max(0.0, mpf_to_float(mpmath.log(qm / (1 - qm)), "down"))


def one_run_curve(
    m: int, r: int, *, delta: float = 0.0, confidence: float = 0.95, tests: int = 1
) -> np.ndarray:
    """The paper's bound curve: the certified epsilon for each count v = 0..r of correct
    guesses.

    Args:
        m: number of canaries, >= 1.
        r: number of guesses, in [0, m].
        delta, confidence, tests: as for :func:`one_run_epsilon_lower`.

    Returns:
        An array of r + 1 floats, entry v the bound certified by v correct guesses (each
        rounded down; nondecreasing in v when delta = 0).

    Raises:
        TypeError, ValueError: on arguments outside their ranges (message names them).
    """
    _check_counts(m, r, 0)
    level = _check_level(delta, confidence, tests)
    return np.array([_certify(int(m), int(r), v, float(delta), level) for v in range(r + 1)])


def one_run_theory(
    epsilon: float,
    m: int,
    r: int,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    tests: int = 1,
    statistic: str = "median",
) -> float:
    """The bound one run certifies for a mechanism exactly epsilon-DP: the theory curve.

    For epsilon-DP randomized response on each inclusion bit (the extreme case of
    Theorem 3.1: each guess is correct independently with probability q = e^eps/(1+e^eps)),
    W ~ Binomial(r, q).  ``statistic="median"``: the bound it reaches at least half the time
    (the certified bound is nondecreasing in W for delta = 0, so this is the bound at the
    median of W); ``"mean"``: its expectation E[epsilon_lower(W)], summed over the counts
    within 12 standard deviations of the mean (the rest, of probability below 1e-30, is
    left out).  A theory value, not a certified bound: how much of a true epsilon one run
    with m canaries and r guesses can certify.

    Args:
        epsilon: the mechanism's true epsilon, >= 0.
        m: number of canaries, >= 1.
        r: number of guesses, in [0, m].
        delta, confidence, tests: as for :func:`one_run_epsilon_lower`.
        statistic: ``"median"`` or ``"mean"``.

    Returns:
        A float >= 0.

    Raises:
        TypeError, ValueError: on arguments outside their ranges (message names them).
    """
    _check_counts(m, r, 0)
    check_epsilon(epsilon)
    _check("statistic", statistic, statistic in ("median", "mean"), "'median' or 'mean'")
    level = _check_level(delta, confidence, tests)
    if r == 0:
        return 0.0
    q = _accuracy(float(epsilon))
    if statistic == "median":
        return _certify(int(m), int(r), int(scipy_stats.binom.median(r, q)), float(delta), level)
    sd = math.sqrt(r * q * (1 - q))
    counts = np.arange(max(0, math.floor(r * q - 12 * sd)), min(r, math.ceil(r * q + 12 * sd)) + 1)
    bounds = np.array([_certify(int(m), int(r), int(v), float(delta), level) for v in counts])
    return float(np.dot(scipy_stats.binom.pmf(counts, r, q), bounds))


#: Ratio between successive guess fractions of the default grid.
GRID_RATIO = 4
#: The default grid's guess totals are the fractions 1, 1/4, 1/16, ..., GRID_RATIO^-7
#: = 1/16384 of m: a grid of fractions, so it scales with m, and its size (at most 8, the
#: Bonferroni split) stops growing once every fraction gives at least :data:`MIN_GUESSES`
#: guesses (m >= 262,144).
GRID_STEPS = 7
#: Smallest guess total of the default grid (m / 8 when m < 128).
MIN_GUESSES = 16


def default_guesses(m: int) -> tuple[tuple[int, int], ...]:
    """The (k+, k-) guess counts tried by default: a coarse grid of fractions of m.

    Guess totals k = round(m / 4^j), j = 0..:data:`GRID_STEPS` (fractions 1 down to 1/16384
    of m), those below :data:`MIN_GUESSES` (m / 8 when m < 128) left out, each two-sided:
    the floor(k/2) highest scores guessed included, the rest of k lowest guessed excluded
    (Steinke, Nasr, Jagielski 2023, Section 6: guess on the most and least confident
    canaries, abstain on the rest).  At most GRID_STEPS + 1 = 8 counts; the audit splits its
    confidence equally over those it tries (a union bound, Bonferroni).  The grid is coarse
    on purpose: with delta > 0 the split costs far more than log(count) -- both delta terms
    (Theorem 5.2's ``2 m delta`` window, the f-DP recursion's per-canary delta against masses
    of order ``tau k / m``) must be beaten by a level tau, so halving tau roughly doubles what
    they demand.  Measured on the idealized trainer (sigma 1 and 2, m = 10^3 .. 10^6, one
    seed): the best count of the old grid of 54 (fractions 1/sqrt(2)^j, one- and two-sided)
    certified 0.28-0.50 of the theoretical epsilon at its split over 54, at a split over 8
    0.41-0.65; the two-sided counts were the best in every case, and the bound changes by a
    few percent between neighbouring fractions.  The grid is fixed before the run (a function
    of m only), as the theorems require.

    Args:
        m: number of canaries, >= 1.

    Returns:
        The distinct ``(k_plus, k_minus)`` pairs, largest totals first.
    """
    floor = min(MIN_GUESSES, max(1, m // 8))
    totals: list[int] = []
    for j in range(GRID_STEPS + 1):
        k = round(m / GRID_RATIO**j)
        if k >= floor and k not in totals:
            totals.append(k)
    out: list[tuple[int, int]] = []
    for total in totals:
        pair = (total // 2, total - total // 2) if total >= 2 else (total, 0)
        if pair not in out:
            out.append(pair)
    return tuple(out)


def count_correct(scores: np.ndarray, included: np.ndarray, k_plus: int, k_minus: int) -> int:
    """Correct guesses when the ``k_plus`` highest scores are guessed included and the
    ``k_minus`` lowest excluded (ties broken by canary index, so the guesses are a function
    of the scores alone, as the theorem requires)."""
    m = len(scores)
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    return int(included[order[:k_plus]].sum()) + int((~included[order[m - k_minus :]]).sum())
