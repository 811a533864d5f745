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

When.  The refinement is lazy (:class:`Pending`, kept with each composition's untilted
result and applied by :meth:`dpaudit.pld.distribution.PrivacyLossDistribution.refined`): a
query computes it only when the rounding mass is at least :data:`REFINE_SHARE` of its delta,
and the bounds returned are the tighter of the untilted and the refined ones (both are
certified).  Results that are only composed further are never refined: compositions use the
untilted discretisations.

Rounding of the tilt itself: each tilted input is within relative ``r_in`` of the exact one
(the exponent ``t i - K`` to ``2 u (|t i| + |K|)``, ``exp`` to one ulp, the product to ``u``), so
the convolution of the computed inputs is within the factor ``(1 +- r_in)**k`` of the exact
tilted one, entrywise (all terms are non-negative); the untilting factor is within ``r_out``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from dpaudit.pld import fft
from dpaudit.pld.fft import UNIT_ROUNDOFF


class _UpperSide(Protocol):
    """What the refinement reads of a :class:`~dpaudit.pld.distribution.UpperPLD` (typed
    structurally: :mod:`dpaudit.pld.distribution` imports this module, not the reverse)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def offset(self) -> int: ...
    @property
    def masses(self) -> np.ndarray: ...


class _LowerSide(Protocol):
    """What the refinement reads of a :class:`~dpaudit.pld.distribution.LowerPLD`."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def offset(self) -> int: ...
    @property
    def p(self) -> np.ndarray: ...
    @property
    def qt(self) -> np.ndarray: ...
    @property
    def err(self) -> float: ...
    @property
    def q_error(self) -> float: ...


UpperT = TypeVar("UpperT", bound=_UpperSide)
LowerT = TypeVar("LowerT", bound=_LowerSide)

__all__ = [
    "CUT_SHARE",
    "REFINE_SHARE",
    "TILT_ABOVE",
    "TILT_TAIL",
    "Pending",
    "Tilted",
    "tilted_composition",
    "tilted_lower",
    "tilted_lower_pld",
    "tilted_upper",
    "upper_merge",
]

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
    """A tilted convolution of measures ``x_c`` (``count_c`` copies each), whose exact result is
    ``y``, computed on the window ``lo .. lo + len(values) - 1``.

    Attributes:
        t: the tilt per grid index.
        lo: index of ``values[0]``.
        values: the computed transform of the tilted inputs (clipped at 0).
        log_scale: ``S ~ sum_c count_c K_c``, the inputs' normalisers: the exact tilted
            result is ``y~_j = y_j exp(t j - sum_c count_c K_c)``, and ``S`` is within
            ``scale_err`` of that sum (its rounding).
        bin_error: bound on each entry's distance to the folded convolution of the computed
            inputs.
        grow: the computed inputs' convolution ``z`` satisfies ``z / grow <= y~ <= z grow``,
            entrywise.
        alias: bound on the mass that folding adds (``z`` outside the window), in all.
        tail: bound on the exact (untilted) mass above the window.
    """

    t: float
    lo: int
    values: np.ndarray
    log_scale: float
    bin_error: float
    grow: float
    alias: float
    tail: float
    scale_err: float = 0.0

    def _r_out(self, start: int) -> float:
        """The relative rounding bound of the untilting factors from ``start`` on: the
        exponent ``S - t j`` to ``u (2 |t j| + |S|)`` plus ``scale_err``, ``exp`` to one ulp."""
        top = max(abs(start), abs(self.lo + len(self.values)))
        rel = (2 * (abs(self.log_scale) + self.t * top) + 4) * UNIT_ROUNDOFF
        return (rel + math.expm1(self.scale_err)) * 1.01

    def untilted(self, start: int) -> np.ndarray:
        """The computed masses at indices ``start, ..., top`` (values times the factors)."""
        idx = np.arange(start, self.lo + len(self.values), dtype=np.float64)
        with np.errstate(under="ignore", over="ignore"):
            return self.values[start - self.lo :] * np.exp(self.log_scale - self.t * idx)

    def upper_masses(self, start: int) -> np.ndarray:
        """Upper bounds on the exact masses at indices ``start, ..., top``, rounded up: folding
        only adds mass, so ``y~_j <= z_j grow <= (values_j + bin_error) grow``."""
        idx = np.arange(start, self.lo + len(self.values), dtype=np.float64)
        with np.errstate(under="ignore", over="ignore"):
            factor = np.exp(self.log_scale - self.t * idx)
        vals = self.values[start - self.lo :] + self.bin_error
        return vals * factor * (self.grow * (1 + self._r_out(start)) * (1 + 4 * UNIT_ROUNDOFF))


