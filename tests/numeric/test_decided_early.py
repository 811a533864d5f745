"""Comparisons decided at the first precision that decides them (issue 34, part 5).

``interval(..., enough=...)`` stops refining once a comparison is decided; the bracket of a
crossing, the sign test of the optimal zCDP conversion and ``exact_max`` use it, and
``rdp_to_approx`` chooses between its candidates in floats when their estimates are apart by
more than their errors.  Oracles: the enclosures still contain the value (mpmath at 50
digits); every answer is the one the full-precision route gave (the same exact rationals and
expressions, compared against the route without the shortcut).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.numeric import bracket_decreasing, endpoints, exact, interval
from dpaudit.numeric import functions as fn
from dpaudit.numeric.enclosures import START_PRECISION
from dpaudit.numeric.rounding import float_up
from dpaudit.theorems import primitives as prim
from dpaudit.theorems import rdp


def test_enough_stops_at_the_first_precision_and_still_encloses() -> None:
    x = exact(Fraction(1, 10**30), "x")
    value = (fn.exp(x) - 1) / x  # cancels: refined past the first rung
    calls: list[int] = []

    def enough(enclosure: object) -> bool:
        calls.append(1)
        return True

    coarse = interval(value, enough=enough)
    fine = interval(value)
    lo, hi = endpoints(coarse)
    with mpmath.workdps(50):
        truth = mpmath.expm1(mpmath.mpf(10) ** -30) * mpmath.mpf(10) ** 30
        assert lo <= truth <= hi
        # stopped at the first rung of the ladder: wider than the refined enclosure
        assert hi - lo > endpoints(fine)[1] - endpoints(fine)[0]
    assert calls == [1]
    assert START_PRECISION >= 53


@pytest.mark.parametrize(
    ("mu", "delta"),
    [(Fraction(1, 50), "1e-5"), (Fraction(5), "1e-10"), (Fraction(1, 2), "1e-300")],
)
def test_gdp_epsilon_is_unchanged_by_the_early_decisions(mu: Fraction, delta: str) -> None:
    d = exact(delta, "delta")
    lower, upper = prim.gdp_epsilon(exact(mu, "mu"), d)
    # the same bracket without the float guess (bisection: the route of every comparison
    # at full precision) must contain it, and the profile is certified on both sides of it
    assert prim.gdp_delta(mu, upper) <= d < prim.gdp_delta(mu, lower)
    b_lower, b_upper = bracket_decreasing(
        lambda eps: prim.gdp_delta(mu, eps), None, d, rel_tol="1e-12"
    )
    assert b_lower <= upper and lower <= b_upper


def test_a_bracket_at_zero_is_still_found_with_a_guess() -> None:
    # f(0) <= target: the guess cannot be certified (f(lower try) is not above the target),
    # and the crossing is 0
    assert bracket_decreasing(lambda x: 1 / (1 + x), None, 2, guess=0.5) == (0, 0)


def _by_rounding(found: list[tuple[object, object]]) -> tuple[object, object]:
    """The choice before the shortcut: every candidate rounded up, the first smallest."""
    best = None
    for cand, order in found:
        value = float_up(cand)
        if best is None or value < best[0]:
            best = (value, cand, order)
    assert best is not None
    return best[1], best[2]


@settings(max_examples=12, deadline=None)
@given(
    tau=st.fractions(min_value=Fraction(1, 10**6), max_value=1000),
    orders=st.lists(
        st.fractions(min_value=Fraction(1001, 1000), max_value=200), min_size=1, max_size=3
    ),
    log10_delta=st.integers(min_value=-30, max_value=-1),
)
def test_rdp_conversion_chooses_as_the_rounded_values_do(tau, orders, log10_delta) -> None:
    d = exact(Fraction(1, 10**-log10_delta), "delta")
    taus = [exact(tau * a, "tau") for a in orders]  # a Gaussian-like line tau(alpha)
    eps, order = rdp.rdp_to_approx([exact(a, "a") for a in orders], taus, d)
    found = []
    for a, t in zip(orders, taus, strict=True):
        a_ = exact(a, "a")
        found.append((rdp._bbgg20_epsilon(t, a_, d), a_))
        found.append((t + fn.log(1 / d) / (a_ - 1), a_))
    cand, chosen = _by_rounding(found)
    assert order == chosen
    assert float_up(eps) == max(float_up(cand), 0.0)


@pytest.mark.parametrize(
    ("order", "tau", "delta", "zero"),
    [
        (2, Fraction(1, 10**6), 1 - Fraction(1, 10**12), True),  # negative: max with 0
        (Fraction(1001, 1000), Fraction(1, 10**6), Fraction(1, 2), False),
        (Fraction(1000001, 1000000), Fraction(1, 10), Fraction(1, 10**5), False),  # no floats
    ],
)
def test_rdp_conversion_sign_is_decided_soundly(order, tau, delta, zero) -> None:
    eps, _ = rdp.rdp_to_approx([exact(order, "a")], [exact(tau, "tau")], exact(delta, "d"))
    a, t, d = (exact(x, "x") for x in (order, tau, delta))
    smallest = min(float_up(rdp._bbgg20_epsilon(t, a, d)), float_up(t + fn.log(1 / d) / (a - 1)))
    assert (eps == 0) is zero
    assert float_up(eps) == max(smallest, 0.0)
