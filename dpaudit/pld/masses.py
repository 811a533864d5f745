"""Certified probability masses of intervals under Gaussian and exponential densities.

The continuous PLD builders need, for every loss bucket, the P- and Q-mass of an output
interval ``[a, b]``.  The densities involved are finite mixtures of two kinds of component,

* :class:`Normal` -- ``weight * phi((x - mu) / sigma) / sigma``, and
* :class:`Exponential` -- ``weight * exp(alpha + rate * x)`` (pieces of Laplace densities and of
  the bounded-range pair),

and this module returns a *certified enclosure* ``lower <= integral <= upper`` of each interval
mass.  The estimate is the n-point Gauss-Legendre rule; its error is bounded, not estimated:

* truncation: ``|E| <= (b-a)^(2n+1) (n!)^4 / ((2n+1) ((2n)!)^3) * max |f^(2n)|`` (the classical
  Gauss-Legendre remainder), with ``|phi^(m)(z)| <= K sqrt(m!) / sqrt(2 pi)``, ``K = 1.086435``
  (Cramer's inequality for Hermite functions, Abramowitz and Stegun 22.14.17) for the normal
  kind and ``|f^(m)| = |rate|^m f`` for the exponential kind;
* floating point: the relative error of each density value (argument rounding amplified by
  ``exp``), of the weighted sum, and the absolute error from the rounded panel end points and
  nodes, bounded with ``max f <= f(node) * exp(G (b - a))`` where ``G`` bounds ``|(log f)'|`` on
  the panel.

No subtraction of nearly equal numbers occurs (no CDF differences), so the bounds are tight
to a few ulps of each mass.  The only assumption is that ``exp`` and ``log`` of the platform are
accurate to one ulp (true of glibc and of numpy's SIMD kernels).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["Exponential", "Normal", "interval_masses", "normal_tails"]

_U = 2.0**-53
_CRAMER = 1.086435 * 1.0001
_SQRT2PI = math.sqrt(2 * math.pi)
#: Gauss-Legendre nodes per panel.
NODES = 3
_T, _W = np.polynomial.legendre.leggauss(NODES)  # numpy's: scipy.special costs ~0.5 s to import
_GL = math.factorial(NODES) ** 4 / ((2 * NODES + 1) * math.factorial(2 * NODES) ** 3) * 1.001
_NORMAL_DERIV = _CRAMER * math.sqrt(math.factorial(2 * NODES)) / _SQRT2PI * 1.001
_TINY = 1e-300  # covers an underflowed density value, per unit of interval length


@dataclasses.dataclass(frozen=True)
class Normal:
    """The measure ``weight * N(mu, sigma^2)``."""

    weight: float
    mu: float
    sigma: float


@dataclasses.dataclass(frozen=True)
class Exponential:
    """The measure with density ``weight * exp(alpha + rate * x)`` (on the caller's domain)."""

    weight: float
    alpha: float
    rate: float


def _normal(c: Normal, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = b - a
    mid, half = (a + b) / 2, w / 2
    scale = c.weight / (c.sigma * _SQRT2PI)
    est = np.zeros_like(a)
    fmax = np.zeros_like(a)
    rho = np.zeros_like(a)
    with np.errstate(under="ignore", over="ignore"):
        for t, wt in zip(_T, _W, strict=True):
            z = (mid + half * t - c.mu) / c.sigma
            f = scale * np.exp(-0.5 * z * z)
            est += wt * f
            fmax = np.maximum(fmax, f)
            rho = np.maximum(rho, _U * (8 + 3 * z * z))
        est *= half
        za, zb = np.abs((a - c.mu) / c.sigma), np.abs((b - c.mu) / c.sigma)
        g = (np.maximum(za, zb) * (1 + 1e-12) + 1e-300) / c.sigma
        gw = np.minimum(g * w * (1 + 1e-12) + 4 * _U * (np.abs(a) + np.abs(b)) * g, 700.0)
        fmax = fmax * (1 + rho) * np.exp(gw) * (1 + 4 * _U) + _TINY
        omega = w / c.sigma
        trunc = c.weight * _GL * _NORMAL_DERIV * omega ** (2 * NODES + 1)
    return _enclose(est, rho, fmax, g, a, b, trunc)


def _exponential(c: Exponential, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = b - a
    mid, half = (a + b) / 2, w / 2
    est = np.zeros_like(a)
    fmax = np.zeros_like(a)
    rho = np.zeros_like(a)
    with np.errstate(under="ignore", over="ignore"):
        for t, wt in zip(_T, _W, strict=True):
            x = mid + half * t
            f = c.weight * np.exp(c.alpha + c.rate * x)
            est += wt * f
            fmax = np.maximum(fmax, f)
            rho = np.maximum(rho, _U * (6 + 3 * (abs(c.alpha) + np.abs(c.rate * x))))
        est *= half
        g = abs(c.rate) * (1 + 1e-12)
        gw = np.minimum(g * w * (1 + 1e-12) + 4 * _U * (np.abs(a) + np.abs(b)) * g, 700.0)
        fmax = fmax * (1 + rho) * np.exp(gw) * (1 + 4 * _U) + _TINY
        trunc = _GL * w ** (2 * NODES + 1) * g ** (2 * NODES) * fmax
    return _enclose(est, rho, fmax, g, a, b, trunc)


def _enclose(
    est: np.ndarray,
    rho: np.ndarray,
    fmax: np.ndarray,
    g: float | np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    trunc: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Turn a Gauss-Legendre estimate into ``(lower, upper)`` (see the module docstring)."""
    w = b - a
    rel = rho * 1.01 + (NODES + 8) * _U
    # end points and nodes of the panel are rounded: shift by <= u (|a| + |b| + w) each
    pos = _U * (np.abs(a) + np.abs(b) + w) * (2 + 3 * w * g) * fmax + _TINY * w
    slack = (pos + trunc) * (1 + 1e-9)
    upper = (est * (1 + rel) + slack) * (1 + 4 * _U)
    lower = np.maximum(0.0, (est * (1 - rel) - slack) * (1 - 4 * _U))
    return lower, upper


def interval_masses(
    components: Sequence[Normal | Exponential], a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Certified ``(lower, upper)`` bounds on the mixture's mass of each ``[a_i, b_i]``.

    Args:
        components: the mixture.
        a: left ends (float array).
        b: right ends, ``b >= a`` elementwise.

    Returns:
        Two arrays with ``lower_i <= mass([a_i, b_i]) <= upper_i``.  Tight (a few ulps) when
        every panel is at most a sixteenth of the component's scale wide.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    lower = np.zeros_like(a)
    upper = np.zeros_like(a)
    for c in components:
        lo, hi = _normal(c, a, b) if isinstance(c, Normal) else _exponential(c, a, b)
        lower += lo
        upper += hi
    k = len(components)
    return lower * (1 - (k + 2) * _U), upper * (1 + (k + 2) * _U)


def normal_tails(components: Sequence[Normal], x: float, side: str) -> tuple[float, float]:
    """Certified ``(lower, upper)`` bounds on the mixture's mass below (``side="below"``) or
    above (``"above"``) ``x``, by the Mills-ratio bounds
    ``phi(z) z / (1 + z^2) <= 1 - Phi(z) <= phi(z) / z`` for ``z > 0``."""
    lower = upper = 0.0
    for c in components:
        z = (c.mu - x) / c.sigma if side == "below" else (x - c.mu) / c.sigma
        if z <= 1e-3:
            upper += c.weight
            continue
        phi = math.exp(-0.5 * z * z) / _SQRT2PI
        rel = _U * (8 + 3 * z * z)
        upper += c.weight * phi / z * (1 + rel)
        lower += c.weight * phi * z / (1 + z * z) * (1 - rel)
    return lower * (1 - 1e-12), upper * (1 + 1e-12) + 1e-300
