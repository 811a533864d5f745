"""The trade-off-curve view (dpaudit.audit.tradeoff): closed forms, certified bounds below
the truth, a broken mechanism caught, monotonicity, validation."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from _audit_mechanisms import ShiftedGaussian, coin_label
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import ndtr

from dpaudit.audit import TradeoffCurve, tradeoff_curve
from dpaudit.audit.tradeoff import gaussian_tradeoff

#: Every statistical test here: alpha = 1 - CONFIDENCE (simultaneous over all thresholds),
#: SAMPLES per dataset, fixed seeds.
CONFIDENCE = 0.95
SAMPLES = 200_000


def exact_gaussian_epsilon(mu: float, delta: float) -> float:
    """Oracle: Balle & Wang 2018, Theorem 8: delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 -
    eps/mu), solved for eps."""
    gap = lambda e: ndtr(mu / 2 - e / mu) - np.exp(e) * ndtr(-mu / 2 - e / mu) - delta  # noqa: E731
    return brentq(gap, 0.0, 50.0, xtol=1e-12)


@pytest.fixture(scope="module")
def correct() -> TradeoffCurve:
    return tradeoff_curve(ShiftedGaussian(1.0), 0.0, 1.0, samples=SAMPLES, seed=11)


def test_gaussian_tradeoff_closed_form():
    """G_mu is the exact trade-off of N(0,1) vs N(mu,1): the test x >= t has type I Phi(-t)
    and type II Phi(t - mu) (Dong, Roth & Su 2022, Definition 2.6); checked at 30 digits."""
    for mu, t in [(1.0, 0.3), (1.0, 4.0), (2.5, -1.0), (0.5, 7.0)]:
        with mpmath.workdps(30):
            a = float(mpmath.ncdf(-t))
            b = float(mpmath.ncdf(t - mu))
        assert gaussian_tradeoff(mu, a) == pytest.approx(b, rel=1e-9)
    assert gaussian_tradeoff(1.0, 0.0) == pytest.approx(1.0)
    assert gaussian_tradeoff(1.0, 1.0) == pytest.approx(0.0)


def test_certified_mu_is_below_the_true_mu(correct):
    """Gaussian sigma 1 (true GDP mu = sensitivity/sigma = 1), alpha 0.05, 2x10^5 samples per
    dataset: mu_lower <= 1, and close (>= 0.9).  Fails on the broken mechanism below."""
    assert 0.9 <= correct.mu_lower <= 1.0


def test_certified_epsilon_is_below_the_exact_epsilon(correct):
    """Same sample: epsilon_lower(delta) <= the exact Gaussian epsilon(delta) for several
    delta, and the certified curve lies on or above the exact trade-off function G_1."""
    for delta in (1e-6, 1e-5, 1e-3, 0.05, 0.3):
        lower = correct.epsilon_lower(delta)
        assert 0.0 < lower <= exact_gaussian_epsilon(1.0, delta)
    grid = np.linspace(0.0, 1.0, 201)
    assert np.all(correct.tradeoff_upper(grid) >= gaussian_tradeoff(1.0, grid) - 1e-12)


def test_noise_too_small_is_caught():
    """Broken: sigma 0.5 where sigma 1 is claimed (claimed mu = 1, true mu = 2); alpha 0.05,
    2x10^5 samples: the certified mu_lower exceeds the claim, and so does epsilon_lower."""
    broken = tradeoff_curve(ShiftedGaussian(0.5), 0.0, 1.0, samples=SAMPLES, seed=11)
    assert broken.mu_lower > 1.0
    assert broken.epsilon_lower(1e-5) > 2.0  # exact at sigma 0.5: about 8.4


def test_bands_are_ordered_and_curve_is_a_convex_envelope(correct):
    c = correct
    for lo, up in ((c.fpr_lower, c.fpr_upper), (c.fnr_lower, c.fnr_upper)):
        assert np.all(lo <= up) and np.all((lo >= 0) & (up <= 1))
    assert np.all(np.diff(c.fpr_upper) <= 0)  # thresholds sorted: x >= t shrinks
    x, y = c.curve()
    assert x[0] == 0.0 and y[0] == 1.0 and x[-1] == 1.0 and y[-1] == 0.0
    slopes = np.diff(y) / np.diff(x)
    assert np.all(np.diff(slopes) >= -1e-9)  # convex
    assert c.selection_samples == SAMPLES // 10 and c.samples == SAMPLES - SAMPLES // 10
    assert "mu lower bound" in str(c) and "Bonferroni over" in str(c)


@settings(max_examples=20)
@given(d1=st.floats(0.0, 0.9), d2=st.floats(0.0, 0.9))
def test_epsilon_lower_is_monotone_in_delta(correct, d1, d2):
    lo, hi = sorted((d1, d2))
    assert correct.epsilon_lower(hi) <= correct.epsilon_lower(lo)


def test_given_thresholds_use_every_sample_and_fix_the_bonferroni_count():
    c = tradeoff_curve(
        ShiftedGaussian(1.0), 0.0, 1.0, samples=5_000, seed=1, thresholds=[2.0, 0.5, 0.5, 1.0]
    )
    assert list(c.thresholds) == [0.5, 1.0, 2.0] and c.selection_samples == 0
    assert c.samples == 5_000 and c.level == pytest.approx(0.05 / 12)
    again = tradeoff_curve(
        ShiftedGaussian(1.0), 0.0, 1.0, samples=5_000, seed=1, thresholds=[2.0, 0.5, 1.0]
    )
    assert np.array_equal(c.fpr_upper, again.fpr_upper)  # seeded: deterministic


def test_plot_draws_on_an_axes(correct):
    ax = correct.plot(reference_mu=1.0)
    assert ax.get_xlabel().startswith("false-positive")
    assert len(ax.get_lines()) >= 3


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(samples=5), ValueError, r"samples must be an integer in \[10, 1e\+09\], got 5"),
        (dict(confidence=95), ValueError, r"confidence must be a float in \(0, 1\), got 95"),
        (dict(thresholds=[np.nan]), ValueError, "thresholds must be finite"),
        (dict(thresholds=[[1.0]]), ValueError, "thresholds must be a 1-D sequence"),
        (dict(batch_size=0), ValueError, "batch_size must be an integer >= 1, got 0"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    args = dict(samples=100) | kwargs
    with pytest.raises(error, match=match):
        tradeoff_curve(ShiftedGaussian(1.0), 0.0, 1.0, **args)


def test_non_numeric_outputs_and_bad_delta_are_refused(correct):
    with pytest.raises(ValueError, match="outputs must be single numbers"):
        tradeoff_curve(coin_label, 0, 1, samples=100, seed=0)
    with pytest.raises(TypeError, match="mechanism must be callable"):
        tradeoff_curve(3, 0, 1, samples=100)
    with pytest.raises(ValueError, match=r"delta must be a number in \[0, 1\)"):
        correct.epsilon_lower(1.0)


def _false_alarms(sigma: float, runs: int, samples: int) -> int:
    """Runs (seeds 0..runs-1) in which some certified statement about the sigma-1 Gaussian
    (true mu 1) is false: mu_lower > 1, epsilon_lower(delta) above the exact epsilon at
    delta in {1e-5, 1e-2}, or the certified curve below G_1 somewhere."""
    eps = {d: exact_gaussian_epsilon(1.0, d) for d in (1e-5, 1e-2)}
    grid = np.linspace(0.0, 1.0, 101)
    bad = 0
    for seed in range(runs):
        c = tradeoff_curve(ShiftedGaussian(sigma), 0.0, 1.0, samples=samples, seed=seed)
        wrong = (
            c.mu_lower > 1.0
            or any(c.epsilon_lower(d) > e for d, e in eps.items())
            or bool(np.any(c.tradeoff_upper(grid) < gaussian_tradeoff(1.0, grid) - 1e-12))
        )
        bad += wrong
    return bad


#: False-alarm experiment: RUNS independent curves of RUN_SAMPLES per dataset at alpha 0.05.
#: Under the null at most 5% of runs are wrong (in fact far fewer: Bonferroni is
#: conservative); P[Bin(100, 0.05) > 12] < 0.003.
RUNS, RUN_SAMPLES, MAX_ALARMS = 100, 20_000, 12


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_false_alarm_rate_is_at_most_alpha():
    """alpha 0.05, 100 runs of 2x10^4 samples per dataset: at most 12 runs with a false
    certified statement (P < 0.003 if the rate is 5%)."""
    assert _false_alarms(1.0, RUNS, RUN_SAMPLES) <= MAX_ALARMS


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_false_alarm_experiment_catches_too_little_noise():
    """The same experiment on sigma 0.8 (true mu 1.25, claimed 1): most runs alarm."""
    assert _false_alarms(0.8, 40, RUN_SAMPLES) > 30
