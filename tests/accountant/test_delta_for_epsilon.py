"""Certified delta for a given epsilon (Accountant.delta_for_epsilon) against closed forms.

Oracles, at 40 digits with mpmath:

* Laplace with eps0 = Delta/b: delta(eps) = 0 for eps >= eps0 (pure DP), and
  delta(eps) = 1 - exp((eps - eps0)/2) for 0 <= eps <= eps0 (the hockey-stick divergence of
  two Laplace laws at distance Delta).
* Gaussian (and k-fold Gaussian, mu = sqrt(k) Delta/sigma): Balle and Wang 2018, Theorem 8,
  delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).
* k-fold binary randomized response: Kairouz, Oh, Viswanath 2015, Theorem 3.3 (exact).

Each oracle must lie in [delta_lower, delta_upper]; a wrong parameter's oracle must not (the
tests can fail).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accountant import Accountant, DeltaGuarantee
from dpaudit.events import (
    Composed,
    Gaussian,
    Laplace,
    PoissonSampled,
    RandomizedResponse,
    SelfComposed,
)
from dpaudit.parse import parse_event

ACC = Accountant()


def _gaussian_delta(sigma: float, eps: float, k: int = 1) -> mpmath.mpf:
    """Balle-Wang at mu = sqrt(k)/sigma, all at 40 digits (the float sigma taken exactly)."""
    with mpmath.workdps(40):
        mu_, e = mpmath.sqrt(k) / mpmath.mpf(sigma), mpmath.mpf(eps)
        return mpmath.ncdf(mu_ / 2 - e / mu_) - mpmath.exp(e) * mpmath.ncdf(-mu_ / 2 - e / mu_)


def _laplace_delta(eps0: float, eps: float) -> mpmath.mpf:
    with mpmath.workdps(40):
        if eps >= eps0:
            return mpmath.mpf(0)
        return 1 - mpmath.exp((mpmath.mpf(eps) - eps0) / 2)


def _inside(g: DeltaGuarantee, truth: mpmath.mpf) -> bool:
    return mpmath.mpf(g.delta_lower) <= truth <= mpmath.mpf(g.delta_upper)


@pytest.mark.parametrize("scale", [Fraction(1, 2), 1, 3, 10])
def test_laplace_pure_dp_has_zero_delta_from_eps0_on(scale):
    eps0 = 1 / Fraction(scale)  # exact: a float 1/3 lies below eps0, where delta > 0
    for eps in (eps0, eps0 * 1.5, eps0 + 3):
        g = ACC.delta_for_epsilon(Laplace(scale), eps)
        assert g.delta_upper == 0.0 and g.delta_lower == 0.0
        assert g.theorem is not None and g.theorem.key == "laplace"


@settings(max_examples=12, deadline=None)
@given(scale=st.floats(0.3, 5), frac=st.floats(0.0, 0.95))
def test_laplace_below_eps0_brackets_the_closed_form(scale, frac):
    eps0 = 1 / scale
    eps = frac * eps0
    g = ACC.delta_for_epsilon(Laplace(scale), eps)
    truth = _laplace_delta(eps0, eps)
    assert _inside(g, truth), (g, truth)
    assert g.delta_upper - g.delta_lower <= 1e-4 + 1e-3 * g.delta_upper  # tight, not only sound


@settings(max_examples=15, deadline=None)
@given(sigma=st.floats(0.4, 20), eps=st.floats(0.0, 6.0))
def test_gaussian_brackets_balle_wang(sigma, eps):
    g = ACC.delta_for_epsilon(Gaussian(sigma), eps)
    truth = _gaussian_delta(sigma, eps)
    assert _inside(g, truth), (g, truth)
    assert g.delta_lower > 0 or truth < 1e-300  # the exact profile certifies a lower bound


@pytest.mark.parametrize(("sigma", "k", "eps"), [(10, 50, 2.0), (2, 4, 1.0), (30, 1000, 3.0)])
def test_composed_gaussians_bracket_balle_wang(sigma, k, eps):
    g = ACC.delta_for_epsilon(SelfComposed(Gaussian(sigma), k), eps)
    truth = _gaussian_delta(sigma, eps, k)
    assert _inside(g, truth)
    assert g.delta_upper <= float(truth) * (1 + 1e-9) + 1e-300
    # a 30% wrong noise scale is outside the certified band: the check can fail
    wrong = _gaussian_delta(sigma * 1.3, eps, k)
    assert not _inside(g, wrong)


def test_randomized_response_composition_is_exact_on_both_sides():
    k, e0, eps = 20, 0.5, 3.0
    g = ACC.delta_for_epsilon(SelfComposed(RandomizedResponse(e0), k), eps)
    with mpmath.workdps(40):
        ee, eg = mpmath.mpf(e0), mpmath.mpf(eps)
        truth = (
            sum(
                mpmath.binomial(k, i) * (mpmath.exp((k - i) * ee) - mpmath.exp(eg + i * ee))
                for i in range(k + 1)
                if (k - 2 * i) * ee > eg
            )
            / (1 + mpmath.exp(ee)) ** k
        )
    assert _inside(g, truth)
    assert g.delta_lower > 0
    assert g.delta_upper - g.delta_lower <= 1e-12


def test_laplace_composition_matches_its_exact_profile_closely():
    g = ACC.delta_for_epsilon(SelfComposed(Laplace(10), 100), 3)
    assert 0 < g.delta_lower <= g.delta_upper
    assert g.delta_upper - g.delta_lower <= 1e-3 * g.delta_upper
    assert g.theorem.key == "pld_fft" and g.lower_theorem.key == "pld_fft"


@pytest.mark.parametrize(
    ("expression", "eps"),
    [
        ("SelfComposed(Laplace(10), 100)", 3),
        ("SelfComposed(Gaussian(sigma=10), 50)", 2),
        ("SelfComposed(PoissonSampled(Gaussian(sigma=1.1), 0.01), 200)", 1.5),
        ("Composed([Laplace(2), Gaussian(sigma=3)])", 0.8),
    ],
)
def test_epsilon_for_delta_of_delta_for_epsilon_brackets_epsilon(expression, eps):
    """delta_upper(e) = d: the event is (e, d)-DP, so its true epsilon at d is <= e and the
    certified lower bound at d is too; delta_lower(e) = d': the true epsilon at d' is >= e, so
    the upper bound at d' is too."""
    event = parse_event(expression)
    g = ACC.delta_for_epsilon(event, eps)
    assert 0 < g.delta_upper < 1
    at_upper = ACC.guarantee(event, g.delta_upper)
    assert (at_upper.epsilon_lower_float or 0.0) <= eps
    assert at_upper.epsilon_upper >= eps * (1 - 1e-2)  # and close: the methods agree
    if g.delta_lower > 0:
        assert ACC.guarantee(event, g.delta_lower).epsilon_upper >= eps


