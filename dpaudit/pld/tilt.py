"""Exponentially tilted FFT convolution: per-entry rounding bounds that shrink in the tail.

The rounding error of an FFT convolution is spread evenly over the output (each entry of the
result is within ``bin_error`` of the exact value, :func:`dpaudit.pld.fft.self_convolve_bins`),
so in the upper tail, where a small delta is decided, the error can exceed the mass itself:
at delta 1e-10 the l1 error of 100 Laplace compositions was 4-7% of delta (issue 19 part 3).

Exponential tilting (the Esscher transform: Esscher 1932; Feller 1971, Vol. II, Section XVI.7)
commutes with convolution: if ``x~_i = x_i exp(t i - K_x)`` and ``y~_j = y_j exp(t j - K_y)``
then ``(x~ * y~)_k = (x * y)_k exp(t k - K_x - K_y)``, exactly, for every real ``t`` and
constants ``K``.  So the composition is also computed on tilted inputs (``t > 0`` the Chernoff
saddle point of an upper tail, ``K`` the log moment generating function so the tilted masses
sum to about 1) and untilted afterwards: entry ``j``'s error bound ``E`` becomes
``E exp(sum K - t j)``, tiny in the upper tail and useless in the lower one.

How the two results are combined (upper, dominating side).  Let ``c`` be a cut index.  Below
``c`` the untilted result is kept and its whole error mass ``A`` (rounding l1 bound plus
window tails) is put at the grid point ``c - 1``; from ``c`` on, each entry is the untilted
tilted result plus its own error bound, rounded up; the tilted window's upper tail goes to
``+inf``.  This measure dominates the exact one in the order of integrals of non-negative
increasing functions (every entry from ``c`` on is an upper bound on the exact mass; the
errors below ``c`` moved up to ``c - 1`` can only raise such an integral), an order that
convolution with non-negative measures preserves and that bounds every privacy profile value
(``(1 - exp(eps - l))_+`` is non-negative and increasing in ``l``): so the result is a valid
upper PLD for every query and every further composition.  The cut is chosen so that the
tilted errors from ``c`` on sum to at most :data:`CUT_SHARE` of ``A``: no profile value is
more than that share worse than without tilting (``A`` at ``c - 1`` instead of ``+inf`` counts
only for ``eps < s_{c-1}``), and for ``eps >= s_{c-1}`` the rounding term nearly vanishes.

Rounding of the tilt itself: each tilted input is within relative ``r_in`` of the exact one
(the exponent ``t i - K`` to ``2 u (|t i| + |K|)``, ``exp`` to one ulp, the product to ``u``), so
the convolution of the computed inputs is within the factor ``(1 +- r_in)**k`` of the exact
tilted one, entrywise (all terms are non-negative); the untilting factor is within ``r_out``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpaudit.pld import fft
from dpaudit.pld.fft import UNIT_ROUNDOFF

__all__ = ["CUT_SHARE", "TILT_ABOVE", "TILT_TAIL", "Tilted", "tilted_composition", "upper_merge"]

#: The upper tail whose Chernoff saddle point sets the tilt.  The cut lands about half-way
#: between the mean and that tail's edge; every profile value beyond it (delta below about
#: 1e-5 for the compositions measured) sees almost no rounding term.
TILT_TAIL = 1e-8

#: The share of the untilted error mass that the tilted errors above the cut may add.
CUT_SHARE = 1e-3

#: No tilted transform is computed when the untilted error mass is below this (it can then
#: move no delta above 1e-13 by more than 1%).
TILT_ABOVE = 1e-15


@dataclasses.dataclass(frozen=True)
class Tilted:
    """A tilted convolution: entry ``j`` (from ``lo``) of the exact result ``y`` satisfies
    ``y_j <= (values_j + bin_error) exp(log_scale - t j) * grow`` (the tilted window holds
    all but ``tail`` of the tilted mass above ``lo + len(values) - 1``)."""

    t: float
    lo: int
    values: np.ndarray
    log_scale: float
    bin_error: float
    grow: float
    tail: float

    def _r_out(self, start: int) -> float:
        """The relative rounding bound of the untilting factors from ``start`` on."""
        top = max(abs(start), abs(self.lo + len(self.values)))
        return (2 * (abs(self.log_scale) + self.t * top) + 4) * 1.01 * UNIT_ROUNDOFF

    def untilted(self, start: int) -> np.ndarray:
        """The computed masses at indices ``start, ..., top`` (values times the factors)."""
        idx = np.arange(start, self.lo + len(self.values), dtype=np.float64)
        with np.errstate(under="ignore", over="ignore"):
            return self.values[start - self.lo :] * np.exp(self.log_scale - self.t * idx)

    def upper_masses(self, start: int) -> np.ndarray:
        """Upper bounds on the exact masses at indices ``start, ..., top``, rounded up."""
        idx = np.arange(start, self.lo + len(self.values), dtype=np.float64)
        with np.errstate(under="ignore", over="ignore"):
            factor = np.exp(self.log_scale - self.t * idx)
        vals = self.values[start - self.lo :] + self.bin_error
        return vals * factor * (self.grow * (1 + self._r_out(start)) * (1 + 4 * UNIT_ROUNDOFF))

    def above_top(self) -> float:
        """An upper bound on the exact mass above the tilted window (``tail`` untilted)."""
        top = self.lo + len(self.values)
        expo = self.log_scale - self.t * top
        if expo > 700:
            return math.inf
        return self.tail * math.exp(expo) * self.grow * (1 + 1e-9)


def _tilt(masses: np.ndarray, offset: int, t: float) -> tuple[np.ndarray, float, float]:
    """``(x~, K, r_in)``: ``x~_i = x_i exp(t (offset + i) - K)`` with ``K`` about the log of
    ``sum x_i exp(t (offset + i))`` (so ``sum x~`` is about 1), and ``r_in`` a bound on each
    entry's relative rounding error."""
    idx = offset + np.arange(len(masses), dtype=np.float64)
    nz = masses > 0
    with np.errstate(divide="ignore"):
        log_m = np.where(nz, np.log(np.where(nz, masses, 1.0)), -np.inf)
    a = log_m + t * idx
    k = float(np.max(a[nz])) if np.any(nz) else 0.0
    with np.errstate(under="ignore"):
        k += math.log(float(np.sum(np.exp(a[nz] - k)))) if np.any(nz) else 0.0
    with np.errstate(under="ignore", over="ignore"):
        tilted = masses * np.exp(t * idx - k)
    r_in = (2 * (abs(t) * float(np.max(np.abs(idx))) + abs(k)) + 4) * UNIT_ROUNDOFF * 1.01
    return tilted, k, r_in


