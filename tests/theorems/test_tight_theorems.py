"""Closed forms and targets of the composition theorems."""

from __future__ import annotations

import math

import pytest
import sympy

from dpaudit.numeric import float_down, float_up
from dpaudit.theorems import (
    advanced,
    amplification,
    bounded_range,
    optimal,
    rdp,
    sparse_vector,
    zcdp,
)

R = sympy.Rational


def test_advanced_composition_table_value() -> None:
    eps, dlt = advanced.advanced_composition(R(1, 10), 0, 100, R(1, 10**6))
    assert abs(float_up(eps) - 6.308) < 1e-3 and dlt == R(1, 10**6)


def test_kov_heterogeneous_is_min_of_three() -> None:
    eps, _ = advanced.heterogeneous_advanced_composition([R(1, 10)] * 100, [0] * 100, R(1, 10**6))
    assert float_up(eps) <= 6.31


@pytest.mark.slow
def test_optimal_composition_targets() -> None:
    e = optimal.optimal_epsilon(R(1, 2), 0, 50, R(1, 10**5))
    assert 18.9332 <= float_down(e) <= float_up(e) <= 18.9334
    # delta at the returned epsilon is the target (closed form is exact)
    d = optimal.optimal_delta(R(1, 2), 0, 50, e)
    assert abs(float_up(d) - 1e-5) < 1e-12
    e = optimal.optimal_epsilon(1, 0, 100, R(1, 10**6))
    assert 83.5306 <= float_up(e) <= 83.5308


def test_optimal_heterogeneous_matches_homogeneous() -> None:
    lo, hi = optimal.optimal_epsilon_heterogeneous([0.5] * 50, [0] * 50, 1e-5)
    assert 18.9332 <= lo <= hi <= 18.9334


def test_zcdp_conversions() -> None:
    rho = R(1, 8)
    bs = float_up(zcdp.zcdp_to_approx(rho, R(1, 10**6)))
    cks = float_up(zcdp.zcdp_to_approx_optimal(rho, R(1, 10**6)))
    assert cks < bs and abs(cks - 2.4191) < 1e-3
    assert cks < 2.42  # 100 x exponential mechanism eps0 = 0.1 via bounded range


def test_bounded_range_profile_closed_form() -> None:
    eps = 0.3
    for x in (0.0, 0.1, 0.2):
        best = max(
            (1 - math.exp(-t * eps)) * (1 - math.exp(x - (1 - t) * eps))
            for t in [i / 2000 for i in range(2001)]
            if x <= (1 - t) * eps
        ) / (1 - math.exp(-eps))
        val = float_up(bounded_range.bounded_range_profile(R(3, 10), sympy.nsimplify(x)))
        assert best <= val + 1e-12 and val - best < 1e-6
    assert bounded_range.bounded_range_zcdp(R(1, 10)) == R(1, 800)


def test_rdp_values() -> None:
    assert rdp.gaussian_rdp(4, 2) == R(1, 2)
    # RR RDP is below pure eps and below alpha eps^2 / 2
    v = float_up(rdp.pure_rdp(3, 1))
    assert v <= 1 and v <= 1.5
    # subsampled Gaussian with q = 1 equals the Gaussian
    assert abs(float_up(rdp.subsampled_gaussian_rdp(5, 2, 1)) - 5 / 8) < 1e-12
    orders = list(range(2, 40))
    taus = [
        14062 * rdp.subsampled_gaussian_rdp(a, 1.1, R(256, 60000), numeric=True) for a in orders
    ]
    eps, _ = rdp.rdp_to_approx(orders, taus, R(1, 10**5))
    assert 2.59 < float(eps) < 2.60


