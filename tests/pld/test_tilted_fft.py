"""Exponentially tilted FFT composition (issue 19 part 3, dpaudit/pld/tilt.py), checked
against an mpmath closed form of the k-fold Laplace privacy profile and exact rational
convolutions.

The closed form.  For Laplace noise of scale b and sensitivity 1 (eps = 1/b), P = Lap(0, b),
the privacy loss of one coordinate is an atom at +eps (mass 1/2, x <= 0), an atom at -eps
(mass e^-eps / 2, x >= 1), and on (-eps, eps) the density (1/4) e^(-eps/2) e^(l/2) (0 < x < 1).
Conditioned on a coordinates at +eps, c at -eps and m in between, the loss is
(a - c) eps + S with S of sub-density K^m e^(s/2) u_m(s), u_m the m-fold convolution of the
indicator of (-eps, eps): u_m(s) = sum_k (-1)^k C(m, k) ((m - 2k) eps - s)_+^(m-1) / (m-1)!
(the Irwin-Hall density, reflected).  Then delta(e) = E[(1 - e^(e - L))_+] is a finite sum of
integrals int_0^X e^(+-v/2) v^n / n! dv = X^(n+1)/(n+1)! 1F1(n+1; n+2; +-X/2), evaluated in
mpmath at 40 digits (the alternating sum over k loses about 20).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import pld
from dpaudit.pld import fft, tilt

#: epsilon(1e-10) of 100-fold Laplace(scale 10), the root of the closed form below (mpmath
#: findroot at 80 digits; dp_accounting's estimate at a 1e-4 grid is 6.1796029).
EXACT_100_LAPLACE_1E_10 = 6.17959646784525


def laplace_profile(e: float, k: int, b: float, dps: int = 40) -> mpmath.mpf:
    """delta(e) of k-fold Laplace(scale b, sensitivity 1), from the closed form (module doc)."""
    with mpmath.workdps(dps):
        eps = mpmath.mpf(1) / mpmath.mpf(b)
        e = mpmath.mpf(e)
        pa, pc, kk = mpmath.mpf(1) / 2, mpmath.exp(-eps) / 2, mpmath.exp(-eps / 2) / 4
        half = mpmath.mpf(1) / 2
        total = mpmath.mpf(0)
        for m in range(k + 1):
            for a in range(k - m + 1):
                c = k - m - a
                t = e - (a - c) * eps  # the threshold for S
                if t >= m * eps:
                    continue
                w = (
                    mpmath.factorial(k)
                    / (mpmath.factorial(a) * mpmath.factorial(c) * mpmath.factorial(m))
                    * pa**a
                    * pc**c
                    * kk**m
                )
                if m == 0:
                    total += w * (1 - mpmath.exp(t))
                    continue
                n, low, acc = m - 1, max(t, -m * eps), mpmath.mpf(0)
                for j in range(m + 1):
                    top = (m - 2 * j) * eps
                    x = top - low
                    if x <= 0:
                        break
                    base = x ** (n + 1) / mpmath.factorial(n + 1)
                    down = base * mpmath.hyp1f1(n + 1, n + 2, -half * x)
                    up = base * mpmath.hyp1f1(n + 1, n + 2, half * x)
                    term = mpmath.exp(top / 2) * down - mpmath.exp(t - top / 2) * up
                    acc += (-1) ** j * mpmath.binomial(m, j) * term
                total += w * acc
        return +total


def test_closed_form_matches_one_and_two_fold_quadrature() -> None:
    """The oracle itself: k = 1 against the textbook 1 - exp((e - eps) / 2) and a 1-D
    quadrature; k = 2 against a quadrature of the k = 1 profile over one coordinate's loss
    (split at its kinks); the k-fold total mass (delta(e) = 1 - e^e below -k eps)."""
    b, eps = 10.0, mpmath.mpf(1) / 10
    assert laplace_profile(0.05, 1, b) == pytest.approx(1 - math.exp((0.05 - 0.1) / 2), rel=1e-14)

    def loss(x: mpmath.mpf) -> mpmath.mpf:
        return (abs(x - 1) - abs(x)) / b

    def density(x: mpmath.mpf) -> mpmath.mpf:
        return mpmath.exp(-abs(x) / b) / (2 * b)

    t = mpmath.mpf("-0.05")
    kink = (1 - b * t) / 2
    quad = mpmath.quad(
        lambda x: max(0, 1 - mpmath.exp(t - loss(x))) * density(x),
        [-mpmath.inf, 0, kink, 1, mpmath.inf],
    )
    assert laplace_profile(t, 1, b) == pytest.approx(float(quad), rel=1e-12)
    e = mpmath.mpf("0.13")
    k_in = mpmath.exp(-eps / 2) / 4
    two = (
        laplace_profile(e - eps, 1, b) / 2
        + mpmath.exp(-eps) / 2 * laplace_profile(e + eps, 1, b)
        + mpmath.quad(
            lambda lo: k_in * mpmath.exp(lo / 2) * laplace_profile(e - lo, 1, b),
            [-eps, e - eps, eps],
        )
    )
    assert laplace_profile(e, 2, b) == pytest.approx(float(two), rel=1e-12)
    assert laplace_profile(-0.8, 5, b) == pytest.approx(1 - math.exp(-0.8), rel=1e-14)


def test_twenty_laplace_certified_interval_holds_the_closed_form() -> None:
    """20-fold Laplace(2) (eps 0.5 each): both certified profile bounds bracket the closed
    form from the bulk to delta ~ 1e-12, where the tilted transform decides the upper tail."""
    d = pld.laplace(2.0, value_discretization=1e-3).self_compose(20)
    for e in (0.5, 2.0, 4.0, 6.0, 8.0):
        exact = float(laplace_profile(e, 20, 2.0))
        lo, hi = d.delta_bounds(e)
        assert lo <= exact <= hi
        assert hi - lo <= 2e-3 * exact + 1e-16


def test_tilting_makes_the_rounding_term_vanish_in_the_tail() -> None:
    """Issue 19 part 3: the FFT rounding mass (about 4% of delta at 1e-10 for 100 Laplace)
    sat at +inf; with the tilted transform it sits below the cut, and the profile above it
    carries only the tilted per-entry errors."""
    base = pld.laplace(10.0, value_discretization=1e-3)
    d = base.self_compose(100).remove.refined()
    # nothing is left at +inf but the windows' tails (the inputs' split rounding sits at
    # their top grid point, pld/atoms.py)
    assert base.remove.upper.inf_mass == 0 and d.upper.inf_mass < 1e-25
    low = d.lower
    assert low.cut is not None and low.cut * low.h < 5.0
    assert low.err_from_cut < 0.05 * low.err


@pytest.mark.slow
def test_hundred_laplace_at_1e_minus_10_against_the_closed_form() -> None:
    """The reference value is the root of the closed form (checked here at 40 digits), and the
    certified bounds at delta 1e-10 bracket it: profile(upper) <= 1e-10 <= profile(lower)."""
    assert laplace_profile(EXACT_100_LAPLACE_1E_10, 100, 10.0) == pytest.approx(1e-10, rel=1e-12)
    lo, hi = pld.laplace(10.0, value_discretization=1e-3).self_compose(100).epsilon_bounds(1e-10)
    assert laplace_profile(hi, 100, 10.0) <= 1e-10 <= laplace_profile(lo, 100, 10.0)


def _exact_power(masses: np.ndarray, count: int) -> list[Fraction]:
    """The exact count-fold convolution of float masses, in rationals."""
    x = [Fraction(float(v)) for v in masses]
    out = [Fraction(1)]
    for _ in range(count):
        nxt = [Fraction(0)] * (len(out) + len(x) - 1)
        for i, a in enumerate(out):
            if a:
                for j, b in enumerate(x):
                    nxt[i + j] += a * b
        out = nxt
    return out


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.floats(1e-12, 1.0), min_size=3, max_size=12),
    st.integers(2, 5),
    st.integers(-20, 20),
    st.floats(0.05, 3.0),
)
def test_tilted_entries_bound_the_exact_convolution(
    raw: list[float], count: int, offset: int, t: float
) -> None:
    """Every tilted entry's certified upper bound is at least the exact (rational) mass, and
    the two-sided error of the untilted values from a cut on is within its bound, for any
    tilt, measure and count.  (The window is the whole support, so nothing folds: no alias
    and no tail.)"""
    masses = np.array(raw) / sum(raw)
    exact = _exact_power(masses, count)
    lo = count * offset
    window = (lo, lo + len(exact) - 1)
    # the drawn tilt, not choose_tilt's: the bounds must hold for every t
    x, k, r_in = tilt._tilt(masses, offset, t)
    vals, start, _, linf = fft.self_convolve_bins(x, offset, count, window)
    grow = math.exp(count * r_in / (1 - r_in) * (1 + 1e-6)) * (1 + 4 * fft.UNIT_ROUNDOFF)
    scale_err = 2 * fft.UNIT_ROUNDOFF * abs(count * k)
    tl = tilt.Tilted(t, start, vals[: len(exact)], count * k, linf, grow, 0.0, 0.0, scale_err)
    upper = tl.upper_masses(start)
    for j, u in enumerate(upper):
        assert Fraction(float(u)) >= exact[start - lo + j]
    cut = start + len(exact) // 2
    values, err = tilt._two_sided(tl, cut)
    dist = sum(abs(Fraction(float(v)) - exact[cut - lo + i]) for i, v in enumerate(values))
    assert dist <= Fraction(err)


@settings(max_examples=6, deadline=None)
@given(st.floats(1.0, 20.0), st.integers(2, 6), st.floats(0.0, 1.0))
def test_tilted_and_untilted_intervals_both_hold_the_closed_form(
    b: float, k: int, where: float
) -> None:
    """The certified profile interval of k-fold Laplace(b) holds the closed form with the
    default tilting, with the tilt forced everywhere (no threshold, the cut as low as the
    tilted window allows: every entry's bound is exercised, not only tail ones) and with no
    tilt at all; the default interval is no wider than the untilted one (up to the cut's
    share of the rounding mass)."""
    e = where * k / b
    exact = float(laplace_profile(e, k, b, dps=30))
    base = pld.laplace(b, value_discretization=1e-3)
    default = base.self_compose(k).delta_bounds(e)
    saved = (tilt.TILT_ABOVE, tilt.CUT_SHARE)
    try:
        tilt.TILT_ABOVE, tilt.CUT_SHARE = 0.0, 1e30
        forced = base.self_compose(k).remove.refined()
        forced_bounds = (forced.lower.delta(e), forced.upper.delta(e))
        tilt.TILT_ABOVE = math.inf
        plain = base.self_compose(k).delta_bounds(e)
    finally:
        tilt.TILT_ABOVE, tilt.CUT_SHARE = saved
    for lo, hi in (default, forced_bounds, plain):
        assert lo <= exact <= hi
    assert default[1] - default[0] <= (plain[1] - plain[0]) * 1.01 + 1e-15


def test_refinement_is_lazy_and_never_loosens() -> None:
    """The tilted transform runs only for a query it can move (delta within 1e4 times the
    rounding mass), is computed once, and the returned bounds are the tighter of the
    untilted and the refined ones; compositions use the untilted discretisations."""
    d = pld.laplace(10.0, value_discretization=1e-3).self_compose(100).remove
    assert d.pending is not None and "_refined" not in d.__dict__
    d.epsilon_bounds(1e-5)
    assert "_refined" not in d.__dict__
    lo, hi = d.epsilon_bounds(1e-10)
    assert "_refined" in d.__dict__ and d.refined() is d.refined()
    plain = (d.lower.epsilon(1e-10), d.upper.epsilon(1e-10))
    assert plain[0] <= lo <= hi <= plain[1] and hi < plain[1] * (1 - 5e-4)
    twice = d.compose(d)
    assert twice.pending is not None and "_refined" not in d.refined().__dict__


def test_gaussian_composition_certified_where_the_untilted_gives_up() -> None:
    """50-fold Gaussian(sigma 5) is the Gaussian mechanism with mu = sqrt(50) / 5, whose
    profile is Phi(-e / mu + mu / 2) - e^e Phi(-e / mu - mu / 2) (Balle and Wang 2018,
    Theorem 8).  Its window edge has a certified tilt (the path other than Laplace's bounded
    support).  At delta 1e-12 the untilted rounding mass (about 4e-12) exceeds delta, so the
    untilted upper bound is infinite; the refined interval holds the exact epsilon and is
    within 0.01%."""
    mu = math.sqrt(50) / 5

    def profile(e: float) -> float:
        e = mpmath.mpf(e)
        return float(mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2))

    d = pld.gaussian(5.0, value_discretization=1e-3).self_compose(50).remove
    assert d.upper.epsilon(1e-12) == math.inf
    lo, hi = d.epsilon_bounds(1e-12)
    assert profile(hi) <= 1e-12 <= profile(lo)
    assert hi - lo <= 1e-4 * hi
