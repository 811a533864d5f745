"""The stability conversions round a numeric input containing a logarithm up to a rational
before exponentiating it (003 bounds; see dpaudit.theorems.stability._rational_up): the result must
stay an upper bound, equal the exact value for rational inputs, and not leave sympy a
closed form whose exp it rewrites into huge exact roots (minutes per curve point)."""

from __future__ import annotations

import mpmath
import sympy

from dpaudit.numeric import exact
from dpaudit.theorems import stability as st
from dpaudit.theorems import zcdp

#: The closed form that made curve points time out: the optimal zCDP conversion at a delta
#: that entered as a float (a rational with a 2^-89 denominator).
_RHO = sympy.Rational(1, 128)
_DELTA = exact(1e-11, "delta")


def _closed_form() -> sympy.Expr:
    eps = zcdp.zcdp_to_approx_optimal(_RHO, _DELTA)
    assert not eps.is_Rational and not eps.free_symbols
    return eps


def _mp(expr: sympy.Expr) -> mpmath.mpf:
    with mpmath.workdps(60):
        return mpmath.mpf(sympy.N(expr, 60))


def test_dp_to_stability_of_closed_form_is_an_upper_bound() -> None:
    eps = _closed_form()
    got = st.dp_to_stability(eps, _DELTA)
    with mpmath.workdps(60):
        e = mpmath.exp(_mp(eps))
        truth = (e - 1 + 2 * _mp(_DELTA)) / (e + 1)
        assert _mp(got) >= truth
        assert _mp(got) - truth < mpmath.mpf("1e-15")
    # the exponent is a rational: nothing left for sympy to rewrite
    assert all(a.args[0].is_Rational for a in got.atoms(sympy.exp))


def test_flipped_epsilon_of_closed_form_is_an_upper_bound() -> None:
    eps, flip = _closed_form(), sympy.Rational(1, 20)
    got = st.flipped_epsilon(eps, _DELTA, flip)
    with mpmath.workdps(60):
        truth = mpmath.log(mpmath.exp(_mp(eps)) + (1 - 2 * _mp(flip)) * _mp(_DELTA) / _mp(flip))
        assert _mp(got) >= truth
        assert _mp(got) - truth < mpmath.mpf("1e-15")


def test_rational_and_symbolic_inputs_are_exact() -> None:
    e, d = sympy.symbols("e d", positive=True)
    assert st.dp_to_stability(sympy.Rational(1, 4), 0) == (
        (sympy.exp(sympy.Rational(1, 4)) - 1) / (sympy.exp(sympy.Rational(1, 4)) + 1)
    )
    assert st.dp_to_stability(e, d) == (sympy.exp(e) - 1 + 2 * d) / (sympy.exp(e) + 1)
    assert st.flipped_epsilon(e, d, sympy.Rational(1, 4)) == sympy.log(sympy.exp(e) + 2 * d)
    # a closed form without a logarithm keeps its exact form (shown in derivations)
    x = sympy.tanh(sympy.Rational(1, 8))
    assert st.flipped_epsilon(0, x, sympy.Rational(1, 4)) == sympy.log(1 + 2 * x)