def _tilt(masses: np.ndarray, offset: int, t: float) -> tuple[np.ndarray, float, float]:
    """``(x~, K, r_in)``: ``x~_i = x_i exp(t (offset + i) - K)`` with ``K`` about the log of
    ``sum x_i exp(t (offset + i))`` (so ``sum x~`` is about 1), and ``r_in`` a bound on each
    entry's relative rounding error."""
    idx = offset + np.arange(len(masses), dtype=np.float64)
    nz = masses > 0
    if not np.any(nz):
        return masses.copy(), 0.0, 0.0
    with np.errstate(divide="ignore"):
        a = np.log(masses[nz]) + t * idx[nz]
    k = float(np.max(a))
    with np.errstate(under="ignore"):
        k += math.log(float(np.sum(np.exp(a - k))))
    with np.errstate(under="ignore", over="ignore"):
        tilted = masses * np.exp(t * idx - k)
    r_in = (2 * (abs(t) * float(np.max(np.abs(idx))) + abs(k)) + 4) * UNIT_ROUNDOFF * 1.01
    return tilted, k, r_in


def choose_tilt(factors: list[tuple[np.ndarray, int, int]], t_hi: float, tail: float) -> float:
    """The tilt: about the Chernoff saddle point of the upper :data:`TILT_TAIL` of the sum, by
    the Gaussian rule ``t = sqrt(-2 log TILT_TAIL / Var)`` (the start of the search in
    :func:`dpaudit.pld.fft.chernoff_window`), but not above the window's upper-edge tilt
    ``t_hi`` scaled by ``sqrt(log TILT_TAIL / log tail)`` (the same rule between the two
    tails; it matters for tails heavier than Gaussian).  Any t > 0 is sound: this one only
    places the cut."""
    if tail >= TILT_TAIL:
        return 0.0
    variance = 0.0
    for masses, offset, count in factors:
        nz = np.nonzero(masses > 0)[0]
        if nz.size and count:
            idx = (nz + offset).astype(np.float64)
            variance += count * fft._cumulants(np.log(masses[nz]), idx, 0.0)[2]
    if not variance > 0:
        return 0.0
    t = math.sqrt(-2 * math.log(TILT_TAIL) / variance)
    if t_hi > 0 and math.isfinite(t_hi):
        t = min(t, t_hi * math.sqrt(math.log(TILT_TAIL) / math.log(tail)))
    return t


def tilted_composition(
    factors: list[tuple[np.ndarray, int, int]],
    window: tuple[int, int],
    t_hi: float,
    tail: float,
) -> Tilted | None:
    """The composition of ``factors`` (``(masses, offset, count)``: one factor, or several with
    count 1) computed on tilted inputs.

    Args:
        factors: the measures to convolve.
        window: the untilted composition's window: mass ``<= tail`` below and above it.
        t_hi: its upper edge's tilt, as :func:`dpaudit.pld.fft.chernoff_window_tilt` returns.
        tail: that window's tail.

    The tilted window: above ``hi`` the tilted mass is at most ``exp(-(t_hi - t) x - S) M(t_hi)
    <= tail exp(t_hi hi - S - (t_hi - t) x)`` (a Chernoff bound at ``t_hi - t`` on the tilted
    measure), at most ``tail`` from the ``hi_t`` chosen here; below ``lo_t`` it is at most
    ``exp(t lo_t - S)`` times the untilted mass there.  Without a certified ``t_hi`` the
    tilted measure's own window is searched.

    Returns:
        The tilted result, or None when there is no positive tilt (no upper tail).
    """
    t = choose_tilt(factors, t_hi, tail)
    if not t > 0 or not math.isfinite(t):
        return None
    tilted = []
    scales = []
    log_total = 0.0
    r_max = 0.0
    copies = 0
    for masses, offset, count in factors:
        x, k, r_in = _tilt(masses, offset, t)
        tilted.append((x, offset, count))
        scales.append(count * k)
        log_total += count * math.log(max(float(np.sum(masses)) * (1 + 1e-12), 1e-300))
        r_max = max(r_max, r_in)
        copies += count
    # fsum rounds the sum once; each product count * k once
    log_scale = math.fsum(scales)
    scale_err = 2 * UNIT_ROUNDOFF * (abs(log_scale) + math.fsum(abs(v) for v in scales))
    # (1 - r)^-k <= exp(k r / (1 - r)): z within the factor grow of y~, entrywise
    grow = math.exp(copies * r_max / (1 - r_max) * (1 + 1e-6)) * (1 + 4 * UNIT_ROUNDOFF)
    lo, hi = window
    slack = 1e-9 * (abs(log_scale) + t * (abs(lo) + abs(hi)) + abs(log_total) + 1)
    if t_hi == 0:  # hi is the top of the support
        hi_t, above = hi, 0.0
    elif math.isfinite(t_hi) and t < t_hi:
        hi_t = max(hi, math.ceil((t_hi * hi - log_scale) / (t_hi - t)))
        expo = t_hi * hi - log_scale - (t_hi - t) * hi_t
        above = tail * math.exp(min(expo + slack, 700.0))
    else:
        hi_t = max(hi, fft.chernoff_window(tilted, tail)[1])
        above = tail * grow
    lo_t = max(lo, math.floor((log_scale + math.log(tail) - log_total) / t))
    if lo_t > lo:
        below = math.exp(min(t * lo_t - log_scale + log_total + slack, 700.0))
    else:
        below = tail * math.exp(min(t * lo - log_scale + slack, 700.0))
    if lo_t > hi_t or hi_t - lo_t > 2 * (hi - lo) + 64:
        return None  # the tilted window would not be cheaper than giving up the gain
    if len(tilted) == 1 and tilted[0][2] > 1:
        x, offset, count = tilted[0]
        vals, start, _, linf = fft.self_convolve_bins(
            x, offset, count, (lo_t, hi_t), fft.lattice_stride(x)
        )
    else:
        vals, start, _, linf = fft.convolve_many_bins(
            [(x, off) for x, off, _ in tilted], (lo_t, hi_t)
        )
    vals = vals[: hi_t - start + 1]
    alias = (above + below) * grow * (1 + 1e-9)
    return Tilted(t, start, vals, log_scale, linf, grow, alias, tail, scale_err)


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
    return out, offset, tilted.tail, error


