"""The snapping mechanism's ingredients (mechanisms.floating_point): U*, Lambda, the grid."""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest

from dpaudit.audit.float_bits import granularity
from mechanisms.floating_point import BrokenFloat32ClampedSum, exact_uniform, snap

#: Draws and per-test level of the distribution check (10 binades, Bonferroni: 0.01 overall).
DRAWS = 200_000
LEVEL = 0.001


def _binade_pvalues(u: np.ndarray) -> list[float]:
    return [binomtest(int((u < 2.0**-k).sum()), len(u), 2.0**-k).pvalue for k in range(1, 11)]


def test_exact_uniform_has_uniform_binades():
    """P[U* < 2^-k] = 2^-k for k = 1..10: exact binomial tests, 2 x 10^5 draws, each at
    level 0.001 (0.01 for the ten). Fails on a broken sampler: U^1.05 is rejected."""
    rng = np.random.default_rng(11)
    u = exact_uniform(DRAWS, rng)
    assert ((u > 0) & (u <= 1)).all()
    assert min(_binade_pvalues(u)) > LEVEL
    assert min(_binade_pvalues(rng.random(DRAWS) ** 1.05)) < LEVEL


def test_exact_uniform_reaches_doubles_finer_than_two_to_minus_53():
    """Closed form: a uniform real in [2^-11, 2^-10) rounded to the nearest double is a
    multiple of 2^-63 and almost never of 2^-53, unlike rng.random (multiples of 2^-53 only,
    the grid Mironov's proof does not cover)."""
    rng = np.random.default_rng(12)
    u = exact_uniform(DRAWS, rng)
    small = u[(u >= 2.0**-11) & (u < 2.0**-10)]
    assert len(small) > 50 and (granularity(small) >= -63).all()
    assert (granularity(small) < -53).mean() > 0.99
    coarse = rng.random(DRAWS)
    coarse = coarse[(coarse >= 2.0**-11) & (coarse < 2.0**-10)]
    assert (granularity(coarse) >= -53).all()


def test_snapped_outputs_lie_on_the_lambda_grid_or_the_bound():
    """Closed form: Lambda is the smallest power of two >= the scale (10.000... -> 16), every
    output is a multiple of Lambda in [-B, B] or +-B."""
    rng = np.random.default_rng(13)
    out = snap(0.3, 10.0 * (1 + 2.0**-49 * 100), 100.0, 50_000, rng)
    assert (np.abs(out) <= 100).all()
    on_grid = np.mod(out, 16.0) == 0
    assert (on_grid | (np.abs(out) == 100)).all() and (np.abs(out) == 100).any()
    assert not (np.mod(out, 32.0) == 0).all()  # Lambda is 16, not coarser
    exact = snap(0.3, 8.0, 100.0, 1000, rng)  # a power of two: Lambda = 8 itself
    assert ((np.mod(exact, 8.0) == 0) | (np.abs(exact) == 100)).all()


def test_float32_sum_pair_closed_form():
    m = BrokenFloat32ClampedSum()
    d0, d1 = m.pairs[0].d0, m.pairs[0].d1
    assert len(d0) == len(d1) + 1 and abs(np.sum(d0, dtype=np.float64) - np.sum(d1)) == 1.0
    assert (m.query(d0), m.query(d1)) == (2050.0, 2048.0)  # float32: 2048 + 2, 2047 + 1
