"""Clopper-Pearson bounds, the epsilon formula and its rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from dpaudit.audit.estimators import (
    bound_level,
    clopper_pearson,
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
