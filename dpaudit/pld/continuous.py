"""Privacy-loss distributions of continuous mechanisms (Gaussian, Laplace, bounded range),
integrated bucket by bucket in the output space with certified masses (see
:mod:`dpaudit.pld.mechanisms` for the numerics).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

import numpy as np

from dpaudit.pld import masses
from dpaudit.pld.atoms import (
    BASE_TAIL,
    DEFAULT_DISCRETIZATION,
    _Accumulator,
    _check_h,
    _check_positive,
    _check_probability,
)
from dpaudit.pld.distribution import (
    DEFAULT_TAIL,
    PrivacyLossDistribution,
)
from dpaudit.pld.fft import UNIT_ROUNDOFF
from dpaudit.pld.pair import PLDPair

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
        acc.top = max(acc.top, up.top)
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
    # the standard normal quantile (stdlib, Wichura's AS241; agrees with scipy's ndtri to
    # ~1e-15 down to 5e-324): it only places the cut, whose tail masses are bounded rigorously
    # below (masses.normal_tails); scipy.special would cost ~0.2 s of the command's start.
    z = -NormalDist().inv_cdf(base_tail)
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
    options = {
        "sampling_probability": sampling_probability,
        "value_discretization": value_discretization,
        "tail": tail,
        "base_tail": base_tail,
    }
    remove = gaussian_direction(sigma, sensitivity, "remove", **options)
    if sampling_probability == 1:
        return PLDPair(remove, remove)
    return PLDPair(remove, gaussian_direction(sigma, sensitivity, "add", **options))


def gaussian_direction(
    sigma: float,
    sensitivity: float,
    direction: str,
    *,
    sampling_probability: float = 1.0,
    value_discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
    base_tail: float = BASE_TAIL,
) -> PrivacyLossDistribution:
    """One direction (``"remove"`` or ``"add"``) of :func:`gaussian`'s pair, built alone (a
    calibration's forecast needs only the direction whose profile is the larger); the same
    arguments, and the same PLD as that direction of :func:`gaussian` (the add direction of an
    unsampled mechanism is its remove direction).

    Raises:
        ValueError: on parameters out of range.
    """
    sig = _check_positive("sigma", sigma) / _check_positive("sensitivity", sensitivity)
    q = _check_probability("sampling_probability", sampling_probability)
    h = _check_h(value_discretization)
    if sig < 1e-3:
        raise ValueError(f"sigma / sensitivity must be >= 1e-3 for the PLD grid, got {sig!r}")
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
    if q == 1:
        direction = "remove"
    return _continuous_pld(_gaussian_pair(sig, q, direction, base_tail), h, tail)


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