def tilted_composition(
    factors: list[tuple[np.ndarray, int, int]], tail: float, t: float | None = None
) -> Tilted | None:
    """The composition of ``factors`` (``(masses, offset, count)``: ``count`` copies of each,
    either one factor or several with count 1) computed on tilted inputs.

    Args:
        factors: the measures to convolve.
        tail: the tilted mass (of about 1) admitted above the tilted window.
        t: the tilt per grid index; by default the Chernoff saddle point of the upper
            :data:`TILT_TAIL` of the sum (:func:`dpaudit.pld.fft.chernoff_tilt`).

    Returns:
        The tilted result, or None when there is no positive tilt (no upper tail).
    """
    if t is None:
        t = fft.chernoff_tilt(factors, TILT_TAIL)
    if not t > 0 or not math.isfinite(t):
        return None
    tilted = []
    log_scale = 0.0
    r_max = 0.0
    copies = 0
    for masses, offset, count in factors:
        x, k, r_in = _tilt(masses, offset, t)
        tilted.append((x, offset, count))
        log_scale += count * k
        r_max = max(r_max, r_in)
        copies += count
    lo, hi = fft.chernoff_window(tilted, tail)
    if len(tilted) == 1 and tilted[0][2] > 1:
        x, offset, count = tilted[0]
        vals, start, _, linf = fft.self_convolve_bins(
            x, offset, count, (lo, hi), fft.lattice_stride(x)
        )
    else:
        vals, start, _, linf = fft.convolve_many_bins([(x, off) for x, off, _ in tilted], (lo, hi))
    vals = vals[: hi - start + 1]
    # (1 - r)^-k <= exp(k r / (1 - r)); the exact tilted result is at most the computed
    # inputs' convolution divided by (1 - r_in)^copies, entrywise
    grow = math.exp(copies * r_max / (1 - r_max) * (1 + 1e-6)) * (1 + 4 * UNIT_ROUNDOFF)
    return Tilted(t, start, vals, log_scale, linf, grow, tail)


