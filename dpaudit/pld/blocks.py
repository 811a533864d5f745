"""Many copies of one privacy loss distribution, composed in blocks on coarser grids.

Composing ``k`` copies in one transform needs a window holding the whole k-fold sum on the
leaf grid ``h``: its width grows like ``sqrt(k) / h`` (and like ``k`` once ``h`` is chosen so
that the discretisation error stays fixed, since that error grows like ``k h^2``).  A DP-SGD
schedule of 10^6 steps on a 1e-4 grid composes in a window of about 400,000 points.

Here the copies are composed in ``n`` blocks of ``m``: one block is composed on the leaf grid
(a narrow window, ``sqrt(m) / h``), moved to the grid of step ``g h`` (``g`` a power of 2) by
connect-the-dots (:meth:`~dpaudit.pld.distribution.PrivacyLossDistribution.coarsened`), and
the ``n`` blocks are composed there (a window ``g`` times narrower than the direct one); the
``r = k - n m`` copies left over are composed on the leaf grid, moved to the same grid and
composed with the rest.

Each block's upper side is refined by its tilted transform before it is composed further
(:func:`_refined_upper`).

Error: connect-the-dots keeps both masses and adds at most about ``H^2 / 4`` of variance per
rounding to a grid of step ``H`` (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, Section
4.2), so the leaf grid costs ``k`` roundings of ``h`` and the blocks ``n + 1`` roundings of
``g h``: with ``g^2 <= m / ERROR_SHARE`` the blocks add at most ``1 / ERROR_SHARE`` of the leaf
grid's variance.  Measured (DP-SGD, q = 256/60000, leaf grid 1e-4, delta 1e-5, both
directions): at sigma 2.65673 and 10^6 steps, blocks of 20,000 on a 32 times coarser grid give
epsilon in [7.99087, 7.99919] in 0.04 CPU s, one transform [7.99108, 7.99904] in 0.55 s; at
sigma 2.00522 and 10^5 steps, blocks of 2,000 (8 times) [2.99885, 2.99990] in 0.03 s against
[2.99905, 2.99988] in 0.19 s.  This is a choice of precision, never of soundness.

Privacy.  Write ``X >= Y`` for the stochastic order (integrals of non-negative non-decreasing
functions, the order of :mod:`dpaudit.pld.tilt`) and ``Z |= Y`` for a pair ``Z`` dominating a
pair ``Y`` (``Y`` a post-processing of ``Z``).  Claim: for a measure ``X >= Y``, ``Y`` a pair's
PLD, the blocked composition of ``k`` copies is ``>= Z`` for a pair ``Z |= Y^k``.  At the
leaf ``Y`` is the connect-the-dots pair, which dominates the mechanism's (so ``Y^k`` dominates
its ``k``-fold composition), and ``X`` is ``Y`` with its rounding at ``+inf``; a privacy
profile integrates ``l -> (1 - exp(eps - l))_+``, non-negative and non-decreasing, so the
computed profile bounds the true one.  By induction on the recursion:

* one transform: the computed power is ``>= X^k >= Y^k`` (errors at ``+inf``; convolution with
  non-negative measures preserves the order);
* a block ``T`` (computed, refined) is ``>= X^m >= Y^m``; connect-the-dots ``C`` preserves the
  order (for a non-decreasing ``f >= 0``, ``l -> (1 - w(l)) f(a) + w(l) f(b)`` is
  non-decreasing: the weight ``w`` of the upper neighbour grows with ``l`` from 0 to 1 in each
  cell), so ``C(T) >= C(Y^m)``, a pair with ``C(Y^m) |= Y^m`` (Doroshenko et al. 2022,
  Theorem 4.3); by induction the ``n`` blocks' composition is ``>= Z'`` with ``Z' |= C(Y^m)^n
  |= Y^(m n)`` (composition keeps domination: Zhu, Dong, Wang 2022, Theorem 10);
* the copies left over likewise give ``>= W |= Y^r``, and the composition of the two is
  ``>= Z' W |= Y^k``.

Lower side: every step is a post-processing (the Markov kernel of
:meth:`~dpaudit.pld.distribution.LowerPLD.coarsened`, and the product of post-processings),
with its l1 errors carried by the same operations as an unblocked composition's.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from dpaudit.pld import distribution
from dpaudit.pld.distribution import PrivacyLossDistribution, _check_count

__all__ = [
    "BLOCK_WIDTH",
    "DIRECT_WIDTH",
    "ERROR_SHARE",
    "MAX_BLOCKS",
    "SUPPORT_SHARE",
    "WORTH",
    "block_plan",
    "self_compose_blocked",
]

#: A composition whose direct window (on the leaf grid) is at most this many points is
#: computed in one transform: below it, blocks save less than their extra transforms cost.
BLOCK_WIDTH = 2**15
#: Blocks are planned only when the central limit's window of the whole composition exceeds
#: this many times the leaf's support (below, the leaf's tail sets every window's width).
SUPPORT_SHARE = 4
#: The blocks' grid ``g h`` keeps ``g^2 <= m / ERROR_SHARE``: their roundings add at most this
#: share of the leaf grid's discretisation variance (about 6%).
ERROR_SHARE = 16
#: The most blocks a plan composes: the lower side carries each block's FFT rounding in its l1
#: error, once per block (DP-SGD at 10^6 steps, sigma 1, q = 0.001: epsilon lower bound
#: 6.01867 in 200 blocks, 6.02019 in 50, 6.02154 in one transform; about the same time).
MAX_BLOCKS = 64
#: A composition in blocks whose one-transform window is estimated at most this many points
#: keeps that transform in reserve for queries at a delta its lower side's error weighs on
#: (:attr:`~dpaudit.pld.distribution.PrivacyLossDistribution.direct`).  DP-SGD (sigma 2, q =
#: 256/60000, 1e-4 grid), ``dpaudit account`` at delta 1e-10, against the blocks alone: after
#: 10^5 steps (a window of about 130,000 points) epsilon in [4.5866, 4.5990] against [4.036,
#: 4.599], in 1.35 s against 1.07 s (wall, the whole command) and 100 MB against 50 MB;
#: after 10^6 steps (about 400,000 points) [15.825, 16.600] against [13.969, 16.600] in about
#: the same time (the grid refinement stops sooner), and its privacy profile (``--curve``,
#: deltas down to 1e-10) in 2.8 s against 2.5 s.
DIRECT_WIDTH = 2**19
#: A plan is used only when its estimated work is below this share of the direct window's.
WORTH = 0.6


def _spread(d: PrivacyLossDistribution) -> tuple[float, int]:
    """``(s, n)``: the central limit's window of one copy of the upper side at the windows'
    tail, ``2 sqrt(2 log(1 / tail) Var)`` grid points (``s sqrt(c)`` for ``c`` copies), and the
    leaf's length."""
    m = d.upper.masses
    total = float(np.sum(m))
    if not total > 0 or not 0 < d.tail < 1:
        return 0.0, len(m)
    idx = np.arange(len(m), dtype=np.float64)
    # elementwise products: a BLAS dot product starts threads that spin on the other core
    mean = float(np.sum(m * idx)) / total
    var = float(np.sum(m * (idx - mean) ** 2)) / total
    return 2 * math.sqrt(-2 * math.log(d.tail) * max(var, 0.0)), len(m)


