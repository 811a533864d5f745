"""Discretised privacy loss distributions with certified upper and lower privacy profiles.

A privacy loss distribution (PLD) of a pair of output distributions ``(P, Q)`` is the law of
``L = log(dP/dQ)(X)`` for ``X ~ P``; its *privacy profile* is
``delta(eps) = E[(1 - exp(eps - L))_+]`` (the hockey-stick divergence ``H_{e^eps}(P || Q)``),
and the PLD of a composition is the convolution of the PLDs (Sommer, Meiser, Mohammadi 2019,
Theorem 1; Koskela, Jalko, Honkela 2020).

This module keeps two discretisations of one pair on a common grid ``{j h}``:

* :class:`UpperPLD` -- a *dominating* pair whose losses lie on the grid.  Its masses come
  from the "connect the dots" split (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022,
  Theorem 4.3 and Section 4.2): a loss ``l`` in ``[s_j, s_{j+1}]`` is split between the two grid
  points so that both the P- and the Q-mass are preserved, which makes the true pair a
  post-processing of the discretised one.  Mass beyond the grid is moved to ``+inf`` (or up to
  the first grid point), every numerical error is added as mass at ``+inf``, and a loss shift
  covers the rounding of the loss function itself.  Domination is preserved by composition
  (Zhu, Dong, Wang 2022, Theorem 10), so every profile value it gives is an upper bound.
* :class:`LowerPLD` -- a *post-processing* of the pair onto the grid (a Markov kernel sends each
  output to a grid point), kept as its P-masses ``p`` and its tilted Q-masses
  ``qt_j = exp(s_j) Q_j``.  For any threshold the test ``S = {sum of grid points > s}`` gives
  ``delta(eps) >= P^k(S) - exp(eps) Q^k(S)``, so after subtracting the tracked l1 errors every
  profile value it gives is a lower bound.

Privacy:
    For every eps: ``delta_lower(eps) <= delta_{P,Q}(eps) <= delta_upper(eps)``, and
    ``epsilon_lower(delta) <= eps_{P,Q}(delta) <= epsilon_upper(delta)`` where
    ``eps_{P,Q}(delta) = inf {eps : delta_{P,Q}(eps) <= delta}``, under the stated accuracy of
    the platform's ``exp``/``log`` (one ulp); the bucket masses of continuous mechanisms are
    proven enclosures (:mod:`dpaudit.pld.masses`), not estimates.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import numpy as np

from dpaudit.pld import fft, tilt
from dpaudit.pld.fft import UNDERFLOW, UNIT_ROUNDOFF
from dpaudit.pld.sums import _suffix_tilted, coarse_sums

__all__ = [
    "DEFAULT_TAIL",
    "DIRECT_SHARE",
    "GRID_BUDGET",
    "MAX_COARSE_STEP",
    "LowerPLD",
    "PrivacyLossDistribution",
    "UpperPLD",
]

#: Default tail mass (per tail, per composition step) dropped when choosing FFT windows.
DEFAULT_TAIL = 1e-30

#: A composition in blocks is recomputed in one transform, from its leaf's lower side centred
#: (:meth:`LowerPLD.centred`), for a query at a delta of which its lower side's l1 error is at
#: least this share.  DP-SGD (sigma 2, q = 256/60000, 1e-4 grid) after 10^5 steps (an error of
#: 7e-9): epsilon lower bound at delta 1e-6 (share 0.7%) 3.3813 against the blocks' 3.3805,
#: at 1e-7 3.7200 against 3.7061, at 1e-10 4.5866 against 4.0185, for about 0.25 CPU s more per
#: direction; at 3e-6 (share 0.24%) the blocks' is the better one.  With sigma 2.87494 after
#: 10^6 steps (an error of 5.5e-8): at delta 1e-6 (share 5.5%) 7.9897 against 7.9655.
DIRECT_SHARE = 1e-2

#: The most grid points a composition computes on.  A composition whose window would be wider
#: is computed on a grid 2, 4, 8, ... times coarser (:meth:`PrivacyLossDistribution.coarsened`,
#: sound in both directions), so the work of composing k copies is bounded for every k, at
#: the price of a looser bound when k is huge (issue 15 part 4: ``SelfComposed(Laplace(1),
#: 10**6)`` used a 19M-point grid and 1.8 GB before).
GRID_BUDGET = 2**21
#: The coarsest grid step a composition may be moved to (beyond it, no PLD is computed and the
#: accountant uses its other rules).  The lower discretisation is dropped instead (no certified
#: lower bound, never a wrong one) when its own window does not fit the budget: its tilted
#: masses can drift away from its P-masses on a coarse grid.
MAX_COARSE_STEP = 64.0

_SUM_REL = 1e-14  # relative error allowance of numpy's pairwise sum of n < 2**30 non-negative terms


def _check_delta(delta: float) -> None:
    if not (isinstance(delta, (int, float)) and 0 <= delta <= 1 and not math.isnan(delta)):
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}")


def _check_epsilon(epsilon: float) -> None:
    if not isinstance(epsilon, (int, float)) or math.isnan(epsilon):
        raise ValueError(f"epsilon must be a real number, got {epsilon!r}")


def _check_count(count: int) -> None:
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")


@dataclasses.dataclass(frozen=True)
class UpperPLD:
    """A dominating privacy loss distribution on the grid ``{(offset + i) h}``.

    Attributes:
        h: grid step.
        offset: grid index of ``masses[0]``.
        masses: P-masses (non-negative) at the grid losses.
        inf_mass: mass at loss ``+inf``, including every numerical error bound.
        shift: every true loss is at most its grid value plus ``shift``.
    """

    h: float
    offset: int
    masses: np.ndarray
    inf_mass: float
    shift: float

    def losses(self) -> np.ndarray:
        """The grid losses of ``masses``."""
        return (self.offset + np.arange(len(self.masses))) * self.h

    def coarsened(self, g: int) -> UpperPLD:
        """A pair dominating this one on the grid of step ``g h`` (``g`` a power of 2).

        Each atom at a loss ``l`` strictly between coarse points ``a < l < b`` is split between
        them by "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, Theorem
        4.3): P-mass fraction ``w = (1 - exp(a - l)) / (1 - exp(a - b))`` goes to ``b`` and the
        rest to ``a``, which preserves both the P- and the Q-mass, so this pair is a
        post-processing of the result: the result dominates it, and every composition with
        it (Zhu, Dong, Wang 2022, Theorem 10).  Unlike rounding every loss up, the split
        keeps the mean loss, so k compositions lose O(k g^2 h^2) in variance, not k g h in mean.
        The rounding of the weights and of the block sums (at most 2g terms each) goes to
        ``+inf``; the coarse grid values ``J g h`` are exact multiples (g is a power of 2), and
        a loss shift of a few ulps of the largest loss covers their rounding.
        """
        off, first = divmod(self.offset, g)
        r = np.arange(g, dtype=np.float64)
        w = np.expm1(-r * self.h) / math.expm1(-g * self.h)
        masses = coarse_sums(self.masses, first, g, 1 - w, w)
        n = len(masses)
        # the weights' rounding (each split within 8u of the exact one, in l1) and the sums'
        rel = 12 * UNIT_ROUNDOFF + (2 * g + 4) * UNIT_ROUNDOFF
        # (+ the underflow of the 2 products per mass, pld.fft.UNDERFLOW)
        lost = rel * float(np.sum(self.masses)) * (1 + 1e-6) + 2 * len(self.masses) * UNDERFLOW
        top = (abs(off) + n) * self.h * g
        return UpperPLD(
            self.h * g,
            off,
            masses,
            (self.inf_mass + lost) * (1 + 1e-9),
            self.shift + 4 * UNIT_ROUNDOFF * (top + 1),
        )

    def total(self) -> float:
        """An upper bound on the total mass (finite part plus ``+inf``)."""
        return (float(np.sum(self.masses)) + self.inf_mass) * (1 + _SUM_REL)

    def delta(self, epsilon: float) -> float:
        """An upper bound on the privacy profile at ``epsilon``."""
        _check_epsilon(epsilon)
        e = epsilon - self.shift
        s = self.losses()
        sel = s > e
        with np.errstate(under="ignore"):
            terms = self.masses[sel] * -np.expm1(e - s[sel])
        value = (float(np.sum(terms)) * (1 + _SUM_REL) + self.inf_mass) * (1 + 4 * UNIT_ROUNDOFF)
        return min(1.0, value)

    def epsilon(self, delta: float) -> float:
        """An upper bound on the smallest epsilon with profile ``<= delta`` (inf if none)."""
        _check_delta(delta)
        if self.inf_mass * (1 + 4 * UNIT_ROUNDOFF) >= delta:
            return math.inf
        m = self.masses
        h = self.h
        t = _suffix_tilted(m, h) * (1 + 4 * len(m) * UNIT_ROUNDOFF + _SUM_REL)
        # U_j = profile at grid point j (without inf): positive recurrence
        t_next = np.concatenate((t[1:], [0.0]))
        inc = (-math.expm1(-h)) * (np.concatenate((m[1:], [0.0])) + t_next)
        u = np.cumsum(inc[::-1])[::-1] * (1 + 4 * len(m) * UNIT_ROUNDOFF + _SUM_REL)
        total = u + self.inf_mass
        ok = np.nonzero(total <= delta)[0]
        if ok.size == 0:
            # even at the top grid point the profile exceeds delta: only +inf mass remains above
            return math.inf
        j = int(ok[0])
        s = self.losses()
        if j == 0:
            e = float(s[0])
        else:
            # on [s_{j-1}, s_j]: profile(e) = inf + S - exp(e - s_{j-1}) T_{j-1}
            tail_mass = float(np.sum(m[j:])) * (1 + _SUM_REL) + self.inf_mass
            tj = float(t[j - 1])
            e = float(s[j])
            if tj > 0 and tail_mass > delta:
                e = min(e, float(s[j - 1]) + math.log((tail_mass - delta) / tj))
        e_up = e + self.shift
        e_up += 1e-12 * (1 + abs(e_up))
        # verify directly; nudge up if rounding made the closed form too optimistic
        for _ in range(60):
            if self.delta(e_up) <= delta:
                break
            e_up += max(1e-12, 1e-9 * abs(e_up)) * 4
        return e_up


@dataclasses.dataclass(frozen=True)
class LowerPLD:
    """A post-processing of a pair onto the grid, kept for certified lower bounds.

    Attributes:
        h: grid step.
        offset: grid index of ``p[0]`` and ``qt[0]``.
        p: P-masses at the grid points.
        qt: tilted Q-masses ``exp(s_j) Q_j`` at the grid points.
        p_inf: P-mass at ``+inf`` (where Q has no mass).
        err: bound on the l1 error of ``p`` plus that of ``qt`` (and of ``p_inf``).
        cut: a grid index (or None) from which on ``err_from_cut`` bounds that error: a test
            whose set holds only grid points from ``cut`` on subtracts only ``err_from_cut``
            (the entries there come from a tilted transform, :mod:`dpaudit.pld.tilt`).
        err_from_cut: bound on the l1 error of ``p`` plus ``qt`` over the indices ``>= cut``.
        err_q: bound on the l1 error of ``qt`` alone (None: only ``err`` is known, which bounds
            it too).  A test ``S_j = {index > offset + j}`` read at an ``eps`` above the grid
            point ``s_j`` weighs the tilted masses by ``exp(eps - s_i) <= w = exp(eps - s_j)``,
            above 1: its error is at most ``err + (w - 1) min(err_q, err)``, not ``err``.  Long
            compositions need this: the kernel's labels fall below the losses (by about
            ``k h / 2`` after ``k`` compositions, about 5 after 10^5 DP-SGD steps on a 1e-4
            grid), so the best test lies several units below ``eps``.
    """

    h: float
    offset: int
    p: np.ndarray
    qt: np.ndarray
    p_inf: float
    err: float
    cut: int | None = None
    err_from_cut: float = 0.0
    err_q: float | None = None

    def losses(self) -> np.ndarray:
        """The grid points."""
        return (self.offset + np.arange(len(self.p))) * self.h

    @classmethod
    def nothing(cls, h: float) -> LowerPLD:
        """The post-processing that sends every output to one point: it certifies nothing
        (every lower bound it gives is 0), and is used where a lower discretisation would not
        fit the grid budget."""
        return cls(h, 0, np.zeros(1), np.zeros(1), 0.0, 0.0, err_q=0.0)

    @property
    def q_error(self) -> float:
        """A bound on the l1 error of ``qt`` alone (``err_q``, or ``err`` when unknown)."""
        return self.err if self.err_q is None else min(self.err, self.err_q)

    def _test_errors(self) -> tuple[np.ndarray, np.ndarray]:
        """``(E, Eq)`` per test ``S_j = {index > offset + j}``: bounds on the l1 error of ``p``
        plus ``qt`` over the set (``err_from_cut`` for sets above the cut) and of ``qt`` alone
        (at most ``E``)."""
        err = np.full(len(self.p), self.err)
        if self.cut is not None:
            # S_j holds only grid points from the cut on when offset + j >= cut - 1
            err[max(0, self.cut - 1 - self.offset) :] = self.err_from_cut
        return err, np.minimum(err, self.q_error)

    def centred(self) -> LowerPLD:
        """The same post-processing followed by a Markov kernel that keeps the labels at the
        losses on average: a share ``1 - w_j`` of grid point ``j`` (of its P-mass and its
        Q-mass alike) moves to ``j + 1``, with ``w_j = expm1(h - o_j) / expm1(h)``, where
        ``o_j = log(p_j / qt_j)`` clipped to ``[0, h]`` estimates how far the point's losses lie
        above its label (the weight of an atom at loss ``s_j + o_j`` split onto the two grid
        points, as in :meth:`dpaudit.pld.atoms._Accumulator.add_atom`).  Any weights in
        ``[0, 1]`` make a post-processing, so every bound it gives is still a lower bound.

        A leaf labels each bucket of a continuous mechanism at its lower end
        (:mod:`dpaudit.pld.continuous`), so ``k`` compositions put the labels about
        ``k h / 2`` below the losses; the best test of a long composition then lies far below
        its epsilon, weighing the tilted masses' error by up to ``exp(k h / 2)``.  Centred
        first, the tests of a long composition at a small delta are read near their epsilon
        (DP-SGD, sigma 2, q = 256/60000, 10^5 steps on a 1e-4 grid, delta 1e-10: epsilon
        lower bound 4.587 against 4.424; with sigma 2.87494 after 10^6 steps, delta 1e-6:
        7.9897 against 7.9661).  At delta 1e-5 the kernel's added spread makes it slightly
        looser (3.00831 against 3.00913 after 10^5 steps), so it is used only for small
        deltas: :attr:`PrivacyLossDistribution.direct`.

        Error: the kernel's weights on the P-masses sum to 1 per point and on the tilted
        masses to at most ``e^h``, so ``err`` and ``err_q`` grow by at most that factor.  The
        new entries are rounded in the safe direction, P-masses down and tilted masses up (by
        a factor covering the products, the sums, ``1 - w`` and ``e^h``), as a leaf's are
        (:mod:`dpaudit.pld.continuous`): an l1 error added here would be carried ``k`` times
        by a ``k``-fold composition (1.8e-15 of rounding, times 10^5 steps, is more than a
        delta of 1e-10).  Only the products' underflow (absolute, below 1e-320 per entry) is
        added to the error.  A cut (:attr:`cut`) is not kept: its error bound was for the old
        points.
        """
        h = self.h
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            o = np.log(self.p) - np.log(self.qt)
        o = np.clip(np.nan_to_num(o, nan=0.0, posinf=h, neginf=0.0), 0.0, h)
        w = np.clip(np.expm1(h - o) / math.expm1(h), 0.0, 1.0)
        n = len(self.p) + 1
        p = np.zeros(n)
        qt = np.zeros(n)
        grow = math.exp(h) * (1 + 2 * UNIT_ROUNDOFF)
        with np.errstate(under="ignore"):
            p[:-1] += self.p * w
            p[1:] += self.p * (1 - w)
            qt[:-1] += self.qt * w
            qt[1:] += self.qt * (1 - w) * grow
        p *= 1 - 8 * UNIT_ROUNDOFF
        qt *= 1 + 8 * UNIT_ROUNDOFF
        # products whose results underflow: each may be off by UNDERFLOW, absolutely (sums are
        # exact there); per new entry at most 4 products on the P-masses (two parts, each
        # weighed and rounded down) and 6 on the tilted ones (also times e^h)
        lost_q = 6 * n * UNDERFLOW
        err = (self.err * grow + 4 * n * UNDERFLOW + lost_q) * (1 + 1e-9)
        err_q = (self.q_error * grow + lost_q) * (1 + 1e-9)
        return LowerPLD(h, self.offset, p, qt, self.p_inf, err, err_q=err_q)

    def coarsened(self, g: int) -> LowerPLD:
        """The same post-processing followed by a Markov kernel onto the grid of step ``g h``
        (``g`` a power of 2): grid point ``j = J g + r`` goes to ``J`` with probability ``1 - t``
        and to ``J + 1`` with probability ``t = (exp(r h) - 1) / (exp(g h) - 1)``.  A
        post-processing of a post-processing, so every bound it gives is still a lower bound.

        The tilted masses move with the factor ``exp(s_new - s_j)``: ``qt_j`` becomes
        ``(1 - t) exp(-r h) qt_j`` at ``J`` and ``t exp((g - r) h) qt_j`` at ``J + 1``, and this
        ``t`` (the lower-side twin of connect the dots) makes the two parts add up to ``qt_j``:
        the total tilted mass is kept, so k compositions neither underflow it (labels rounded
        down shrink it by about ``exp(-k g h / 2)``) nor overflow it, and the mean label is kept
        to first order.  The kernel never increases the l1 error of ``p`` or of ``qt`` (its
        weights on ``qt`` sum to 1 per point); the rounding of the weights (computed rounded
        up) and of the block sums is added to ``err``.
        """
        off, first = divmod(self.offset, g)
        r = np.arange(g, dtype=np.float64)
        t = np.expm1(r * self.h) / math.expm1(g * self.h)
        up = 1 + 8 * UNIT_ROUNDOFF
        with np.errstate(under="ignore"):
            down_w = (1 - t) * np.exp(-r * self.h) * up
            up_w = t * np.exp((g - r) * self.h) * up
        p = coarse_sums(self.p, first, g, 1 - t, t)
        qt = coarse_sums(self.qt, first, g, down_w, up_w)
        rel = 12 * UNIT_ROUNDOFF + (2 * g + 4) * UNIT_ROUNDOFF
        qt *= 1 + rel
        # (+ the underflow of the 4 products per point and of the weights, pld.fft.UNDERFLOW)
        q_rounding = rel * float(np.sum(qt)) + 6 * len(self.p) * UNDERFLOW
        rounding = rel * float(np.sum(p)) + q_rounding
        err = (self.err + rounding * (1 + 1e-6)) * (1 + 1e-9)
        err_q = (self.q_error + q_rounding * (1 + 1e-6)) * (1 + 1e-9)
        return LowerPLD(
            self.h * g, off, p, qt, self.p_inf, err * (1 + 1e-9), err_q=err_q * (1 + 1e-9)
        )

    def delta(self, epsilon: float) -> float:
        """A certified lower bound on the privacy profile at ``epsilon`` (clipped at 0): the
        best of the tests ``S_j = {index > offset + j}``, each giving ``delta(eps) >= P(S_j) -
        exp(eps) Q(S_j)`` less its error.

        The test ``{s > eps}`` alone (the optimal one when the labels are the losses) proves
        nothing after a long composition, whose labels lie below the losses: after 10^5
        DP-SGD steps on a 1e-4 grid its P-mass above eps = 3 was 1e-15 where the profile is
        1.06e-5.  A test ``S_j`` with ``s_j < eps`` weighs the tilted masses by up to ``w =
        exp(eps - s_j) > 1``, and their errors with them (see :attr:`err_q`).
        """
        _check_epsilon(epsilon)
        s = self.losses()
        sel = s > epsilon
        with np.errstate(under="ignore"):
            qpart = float(np.sum(self.qt[sel] * np.exp(epsilon - s[sel]))) * (1 + _SUM_REL)
        ppart = float(np.sum(self.p[sel])) * (1 - _SUM_REL)
        err = self.err
        if self.cut is not None and epsilon >= (self.cut - 1) * self.h:
            # the test set {s > epsilon} holds only grid points from the cut on
            err = self.err_from_cut
        value = (self.p_inf + ppart) * (1 - 4 * UNIT_ROUNDOFF) - qpart - err
        p_suffix, qt_suffix = self._suffixes
        errs, q_errs = self._test_errors()
        gap = epsilon - s
        usable = gap < 700.0  # w = exp(gap) is finite
        if np.any(usable):
            # e^eps Q(S_j) = w T_j, T_j = exp(s_j) Q(S_j) (computed within q_errs of the exact
            # one: its weights exp((j - i) h) are below 1)
            w = np.exp(np.minimum(gap, 700.0)) * (1 + 4 * UNIT_ROUNDOFF)
            with np.errstate(over="ignore", invalid="ignore"):
                tests = (
                    (self.p_inf + p_suffix) * (1 - 4 * UNIT_ROUNDOFF)
                    - w * qt_suffix
                    - errs
                    - np.maximum(w - 1, 0.0) * q_errs
                )
            tests = np.where(usable & np.isfinite(tests), tests, -np.inf)
            value = max(value, float(np.max(tests)))
        return max(0.0, value)

    @functools.cached_property
    def _suffixes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(P(S_j), T_j)`` for the tests ``S_j = {index > offset + j}``: the P-mass rounded
        down and ``T_j = exp(s_j) Q(S_j)`` rounded up (:func:`~dpaudit.pld.sums._suffix_tilted`);
        computed once per discretisation (a privacy curve reads many)."""
        n = len(self.p)
        grow = 1 + 4 * n * UNIT_ROUNDOFF + _SUM_REL
        qt_suffix = _suffix_tilted(self.qt, self.h) * grow
        p_suffix = np.cumsum(self.p[::-1])[::-1]
        p_suffix = np.concatenate((p_suffix[1:], [0.0])) * (1 - _SUM_REL - 4 * n * UNIT_ROUNDOFF)
        p_suffix.flags.writeable = qt_suffix.flags.writeable = False  # shared by every query
        return p_suffix, qt_suffix

    def epsilon(self, delta: float) -> float:
        """A certified lower bound on the smallest epsilon with profile ``<= delta``.

        Returns 0.0 when nothing positive can be certified (and ``-inf`` never).
        """
        _check_delta(delta)
        h = self.h
        p_suffix, qt_suffix = self._suffixes
        err, q_err = self._test_errors()
        avail = (self.p_inf + p_suffix) * (1 - 4 * UNIT_ROUNDOFF) - err - delta
        s = self.losses()
        best = 0.0
        good = avail > 0
        if not np.any(good):
            return 0.0
        # at eps = s_j + step the test's error is at most err + (w - 1)_+ q_err, w = e^step:
        # for w < 1 every eps with w T_j < avail has delta(eps) > delta; for w >= 1 every eps
        # with w (T_j + q_err) < avail + q_err (the two agree at w = 1).  A ratio
        # overflowing to inf (Q-mass below the smallest double) is treated as Q = 0, whose
        # step h is below the true one: conservative
        a, t, e = avail[good], qt_suffix[good], q_err[good]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            below = np.where(t > 0, a / np.where(t > 0, t, 1), np.inf)
            above = np.where(t + e > 0, (a + e) / np.where(t + e > 0, t + e, 1), np.inf)
            ratio = np.where(below <= 1, below, above)
            finite = np.isfinite(ratio)
            step = np.where(finite, np.log(np.where(finite, ratio, 1)), np.inf)
        # S_j = {label sum > s_j}: delta(eps) >= P(S_j) - e^{eps - s_j} qt_suffix_j less the
        # error above, so every eps < s_j + step_j has delta(eps) > delta (labels need not
        # equal losses)
        cand = s[good] + np.where(np.isinf(step), h, step)  # Q(S_j) = 0: any step is valid
        best = float(np.max(cand))
        if not math.isfinite(best):
            return 0.0
        best -= 1e-12 * (1 + abs(best))
        return max(0.0, best)


