"""A privacy-loss distribution pair from atoms (:func:`from_atoms`): the accumulator of loss
masses on the grid shared by every builder of :mod:`dpaudit.pld.mechanisms`, the builders'
defaults and parameter checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpaudit.pld.distribution import (
    DEFAULT_TAIL,
    LowerPLD,
    PrivacyLossDistribution,
    UpperPLD,
)
from dpaudit.pld.fft import UNDERFLOW, UNIT_ROUNDOFF

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


#: The most grid points one mechanism's PLD (a leaf) is built on: its arrays hold about 40
#: bytes a point.  A leaf beyond it is refused (a ValueError: the accountant's other results
#: still apply) rather than allocated: a Gaussian of sigma 1/1000 (the smallest the PLD card
#: admits), subsampled, spans 5 10^8 points at step 1e-3, and a calibration's search probing
#: it allocated 24 GB.
LEAF_BUDGET = 2**23
#: The largest finite privacy loss a leaf's grid may reach: its lower side holds the tilted
#: masses ``exp(s) Q``, and ``exp`` overflows a double above about 709.78.  A leaf reaching
#: beyond is refused (a ValueError, as for the budget) instead of raising an OverflowError
#: from inside (a Poisson-subsampled Gaussian of sigma below about 0.034 did, at every grid
#: step).
MAX_LOSS = 700.0


class _Accumulator:
    """Collects the masses of one direction before it becomes a PrivacyLossDistribution."""

    def __init__(self, h: float, j0: int, j1: int) -> None:
        self.h = h
        self.j0 = j0
        n = j1 - j0 + 1
        if n > LEAF_BUDGET:
            raise ValueError(
                f"the losses span {n} grid points of step {h:g} (from {j0 * h:.6g} to "
                f"{j1 * h:.6g}), above the budget of {LEAF_BUDGET} points for one mechanism's "
                "PLD: no PLD on this grid"
            )
        if j1 * h > MAX_LOSS:
            raise ValueError(
                f"the privacy losses reach {j1 * h:.6g} (from {j0 * h:.6g}), above "
                f"{MAX_LOSS:g}, where the PLD's tilted masses exp(loss) Q leave the range of a "
                "double: no PLD for this mechanism (more noise brings the losses within range)"
            )
        self.m = np.zeros(n)
        self.p = np.zeros(n)
        self.qt = np.zeros(n)
        self.inf_up = 0.0
        self.p_inf = 0.0
        self.err_up = 0.0
        self.top = -1  # the highest index of m an atom's split reached (err_up goes there)
        self.err_low = 0.0
        self.err_q = 0.0  # the share of err_low in qt (LowerPLD.err_q)
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
                self.err_low += 4 * UNIT_ROUNDOFF * self.qt[0] + UNDERFLOW
                self.err_q += 4 * UNIT_ROUNDOFF * self.qt[0] + UNDERFLOW
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
            # two rounded products (and sums): 8u relative, plus each product's underflow
            self.err_up += 8 * UNIT_ROUNDOFF * p_mass + 2 * UNDERFLOW
            self.top = max(self.top, i + 1)
        if low:
            self.p[i] += p_mass * w
            self.p[i + 1] += p_mass * (1 - w)
            self.qt[i] += q_mass * math.exp(j * h) * w
            self.qt[i + 1] += q_mass * math.exp((j + 1) * h) * (1 - w)
            self.err_low += (
                8 * UNIT_ROUNDOFF * (p_mass + q_mass * math.exp((j + 1) * h)) + 6 * UNDERFLOW
            )
            self.err_q += 8 * UNIT_ROUNDOFF * q_mass * math.exp((j + 1) * h) + 6 * UNDERFLOW
        self.shift = max(self.shift, 4 * UNIT_ROUNDOFF * (abs(loss) + abs(j * h) + h))

    def build(self, tail: float) -> PrivacyLossDistribution:
        nz = np.nonzero((self.m > 0) | (self.qt > 0) | (self.p > 0))[0]
        lo, hi = (int(nz[0]), int(nz[-1]) + 1) if nz.size else (0, 1)
        inf_up = self.inf_up
        if self.top >= 0 and self.err_up > 0:
            # the splits' rounding error (an l1 bound) is added at the highest grid point they
            # reached, not at +inf: every exact split mass lies at or below it, and moving mass
            # up only raises the profile, here and after any composition (see pld/tilt.py)
            self.m[self.top] = (self.m[self.top] + self.err_up) * (1 + 2 * UNIT_ROUNDOFF)
            lo, hi = min(lo, self.top), max(hi, self.top + 1)
        else:
            inf_up += self.err_up
        off = self.j0 + lo
        upper = UpperPLD(self.h, off, self.m[lo:hi].copy(), inf_up * (1 + 1e-12), self.shift)
        lower = LowerPLD(
            self.h,
            off,
            self.p[lo:hi].copy(),
            self.qt[lo:hi].copy(),
            self.p_inf * (1 - 1e-12),
            self.err_low * (1 + 1e-9),
            err_q=self.err_q * (1 + 1e-9),
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
