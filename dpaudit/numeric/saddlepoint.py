"""A saddle-point forecast of a composition's privacy profile from its losses' moment generating
function, without composing: a float estimate for choosing where to compute a certified bound.

A privacy loss ``L = log(P/Q)`` under ``P`` is given by quadrature nodes (:class:`LossNodes`):
losses ``s_j`` and the logarithms of their P-weights ``m_j``, so that ``E_P[f(L)]`` is about
``sum_j m_j f(s_j)``.  The composition of ``count_i`` independent copies of each has the moment
generating function ``M(z) = prod_i M_i(z)^count_i`` and the privacy profile
``delta(eps) = E[(1 - exp(eps - L))_+]``, an infinite loss counting 1 (the hockey-stick
divergence; Balle, Barthe, Gaboardi, Hsu, Sato 2020, Theorem 5).  The function
``g(x) = (1 - exp(-x))_+`` has the two-sided Laplace transform
``int g(x) exp(-z x) dx = 1 / z - 1 / (z + 1) = 1 / (z (z + 1))`` for ``Re z > 0``, so by the
inversion formula (Widder, *The Laplace Transform*, 1941, Chapter VI), for every ``t > 0``
where ``M`` is finite,

    delta(eps) = (exp(K(t) - t eps) / pi)
                 int_0^inf Re[exp(K(t + iy) - K(t) - iy eps) / ((t + iy)(t + 1 + iy))] dy,

``K = log M`` (the integrand at ``-y`` is the conjugate of that at ``y``).  At the saddle point
``K'(t) = eps`` the factor ``exp(K(t + iy) - K(t) - iy eps)`` falls off like
``exp(-K''(t) y^2 / 2)`` near 0 (steepest descent; Daniels 1954, "Saddlepoint approximations in
statistics", Ann. Math. Statist. 25), and the integrand is analytic in a strip of half-width
about ``t`` (the poles of ``1 / (z (z + 1))``), where the trapezoid rule's error falls like
``exp(-2 pi t / step)`` (Trefethen and Weideman 2014, "The exponentially convergent trapezoidal
rule", SIAM Review 56, Theorem 5.1).  The rule here takes a step of at most 0.7 times the width
``1 / sqrt(K''(t))`` and a third of ``t``, over :data:`WIDTHS` widths, doubled until the
integrand has fallen below :data:`TAIL` of its value at 0 on the rule's last tenth; it gives up
beyond :data:`MAX_NODES` nodes (a composition of too few copies, whose loss is not
concentrated) or where it reaches half the period of a lattice the losses lie on.  The
derivative ``d delta / d eps`` comes from the same nodes (the transform of
``-exp(-x) 1{x > 0}`` is ``-1 / (z + 1)``).

Never a bound: nothing here has an error bound (the quadratures, the truncation, float
arithmetic at 10^6 copies).  It is ``None`` where it is not trustworthy even as an estimate.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["MIN_SADDLE", "LossNodes", "Profile", "leading_term", "profile", "saddle_point"]

#: The smallest saddle point ``t`` a forecast is made at: below it the target epsilon is at
#: or below the composed loss's mean (``delta`` is not small there) and the contour runs close
#: to the pole at 0.
MIN_SADDLE = 0.02
#: The trapezoid rule on ``y`` covers at first this many widths ``1 / sqrt(K''(t))``.
WIDTHS = 7.0
#: The integrand at the end of the rule, relative to its value at 0, above which the forecast
#: gives up (the composed loss is not concentrated enough for the rule's range).
TAIL = 1e-9
#: The most nodes of the trapezoid rule.
MAX_NODES = 2000
#: Nodes whose tilted share of the moment generating function is below this are left out of
#: its values off the real axis.
TRIM = 1e-14


@dataclasses.dataclass(frozen=True)
class LossNodes:
    """One privacy loss composed ``count`` times: losses ``s`` at quadrature nodes and the
    logarithms ``log_m`` of their P-weights (which sum to about ``1 - inf_mass``);
    ``inf_mass``: the P-probability of an infinite loss; ``t_max``: the largest tilt the nodes
    resolve (their range covers the tilted measure up to it); ``spacing``: the step of the
    lattice the losses lie on (0: none; a grid's upper discretisation lies on one)."""

    s: np.ndarray
    log_m: np.ndarray
    count: float
    t_max: float = math.inf
    inf_mass: float = 0.0
    spacing: float = 0.0

    def _tilted(self, t: float) -> tuple[float, np.ndarray]:
        a = self.log_m + t * self.s
        top = float(np.max(a))
        return top, np.exp(a - top)

    def cumulants(self, t: float) -> tuple[float, float, float]:
        """``(K(t), K'(t), K''(t))`` of the composition of ``count`` copies."""
        top, w = self._tilted(t)
        total = float(np.sum(w))
        mean = float(np.dot(w, self.s)) / total
        var = float(np.dot(w, (self.s - mean) ** 2)) / total
        return self.count * (top + math.log(total)), self.count * mean, self.count * var

    def log_ratio(self, t: float, y: np.ndarray) -> np.ndarray:
        """``count (K(t + iy) - K(t))`` at the real ``y``."""
        _, w = self._tilted(t)
        total = float(np.sum(w))
        keep = w > TRIM * total
        angle = np.outer(y, self.s[keep])
        values = np.cos(angle) @ w[keep] + 1j * (np.sin(angle) @ w[keep])
        return self.count * (np.log(values) - math.log(total))


@dataclasses.dataclass(frozen=True)
class Profile:
    """The forecast ``delta`` at ``epsilon``, ``d delta / d epsilon`` there, and the saddle
    point ``t`` (the start of the next forecast's search); ``log_delta`` and ``dlog`` (``d log
    delta / d epsilon``) stay finite where ``delta`` underflows (a Chernoff estimate far in the
    tail)."""

    delta: float
    slope: float
    t: float
    log_delta: float
    dlog: float


def _saddle(
    parts: Sequence[LossNodes], epsilon: float, guess: float
) -> tuple[float, float, float] | None:
    """``(t, K(t), K''(t))`` with ``K'(t) = epsilon``: Newton's method from ``guess``,
    safeguarded by bisection (``K'`` increases); ``t`` is the largest tilt the nodes resolve
    when ``K'`` stays below ``epsilon`` up to it; None below :data:`MIN_SADDLE`."""
    t_max = min(p.t_max for p in parts)

    def at(t: float) -> tuple[float, float, float]:
        k = [p.cumulants(t) for p in parts]
        return sum(c[0] for c in k), sum(c[1] for c in k), sum(c[2] for c in k)

    lo, hi = MIN_SADDLE, t_max
    t = min(max(guess, lo), t_max)
    last_step = math.inf
    for _ in range(100):
        k0, k1, k2 = at(t)
        if not (k2 > 0 and math.isfinite(k0) and math.isfinite(k1)):
            return None
        if k1 < epsilon:
            if t >= t_max:
                return t, k0, k2  # beyond what the nodes resolve
            lo = t
        else:
            if t <= MIN_SADDLE:
                return None  # the target is at or below the mean loss
            hi = t
        step = (k1 - epsilon) / k2
        if abs(step) <= 1e-10 * t:
            return None if t - step < MIN_SADDLE else (t, k0, k2)
        t_next = t - step
        # Newton's step when it stays in the bracket and at least halves the last one (else
        # it may cycle where K' bends sharply: Numerical Recipes' rtsafe), else bisection
        if not (lo < t_next < hi and abs(step) <= last_step / 2):
            t_next = 2 * lo if math.isinf(hi) else (lo + hi) / 2
            if t_next == t:  # the bracket is one float wide
                return None if t <= MIN_SADDLE * (1 + 1e-9) else (t, k0, k2)
        last_step = abs(t_next - t)
        t = t_next
    return None


def _log_ratio(parts: Sequence[LossNodes], t: float, y: np.ndarray) -> np.ndarray:
    total = np.zeros(len(y), dtype=np.complex128)
    for p in parts:
        total += p.log_ratio(t, y)
    return total


def saddle_point(
    parts: Sequence[LossNodes], epsilon: float, guess: float = 1.0
) -> tuple[float, float, float] | None:
    """``(t, K(t), K''(t))`` at the saddle point ``K'(t) = epsilon`` searched from ``guess``
    (``t`` the largest tilt the nodes resolve when it lies beyond), or None when there is none
    (the target at or below the mean loss)."""
    return _saddle(parts, epsilon, guess) if parts else None


def leading_term(
    parts: Sequence[LossNodes], epsilon: float, saddle: tuple[float, float, float]
) -> float:
    """The saddle-point approximation's leading term ``exp(K(t) - t eps) / (t (t + 1)
    sqrt(2 pi K''(t)))`` at the saddle point ``(t, K(t), K''(t))`` (Daniels 1954): a cheap first
    look, to tell which of several losses has the larger profile."""
    t, k0, k2 = saddle
    # at most 1 at the saddle point (the Chernoff bound's infimum); capped beyond the nodes
    return math.exp(min(k0 - t * epsilon, 0.0)) / (t * (t + 1) * math.sqrt(2 * math.pi * k2))


def profile(
    parts: Sequence[LossNodes],
    epsilon: float,
    guess: float = 1.0,
    saddle: tuple[float, float, float] | None = None,
) -> Profile | None:
    """The forecast privacy profile of the composition at ``epsilon`` (see the module's
    docstring), the saddle point searched from ``guess`` (or given, ``saddle``, as
    :func:`saddle_point` returns it); None when there is no trustworthy
    forecast (the target at or below the mean loss, a loss not concentrated enough, a value
    that is not finite)."""
    if not parts:
        return None
    found = saddle or _saddle(parts, epsilon, guess)
    if found is None:
        return None
    t, k0, k2 = found
    if t >= min(p.t_max for p in parts):
        # beyond the tilts the nodes resolve: epsilon is far in the loss's tail, and delta is
        # at most about the Chernoff bound E[exp(t (L - eps))] = exp(K(t) - t eps)
        exponent = k0 - t * epsilon
        if exponent >= 0:
            return None  # not below 1: delta is not small
        chernoff = math.exp(exponent)
        return Profile(chernoff, -t * chernoff, t, exponent, -t)
    width = 1.0 / math.sqrt(k2)
    step = min(0.7 * width, t / 3)
    y = np.arange(math.ceil(WIDTHS * width / step) + 1) * step
    # losses on a lattice of step h: the integrand has period 2 pi / h in y, and a rule that
    # reaches half of it would add an alias
    lattice = max(p.spacing for p in parts)
    if y[-1] * lattice >= math.pi:
        return None
    log_ratio = _log_ratio(parts, t, y)
    while True:  # widen the rule until the integrand has fallen off at its end
        if not np.all(np.isfinite(log_ratio)):
            return None
        if np.max(log_ratio[-max(1, len(y) // 10) :].real) <= math.log(TAIL):
            break
        if 2 * len(y) > MAX_NODES or y[-1] * lattice >= math.pi:
            return None
        more = y[-1] + step * np.arange(1, len(y) + 1)
        y = np.concatenate([y, more])
        log_ratio = np.concatenate([log_ratio, _log_ratio(parts, t, more)])
    nodes = len(y)
    z = t + 1j * y
    core = np.exp(log_ratio - 1j * y * epsilon) / (z + 1)
    weights = np.full(nodes, step)
    weights[0] /= 2
    scale = math.exp(k0 - t * epsilon) / math.pi
    # an infinite loss in any copy: the profile is 1 there (the integral covers the rest)
    infinite = -math.expm1(sum(p.count * math.log1p(-p.inf_mass) for p in parts))
    delta = infinite + scale * float(np.sum(weights * (core / z).real))
    slope = -scale * float(np.sum(weights * core.real))
    if not (math.isfinite(delta) and 0 < delta < 1 and math.isfinite(slope) and slope < 0):
        return None
    return Profile(delta, slope, t, math.log(delta), slope / delta)
