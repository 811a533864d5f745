"""Discrete Laplace and discrete Gaussian PLDs (interval atom masses) enclose the exact
privacy profile, computed independently by direct summation at 60 digits."""

from __future__ import annotations

import mpmath
import pytest

from dpaudit import pld


def _profile(weight, d: int, eps: float, reach: int) -> mpmath.mpf:
    with mpmath.workdps(60):
        xs = range(-reach, reach + 1)
        z = mpmath.fsum(weight(x) for x in xs)
        e = mpmath.e ** mpmath.mpf(eps)
        return mpmath.fsum(max(mpmath.mpf(0), (weight(x) - e * weight(x - d)) / z) for x in xs)


@pytest.mark.parametrize(
    ("kind", "param", "d"),
    [("laplace", 3.0, 1), ("laplace", 2.5, 3), ("gaussian", 1.5, 1), ("gaussian", 4.0, 2)],
)
def test_single_step_profile_is_enclosed(kind: str, param: float, d: int) -> None:
    if kind == "laplace":
        pair = pld.discrete_laplace(param, d, value_discretization=1e-3)

        def weight(x):
            return mpmath.e ** (-abs(x) / mpmath.mpf(param))

        reach = int(60 * param * 3) + d
    else:
        pair = pld.discrete_gaussian(param, d, value_discretization=1e-3)

        def weight(x):
            return mpmath.e ** (-(mpmath.mpf(x) ** 2) / (2 * mpmath.mpf(param) ** 2))

        reach = int(30 * param) + d
    for eps in (0.0, 0.2, 0.5, 1.0):
        lo, hi = pair.delta_bounds(eps)
        exact = _profile(weight, d, eps, reach)
        assert mpmath.mpf(lo) <= exact <= mpmath.mpf(hi)
        assert hi - lo <= 1e-2 * float(exact) + 1e-12  # the grid's only loss: a near-tight pair


def test_composed_discrete_gaussian_upper_at_least_lower() -> None:
    pair = pld.discrete_gaussian(2.0, 1, sampling_probability=0.3).self_compose(30)
    lo, hi = pair.epsilon_bounds(1e-6)
    assert 0 < lo <= hi <= lo * 1.001
