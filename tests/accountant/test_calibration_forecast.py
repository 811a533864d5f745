"""The forecast a calibration starts from (dpaudit.accountant.calibration_forecast) and the
search from it (calibration_search's settle): where the first certified evaluation goes, and
that a wrong forecast costs evaluations, never a wrong answer."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accountant import Accountant, calibrate, calibration_forecast, currencies
from dpaudit.accountant import calibration as calibration_module
from dpaudit.accountant.calibration import _event, _substituted
from dpaudit.accountant.calibration_forecast import forecast_value, loss_nodes
from dpaudit.accountant.calibration_search import RELATIVE_TOLERANCE
from dpaudit.accountant.parameter_roles import DECREASING, INCREASING
from dpaudit.numeric.saddlepoint import profile
from dpaudit.parse import parse_event

DPSGD = "SelfComposed(PoissonSampled(Gaussian(sigma), 256/60000), {k})"


def _forecast(expression: str, name: str, epsilon: float, sign: int = DECREASING, **kw):
    event = _event(expression, name)
    return forecast_value(
        lambda v: _substituted(event, name, v),
        epsilon=epsilon,
        delta=1e-5,
        sign=sign,
        start=Fraction(1),
        template=(event, name),
        **kw,
    )


@pytest.mark.parametrize("k,sigma", [(10_000, 0.885), (100_000, 2.0)])
def test_the_forecast_epsilon_lies_in_the_certified_bracket(k, sigma):
    """At a fixed sigma, the epsilon whose forecast delta is 1e-5 lies inside the accountant's
    certified [lower, upper] (an independent computation: FFT composition of certified
    discretisations against the saddle-point inversion of the exact densities)."""
    g = Accountant().guarantee(parse_event(DPSGD.format(k=k).replace("sigma", str(sigma))), "1e-5")
    nodes = loss_nodes(parse_event(DPSGD.format(k=k).replace("sigma", str(sigma))))
    assert nodes is not None
    lo, hi = g.epsilon_lower_float, g.epsilon_upper

    def forecast_delta(eps: float) -> float:
        found = [profile(parts, eps) for parts in nodes]
        return max(f.delta for f in found if f is not None)

    assert forecast_delta(lo) > 1e-5 > forecast_delta(hi)


def test_the_forecast_value_is_where_the_certified_search_ends():
    """DP-SGD at 10^4 steps, epsilon 3: the forecast sigma is within 2e-4 below the certified
    answer (the certified bound lies above the true epsilon by its grid error), its slope
    d log epsilon / d log sigma negative, the first evaluation aimed beyond it; no grid is
    forecast (the finest grid's leaf would be large at this small sigma)."""
    f = _forecast(DPSGD.format(k=10_000), "sigma", 3.0)
    assert f is not None
    c = calibrate(DPSGD.format(k=10_000), epsilon=3, delta="1e-5", parameter="sigma")
    assert f.value < c.value < f.value * (1 + 2e-4)
    assert f.slope < 0 and f.aim > f.value and f.grid is None


def test_a_long_schedule_forecasts_the_finest_grid_and_its_shift():
    """At 10^5 steps the finest grid's bound lies about 2e-4 (in sigma) above the forecast, more
    than the search's tolerance: the aim is moved by the shift forecast on the finest grid's
    upper discretisations, and the first evaluation is feasible and final."""
    f = _forecast(DPSGD.format(k=100_000), "sigma", 3.0)
    assert f is not None and f.grid == currencies.FINEST_GRID
    assert f.aim > f.value * (1 + 1e-4)
    currencies._PLD_MEMO.clear()
    c = calibrate(DPSGD.format(k=100_000), epsilon=3, delta="1e-5", parameter="sigma")
    assert c.evaluations == 2  # one certified PLD evaluation, then the accountant's run there
    assert c.epsilon_upper <= 3
    assert f.aim / (1 + 1e-4) <= c.value <= f.aim * (1 + 1e-4)


@pytest.mark.parametrize("k", [100_000, 1_000_000])
def test_the_aim_from_the_larger_direction_alone_is_the_aim_from_both(monkeypatch, k):
    """The finest grid's correction builds only the direction whose forecast is the larger by
    DIRECTION_MARGIN (remove, for DP-SGD: its leaf alone); the aim is the same, to the last
    bit, as when both directions' leaves are built and the larger taken."""
    built = []
    original = calibration_forecast.upper_nodes

    def spy(event, h, directions=(True, True)):
        built.append(directions)
        return original(event, h, directions)

    monkeypatch.setattr(calibration_forecast, "upper_nodes", spy)
    one = _forecast(DPSGD.format(k=k), "sigma", 8.0 if k == 1_000_000 else 3.0)
    assert built == [(True, False)]
    monkeypatch.setattr(calibration_forecast, "DIRECTION_MARGIN", math.inf)
    both = _forecast(DPSGD.format(k=k), "sigma", 8.0 if k == 1_000_000 else 3.0)
    assert built[-1] == (True, True)
    assert one is not None and one == both


def test_an_increasing_parameter_is_forecast_from_its_side():
    """The sampling rate (epsilon grows with it): the certified bound lies above the true
    epsilon, so the certified answer is a smaller rate than the forecast one, within 1e-3 of
    it; the slope is positive and the first evaluation aimed below the forecast."""
    expression = "SelfComposed(PoissonSampled(Gaussian(1.2), q), 10000)"
    f = _forecast(expression, "q", 3.0, sign=INCREASING, low=Fraction(0), high=Fraction(1))
    assert f is not None and f.slope > 0 and f.aim < f.value
    c = calibrate(expression, epsilon=3, delta="1e-5", parameter="q")
    assert c.value < f.value < c.value * (1 + 1e-3)
    assert c.epsilon_upper <= 3


def test_events_without_a_forecast():
    """No forecast for a mechanism other than a (subsampled) Gaussian, for a parameter the
    forecast would move out of its range, or with the switch off."""
    assert _forecast("SelfComposed(Laplace(b), 100)", "b", 3.0) is None
    expression = "SelfComposed(PoissonSampled(Gaussian(1.2), q), 10000)"
    # epsilon 1e5 is met even without subsampling (about 4,000 at q = 1): the crossing
    # lies beyond the end of the rates
    assert _forecast(expression, "q", 1e5, sign=INCREASING, high=Fraction(1)) is None
    assert _forecast(DPSGD.format(k=1000), "sigma", 1.0) is not None
    calibration_forecast.ENABLED = False
    try:
        assert _forecast(DPSGD.format(k=1000), "sigma", 1.0) is None
    finally:
        calibration_forecast.ENABLED = True


def test_the_template_and_the_substitution_agree():
    """The symbol read as the value (no substitution) and the event substituted give the same
    forecast; an expression of the symbol (2 s) is substituted."""
    a = _forecast(DPSGD.format(k=3000), "sigma", 2.0)
    event = _event(DPSGD.format(k=3000), "sigma")
    b = forecast_value(
        lambda v: _substituted(event, "sigma", v),
        epsilon=2.0,
        delta=1e-5,
        sign=DECREASING,
        start=Fraction(1),
    )
    assert a is not None and b is not None and a.value == pytest.approx(b.value, rel=1e-12)
    half = _forecast("SelfComposed(PoissonSampled(Gaussian(2 * s), 256/60000), 3000)", "s", 2.0)
    assert half is not None and half.value == pytest.approx(a.value / 2, rel=1e-9)


@pytest.mark.parametrize("factor", [2.0, 0.5, 1.01])
def test_a_wrong_forecast_costs_evaluations_not_the_answer(monkeypatch, factor):
    """A forecast off by a factor (2, 1/2, 1%): the search from it does not settle within its
    evaluations or settles elsewhere, and the answer is still certified and within the
    tolerance of the answer without a forecast."""
    expression = DPSGD.format(k=3000)
    calibration_forecast.ENABLED = False
    try:
        currencies._PLD_MEMO.clear()
        plain = calibrate(expression, epsilon=2, delta="1e-5", parameter="sigma")
    finally:
        calibration_forecast.ENABLED = True
    real = calibration_module._forecast

    def wrong(*args, **kwargs):
        found = real(*args, **kwargs)
        assert found is not None
        return Fraction(float(found[0]) * factor), found[1]

    monkeypatch.setattr(calibration_module, "_forecast", wrong)
    currencies._PLD_MEMO.clear()
    c = calibrate(expression, epsilon=2, delta="1e-5", parameter="sigma")
    assert c.epsilon_upper <= 2
    assert abs(math.log(c.value / plain.value)) <= 2 * math.log1p(RELATIVE_TOLERANCE)


def test_a_forecast_slope_of_the_wrong_sign_is_not_followed(monkeypatch):
    """A slope whose sign contradicts the parameter's role: the search ignores the forecast."""
    real = calibration_module._forecast

    def flipped(*args, **kwargs):
        found = real(*args, **kwargs)
        assert found is not None
        return found[0], -found[1]

    monkeypatch.setattr(calibration_module, "_forecast", flipped)
    currencies._PLD_MEMO.clear()
    c = calibrate(DPSGD.format(k=3000), epsilon=2, delta="1e-5", parameter="sigma")
    assert c.epsilon_upper <= 2 and c.evaluations > 2


def test_the_whole_accountants_search_starts_from_the_forecast_too():
    """A composition of plain Gaussians: the analytic bound is the tightest (exact), so the
    search runs with the whole accountant; it starts from the forecast (exact for Gaussians to
    1e-6) and needs at most two evaluations (seven to eight without), the answer within the
    tolerance of the search without it."""
    expression = "Composed([Gaussian(sigma), Gaussian(2 * sigma)])"
    c = calibrate(expression, epsilon=2, delta="1e-5", parameter="sigma")
    assert c.theorem == "analytic Gaussian mechanism" and c.epsilon_upper <= 2
    assert c.evaluations <= 2
    calibration_forecast.ENABLED = False
    try:
        plain = calibrate(expression, epsilon=2, delta="1e-5", parameter="sigma")
    finally:
        calibration_forecast.ENABLED = True
    assert plain.evaluations > 2
    assert abs(math.log(c.value / plain.value)) <= math.log1p(RELATIVE_TOLERANCE)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    q=st.sampled_from(["1", "1/2", "1/100", "256/60000", "1/100000"]),
    k=st.integers(min_value=1, max_value=10**7),
    eps=st.floats(min_value=1e-6, max_value=1e4),
    delta=st.sampled_from([1e-300, 1e-12, 1e-5, 0.3, 0.999]),
    start=st.sampled_from(["1e-3", "1", "1000"]),
)
def test_the_forecast_never_raises(q, k, eps, delta, start):
    """Any schedule, target and start: a Forecast with a finite positive value, aim and
    slope of the parameter's sign, or None; never an exception (a forecast only chooses
    where to look)."""
    expression = f"SelfComposed(PoissonSampled(Gaussian(sigma), {q}), {k})"
    event = _event(expression, "sigma")
    f = forecast_value(
        lambda v: _substituted(event, "sigma", v),
        epsilon=eps,
        delta=delta,
        sign=DECREASING,
        start=Fraction(start),
        template=(event, "sigma"),
    )
    if f is not None:
        assert 0 < f.value < math.inf and 0 < f.aim < math.inf and f.slope < 0
