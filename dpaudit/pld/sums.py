"""Certified sums used by the discretised PLDs (:mod:`dpaudit.pld.distribution`): the
suffix sums of exponentially weighted masses behind the profile's closed form, and the block
sums of a coarsening, each with its rounding bound."""

from __future__ import annotations

import numpy as np

from dpaudit.pld.fft import UNIT_ROUNDOFF

#: Block length of :func:`_suffix_tilted` in units of 1/h: exp(h u) stays below e^30 inside a
#: block, so the scaled terms neither overflow nor lose relative accuracy.
_BLOCK_LOSS = 30.0


def _suffix_tilted(values: np.ndarray, h: float) -> np.ndarray:
    """T_j = sum_{i > j} values_i exp((j - i) h), for non-negative values, in numpy.

    On the reversed sequence x (so T is y reversed), y_k = sum_{u <= k} d^{k-u+1} z_u with
    d = exp(-h) and z = (0, x_0, x_1, ...).  In a block starting at s,
    y_{s+t} = d^{t+1} (y_{s-1} + sum_{u <= t} d^{-u} z_{s+u}): a cumulative sum of non-negative
    terms scaled by at most e^30, so each value's relative error is at most (block length
    + 6) unit roundoffs plus the carried y_{s-1}'s; the callers allow 4 n unit roundoffs, and
    the per-block excess (6 per block) is added here, rounded up.  (This replaced a call of
    ``scipy.signal.lfilter``: importing scipy.signal took about 1 s of every command's start.)
    """
    if values.size == 0:
        return values.copy()
    n = values.size
    z = np.concatenate(([0.0], values[::-1][:-1]))
    block = max(1, min(n, int(_BLOCK_LOSS / h) if h > 0 else n))
    y = np.empty(n)
    carry = 0.0
    for s in range(0, n, block):
        t = np.arange(min(block, n - s), dtype=float)
        with np.errstate(under="ignore"):
            part = np.cumsum(z[s : s + len(t)] * np.exp(t * h))
            y[s : s + len(t)] = np.exp(-(t + 1) * h) * (carry + part)
        carry = float(y[s + len(t) - 1])
    blocks = -(-n // block)
    return y[::-1] * (1 + 8 * (blocks + 1) * UNIT_ROUNDOFF)


def coarse_sums(
    values: np.ndarray, first: int, g: int, to_low: np.ndarray, to_high: np.ndarray
) -> np.ndarray:
    """The block sums of a coarsening by ``g``: ``values[i]`` sits at fine index ``first + i``
    (``0 <= first < g``), fine index ``J g + r`` gives ``values * to_low[r]`` to coarse point
    ``J`` and ``values * to_high[r]`` to ``J + 1``; returns the ``rows + 1`` coarse masses,
    ``rows = ceil((first + len(values)) / g)``.

    Each product is rounded once (as the elementwise product of the two arrays would be) and
    each output is a sum of at most ``2 g`` non-negative terms, so it lies within ``(2 g + 1)``
    unit roundoffs (relative) of the exact sum of the rounded products, whatever the order of
    summation (Higham 2002, eq. (4.4)).  The fine grid is cut into rows of ``g`` points and
    summed along them: the weights are ``g``-vectors, not one per point (the sums were
    ``np.add.reduceat`` in extended precision, four times slower)."""
    rows = -(-(first + len(values)) // g)
    padded = np.zeros(rows * g)
    padded[first : first + len(values)] = values
    table = padded.reshape(rows, g)
    out = np.zeros(rows + 1)
    with np.errstate(under="ignore"):
        out[:-1] = np.sum(table * to_low, axis=1)
        out[1:] += np.sum(table * to_high, axis=1)
    return out
