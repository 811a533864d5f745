"""Exact mode: exact privacy loss of finite-output mechanisms, and the sampler check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.audit import audit, check_sampler, exact_audit, exact_epsilon
from mechanisms.broken import BrokenNoisyMaxWrongNoiseScale
from mechanisms.catalogue import ExponentialMechanism, RandomizedResponse

#: Samples drawn to check a sampler against its exact probabilities, and the test's confidence.
SAMPLER_SAMPLES = 50_000
SAMPLER_CONFIDENCE = 0.999


def test_randomized_response_loss_is_epsilon():
    rr = RandomizedResponse(0.7)
    assert exact_epsilon(rr.probabilities(0), rr.probabilities(1)) == pytest.approx(0.7, abs=1e-12)


def test_exact_epsilon_with_delta_and_disjoint_support():
    p, q = {"a": 0.5, "b": 0.5}, {"a": 0.5, "c": 0.5}
    assert exact_epsilon(p, q) == math.inf
    # eps(delta): P({b}) - delta <= e^eps Q({b}) = 0 needs delta >= 0.5.
    assert exact_epsilon(p, q, 0.5) == 0.0
    # Two points: max(ln((0.8 - 0.1) / 0.4), ln((0.6 - 0.1) / 0.2)), the second direction wins.
    assert exact_epsilon({0: 0.8, 1: 0.2}, {0: 0.4, 1: 0.6}, 0.1) == pytest.approx(
        math.log(0.5 / 0.2), abs=1e-12
    )


def test_exact_epsilon_validates():
    with pytest.raises(ValueError, match="p must be probabilities >= 0 summing to 1"):
        exact_epsilon({0: 0.5}, {0: 1.0})
    with pytest.raises(ValueError, match=r"delta must be a number in \[0, 1\), got 1.0"):
        exact_epsilon({0: 1.0}, {0: 1.0}, 1.0)


def test_wrong_noise_scale_is_refuted_exactly():
    m = BrokenNoisyMaxWrongNoiseScale(1.0)
    result = exact_audit(m, pairs=m.pairs, epsilon=m.epsilon)
    k = 5  # "one down, the rest up": eps + ln((e^-eps + (k-1) e^eps) / k)
    assert result.epsilon_lower == pytest.approx(1 + math.log((math.exp(-1) + 4 * math.e) / k))
    assert result.violation and result.method == "exact"
    assert "exact" in str(result)


def test_exponential_mechanism_is_within_its_claim_exactly():
    m = ExponentialMechanism(1.0)
    result = exact_audit(m, pairs=m.pairs, epsilon=1.0)
    assert 0.5 < result.epsilon_lower < 1.0 and not result.violation


def test_monte_carlo_bound_stays_below_the_exact_loss():
    m = BrokenNoisyMaxWrongNoiseScale(1.0)
    pair = m.pairs[-1]
    exact = exact_audit(m, pair.d0, pair.d1, epsilon=1.0).epsilon_lower
    sampled = audit(m, pair.d0, pair.d1, epsilon=1.0, samples=100_000, seed=11)
    assert 0.9 * exact < sampled.epsilon_lower <= exact


@pytest.mark.parametrize(
    "mechanism",
    [ExponentialMechanism(1.0), RandomizedResponse(1.0), BrokenNoisyMaxWrongNoiseScale(1.0)],
    ids=lambda m: m.name,
)
def test_samplers_follow_their_exact_probabilities(mechanism):
    for pair in mechanism.pairs[:2]:
        check = check_sampler(
            mechanism, pair.d1, samples=SAMPLER_SAMPLES, confidence=SAMPLER_CONFIDENCE, seed=1
        )
        assert check.passed, check


def test_sampler_check_rejects_a_wrong_sampler():
    class Skewed(RandomizedResponse):
        def batch(self, dataset, n, rng):  # 30% too often truthful-side errors
            bit = int(dataset)
            return np.where(rng.random(n) < 0.9 * self.truthful, bit, 1 - bit)

    check = check_sampler(Skewed(1.0), 0, samples=SAMPLER_SAMPLES, seed=1)
    assert not check.passed and check.p_value < 1e-6


def test_exact_audit_needs_probabilities():
    with pytest.raises(ValueError, match="mechanism must offer probabilities"):
        exact_audit(lambda d, rng: d, 0, 1, epsilon=1.0)
