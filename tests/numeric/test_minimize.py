"""minimize_bounded is scipy's bounded Brent minimiser, ported (start-up, issue 19 part 4).

Oracle: ``scipy.optimize.minimize_scalar(method="bounded")`` on the same function and bounds
must return the *same* float (the port repeats its steps in IEEE double arithmetic), on
smooth, flat, multimodal and boundary-minimum functions and on the zCDP-conversion objective
the accountant minimises (a Hypothesis sweep over rho and delta).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.numeric import minimize_bounded

optimize = pytest.importorskip("scipy.optimize")


def _scipy(func, lo, hi, xatol=1e-5, maxiter=500):
    res = optimize.minimize_scalar(
        func, bounds=(lo, hi), method="bounded", options={"xatol": xatol, "maxiter": maxiter}
    )
    return float(res.x)


CASES = [
    ("parabola", lambda x: (x - 1.3) ** 2, -5.0, 5.0),
    ("quartic flat", lambda x: (x - 0.25) ** 4, -3.0, 2.0),
    ("cosine multimodal", lambda x: math.cos(3 * x) + 0.1 * x, -4.0, 4.0),
    ("minimum at the left end", lambda x: x, 2.0, 7.0),
    ("minimum at the right end", lambda x: -x, 2.0, 7.0),
    ("abs kink", lambda x: abs(x - 0.7), -1.0, 3.0),
    ("constant", lambda x: 1.0, 0.0, 1.0),
    ("degenerate interval", lambda x: x * x, 0.5, 0.5),
]


@pytest.mark.parametrize(("name", "func", "lo", "hi"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("xatol", [1e-5, 1e-9])
def test_same_minimiser_as_scipy(name, func, lo, hi, xatol):
    assert minimize_bounded(func, lo, hi, xatol=xatol) == _scipy(func, lo, hi, xatol)


def test_maxiter_stops_like_scipy():
    def f(x):
        return math.cos(3 * x) + 0.1 * x

    for maxiter in (1, 2, 5, 9):
        assert minimize_bounded(f, -4.0, 4.0, maxiter=maxiter) == _scipy(
            f, -4.0, 4.0, 1e-5, maxiter
        )


def _zcdp_objective(rho: float, delta: float):
    log_inv_d = math.log(1 / delta)

    def objective(log_gap: float) -> float:
        order = 1 + math.exp(log_gap)
        return order * rho + (log_inv_d + order * math.log1p(-1 / order) - math.log(order - 1)) / (
            order - 1
        )

    return objective


@given(
    rho=st.floats(min_value=1e-6, max_value=50.0),
    log10_delta=st.floats(min_value=-14.0, max_value=-0.01),
)
def test_same_order_as_scipy_on_the_zcdp_conversion(rho, log10_delta):
    f = _zcdp_objective(rho, 10**log10_delta)
    assert minimize_bounded(f, -12.0, 12.0, xatol=1e-9) == _scipy(f, -12.0, 12.0, 1e-9)


def test_a_wrong_minimiser_is_caught():
    """The oracle comparison can fail: a shifted result is not scipy's."""
    f = _zcdp_objective(0.5, 1e-6)
    assert minimize_bounded(f, -12.0, 12.0, xatol=1e-9) + 1e-7 != _scipy(f, -12.0, 12.0, 1e-9)


@pytest.mark.parametrize(
    ("lo", "hi", "maxiter", "match"),
    [
        (math.inf, 1.0, 500, "bounds must be finite"),
        (0.0, math.nan, 500, "bounds must be finite"),
        (2.0, 1.0, 500, "lower must be <= upper"),
        (0.0, 1.0, 0, "maxiter must be >= 1"),
    ],
)
def test_bad_input(lo, hi, maxiter, match):
    with pytest.raises(ValueError, match=match):
        minimize_bounded(lambda x: x, lo, hi, maxiter=maxiter)
