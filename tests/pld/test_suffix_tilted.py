"""The tilted suffix sums behind the PLD's epsilon search, against a 50-digit oracle.

T_j = sum_{i > j} v_i exp((j - i) h) must be an upper bound once the callers' allowance
(1 + 4 n u) is applied, and accurate to 1e-12 relative: the certified epsilon bounds of
:mod:`dpaudit.pld.distribution` rest on it.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.pld.fft import UNIT_ROUNDOFF
from dpaudit.pld.sums import _suffix_tilted


def _oracle(values: np.ndarray, h: float) -> list[mpmath.mpf]:
    with mpmath.workdps(50):
        hh = mpmath.mpf(h)
        return [
            mpmath.fsum(
                mpmath.mpf(values[i]) * mpmath.exp((j - i) * hh) for i in range(j + 1, len(values))
            )
            for j in range(len(values))
        ]


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 120),
    h=st.sampled_from([1e-4, 1e-3, 0.05, 0.7, 3.0, 45.0]),
    seed=st.integers(0, 2**32 - 1),
    power=st.sampled_from([1, 8, 40]),
)
def test_upper_bound_and_accurate(n, h, seed, power):
    values = np.random.default_rng(seed).random(n) ** power
    got = _suffix_tilted(values, h)
    allowance = 1 + 4 * n * UNIT_ROUNDOFF
    with mpmath.workdps(50):
        for g, t in zip(got, _oracle(values, h), strict=True):
            assert mpmath.mpf(g) * allowance >= t
            assert mpmath.mpf(g) <= t * (1 + mpmath.mpf("1e-12")) + mpmath.mpf("1e-300")


def test_broken_sum_is_caught():
    values = np.linspace(0.1, 1, 50)
    wrong = _suffix_tilted(values, 0.01) * (1 - 1e-9)  # a result 1e-9 too small fails
    oracle = _oracle(values, 0.01)
    assert any(
        mpmath.mpf(w) * (1 + 200 * UNIT_ROUNDOFF) < t
        for w, t in zip(wrong, oracle, strict=True)
        if t > 0
    )
