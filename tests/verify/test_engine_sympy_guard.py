"""The verifier never hands sympy an expression it could run away on: sizes (operations,
bits of rational coefficients) are checked before every expand / cancel / factor call,
because no timer reliably stops sympy (CI once hung for minutes in sympy.factor on the
large fractions hypothesis draws)."""

from __future__ import annotations

import time

import pytest
import sympy
from test_engine_faces import FAST, _families

from dpaudit.verify.enclosure import _factors
from dpaudit.verify.engine import verify_inequality
from dpaudit.verify.symbolic import (
    MAX_COEFFICIENT_BITS,
    _affordable,
    _deep_cancel,
    _factored,
    _light_simplify,
)

x, y = sympy.symbols("x y")

#: A fraction of the size hypothesis' st.fractions draws (about 200 bits each side).
HUGE = sympy.Rational(2**199 + 2**61 + 7, 2**200 + 3**40)
#: CPU seconds within which a verification with the FAST budget must finish: its time
#: limit is 1.5 s of CPU; the bound leaves room for one box's work and the probes.
QUICK = 15.0


def _polynomial(c: sympy.Rational) -> sympy.Expr:
    return sympy.expand((x**3 + c * y + 1) * (c * x * y**2 - x + c**2) * (x + y + c) ** 2)


def test_affordable_refuses_large_coefficients() -> None:
    small = _polynomial(sympy.Rational(3, 7))
    big = _polynomial(HUGE)
    assert _affordable(small, 300)
    assert not _affordable(big, 300)
    assert not _affordable(x + sympy.Rational(1, 2 ** (MAX_COEFFICIENT_BITS + 1)), 300)
    assert not _affordable(small, 5)  # too many operations


def test_simplifiers_return_at_once_on_large_coefficients() -> None:
    big = _polynomial(HUGE)
    start = time.process_time()
    assert _factored(big) == big
    assert _light_simplify(big) == big
    assert _deep_cancel(big) == big
    assert [f.expr for f in _factors(big)] == [big]
    assert time.process_time() - start < 2.0
    # small coefficients are still factored, large ones never
    for c, factored in ((sympy.Rational(3, 7), True), (HUGE, False)):
        e = sympy.expand((x + c * y) * (x - y) * (x + 1))
        assert (len(sympy.Mul.make_args(_factored(e))) >= 3) is factored


@pytest.mark.slow
@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_large_denominator_perturbation_finishes_quickly(which: int) -> None:
    # the perturbation the derandomized property test avoids: a ~200-bit fraction
    lhs, rhs, domain = _families()[which]
    for false_rhs in (rhs - HUGE / 7, HUGE * rhs):
        start = time.process_time()
        v = verify_inequality(sympy.Le(lhs, false_rhs), domain, **FAST)
        assert time.process_time() - start < QUICK, v.summary()
        assert not v.proved, v.summary()
