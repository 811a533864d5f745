"""Clopper-Pearson bounds, the epsilon formula and its rounding."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta

from dpaudit.audit.estimators import (
    bound_level,
    clopper_pearson,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    point_estimate,
    predicted_bounds,
)


def test_clopper_pearson_matches_beta_quantiles():
    lower, upper = clopper_pearson(np.array([3, 50]), 100, 0.025)
    assert lower[0] == pytest.approx(beta.ppf(0.025, 3, 98))
    assert upper[1] == pytest.approx(beta.ppf(0.975, 51, 50))


def test_zero_and_full_counts_give_the_strongest_witnesses():
    lower, upper = clopper_pearson(np.array([0, 100]), 100, 0.05)
    assert lower[0] == 0.0 and upper[1] == 1.0
    assert upper[0] == pytest.approx(1 - 0.05 ** (1 / 100))
    assert lower[1] == pytest.approx(0.05 ** (1 / 100))


def test_one_sided_coverage_is_at_least_the_nominal_level():
    # Exact coverage of the one-sided upper bound for p = 0.03, n = 200, summed over k.
    n, p, level = 200, 0.03, 0.05
    k = np.arange(n + 1)
    _, upper = clopper_pearson(k, n, level)
    from scipy.stats import binom

    coverage = binom.pmf(k, n, p)[upper >= p].sum()
    assert coverage >= 1 - level


def test_bonferroni_level():
    assert bound_level(0.05, 2) == pytest.approx(0.0125)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\), got 1.5"):
        bound_level(1.5, 1)
    with pytest.raises(ValueError, match="tests must be an integer >= 1, got 0"):
        bound_level(0.05, 0)


def test_level_is_validated():
    with pytest.raises(ValueError, match=r"level must be in \(0, 0.5\), got 0.7"):
        clopper_pearson(1, 10, 0.7)


def test_epsilon_bound_is_rounded_down_and_clamped():
    exact = math.log(0.5 / 0.2)
    got = epsilon_lower_bound(0.5, 0.2, 0.0)
    assert got <= exact and exact - got < 1e-9
    assert epsilon_lower_bound(0.1, 0.2, 0.0) == 0.0
    assert epsilon_lower_bound(0.05, 0.01, 0.06) == 0.0  # p_lower <= delta: nothing
    assert epsilon_lower_bound(0.5, 0.2, 0.1) < got  # delta makes it smaller


def test_point_estimate_handles_zero_counts():
    assert point_estimate(10, 0, 100, 0.0) == math.inf
    assert point_estimate(0, 10, 100, 0.0) == 0.0
    assert point_estimate(20, 10, 100, 0.0) == pytest.approx(math.log(2))


def test_prediction_prefers_large_events_with_the_same_ratio():
    # Same ratio e, one event 100 times larger: the larger one certifies more.
    pred = predicted_bounds(np.array([27, 2700]), np.array([10, 1000]), 10_000, 30_000, 0.0125, 0)
    assert pred[1] > pred[0]


# ---- Clopper-Pearson at the extremes, against exact binomial sums ---------------------------


def _binomial_cdf(k: int, n: int, x: Any) -> Any:
    """P[Bin(n, x) <= k] as a sum of min(k, n - k) + 1 exact terms (by symmetry)."""
    import mpmath

    if k >= n:
        return mpmath.mpf(1)
    if k <= n - k:
        return mpmath.fsum(mpmath.binomial(n, i) * x**i * (1 - x) ** (n - i) for i in range(k + 1))
    return 1 - _binomial_cdf(n - k - 1, n, 1 - x)


def _exact_clopper_pearson(k: int, n: int, level: float) -> tuple[Any, Any]:
    """The exact one-sided bounds by 300 bisection steps at 60 digits."""
    import mpmath

    def solve(f: Any, increasing: bool) -> tuple[Any, Any]:
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        for _ in range(300):
            mid = (lo + hi) / 2
            if (f(mid) > level) == increasing:
                hi = mid
            else:
                lo = mid
        return lo, hi

    with mpmath.workdps(60):
        lower = 0 if k == 0 else solve(lambda x: 1 - _binomial_cdf(k - 1, n, x), True)[0]
        upper = 1 if k == n else solve(lambda x: _binomial_cdf(k, n, x), False)[1]
        return mpmath.mpf(lower), mpmath.mpf(upper)


#: (hits, n, level): tiny and huge n, counts at both ends, tiny levels.  Before the bounds were
#: verified, (3, 10**9, 1e-6) gave an upper bound 1.8e-9 relative below the exact one (unsound)
#: and (999, 10**12, 1e-9) one twelve times too large (that case costs the oracle minutes).
EXTREMES = [
    (1, 10**6, 1e-3),
    (3, 10**9, 1e-6),
    (10**6 - 1, 10**6, 1e-3),
    (5, 10**12, 0.025),
    (0, 10**12, 1e-10),
    (50, 100, 0.025),
    (1, 1, 0.25),
    (2, 10, 1e-12),
    pytest.param(40, 10**12, 1e-9, marks=pytest.mark.slow),  # 5 s
    (10**12 - 3, 10**12, 1e-9),
]


@pytest.mark.parametrize(("hits", "n", "level"), EXTREMES)
def test_clopper_pearson_is_conservative_and_tight_at_the_extremes(hits, n, level) -> None:
    exact_lower, exact_upper = _exact_clopper_pearson(hits, n, level)
    (lower,), (upper,) = clopper_pearson(np.array([hits]), n, level)
    assert lower <= exact_lower and upper >= exact_upper  # sound
    assert lower >= exact_lower * (1 - 1e-8) and upper <= exact_upper * (1 + 1e-8)  # tight


@pytest.mark.slow  # about 5 s
@settings(max_examples=15, deadline=None)
@given(
    hits=st.integers(0, 12),
    extra=st.integers(0, 10**12),
    level=st.floats(1e-12, 0.4),
)
def test_clopper_pearson_is_conservative_for_random_counts(hits, extra, level) -> None:
    """Hypothesis: random small counts in samples up to 10^12 (15 examples; exact oracle)."""
    n = max(hits + extra, 1)
    exact_lower, exact_upper = _exact_clopper_pearson(hits, n, level)
    (lower,), (upper,) = clopper_pearson(np.array([hits]), n, level)
    assert lower <= exact_lower and upper >= exact_upper
    assert upper <= exact_upper * (1 + 1e-8) + 1e-300


def test_the_extreme_cases_catch_an_unverified_inverse() -> None:
    """The oracle can fail: the inverse incomplete beta alone (scipy's beta.ppf, what the
    bounds were before) is below the exact upper bound at (3, 10^9, 1e-6)."""
    exact_upper = _exact_clopper_pearson(3, 10**9, 1e-6)[1]
    assert beta.ppf(1 - 1e-6, 4, 10**9 - 3) < exact_upper


def _unguided(hits: np.ndarray, n: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson by the bisection alone (no inverse-beta guess): every step evaluates
    the tail, as before the guess was added."""
    from scipy.special import betainc, betaincc

    from dpaudit.audit.estimators import CDF_ALLOWANCE, _bisect_log_p

    k, size = np.broadcast_arrays(np.asarray(hits, float), np.asarray(n, float))
    k, size = k.ravel(), size.ravel()
    target = level * (1.0 - CDF_ALLOWANCE)
    with np.errstate(all="ignore"):
        upper = _bisect_log_p(
            lambda p, m: betaincc(k[m] + 1, size[m] - k[m], p) <= target, k < size
        )
        lower = _bisect_log_p(
            lambda p, m: betainc(k[m], size[m] - k[m] + 1, p) > target, k > 0, lower_end=True
        )
    return np.where(k > 0, lower, 0.0), np.where(k < size, upper, 1.0)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    n=st.floats(1.0, 1e12),
    shares=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
    integer=st.booleans(),
    level=st.floats(1e-12, 0.49),
)
def test_the_inverse_beta_guess_changes_no_bound(n, shares, integer, level) -> None:
    """The guess only decides steps outside a verified window: the bounds are the unguided
    bisection's, bit for bit (counts integer or real, 1 to 10^12 samples)."""
    size = math.floor(n) if integer else n
    hits = np.array(shares) * size
    if integer:
        hits = np.floor(hits)
    lower, upper = clopper_pearson(hits, size, level)
    ref_lower, ref_upper = _unguided(hits, np.float64(size), level)
    np.testing.assert_array_equal(lower, ref_lower)
    np.testing.assert_array_equal(upper, ref_upper)


