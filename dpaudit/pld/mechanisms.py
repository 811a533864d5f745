"""Privacy loss distributions of primitive mechanisms and of their Poisson-subsampled forms.

Each builder returns a :class:`~dpaudit.pld.pair.PLDPair` (both neighbouring directions) on a
grid of step ``value_discretization``.  Discrete mechanisms are sums of atoms; continuous ones
are integrated bin by bin in the output space, where the loss ``L(x)`` is increasing.

Numerics of the continuous builders.  The grid losses ``s_j`` are mapped to output points
``x_j`` (the loss is increasing), so each loss bucket is an output interval.  Its P- and Q-masses
are *certified enclosures* from :mod:`dpaudit.pld.masses` (Gauss-Legendre with a proven
remainder and rounding bound, never an estimate), so no quadrature error needs adding.  The
upper side is the connect-the-dots split of each bucket computed from ``(p_hi, q_lo)`` and
rounded towards higher losses; the lower side post-processes bucket j to label j with
``(p_lo, q_hi)``; the rounding of the loss at the bucket edges is added to the loss shift.

Neighbouring relations: the plain mechanisms are symmetric, so both directions coincide.  For
Poisson subsampling with probability q of a mechanism with dominating pair ``(P, Q)`` the
dominating pairs are ``((1-q) Q + q P, Q)`` (remove a record) and ``(P, (1-q) P + q Q)`` (add a
record) (Zhu, Dong, Wang 2022, Theorem 11), under the add/remove relation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np
from scipy.special import ndtri

from dpaudit.numeric import endpoints, iv_precision, mpf_to_float
from dpaudit.pld import masses
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


def _check_positive(name: str, value: float) -> float:
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not (math.isfinite(value) and value > 0)
    ):
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

    def add_atom(self, loss: float, p_mass: float, q_mass: float, sides: str = "both") -> None:
        """An outcome with P-mass ``p_mass`` and Q-mass ``q_mass`` at loss ``log(p/q)``, added to
        the upper side, the lower side or both (``sides``: ``"upper"``, ``"lower"``,
        ``"both"``); an outcome known only by bounds is added as ``(p_hi, q_lo)`` to the upper
        side and ``(p_lo, q_hi)`` to the lower side (each term ``[p - e^eps q]_+`` of the
        profile, and each test ``P(S) - e^eps Q(S)``, moves the right way, also in products)."""
        h = self.h
        up, low = sides != "lower", sides != "upper"
        if p_mass <= 0 and q_mass <= 0:
            return
        if q_mass <= 0:  # loss +inf
            if up:
                self.inf_up += p_mass
            if low:
                self.p_inf += p_mass
            return
        if p_mass <= 0:  # loss -inf: only the test measure sees its Q-mass, at the lowest point
            if low:
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
        if t <= 1e-9 * h:  # on the grid up to rounding: no split, t joins the loss shift
            w = 1.0
            self.shift = max(self.shift, (t + 4 * UNIT_ROUNDOFF * (abs(loss) + h)) * 1.01)
        elif t >= (1 - 1e-9) * h:  # just below the next grid point: move it up (sound)
            w = 0.0
        else:
            w = math.expm1(h - t) / math.expm1(h)
        if up:
            self.m[i] += p_mass * w
            self.m[i + 1] += p_mass * (1 - w)
            self.err_up += 8 * UNIT_ROUNDOFF * p_mass
        if low:
            self.p[i] += p_mass * w
            self.p[i + 1] += p_mass * (1 - w)
            self.qt[i] += q_mass * math.exp(j * h) * w
            self.qt[i + 1] += q_mass * math.exp((j + 1) * h) * (1 - w)
            self.err_low += 8 * UNIT_ROUNDOFF * (p_mass + q_mass * math.exp((j + 1) * h))
        self.shift = max(self.shift, 4 * UNIT_ROUNDOFF * (abs(loss) + abs(j * h) + h))

    def build(self, tail: float) -> PrivacyLossDistribution:
        nz = np.nonzero((self.m > 0) | (self.qt > 0) | (self.p > 0))[0]
        lo, hi = (int(nz[0]), int(nz[-1]) + 1) if nz.size else (0, 1)
        off = self.j0 + lo
        upper = UpperPLD(
            self.h, off, self.m[lo:hi].copy(), (self.inf_up + self.err_up) * (1 + 1e-12), self.shift
        )
        lower = LowerPLD(
            self.h,
            off,
            self.p[lo:hi].copy(),
            self.qt[lo:hi].copy(),
            self.p_inf * (1 - 1e-12),
            self.err_low * (1 + 1e-9),
        )
        return PrivacyLossDistribution(upper, lower, tail)


def from_atoms(
    outcomes: Sequence[tuple[float, float]],
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> PrivacyLossDistribution:
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
        raise ValueError(
            "outcomes must be pairs of non-negative masses summing to at most 1 on each side"
        )
    losses = [math.log(a) - math.log(b) for a, b in zip(ps, qs, strict=False) if a > 0 and b > 0]
    if losses:
        j0, j1 = math.floor(min(losses) / h) - 1, math.ceil(max(losses) / h) + 1
    else:
        j0, j1 = 0, 1
    acc = _Accumulator(h, j0, j1)
    for a, b in zip(ps, qs, strict=False):
        acc.add_atom(math.log(a) - math.log(b) if a > 0 and b > 0 else 0.0, a, b)
    return acc.build(tail)


def _subsampled_outcomes(
    outcomes: Sequence[tuple[float, float]], q: float, direction: str
) -> list[tuple[float, float]]:
    if q == 1:
        return list(outcomes)
    if direction == "remove":
        return [((1 - q) * b + q * a, b) for a, b in outcomes]
    return [(a, (1 - q) * a + q * b) for a, b in outcomes]


def _atomic_pair(outcomes: list[tuple[float, float]], q: float, h: float, tail: float) -> PLDPair:
    remove = from_atoms(_subsampled_outcomes(outcomes, q, "remove"), h, tail)
    if q == 1 and sorted(outcomes) == sorted((b, a) for a, b in outcomes):
        return PLDPair(remove, remove)
    add = from_atoms(_subsampled_outcomes(outcomes, q, "add"), h, tail)
    return PLDPair(remove, add)


def _interval_pair(outcomes: list[tuple[Any, Any]], q: float, h: float, tail: float) -> PLDPair:
    """The PLD pair of outcomes whose masses are mpmath intervals ``(P(o), Q(o))``: the upper
    side gets ``(P_hi, Q_lo)`` and the lower side ``(P_lo, Q_hi)`` (see
    :meth:`_Accumulator.add_atom`), the mixtures of Poisson subsampling are formed in interval
    arithmetic, and every end point is rounded outward to a float."""
    iv = mpmath.iv
    qq = iv.mpf(q)

    def direction(name: str) -> PrivacyLossDistribution:
        if q == 1:
            pairs = outcomes
        elif name == "remove":
            pairs = [((1 - qq) * b + qq * a, b) for a, b in outcomes]
        else:
            pairs = [(a, (1 - qq) * a + qq * b) for a, b in outcomes]
        up_atoms, low_atoms = [], []
        for a, b in pairs:
            (a_lo, a_hi), (b_lo, b_hi) = endpoints(a), endpoints(b)
            up_atoms.append((mpf_to_float(a_hi, "up"), max(0.0, mpf_to_float(b_lo, "down"))))
            low_atoms.append((max(0.0, mpf_to_float(a_lo, "down")), mpf_to_float(b_hi, "up")))
        losses = [math.log(a) - math.log(b) for a, b in up_atoms + low_atoms if a > 0 and b > 0]
        j0 = math.floor(min(losses, default=0.0) / h) - 1
        j1 = math.ceil(max(losses, default=0.0) / h) + 1
        acc = _Accumulator(h, j0, j1)
        for atoms, side in ((up_atoms, "upper"), (low_atoms, "lower")):
            for a, b in atoms:
                acc.add_atom(math.log(a) - math.log(b) if a > 0 and b > 0 else 0.0, a, b, side)
        return acc.build(tail)

    remove = direction("remove")
    symmetric = q == 1 and sorted(map(str, outcomes)) == sorted(str((b, a)) for a, b in outcomes)
    return PLDPair(remove, remove) if symmetric else PLDPair(remove, direction("add"))


def generic(
    epsilon: float,
    delta: float = 0.0,
    *,
    sampling_probability: float = 1.0,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> PLDPair:
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


def randomized_response(
    epsilon: float,
    num_outputs: int = 2,
    *,
    sampling_probability: float = 1.0,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> PLDPair:
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


def discrete_laplace(
    scale: float,
    sensitivity: int = 1,
    *,
    sampling_probability: float = 1.0,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> PLDPair:
    """The PLD of the discrete Laplace mechanism, ``P(x) ∝ exp(-|x| / scale)`` on the integers.

    Privacy: with integer sensitivity Delta the loss takes the values ``(|x - Delta| - |x|)/scale``
    in ``[-Delta/scale, Delta/scale]``; the returned bounds enclose its privacy profile.  The
    atom masses (closed forms in ``r = e^{-1/scale}``) are mpmath interval enclosures, rounded
    outward.

    Raises:
        ValueError: if scale <= 0 or the sensitivity is not a positive integer.
    """
    t = _check_positive("scale", scale)
    if not isinstance(sensitivity, int) or sensitivity < 1:
        raise ValueError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    q = _check_probability("sampling_probability", sampling_probability)
    iv = mpmath.iv
    with iv_precision(80):
        r = iv.exp(-1 / iv.mpf(t))
        norm = (1 - r) / (1 + r)
        d = sensitivity
        # P = law of X, Q = law of X + Delta; outcomes x <= 0, 0 < x < Delta, x >= Delta
        below_p = 1 / (1 + r)  # P(X <= 0) = norm / (1 - r)
        below_q = r**d / (1 + r)  # P(X + d <= 0) = P(X <= -d)
        outcomes = [(below_p, below_q), (below_q, below_p)]  # x >= d: P(X >= d), P(X >= 0)
        outcomes += [(norm * r**x, norm * r ** (d - x)) for x in range(1, d)]
        return _interval_pair(outcomes, q, _check_h(value_discretization), tail)


def discrete_gaussian(
    sigma: float,
    sensitivity: int = 1,
    *,
    sampling_probability: float = 1.0,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> PLDPair:
    """The PLD of the discrete Gaussian ``P(x) ∝ exp(-x^2 / (2 sigma^2))`` (Canonne, Kamath,
    Steinke 2020).

    Outcomes with ``|x| > R = ceil(12 sigma + Delta + 1)`` are merged into one outcome whose
    P-mass is bounded above and moved to loss +inf (upper side), so nothing is dropped.  The
    normaliser is enclosed as the finite sum plus the interval ``[0, 2 e^{-(R+Delta+1)^2 /
    (2 sigma^2)} / (1 - e^{-(R+Delta+1)/sigma^2})]`` for the terms beyond (a geometric bound),
    and every atom mass is an mpmath interval, rounded outward.

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
    iv = mpmath.iv
    with iv_precision(80):
        c = 1 / (2 * iv.mpf(s) ** 2)
        top = reach + d
        weights = {x: iv.exp(-(x * x) * c) for x in range(-top, top + 1)}
        # sum_{|x| > top} e^{-x^2 c} <= 2 e^{-(top+1)^2 c} / (1 - e^{-2 (top+1) c})
        beyond = 2 * iv.exp(-((top + 1) ** 2) * c) / (1 - iv.exp(-2 * (top + 1) * c))
        z = iv.fsum(weights.values()) + iv.mpf([0, endpoints(beyond)[1]])
        outcomes = [(weights[x] / z, weights[x - d] / z) for x in range(-reach, reach + 1)]
        inside = iv.fsum(a for a, _ in outcomes)
        # the P-mass of |x| > reach is 1 - inside: at most its upper end, moved to loss +inf
        leftover = iv.mpf([0, max(0, endpoints(1 - inside)[1])])
        outcomes.append((leftover, iv.mpf(0)))
        return _interval_pair(outcomes, q, _check_h(value_discretization), tail)


