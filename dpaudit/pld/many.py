"""Composition of many distinct privacy loss distributions in one product of spectra.

Composing N distinct PLDs one after another searches a Chernoff window over the growing
accumulated distribution at every step and cuts tails N times; here the window of the *final*
sum is searched once, over the parts themselves (the log moment generating function of a sum
of independent parts is the sum of theirs), and the parts are multiplied in the frequency
domain (:func:`dpaudit.pld.fft.convolve_many`).  The certified bounds have the same form as
for two parts (:meth:`PrivacyLossDistribution.compose`), with N-part error terms:

* upper: the mass at ``+inf`` of the product is at most ``sum_i inf_i prod_{j != i} (f_j +
  inf_j)`` (``f_j`` the finite mass of part j), bounded by ``(sum_i inf_i) prod_j max(1, f_j +
  inf_j)``; the loss shifts add.
* lower: the l1 errors of ``p`` and ``qt`` telescope to ``sum_i e_i prod_{j != i} (max(|p_j|,
  |qt_j|) + e_j)``, bounded likewise; ``p_inf = 1 - prod (1 - p_inf_i)``, rounded down.

Privacy: the composition of dominating pairs dominates the composition (Zhu, Dong, Wang 2022,
Theorem 10); the lower side is a post-processing of the product pair (see
:mod:`dpaudit.pld.distribution`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from dpaudit.pld import fft, tilt
from dpaudit.pld.distribution import (
    _SUM_REL,
    GRID_BUDGET,
    LowerPLD,
    PrivacyLossDistribution,
    UpperPLD,
    _lower_window_tilts,
    _trim,
)

__all__ = ["compose_many"]


def _log_product_up(factors: list[float]) -> float:
    """``log prod_j max(1, x_j)``, rounded up."""
    return math.fsum(math.log(max(1.0, x)) for x in factors) * (1 + 1e-12) + 1e-15 * len(factors)


def _aligned(dists: Sequence[PrivacyLossDistribution]) -> list[PrivacyLossDistribution]:
    """The parts on the coarsest of their grids (steps must differ by powers of 2)."""
    h = max(d.h for d in dists)
    out = []
    for d in dists:
        if d.h == h:
            out.append(d)
            continue
        g = round(h / d.h)
        if g < 2 or g & (g - 1) or d.h * g != h:
            raise ValueError(
                f"grid steps differ: {d.h} and {h}; build every PLD with the same "
                "value_discretization"
            )
        out.append(d.coarsened(g))
    return out


def compose_many(dists: Sequence[PrivacyLossDistribution]) -> PrivacyLossDistribution:
    """The PLD of the parts composed in order (independent, adaptive composition).

    Raises:
        ValueError: if ``dists`` is empty or holds something else than PLDs, if the grid
            steps differ by other than powers of 2, or if the composed support would need a
            grid coarser than :data:`~dpaudit.pld.distribution.MAX_COARSE_STEP`.
    """
    if not dists:
        raise ValueError("compose_many needs at least one privacy loss distribution")
    for d in dists:
        if not isinstance(d, PrivacyLossDistribution):
            raise ValueError(f"parts must be PrivacyLossDistributions, got {type(d).__name__}")
    if len(dists) == 1:
        return dists[0]
    parts = _aligned(dists)
    tail = max(d.tail for d in parts)
    ups = [d.upper for d in parts]
    win = fft.chernoff_window_tilt([(u.masses, u.offset, 1) for u in ups], tail)
    g = parts[0]._budgeted(win[:2])
    if g > 1:
        return dataclasses.replace(compose_many([d.coarsened(g) for d in parts]), budgeted=True)
    upper, pending = _upper(ups, win, tail)
    lower, pending = _lower(parts, tail, pending)
    return PrivacyLossDistribution(upper, lower, tail, pending, any(d.budgeted for d in parts))


def _upper(
    ups: list[UpperPLD], win: tuple[int, int, float], tail: float
) -> tuple[UpperPLD, tilt.Pending]:
    m, off, l1 = fft.convolve_many([(u.masses, u.offset) for u in ups], win[:2])
    m, off, cut = _trim(m, off, win[:2])
    factors = [(u.masses, u.offset, 1) for u in ups]
    finite = [float(np.sum(u.masses)) * (1 + _SUM_REL) for u in ups]
    infs = [u.inf_mass for u in ups]
    growth = math.exp(_log_product_up([f + i for f, i in zip(finite, infs, strict=True)]))
    gap, error = math.fsum(infs) * (1 + 1e-12) * growth, l1 + 2 * tail + cut
    shift = math.fsum(u.shift for u in ups) * (1 + 1e-12)
    pending = tilt.Pending(factors, win, error, gap, None, (0, 0, 0.0, 0.0), 0.0, tail)
    return UpperPLD(ups[0].h, off, m, (gap + error) * (1 + 1e-9), shift), pending


def _lower(
    parts: list[PrivacyLossDistribution], tail: float, pending: tilt.Pending
) -> tuple[LowerPLD, tilt.Pending]:
    lows = [d.lower for d in parts]
    h = lows[0].h
    window_t, tail_q = _lower_window_tilts([(lo, 1) for lo in lows], tail)
    window = window_t[:2]
    if window[1] - window[0] + 1 > GRID_BUDGET:
        return LowerPLD.nothing(h), pending
    p, off, l1p = fft.convolve_many([(lo.p, lo.offset) for lo in lows], window)
    qt, _, l1q = fft.convolve_many([(lo.qt, lo.offset) for lo in lows], window)
    size = min(len(p), len(qt))
    # ||prod x_i - prod y_i|| <= sum_i e_i prod_{j != i} (|y_j| + e_j) <= (sum_i e_i) times the
    # product of max(1, |y_j| + e_j) over all j (_log_product_up takes the max with 1)
    norms = [
        max(float(np.sum(lo.p)), float(np.sum(lo.qt))) * (1 + _SUM_REL) + lo.err for lo in lows
    ]
    growth = math.exp(_log_product_up(norms))
    window_error = 4 * (tail + tail_q)
    err = math.fsum(lo.err for lo in lows) * (1 + 1e-12) * growth + l1p + l1q + window_error
    q_norms = [float(np.sum(lo.qt)) * (1 + _SUM_REL) + lo.q_error for lo in lows]
    q_growth = math.exp(_log_product_up(q_norms))
    err_q = math.fsum(lo.q_error for lo in lows) * (1 + 1e-12) * q_growth + l1q + 4 * tail_q
    # P(some part at +inf) = 1 - prod (1 - p_inf_i), rounded down
    keep = math.fsum(math.log1p(-lo.p_inf) if lo.p_inf < 1 else -math.inf for lo in lows)
    p_inf = -math.expm1(keep) * (1 - 1e-9) if math.isfinite(keep) else 1.0
    pending = dataclasses.replace(
        pending,
        low_factors=([(lo.p, lo.offset, 1) for lo in lows], [(lo.qt, lo.offset, 1) for lo in lows]),
        low_window=window_t,
        low_rounding=l1p + l1q + window_error,
    )
    lower = LowerPLD(h, off, p[:size], qt[:size], p_inf, err * (1 + 1e-9), err_q=err_q * (1 + 1e-9))
    return lower, pending
