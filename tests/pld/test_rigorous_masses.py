"""The PLD's bucket masses are proven enclosures: checked against mpmath high-precision oracles.

A bucket mass that is too small by even one part in 10^9 would make the pessimistic profile
dip below the exact one somewhere on these grids; a lower-side mass that is too large would
push the certified lower profile above it.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpaudit import pld
from dpaudit.pld import masses


@pytest.fixture(autouse=True)
def _fifty_digits():
    """The oracles subtract nearly equal CDFs: 50 digits, set per test (a module-level
    setting is undone by whichever test module is imported next)."""
    with mpmath.workdps(50):
        yield


def test_interval_masses_enclose_the_exact_normal_mass() -> None:
    rng = np.random.default_rng(3)
    comp = masses.Normal(0.37, 1.0, 1.1)
    a = rng.uniform(-12, 12, 200)
    w = 10.0 ** rng.uniform(-9, math.log10(1.1 / 16), 200)
    lo, hi = masses.interval_masses([comp], a, a + w)
    for ai, wi, l, u in zip(a, w, lo, hi, strict=True):
        exact = 0.37 * (mpmath.ncdf(ai + wi, mu=1, sigma=1.1) - mpmath.ncdf(ai, mu=1, sigma=1.1))
        assert l <= exact <= u
        # tight up to the float end points (relative u |a| / w) and the proven 3-point
        # Gauss-Legendre remainder (about 6e-6 (w / sigma)^7)
        rel = 1e-9 + 1e-14 * (abs(ai) + 1) / wi
        assert u - l <= rel * exact + 1e-5 * (wi / 1.1) ** 7 + 1e-290


def test_interval_masses_enclose_the_exact_exponential_mass() -> None:
    comp = masses.Exponential(0.5, -math.log(20), -0.1)
    a = np.linspace(0, 0.99, 50)
    lo, hi = masses.interval_masses([comp], a, a + 0.01)
    for ai, l, u in zip(a, lo, hi, strict=True):
        x0, x1 = mpmath.mpf(ai), mpmath.mpf(ai) + mpmath.mpf(0.01)
        exact = 0.5 / 20 * 10 * (mpmath.exp(-x0 / 10) - mpmath.exp(-x1 / 10))
        assert l <= exact <= u
        assert u - l <= 1e-12 * exact


def test_normal_tails_enclose() -> None:
    comps = [masses.Normal(0.9, 0.0, 0.8), masses.Normal(0.1, 1.0, 0.8)]
    lo, hi = masses.normal_tails(comps, 9.0, "above")
    exact = sum(c.weight * (1 - mpmath.ncdf(9.0, mu=c.mu, sigma=c.sigma)) for c in comps)
    assert lo <= exact <= hi


def _subsampled_gaussian_exact(sigma: float, q: float, eps: float, direction: str) -> float:
    """delta(eps) of one Poisson-subsampled Gaussian, from closed-form CDFs in 50 digits."""
    s, q, e = mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(eps)
    if direction == "remove":  # P = (1-q)N(0) + qN(1), Q = N(0); L > eps iff x > x*
        arg = (mpmath.exp(e) - (1 - q)) / q
        if arg <= 0:
            return 1.0
        x = s**2 * mpmath.log(arg) + mpmath.mpf(1) / 2
        p = (1 - q) * mpmath.ncdf(-x / s) + q * mpmath.ncdf((1 - x) / s)
        qq = mpmath.ncdf(-x / s)
    else:  # P = N(0), Q = (1-q)N(0) + qN(-1); L > eps iff x > x*
        arg = (mpmath.exp(-e) - (1 - q)) / q
        if arg <= 0:
            return 0.0
        x = -(s**2) * mpmath.log(arg) - mpmath.mpf(1) / 2
        p = mpmath.ncdf(-x / s)
        qq = (1 - q) * mpmath.ncdf(-x / s) + q * mpmath.ncdf((-1 - x) / s)
    return p - mpmath.exp(e) * qq


@pytest.mark.parametrize(("sigma", "q"), [(1.1, 256 / 60000), (0.8, 0.01), (2.0, 1.0), (0.5, 0.3)])
def test_subsampled_gaussian_profile_is_enclosed(sigma: float, q: float) -> None:
    d = pld.gaussian(sigma, sampling_probability=q)
    for direction, dist in (("remove", d.remove), ("add", d.add)):
        for eps in np.linspace(0.0, 6.0, 41):
            exact = _subsampled_gaussian_exact(sigma, q, float(eps), direction)
            lo, hi = dist.delta_bounds(float(eps))
            assert hi >= exact, (direction, eps)
            assert lo <= exact, (direction, eps)
            if exact > 1e-12:
                assert hi - lo <= 1e-3 * exact + 1e-15


def test_composed_gaussian_profile_is_enclosed() -> None:
    """25 x N(0, 5^2) has mu = 1: exact profile Phi(1/2 - eps) - e^eps Phi(-1/2 - eps)."""
    d = pld.gaussian(5.0).self_compose(25)
    for eps in np.linspace(0.0, 5.0, 26):
        e = mpmath.mpf(float(eps))
        exact = mpmath.ncdf(0.5 - e) - mpmath.exp(e) * mpmath.ncdf(-0.5 - e)
        lo, hi = d.delta_bounds(float(eps))
        assert lo <= exact <= hi


@pytest.mark.parametrize("q", [1.0, 0.2])
def test_laplace_profile_is_enclosed(q: float) -> None:
    """Remove direction of Poisson(q)-sampled Lap(b): L > eps is x > x*, closed-form masses."""
    b = mpmath.mpf(2)
    d = pld.laplace(2.0, sampling_probability=q).remove

    def cdf(x: mpmath.mpf, mu: int) -> mpmath.mpf:
        t = x - mu
        return mpmath.exp(t / b) / 2 if t < 0 else 1 - mpmath.exp(-t / b) / 2

    for eps in np.linspace(0.0, 0.6, 25):
        e = mpmath.mpf(float(eps))
        arg = (mpmath.exp(e) - (1 - mpmath.mpf(q))) / q
        if arg <= mpmath.exp(-1 / b):
            x = mpmath.mpf(-1)
        elif arg >= mpmath.exp(1 / b):
            x = mpmath.mpf(2)
        else:
            x = (1 + b * mpmath.log(arg)) / 2
        if eps == 0:
            x = x if arg > mpmath.exp(-1 / b) else mpmath.mpf(-1)
        p = (1 - q) * (1 - cdf(x, 0)) + q * (1 - cdf(x, 1))
        exact = max(mpmath.mpf(0), p - mpmath.exp(e) * (1 - cdf(x, 0)))
        lo, hi = d.delta_bounds(float(eps))
        assert lo <= exact <= hi, eps


def test_a_subnormal_atom_split_at_a_tie_keeps_its_mass_in_the_error_terms() -> None:
    """A relative rounding bound alone does not cover masses that underflow: one subnormal
    unit (5e-324) split with weight exactly 1/2 (a loss found by search on the grid h = 1)
    rounds to 0 on both grid points (ties to even), so without an absolute underflow term
    the dominating side lost the atom's whole mass (checked on the code before the term was
    added: masses 0, error 0).  Both sides' error terms must cover it (exact rationals)."""
    import math
    from fractions import Fraction

    from dpaudit.pld.atoms import _Accumulator

    loss, h = -0.6201145069582775, 1.0
    t = loss - math.floor(loss / h) * h
    assert math.expm1(h - t) / math.expm1(h) == 0.5  # the tie this test needs
    acc = _Accumulator(h, -3, 3)
    acc.add_atom(loss, 5e-324, 1e-300)
    assert not acc.m.any()  # both halves rounded to 0
    assert sum(map(Fraction, acc.m)) + Fraction(acc.err_up) >= Fraction(5e-324)
    assert sum(map(Fraction, acc.p)) + Fraction(acc.err_low) >= Fraction(5e-324)
    upper = acc.build(1e-15).upper
    assert float(np.sum(upper.masses)) + upper.inf_mass >= 5e-324