# --------------------------------------------------------------------------- continuous


class _ContinuousPair:
    """A pair on the real line with an increasing loss on ``(xa, xb)``.

    ``dens_p``/``dens_q`` are the densities on ``(xa, xb)`` as mixtures of
    :mod:`~dpaudit.pld.masses` components, ``loss`` the log ratio, ``loss_terms(x)`` a bound on
    the magnitude of the intermediate terms of the floating-point ``loss`` (its rounding is at
    most 16 ulps of that), ``inverse`` the inverse of the loss (used to place bucket edges; it
    need not be exact), ``scale`` the noise scale (panel width is scale/16), ``tails`` the
    certified ``((P below lo, P below hi), (Q below lo, Q below hi), (P above lo, P above hi),
    (Q above lo, Q above hi))`` of the cut points, and ``atoms`` outcomes outside ``(xa, xb)``
    that are point masses of the loss.
    """

    def __init__(
        self,
        *,
        dens_p: Sequence[masses.Normal | masses.Exponential],
        dens_q: Sequence[masses.Normal | masses.Exponential],
        loss: Callable[[np.ndarray], np.ndarray],
        loss_terms: Callable[[np.ndarray], np.ndarray],
        inverse: Callable[[np.ndarray], np.ndarray],
        xa: float,
        xb: float,
        scale: float,
        tails: tuple[tuple[float, float], ...] = ((0.0, 0.0),) * 4,
        atoms: Sequence[tuple[float, float]] = (),
    ) -> None:
        self.dens_p, self.dens_q, self.loss, self.loss_terms = dens_p, dens_q, loss, loss_terms
        self.inverse, self.xa, self.xb, self.scale = inverse, xa, xb, scale
        self.tails, self.atoms = tails, atoms