@dataclasses.dataclass(frozen=True)
class PrivacyLossDistribution:
    """Upper and lower discretisations of one pair (one neighbouring direction).

    Compose with :meth:`compose` and :meth:`self_compose`; query with :meth:`epsilon_bounds` and
    :meth:`delta_bounds`.  Both operands of a composition must share the grid step.
    """

    upper: UpperPLD
    lower: LowerPLD
    tail: float = DEFAULT_TAIL
    #: the tilted refinement of the composition that made this PLD, applied by :meth:`refined`
    pending: tilt.Pending | None = dataclasses.field(default=None, compare=False, repr=False)
    #: whether a composition that made this PLD outgrew :data:`GRID_BUDGET` and was computed on
    #: a coarser grid (a finer leaf grid would be coarsened the same way)
    budgeted: bool = dataclasses.field(default=False, compare=False)
    #: the same composition in one transform, from its leaf's lower side centred
    #: (:meth:`LowerPLD.centred`), computed on the first query whose scale its lower side's l1
    #: error weighs on (:meth:`_reserve`); set by a composition in blocks
    #: (:func:`dpaudit.pld.blocks.self_compose_blocked`), whose lower side carries every
    #: block's error and which no tilted refinement of the last step can remove
    direct: Callable[[], PrivacyLossDistribution] | None = dataclasses.field(
        default=None, compare=False, repr=False
    )

    @property
    def h(self) -> float:
        """The grid step."""
        return self.upper.h

    def refined(self) -> PrivacyLossDistribution:
        """This PLD with the tilted transform of its last composition applied
        (:mod:`dpaudit.pld.tilt`: tighter in the upper tail, where the FFT's rounding mass
        otherwise dominates a small delta); computed once, on the first query it can move.
        Compositions use the untilted discretisations (both are certified)."""
        if self.pending is None:
            return self
        return self._refined

    @functools.cached_property
    def _epsilon_memo(self) -> dict[float, tuple[float, float]]:
        """delta -> :meth:`epsilon_bounds` before the reserve (asked again of a memoised PLD)."""
        return {}

    @functools.cached_property
    def _refined(self) -> PrivacyLossDistribution:
        assert self.pending is not None
        upper, lower = self.pending.apply(self.upper, self.lower)
        return PrivacyLossDistribution(upper, lower, self.tail, budgeted=self.budgeted)

    def _moves(self, scale: float) -> bool:
        """Whether the refinement can move a delta of about ``scale`` noticeably."""
        return self.pending is not None and self.pending.rounding >= tilt.REFINE_SHARE * scale

    def _reserve(self, scale: float) -> PrivacyLossDistribution | None:
        """The one-transform composition (:attr:`direct`) for a delta of about ``scale``,
        computed on first use; None while the lower side's l1 error is below
        :data:`DIRECT_SHARE` of it (a composition in blocks carries every block's error; in one
        transform the tilted refinement of the whole composition certifies tests above its cut
        without it, and the centred labels put its best tests near their epsilon), or when the
        one transform is refused (a support too wide even coarsened)."""
        if self.direct is None or not self.lower.err >= DIRECT_SHARE * scale:
            return None
        return self._one_transform

    @functools.cached_property
    def _one_transform(self) -> PrivacyLossDistribution | None:
        assert self.direct is not None
        try:
            return self.direct()
        except ValueError:  # the support outgrew the grid even coarsened: keep the blocks'
            return None

    def epsilon_bounds(self, delta: float, *, reserve: bool = True) -> tuple[float, float]:
        """``(lower, upper)`` bounds on epsilon at ``delta`` (floats rounded outward); every
        discretisation is certified, so the tighter of each side is returned: the untilted
        one's, the refined one's (when it can move ``delta``), and for a composition in blocks
        at a ``delta`` its lower side's error weighs on, the one transform's (unless
        ``reserve`` is False: a search that only needs the upper bound to decide).

        Raises:
            ValueError: if delta is not in [0, 1].
        """
        base = self._epsilon_memo.get(delta)
        if base is None:
            base = self.lower.epsilon(delta), self.upper.epsilon(delta)
            if self._moves(delta):
                d = self.refined()
                base = max(base[0], d.lower.epsilon(delta)), min(base[1], d.upper.epsilon(delta))
            self._epsilon_memo[delta] = base
        lo, hi = base
        one = self._reserve(delta) if reserve else None
        if one is not None:
            d_lo, d_hi = one.epsilon_bounds(delta)
            lo, hi = max(lo, d_lo), min(hi, d_hi)
        return lo, hi

    def delta_bounds(self, epsilon: float, *, reserve: bool = True) -> tuple[float, float]:
        """``(lower, upper)`` bounds on the privacy profile at ``epsilon`` (the tightest of the
        discretisations, as for :meth:`epsilon_bounds`)."""
        lo, hi = self.lower.delta(epsilon), self.upper.delta(epsilon)
        if self._moves(hi):
            d = self.refined()
            lo, hi = max(lo, d.lower.delta(epsilon)), min(hi, d.upper.delta(epsilon))
        one = self._reserve(hi) if reserve else None
        if one is not None:
            d_lo, d_hi = one.delta_bounds(epsilon)
            lo, hi = max(lo, d_lo), min(hi, d_hi)
        return lo, hi

    def coarsened(self, g: int) -> PrivacyLossDistribution:
        """Both discretisations on the grid of step ``g h`` (see :meth:`UpperPLD.coarsened` and
        :meth:`LowerPLD.coarsened`); ``g`` must be a power of 2 (so that ``g h`` is exact).

        Raises:
            ValueError: if g is not a power of 2.
        """
        if not isinstance(g, int) or g < 1 or g & (g - 1):
            raise ValueError(f"g must be a power of 2 (1, 2, 4, ...), got {g!r}")
        if g == 1:
            return self
        return PrivacyLossDistribution(
            self.upper.coarsened(g), self.lower.coarsened(g), self.tail, budgeted=self.budgeted
        )

    def _budgeted(self, window: tuple[int, int]) -> int:
        """The power of 2 by which to coarsen so that the upper window fits :data:`GRID_BUDGET`.

        Raises:
            ValueError: if that would need a grid step above :data:`MAX_COARSE_STEP`.
        """
        width = window[1] - window[0] + 1
        g = 1
        while width > GRID_BUDGET * g:
            g *= 2
        if g > 1 and self.h * g > MAX_COARSE_STEP:
            raise ValueError(
                f"privacy loss distribution: the composed support spans {width} grid points of "
                f"step {self.h}; within the grid budget of {GRID_BUDGET} points it would need a "
                f"grid step of {self.h * g}, above the maximum {MAX_COARSE_STEP}"
            )
        return g

    def self_compose(self, count: int) -> PrivacyLossDistribution:
        """The PLD of ``count`` independent copies (adaptive composition of the same pair).

        Raises:
            ValueError: if count is not an integer >= 1, or if the composed support is too
                large for the grid (then use a coarser grid step).
        """
        _check_count(count)
        if count == 1:
            return self
        up, lo = self.upper, self.lower
        # --- upper
        win_t = fft.chernoff_window_tilt([(up.masses, up.offset, count)], self.tail)
        win = win_t[:2]
        g = self._budgeted(win)
        if g > 1:
            return dataclasses.replace(self.coarsened(g).self_compose(count), budgeted=True)
        m, off, l1 = fft.self_convolve(
            up.masses, up.offset, count, win, fft.lattice_stride(up.masses)
        )
        m, off, cut = _trim(m, off, win)
        finite = float(np.sum(up.masses)) * (1 + _SUM_REL)
        gap, error = _power_gap(finite, up.inf_mass, count), l1 + 2 * self.tail + cut
        upper = UpperPLD(up.h, off, m, (gap + error) * (1 + 1e-9), up.shift * count * (1 + 1e-12))
        # the rounding and window error moves below the cut of a tilted transform (pld/tilt.py)
        pending = tilt.Pending(
            [(up.masses, up.offset, count)],
            win_t,
            error,
            gap,
            None,
            (0, 0, 0.0, 0.0),
            0.0,
            self.tail,
        )
        # --- lower
        window_t, tail_q = _lower_window_tilts([(lo, count)], self.tail)
        window = window_t[:2]
        if window[1] - window[0] + 1 > GRID_BUDGET:
            return PrivacyLossDistribution(
                upper, LowerPLD.nothing(lo.h), self.tail, pending, self.budgeted
            )
        lattice = fft.lattice_stride(_dominating(lo.p, lo.qt))
        p, off_l, l1p = fft.self_convolve(lo.p, lo.offset, count, window, lattice)
        qt, _off_q, l1q = fft.self_convolve(lo.qt, lo.offset, count, window, lattice)
        size = min(len(p), len(qt))
        p_fin = float(np.sum(lo.p)) * (1 + _SUM_REL)
        q_fin = float(np.sum(lo.qt)) * (1 + _SUM_REL)
        # the exact finite P-mass is 1 - p_inf, so P(some copy hits +inf) = 1 - (1 - p_inf)^k
        p_inf = -math.expm1(count * math.log1p(-lo.p_inf)) * (1 - 1e-9) if lo.p_inf < 1 else 1.0
        # with a + b <= err the l1 errors of p and qt, the k-th powers are off by at most
        # gap_p(a) + gap_q(b) (telescoping), convex in a: at most max(gap_p(err), gap_q(err))
        # (the sum of both, as before, counted err twice)
        err = _power_gap(max(p_fin, q_fin), lo.err, count) + l1p + l1q + 4 * (self.tail + tail_q)
        # qt alone: its k-th power is off by at most gap_q(err_q) (the same telescoping)
        err_q = _power_gap(q_fin, lo.q_error, count) + l1q + 4 * tail_q
        lower = LowerPLD(
            lo.h, off_l, p[:size], qt[:size], p_inf, err * (1 + 1e-9), err_q=err_q * (1 + 1e-9)
        )
        pending = dataclasses.replace(
            pending,
            low_factors=([(lo.p, lo.offset, count)], [(lo.qt, lo.offset, count)]),
            low_window=window_t,
            low_rounding=l1p + l1q + 4 * (self.tail + tail_q),
        )
        return PrivacyLossDistribution(upper, lower, self.tail, pending, self.budgeted)

    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """The PLD of this pair followed by ``other`` (independent, adaptive composition).

        The operands' grid steps must be equal or differ by a power of 2 (a composition
        coarsened within :data:`GRID_BUDGET` has step ``2^i h``); the finer is then coarsened
        to the coarser grid.

        Raises:
            ValueError: if the grid steps differ by other than a power of 2.
        """
        if not isinstance(other, PrivacyLossDistribution):
            raise ValueError(f"other must be a PrivacyLossDistribution, got {type(other).__name__}")
        if other.h != self.h:
            fine, coarse = sorted((self.h, other.h))
            g = round(coarse / fine)
            if g < 2 or g & (g - 1) or fine * g != coarse:
                raise ValueError(
                    f"grid steps differ: {self.h} and {other.h}; build both PLDs with "
                    "the same value_discretization"
                )
            if self.h == fine:
                return self.coarsened(g).compose(other)
            return self.compose(other.coarsened(g))
        tail = max(self.tail, other.tail)
        budgeted = self.budgeted or other.budgeted
        a, b = self.upper, other.upper
        la, lb = self.lower, other.lower
        win_t = fft.chernoff_window_tilt([(a.masses, a.offset, 1), (b.masses, b.offset, 1)], tail)
        win = win_t[:2]
        g = self._budgeted(win)
        if g > 1:
            composed = self.coarsened(g).compose(other.coarsened(g))
            return dataclasses.replace(composed, budgeted=True)
        m, off, l1 = fft.convolve(a.masses, a.offset, b.masses, b.offset, win)
        m, off, cut = _trim(m, off, win)
        fa = float(np.sum(a.masses)) * (1 + _SUM_REL)
        fb = float(np.sum(b.masses)) * (1 + _SUM_REL)
        factors = [(a.masses, a.offset, 1), (b.masses, b.offset, 1)]
        error = l1 + 2 * tail + cut
        gap = (fa * b.inf_mass + fb * a.inf_mass + a.inf_mass * b.inf_mass) * (
            1 + 8 * UNIT_ROUNDOFF
        )
        upper = UpperPLD(a.h, off, m, (gap + error) * (1 + 1e-9), (a.shift + b.shift) * (1 + 1e-12))
        pending = tilt.Pending(factors, win_t, error, gap, None, (0, 0, 0.0, 0.0), 0.0, tail)
        window_t, tail_q = _lower_window_tilts([(la, 1), (lb, 1)], tail)
        window = window_t[:2]
        if window[1] - window[0] + 1 > GRID_BUDGET:
            return PrivacyLossDistribution(upper, LowerPLD.nothing(la.h), tail, pending, budgeted)
        p, off_l, l1p = fft.convolve(la.p, la.offset, lb.p, lb.offset, window)
        qt, _, l1q = fft.convolve(la.qt, la.offset, lb.qt, lb.offset, window)
        size = min(len(p), len(qt))
        pa, pb = float(np.sum(la.p)), float(np.sum(lb.p))
        qa, qb = float(np.sum(la.qt)), float(np.sum(lb.qt))
        p_inf = (la.p_inf + lb.p_inf - la.p_inf * lb.p_inf) * (1 - 1e-9)
        # ||p_a * p_b - P_a * P_b|| <= e_pa |p_b| + |p_a| e_pb + e_pa e_pb, and the same for qt:
        # the sum is at most e_a max(|p_b|, |qt_b|) + e_b max(|p_a|, |qt_a|) + e_a e_b (with the
        # sum |p| + |qt| here the error doubled at every composition: issue 19)
        norm_a, norm_b = max(pa, qa) * 1.000001, max(pb, qb) * 1.000001
        err = la.err * norm_b + lb.err * norm_a + la.err * lb.err + l1p + l1q + 4 * (tail + tail_q)
        ea, eb = la.q_error, lb.q_error
        err_q = ea * qb * 1.000001 + eb * qa * 1.000001 + ea * eb + l1q + 4 * tail_q
        lower = LowerPLD(
            la.h, off_l, p[:size], qt[:size], p_inf, err * (1 + 1e-9), err_q=err_q * (1 + 1e-9)
        )
        pending = dataclasses.replace(
            pending,
            low_factors=(
                [(la.p, la.offset, 1), (lb.p, lb.offset, 1)],
                [(la.qt, la.offset, 1), (lb.qt, lb.offset, 1)],
            ),
            low_window=window_t,
            low_rounding=l1p + l1q + 4 * (tail + tail_q),
        )
        return PrivacyLossDistribution(upper, lower, tail, pending, budgeted)