def test_a_wrong_guess_is_checked_and_not_used() -> None:
    """A guess far from the boundary fails its window check: the bisection evaluates every
    step and returns the unguided bound."""
    from scipy.special import betaincc

    from dpaudit.audit.estimators import _bisect_log_p

    k, size, target = np.array([3.0, 40.0]), np.array([1000.0, 1000.0]), 0.01
    pred = lambda p, m: betaincc(k[m] + 1, size[m] - k[m], p) <= target  # noqa: E731
    right = _bisect_log_p(pred, k < size)
    assert np.array_equal(_bisect_log_p(pred, k < size, guess=np.array([1e-9, 0.9])), right)
    assert np.array_equal(_bisect_log_p(pred, k < size, guess=right * (1 + 1e-12)), right)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 10**6), min_size=1, max_size=8),
    st.integers(10**6, 10**12),
    st.sampled_from([1e-12, 1e-6, 0.0125, 0.025, 0.49]),
)
def test_one_sided_bounds_are_the_two_sides_of_clopper_pearson(hits, n, level):
    """The certification and the statistical limit compute only the side they use: the same
    numbers as :func:`clopper_pearson`'s, bit for bit (scalars and arrays)."""
    k = np.array(hits, dtype=float)
    lower, upper = clopper_pearson(k, n, level)
    assert np.array_equal(clopper_pearson_lower(k, n, level), lower)
    assert np.array_equal(clopper_pearson_upper(k, n, level), upper)
    assert float(clopper_pearson_lower(hits[0], n, level)) == lower[0]
    assert float(clopper_pearson_upper(hits[0], n, level)) == upper[0]