@pytest.mark.parametrize(
    ("sigma", "q", "sensitivity"),
    [
        (R(11, 10), R(1, 100), 2),
        (R(265661, 100000), R(256, 60000), 1),
        (R(1, 20), R(1, 2), 1),
        (30, 1, 1),
        (R(9, 10), R(999, 1000), 3),
    ],
)
def test_subsampled_gaussian_floats_at_many_orders_are_the_numeric_values(
    sigma, q, sensitivity
) -> None:
    """The batched float curve (every order's terms in one array) is the per-order numeric
    value, bit for bit (the same operations element for element, the same sums), and refuses
    what the per-order function refuses."""
    orders = rdp.DEFAULT_ORDERS[:48]
    batch = rdp.subsampled_gaussian_rdp_floats(orders, sigma, q, sensitivity)
    single = [rdp.subsampled_gaussian_rdp(a, sigma, q, sensitivity, numeric=True) for a in orders]
    assert [sympy.Float(v, 17) for v in batch] == single
    with pytest.raises(ValueError, match="sampling_probability"):
        rdp.subsampled_gaussian_rdp_floats(orders, 1, R(3, 2))
    with pytest.raises(ValueError, match="integer >= 2"):
        rdp.subsampled_gaussian_rdp_floats([R(5, 2)], 1, R(1, 2))


@pytest.mark.parametrize(
    ("sigma", "q"), [(0.6, 0.5), (1.1, 0.01), (4.0, 1e-4), (30.0, 0.3), (0.8, 1.0)]
)
def test_subsampled_gaussian_floats_match_a_50_digit_oracle(sigma: float, q: float) -> None:
    """The float curve (log-binomials from math.lgamma, a log1p log-sum-exp) against the same
    sum in 50-digit mpmath: within 1e-9 absolute plus 1e-6 relative (the sum is often
    1 + 1e-8, so the float value carries the absolute error of its terms)."""
    import mpmath

    orders = rdp.DEFAULT_ORDERS[:48:3]
    floats = rdp.subsampled_gaussian_rdp_floats(orders, sigma, q)
    with mpmath.workdps(50):
        mq, s2 = mpmath.mpf(q), mpmath.mpf(sigma) ** 2
        for n, got in zip(orders, floats, strict=True):
            total = mpmath.fsum(
                mpmath.binomial(n, i)
                * (1 - mq) ** (n - i)
                * mq**i
                * mpmath.exp(mpmath.mpf(i * i - i) / (2 * s2))
                for i in range(n + 1)
            )
            want = float(mpmath.log(total) / (n - 1))
            assert abs(got - want) <= 1e-9 + 1e-6 * abs(want), (n, got, want)


def test_amplification() -> None:
    e, d = amplification.poisson_amplification(1, R(1, 10**6), R(1, 100))
    assert abs(float_up(e) - math.log(1 + 0.01 * (math.e - 1))) < 1e-12 and d == R(1, 10**8)
    e, d = amplification.without_replacement_amplification(1, 0, 10, 1000)
    assert abs(float_up(e) - math.log(1 + 0.01 * (math.e - 1))) < 1e-12
    e, d = amplification.with_replacement_amplification(R(1, 2), 1, 0, 5, 100)
    assert float_up(e) < 0.5 and 0 <= float_up(d) < 1
    with pytest.raises(ValueError, match=r"probability must be in \(0, 1\]"):
        amplification.poisson_amplification(1, 0, 2)
    with pytest.raises(ValueError, match="sample_size must be <= population_size"):
        amplification.without_replacement_amplification(1, 0, 10, 5)


def test_sparse_vector() -> None:
    assert sparse_vector.sparse_vector_epsilon(10, 20, 1) == R(1, 10) + R(1, 10)
    assert sparse_vector.sparse_vector_epsilon(10, 20, 3, monotonic=True) == R(1, 10) + R(3, 20)
    e1, e2 = sparse_vector.sparse_vector_split(1, 1)
    assert sympy.simplify(e1 + e2 - 1) == 0
    with pytest.raises(ValueError, match="positives must be >= 1"):
        sparse_vector.sparse_vector_epsilon(1, 1, 0)