@settings(max_examples=8, deadline=None)
@given(sigma=st.floats(0.5, 5), e1=st.floats(0, 4), e2=st.floats(0, 4))
def test_delta_bounds_decrease_with_epsilon(sigma, e1, e2):
    lo, hi = sorted((e1, e2))
    event = SelfComposed(Gaussian(sigma), 3)
    a, b = ACC.delta_for_epsilon(event, lo), ACC.delta_for_epsilon(event, hi)
    assert b.delta_lower <= a.delta_upper  # true delta(hi) <= true delta(lo)


def test_subsampled_event_gets_a_pld_bound_beside_rdp():
    g = ACC.delta_for_epsilon(PoissonSampled(Gaussian(1), 0.01), 1)
    keys = {c.theorem.key for c in g.candidates}
    assert {"pld_fft", "rdp_to_approx_bbgg20"} <= keys
    assert g.theorem.key == "pld_fft"
    rdp = next(c for c in g.candidates if c.theorem.key == "rdp_to_approx_bbgg20")
    assert g.delta_upper <= rdp.upper


@pytest.mark.parametrize(
    ("expression", "eps"),
    [
        ("SelfComposed(PoissonSampled(Gaussian(2), 256/60000), 100000)", 3),
        ("SelfComposed(PoissonSampled(Gaussian(1), 1/100), 100000)", 10),
    ],
)
def test_long_dp_sgd_schedules_get_a_tight_certified_lower_delta(expression, eps):
    """The PLD's lower side after 10^5 steps: its labels lie about 5 below the losses, and the
    test {label > eps} alone certified delta 0 (first case, profile 1.06e-5) and 0.055 (second,
    0.269); the best test over every grid point brackets delta within 1%."""
    g = ACC.delta_for_epsilon(parse_event(expression), eps)
    assert g.theorem.key == "pld_fft"
    assert 0 < g.delta_upper <= g.delta_lower * 1.01