def _loss_shift(pair: _ContinuousPair, s: np.ndarray, xb: np.ndarray) -> float:
    """delta >= 0 with every true loss on bucket ``[xb_j, xb_{j+1}]`` in
    ``[s_j - delta, s_{j+1} + delta]`` (the loss is monotone, so the edges decide)."""
    with np.errstate(invalid="ignore", over="ignore"):
        le = pair.loss(xb)
        mag = np.abs(le) + np.abs(pair.loss_terms(xb))
    width = np.diff(xb)
    used = width > 0
    inner = np.isfinite(le)
    dev_lo = np.nan_to_num(s[:-1] - le[:-1], nan=0.0)
    dev_hi = np.nan_to_num(le[1:] - s[1:], nan=0.0)
    dev = max(
        0.0,
        float(np.max(dev_lo[inner[:-1] & used], initial=0.0)),
        float(np.max(dev_hi[inner[1:] & used], initial=0.0)),
    )
    edges = np.concatenate(([False], used)) | np.concatenate((used, [False]))
    rnd = 16 * UNIT_ROUNDOFF * (1 + float(np.max(mag[inner & edges], initial=0.0)))
    return (dev + rnd) * (1 + 1e-9)


def _bucket_masses(
    dens: Sequence[masses.Normal | masses.Exponential], xb: np.ndarray, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Certified (lower, upper) masses of the buckets ``[xb_j, xb_{j+1}]``, integrated on panels
    no wider than scale/16."""
    width = np.diff(xb)
    panels = np.maximum(1, np.ceil(width / (scale / 16))).astype(np.int64)
    if int(panels.max(initial=1)) == 1:
        return masses.interval_masses(dens, xb[:-1], xb[1:])
    bins = np.repeat(np.arange(len(width)), panels)
    first = np.repeat(np.cumsum(panels) - panels, panels)
    k = np.arange(len(bins)) - first
    pw = width[bins] / panels[bins]
    a = xb[bins] + k * pw
    b = np.where(k + 1 == panels[bins], xb[bins + 1], xb[bins] + (k + 1) * pw)
    lo, hi = masses.interval_masses(dens, a, b)
    grow = float(panels.max()) * 2 * UNIT_ROUNDOFF
    nb = len(width)
    return (
        np.bincount(bins, weights=lo, minlength=nb) * (1 - grow),
        np.bincount(bins, weights=hi, minlength=nb) * (1 + grow),
    )


def _add_buckets(pair: _ContinuousPair, acc: _Accumulator, xb: np.ndarray) -> None:
    """Add the continuous part of ``pair`` to ``acc``; ``xb[j]`` is the output at grid loss j.

    Upper side: the connect-the-dots split of bucket j (P-mass p, Q-mass q, losses in
    ``[s_j, s_{j+1}]``) puts ``b = (p e^h - q e^{s_{j+1}}) / (e^h - 1)`` at ``s_{j+1}`` and
    ``p - b`` at ``s_j``; it is computed from certified ``p_hi``, ``q_lo`` and rounded up, so the
    result is the exact split with mass moved up and mass added (both only raise the
    profile).  With true losses off the grid by up to ``delta`` the split uses
    ``q_lo e^{-delta}`` and ``delta`` joins the loss shift.  Lower side: bucket j is
    post-processed to label j, with certified ``p_lo`` and ``e^{s_j} q_hi``.
    """
    h = acc.h
    s = acc.grid()
    delta = _loss_shift(pair, s, xb)
    acc.shift = max(acc.shift, delta)
    p_lo, p_hi = _bucket_masses(pair.dens_p, xb, pair.scale)
    q_lo, q_hi = _bucket_masses(pair.dens_q, xb, pair.scale)
    u = UNIT_ROUNDOFF
    s_hi = s[1:]
    with np.errstate(over="ignore", under="ignore"):
        a_up = p_hi * math.exp(h) * (1 + 3 * u)
        b_lo = q_lo * np.exp(s_hi - delta) * (1 - (6 + 3 * np.abs(s_hi)) * u)
        top = np.maximum(0.0, a_up - b_lo) * (1 + 2 * u) / math.expm1(h) * (1 + 3 * u)
        top = np.minimum(top, p_hi)
        bottom = (p_hi - top) * (1 + 2 * u)
        tilt = q_hi * np.exp(s[:-1]) * (1 + (6 + 3 * np.abs(s[:-1])) * u)
    acc.m[:-1] += bottom
    acc.m[1:] += top
    acc.p[:-1] += p_lo
    acc.qt[:-1] += tilt


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
    xb = np.maximum.accumulate(xb)
    _add_buckets(pair, acc, xb)
    (p_lo_lo, p_lo_hi), (_, q_lo_hi), (p_hi_lo, p_hi_hi), (_, q_hi_hi) = pair.tails
    # below the cut: losses <= L(xa) + shift; upper side moves them up to there, lower side
    # labels them j0
    if p_lo_hi > 0:
        up = _Accumulator(h, j0, j1)
        up.add_atom(la + acc.shift, p_lo_hi, p_lo_hi * math.exp(-la - acc.shift))
        acc.m += up.m
        acc.err_up += up.err_up
        acc.shift = max(acc.shift, up.shift)
    acc.p[0] += p_lo_lo
    acc.qt[0] += q_lo_hi * math.exp(j0 * h) * (1 + 1e-12)
    # above the cut: upper side to +inf, lower side to label j1
    acc.inf_up += p_hi_hi
    acc.p[-1] += p_hi_lo
    acc.qt[-1] += q_hi_hi * math.exp(j1 * h) * (1 + 1e-12)
    for a, b in pair.atoms:
        acc.add_atom(math.log(a) - math.log(b) if a > 0 and b > 0 else 0.0, a, b)
    return acc.build(tail)


def _gaussian_pair(sigma: float, q: float, direction: str, base_tail: float) -> _ContinuousPair:
    """Sensitivity-1 Gaussian pairs: remove ``((1-q)N(0)+qN(1), N(0))``, add ``(N(0),
    (1-q)N(0)+qN(-1))`` (the add pair reflected so that the loss increases)."""
    s2 = sigma * sigma
    lq = math.log(q)
    l1q = math.log1p(-q) if q < 1 else -math.inf
    mag0 = abs(lq) + (abs(l1q) if q < 1 else 0.0)
    z = -float(ndtri(base_tail))
    xa, xb = -1 - z * sigma, 1 + z * sigma
    if direction == "remove":

        def loss(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q, lq + (2 * x - 1) / (2 * s2))

        def loss_terms(x: np.ndarray) -> np.ndarray:
            return mag0 + (2 * np.abs(x) + 1) / (2 * s2)

        def inverse(s: np.ndarray) -> np.ndarray:
            return s2 * (np.log(np.expm1(s) + q) - lq) + 0.5

        dens_p = [masses.Normal(1 - q, 0.0, sigma), masses.Normal(q, 1.0, sigma)]
        dens_q = [masses.Normal(1.0, 0.0, sigma)]
    else:

        def loss(x: np.ndarray) -> np.ndarray:
            return -np.logaddexp(l1q, lq - (2 * x + 1) / (2 * s2))

        def loss_terms(x: np.ndarray) -> np.ndarray:
            return mag0 + (2 * np.abs(x) + 1) / (2 * s2)

        def inverse(s: np.ndarray) -> np.ndarray:
            return -s2 * (np.log(np.expm1(-s) + q) - lq) - 0.5

        dens_p = [masses.Normal(1.0, 0.0, sigma)]
        dens_q = [masses.Normal(1 - q, 0.0, sigma), masses.Normal(q, -1.0, sigma)]
    dens_p = [c for c in dens_p if c.weight > 0]
    dens_q = [c for c in dens_q if c.weight > 0]
    tails = (
        masses.normal_tails(dens_p, xa, "below"),
        masses.normal_tails(dens_q, xa, "below"),
        masses.normal_tails(dens_p, xb, "above"),
        masses.normal_tails(dens_q, xb, "above"),
    )
    return _ContinuousPair(
        dens_p=dens_p,
        dens_q=dens_q,
        loss=loss,
        loss_terms=loss_terms,
        inverse=inverse,
        xa=xa,
        xb=xb,
        scale=sigma,
        tails=tails,
    )


def gaussian(
    sigma: float,
    sensitivity: float = 1.0,
    *,
    sampling_probability: float = 1.0,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
    base_tail: float = BASE_TAIL,
) -> PLDPair:
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
    mag0 = abs(lq) + (abs(l1q) if q < 1 else 0.0)
    log2b = math.log(2 * b)
    # on (0, 1): Lap(0) has density exp(-log(2b) - x/b), Lap(1) exp(-log(2b) - 1/b + x/b)
    lap0 = (-log2b, -1 / b)
    lap1 = (-log2b - 1 / b, 1 / b)

    def loss_terms(x: np.ndarray) -> np.ndarray:
        return mag0 + (np.abs(x) + np.abs(x - 1)) / b

    # masses of x <= 0 and x >= 1 under Lap(0) and Lap(1)
    m0_left, m0_right = 0.5, 0.5 * math.exp(-1 / b)
    m1_left, m1_right = 0.5 * math.exp(-1 / b), 0.5
    if direction == "remove":

        def loss(x: np.ndarray) -> np.ndarray:
            return np.logaddexp(l1q, lq + (np.abs(x) - np.abs(x - 1)) / b)

        def inverse(s: np.ndarray) -> np.ndarray:
            return 0.5 * (1 + b * (np.log(np.expm1(s) + q) - lq))

        dens_p = [masses.Exponential(1 - q, *lap0), masses.Exponential(q, *lap1)]
        dens_q = [masses.Exponential(1.0, *lap0)]
        atoms = [
            ((1 - q) * m0_left + q * m1_left, m0_left),
            ((1 - q) * m0_right + q * m1_right, m0_right),
        ]
    else:

        def loss(x: np.ndarray) -> np.ndarray:
            return -np.logaddexp(l1q, lq + (np.abs(x - 1) - np.abs(x)) / b)

        def inverse(s: np.ndarray) -> np.ndarray:
            return 0.5 * (1 - b * (np.log(np.expm1(-s) + q) - lq))

        dens_p = [masses.Exponential(1.0, *lap1)]
        dens_q = [masses.Exponential(1 - q, *lap1), masses.Exponential(q, *lap0)]
        atoms = [
            (m1_left, (1 - q) * m1_left + q * m0_left),
            (m1_right, (1 - q) * m1_right + q * m0_right),
        ]
    return _ContinuousPair(
        dens_p=[c for c in dens_p if c.weight > 0],
        dens_q=[c for c in dens_q if c.weight > 0],
        loss=loss,
        loss_terms=loss_terms,
        inverse=inverse,
        xa=0.0,
        xb=1.0,
        scale=b,
        atoms=atoms,
    )


def laplace(
    scale: float,
    sensitivity: float = 1.0,
    *,
    sampling_probability: float = 1.0,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> PLDPair:
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
    alpha = -epsilon / 2 - math.log(2 * -math.expm1(-epsilon))

    def ident(x: np.ndarray) -> np.ndarray:
        return x

    def no_terms(x: np.ndarray) -> np.ndarray:
        return np.zeros_like(x)

    return _ContinuousPair(
        dens_p=[masses.Exponential(1.0, alpha, 0.5)],
        dens_q=[masses.Exponential(1.0, alpha, -0.5)],
        loss=ident,
        loss_terms=no_terms,
        inverse=ident,
        xa=-epsilon,
        xb=epsilon,
        scale=2.0,
    )


def bounded_range(
    epsilon: float,
    *,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> PLDPair:
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
