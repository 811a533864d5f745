"""The exact privacy profile of k copies of a two-point privacy loss (binary randomized response).

Binary randomized response with parameter ``eps0`` is the pair ``P = (p, 1 - p)``,
``Q = (1 - p, p)`` with ``p = e^eps0 / (1 + e^eps0)``: its privacy loss is ``+eps0`` with
P-probability p and ``-eps0`` otherwise.  The loss of k independent copies is therefore
``L = (k - 2 I) eps0`` with ``I ~ Binomial(k, 1 - p)`` under P, and the privacy profile is the
finite sum

    delta_RR(g) = sum_{i : (k - 2i) eps0 > g} b_i (1 - e^{g - (k - 2i) eps0}),
    b_i = C(k, i) p^{k - i} (1 - p)^i.

Kairouz, Oh and Viswanath (2015, Theorem 3.3) show that the same profile, with a "revealed"
outcome of mass delta0 per copy, ``delta_g = 1 - (1 - delta0)^k + (1 - delta0)^k delta_RR(g)``,
bounds every adaptive composition of k (eps0, delta0)-DP mechanisms and is attained by
randomized response, so it is both the exact profile of k-fold randomized response and the
optimal composition bound.

Between consecutive lattice points ``L_{a+1} <= g <= L_a`` (``L_i = (k - 2i) eps0``) the active
terms are ``i <= a`` and ``delta_RR(g) = A_a - e^g B_a`` with ``A_a = sum_{i<=a} b_i`` and
``B_a = sum_{i<=a} b_i e^{-L_i}``, so the epsilon for a target delta is found by a bracketed
search over the lattice (which segment holds the crossing) followed by the closed form
``g = log((A_a - r) / B_a)`` on that segment.  Everything is evaluated in mpmath interval
arithmetic (outward rounding), in the normalised form above (probabilities, no huge
intermediate numbers), so a modest precision gives enclosures a few ulps wide and the floats
returned are rounded outward.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import mpmath

from dpaudit.numeric import endpoints, exact_value, iv_precision, mpf_to_float

__all__ = ["binomial_delta_bounds", "binomial_epsilon_bounds"]

#: Largest number of copies handled (the scan is linear in the number of active terms).
MAX_COUNT = 10**6

_iv = mpmath.iv


def _precision(count: Any, epsilon0: Any) -> int:
    # the recurrences lose about log2(count) bits; delta at a lattice point is a difference
    # of sums whose terms differ by a factor >= 1 - e^{-2 eps0}, which costs log2(1/eps0)
    try:
        e = float(epsilon0)
    except (TypeError, ValueError):  # validated later
        e = 1.0
    small = -math.frexp(e)[1] if 0 < e < 1 else 0
    bits = int(count).bit_length() if isinstance(count, int) else 1
    return 64 + 2 * bits + small + 40


def _enclose(value: Any, name: str) -> Any:
    """An interval holding ``value`` (a float, int, Fraction, exact number or exact sympy
    number)."""
    from fractions import Fraction

    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        return _iv.mpf(value)
    if isinstance(value, Fraction):
        return _iv.mpf(value.numerator) / value.denominator
    expr = exact_value(value)  # an exact number stays one (no sympy)
    if expr.free_symbols:
        raise ValueError(f"{name} must be numeric, got {value!r}")
    if expr.is_Rational:
        return _iv.mpf(int(expr.p)) / int(expr.q)
    from dpaudit.numeric import interval

    lo, hi = endpoints(interval(expr, prec=_iv.prec + 20))
    return _iv.mpf([lo, hi])


class _Profile:
    """Interval data of k-fold randomized response with parameter eps0 (current iv precision)."""

    def __init__(self, eps0: Any, delta0: Any, count: int) -> None:
        self.count = count
        self.eps0 = eps0
        self.keep = (1 - delta0) ** count  # P(no copy reveals)
        self.ratio = _iv.exp(-eps0)  # b_{i+1} / b_i = (k - i)/(i + 1) e^{-eps0}
        self.first = (1 / (1 + self.ratio)) ** count  # b_0 = p^k

    def lattice(self, i: int) -> Any:
        return (self.count - 2 * i) * self.eps0

    def terms(self) -> Iterator[tuple[int, Any, Any]]:
        """``(i, L_i, b_i)`` for i = 0, 1, ..., count."""
        b = self.first
        for i in range(self.count + 1):
            yield i, self.lattice(i), b
            b = b * (self.count - i) / (i + 1) * self.ratio


def _checked(epsilon0: Any, delta0: Any, count: int) -> tuple[Any, Any]:
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
        raise ValueError(f"count must be an integer in [1, {MAX_COUNT}], got {count!r}")
    e = _enclose(epsilon0, "epsilon0")
    d = _enclose(delta0, "delta0")
    if not endpoints(e)[0] >= 0:
        raise ValueError(f"epsilon0 must be >= 0, got {epsilon0!r}")
    if not (endpoints(d)[0] >= 0 and endpoints(d)[1] < 1):
        raise ValueError(f"delta0 must be in [0, 1), got {delta0!r}")
    return e, d


def binomial_delta_bounds(
    epsilon0: Any, count: int, epsilon: Any, delta0: Any = 0
) -> tuple[float, float]:
    """Certified ``(lower, upper)`` floats of the profile ``delta_g(epsilon)`` of k-fold
    (eps0, delta0) randomized response (equivalently the optimal composition bound).

    Privacy: Kairouz, Oh, Viswanath 2015, Theorem 3.3 -- the exact profile of k-fold
    randomized response and the optimal bound for k adaptive (eps0, delta0)-DP mechanisms.

    Args:
        epsilon0: eps0 >= 0 (float, Fraction or exact sympy number).
        count: k in [1, MAX_COUNT].
        epsilon: the epsilon at which the profile is evaluated (any real).
        delta0: delta0 in [0, 1).

    Raises:
        ValueError: on parameters out of range.
    """
    with iv_precision(_precision(count, epsilon0)):
        e, d = _checked(epsilon0, delta0, count)
        g = _enclose(epsilon, "epsilon")
        prof = _Profile(e, d, count)
        g_lo, g_hi = endpoints(g)
        total = _iv.mpf(0)
        for _, lat, b in prof.terms():
            lat_lo, lat_hi = endpoints(lat)
            if lat_hi <= g_lo:
                break
            term = -b * _iv.expm1(g - lat)
            if lat_lo <= g_hi:  # sign undecided: [term]_+ lies in [0, max(term, 0)]
                term = _iv.mpf([0, max(endpoints(term)[1], 0)])
            total += term
        lo, hi = endpoints(1 - prof.keep + prof.keep * total)
        return max(0.0, mpf_to_float(lo, "down")), min(1.0, mpf_to_float(hi, "up"))


def binomial_epsilon_bounds(
    epsilon0: Any, count: int, delta: Any, delta0: Any = 0
) -> tuple[float, float]:
    """Certified ``(lower, upper)`` floats around the smallest ``g >= 0`` with
    ``delta_g(g) <= delta`` for k-fold (eps0, delta0) randomized response.

    The crossing's lattice segment is found by scanning the lattice points from the top
    (interval comparisons decide each step); on that segment the closed form
    ``log((A_a - r) / B_a)`` is enclosed.  When a comparison cannot be decided (the crossing is
    within rounding of a lattice point), the hull of the two neighbouring segments' closed
    forms is returned, which still contains the exact value.

    Privacy: Kairouz, Oh, Viswanath 2015, Theorem 3.3 (see the module docstring):
    ``lower <= eps_g(delta) <= upper``.

    Args:
        epsilon0: eps0 >= 0.
        count: k in [1, MAX_COUNT].
        delta: target delta in (0, 1).
        delta0: delta0 in [0, 1).

    Returns:
        Floats ``(lower, upper)``; ``upper = inf`` when no finite epsilon reaches ``delta``
        (``delta <= 1 - (1 - delta0)^k``).

    Raises:
        ValueError: on parameters out of range.
    """
    with iv_precision(_precision(count, epsilon0)):
        e, d = _checked(epsilon0, delta0, count)
        t = _enclose(delta, "delta")
        if not (endpoints(t)[0] > 0 and endpoints(t)[1] < 1):
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        prof = _Profile(e, d, count)
        residual = (t - 1 + prof.keep) / prof.keep  # target for delta_RR
        r_lo, r_hi = endpoints(residual)
        if r_hi <= 0:
            return math.inf, math.inf
        if r_lo <= 0:
            return 0.0, math.inf
        lo, hi = _solve(prof, residual)
        return max(0.0, mpf_to_float(lo, "down")), max(0.0, mpf_to_float(hi, "up"))


def _ends(x: Any) -> tuple[Any, Any]:
    return endpoints(x)


def _segment_root(big_a: Any, big_b: Any, residual: Any) -> tuple[Any, Any] | None:
    """Ends of an enclosure of log((A - r) / B) (the crossing on a segment), or None when
    A <= r; the lower end is -inf when A - r may vanish."""
    num = big_a - residual
    lo, hi = _ends(num)
    if hi <= 0 or _ends(big_b)[1] <= 0:
        return None
    if lo <= 0:
        return -mpmath.inf, _ends(_iv.log(_iv.mpf(hi) / big_b))[1]
    return _ends(_iv.log(num / big_b))


def _solve(prof: _Profile, residual: Any) -> tuple[Any, Any]:
    """(lo, hi) mpf ends of an enclosure of inf {g >= 0 : delta_RR(g) <= residual}."""
    r_lo, r_hi = _ends(residual)
    big_a = _iv.mpf(0)  # at step i: the sums over the terms l < i, which are the active ones
    big_b = _iv.mpf(0)  # on the segment [L_i, L_{i-1}]
    for i, lat, b in prof.terms():
        lat_lo, lat_hi = _ends(lat)
        if lat_hi <= 0:
            break
        point_lo, point_hi = _ends(big_a - _iv.exp(lat) * big_b)  # delta_RR(L_i)
        below = (big_a + b, big_b + b * _iv.exp(-lat))  # the sums on [L_{i+1}, L_i]
        if point_hi <= r_lo:  # delta(L_i) <= r: the crossing is at or below L_i
            big_a, big_b = below
            continue
        if point_lo > r_hi:  # delta(L_i) > r: the crossing is in (L_i, L_{i-1}]
            root = _segment_root(big_a, big_b, residual) if i > 0 else None
            if root is None:  # pragma: no cover -- A > delta(L_i) > r on a decided segment
                return lat_lo, _ends(prof.lattice(i - 1))[1]
            lo = max(root[0], lat_lo)
            return lo, max(root[1], lo)
        # undecided: the crossing is within rounding of L_i; hull of both segments' roots
        ends = [lat_lo, lat_hi]
        for sums in ((big_a, big_b), below):
            root = _segment_root(*sums, residual)
            if root is not None:
                ends += [x for x in root if mpmath.isfinite(x)]
        return max(mpmath.mpf(0), min(ends)), max(ends)
    # every positive lattice point has delta <= r: the crossing is in [0, last point]
    if _ends(big_a - big_b)[1] <= r_lo:  # delta_RR(0) <= r
        return mpmath.mpf(0), mpmath.mpf(0)
    root = _segment_root(big_a, big_b, residual)
    if root is None:  # pragma: no cover -- A >= delta(0) > r
        return mpmath.mpf(0), _ends(prof.lattice(0))[1]
    lo = max(root[0], mpmath.mpf(0))
    return lo, max(root[1], lo)
