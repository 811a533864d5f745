"""The exact binomial profile of k-fold randomized response against an independent mpmath oracle.

The oracle sums the binomial law of the loss directly at 80 significant digits (no lattice
segments, no closed form) and bisects the decreasing profile; it shares no code with
:mod:`dpaudit.pld.binomial`.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy

from dpaudit import events as ev
from dpaudit.accountant import account
from dpaudit.pld import binomial
from dpaudit.theorems import optimal

R = sympy.Rational


def _oracle_profile(eps0: mpmath.mpf, k: int, g: mpmath.mpf, delta0: mpmath.mpf) -> mpmath.mpf:
    p = mpmath.e**eps0 / (1 + mpmath.e**eps0)
    total = mpmath.mpf(0)
    for i in range(k + 1):  # i = number of "wrong" answers under P
        loss = (k - 2 * i) * eps0
        if loss > g:
            mass = mpmath.binomial(k, i) * p ** (k - i) * (1 - p) ** i
            total += mass * (1 - mpmath.e ** (g - loss))
    keep = (1 - delta0) ** k
    return 1 - keep + keep * total


def _oracle_epsilon(eps0: mpmath.mpf, k: int, delta: mpmath.mpf, delta0: mpmath.mpf) -> mpmath.mpf:
    lo, hi = mpmath.mpf(0), k * eps0
    if _oracle_profile(eps0, k, lo, delta0) <= delta:
        return lo
    for _ in range(200):
        mid = (lo + hi) / 2
        if _oracle_profile(eps0, k, mid, delta0) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


@pytest.mark.parametrize(
    ("eps0", "k", "delta", "delta0"),
    [
        (1, 100, R(1, 10**6), 0),  # the table: 83.5307
        (R(1, 2), 50, R(1, 10**5), 0),  # 18.9333
        (R(1, 10), 100, R(1, 10**6), 0),
        (R(3, 2), 7, R(1, 10), 0),
        pytest.param(R(1, 1000), 300, R(1, 10**3), 0, marks=pytest.mark.slow),  # 5 s
        (1, 40, R(1, 10**5), R(1, 10**7)),
        (sympy.log(3), 10, R(1, 10**3), 0),  # an irrational eps0 (enclosed, not rounded)
    ],
)
def test_epsilon_bounds_enclose_the_oracle(eps0, k, delta, delta0) -> None:
    lo, hi = binomial.binomial_epsilon_bounds(eps0, k, delta, delta0)
    with mpmath.workdps(80):
        e = mpmath.mpf(sympy.N(eps0, 90))
        exact = _oracle_epsilon(
            e, k, mpmath.mpf(sympy.N(delta, 90)), mpmath.mpf(sympy.N(delta0, 90))
        )
        assert mpmath.mpf(lo) <= exact <= mpmath.mpf(hi)
    assert hi - lo <= 1e-12 * max(1.0, hi)


def test_table_value_of_randomized_response() -> None:
    lo, hi = binomial.binomial_epsilon_bounds(1, 100, R(1, 10**6))
    assert 83.53070 <= lo <= hi <= 83.53071
    # the accountant reports it as exact (lower = upper up to rounding), without building a PLD
    g = account(ev.SelfComposed(ev.RandomizedResponse(1), 100), delta=R(1, 10**6))
    assert 83.5307016 <= g.epsilon_lower_float <= g.epsilon_upper <= 83.5307017
    assert g.theorem.key == "optimal_composition"


def test_profile_bounds_enclose_the_oracle_and_bracket_the_epsilon() -> None:
    for eps0, k, g in [(1, 100, 60.5), (0.5, 50, 0.0), (0.25, 9, 0.75), (2.0, 3, 6.0)]:
        lo, hi = binomial.binomial_delta_bounds(eps0, k, g)
        with mpmath.workdps(60):
            exact = _oracle_profile(mpmath.mpf(eps0), k, mpmath.mpf(g), mpmath.mpf(0))
        assert mpmath.mpf(lo) <= exact <= mpmath.mpf(hi)
    e_lo, e_hi = binomial.binomial_epsilon_bounds(1, 100, 1e-6)
    assert binomial.binomial_delta_bounds(1, 100, e_hi)[1] <= 1e-6
    assert binomial.binomial_delta_bounds(1, 100, e_lo)[0] >= 1e-6 or e_lo == e_hi


def test_matches_the_exact_closed_form() -> None:
    exact = optimal.optimal_epsilon(R(3, 4), 0, 12, R(1, 100))
    lo, hi = binomial.binomial_epsilon_bounds(R(3, 4), 12, R(1, 100))
    with mpmath.workdps(50):
        value = mpmath.mpf(sympy.N(exact, 50))
    assert mpmath.mpf(lo) <= value <= mpmath.mpf(hi)


def test_edges() -> None:
    # delta above the profile at 0: epsilon 0
    assert binomial.binomial_epsilon_bounds(R(1, 10), 4, R(1, 2)) == (0.0, 0.0)
    # delta below the mass revealed by delta0: no finite epsilon
    assert binomial.binomial_epsilon_bounds(1, 10, R(1, 10**6), R(1, 10**5)) == (math.inf, math.inf)
    # one copy: the closed form log((p - delta) / (1 - p))
    lo, hi = binomial.binomial_epsilon_bounds(1, 1, R(1, 10))
    with mpmath.workdps(50):
        p = mpmath.e / (1 + mpmath.e)
        assert lo <= mpmath.log((p - mpmath.mpf(1) / 10) / (1 - p)) <= hi


def test_bad_input_messages() -> None:
    with pytest.raises(ValueError, match=r"count must be an integer in \[1, "):
        binomial.binomial_epsilon_bounds(1, 0, 1e-6)
    with pytest.raises(ValueError, match="epsilon0 must be >= 0"):
        binomial.binomial_epsilon_bounds(-1, 3, 1e-6)
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        binomial.binomial_epsilon_bounds(1, 3, 1.0)
    with pytest.raises(ValueError, match=r"delta0 must be in \[0, 1\)"):
        binomial.binomial_epsilon_bounds(1, 3, 0.5, 1)


def test_k_at_once_equals_k_times_for_randomized_response() -> None:
    at_once = account(ev.SelfComposed(ev.RandomizedResponse(1), 20), delta=R(1, 10**6))
    one_by_one = account(ev.Composed([ev.RandomizedResponse(1)] * 20), delta=R(1, 10**6))
    assert at_once.epsilon_upper == one_by_one.epsilon_upper
    assert at_once.epsilon_lower_float == one_by_one.epsilon_lower_float
