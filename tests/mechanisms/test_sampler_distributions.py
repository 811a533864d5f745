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

import math
import zlib
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache, lru_cache

import numpy as np
import pytest
from _gof import binomial_pvalue, categorical_pvalue, integer_pvalue, ks_pvalue
from scipy import integrate, stats

from mechanisms.discrete import (
    _discrete_gaussian_scalar,
    _discrete_laplace_scalar,
    discrete_gaussian_pmf,
    discrete_laplace_pmf,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from mechanisms.primitives import (
    AboveThresholdMechanism,
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponseMechanism,
    ReportNoisyMaxMechanism,
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


# --------------------------------------------------------------------------------------
# Primitive mechanisms (mechanisms.primitives)
#
# "Wrong" variants are the same class constructed with the noise scale multiplied by a
# factor in WRONG_FACTORS (for epsilon-parametrised mechanisms: epsilon divided by it, as
# their noise scale or temperature is proportional to 1/epsilon); the samples are then
# tested against the *nominal* exact distribution and must be rejected.
# --------------------------------------------------------------------------------------

CONTINUOUS_CASES = [
    # (mechanism class, parameter, sensitivity, released value)
    (LaplaceMechanism, 1.0, 1, 0.0),
    (LaplaceMechanism, 2.5, 3, -4.0),
    (LaplaceMechanism, Fraction(1, 3), 1, 10.0),
    (GaussianMechanism, 1.0, 1, 0.0),
    (GaussianMechanism, 4.0, 2, 7.5),
]


def _continuous_cdf(cls, param, value) -> Callable[[np.ndarray], np.ndarray]:
    if cls is LaplaceMechanism:
        return stats.laplace(loc=value, scale=float(param)).cdf
    return stats.norm(loc=value, scale=float(param)).cdf


@pytest.mark.parametrize(("cls", "param", "sensitivity", "value"), CONTINUOUS_CASES)
def test_continuous_mechanism_matches_cdf(cls, param, sensitivity, value):
    mech = cls(param, sensitivity)
    samples = mech.release(value, _rng(cls.__name__, param, value), size=N)
    assert samples.shape == (N,)
    assert ks_pvalue(samples, _continuous_cdf(cls, param, value)) > ALPHA


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize(("cls", "param", "sensitivity", "value"), CONTINUOUS_CASES)
def test_continuous_test_rejects_wrong_scale(cls, param, sensitivity, value, factor):
    wrong = cls(Fraction(param) * factor, sensitivity)
    samples = wrong.release(value, _rng(cls.__name__, "wrong", param, factor), size=N)
    assert ks_pvalue(samples, _continuous_cdf(cls, param, value)) < ALPHA


def test_continuous_vector_release_has_independent_coordinates():
    """A vector query gets i.i.d. noise per coordinate (checked on the pooled residuals)."""
    value = np.array([1.0, -2.0, 30.0])
    out = LaplaceMechanism(2).release(value, _rng("lap-vec"), size=N // 3)
    assert out.shape == (N // 3, 3)
    residuals = out - value
    assert ks_pvalue(residuals.ravel(), stats.laplace(scale=2).cdf) > ALPHA
    assert abs(np.corrcoef(residuals, rowvar=False)[0, 1]) < 4 / math.sqrt(N // 3)


DISCRETE_MECHANISM_CASES = [
    # (mechanism class, parameter as the class takes it, released integer value)
    (DiscreteLaplaceMechanism, Fraction(1, 2), 0),
    (DiscreteLaplaceMechanism, "2.5", 7),
    (DiscreteLaplaceMechanism, 4, -3),
    (DiscreteGaussianMechanism, "0.6", 0),
    (DiscreteGaussianMechanism, "1.5", 5),
    (DiscreteGaussianMechanism, 3, -2),
]


def _discrete_pmf(cls, param):
    if cls is DiscreteLaplaceMechanism:
        return _laplace_pmf(Fraction(param))
    return _gaussian_pmf(Fraction(param) ** 2)  # the class takes sigma


@pytest.mark.parametrize(("cls", "param", "value"), DISCRETE_MECHANISM_CASES)
def test_discrete_mechanism_matches_pmf(cls, param, value):
    samples = cls(param).release(value, _rng(cls.__name__, param), size=N)
    assert samples.dtype.kind == "i"
    assert integer_pvalue(samples - value, _discrete_pmf(cls, param)) > ALPHA


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize(("cls", "param", "value"), DISCRETE_MECHANISM_CASES)
def test_discrete_mechanism_test_rejects_wrong_scale(cls, param, value, factor):
    wrong = cls(Fraction(param) * factor)
    samples = wrong.release(value, _rng(cls.__name__, "wrong", param, factor), size=N)
    assert integer_pvalue(samples - value, _discrete_pmf(cls, param)) < ALPHA


# Exponential mechanism: P(r) proportional to exp(eps u_r / (2 Delta)), or
# exp(eps u_r / Delta) when monotone (dpaudit.events.Exponential).
EXPONENTIAL_CASES = [
    # (epsilon, sensitivity, monotone, scores)
    (1.0, 1, False, [0.0, 1.0, 2.0, 3.0]),
    (2.0, 3, False, [5.0, -1.0, 4.0, 4.0, 0.5]),
    (0.5, 1, True, [0.0, 2.0, 1.0]),
]


def _softmax(scores: Sequence[float], inverse_temperature: float) -> dict[int, float]:
    w = np.exp(inverse_temperature * (np.asarray(scores) - max(scores)))
    return dict(enumerate(w / w.sum()))


def _exponential_probs(epsilon, sensitivity, monotone, scores) -> dict[int, float]:
    return _softmax(scores, float(epsilon) / ((1 if monotone else 2) * sensitivity))


@pytest.mark.parametrize(("epsilon", "sensitivity", "monotone", "scores"), EXPONENTIAL_CASES)
def test_exponential_mechanism_matches_softmax(epsilon, sensitivity, monotone, scores):
    mech = ExponentialMechanism(epsilon, sensitivity, monotone)
    picks = mech.select(scores, _rng("em", epsilon, scores), size=N)
    probs = _exponential_probs(epsilon, sensitivity, monotone, scores)
    assert categorical_pvalue(picks.tolist(), probs) > ALPHA
    exact = [float(p) for p in mech.probabilities(scores)]
    np.testing.assert_allclose(exact, list(probs.values()), rtol=1e-12)


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize(("epsilon", "sensitivity", "monotone", "scores"), EXPONENTIAL_CASES)
def test_exponential_test_rejects_wrong_temperature(epsilon, sensitivity, monotone, scores, factor):
    wrong = ExponentialMechanism(Fraction(epsilon) / factor, sensitivity, monotone)
    picks = wrong.select(scores, _rng("em-wrong", epsilon, scores, factor), size=N)
    probs = _exponential_probs(epsilon, sensitivity, monotone, scores)
    assert categorical_pvalue(picks.tolist(), probs) < ALPHA


# Randomized response: true category w.p. e^eps / (e^eps + k - 1), each other 1 / (...).
RR_CASES = [(1.0, 2, 0), (1.0, 2, 1), (0.5, 4, 2), (2.0, 5, 0)]


def _rr_probs(epsilon: float, k: int, value: int) -> dict[int, float]:
    e = math.exp(float(epsilon))
    return {y: (e if y == value else 1.0) / (e + k - 1) for y in range(k)}


@pytest.mark.parametrize(("epsilon", "k", "value"), RR_CASES)
def test_randomized_response_matches_distribution(epsilon, k, value):
    mech = RandomizedResponseMechanism(epsilon, k)
    out = mech.respond(value, _rng("rr", epsilon, k, value), size=N)
    assert categorical_pvalue(out.tolist(), _rr_probs(epsilon, k, value)) > ALPHA
    exact = [float(p) for p in mech.probabilities(value)]
    np.testing.assert_allclose(exact, list(_rr_probs(epsilon, k, value).values()), rtol=1e-12)


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize(("epsilon", "k", "value"), RR_CASES)
def test_randomized_response_test_rejects_wrong_epsilon(epsilon, k, value, factor):
    wrong = RandomizedResponseMechanism(Fraction(epsilon) / factor, k)
    out = wrong.respond(value, _rng("rr-wrong", epsilon, k, value, factor), size=N)
    assert categorical_pvalue(out.tolist(), _rr_probs(epsilon, k, value)) < ALPHA


# Report noisy max: argmax_i (s_i + Z_i), Z_i i.i.d. with scale 2 Delta / eps (Delta / eps
# if monotone).  Gumbel noise: softmax in closed form.  Laplace and exponential noise:
# P(i) = int pdf(x - s_i) prod_{j != i} cdf(x - s_j) dx, by adaptive quadrature split at
# the kinks (absolute error < 1e-12, far below the 1/sqrt(N) resolution of the test).
RNM_NOISES = ("gumbel", "laplace", "exponential")
RNM_CASES = [
    # (epsilon, sensitivity, monotone, scores)
    (1.0, 1, False, [0.0, 1.0, 2.0, 3.0]),
    (2.0, 1, True, [1.0, 0.0, 1.5, -1.0, 0.5]),
]


def _noise_pdf_cdf(noise: str, b: float) -> tuple[Callable, Callable]:
    if noise == "gumbel":
        return (
            lambda y: math.exp(-(y / b + math.exp(-y / b))) / b,
            lambda y: math.exp(-math.exp(-y / b)),
        )
    if noise == "laplace":
        return (
            lambda y: math.exp(-abs(y) / b) / (2 * b),
            lambda y: 0.5 * math.exp(y / b) if y < 0 else 1 - 0.5 * math.exp(-y / b),
        )
    return (
        lambda y: math.exp(-y / b) / b if y >= 0 else 0.0,
        lambda y: -math.expm1(-y / b) if y >= 0 else 0.0,
    )


def _rnm_probs(epsilon, sensitivity, monotone, noise, scores) -> dict[int, float]:
    b = (1 if monotone else 2) * sensitivity / float(epsilon)
    if noise == "gumbel":
        return _softmax(scores, 1 / b)
    pdf, cdf = _noise_pdf_cdf(noise, b)
    lo, hi = min(scores) - 60 * b, max(scores) + 60 * b
    probs = {}
    for i, si in enumerate(scores):
        others = [sj for j, sj in enumerate(scores) if j != i]

        def integrand(x, si=si, others=others):
            return pdf(x - si) * math.prod(cdf(x - sj) for sj in others)

        probs[i] = integrate.quad(
            integrand, lo, hi, points=sorted(set(scores)), limit=500, epsabs=1e-13, epsrel=1e-12
        )[0]
    return probs


def test_rnm_quadrature_reproduces_gumbel_softmax():
    """The quadrature used for Laplace / exponential noise, checked on the Gumbel case."""
    scores = [0.0, 1.0, 2.0, 3.0]
    pdf, cdf = _noise_pdf_cdf("gumbel", 2.0)
    total = 0.0
    for i, si in enumerate(scores):
        others = [s for j, s in enumerate(scores) if j != i]
        p = integrate.quad(
            lambda x, si=si, o=others: pdf(x - si) * math.prod(cdf(x - s) for s in o),
            -200,
            200,
            points=scores,
            limit=500,
        )[0]
        assert p == pytest.approx(_softmax(scores, 0.5)[i], abs=1e-10)
        total += p
    assert total == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize("noise", RNM_NOISES)
@pytest.mark.parametrize(("epsilon", "sensitivity", "monotone", "scores"), RNM_CASES)
def test_report_noisy_max_matches_distribution(epsilon, sensitivity, monotone, scores, noise):
    mech = ReportNoisyMaxMechanism(epsilon, noise, sensitivity, monotone)
    picks = mech.select(scores, _rng("rnm", noise, epsilon, scores), size=N)
    probs = _rnm_probs(epsilon, sensitivity, monotone, noise, scores)
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-9)
    assert categorical_pvalue(picks.tolist(), probs) > ALPHA


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize("noise", RNM_NOISES)
@pytest.mark.parametrize(("epsilon", "sensitivity", "monotone", "scores"), RNM_CASES)
def test_report_noisy_max_test_rejects_wrong_scale(
    epsilon, sensitivity, monotone, scores, noise, factor
):
    wrong = ReportNoisyMaxMechanism(Fraction(epsilon) / factor, noise, sensitivity, monotone)
    picks = wrong.select(scores, _rng("rnm-wrong", noise, epsilon, scores, factor), size=N)
    probs = _rnm_probs(epsilon, sensitivity, monotone, noise, scores)
    assert categorical_pvalue(picks.tolist(), probs) < ALPHA


# AboveThreshold (Lyu, Su, Li 2017, Alg. 1): noisy threshold T + rho, rho ~ Lap(Delta/eps1);
# query i answers "above" iff q_i + nu_i >= T + rho, nu_i ~ Lap(2 c Delta/eps2)
# (c Delta/eps2 if monotone); stops after c aboves.  Given rho the answers are independent,
# so P(pattern) = int f_rho(r) prod_i P(answer_i | r) dr, by quadrature split at the kinks.
AT_CASES = [
    # (epsilon, threshold, cutoff, monotone, queries)
    (1.0, 0.5, 1, False, [-1.0, 0.0, 1.0, 2.0]),
    (2.0, 0.5, 2, False, [3.0, -1.0, 2.0, 4.0, 0.0, 1.0]),
    (4.0, 1.0, 2, True, [0.0, 2.0, 1.0, 1.5]),
]


def _at_patterns(m: int, cutoff: int) -> list[tuple[bool, ...]]:
    """Every possible answer sequence for m queries and the given cutoff."""
    if m == 0 or cutoff == 0:
        return [()]
    return [(True, *rest) for rest in _at_patterns(m - 1, cutoff - 1)] + [
        (False, *rest) for rest in _at_patterns(m - 1, cutoff)
    ]


def _at_probs(epsilon, threshold, cutoff, monotone, queries) -> dict[tuple[bool, ...], float]:
    eps1 = float(epsilon) / 2  # threshold_share 1/2 (the default)
    eps2 = float(epsilon) - eps1
    b_rho = 1 / eps1
    b_nu = (1 if monotone else 2) * cutoff / eps2
    lap_pdf, lap_cdf = _noise_pdf_cdf("laplace", 1.0)
    kinks = sorted({0.0, *(q - threshold for q in queries)})
    probs = {}
    for pattern in _at_patterns(len(queries), cutoff):

        def integrand(r, pattern=pattern):
            value = lap_pdf(r / b_rho) / b_rho
            for q, above in zip(queries, pattern, strict=False):
                below = lap_cdf((threshold + r - q) / b_nu)
                value *= (1 - below) if above else below
            return value

        probs[pattern] = integrate.quad(
            integrand, -60 * b_rho, 60 * b_rho, points=kinks, limit=500, epsabs=1e-13, epsrel=1e-12
        )[0]
    return probs


def _at_batch_patterns(mech, queries, rng, n) -> list[tuple[bool, ...]]:
    rows = mech.run_batch(queries, rng, n)
    return [tuple(bool(a) for a in row if a >= 0) for row in rows]


@pytest.mark.parametrize(("epsilon", "threshold", "cutoff", "monotone", "queries"), AT_CASES)
def test_above_threshold_batch_matches_distribution(epsilon, threshold, cutoff, monotone, queries):
    mech = AboveThresholdMechanism(epsilon, threshold, cutoff=cutoff, monotone=monotone)
    patterns = _at_batch_patterns(mech, queries, _rng("at", epsilon, queries), N)
    probs = _at_probs(epsilon, threshold, cutoff, monotone, queries)
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-9)
    assert categorical_pvalue(patterns, probs) > ALPHA


@pytest.mark.parametrize("factor", WRONG_FACTORS)
@pytest.mark.parametrize(("epsilon", "threshold", "cutoff", "monotone", "queries"), AT_CASES)
def test_above_threshold_test_rejects_wrong_scale(
    epsilon, threshold, cutoff, monotone, queries, factor
):
    wrong = AboveThresholdMechanism(
        Fraction(epsilon) / factor, threshold, cutoff=cutoff, monotone=monotone
    )
    patterns = _at_batch_patterns(wrong, queries, _rng("at-wrong", epsilon, queries, factor), N)
    probs = _at_probs(epsilon, threshold, cutoff, monotone, queries)
    assert categorical_pvalue(patterns, probs) < ALPHA


@pytest.mark.parametrize(("epsilon", "threshold", "cutoff", "monotone", "queries"), AT_CASES)
def test_above_threshold_sequential_run_matches_distribution(
    epsilon, threshold, cutoff, monotone, queries
):
    """The one-run-at-a-time API (run / sessions) has the same law as run_batch."""
    mech = AboveThresholdMechanism(epsilon, threshold, cutoff=cutoff, monotone=monotone)
    rng = _rng("at-seq", epsilon, queries)
    patterns = [tuple(mech.run(queries, rng)) for _ in range(N)]
    probs = _at_probs(epsilon, threshold, cutoff, monotone, queries)
    assert categorical_pvalue(patterns, probs) > ALPHA
    wrong = AboveThresholdMechanism(
        Fraction(epsilon) / WRONG_FACTORS[0], threshold, cutoff=cutoff, monotone=monotone
    )
    wrong_patterns = [tuple(wrong.run(queries, rng)) for _ in range(N)]
    assert categorical_pvalue(wrong_patterns, probs) < ALPHA
