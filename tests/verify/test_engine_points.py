"""Point evaluation in the verifier: every branch choice (Min, Max, Abs, Piecewise, floor)
and every comparison at a point is rigorous -- never sympy's automatic evaluation, which
compares numbers by a low-precision evalf.

The regression example: at n = 10^9, ``3 n^2 log(1 + x/n)`` differs from ``3 n x`` by
``3 x^2 / 2`` only, and sympy's evalf of ``log(1 + x/n)`` (x/n ~ 3e-25) comes out as 0, so
``Min(3 n^2 log(1 + x/n), 10^-6)`` takes the log branch and ``Max`` the constant, even where
the log term exceeds 10^-6.  On a one-point domain where the gap is 10^-50 (below what the
120-bit counterexample check separates), the verifier used to say "proved" for false
inequalities.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy
from _refutation import assert_refutation_holds

from dpaudit.verify import Domain
from dpaudit.verify.boxes import _frac_down, _frac_up
from dpaudit.verify.domain import Range
from dpaudit.verify.engine import verify_inequality
from dpaudit.verify.points import _sign_at, _value_at

n, x = sympy.symbols("n x")
LOG_TERM = 3 * n**2 * sympy.log(1 + x / n)
MICRO = sympy.Rational(1, 10**6)
N = 10**9


def _x_above() -> sympy.Rational:
    """A rational x with LOG_TERM(n = 10^9, x) = 10^-6 + 10^-50 (to 1e-80), computed with
    mpmath at 400 bits; its gap above 10^-6 is checked rigorously in the tests."""
    with mpmath.workprec(400):
        big = mpmath.mpf(N)
        root = mpmath.findroot(
            lambda t: (
                3 * big**2 * mpmath.log(1 + t / big) - mpmath.mpf(10) ** -6 - mpmath.mpf(10) ** -50
            ),
            mpmath.mpf(1) / (3 * 10**15),
        )
        return sympy.Rational(mpmath.nstr(root, 95))


X = _x_above()
POINT = {"n": sympy.Integer(N), "x": X}
ONE_POINT = Domain({"n": Range(N, N, integer=True), "x": Range(X, X)})


def test_the_example_is_above_the_threshold() -> None:
    # rigorous at 1000 bits: LOG_TERM - 10^-6 is 10^-50 (so the Min is the constant)
    assert _sign_at(LOG_TERM - MICRO, POINT) == 1
    # and sympy's automatic evaluation gets the branch wrong there (the bug being guarded)
    naive = sympy.Min(LOG_TERM, MICRO).xreplace({n: N, x: X})
    assert naive != MICRO


def test_min_and_max_branches_chosen_rigorously() -> None:
    assert _value_at(sympy.Min(LOG_TERM, MICRO), POINT) == MICRO
    assert _value_at(sympy.Max(LOG_TERM, MICRO), POINT) == LOG_TERM.xreplace({n: N, x: X})
    assert _value_at(sympy.Abs(MICRO - LOG_TERM), POINT) == LOG_TERM.xreplace({n: N, x: X}) - MICRO
    pw = sympy.Piecewise((sympy.Integer(1), LOG_TERM <= MICRO), (sympy.Integer(2), True))
    assert _value_at(pw, POINT) == 2
    # floor of a value just below an integer, and of an exact integer given as logs
    assert _value_at(sympy.floor(10**6 * LOG_TERM), POINT) == 1
    assert _value_at(sympy.ceiling(10**6 * LOG_TERM), POINT) == 2
    assert _value_at(sympy.floor(sympy.log(8) / sympy.log(2)), {}) == 3


@pytest.mark.parametrize(
    "relation",
    [
        sympy.Le(sympy.Max(LOG_TERM, MICRO), MICRO),
        sympy.Ge(sympy.Min(-LOG_TERM, -MICRO), -MICRO),
        sympy.Ge(sympy.Min(2 * MICRO - LOG_TERM, MICRO), MICRO),
    ],
)
def test_false_at_a_point_by_1e_50_is_refuted_not_proved(relation) -> None:
    v = verify_inequality(relation, ONE_POINT)
    assert v.refuted, v.summary()
    assert_refutation_holds(v, prec=1000)
    # the printed sides are apart and show the gap in its 51st significant digit
    assert v.lhs_value != v.rhs_value


def test_true_at_the_point_is_still_proved() -> None:
    assert verify_inequality(sympy.Le(sympy.Min(LOG_TERM, MICRO), MICRO), ONE_POINT).proved
    assert verify_inequality(sympy.Ge(sympy.Max(LOG_TERM, MICRO), LOG_TERM), ONE_POINT).proved


def test_exact_equality_at_integer_points() -> None:
    # 2^k = k^2 at k = 4 exactly: decided by exact algebra, not by an enclosure of 0
    k = sympy.Symbol("k")
    assert verify_inequality(k**2 <= 2**k, Domain.parse("4 <= k <= 4 integer")).proved
    v = verify_inequality(k**2 < 2**k, Domain.parse("4 <= k <= 4 integer"))
    assert v.refuted, v.summary()


def test_negative_irrational_range_end_kept_negative() -> None:
    # the exact value of an mpmath endpoint used to lose its sign (mpf.man_exp is unsigned):
    # x in [-log 2, 1] was searched as [log 2, 1] and "x >= 0" came out proved
    d = Domain({"x": Range(-sympy.log(2), 1)})
    v = verify_inequality("x >= 0", d, symbolic=False)
    assert v.refuted, v.summary()
    assert_refutation_holds(v)
    assert verify_inequality("x >= -7/10", d, symbolic=False).proved


@pytest.mark.parametrize("end", [sympy.log(2), -sympy.log(2), sympy.pi / 3])
def test_irrational_range_ends_rounded_outwards(end) -> None:
    # mpmath.mpf(x) rounds an 80-bit endpoint to 53 bits to nearest (possibly inwards)
    exact_end = sympy.Rational(str(sympy.N(end, 60)))
    gap = sympy.Rational(1, 10**50)
    down, up = _frac_down(end), _frac_up(end)
    assert sympy.Rational(down.numerator, down.denominator) < exact_end - gap
    assert sympy.Rational(up.numerator, up.denominator) > exact_end + gap
