"""The Gaussian mechanism's epsilon is certified by a direct interval evaluation of its profile
(``primitives._bracket_near``), falling back to the expression evaluator: the bracket must be
the one the expression evaluator certifies from the same guess, the enclosure must hold a
50-digit value of the profile, and a guess it cannot certify must fall back, not pass."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpaudit.numeric import bracket_decreasing, exact
from dpaudit.theorems import primitives as prim

CASES = [
    (Fraction(1, 50), "1e-5"),
    (Fraction(5000, 13283), "5e-6"),
    (Fraction(1), "1e-5"),
    (Fraction(5), "1e-10"),
    (Fraction(1, 2), "1e-300"),
    (Fraction(30), "1e-3"),
]


def _mu(value: Fraction | str):
    return exact(value, "mu")


@pytest.mark.parametrize(("mu", "delta"), [*CASES, ("sqrt(1000)/3", "1e-6")])
def test_the_direct_bracket_is_the_expression_evaluators(mu, delta) -> None:
    mu_e, d = _mu(mu), exact(delta, "delta")
    guess = prim._gdp_epsilon_guess(float(mu_e), float(d))
    assert guess is not None
    near = prim._bracket_near(mu_e, d, guess, "1e-12")
    assert near is not None  # decided directly in every case here
    generic = bracket_decreasing(
        lambda eps: prim.gdp_delta(mu_e, eps), None, d, rel_tol="1e-12", guess=guess
    )
    assert near == generic
    lower, upper = near
    assert prim.gdp_delta(mu_e, upper) <= d < prim.gdp_delta(mu_e, lower)


@pytest.mark.parametrize(("mu", "delta"), CASES)
@pytest.mark.parametrize("bits", [80, 160])
def test_the_enclosure_holds_a_50_digit_profile(mu, delta, bits) -> None:
    guess = prim._gdp_epsilon_guess(float(mu), float(exact(delta, "delta")))
    eps = exact(guess, "eps")
    ((lo, hi),) = prim._gdp_delta_enclosures(_mu(mu), (eps,), bits)
    with mpmath.workdps(50):
        m = mpmath.mpf(mu.numerator) / mu.denominator
        e = mpmath.mpf(Fraction(guess).numerator) / Fraction(guess).denominator
        true = mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)
        assert lo <= true <= hi
        assert hi - lo <= abs(true) * mpmath.mpf(2) ** -(bits // 2)


def test_a_wrong_guess_falls_back_to_bisection() -> None:
    mu, d = _mu(Fraction(1)), exact("1e-5", "delta")
    guess = prim._gdp_epsilon_guess(1.0, 1e-5)
    # 1% off: the end meant to lie below the target lies above it, so nothing is certified
    assert prim._bracket_near(mu, d, guess * 1.01, "1e-12") is None
    assert prim._bracket_near(mu, d, guess * 0.99, "1e-12") is None
    lower, upper = prim.gdp_epsilon(mu, d)
    assert lower <= exact(guess, "g") <= upper