def tilted_upper(
    factors: list[tuple[np.ndarray, int, int]],
    window: tuple[int, int, float],
    masses: np.ndarray,
    offset: int,
    error: float,
    tail: float,
) -> tuple[np.ndarray, int, float]:
    """An untilted upper result ``(masses, offset)`` of the composition of ``factors`` on
    ``window`` (``(lo, hi, t_hi)`` from :func:`dpaudit.pld.fft.chernoff_window_tilt`), with
    ``error`` its mass for rounding and windows (bound for ``+inf``), improved by a tilted
    transform where that helps (:func:`upper_merge`); returns ``(masses, offset, mass to put at
    +inf in place of error)``, the input unchanged when tilting does not help."""
    if not error >= TILT_ABOVE or not math.isfinite(error):
        return masses, offset, error
    tilted = tilted_composition(factors, window[:2], window[2], tail)
    merged = upper_merge(masses, offset, error, tilted)
    if merged is None:
        return masses, offset, error
    out, off, at_inf, _ = merged
    nz = np.nonzero(out)[0]
    return out[nz[0] : nz[-1] + 1].copy(), off + int(nz[0]), at_inf


def _cut(tilted: Tilted, error: float) -> float:
    """The index from which the tilted errors sum to at most ``CUT_SHARE * error``."""
    scale = tilted.bin_error * tilted.grow + tilted.alias
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
    unfolded one ``z`` by the aliased mass (at most ``alias`` in all), and
    ``|z - y~| <= (grow - 1) y~`` with ``y~ <= (z^ + bin_error) grow`` the exact tilted mass
    (see :class:`Tilted`).  Summed: ``f_c (bin_error / (1 - e^-t) + 2 tail) + (grow - 1 + r_out
    + u) sum_j upper_j``; the exact mass above the window is at most ``tail``.
    """
    values = tilted.untilted(cut)
    upper = tilted.upper_masses(cut)
    first = math.exp(tilted.log_scale - tilted.t * cut) * (1 + 1e-9)
    spread = (tilted.bin_error / -math.expm1(-tilted.t) + tilted.alias) * first
    rel = (tilted.grow - 1) + tilted._r_out(cut) + UNIT_ROUNDOFF
    err = spread + rel * float(np.sum(upper)) * (1 + 1e-6) + tilted.tail
    return values, err * (1 + 1e-6)


def tilted_lower(
    p_factors: list[tuple[np.ndarray, int, int]],
    q_factors: list[tuple[np.ndarray, int, int]],
    window: tuple[int, int, float, float],
    p: np.ndarray,
    qt: np.ndarray,
    offset: int,
    error: float,
    tail: float,
) -> tuple[np.ndarray, np.ndarray, float, float, int, float] | None:
    """The lower side's counterpart of :func:`tilted_upper`: the untilted ``p`` and ``qt`` (at
    indices ``offset + i``, l1 error ``error`` for rounding and windows, computed on
    ``window = (lo, hi, t_hi of p, t_hi of qt)``) are replaced from a cut ``c`` on by tilted
    results.

    Returns:
        ``(p, qt, error_from_cut, error_below_cut, c, q_error_from_cut)``: the l1 error of
        ``p`` plus that of ``qt`` is at most ``error_from_cut`` over the entries from ``c`` on
        and above, and at most ``error_below_cut`` over the entries below ``c`` (and the mass
        below the window); that of ``qt`` alone from ``c`` on at most ``q_error_from_cut``;
        None when tilting does not help.
    """
    if not error >= TILT_ABOVE or not math.isfinite(error):
        return None
    lo, hi, t_p, t_q = window
    tp = tilted_composition(p_factors, (lo, hi), t_p, tail)
    tq = tilted_composition(q_factors, (lo, hi), t_q, tail)
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
    extra_q = float(np.sum(vq[size - (cut - offset) :]))
    extra = float(np.sum(vp[size - (cut - offset) :])) + extra_q
    return new_p, new_q, (ep + eq + extra) * (1 + 1e-9), error, cut, (eq + extra_q) * (1 + 1e-9)


def tilted_lower_pld(
    lower: LowerT,
    p_factors: list[tuple[np.ndarray, int, int]],
    q_factors: list[tuple[np.ndarray, int, int]],
    window: tuple[int, int, float, float],
    rounding: float,
    tail: float,
) -> LowerT:
    """A :class:`~dpaudit.pld.distribution.LowerPLD` (whose ``err`` includes ``rounding``, the
    l1 error of its transforms and windows) with its entries from a cut on replaced by tilted
    transforms where that helps (:func:`tilted_lower`): tests whose set lies above the cut then
    subtract the tilted errors and the inherited part of ``err`` only (``err_from_cut``)."""
    got = tilted_lower(
        p_factors, q_factors, window, lower.p, lower.qt, lower.offset, rounding, tail
    )
    if got is None:
        return lower
    p, qt, err_hi, err_lo, cut, err_q_hi = got
    inherited = max(0.0, lower.err - rounding)
    # qt alone: below the cut its entries are unchanged (within the old bound), from the cut
    # on within the inherited error (at most the old bound) plus the tilted one
    old_q = lower.q_error
    return dataclasses.replace(
        lower,
        p=p,
        qt=qt,
        err=(inherited + err_hi + err_lo) * (1 + 1e-9),
        cut=cut,
        err_from_cut=(inherited + err_hi) * (1 + 1e-9),
        err_q=(2 * old_q + err_q_hi) * (1 + 1e-9),
    )


#: A composition is refined by its tilted transform only for a query it can move: an epsilon
#: at a delta, or a delta of about that size, at most this many times the rounding mass the
#: transform would remove (below, that mass moves delta by less than this share).  Results
#: that are only composed further never pay for it.
REFINE_SHARE = 1e-4


@dataclasses.dataclass(frozen=True)
class Pending:
    """The inputs of the tilted refinement of one composition (upper and lower side), kept
    with its untilted result and applied on the first query it can move
    (:meth:`dpaudit.pld.distribution.PrivacyLossDistribution.refined`).

    Attributes:
        up_factors: the upper inputs ``(masses, offset, count)``.
        up_window: their composition's window ``(lo, hi, t_hi)``.
        up_error: the untilted result's rounding and window mass (at ``+inf``).
        up_gap: the rest of its mass at ``+inf`` (the inputs' own).
        low_factors: the lower inputs' P- and tilted Q-factors, or None (no lower side).
        low_window: their window ``(lo, hi, t_p, t_q)``.
        low_rounding: the untilted lower result's rounding and window share of ``err``.
        tail: the windows' tail.
    """

    up_factors: list[tuple[np.ndarray, int, int]]
    up_window: tuple[int, int, float]
    up_error: float
    up_gap: float
    low_factors: tuple[list[tuple[np.ndarray, int, int]], list[tuple[np.ndarray, int, int]]] | None
    low_window: tuple[int, int, float, float]
    low_rounding: float
    tail: float

    @property
    def rounding(self) -> float:
        """The largest rounding mass the refinement can remove from either side."""
        return max(self.up_error, self.low_rounding if self.low_factors is not None else 0.0)

    def apply(self, upper: UpperT, lower: LowerT) -> tuple[UpperT, LowerT]:
        """The refined ``(upper, lower)`` of the untilted ones."""
        upper = self.apply_upper(upper)
        if self.low_factors is not None:
            p_factors, q_factors = self.low_factors
            lower = tilted_lower_pld(
                lower, p_factors, q_factors, self.low_window, self.low_rounding, self.tail
            )
        return upper, lower

    def apply_upper(self, upper: UpperT) -> UpperT:
        """The refined upper side of the untilted one: a valid upper PLD for every query and
        every further composition (see the module doc), whose rounding mass sits below the
        cut instead of at ``+inf``."""
        m, off, at_inf = tilted_upper(
            self.up_factors, self.up_window, upper.masses, upper.offset, self.up_error, self.tail
        )
        if m is upper.masses:
            return upper
        inf_mass = (self.up_gap + at_inf) * (1 + 1e-9)
        return dataclasses.replace(upper, offset=off, masses=m, inf_mass=inf_mass)
