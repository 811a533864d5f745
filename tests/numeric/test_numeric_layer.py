"""Layer 1: exact numbers, rigorous intervals, directed rounding."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.numeric import (
    EvaluationError,
    bracket_decreasing,
    endpoints,
    exact,
    float_down,
    float_up,
    interval,
    mpf_to_float,
)


def test_ten_times_point_one_rounds_up_to_at_least_one():
    eps = 10 * exact(0.1)  # the float 0.1 is slightly above 1/10
    assert eps > 1
    assert float_up(eps) >= 1.0
    assert float_up(eps) > 1.0  # the exact value is above 1, so rounding up must exceed it
    assert float_down(eps) == 1.0
    # summing the float ten times gives 0.9999999999999999 in floating point ...
    assert sum([0.1] * 10) < 1.0
    # ... but summed exactly it is never below 1
    assert float_up(sum([exact(0.1)] * 10, sympy.Integer(0))) >= 1.0
    assert float_up(10 * exact("0.1")) == 1.0  # the decimal 0.1 is exactly 1/10


def test_exact_conversions():
    assert exact(3) == 3
    assert exact(Fraction(1, 3)) == sympy.Rational(1, 3)
    assert exact("1e-6") == sympy.Rational(1, 10**6)
    assert exact("1/3") == sympy.Rational(1, 3)
    assert exact(0.5) == sympy.Rational(1, 2)
    assert exact(sympy.Float(0.25)) == sympy.Rational(1, 4)
    assert not exact(sympy.Float("0.1") + sympy.Symbol("x")).atoms(sympy.Float)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), True, "abc", 1j, None])
def test_exact_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="epsilon"):
        exact(bad, "epsilon")


def test_interval_encloses_closed_forms():
    lo, hi = endpoints(interval(sympy.log(3) / 2))
    with mpmath.workdps(40):
        true = mpmath.log(3) / 2
        assert lo <= true <= hi
    assert hi - lo < mpmath.mpf(2) ** -55
    x = sympy.Symbol("x")
    lo, hi = endpoints(interval(sympy.erfc(x) * sympy.exp(x**2), {x: 3}))
    with mpmath.workdps(40):
        true = mpmath.erfc(3) * mpmath.exp(9)
    assert lo <= true <= hi


def test_interval_over_a_box_contains_every_value():
    x = sympy.Symbol("x")
    lo, hi = endpoints(interval(x**2 - x, {x: ("0", "2")}))
    for v in [0, 0.5, 1, 1.5, 2]:
        assert lo <= v**2 - v <= hi


def test_interval_refuses_undefined():
    with pytest.raises(EvaluationError):
        interval(sympy.log(sympy.Symbol("x")), {sympy.Symbol("x"): (-1, 1)})
    with pytest.raises(EvaluationError):
        interval(sympy.Symbol("y"))


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False))
def test_directed_rounding_brackets_exact_value(f):
    # x = f + tiny: rounding up must exceed f, rounding down must give f
    x = exact(f) + sympy.Rational(1, 10**400)
    assert float_up(x) > f
    assert float_down(x) == f
    assert mpf_to_float(mpmath.mpf(f), "up") == f


def test_rounding_directions_at_tiny_and_huge():
    assert float_up(sympy.exp(-800)) > 0.0
    assert float_down(sympy.exp(-800)) == 0.0
    assert float_up(sympy.exp(800)) == math.inf
    assert float_down(sympy.Integer(10) ** 400) == 1.7976931348623157e308


def test_bracket_decreasing_brackets_the_crossing():
    x = sympy.Symbol("x")
    lower, upper = bracket_decreasing(sympy.exp(-x), x, sympy.Rational(1, 10**6))
    true = math.log(10**6)
    assert float_down(lower) <= true <= float_up(upper)
    assert float(upper - lower) < 1e-10


def test_bracket_decreasing_of_a_callable_matches_the_symbolic_route():
    """f given as a callable of an exact x (numeric.functions: no sympy for plain numbers)
    brackets the same crossing as its sympy expression, and the Gaussian profile's epsilon
    (gdp_epsilon, a callable) lies within the symbolic route's bracket of gdp_delta."""
    from dpaudit.exact_numbers import ExactNumber
    from dpaudit.numeric import functions as fn
    from dpaudit.theorems import primitives as prim

    target = Fraction(1, 10**6)
    lower, upper = bracket_decreasing(lambda x: fn.exp(-x), None, target)
    assert isinstance(upper, ExactNumber)
    assert float_down(lower) <= math.log(10**6) <= float_up(upper)
    assert float(upper - lower) < 1e-10
    x = sympy.Symbol("x", nonnegative=True)
    mu, delta = Fraction(10, 11), Fraction(1, 10**5)
    s_lo, s_hi = bracket_decreasing(prim.gdp_delta(mu, x), x, delta)
    c_lo, c_hi = prim.gdp_epsilon(mu, delta)
    assert max(float_down(s_lo), float_down(c_lo)) <= min(float_up(s_hi), float_up(c_hi))
    # broken input: an increasing function never falls below the target
    with pytest.raises(EvaluationError):
        bracket_decreasing(lambda x: x + 1, None, target, max_steps=20)
    with pytest.raises(TypeError):
        bracket_decreasing(sympy.exp(-x), None, target)


@pytest.mark.parametrize("x", ["5", "70", "7074", "1000000", "-3", "1/1000"])
def test_erfc_enclosure_is_relatively_tight_and_sound_in_the_tails(x: str) -> None:
    """The interval of erfc(x) is narrow relative to the value even where erfc is 1e-2130 or
    smaller (an absolute pad once made it [-1e-97, 1e-97]), contains erfc computed at four
    times the precision, and lies within the Abramowitz-Stegun 7.1.13 bounds for x >= 0:
    1/(x + sqrt(x^2 + 2)) < e^(x^2) (sqrt(pi)/2) erfc(x) <= 1/(x + sqrt(x^2 + 4/pi))."""
    value = sympy.Rational(x)
    lo, hi = endpoints(interval(sympy.erfc(value)))
    with mpmath.workprec(600):
        ref = mpmath.erfc(mpmath.mpf(value.p) / value.q)
        assert lo <= ref <= hi
        assert lo > 0 and (hi - lo) <= hi * mpmath.mpf(2) ** -70  # ~1e-21 relative
        if value > 0:
            v = mpmath.mpf(value.p) / value.q
            scale = mpmath.exp(v**2) * mpmath.sqrt(mpmath.pi) / 2
            assert lo * scale > 1 / (v + mpmath.sqrt(v**2 + 2)) * (1 - mpmath.mpf(2) ** -90)
            assert hi * scale <= 1 / (v + mpmath.sqrt(v**2 + 4 / mpmath.pi)) * (
                1 + mpmath.mpf(2) ** -90
            )