def test_a_small_delta_after_a_long_schedule_gets_a_certified_lower_bound():
    """DP-SGD (sigma 2, q = 256/60000) after 10^5 steps at epsilon 4.5, delta about 2.3e-10:
    the blocks' lower side carries an error of 7e-9, thirty times the profile, and certified
    delta >= 0; the one transform kept in reserve, from the leaf's centred lower side,
    certifies [2.199e-10, 2.336e-10]."""
    g = ACC.delta_for_epsilon(
        parse_event("SelfComposed(PoissonSampled(Gaussian(2), 256/60000), 100000)"), 4.5
    )
    assert g.theorem.key == "pld_fft"
    assert 0 < g.delta_upper <= g.delta_lower * 1.07 and g.delta_upper < 2.34e-10


def test_recorded_events_and_json():
    acc = Accountant()
    acc.compose(Laplace(2), count=3)
    g = acc.delta_for_epsilon(epsilon=1.5)
    d = g.to_dict()
    assert d["delta_upper"] == 0.0 and d["theorem"] and d["epsilon"] == 1.5
    assert "DeltaGuarantee" not in g.to_json()


def test_composition_of_mixed_mechanisms_is_bounded():
    g = ACC.delta_for_epsilon(Composed([Laplace(1), Gaussian(2)]), 1.5)
    # dropping the Laplace output is post-processing: the pair's delta is at least the
    # Gaussian's alone, and a Laplace(1) loss is at most 1, so at most the Gaussian's at 0.5
    assert _gaussian_delta(2, 1.5) <= g.delta_upper
    assert g.delta_lower <= _gaussian_delta(2, 0.5)


@pytest.mark.parametrize(
    ("epsilon", "match"),
    [
        (-1, r"epsilon must be a number >= 0, got -1"),
        (float("nan"), "epsilon"),
        (None, r"epsilon must be a number >= 0, got None"),
        ("abc", "epsilon"),
    ],
)
def test_bad_epsilon_is_refused(epsilon, match):
    with pytest.raises(ValueError, match=match):
        ACC.delta_for_epsilon(Laplace(1), epsilon)


def test_symbolic_event_is_refused():
    with pytest.raises(ValueError, match=r"event must be numeric .* symbols b"):
        ACC.delta_for_epsilon(parse_event("Laplace(b)", symbols=["b"]), 1)


def test_nothing_recorded_is_refused():
    with pytest.raises(ValueError, match="nothing has been recorded"):
        Accountant().delta_for_epsilon(epsilon=1)


def test_an_exact_result_makes_the_privacy_loss_distribution_unnecessary() -> None:
    """A composition of Gaussians is exactly Gaussian (Balle-Wang gives delta to 1e-12): the
    PLD is not built (it took ~30 s at k = 10^6); a Laplace composition still uses it."""
    import time

    from dpaudit.accountant import Accountant
    from dpaudit.events import Gaussian, Laplace, SelfComposed

    start = time.process_time()
    d = Accountant().delta_for_epsilon(SelfComposed(Gaussian(1), 10**6), 505000)
    assert time.process_time() - start < 20
    names = [c.theorem.key for c in d.candidates]
    assert "gaussian_analytic" in names and not any(k.startswith("pld") for k in names)
    assert d.delta_lower <= d.delta_upper <= d.delta_lower * (1 + 1e-9) + 1e-300
    laplace = Accountant().delta_for_epsilon(SelfComposed(Laplace(1), 10), 5)
    assert any(c.theorem.key.startswith("pld") for c in laplace.candidates)
