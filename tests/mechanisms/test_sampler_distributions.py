"""Every primitive sampler against its exact distribution.

Design (STYLE.md, "Statistical tests are designed, not hoped for"):

* ``ALPHA`` is the significance level of every goodness-of-fit test and ``N`` the sample
  size; both are named here and nowhere else.  A correct sampler fails a given seed
  with probability ``ALPHA``; seeds are fixed, so CI is deterministic.
* Each acceptance test has a companion that runs the *same* test on the same sampler
  with its scale (or epsilon) ``WRONG_FACTOR`` off in each direction and requires a
  rejection at ``ALPHA``.  A test that cannot fail proves nothing.
* Discrete outputs: Pearson chi-square against exact (mpmath / closed-form) pmfs with
  every bin expected >= 5.  Continuous outputs: one-sample Kolmogorov-Smirnov against
  the exact CDF.  Bernoulli outputs: exact binomial test.
"""

from __future__ import annotations

import zlib
from fractions import Fraction
from functools import cache, lru_cache

import numpy as np
import pytest
from _gof import binomial_pvalue, integer_pvalue

from mechanisms.discrete import (
    _discrete_gaussian_scalar,
    _discrete_laplace_scalar,
    discrete_gaussian_pmf,
    discrete_laplace_pmf,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

ALPHA = 1e-3
N = 20_000
N_SCALAR = 3_000  # the pure-Python reference path is ~100x slower
WRONG_FACTORS = (Fraction(7, 10), Fraction(13, 10))  # scale 30% too small / too large
SEED = 20_200_401


def _rng(*key: object) -> np.random.Generator:
    """A generator seeded from SEED and the test's parameters (stable across runs)."""
    return np.random.default_rng([SEED, *(zlib.crc32(str(k).encode()) for k in key)])


# --------------------------------------------------------------------------------------
# Exact discrete samplers (mechanisms.discrete)
# --------------------------------------------------------------------------------------

LAPLACE_SCALES = [Fraction(1, 2), 1, 3, "2.5", 0.7, 10]
GAUSSIAN_SIGMA_SQUARED = [Fraction(1, 3), 1, 4, 2.3, "12.5", 50]
BERNOULLI_GAMMAS = [Fraction(1, 3), 1, "2.5", 0.1, Fraction(2**70 + 1, 2**69)]


@cache
def _laplace_pmf(scale: object):
    return lru_cache(maxsize=None)(lambda x: discrete_laplace_pmf(x, scale))


@cache
def _gaussian_pmf(sigma_squared: object):
    return lru_cache(maxsize=None)(lambda x: discrete_gaussian_pmf(x, sigma_squared))


@pytest.mark.parametrize("scale", LAPLACE_SCALES)
def test_discrete_laplace_matches_pmf(scale):
    samples = sample_discrete_laplace(scale, _rng("dlap", scale), size=N)
    assert integer_pvalue(samples, _laplace_pmf(scale)) > ALPHA


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize("scale", LAPLACE_SCALES)
def test_discrete_laplace_test_rejects_wrong_scale(scale, factor):
    wrong = Fraction(scale) * factor
    samples = sample_discrete_laplace(wrong, _rng("dlap-wrong", scale, factor), size=N)
    assert integer_pvalue(samples, _laplace_pmf(scale)) < ALPHA


@pytest.mark.parametrize("sigma_squared", GAUSSIAN_SIGMA_SQUARED)
def test_discrete_gaussian_matches_pmf(sigma_squared):
    samples = sample_discrete_gaussian(sigma_squared, _rng("dgau", sigma_squared), size=N)
    assert integer_pvalue(samples, _gaussian_pmf(sigma_squared)) > ALPHA


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize("sigma_squared", GAUSSIAN_SIGMA_SQUARED)
def test_discrete_gaussian_test_rejects_wrong_scale(sigma_squared, factor):
    wrong = Fraction(sigma_squared) * factor**2  # the scale is sigma
    rng = _rng("dgau-wrong", sigma_squared, factor)
    samples = sample_discrete_gaussian(wrong, rng, size=N)
    assert integer_pvalue(samples, _gaussian_pmf(sigma_squared)) < ALPHA


@pytest.mark.parametrize("gamma", BERNOULLI_GAMMAS)
def test_bernoulli_exp_matches_probability(gamma):
    hits = sample_bernoulli_exp(gamma, _rng("bexp", gamma), size=N).sum()
    assert binomial_pvalue(hits, N, np.exp(-float(Fraction(gamma)))) > ALPHA


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize("gamma", BERNOULLI_GAMMAS)
def test_bernoulli_exp_test_rejects_wrong_gamma(gamma, factor):
    wrong = Fraction(gamma) * factor
    hits = sample_bernoulli_exp(wrong, _rng("bexp-wrong", gamma, factor), size=N).sum()
    assert binomial_pvalue(hits, N, np.exp(-float(Fraction(gamma)))) < ALPHA


def test_discrete_laplace_huge_numerator_uses_exact_scalar_path():
    """A scale with a numerator >= 2**61 runs the Python-integer path (Algorithm 2)."""
    scale = Fraction(2**62 + 1, 2**61)  # just above 2
    samples = sample_discrete_laplace(scale, _rng("dlap-big"), size=N_SCALAR)
    assert integer_pvalue(samples, _laplace_pmf(scale)) > ALPHA
    wrong = sample_discrete_laplace(scale * Fraction(13, 10), _rng("dlap-big-w"), size=N_SCALAR)
    assert integer_pvalue(wrong, _laplace_pmf(scale)) < ALPHA


@pytest.mark.parametrize("sigma_squared", [Fraction(1, 3), Fraction(9, 2)])
def test_scalar_reference_gaussian_matches_pmf(sigma_squared):
    rng = _rng("dgau-scalar", sigma_squared)
    samples = np.array([_discrete_gaussian_scalar(sigma_squared, rng) for _ in range(N_SCALAR)])
    assert integer_pvalue(samples, _gaussian_pmf(sigma_squared)) > ALPHA
    wrong_s2 = sigma_squared * Fraction(169, 100)
    wrong = np.array([_discrete_gaussian_scalar(wrong_s2, rng) for _ in range(N_SCALAR)])
    assert integer_pvalue(wrong, _gaussian_pmf(sigma_squared)) < ALPHA


def test_scalar_reference_laplace_matches_pmf():
    rng = _rng("dlap-scalar")
    samples = np.array([_discrete_laplace_scalar(5, 2, rng) for _ in range(N_SCALAR)])
    assert integer_pvalue(samples, _laplace_pmf(Fraction(5, 2))) > ALPHA
    wrong = np.array([_discrete_laplace_scalar(13, 4, rng) for _ in range(N_SCALAR)])
    assert integer_pvalue(wrong, _laplace_pmf(Fraction(5, 2))) < ALPHA


@pytest.mark.slow
def test_discrete_samplers_false_alarm_rate_is_alpha():
    """Over many seeds, the acceptance test rejects a correct sampler about ALPHA often.

    The goodness-of-fit test's own p-values over 200 seeds must look uniform (KS at
    ALPHA), so that ALPHA really is the false-alarm rate of the acceptance tests.
    """
    from scipy import stats

    pvalues = [
        integer_pvalue(
            sample_discrete_gaussian(2.3, np.random.default_rng([SEED, i]), size=N),
            _gaussian_pmf(2.3),
        )
        for i in range(200)
    ]
    assert stats.kstest(pvalues, "uniform").pvalue > ALPHA