def _lower_window_tilts(
    parts: list[tuple[LowerPLD, int]], tail: float
) -> tuple[tuple[int, int, float, float], float]:
    """A window holding both the P- and the tilted Q-measure of a composition up to ``tail``
    mass per side for P and ``tail_q`` for the tilted Q (:func:`_q_log_tail`): the union of
    their Chernoff windows (one window of their entrywise maximum also holds both, but that
    measure's total mass exceeds 1 by up to the spread of ``qt / p``, which its k-th power
    turns into a window far too wide for large k); and the upper-edge tilts of the two
    measures (as :func:`dpaudit.pld.fft.chernoff_window_tilt` returns them; nan for a
    Q-measure that got no window of its own).  Returns ``((lo, hi, t_p, t_q), tail_q)``,
    ``tail_q`` rounded up (at least the smallest double)."""
    log_tail_q = _q_log_tail(parts, tail)
    tail_q = max(math.exp(log_tail_q) * (1 + 1e-12), 5e-324)
    lo_p, hi_p, t_p = fft.chernoff_window_tilt([(d.p, d.offset, c) for d, c in parts], tail)
    q_factors = [(d.qt, d.offset, c) for d, c in parts]
    if not all(np.any(d.qt > 0) for d, _ in parts):  # a composed tilted measure of 0
        return (lo_p, hi_p, t_p, math.nan), tail_q
    lo_q, hi_q, t_q = fft.chernoff_window_tilt(q_factors, tail, log_tail_q)
    return (min(lo_p, lo_q), max(hi_p, hi_q), t_p, t_q), tail_q


