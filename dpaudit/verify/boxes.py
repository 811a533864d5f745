"""Boxes of the branch-and-bound: coordinates of an axis, outward-rounded conversions between
exact rationals and mpmath intervals, and sample points of a domain.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from dpaudit.expressions import as_expr
from dpaudit.numeric import EvaluationError, endpoints, interval
from dpaudit.verify.domain import Range
from dpaudit.verify.verdict import _short

_INF = mpmath.inf


# ------------------------------------------------------------------------------------------
# Coordinates: a box is a tuple of per-parameter intervals in the split coordinate u
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Axis:
    """How one parameter's split coordinate u maps to its value x."""

    name: str
    range: Range

    @property
    def kind(self) -> str:
        r = self.range
        if r.low is not None and r.high is not None:
            return "bounded"
        if r.low is not None:
            return "up"  # [a, oo): x = a + u/(1-u), u in [0, 1]
        if r.high is not None:
            return "down"  # (-oo, b]: x = b - u/(1-u), u in [0, 1]
        return "line"  # (-oo, oo): x = u/(1-|u|), u in [-1, 1]

    def initial(self) -> tuple[Fraction, Fraction]:
        r = self.range
        if self.kind == "bounded":
            lo = _frac_down(r.low)
            hi = _frac_up(r.high)
            if self.range.integer:
                first, last = r.first_integer(), r.last_integer()
                assert first is not None and last is not None  # a bounded range has both ends
                return Fraction(first), Fraction(last)
            return lo, hi
        if self.kind == "line":
            return Fraction(-1), Fraction(1)
        return Fraction(0), Fraction(1)

    def x_of(self, u: Fraction) -> Any:
        """The value at coordinate u: a Fraction, or +-inf (mpmath) at the far end."""
        r = self.range
        if self.kind == "bounded":
            return u
        if self.kind == "line":
            if abs(u) == 1:
                return _INF if u > 0 else -_INF
            return u / (1 - abs(u))
        if u == 1:
            return _INF if self.kind == "up" else -_INF
        step = u / (1 - u)
        # an irrational end is replaced by a rational on its outer side: the boxes then cover
        # a superset (sound), and any counterexample point is re-checked exactly
        base = _frac_down(r.low) if self.kind == "up" else _frac_up(r.high)
        return base + step if self.kind == "up" else base - step

    def u_of(self, x: Any) -> Fraction:
        """The coordinate of a value (a Fraction or +-inf): the inverse of :meth:`x_of`."""
        if self.kind == "bounded":
            return x
        if self.kind == "line":
            if _is_inf(x):
                return Fraction(1 if x > 0 else -1)
            return x / (1 + abs(x))
        if _is_inf(x):
            return Fraction(1)
        r = self.range
        step = x - _frac_down(r.low) if self.kind == "up" else _frac_up(r.high) - x
        return step / (1 + step)

    def x_interval(self, u_lo: Fraction, u_hi: Fraction) -> tuple[Any, Any] | None:
        """The value interval of a u-interval (integer hull for integer parameters), or None
        if it holds no admissible integer."""
        a, b = self.x_of(u_lo), self.x_of(u_hi)
        if self.kind == "down":
            a, b = b, a
        if self.range.integer:
            a = a if _is_inf(a) else Fraction(math.ceil(a))
            b = b if _is_inf(b) else Fraction(math.floor(b))
            first, last = self.range.first_integer(), self.range.last_integer()
            if first is not None and not _is_inf(a):
                a = max(a, Fraction(first))
            if last is not None and not _is_inf(b):
                b = min(b, Fraction(last))
            if not _is_inf(a) and not _is_inf(b) and a > b:
                return None
        return a, b


def _is_inf(v: Any) -> bool:
    return isinstance(v, mpmath.mpf) and mpmath.isinf(v)


def _mpf_fraction(x: Any) -> Fraction:
    """The exact value of a finite mpmath number as a Fraction."""
    # x._mpf_ itself: mpmath.mpf(x) would round x to the context's 53 bits, and man_exp
    # drops the sign
    sign, man, exp, _ = (x if isinstance(x, mpmath.mpf) else mpmath.mpf(x))._mpf_
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


def _frac_down(v: sympy.Expr) -> Fraction:
    """A rational at most ``v`` (``v`` itself when it is rational)."""
    v = as_expr(v)
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    return _mpf_fraction(endpoints(interval(v))[0])


def _frac_up(v: sympy.Expr) -> Fraction:
    """A rational at least ``v`` (``v`` itself when it is rational)."""
    v = as_expr(v)
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    return _mpf_fraction(endpoints(interval(v))[1])


def _iv(x: tuple[Any, Any]) -> Any:
    """An mpmath interval from a pair of Fraction / +-inf ends (outward rounded)."""
    a, b = x
    lo = a if _is_inf(a) else _mpf_down(a)
    hi = b if _is_inf(b) else _mpf_up(b)
    return mpmath.iv.mpf([lo, hi])


def _mpf_down(f: Fraction) -> Any:
    v = mpmath.iv.mpf(f.numerator) / mpmath.iv.mpf(f.denominator)
    return endpoints(v)[0]


def _mpf_up(f: Fraction) -> Any:
    v = mpmath.iv.mpf(f.numerator) / mpmath.iv.mpf(f.denominator)
    return endpoints(v)[1]


def _halton(index: int, base: int) -> Fraction:
    """The index-th element of the van der Corput sequence in ``base`` (in (0, 1))."""
    result, f = Fraction(0), Fraction(1)
    while index > 0:
        f /= base
        result += f * (index % base)
        index //= base
    return result


def _end_text(v: Any) -> str:
    if _is_inf(v):
        return "inf" if v > 0 else "-inf"
    return _short(sympy.Rational(v.numerator, v.denominator))


def _any_point(r: Range) -> sympy.Expr:
    if r.integer:
        first, last = r.first_integer(), r.last_integer()
        return sympy.Integer(first if first is not None else (last if last is not None else 0))
    if r.low is not None and r.high is not None:
        return (r.low + r.high) / 2
    if r.low is not None:
        return r.low + 1
    if r.high is not None:
        return r.high - 1
    return sympy.Integer(0)


def _separated(lhs: sympy.Expr, rhs: sympy.Expr, point: Mapping[str, Any]) -> tuple[str, str]:
    """Both sides at a point, to as many digits as it takes to see them apart."""
    subs = {sympy.Symbol(n): v for n, v in point.items()}
    lhs_s = {s: subs[sympy.Symbol(s.name)] for s in as_expr(lhs).free_symbols}
    rhs_s = {s: subs[sympy.Symbol(s.name)] for s in as_expr(rhs).free_symbols}
    texts = None
    for digits in (8, 15, 30, 60, 120):
        prec = int(digits * 3.33) + 20
        try:
            a = interval(lhs, lhs_s, prec=prec)
            b = interval(rhs, rhs_s, prec=prec)
        except EvaluationError:
            break
        # each side's text is one its whole enclosure rounds to (a midpoint of a wide
        # enclosure would print digits the value does not have)
        (a_lo, a_hi), (b_lo, b_hi) = endpoints(a), endpoints(b)
        sa, sb = mpmath.nstr(a_lo, digits), mpmath.nstr(b_lo, digits)
        texts = (sa, sb)
        if sa == mpmath.nstr(a_hi, digits) and sb == mpmath.nstr(b_hi, digits) and sa != sb:
            return sa, sb
    if texts is not None:
        return texts
    return str(sympy.N(lhs.xreplace(lhs_s), 40)), str(sympy.N(rhs.xreplace(rhs_s), 40))
