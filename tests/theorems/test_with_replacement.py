"""Balle, Barthe, Gaboardi 2018, Theorem 10 (sampling with replacement) against brute force.

The independent computation: a small eps0-DP mechanism on multisets of size m (the number of
ones plus clipped discrete Laplace noise, sensitivity 1 under substitution), run on m draws
with replacement from a binary dataset of n records.  The output law is the binomial mixture
over the sampled count, computed exactly at 50 digits; both directions of every pair of
neighbouring datasets (substitution of one record) are enumerated and the hockey-stick
divergence at e^{eps'} must stay below the theorem's delta' for every level eps.  A wrong bound
(delta' without group privacy, as in a published implementation that multiplies delta0 by the
probability of sampling the record) is refuted by the same brute force, so the check has power.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy

from dpaudit.numeric import float_down, float_up
from dpaudit.theorems import amplification

R = sympy.Rational


def _mechanism(count: int, m: int, eps0: mpmath.mpf) -> list[mpmath.mpf]:
    """The count of ones plus discrete Laplace noise ``P(z) ∝ e^{-eps0 |z|}`` (eps0-DP: the
    count has sensitivity 1 under substitution), clipped to -1..m+1 (post-processing); outputs
    -1, 0, ..., m + 1.  Beyond the counts the loss of k substituted copies is exactly k eps0,
    so group privacy is needed."""
    r = mpmath.e**-eps0
    law = [r ** (1 + count) / (1 + r)]  # P(count + Z <= -1)
    law += [(1 - r) / (1 + r) * r ** abs(o - count) for o in range(m + 1)]
    law.append(r ** (m + 1 - count) / (1 + r))  # P(count + Z >= m + 1)
    return law


def _sampled_law(ones: int, n: int, m: int, eps0: mpmath.mpf) -> list[mpmath.mpf]:
    p = mpmath.mpf(ones) / n
    law = [mpmath.mpf(0)] * (m + 3)
    for c in range(m + 1):
        weight = mpmath.binomial(m, c) * p**c * (1 - p) ** (m - c)
        for o, x in enumerate(_mechanism(c, m, eps0)):
            law[o] += weight * x
    return law


def _worst_divergence(n: int, m: int, eps0: mpmath.mpf, level: mpmath.mpf) -> mpmath.mpf:
    """max over neighbouring binary datasets (both directions) of H_{e^level}."""
    worst = mpmath.mpf(0)
    for ones in range(n):  # x has ones + 1 ones, x' has ones (one record substituted)
        a, b = _sampled_law(ones + 1, n, m, eps0), _sampled_law(ones, n, m, eps0)
        for p, q in ((a, b), (b, a)):
            h = mpmath.fsum(
                max(mpmath.mpf(0), pi - mpmath.e**level * qi) for pi, qi in zip(p, q, strict=True)
            )
            worst = max(worst, h)
    return worst


@pytest.mark.parametrize(("eps0", "m", "n"), [(R(1), 3, 4), (R(2), 4, 3), (R(1, 2), 5, 6)])
def test_theorem_10_holds_by_brute_force(eps0, m, n) -> None:
    with mpmath.workdps(50):
        e0 = mpmath.mpf(eps0.p) / eps0.q
        for level in (R(0), R(1, 4), R(1, 2), eps0, 2 * eps0):
            eps_out, delta_out = amplification.with_replacement_amplification(level, eps0, 0, m, n)
            # the brute force at the theorem's eps' (rounded down: a smaller eps' only
            # raises the divergence, so the check is not weakened)
            observed = _worst_divergence(n, m, e0, mpmath.mpf(float_down(eps_out)))
            assert observed <= mpmath.mpf(float_up(delta_out)) + mpmath.mpf(10) ** -40


def test_theorem_10_is_not_trivially_satisfied() -> None:
    # delta' = delta0 * P(record sampled) (= 0 for pure DP) ignores the groups of copies of
    # the substituted record; brute force refutes it, and Theorem 10's delta' is positive there
    eps0, m, n = R(1), 3, 4
    with mpmath.workdps(50):
        eps_out, delta_out = amplification.with_replacement_amplification(eps0, eps0, 0, m, n)
        observed = _worst_divergence(n, m, mpmath.mpf(1), mpmath.mpf(float_up(eps_out)))
        assert observed > mpmath.mpf(10) ** -6  # the wrong bound claims 0
        assert observed <= mpmath.mpf(float_up(delta_out))


def test_theorem_10_reduces_to_the_base_mechanism_for_one_draw_of_one_record() -> None:
    # m = n = 1: the sample is the dataset; eps' = eps and delta' = delta_1(eps) = the
    # profile of the (eps0, delta0) dominating pair
    e, d = amplification.with_replacement_amplification(R(1, 2), 1, R(1, 100), 1, 1)
    assert e == R(1, 2)
    expected = R(1, 100) + R(99, 100) * (sympy.E - sympy.exp(R(1, 2))) / (1 + sympy.E)
    assert abs(float_up(d) - float_up(expected)) < 1e-15
