"""Privacy loss distributions of primitive mechanisms and of their Poisson-subsampled forms.

Each builder returns a :class:`~dpaudit.pld.pair.PLDPair` (both neighbouring directions) on a
grid of step ``value_discretization``.  Discrete mechanisms are sums of atoms; continuous ones
are integrated bin by bin in the output space, where the loss ``L(x)`` is increasing.

Numerics of the continuous builders.  On the bin between grid losses ``s_j`` and ``s_{j+1}`` the
four integrals of the connect-the-dots split and of the post-processing kernel are written with
``t(x) = L(x) - s_j`` in the numerically stable forms ``Q e^t expm1(h - t)``, ``Q e^h expm1(t)``,
``Q expm1(h - t)`` and ``Q e^{h-t} expm1(t)`` (no cancellation), and computed with
Gauss-Legendre quadrature (5 points) on panels no wider than a sixteenth of the noise scale.
The quadrature error of each panel is estimated by the distance to the 4-point rule (an
over-estimate by many orders for these analytic integrands) plus 64 ulps of rounding, and is
added to the error bounds; the rounding of ``L`` at bin edges is added to the loss shift.

Neighbouring relations: the plain mechanisms are symmetric, so both directions coincide.  For
Poisson subsampling with probability q of a mechanism with dominating pair ``(P, Q)`` the
dominating pairs are ``((1-q) Q + q P, Q)`` (remove a record) and ``(P, (1-q) P + q Q)`` (add a
record) (Zhu, Dong, Wang 2022, Theorem 11), under the add/remove relation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import log_ndtr, ndtri, roots_legendre

from dpaudit.pld.distribution import (
    DEFAULT_TAIL,
    LowerPLD,
    PrivacyLossDistribution,
    UpperPLD,
)
from dpaudit.pld.fft import UNIT_ROUNDOFF
from dpaudit.pld.pair import PLDPair

__all__ = [
    "DEFAULT_DISCRETIZATION",
    "bounded_range",
    "discrete_gaussian",
    "discrete_laplace",
    "from_atoms",
    "gaussian",
    "generic",
    "laplace",
    "randomized_response",
]

#: Default grid step of the privacy loss.
DEFAULT_DISCRETIZATION = 1e-4

#: Default mass cut from each tail of a continuous output distribution (moved to +inf).
BASE_TAIL = 1e-18

_X8, _W8 = roots_legendre(5)
_X4, _W4 = roots_legendre(4)
_LOG2PI_HALF = 0.5 * math.log(2 * math.pi)


def _check_positive(name: str, value: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_probability(name: str, value: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not (0 < value <= 1):
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return float(value)


def _check_h(h: float) -> float:
    h = _check_positive("value_discretization", h)
    if h > 1:
        raise ValueError(f"value_discretization must be in (0, 1], got {h!r}")
    return h


class _Accumulator:
    """Collects the masses of one direction before it becomes a PrivacyLossDistribution."""

    def __init__(self, h: float, j0: int, j1: int) -> None:
        self.h = h
        self.j0 = j0
        n = j1 - j0 + 1
        self.m = np.zeros(n)
        self.p = np.zeros(n)
        self.qt = np.zeros(n)
        self.inf_up = 0.0
        self.p_inf = 0.0
        self.err_up = 0.0
        self.err_low = 0.0
        self.shift = 0.0

    def grid(self) -> np.ndarray:
        return (self.j0 + np.arange(len(self.m))) * self.h

    def add_atom(self, loss: float, p_mass: float, q_mass: float) -> None:
        """An outcome with P-mass ``p_mass`` and Q-mass ``q_mass`` at loss ``log(p/q)``."""
        h = self.h
        if p_mass <= 0 and q_mass <= 0:
            return
        if q_mass <= 0:  # loss +inf
            self.inf_up += p_mass
            self.p_inf += p_mass
            return
        if p_mass <= 0:  # loss -inf: only the test measure sees its Q-mass, at the lowest point
            self.qt[0] += q_mass * math.exp(self.j0 * h)
            self.err_low += 4 * UNIT_ROUNDOFF * self.qt[0]
            return
        j = math.floor(loss / h)
        t = loss - j * h
        if t >= h:  # rounding of the floor
            j, t = j + 1, t - h
        i = j - self.j0
        if i < 0 or i + 1 >= len(self.m):
            raise ValueError(f"internal: atom at loss {loss} outside the grid")
        w = 1.0 if t == 0.0 and loss == j * h else math.expm1(h - t) / math.expm1(h)
        self.m[i] += p_mass * w
        self.m[i + 1] += p_mass * (1 - w)
        self.p[i] += p_mass * w
        self.p[i + 1] += p_mass * (1 - w)
        self.qt[i] += q_mass * math.exp(j * h) * w
        self.qt[i + 1] += q_mass * math.exp((j + 1) * h) * (1 - w)
        self.err_up += 8 * UNIT_ROUNDOFF * p_mass
        self.err_low += 8 * UNIT_ROUNDOFF * (p_mass + q_mass * math.exp((j + 1) * h))
        self.shift = max(self.shift, 4 * UNIT_ROUNDOFF * (abs(loss) + abs(j * h) + h))

    def build(self, tail: float) -> PrivacyLossDistribution:
        nz = np.nonzero((self.m > 0) | (self.qt > 0) | (self.p > 0))[0]
        lo, hi = (int(nz[0]), int(nz[-1]) + 1) if nz.size else (0, 1)
        off = self.j0 + lo
        upper = UpperPLD(self.h, off, self.m[lo:hi].copy(),
                         (self.inf_up + self.err_up) * (1 + 1e-12), self.shift)
        lower = LowerPLD(self.h, off, self.p[lo:hi].copy(), self.qt[lo:hi].copy(),
                         self.p_inf * (1 - 1e-12), self.err_low * (1 + 1e-9))
        return PrivacyLossDistribution(upper, lower, tail)


def from_atoms(outcomes: Sequence[tuple[float, float]],
               value_discretization: float = DEFAULT_DISCRETIZATION,
               tail: float = DEFAULT_TAIL) -> PrivacyLossDistribution:
    """The PLD of a pair of discrete distributions given outcome by outcome.

    Args:
        outcomes: ``(P(o), Q(o))`` for every outcome ``o`` (masses in [0, 1]; zero allowed on
            one side, giving loss +inf or -inf).
        value_discretization: the grid step h.
        tail: the tail mass dropped per composition window.

    Returns:
        The :class:`PrivacyLossDistribution` of ``(P, Q)``.

    Raises:
        ValueError: on negative masses or totals above 1.
    """
    h = _check_h(value_discretization)
    ps = [float(a) for a, _ in outcomes]
    qs = [float(b) for _, b in outcomes]
    negative = any(a < 0 or b < 0 for a, b in zip(ps, qs, strict=True))
    if negative or sum(ps) > 1 + 1e-9 or sum(qs) > 1 + 1e-9:
        raise ValueError("outcomes must be pairs of non-negative masses summing to at most 1 "
                         "on each side")
    losses = [math.log(a) - math.log(b) for a, b in zip(ps, qs, strict=False) if a > 0 and b > 0]
    if losses:
        j0, j1 = math.floor(min(losses) / h) - 1, math.ceil(max(losses) / h) + 1
    else:
        j0, j1 = 0, 1
    acc = _Accumulator(h, j0, j1)
    for a, b in zip(ps, qs, strict=False):
        acc.add_atom(math.log(a) - math.log(b) if a > 0 and b > 0 else 0.0, a, b)
    return acc.build(tail)


def _subsampled_outcomes(outcomes: Sequence[tuple[float, float]], q: float,
                         direction: str) -> list[tuple[float, float]]:
    if q == 1:
        return list(outcomes)
    if direction == "remove":
        return [((1 - q) * b + q * a, b) for a, b in outcomes]
    return [(a, (1 - q) * a + q * b) for a, b in outcomes]


def _atomic_pair(outcomes: list[tuple[float, float]], q: float, h: float,
                 tail: float) -> PLDPair:
    remove = from_atoms(_subsampled_outcomes(outcomes, q, "remove"), h, tail)
    if q == 1 and sorted(outcomes) == sorted((b, a) for a, b in outcomes):
        return PLDPair(remove, remove)
    add = from_atoms(_subsampled_outcomes(outcomes, q, "add"), h, tail)
    return PLDPair(remove, add)


def generic(epsilon: float, delta: float = 0.0, *, sampling_probability: float = 1.0,
            value_discretization: float = DEFAULT_DISCRETIZATION,
            tail: float = DEFAULT_TAIL) -> PLDPair:
    """The PLD of the dominating pair of every (epsilon, delta)-DP mechanism.

    The pair ``P = (delta, (1-delta) e^eps/(1+e^eps), (1-delta)/(1+e^eps), 0)``,
    ``Q = (0, (1-delta)/(1+e^eps), (1-delta) e^eps/(1+e^eps), delta)`` dominates every
    (eps, delta)-DP pair (Kairouz, Oh, Viswanath 2015, Theorem 2.1; Murtagh and Vadhan 2016).

    Privacy: for every (eps, delta)-DP mechanism M and neighbours D, D', the hockey-stick
    divergence ``H_{e^x}(M(D) || M(D')) <= delta_upper(x)`` of the returned PLD for all x, and with
    ``sampling_probability`` q < 1 the same holds for M run on a Poisson subsample (add/remove).

    Args:
        epsilon: eps >= 0.
        delta: delta in [0, 1].
        sampling_probability: Poisson sampling probability q in (0, 1].
        value_discretization: grid step.
        tail: tail mass per composition window.

    Raises:
        ValueError: on parameters out of range.
    """
    if not isinstance(epsilon, (int, float)) or not (0 <= epsilon < 700):
        raise ValueError(f"epsilon must be in [0, 700), got {epsilon!r}")
    if not isinstance(delta, (int, float)) or not (0 <= delta <= 1):
        raise ValueError(f"delta must be in [0, 1], got {delta!r}")
    q = _check_probability("sampling_probability", sampling_probability)
    z = 1 + math.exp(epsilon)
    a, b = (1 - delta) * math.exp(epsilon) / z, (1 - delta) / z
    outcomes = [(delta, 0.0), (a, b), (b, a), (0.0, delta)]
    return _atomic_pair(outcomes, q, _check_h(value_discretization), tail)


def randomized_response(epsilon: float, num_outputs: int = 2, *,
                        sampling_probability: float = 1.0,
                        value_discretization: float = DEFAULT_DISCRETIZATION,
                        tail: float = DEFAULT_TAIL) -> PLDPair:
    """The PLD of k-ary randomized response (Warner 1965; Kairouz, Oh, Viswanath 2016).

    The true value is reported with probability ``e^eps / (e^eps + k - 1)``, each other value
    with ``1 / (e^eps + k - 1)``; neighbouring inputs differ in the reported record.

    Privacy: the returned bounds enclose the hockey-stick divergence of the two output laws for
    two different true values (replace-one relation), which is the worst case.

    Raises:
        ValueError: if epsilon < 0 or num_outputs < 2.
    """
    if not isinstance(epsilon, (int, float)) or not (0 <= epsilon < 700):
        raise ValueError(f"epsilon must be in [0, 700), got {epsilon!r}")
    if not isinstance(num_outputs, int) or num_outputs < 2:
        raise ValueError(f"num_outputs must be an integer >= 2, got {num_outputs!r}")
    q = _check_probability("sampling_probability", sampling_probability)
    z = math.exp(epsilon) + num_outputs - 1
    big, small = math.exp(epsilon) / z, 1 / z
    outcomes = [(big, small), (small, big)]
    if num_outputs > 2:
        outcomes.append(((num_outputs - 2) / z, (num_outputs - 2) / z))
    return _atomic_pair(outcomes, q, _check_h(value_discretization), tail)


def discrete_laplace(scale: float, sensitivity: int = 1, *, sampling_probability: float = 1.0,
                     value_discretization: float = DEFAULT_DISCRETIZATION,
                     tail: float = DEFAULT_TAIL) -> PLDPair:
    """The PLD of the discrete Laplace mechanism, ``P(x) ∝ exp(-|x| / scale)`` on the integers.

    Privacy: with integer sensitivity Delta the loss takes the values ``(|x - Delta| - |x|)/scale``
    in ``[-Delta/scale, Delta/scale]``; the returned bounds enclose its privacy profile.

    Raises:
        ValueError: if scale <= 0 or the sensitivity is not a positive integer.
    """
    t = _check_positive("scale", scale)
    if not isinstance(sensitivity, int) or sensitivity < 1:
        raise ValueError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    q = _check_probability("sampling_probability", sampling_probability)
    r = math.exp(-1 / t)
    norm = (1 - r) / (1 + r)

    def mass(x: int) -> float:
        return norm * r ** abs(x)

    # P = law of X, Q = law of X + Delta; outcomes x <= 0, 0 < x < Delta, x >= Delta
    d = sensitivity
    below_p = norm / (1 - r)  # P(X <= 0)
    below_q = norm * r**d / (1 - r)  # P(X + d <= 0) = P(X <= -d)
    above_p = norm * r**d / (1 - r)  # P(X >= d)
    above_q = norm / (1 - r)  # P(X + d >= d)
    outcomes = [(below_p, below_q), (above_p, above_q)]
    outcomes += [(mass(x), mass(x - d)) for x in range(1, d)]
    return _atomic_pair(outcomes, q, _check_h(value_discretization), tail)


def discrete_gaussian(sigma: float, sensitivity: int = 1, *, sampling_probability: float = 1.0,
                      value_discretization: float = DEFAULT_DISCRETIZATION,
                      tail: float = DEFAULT_TAIL) -> PLDPair:
    """The PLD of the discrete Gaussian ``P(x) ∝ exp(-x^2 / (2 sigma^2))`` (Canonne, Kamath,
    Steinke 2020).

    Outcomes with ``|x| > 12 sigma + Delta + 1`` are merged into two tail outcomes, each with
    its exact-bounded mass moved to loss +inf (upper side), so nothing is dropped.

    Privacy: the returned bounds enclose the privacy profile of the pair
    ``(N_Z(0, sigma^2), N_Z(Delta, sigma^2))``.

    Raises:
        ValueError: if sigma <= 0 or the sensitivity is not a positive integer.
    """
    s = _check_positive("sigma", sigma)
    if not isinstance(sensitivity, int) or sensitivity < 1:
        raise ValueError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    q = _check_probability("sampling_probability", sampling_probability)
    d = sensitivity
    reach = math.ceil(12 * s + d + 1)
    xs = np.arange(-reach - d, reach + d + 1)
    logw = -(xs.astype(float) ** 2) / (2 * s * s)
    logz = float(np.logaddexp.reduce(logw))
    # mass outside [-R, R] of the unnormalised weights is below 2 sum_{x>R} e^{-x^2/2s^2}
    outside = 2 * math.exp(-(reach + d) ** 2 / (2 * s * s) - logz) / (
        1 - math.exp(-(reach + d) / (s * s)))
    probs = np.exp(logw - logz)
    pmap = dict(zip(xs.tolist(), probs.tolist(), strict=False))
    outcomes = [(pmap[x], pmap[x - d]) for x in range(-reach, reach + 1)]
    leftover = max(0.0, 1 - sum(a for a, _ in outcomes)) + outside
    outcomes.append((leftover, 0.0))  # conservatively treated as loss +inf
    return _atomic_pair(outcomes, q, _check_h(value_discretization), tail)


# --------------------------------------------------------------------------- continuous


class _ContinuousPair:
    """A pair on the real line with an increasing loss on ``(xa, xb)``.

    ``logp``/``logq`` are log densities, ``loss`` the log ratio, ``inverse`` its inverse on the
    grid, ``scale`` the noise scale (panel width is scale/16), ``tail_masses(xa, xb)`` returns
    ``(P below, Q below, P above, Q above)`` of the cut points, and ``atoms`` lists outcomes
    outside ``(xa, xb)`` that are point masses of the loss.
    """

    def __init__(self, *, logp: Callable[[np.ndarray], np.ndarray],
                 logq: Callable[[np.ndarray], np.ndarray],
                 loss: Callable[[np.ndarray], np.ndarray],
                 inverse: Callable[[np.ndarray], np.ndarray],
                 xa: float, xb: float, scale: float,
                 tails: tuple[float, float, float, float],
                 atoms: Sequence[tuple[float, float]] = ()) -> None:
        self.logp, self.logq, self.loss, self.inverse = logp, logq, loss, inverse
        self.xa, self.xb, self.scale, self.tails, self.atoms = xa, xb, scale, tails, atoms


def _integrate_bins(pair: _ContinuousPair, acc: _Accumulator, xb: np.ndarray) -> None:
    """Add the continuous part of ``pair`` to ``acc``; ``xb[i]`` is the x of grid point i."""
    h = acc.h
    s = acc.grid()
    width = np.diff(xb)
    panels = np.maximum(1, np.ceil(width / (pair.scale / 16))).astype(np.int64)
    bins = np.repeat(np.arange(len(width)), panels)
    first = np.repeat(np.cumsum(panels) - panels, panels)
    k = np.arange(len(bins)) - first
    pw = width[bins] / panels[bins]
    a = xb[bins] + k * pw
    mid, half = a + pw / 2, pw / 2
    sj = s[bins]
    em1h = math.expm1(h)

    def integrals(nodes: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, ...]:
        x = mid[:, None] + half[:, None] * nodes[None, :]
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            t = np.clip(pair.loss(x) - sj[:, None], 0.0, h)
            wq = np.exp(pair.logq(x) + sj[:, None]) * (weights[None, :] * half[:, None])
            em_t = np.expm1(t)
            em_ht = np.expm1(h - t)
            wq_em_ht = wq * em_ht
            wq_em_t = wq * em_t
            i1 = np.sum(wq_em_ht + wq_em_ht * em_t, axis=1)  # e^t expm1(h-t)
            i2 = np.sum(wq_em_t, axis=1) * math.exp(h)  # e^h expm1(t)
            i3 = np.sum(wq_em_ht, axis=1)  # expm1(h-t)
            i4 = np.sum(wq_em_t + wq_em_t * em_ht, axis=1) * math.exp(h)  # e^{h-t} expm1(t) e^h
        return i1, i2, i3, i4

    r8 = integrals(_X8, _W8)
    r4 = integrals(_X4, _W4)
    nb = len(width)
    sums = []
    errs = []
    for v8, v4 in zip(r8, r4, strict=False):
        v8 = np.nan_to_num(v8)
        e = np.abs(v8 - np.nan_to_num(v4)) + 64 * UNIT_ROUNDOFF * np.abs(v8)
        sums.append(np.bincount(bins, weights=v8, minlength=nb) / em1h)
        errs.append(np.bincount(bins, weights=e, minlength=nb) / em1h * (1 + 1e-12))
    pw_, p1w, qw_t, q1w_t = sums
    acc.m[:-1] += pw_
    acc.m[1:] += p1w
    acc.p[:-1] += pw_
    acc.p[1:] += p1w
    acc.qt[:-1] += qw_t
    acc.qt[1:] += q1w_t
    acc.err_up += float(np.sum(errs[0]) + np.sum(errs[1]))
    acc.err_low += float(np.sum(errs[0]) + np.sum(errs[1]) + np.sum(errs[2]) + np.sum(errs[3]))
    # loss rounding at bin edges (L is monotone, so the edges bound the deviation)
    with np.errstate(invalid="ignore", over="ignore"):
        le = pair.loss(xb)
    dev_lo = np.nan_to_num(s[:-1] - le[:-1], nan=0.0)
    dev_hi = np.nan_to_num(le[1:] - s[1:], nan=0.0)
    inner = np.isfinite(le)
    used = width > 0
    dev = max(0.0, float(np.max(dev_lo[inner[:-1] & used], initial=0.0)),
              float(np.max(dev_hi[inner[1:] & used], initial=0.0)))
    rnd = 8 * UNIT_ROUNDOFF * (1 + float(np.max(np.abs(le[inner]), initial=0.0)))
    acc.shift = max(acc.shift, dev + rnd)


def _continuous_pld(pair: _ContinuousPair, h: float, tail: float) -> PrivacyLossDistribution:
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        la, lb = float(pair.loss(np.array([pair.xa]))[0]), float(pair.loss(np.array([pair.xb]))[0])
    losses = [la, lb] + [math.log(a) - math.log(b) for a, b in pair.atoms if a > 0 and b > 0]
    j0 = math.floor(min(losses) / h) - 1
    j1 = math.ceil(max(losses) / h) + 1
    acc = _Accumulator(h, j0, j1)
    s = acc.grid()
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        xb = pair.inverse(s)
    xb = np.where(np.isnan(xb) | (s <= la), pair.xa, xb)
    xb = np.clip(xb, pair.xa, pair.xb)
    xb[s >= lb] = pair.xb
    _integrate_bins(pair, acc, xb)
    p_lo, q_lo, p_hi, q_hi = pair.tails
    # below the cut: losses <= L(xa); upper side moves them up to L(xa), lower side to grid j0
    if p_lo > 0:
        up = _Accumulator(h, j0, j1)
        up.add_atom(la, p_lo * (1 + 1e-12), p_lo * math.exp(-la))
        acc.m += up.m
        acc.err_up += up.err_up
    acc.p[0] += p_lo * (1 - 1e-12)
    acc.qt[0] += q_lo * math.exp(j0 * h) * (1 + 1e-12)
    # above the cut: upper side to +inf, lower side to grid j1
    acc.inf_up += p_hi * (1 + 1e-12)
    acc.p[-1] += p_hi * (1 - 1e-12)
    acc.qt[-1] += q_hi * math.exp(j1 * h) * (1 + 1e-12)
    for a, b in pair.atoms:
        acc.add_atom(math.log(a) - math.log(b) if a > 0 and b > 0 else 0.0, a, b)
    return acc.build(tail)


def _norm_logpdf(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    z = (x - mu) / sigma
    return -0.5 * z * z - _LOG2PI_HALF - math.log(sigma)


def _gaussian_pair(sigma: float, q: float, direction: str, base_tail: float) -> _ContinuousPair:
    """Sensitivity-1 Gaussian pairs: remove ``((1-q)N(0)+qN(1), N(0))``, add ``(N(0),
    (1-q)N(0)+qN(-1))`` (the add pair reflected so that the loss increases)."""
    s2 = sigma * sigma
    lq = math.log(q)
    l1q = math.log1p(-q) if q < 1 else -math.inf
    z = -float(ndtri(base_tail))
    xa, xb = -1 - z * sigma, 1 + z * sigma
    if direction == "remove":
        def logq(x: np.ndarray) -> np.ndarray:
            return _norm_logpdf(x, 0.0, sigma)

        def logp(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q + _norm_logpdf(x, 0.0, sigma), lq + _norm_logpdf(x, 1.0, sigma))

        def loss(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q, lq + (2 * x - 1) / (2 * s2))

        def inverse(s: np.ndarray) -> np.ndarray:
            return s2 * (np.log(np.expm1(s) + q) - lq) + 0.5
        centres_p, centres_q = ((0.0, 1 - q), (1.0, q)), ((0.0, 1.0),)
    else:
        def logp(x: np.ndarray) -> np.ndarray:
            return _norm_logpdf(x, 0.0, sigma)

        def logq(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q + _norm_logpdf(x, 0.0, sigma),
                                lq + _norm_logpdf(x, -1.0, sigma))

        def loss(x: np.ndarray) -> np.ndarray:
            return -np.logaddexp(l1q, lq - (2 * x + 1) / (2 * s2))

        def inverse(s: np.ndarray) -> np.ndarray:
            return -s2 * (np.log(np.expm1(-s) + q) - lq) - 0.5
        centres_p, centres_q = ((0.0, 1.0),), ((0.0, 1 - q), (-1.0, q))

    def mix_cdf(centres: tuple[tuple[float, float], ...], x: float, upper: bool) -> float:
        tot = 0.0
        for c, wgt in centres:
            if wgt > 0:
                arg = (c - x) / sigma if upper else (x - c) / sigma
                tot += wgt * math.exp(float(log_ndtr(arg)))
        return tot

    tails = (mix_cdf(centres_p, xa, False), mix_cdf(centres_q, xa, False),
             mix_cdf(centres_p, xb, True), mix_cdf(centres_q, xb, True))
    return _ContinuousPair(logp=logp, logq=logq, loss=loss, inverse=inverse, xa=xa, xb=xb,
                           scale=sigma, tails=tails)


def gaussian(sigma: float, sensitivity: float = 1.0, *, sampling_probability: float = 1.0,
             value_discretization: float = DEFAULT_DISCRETIZATION,
             tail: float = DEFAULT_TAIL, base_tail: float = BASE_TAIL) -> PLDPair:
    """The PLD of the Gaussian mechanism, optionally Poisson-subsampled.

    Privacy: for the Gaussian mechanism ``f(D) + N(0, sigma^2)`` with l2-sensitivity Delta the
    privacy profile is that of ``(N(Delta, sigma^2), N(0, sigma^2))`` (Balle and Wang 2018,
    Theorem 8); with Poisson sampling probability q the dominating pairs of Zhu, Dong, Wang 2022
    (Theorem 11) are used for both directions of the add/remove relation.  The returned
    bounds satisfy ``delta_lower(eps) <= delta(eps) <= delta_upper(eps)``.

    Args:
        sigma: noise standard deviation > 0.
        sensitivity: l2 sensitivity > 0.
        sampling_probability: q in (0, 1].
        value_discretization: grid step h.
        tail: tail mass per composition window.
        base_tail: output mass cut from each tail (moved to loss +inf on the upper side).

    Raises:
        ValueError: on parameters out of range.
    """
    sig = _check_positive("sigma", sigma) / _check_positive("sensitivity", sensitivity)
    q = _check_probability("sampling_probability", sampling_probability)
    h = _check_h(value_discretization)
    if sig < 1e-3:
        raise ValueError(f"sigma / sensitivity must be >= 1e-3 for the PLD grid, got {sig!r}")
    remove = _continuous_pld(_gaussian_pair(sig, q, "remove", base_tail), h, tail)
    if q == 1:
        return PLDPair(remove, remove)
    add = _continuous_pld(_gaussian_pair(sig, q, "add", base_tail), h, tail)
    return PLDPair(remove, add)


def _laplace_pair(b: float, q: float, direction: str) -> _ContinuousPair:
    """Sensitivity-1 Laplace pairs with scale b: remove ``((1-q)Lap(0)+qLap(1), Lap(0))``,
    add ``(Lap(1), (1-q)Lap(1)+qLap(0))``; the loss is flat outside (0, 1) (two atoms)."""
    lq = math.log(q)
    l1q = math.log1p(-q) if q < 1 else -math.inf

    def lap_logpdf(x: np.ndarray, mu: float) -> np.ndarray:
        return -np.abs(x - mu) / b - math.log(2 * b)

    # masses of x <= 0 and x >= 1 under Lap(0) and Lap(1)
    m0_left, m0_right = 0.5, 0.5 * math.exp(-1 / b)
    m1_left, m1_right = 0.5 * math.exp(-1 / b), 0.5
    if direction == "remove":
        def logp(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q + lap_logpdf(x, 0.0), lq + lap_logpdf(x, 1.0))

        def logq(x: np.ndarray) -> np.ndarray:
            return lap_logpdf(x, 0.0)

        def loss(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q, lq + (np.abs(x) - np.abs(x - 1)) / b)

        def inverse(s: np.ndarray) -> np.ndarray:
            return 0.5 * (1 + b * (np.log(np.expm1(s) + q) - lq))
        atoms = [((1 - q) * m0_left + q * m1_left, m0_left),
                 ((1 - q) * m0_right + q * m1_right, m0_right)]
    else:
        def logp(x: np.ndarray) -> np.ndarray:
            return lap_logpdf(x, 1.0)

        def logq(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q + lap_logpdf(x, 1.0), lq + lap_logpdf(x, 0.0))

        def loss(x: np.ndarray) -> np.ndarray:
            return -np.logaddexp(l1q, lq + (np.abs(x - 1) - np.abs(x)) / b)

        def inverse(s: np.ndarray) -> np.ndarray:
            return 0.5 * (1 - b * (np.log(np.expm1(-s) + q) - lq))
        atoms = [(m1_left, (1 - q) * m1_left + q * m0_left),
                 (m1_right, (1 - q) * m1_right + q * m0_right)]
    return _ContinuousPair(logp=logp, logq=logq, loss=loss, inverse=inverse, xa=0.0, xb=1.0,
                           scale=b, tails=(0.0, 0.0, 0.0, 0.0), atoms=atoms)


def laplace(scale: float, sensitivity: float = 1.0, *, sampling_probability: float = 1.0,
            value_discretization: float = DEFAULT_DISCRETIZATION,
            tail: float = DEFAULT_TAIL) -> PLDPair:
    """The PLD of the Laplace mechanism, optionally Poisson-subsampled.

    Privacy: the profile of ``f(D) + Lap(b)`` with l1-sensitivity Delta is that of
    ``(Lap(Delta, b), Lap(0, b))`` (Koskela, Jalko, Honkela 2020, Section 6); it has atoms at
    ``+-Delta/b`` and a continuous part between.  Subsampled pairs as in :func:`gaussian`.

    Args:
        scale: b > 0.
        sensitivity: l1 sensitivity > 0.
        sampling_probability: q in (0, 1].
        value_discretization: grid step h.
        tail: tail mass per composition window.

    Raises:
        ValueError: on parameters out of range.
    """
    b = _check_positive("scale", scale) / _check_positive("sensitivity", sensitivity)
    q = _check_probability("sampling_probability", sampling_probability)
    h = _check_h(value_discretization)
    if 1 / b > 700:
        raise ValueError(f"sensitivity / scale must be <= 700, got {1 / b!r}")
    remove = _continuous_pld(_laplace_pair(b, q, "remove"), h, tail)
    if q == 1:
        return PLDPair(remove, remove)
    return PLDPair(remove, _continuous_pld(_laplace_pair(b, q, "add"), h, tail))


def _bounded_range_pair(epsilon: float) -> _ContinuousPair:
    """The pair dominating every eps-BR pair: P-loss density e^{(l-eps)/2}/(2(1-e^{-eps})) on
    (-eps, eps), no atoms (see :mod:`dpaudit.theorems.bounded_range`)."""
    log_norm = math.log(2 * -math.expm1(-epsilon))

    def logp(x: np.ndarray) -> np.ndarray:
        return (x - epsilon) / 2 - log_norm

    def logq(x: np.ndarray) -> np.ndarray:
        return (-x - epsilon) / 2 - log_norm

    def ident(x: np.ndarray) -> np.ndarray:
        return x

    return _ContinuousPair(logp=logp, logq=logq, loss=ident, inverse=ident, xa=-epsilon,
                           xb=epsilon, scale=max(epsilon, 1e-3) * 4,
                           tails=(0.0, 0.0, 0.0, 0.0))


def bounded_range(epsilon: float, *, value_discretization: float = DEFAULT_DISCRETIZATION,
                  tail: float = DEFAULT_TAIL) -> PLDPair:
    """The PLD of the pair dominating every eps-bounded-range mechanism.

    Privacy: every eps-BR pair (e.g. the exponential mechanism with parameter eps) is a
    post-processing of this pair (Dong, Durfee, Rogers 2020, reduction to generalized
    randomized response, with the supremum over t in closed form), so the *upper* bounds of the
    returned PLD and of its compositions hold for adaptive compositions of eps-BR mechanisms
    (Zhu, Dong, Wang 2022, Theorem 10).  The lower bounds refer to this dominating pair, not
    to a particular mechanism.

    Raises:
        ValueError: if epsilon is not in (0, 700).
    """
    e = _check_positive("epsilon", epsilon)
    if e >= 700:
        raise ValueError(f"epsilon must be in (0, 700), got {epsilon!r}")
    d = _continuous_pld(_bounded_range_pair(e), _check_h(value_discretization), tail)
    return PLDPair(d, d)
