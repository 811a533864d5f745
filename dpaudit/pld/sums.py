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


#: Unit roundoff of numpy's extended type (2**-64 for x86's 80-bit format; on platforms where
#: it is plain double, 2**-53): the block sums of :meth:`UpperPLD.coarsened` use it.
_EXTENDED_ROUNDOFF = float(np.finfo(np.longdouble).eps) / 2


def _split_sums(bins: np.ndarray, at_low: np.ndarray, at_high: np.ndarray, n: int) -> np.ndarray:
    """``out[b] = sum(at_low[bins == b]) + sum(at_high[bins == b - 1])`` for sorted ``bins`` in
    ``[0, n - 1)``, summed in extended precision and rounded once to float64 (each entry within
    ``(terms + 1)`` extended roundoffs plus one double roundoff of the exact sum)."""
    starts = np.flatnonzero(np.concatenate(([True], bins[1:] != bins[:-1])))
    out = np.zeros(n, dtype=np.longdouble)
    out[bins[starts]] += np.add.reduceat(at_low.astype(np.longdouble), starts)
    out[bins[starts] + 1] += np.add.reduceat(at_high.astype(np.longdouble), starts)
    return out.astype(np.float64)
