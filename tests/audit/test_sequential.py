"""Sequential (anytime-valid) certification: the confidence sequence's time-uniform
coverage by simulation (and the failure of peeking at fixed-size Clopper-Pearson bounds,
which it exists to avoid), its ends against their defining equation, and the stopping rules
on simulated events (validity on correct mechanisms, samples saved on violating and on
clearly private ones), with alpha and sample sizes stated."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betaln

from dpaudit.audit.estimators import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.audit.sequential import (
    PRIOR,
    certify_sequentially,
    mixture_lower,
    mixture_upper,
    schedule,
)


def _log_m(k: float, n: float, p: float) -> float:
    a, b = PRIOR
    return float(
        betaln(a + k, b + n - k) - betaln(a, b) - k * math.log(p) - (n - k) * math.log1p(-p)
    )


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 10**7),
    data=st.data(),
    alpha=st.sampled_from([1e-6, 1e-3, 0.025, 0.2]),
)
def test_property_ends_solve_the_martingale_equation_on_the_safe_side(n, data, alpha):
    """Each end lies outside the sequence (M_n >= 1/alpha there, or it is 0 / 1), next to
    where M_n crosses 1/alpha (a millionth of the way towards k/n it is inside), and k/n
    lies between the ends."""
    k = data.draw(st.integers(0, n))
    lo, hi = mixture_lower(k, n, alpha), mixture_upper(k, n, alpha)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    t = math.log(1 / alpha)
    if lo > 0:
        assert _log_m(k, n, lo) >= t * (1 - 1e-9)
        assert _log_m(k, n, lo + 1e-6 * (k / n - lo)) < t
    if hi < 1:
        assert _log_m(k, n, hi) >= t * (1 - 1e-9)
        assert _log_m(k, n, hi - 1e-6 * (hi - k / n)) < t


def _rejection_region(n: int, p: float, alpha: float, bounds) -> tuple[int, int]:
    """(k_lo, k_hi): the bounds exclude p iff k < k_lo or k > k_hi (both monotone in k)."""

    def excludes_low(k: int) -> bool:  # upper end below p
        return bounds[1](k, n, alpha) < p

    def excludes_high(k: int) -> bool:  # lower end above p
        return bounds[0](k, n, alpha) > p

    lo, hi = 0, n  # largest k with excludes_low: bisection
    if not excludes_low(0):
        k_lo = 0
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if excludes_low(mid) else (lo, mid)
        k_lo = lo + 1
    lo, hi = 0, n
    if not excludes_high(n):
        k_hi = n
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if excludes_high(mid) else (mid, hi)
        k_hi = lo
    return k_lo, k_hi


def _cp(k, n, alpha, upper=False):
    arr = np.array([float(k)])
    return float((clopper_pearson_upper if upper else clopper_pearson_lower)(arr, n, alpha)[0])


#: Simulated sequences per probability, and the two-sided level of each bound.
PATHS, ALPHA = 20_000, 0.05


@pytest.mark.parametrize("p", [0.5, 0.05, 0.002])
def test_time_uniform_coverage_and_the_cost_of_peeking(p):
    """PATHS = 20,000 Bernoulli(p) sequences of 16,384 samples, looked at 15 times (1, 2, 4,
    ... 16,384 samples): the confidence sequence (each end at ALPHA / 2) misses p at some look
    in at most 5.6% of them (ALPHA = 5% plus 3.6 standard errors); Clopper-Pearson bounds at
    the same levels, looked at the same 15 times, miss it far more often for p = 0.5 (about
    15%): peeking breaks a fixed-size test, not this one."""
    rng = np.random.default_rng(int(p * 1000))
    looks = [2**j for j in range(15)]
    steps = np.diff([0, *looks])
    counts = np.cumsum(rng.binomial(steps, p, size=(PATHS, len(steps))), axis=1)
    seq = (mixture_lower, mixture_upper)
    cp = (lambda k, n, a: _cp(k, n, a), lambda k, n, a: _cp(k, n, a, upper=True))
    missed_seq = np.zeros(PATHS, dtype=bool)
    missed_cp = np.zeros(PATHS, dtype=bool)
    for i, n in enumerate(looks):
        k_lo, k_hi = _rejection_region(n, p, ALPHA / 2, seq)
        missed_seq |= (counts[:, i] < k_lo) | (counts[:, i] > k_hi)
        k_lo, k_hi = _rejection_region(n, p, ALPHA / 2, cp)
        missed_cp |= (counts[:, i] < k_lo) | (counts[:, i] > k_hi)
    limit = ALPHA + 3.6 * math.sqrt(ALPHA * (1 - ALPHA) / PATHS)
    assert missed_seq.mean() <= limit
    if p == 0.5:
        assert missed_cp.mean() > 0.1


def test_schedule():
    assert schedule(100_000, 1000) == [1000, 2000, 4000, 8000, 16000, 32000, 64000, 100_000]
    assert schedule(500, 1000) == [500]
    with pytest.raises(ValueError, match="growth > 1"):
        schedule(10, 1, 1.0)


def _binomial_events(p_num: float, p_den: float, seed: int):
    """count(look, n): one event's hits on the numerator and denominator datasets."""
    rng = np.random.default_rng(seed)

    def count(look: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        return np.array([rng.binomial(n, p_num)]), np.array([rng.binomial(n, p_den)])

    return count


#: The budget and the confidence of each sequential audit.
BUDGET, CONFIDENCE = 1_000_000, 0.95
_CLAIM = {"epsilon": 1.0, "delta": 0.0, "budget": BUDGET, "confidence": CONFIDENCE, "tests": 1}


@pytest.mark.slow
def test_sequential_certification_is_valid():
    """(Slow; the fast evidence of validity is the coverage test above.)  200 seeded
    certifications of one event with P = e^eps Q exactly (the event of randomized response
    at eps = 1, Q = 1/(1+e)), claimed at eps = 1 with budget 10^6, alpha 0.05: violations
    are Binomial(200, <= 0.05); more than 18 has probability < 0.005."""
    q = 1 / (1 + math.e)
    runs = [certify_sequentially(_binomial_events(math.e * q, q, s), **_CLAIM) for s in range(200)]
    assert sum(o.reason == "violation" for o in runs) <= 18
    assert sum(o.epsilon_lower > 1.0 for o in runs) <= 18


def test_sequential_certification_stops_early_both_ways():
    """At eps = 2 claimed as 1, 10 seeded runs (budget 10^6, alpha 0.05) stop with a
    violation, the median after at most 1/16 of the budget; at eps = 0.2 claimed as 1 they
    stop as futile, before the budget."""
    q2 = 1 / (1 + math.e**2)
    leaky = [
        certify_sequentially(_binomial_events(math.e**2 * q2, q2, s), **_CLAIM) for s in range(10)
    ]
    assert all(o.reason == "violation" and o.epsilon_lower > 1.0 for o in leaky)
    assert np.median([o.samples for o in leaky]) <= BUDGET / 16
    q3 = 1 / (1 + math.e**0.2)
    private = [
        certify_sequentially(_binomial_events(math.e**0.2 * q3, q3, s), **_CLAIM) for s in range(10)
    ]
    assert all(o.reason == "futile" and o.samples_saved > 0 for o in private)


def test_with_delta_and_several_events():
    """Two events, delta 0.01: the bound uses the best event, p_numerator_lower - delta."""
    rng = np.random.default_rng(5)

    def count(look: int, n: int):
        return rng.binomial(n, [0.3, 0.6]), rng.binomial(n, [0.2, 0.05])

    out = certify_sequentially(
        count, epsilon=1.0, delta=0.01, budget=200_000, confidence=0.95, tests=2
    )
    assert out.reason == "violation" and out.event == 1
    expected = math.log((out.p_numerator_lower - 0.01) / out.p_denominator_upper)
    assert out.epsilon_lower == pytest.approx(expected, rel=1e-9)
    assert out.epsilon_lower <= expected
    assert len(out.hits_numerator) == 2 and out.looks >= 1


@pytest.mark.slow
def test_audit_hook_stops_early_and_keeps_its_guarantee():
    """``audit(..., certification="sequential")``: Laplace with scale 0.5 (epsilon 2) claimed
    1-DP is caught after a fraction of the certification budget (2 * 10^6 samples a side,
    10% for selection), the same seed gives the same result, and the correct mechanism
    (scale 1 claimed 1-DP) stops as futile or spends the budget without a violation; its
    bound is at most the true epsilon 1."""
    import _audit_mechanisms as mech

    from dpaudit.audit import audit

    kw = {"epsilon": 1.0, "samples": 2_000_000, "seed": 3, "certification": "sequential"}
    leaky = audit(mech.ShiftedLaplace(0.5), 0.0, 1.0, **kw)
    assert (
        leaky.violation and "sequential" in leaky.correction and "(violation)" in leaky.correction
    )
    again = audit(mech.ShiftedLaplace(0.5), 0.0, 1.0, **kw)
    assert again.epsilon_lower == leaky.epsilon_lower and again.samples_d0 == leaky.samples_d0
    honest = audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, **kw)
    assert not honest.violation and honest.epsilon_lower <= 1.0
    fixed = audit(mech.ShiftedLaplace(0.5), 0.0, 1.0, **(kw | {"certification": "auto"}))
    assert fixed.violation and leaky.samples_d0 <= fixed.samples_d0 / 8
    saved = fixed.samples_d0 - leaky.samples_d0
    assert fixed.samples_drawn - leaky.samples_drawn == 2 * saved
    with pytest.raises(ValueError, match="'auto', 'clopper-pearson', 'joint' or 'sequential'"):
        audit(mech.ShiftedLaplace(1.0), 0.0, 1.0, **(kw | {"certification": "peeking"}))