def _q_log_tail(parts: list[tuple[LowerPLD, int]], tail: float) -> float:
    """The log of the tilted Q-measure's tail mass per side in a composition's window:
    ``tail`` times its composed total when that is below 1.  Relative, because a test read
    far above its grid point weighs the tilted masses (and the mass a window drops) by up to
    the inverse of that total (:attr:`LowerPLD.err_q`): an absolute 1e-30 per side was a
    relative 1e-8 after 10^6 DP-SGD steps, where the total was 2e-22, and decided the
    epsilon lower bound."""
    log_total = math.fsum(c * math.log(max(float(np.sum(d.qt)), 1e-300)) for d, c in parts)
    return math.log(tail) + min(0.0, log_total)


def _dominating(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The entrywise maximum: its Chernoff tail bounds hold for both measures."""
    return np.maximum(a, b)


def _trim(m: np.ndarray, off: int, window: tuple[int, int]) -> tuple[np.ndarray, int, float]:
    """Restrict a result to ``window`` and drop zero ends; returns the cut mass too."""
    lo, hi = window
    start = max(lo, off)
    stop = min(hi, off + len(m) - 1)
    kept = m[start - off : stop - off + 1]
    cut = float(np.sum(m)) - float(np.sum(kept))
    nz = np.nonzero(kept)[0]
    if nz.size == 0:
        return np.zeros(1), start, max(0.0, cut) * (1 + 1e-9)
    return kept[nz[0] : nz[-1] + 1].copy(), start + int(nz[0]), max(0.0, cut) * (1 + 1e-9)


def _power_gap(finite: float, extra: float, count: int) -> float:
    """(finite + extra)**count - finite**count without cancellation, rounded up.

    The gap grows with ``finite``, so callers pass ``finite`` rounded up.
    """
    if extra <= 0:
        return 0.0
    if finite <= 0:
        return extra**count
    log_growth = count * math.log1p(extra / finite)
    if log_growth > 700:
        return math.inf
    value = math.exp(count * math.log(finite)) * math.expm1(log_growth)
    return value * (1 + 1e-9)
