"""The conformance suite's rounding check can fail.

:meth:`dpaudit.conformance.EventConformance.test_epsilon_is_rounded_up_and_above_certified_lower_bound`
compares ``Guarantee.epsilon_upper`` with an independent high-precision evaluation of the
exact epsilon (it used to compare ``epsilon_upper`` with the very expression that computes
it).  Here it passes on the real accountant and fails when ``epsilon_upper`` is rounded to
nearest (below the truth for Laplace(3): 1/3) or one float too high (a loose bound).
"""

from __future__ import annotations

import math

import pytest
import sympy

from dpaudit.accountant import Guarantee
from dpaudit.conformance import EventConformance
from dpaudit.events import Laplace


class _LaplaceThird(EventConformance):
    deltas = (None,)

    def examples(self) -> list[Laplace]:
        return [Laplace(3)]  # epsilon 1/3: no float equals it

    def invalid(self) -> list:
        return []


def _patched(monkeypatch: pytest.MonkeyPatch, value) -> None:
    monkeypatch.setattr(Guarantee, "epsilon_upper", property(value))


def test_passes_on_the_accountant() -> None:
    _LaplaceThird().test_epsilon_is_rounded_up_and_above_certified_lower_bound()


def test_fails_when_rounded_to_nearest(monkeypatch: pytest.MonkeyPatch) -> None:
    _patched(monkeypatch, lambda g: float(g.epsilon))
    assert sympy.Rational(float(sympy.Rational(1, 3))) < sympy.Rational(1, 3)  # below truth
    with pytest.raises(AssertionError, match=r"epsilon_upper .* < epsilon"):
        _LaplaceThird().test_epsilon_is_rounded_up_and_above_certified_lower_bound()


def test_fails_when_a_float_too_high(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpaudit.numeric import float_up

    _patched(monkeypatch, lambda g: math.nextafter(float_up(g.epsilon), math.inf))
    with pytest.raises(AssertionError, match="not the smallest float"):
        _LaplaceThird().test_epsilon_is_rounded_up_and_above_certified_lower_bound()
