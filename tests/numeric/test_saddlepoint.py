"""The saddle-point forecast of a composition's privacy profile (dpaudit.numeric.saddlepoint)
against closed forms: a composition of Gaussian mechanisms is a Gaussian mechanism (Balle and
Wang 2018, Theorem 8, with mu = sqrt(k) Delta / sigma), whose profile an mpmath oracle gives at
50 digits.  The forecast is not a bound; these tests measure how close it is."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpaudit.numeric.saddlepoint import LossNodes, leading_term, profile, saddle_point


def _gaussian_nodes(mu: float, count: float, t_max: float = 64.0) -> list[LossNodes]:
    """The Gaussian mechanism's loss ``mu u - mu^2 / 2`` under ``u ~ N(mu, 1)`` as trapezoid
    nodes (written out here, independently of the accountant's builder)."""
    du = 0.05 * min(1.0, 1.0 / mu)
    half = 12 + mu * (1 + t_max)
    u = np.arange(-half, half + du / 2, du)
    log_m = -0.5 * (u - mu) ** 2 - 0.5 * math.log(2 * math.pi) + math.log(du)
    return [LossNodes(mu * u - mu * mu / 2, log_m, count, t_max)]


def _oracle(mu: float, eps: float) -> tuple[float, float]:
    """Balle-Wang's delta(eps) and d delta / d eps = -exp(eps) Phi(-eps/mu - mu/2), 50 digits."""
    with mpmath.workdps(50):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        tail = mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
        return float(mpmath.ncdf(m / 2 - e / m) - tail), float(-tail)


@pytest.mark.parametrize(
    "mu,count,eps",
    [(0.5, 1, 1.0), (0.1, 100, 1.0), (0.01, 10_000, 3.0), (0.002, 1_000_000, 8.0), (1.0, 4, 6.0)],
)
def test_a_composition_of_gaussians_matches_balle_wang(mu, count, eps):
    """delta within 1e-6 relative of the closed form at sqrt(count) mu, the slope within 1e-6:
    the inversion integral with the trapezoid rule is exact to that precision for a Gaussian
    loss (its moment generating function is exp(mu^2 t (t + 1) / 2) per copy)."""
    found = profile(_gaussian_nodes(mu, count), eps)
    assert found is not None
    delta, slope = _oracle(mu * math.sqrt(count), eps)
    assert found.delta == pytest.approx(delta, rel=1e-6)
    assert found.slope == pytest.approx(slope, rel=1e-6)
    # the saddle point of a Gaussian loss N(m, 2m), m = k mu^2 / 2: K'(t) = m (1 + 2t) = eps
    m = count * mu * mu / 2
    assert found.t == pytest.approx((eps / m - 1) / 2, rel=1e-6)


def test_a_composition_of_distinct_parts_is_their_product():
    """Two parts (k1 copies of mu1, k2 of mu2) compose as one Gaussian of mu^2 = k1 mu1^2 +
    k2 mu2^2."""
    parts = _gaussian_nodes(0.05, 300) + _gaussian_nodes(0.02, 2000)
    mu = math.sqrt(300 * 0.05**2 + 2000 * 0.02**2)
    found = profile(parts, 2.0)
    assert found is not None
    assert found.delta == pytest.approx(_oracle(mu, 2.0)[0], rel=1e-6)


def test_the_leading_term_ranks_profiles():
    """Daniels' leading term (what the forecast uses to tell which direction's profile is the
    larger) ranks two losses as their profiles do, and is within a factor 1.5 of each here."""
    small, large = _gaussian_nodes(0.01, 10_000), _gaussian_nodes(0.011, 10_000)
    looks = []
    for parts in (small, large):
        found = saddle_point(parts, 3.0)
        assert found is not None
        looks.append(leading_term(parts, 3.0, found))
    deltas = [_oracle(0.01 * 100, 3.0)[0], _oracle(0.011 * 100, 3.0)[0]]
    assert looks[0] < looks[1]
    for look, delta in zip(looks, deltas, strict=True):
        assert delta / 1.5 < look < delta * 1.5


def test_no_forecast_at_or_below_the_mean_loss():
    """An epsilon at or below the composed loss's mean (delta is not small there) has no
    saddle point: no forecast."""
    parts = _gaussian_nodes(0.1, 1000)  # mean loss 1000 * 0.01 / 2 = 5
    assert saddle_point(parts, 4.9) is None
    assert profile(parts, 4.9) is None
    assert profile(parts, 5.5) is not None


def test_beyond_the_nodes_the_chernoff_estimate():
    """A saddle point beyond the tilt the nodes resolve: the estimate is the Chernoff bound at
    the largest tilt, ``exp(K(t) - t eps)``, above the true delta (and tiny)."""
    parts = _gaussian_nodes(0.5, 1, t_max=4.0)  # the saddle point of eps 6 is at t = 23.5
    found = profile(parts, 6.0)
    assert found is not None and found.t == 4.0
    truth = _oracle(0.5, 6.0)[0]
    assert truth < found.delta == pytest.approx(math.exp(0.125 * 4 * 5 - 4 * 6.0), rel=1e-9)


def test_a_loss_that_is_not_concentrated_gives_no_forecast():
    """A single copy of a loss with an atom (a Poisson-subsampled Gaussian with q = 0.01:
    probability about 0.99 of a loss near 0) has a characteristic function that does not fall
    off: the rule would need more than its largest number of nodes, so there is no forecast;
    a thousand copies have one."""
    mu, q, du = 1.0, 0.01, 0.05
    u = np.arange(-40, 80, du)
    log_phi = -0.5 * u * u - 0.5 * math.log(2 * math.pi) + math.log(du)
    loss = np.logaddexp(math.log1p(-q), math.log(q) + mu * u - mu * mu / 2)
    log_b = np.logaddexp(math.log1p(-q) + log_phi, math.log(q) + log_phi + mu * u - mu * mu / 2)
    assert profile([LossNodes(loss, log_b, 1, 30.0)], 2.0) is None
    assert profile([LossNodes(loss, log_b, 1000, 30.0)], 2.0) is not None


def test_an_infinite_loss_counts_one():
    """A P-mass at an infinite loss adds ``1 - (1 - p)^count`` to the profile."""
    base = _gaussian_nodes(0.01, 10_000)[0]
    p = 1e-9
    shifted = LossNodes(base.s, base.log_m + math.log1p(-p), base.count, base.t_max, p)
    a, b = profile([base], 3.0), profile([shifted], 3.0)
    assert a is not None and b is not None
    expected = -math.expm1(10_000 * math.log1p(-p)) + a.delta * (1 - p) ** 10_000
    assert b.delta == pytest.approx(expected, rel=1e-6)


def test_a_lattice_coarser_than_the_rule_gives_no_forecast():
    """Losses on a lattice of step h have a characteristic function of period 2 pi / h in y;
    a rule that reaches half of that period would integrate an alias: no forecast."""
    nodes = LossNodes(np.array([-1.0, 1.0]), np.log(np.array([0.4, 0.6])), 3, spacing=2.0)
    assert profile([nodes], 1.5) is None


def test_the_closed_form_comparison_tells_a_one_in_ten_thousand_change():
    """The 1e-6 tolerance above is a test of the forecast: a Gaussian of mu 0.01% larger is
    told apart from the closed form."""
    found = profile(_gaussian_nodes(0.01 * 1.0001, 10_000), 3.0)
    assert found is not None
    assert found.delta != pytest.approx(_oracle(1.0, 3.0)[0], rel=1e-6)
