"""The conversions and compositions of plain numbers compute on exact numbers (no sympy) and
give the same values as on sympy input; the cards' formulas are the functions' formulas.

Oracle: the same function on sympy values (the path every release before issue 19 part 4
took), compared by rigorous enclosures (``float_up``, ``float_down``) and, for the cards, by
sympy's own evaluation of the card's bound at the same numbers.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

from dpaudit.exact_numbers import ExactNumber
from dpaudit.numeric import exact, exact_max, exact_min, float_down, float_up, from_float
from dpaudit.numeric import functions as fn
from dpaudit.theorems import advanced, composition, rdp, zcdp

CASES = [(Fraction(1, 2), Fraction(1, 10**6)), (Fraction(45, 16), Fraction(3, 10**7))]


def same_value(a, b) -> bool:
    """Equal enclosures: both round to the same floats up and down."""
    return float_up(a) == float_up(b) and float_down(a) == float_down(b)


def as_sympy(x: Fraction) -> sympy.Rational:
    return sympy.Rational(x.numerator, x.denominator)


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_zcdp_conversions_on_both_kinds(rho, delta):
    plain = zcdp.zcdp_to_approx(exact(rho), exact(delta))
    symbolic = zcdp.zcdp_to_approx(as_sympy(rho), as_sympy(delta))
    assert isinstance(plain, ExactNumber) and isinstance(symbolic, sympy.Basic)
    assert same_value(plain, symbolic)
    plain = zcdp.zcdp_to_approx_optimal(exact(rho), exact(delta))
    symbolic = zcdp.zcdp_to_approx_optimal(as_sympy(rho), as_sympy(delta))
    assert isinstance(plain, ExactNumber) and same_value(plain, symbolic)


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_the_cks20_card_is_the_function(rho, delta):
    """The card's bound at a numeric order is the value the conversion computes there."""
    order = fn.Rational(4907009, 10**6)
    card = zcdp.ZCDP_TO_APPROX_OPTIMAL.bound["epsilon"].xreplace(
        {
            sympy.Symbol("alpha"): sympy.Rational(4907009, 10**6),
            sympy.Symbol("rho", positive=True): as_sympy(rho),
            sympy.Symbol("delta", positive=True): as_sympy(delta),
        }
    )
    assert not card.free_symbols
    assert same_value(card, zcdp._cks20_epsilon(order, exact(rho), exact(delta)))


def test_the_rdp_and_advanced_cards_are_the_functions():
    tau, alpha, delta = sympy.symbols("tau alpha delta", positive=True)
    values = {tau: sympy.Rational(1, 3), alpha: sympy.Integer(7), delta: sympy.Rational(1, 10**5)}
    card = rdp.RDP_CONVERSION.bound["epsilon"].xreplace(values)
    assert same_value(card, rdp._bbgg20_epsilon(fn.Rational(1, 3), exact(7), exact(values[delta])))
    eps, d, slack, k = sympy.symbols("epsilon delta delta' k", positive=True)
    at = {eps: sympy.Rational(1, 10), d: 0, slack: sympy.Rational(1, 10**6), k: 100}
    card = advanced.ADVANCED_COMPOSITION.bound["epsilon"].xreplace(at)
    ours, _ = advanced.advanced_composition(fn.Rational(1, 10), 0, 100, fn.Rational(1, 10**6))
    assert isinstance(ours, ExactNumber) and same_value(card, ours)


def test_rdp_conversion_on_both_kinds():
    taus = [fn.Rational(1, 3), sympy.Rational(1, 3)]
    plain, symbolic = (rdp.rdp_to_approx([7], [t], Fraction(1, 10**5))[0] for t in taus)
    assert isinstance(plain, ExactNumber) and same_value(plain, symbolic)
    # tau = 0 at an order where the conversion is negative: max(eps, 0) exactly 0
    zero, _ = rdp.rdp_to_approx([2], [fn.Rational(0)], Fraction(1, 2))
    assert zero == 0 and isinstance(zero, ExactNumber)


def test_sums_and_extremes_of_plain_numbers_stay_exact_numbers():
    a, b = fn.Rational(1, 3), fn.log(fn.Rational(2))
    assert isinstance(fn.Add(a, b, 1), ExactNumber) and fn.Add() == 0
    assert isinstance(fn.Add(a, sympy.Symbol("x")), sympy.Add)
    assert composition.basic_composition([a, b], [0, 0]) == (a + b, 0)
    assert exact_max(a, b) is b and exact_min(a, b) is a and exact_max(b, 0) is b
    tied = exact_min(fn.log(fn.Rational(8)) / 3, b)  # equal, not structurally: kept both
    assert isinstance(tied, ExactNumber) and tied.head == "Min" and same_value(tied, b)
    assert exact_max(a, sympy.oo) is sympy.oo


def test_from_float_is_an_exact_rational_and_infinity_stays_sympy():
    value = from_float(0.1)
    assert isinstance(value, ExactNumber) and value == Fraction(0.1)
    assert from_float(float("inf")) is sympy.oo
