"""Unit tests of mechanisms.discrete: API, validation, exactness of the integer paths.

The distributional checks live in test_sampler_distributions.py.
"""

from __future__ import annotations

import decimal
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

from mechanisms.discrete import (
    _bernoulli_fraction_batch,
    as_fraction,
    discrete_gaussian_normalizer,
    discrete_gaussian_pmf,
    discrete_laplace_pmf,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)


class _ScriptedRng:
    """Stands in for a Generator: returns scripted values from ``integers``."""

    def __init__(self, values: list[int]) -> None:
        self.values = list(values)
        self.calls: list[tuple[int, int, object]] = []

    def integers(self, low, high, size=None, dtype=np.int64):
        self.calls.append((low, high, size))
        if size is None:
            return self.values.pop(0)
        return np.array([self.values.pop(0) for _ in range(size)], dtype=dtype)


class _FloatFreeRng:
    """Wraps a Generator and fails the test if anything but ``integers`` is used."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def integers(self, *args, **kwargs):
        return self._rng.integers(*args, **kwargs)

    def __getattr__(self, name):
        raise AssertionError(f"sampler used rng.{name}; only rng.integers is allowed")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, Fraction(3)),
        (Fraction(2, 7), Fraction(2, 7)),
        ("0.1", Fraction(1, 10)),
        (0.1, Fraction(3602879701896397, 36028797018963968)),
        (sympy.Rational(1, 3), Fraction(1, 3)),
        (np.int64(5), Fraction(5)),
        (decimal.Decimal("2.5"), Fraction(5, 2)),
    ],
)
def test_as_fraction_is_exact(value, expected):
    assert as_fraction(value, "scale") == expected


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "abc"])
def test_as_fraction_rejects_non_numbers(bad):
    with pytest.raises(ValueError, match="scale must be a finite rational number"):
        as_fraction(bad, "scale")


@pytest.mark.parametrize("bad", [True, None, [1], 1j])
def test_as_fraction_rejects_wrong_types(bad):
    with pytest.raises(ValueError, match=r"scale must be .*, got"):
        as_fraction(bad, "scale")


@pytest.mark.parametrize("bad", [0, -1, "-0.5", 2**50 + 1])
def test_laplace_scale_range_is_validated(bad):
    with pytest.raises(ValueError, match=r"scale must be in the range \(0, 1125899906842624\]"):
        sample_discrete_laplace(bad, np.random.default_rng(0))


@pytest.mark.parametrize("bad", [0, -2, Fraction(-1, 3), 2**100 + 1])
def test_gaussian_sigma_squared_range_is_validated(bad):
    with pytest.raises(ValueError, match=r"sigma_squared must be in the range \(0, .*got"):
        sample_discrete_gaussian(bad, np.random.default_rng(0))


def test_bernoulli_gamma_must_be_non_negative():
    with pytest.raises(ValueError, match=r"gamma must be in the range \[0, inf\), got -1"):
        sample_bernoulli_exp(-1, np.random.default_rng(0))


def test_error_message_names_value_received():
    with pytest.raises(ValueError, match=r"got -0\.25"):
        sample_discrete_laplace(-0.25, np.random.default_rng(0))


def test_scalar_and_batch_return_types():
    rng = np.random.default_rng(1)
    assert type(sample_discrete_laplace(2, rng)) is int
    assert type(sample_discrete_gaussian(2, rng)) is int
    assert type(sample_bernoulli_exp(1, rng)) is bool
    batch = sample_discrete_laplace(2, rng, size=(3, 4))
    assert batch.shape == (3, 4) and batch.dtype == np.int64
    assert sample_discrete_gaussian(2, rng, size=7).shape == (7,)
    assert sample_discrete_gaussian(2, rng, size=0).shape == (0,)
    assert sample_bernoulli_exp(1, rng, size=5).dtype == bool


@pytest.mark.parametrize(
    "draw",
    [
        lambda rng: sample_discrete_laplace(0.7, rng, size=1000),
        lambda rng: sample_discrete_gaussian(2.3, rng, size=1000),
        lambda rng: sample_bernoulli_exp(Fraction(2**70 + 1, 2**69), rng, size=1000),
        lambda rng: sample_discrete_laplace(Fraction(2**62 + 1, 2**61), rng, size=20),
    ],
)
def test_only_integer_randomness_is_used(draw):
    draw(_FloatFreeRng(3))


def test_same_seed_same_samples():
    a = sample_discrete_gaussian("4.5", np.random.default_rng(9), size=100)
    b = sample_discrete_gaussian("4.5", np.random.default_rng(9), size=100)
    np.testing.assert_array_equal(a, b)


def test_decimal_string_and_float_are_different_parameters():
    """'0.1' is exactly 1/10; 0.1 is the nearest double.  Both are accepted exactly."""
    assert as_fraction("0.1", "scale") != as_fraction(0.1, "scale")


def test_big_denominator_bernoulli_resolves_ties_exactly():
    """The 2**-60-rare tie branch of the >62-bit Bernoulli, driven by a scripted rng."""
    den = 2**70 + 5
    r = den.bit_length() - 62
    num = 3 * 2**r + 7  # top part 3, low part 7
    # top part 3 ties with num's top part; low bits 6 < 7 -> U < num -> True.
    rng = _ScriptedRng([3, 6])
    assert _bernoulli_fraction_batch(np.array([num], dtype=object), den, rng)[0]
    # top part 3 ties; low bits 7 -> U == num -> False.
    rng = _ScriptedRng([3, 7])
    assert not _bernoulli_fraction_batch(np.array([num], dtype=object), den, rng)[0]
    # top part equals den's top part and low bits push U >= den: the element restarts
    # with a fresh uniform draw on {0..den-1}: three 32-bit words, scripted as 0 < num.
    d_hi = den >> r
    rng = _ScriptedRng([d_hi, (den & (2**r - 1)) + 1, 0, 0, 0])
    assert _bernoulli_fraction_batch(np.array([num], dtype=object), den, rng)[0]
    assert rng.values == [] and rng.calls[-1] == (0, 2**32, 3)


def test_bernoulli_exp_extremes():
    rng = np.random.default_rng(4)
    assert sample_bernoulli_exp(0, rng, size=1000).all()
    assert not sample_bernoulli_exp(200, rng, size=1000).any()


@pytest.mark.parametrize("scale", [Fraction(1, 3), 1, "2.5", 40])
def test_laplace_pmf_sums_to_one(scale):
    with mpmath.workdps(40):
        total = sum(discrete_laplace_pmf(x, scale, dps=40) for x in range(-4000, 4001))
    assert abs(total - 1) < mpmath.mpf("1e-30")


@pytest.mark.parametrize("sigma_squared", [Fraction(1, 10), Fraction(1, 3), 1, 2.3, 200])
def test_gaussian_normalizer_matches_direct_sum(sigma_squared):
    s2 = mpmath.mpf(Fraction(sigma_squared).numerator) / Fraction(sigma_squared).denominator
    with mpmath.workdps(40):
        direct = mpmath.nsum(lambda y: mpmath.exp(-(y**2) / (2 * s2)), [-mpmath.inf, mpmath.inf])
    assert abs(discrete_gaussian_normalizer(sigma_squared, dps=40) / direct - 1) < 1e-30
    assert discrete_gaussian_pmf(3, sigma_squared) == discrete_gaussian_pmf(-3, sigma_squared)


def test_sample_moments_match_sigma_squared_for_large_sigma():
    """For sigma >= 1 the variance of N_Z(0, sigma^2) is sigma^2 up to e^{-2 pi^2 sigma^2}."""
    x = sample_discrete_gaussian(10**6, np.random.default_rng(5), size=200_000)
    se = 10**6 * np.sqrt(2 / x.size)
    assert abs(x.var() - 10**6) < 5 * se