def upper_merge(
    masses: np.ndarray, offset: int, error: float, tilted: Tilted | None
) -> tuple[np.ndarray, int, float, float] | None:
    """Merge an untilted upper result with a tilted one (see the module doc).

    Args:
        masses: the untilted result at indices ``offset + i``.
        offset: index of ``masses[0]``.
        error: the mass the untilted result would put at ``+inf`` for its rounding and its
            window (it moves to the grid point below the cut).
        tilted: the tilted composition of the same factors.

    Returns:
        ``(masses, offset, error_at_inf, error_moved)`` of the merged measure (the mass to add
        at ``+inf`` in place of ``error``, and the share of ``error`` now at a finite point), or
        None when the cut falls above the untilted result (tilting gains nothing).
    """
    if tilted is None or not error > 0:
        return None
    top_u = offset + len(masses) - 1
    top_t = tilted.lo + len(tilted.values) - 1
    t = tilted.t
    # smallest c with sum_{j >= c} E exp(S - t j) <= CUT_SHARE * error (E the bin error)
    scale = tilted.bin_error * tilted.grow / (CUT_SHARE * error * -math.expm1(-t))
    if not scale > 0 or not math.isfinite(scale):
        return None
    cut = math.ceil((tilted.log_scale + math.log(scale)) / t)
    cut = max(cut, tilted.lo, offset + 1)
    if cut > min(top_u, top_t):
        return None
    out = np.zeros(top_t - offset + 1)
    out[: cut - offset] = masses[: cut - offset]
    out[cut - 1 - offset] = (out[cut - 1 - offset] + error) * (1 + 2 * UNIT_ROUNDOFF)
    out[cut - offset :] = tilted.upper_masses(cut)
    return out, offset, tilted.above_top(), error


def tilted_upper(
    factors: list[tuple[np.ndarray, int, int]],
    masses: np.ndarray,
    offset: int,
    error: float,
    tail: float,
) -> tuple[np.ndarray, int, float]:
    """An untilted upper result ``(masses, offset)`` of the composition of ``factors``, with
    ``error`` its mass for rounding and windows (bound for ``+inf``), improved by a tilted
    transform where that helps (:func:`upper_merge`); returns ``(masses, offset, mass to put at
    +inf in place of error)``, the input unchanged when tilting does not help."""
    if not error >= TILT_ABOVE or not math.isfinite(error):
        return masses, offset, error
    merged = upper_merge(masses, offset, error, tilted_composition(factors, tail))
    if merged is None:
        return masses, offset, error
    out, off, at_inf, _ = merged
    nz = np.nonzero(out)[0]
    return out[nz[0] : nz[-1] + 1].copy(), off + int(nz[0]), at_inf


def _cut(tilted: Tilted, error: float) -> float:
    """The index from which the tilted errors sum to at most ``CUT_SHARE * error``."""
    scale = (tilted.bin_error + 2 * tilted.tail) * tilted.grow
    scale /= CUT_SHARE * error * -math.expm1(-tilted.t)
    if not scale > 0 or not math.isfinite(scale):
        return math.inf
    return math.ceil((tilted.log_scale + math.log(scale)) / tilted.t)