def test_advanced_bad_slack() -> None:
    with pytest.raises(ValueError, match=r"delta_slack must be in \(0, 1\)"):
        advanced.advanced_composition(1, 0, 10, 0)


def _nonadaptive_br_epsilon(eps0: float, k: int, delta: float) -> float:
    """Independent check value: max over t of the k-fold generalized randomized response with
    losses t, t - eps0 (the non-adaptive optimum, a lower bound on the adaptive one), solved by
    bisection on the binomial profile in 50-digit arithmetic."""
    import mpmath

    mpmath.mp.dps = 50
    e = mpmath.mpf(eps0)

    def eps_at(t: mpmath.mpf) -> mpmath.mpf:
        p = (mpmath.exp(e) - mpmath.exp(t)) / (mpmath.exp(e) - 1)
        terms = [
            (mpmath.binomial(k, i) * p**i * (1 - p) ** (k - i), i * t + (k - i) * (t - e))
            for i in range(k + 1)
        ]

        def profile(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.fsum(w * max(0, 1 - mpmath.exp(x - loss)) for w, loss in terms)

        lo, hi = mpmath.mpf(0), k * e
        for _ in range(50):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if profile(mid) > delta else (lo, mid)
        return hi

    return float(max(eps_at(e * j / 40) for j in range(1, 40)))


def test_bounded_range_adaptive_composition_against_independent_values() -> None:
    # one mechanism: the exact sup of BR profiles (closed form) is the optimum; the grid bound
    # is above it (and at most eps0: a cell moves mass of order 1/M to the top loss)
    eps0, delta = 0.1, 1e-3
    single = eps0 + 2 * math.log(1 - math.sqrt(delta * -math.expm1(-eps0)))
    v1 = bounded_range.bounded_range_composition_epsilon(eps0, 1, delta, cells=200)
    assert single <= v1 <= single + 0.02 * eps0
    delta = 1e-6
    # k = 10: above the non-adaptive optimum (adaptivity can only cost), close to it
    v10 = bounded_range.bounded_range_composition_epsilon(eps0, 10, delta)
    na10 = _nonadaptive_br_epsilon(eps0, 10, delta)
    assert na10 <= v10 <= na10 * 1.1


def test_bounded_range_composition_beats_zcdp_route_for_100_exponential_mechanisms() -> None:
    from dpaudit import events as ev
    from dpaudit.accountant import account

    g = account(ev.SelfComposed(ev.Exponential(R(1, 10)), 100), delta=R(1, 10**6))
    assert g.theorem.key == "bounded_range_adaptive_composition"
    assert 2.246 <= g.epsilon_upper < 2.4191  # non-adaptive optimum <= ours < zCDP route
    with pytest.raises(ValueError, match="too many for the dynamic programme"):
        bounded_range.bounded_range_composition_epsilon(0.1, 10**6, 1e-6)


def test_optimal_delta_keeps_a_term_an_ulp_from_its_lattice_point() -> None:
    """eps_g = log 2 - 1e-30 is below the lattice point (k - 2i) eps = log 2 (k = 3, i = 1) by
    far less than a double's ulp: comparing rounded floats dropped that positive term (delta_g
    too small, an unsound 'bound'); the enclosures keep it, and an exact tie adds nothing."""
    e = sympy.log(2)
    g = sympy.log(2) - sympy.Rational(1, 10**30)
    exact_terms = sum(
        sympy.binomial(3, i) * (sympy.exp((3 - i) * e) - sympy.exp(g + i * e)) for i in range(2)
    )
    exact_value = exact_terms / (1 + sympy.exp(e)) ** 3
    got = optimal.optimal_delta(e, 0, 3, g)
    assert abs(sympy.N(got - exact_value, 80)) < 1e-200
    assert sympy.N(got - sympy.Rational(2, 9), 80) > 0  # the i = 1 term is in
    assert sympy.simplify(optimal.optimal_delta(e, 0, 3, e) - sympy.Rational(2, 9)) == 0
