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
from collections.abc import Sequence
from typing import Any

import mpmath

from dpaudit.numeric import endpoints, iv_precision, mpf_to_float
from dpaudit.pld.atoms import (
    DEFAULT_DISCRETIZATION,
    _Accumulator,
    _check_h,
    _check_positive,
    _check_probability,
    from_atoms,
)
from dpaudit.pld.continuous import bounded_range, gaussian, gaussian_direction, laplace
from dpaudit.pld.distribution import (
    DEFAULT_TAIL,
    PrivacyLossDistribution,
)
from dpaudit.pld.pair import PLDPair

__all__ = [
    "DEFAULT_DISCRETIZATION",
    "bounded_range",
    "discrete_gaussian",
    "discrete_laplace",
    "from_atoms",
    "gaussian",
    "gaussian_direction",
    "generic",
    "laplace",
    "randomized_response",
]


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
