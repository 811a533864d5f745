"""The privacy profile curve (Accountant.curve) and the theorem named in a guarantee.

Oracle: the Gaussian mechanism's exact epsilon at delta (Balle and Wang 2018, Theorem 8),
solved by bisection with mpmath at 40 digits; it must lie inside the certified band.
"""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
from matplotlib.figure import Figure

from dpaudit.accountant import Accountant, PrivacyCurve
from dpaudit.accountant.curve import DEFAULT_DELTAS, MAX_POINTS
from dpaudit.events import Gaussian, SelfComposed
from dpaudit.parse import parse_event

ACC = Accountant()


def _gaussian_epsilon(mu: mpmath.mpf, delta: float) -> mpmath.mpf:
    def profile(e: mpmath.mpf) -> mpmath.mpf:
        return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)

    with mpmath.workdps(40):
        lo, hi = mpmath.mpf(0), mpmath.mpf(100)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if profile(mid) > delta else (lo, mid)
        return hi


@pytest.fixture(scope="module")
def gaussian_curve() -> PrivacyCurve:
    return ACC.curve(SelfComposed(Gaussian(10), 50), deltas=[1e-9, 1e-6, 1e-3, 0.1])


def test_gaussian_curve_brackets_the_exact_profile(gaussian_curve):
    c = gaussian_curve
    assert c.deltas.tolist() == [1e-9, 1e-6, 1e-3, 0.1]
    with mpmath.workdps(40):
        mu = mpmath.sqrt(50) / 10
        for d, lo, up in zip(c.deltas, c.epsilon_lower, c.epsilon_upper, strict=True):
            truth = _gaussian_epsilon(mu, float(d))
            assert mpmath.mpf(lo) <= truth <= mpmath.mpf(up)
            assert up - lo <= 1e-6 * up
            # a 30% wrong noise scale falls outside the band: the check can fail
            wrong = _gaussian_epsilon(mpmath.sqrt(50) / 13, float(d))
            assert not (mpmath.mpf(lo) <= wrong <= mpmath.mpf(up))


def test_band_is_monotone_and_ordered(gaussian_curve):
    c = gaussian_curve
    assert np.all(np.diff(c.epsilon_upper) <= 0)
    assert np.all(np.diff(c.epsilon_lower) <= 0)
    assert np.all(c.epsilon_lower <= c.epsilon_upper)


def test_curve_json_and_plot(gaussian_curve, tmp_path):
    data = json.loads(gaussian_curve.to_json())
    assert len(data["points"]) == 4
    assert data["points"][0]["theorem"] == "analytic Gaussian mechanism"
    fig = gaussian_curve.plot()
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert fig.axes[0].get_xscale() == "log"
    fig.savefig(tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_default_deltas_and_pure_events():
    c = ACC.curve(parse_event("SelfComposed(Laplace(10), 10)"))
    assert c.deltas.size == len(DEFAULT_DELTAS)
    assert np.all(c.epsilon_upper <= 1.0)  # basic composition: 10 * 0.1
    assert np.all(np.isfinite(c.epsilon_upper))


@pytest.mark.parametrize(
    ("deltas", "match"),
    [
        ([0.0], r"each delta must be in \(0, 1\), got 0.0"),
        ([1.5], r"each delta must be in \(0, 1\), got 1.5"),
        ([], "deltas must hold 1 to"),
        ([1e-3] * (MAX_POINTS + 1), "deltas must hold 1 to"),
        (["x"], r"deltas must be numbers in \(0, 1\)"),
    ],
)
def test_bad_deltas_are_refused(deltas, match):
    with pytest.raises(ValueError, match=match):
        ACC.curve(Gaussian(1), deltas=deltas)


def test_symbolic_event_curve_is_refused():
    with pytest.raises(ValueError, match="event must be numeric"):
        ACC.curve(parse_event("Gaussian(s)", symbols=["s"]))


# ---- the theorem that produced the number (issue 19, part 5) ----------------------------


def test_symbolic_min_is_labelled_as_a_minimum_not_basic_composition():
    g = ACC.guarantee(parse_event("SelfComposed(Laplace(b), 1000)", symbols=["b"]), 1e-6)
    assert str(g.epsilon).startswith("Min(")
    assert g.theorem.key == "tightest_candidate"
    assert [t.key for t in g.theorems] == ["basic_composition", "zcdp_to_approx"]
    d = g.to_dict()
    assert d["theorem"] == "tightest of the valid candidates"
    assert d["theorems"] == ["basic composition", "zCDP to (eps, delta)"]


def test_symbolic_min_that_reduces_names_the_winning_theorem():
    g = ACC.guarantee(parse_event("SelfComposed(Laplace(b), 10)", symbols=["b"]), 1e-6)
    assert not str(g.epsilon).startswith("Min(")
    assert g.theorem.key == "basic_composition"


def test_numeric_guarantee_names_the_chosen_candidate_and_the_lower_bound_source():
    g = ACC.guarantee(SelfComposed(Gaussian(10), 50), 1e-5)
    d = g.to_dict()
    best = min(g.candidates, key=lambda c: float(c.epsilon))
    assert d["theorem"] == best.label == "analytic Gaussian mechanism"
    assert d["epsilon_lower_theorem"] == "analytic Gaussian mechanism"
    assert math.isclose(d["epsilon"], float(best.epsilon), rel_tol=1e-12)