def _width(spread: float, support: int, copies: int) -> float:
    """The estimated window of ``copies`` composed copies of a leaf with :func:`_spread`'s
    ``(spread, support)``: the central limit's width plus the leaf's support, in grid
    points."""
    return spread * math.sqrt(copies) + support


def _block_size(count: int, least: int) -> int:
    """A block size from ``least`` on that divides ``count`` (no copies left over to compose
    apart) if one lies within a factor 2 (and 4096) of it, else ``least``.

    Searched over the number of blocks ``n`` (from ``count // least`` down), about
    ``count / (2 least)`` steps: at most about ``MAX_BLOCKS / 2`` for the plan's blocks, which
    hold at least ``count / MAX_BLOCKS`` copies (over the sizes it was up to 4096 steps, 0.4 ms
    a call for a prime count of 10^6)."""
    top = min(2 * least, least + 4096)
    for n in range(count // least, 0, -1):
        if count // n >= top:
            break
        if count % n == 0:
            return count // n
    return least


def block_plan(d: PrivacyLossDistribution, count: int) -> tuple[int, int] | None:
    """``(m, g)``: compose ``count`` copies of ``d`` in blocks of ``m`` moved to the grid of step
    ``g h``; None when one transform is the better choice.

    The choice is made on estimated windows (the central limit's width plus the leaf's
    support, one pass over the leaf).  One transform is used for a composition whose window
    would be at most :data:`BLOCK_WIDTH` points, or at most :data:`SUPPORT_SHARE` times the
    leaf's support (a heavy upper tail, as DP-SGD's with little noise: every block's window is
    then about as wide), or wider than the grid budget
    (:data:`~dpaudit.pld.distribution.GRID_BUDGET`: it is coarsened to fit, or refused, as
    before).  Else the block factor ``g`` (with ``g h`` at most
    :data:`~dpaudit.pld.distribution.MAX_COARSE_STEP`, and blocks of at least ``16 g^2`` and
    ``count / MAX_BLOCKS`` copies) whose work -- the block's window, the
    blocks' window ``W / g`` and the window of the copies left over -- is least, if below
    :data:`WORTH` of the direct window's.

    Raises:
        ValueError: if count is not an integer >= 1.
    """
    _check_count(count)
    if count < 2 * ERROR_SHARE * 4:
        return None
    spread, support = _spread(d)

    def width(c: int) -> float:
        return _width(spread, support, c)

    direct = width(count)
    if direct - support <= BLOCK_WIDTH or direct - support <= SUPPORT_SHARE * support:
        return None
    if direct > distribution.GRID_BUDGET:
        return None  # coarsened to fit the grid budget (or refused) as before, in one transform
    best: tuple[float, int, int] | None = None
    g = 2
    while 2 * ERROR_SHARE * g * g <= count and d.h * g <= distribution.MAX_COARSE_STEP:
        m = _block_size(count, max(ERROR_SHARE * g * g, -(-count // MAX_BLOCKS)))
        rest = count % m
        work = width(m) + direct / g + (width(rest) if rest else 0.0)
        if best is not None and work >= best[0]:
            break  # the block's window grows faster than the blocks' window shrinks
        best = (work, m, g)
        g *= 2
    if best is None or best[0] > WORTH * direct:
        return None
    return best[1], best[2]


def self_compose_blocked(d: PrivacyLossDistribution, count: int) -> PrivacyLossDistribution:
    """The PLD of ``count`` independent copies of ``d``, in blocks where :func:`block_plan`
    finds them cheaper (the blocks' own composition is planned the same way), else
    :meth:`~dpaudit.pld.distribution.PrivacyLossDistribution.self_compose`.  The result's grid
    step is ``h`` times the blocks' factors (and any coarsening to fit the grid budget).

    Raises:
        ValueError: as :meth:`PrivacyLossDistribution.self_compose` (a count that is not an
            integer >= 1, a support too large for the grid).
    """
    plan = block_plan(d, count)
    if plan is None:
        return d.self_compose(count)
    m, g = plan
    n, r = divmod(count, m)
    out = self_compose_blocked(_refined_upper(d.self_compose(m)).coarsened(g), n)
    if r:
        out = out.compose(_refined_upper(d.self_compose(r)).coarsened(g))
    # for a query whose delta the blocks' lower side's error weighs on, if affordable
    if _width(*_spread(d), count) > DIRECT_WIDTH:
        return out
    # a partial, not a closure: the result pickles as any PLD does
    return dataclasses.replace(out, direct=functools.partial(_one_transform, d, count))


def _one_transform(d: PrivacyLossDistribution, count: int) -> PrivacyLossDistribution:
    """``count`` copies of ``d`` in one transform, its lower side centred first
    (:meth:`~dpaudit.pld.distribution.LowerPLD.centred`)."""
    centred = PrivacyLossDistribution(d.upper, d.lower.centred(), d.tail, budgeted=d.budgeted)
    return centred.self_compose(count)


def _refined_upper(d: PrivacyLossDistribution) -> PrivacyLossDistribution:
    """A composition to be composed further: its upper side with the tilted refinement applied
    (:meth:`dpaudit.pld.tilt.Pending.apply_upper`: its rounding mass moved from ``+inf`` to
    below the cut, a valid upper PLD for every further composition; left at ``+inf``, the
    ``n`` blocks' rounding masses add up to about ``n`` times one block's, which decided a
    delta of 1e-5 after 10^6 DP-SGD steps), its lower side as computed (the refined lower side
    certifies tests above its cut more tightly, but its total l1 error, the one a further
    composition carries, is larger)."""
    if d.pending is None:
        return d
    upper = d.pending.apply_upper(d.upper)
    return PrivacyLossDistribution(upper, d.lower, d.tail, budgeted=d.budgeted)