def _two_sided(tilted: Tilted, cut: int) -> tuple[np.ndarray, float]:
    """The untilted values from ``cut`` to the tilted window's top and a bound on their l1
    distance to the exact masses there and above (two-sided, for the lower side).

    Entry j, with ``f_j = exp(S - t j)``: the computed entry ``v_j`` is within
    ``r_out + u`` (relative) of ``z^_j f_j``; the computed transform ``z^`` is within
    ``bin_error`` of the folded convolution of the computed inputs, which exceeds the
    unfolded one ``z`` by the aliased mass (at most ``2 tail`` in all), and
    ``|z - y~| <= (grow - 1) y~`` with ``y~ <= (z^ + bin_error) grow`` the exact tilted mass
    (see :class:`Tilted`).  Summed: ``f_c (bin_error / (1 - e^-t) + 2 tail) + (grow - 1 + r_out
    + u) sum_j upper_j``; the exact mass above the window is at most :meth:`Tilted.above_top`.
    """
    values = tilted.untilted(cut)
    upper = tilted.upper_masses(cut)
    first = math.exp(tilted.log_scale - tilted.t * cut) * (1 + 1e-9)
    spread = (tilted.bin_error / -math.expm1(-tilted.t) + 2 * tilted.tail) * first
    rel = (tilted.grow - 1) + tilted._r_out(cut) + UNIT_ROUNDOFF
    err = spread + rel * float(np.sum(upper)) * (1 + 1e-6) + tilted.above_top()
    return values, err * (1 + 1e-6)


def tilted_lower(
    p_factors: list[tuple[np.ndarray, int, int]],
    q_factors: list[tuple[np.ndarray, int, int]],
    p: np.ndarray,
    qt: np.ndarray,
    offset: int,
    error: float,
    tail: float,
) -> tuple[np.ndarray, np.ndarray, float, float, int] | None:
    """The lower side's counterpart of :func:`tilted_upper`: the untilted ``p`` and ``qt`` (at
    indices ``offset + i``, l1 error ``error`` for rounding and windows) are replaced from a
    cut ``c`` on by tilted results (each tilted by the Chernoff tilt of the P-measure).

    Returns:
        ``(p, qt, error_from_cut, error_below_cut, c)``: the l1 error of ``p`` plus that of
        ``qt`` is at most ``error_from_cut`` over the entries from ``c`` on and above, and at
        most ``error_below_cut`` over the entries below ``c`` (and the mass below the window);
        None when tilting does not help.
    """
    if not error >= TILT_ABOVE or not math.isfinite(error):
        return None
    t = fft.chernoff_tilt(p_factors, TILT_TAIL)
    tp = tilted_composition(p_factors, tail, t)
    tq = tilted_composition(q_factors, tail, t)
    if tp is None or tq is None:
        return None
    top = offset + len(p) - 1
    cut = max(_cut(tp, error / 2), _cut(tq, error / 2), tp.lo, tq.lo, offset + 1)
    if cut > min(top, tp.lo + len(tp.values) - 1, tq.lo + len(tq.values) - 1):
        return None
    cut = int(cut)
    vp, ep = _two_sided(tp, cut)
    vq, eq = _two_sided(tq, cut)
    size = cut - offset + min(len(vp), len(vq))
    new_p = np.zeros(size)
    new_q = np.zeros(size)
    new_p[: cut - offset] = p[: cut - offset]
    new_q[: cut - offset] = qt[: cut - offset]
    new_p[cut - offset :] = vp[: size - (cut - offset)]
    new_q[cut - offset :] = vq[: size - (cut - offset)]
    # entries of the longer tilted vector beyond the shorter one are left at 0: their mass
    # is an error of that side
    extra = float(np.sum(vp[size - (cut - offset) :])) + float(np.sum(vq[size - (cut - offset) :]))
    return new_p, new_q, (ep + eq + extra) * (1 + 1e-9), error, cut
