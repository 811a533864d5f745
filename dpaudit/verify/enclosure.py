"""Rigorous interval enclosure of an expression on a box: factors enclosed separately, a factor
monotone on the box evaluated on its face, guards of continuity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import mpmath
import sympy

from dpaudit.numeric import EvaluationError, endpoints, interval
from dpaudit.verify.boxes import _INF, _iv
from dpaudit.verify.budget import BOX_PRECISION
from dpaudit.verify.domain import Domain, by_name
from dpaudit.verify.symbolic import _affordable, _bounded, _cheap_to_factor, _factored

_NONSMOOTH = (
    sympy.Min,
    sympy.Max,
    sympy.Abs,
    sympy.floor,
    sympy.ceiling,
    sympy.Piecewise,
    sympy.sign,
    sympy.Heaviside,
)


# ------------------------------------------------------------------------------------------
# Enclosures
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Factor:
    expr: sympy.Expr
    power: int
    smooth: bool
    guards: list[tuple[sympy.Expr, str]] = dataclasses.field(default_factory=list)
    _derivatives: dict[str, tuple[sympy.Expr, ...]] | None = None

    @property
    def derivatives(self) -> dict[str, tuple[sympy.Expr, ...]] | None:
        """The partial derivatives as products of factors (computed when first needed);
        None for a factor that is not smooth."""
        if not self.smooth:
            return None
        if self._derivatives is None:
            try:
                self._derivatives = {
                    s.name: sympy.Mul.make_args(_factored(sympy.diff(self.expr, s)))
                    for s in sorted(self.expr.free_symbols, key=lambda s: s.name)
                }
            except (TypeError, ValueError, NotImplementedError):
                self.smooth = False
                return None
        return self._derivatives


def _guards(expr: sympy.Expr) -> list[tuple[sympy.Expr, str]]:
    """Where ``expr`` may be discontinuous: (sub-expression, requirement) pairs.

    ``expr`` is built from rational operations, powers, exp, log, erf and erfc, which are
    continuous wherever every denominator is nonzero (``"nonzero"``), every log argument
    positive (``"positive"``) and every base of a non-integer power positive, or nonnegative
    when the exponent is positive (``"nonnegative"``).
    """
    out: list[tuple[sympy.Expr, str]] = []
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.log):
            out.append((node.args[0], "positive"))
        elif node.is_Pow and node.base is not sympy.E:
            e = node.exp
            if e.is_Integer:
                if e < 0:
                    out.append((node.base, "nonzero"))
            elif e.is_number and e.is_positive:
                out.append((node.base, "nonnegative"))
            else:
                out.append((node.base, "positive"))
    return out


def _continuous(f: _Factor, env: Mapping[str, Any]) -> bool:
    """True when every guard of ``f`` certainly holds on the box."""
    for sub, need in f.guards:
        lo, hi = endpoints(_eval(sub, env))
        if need == "nonzero" and not (lo > 0 or hi < 0):
            return False
        if need == "positive" and not lo > 0:
            return False
        if need == "nonnegative" and not lo >= 0:
            return False
    return True


def _factors(g: sympy.Expr) -> list[_Factor]:
    """``g`` as a product of factors (with integer powers), each with its derivatives."""
    try:
        gf = sympy.factor_terms(g) if _affordable(g, 600) else g
        if _cheap_to_factor(gf, 400):
            gf = _bounded(lambda: sympy.factor(gf, deep=False), gf)
    except (sympy.PolynomialError, NotImplementedError, TypeError, ValueError):
        gf = g
    parts: list[_Factor] = []
    for arg in sympy.Mul.make_args(
        gf
        if sympy.count_ops(gf) <= sympy.count_ops(g) or not _affordable(g, 600)
        else sympy.factor_terms(g)
    ):
        base, power = arg, 1
        if arg.is_Pow and arg.exp.is_Integer and int(arg.exp) > 0:
            base, power = arg.base, int(arg.exp)
        smooth = not base.has(*_NONSMOOTH) and bool(base.free_symbols)
        parts.append(_Factor(base, power, smooth, _guards(base)))
    return parts


def _eval(expr: sympy.Expr, env: Mapping[str, Any]) -> Any:
    """Enclose ``expr`` on a box (env: name -> mpmath interval); [-oo, oo] if undefined."""
    if not expr.free_symbols:
        try:
            return interval(expr, prec=BOX_PRECISION, extended=True)
        except EvaluationError:
            return mpmath.iv.mpf([-_INF, _INF])
    subs = {sympy.Symbol(n): env[n] for n in by_name(expr)}
    try:
        result = interval(expr, subs, prec=BOX_PRECISION, extended=True)
    except (EvaluationError, ZeroDivisionError, ValueError, TypeError):
        return mpmath.iv.mpf([-_INF, _INF])
    lo, hi = endpoints(result)
    if mpmath.isnan(lo) or mpmath.isnan(hi):
        return mpmath.iv.mpf([-_INF, _INF])
    return result


def _product(parts: Sequence[sympy.Expr], env: Mapping[str, Any]) -> Any:
    total = mpmath.iv.mpf(1)
    for p in parts:
        total = total * _eval(p, env)
    return total


def _face_bound(f: _Factor, box: Mapping[str, tuple[Any, Any]], side: str) -> Any:
    """A bound on the min (``side="low"``) or max (``"high"``) of ``f`` over ``box``.

    Repeatedly moves every coordinate in which ``f`` is monotone on the current box to the
    face where ``f`` is smallest (largest), then encloses ``f`` there.  Sound when ``f`` is
    continuous on ``box`` (checked by the caller): by the mean value theorem the extreme
    over the box is attained on that face.
    """
    current = dict(box)
    assert f.derivatives is not None
    changed = True
    while changed:
        changed = False
        env = {n: _iv(x) for n, x in current.items()}
        for name, parts in f.derivatives.items():
            a, b = current[name]
            if a == b:
                continue
            dlo, dhi = endpoints(_product(parts, env))
            if dlo >= 0:
                current[name] = (a, a) if side == "low" else (b, b)
            elif dhi <= 0:
                current[name] = (b, b) if side == "low" else (a, a)
            else:
                continue
            changed = True
            env = {n: _iv(x) for n, x in current.items()}
    lo, hi = endpoints(_eval(f.expr, {n: _iv(x) for n, x in current.items()}))
    return lo if side == "low" else hi


def _enclose_factor(f: _Factor, box: Mapping[str, tuple[Any, Any]]) -> Any:
    """Enclose one factor on a box, using monotonicity to evaluate on faces where it can."""
    env = {n: _iv(x) for n, x in box.items()}
    whole = _eval(f.expr, env)
    if f.derivatives and _continuous(f, env):
        lo_w, hi_w = endpoints(whole)
        lo = max(_face_bound(f, box, "low"), lo_w)
        hi = min(_face_bound(f, box, "high"), hi_w)
        if lo <= hi:
            whole = mpmath.iv.mpf([lo, hi])
    if f.power != 1:
        whole = whole**f.power
    return whole


def _pointwise_sign(f: _Factor, box: Mapping[str, tuple[Any, Any]], domain: Domain) -> int:
    """+1 / -1 when the factor (with its power) is > 0 / < 0 at every point of the box,
    although its enclosure may reach 0 at an infinite or open end; 0 when undecided.

    Recognised: enclosures away from 0; exp(...); a parameter whose range is ``(0, ...``;
    b^e with a negative exponent when b's enclosure excludes 0 (b is finite at every point).
    """
    env = {n: _iv(x) for n, x in box.items()}
    e = f.expr
    sign = 0
    if isinstance(e, sympy.exp) or (e.is_Pow and e.base is sympy.E):
        sign = 1
    elif e.is_Symbol:
        r = domain.range(e.name)
        if r.low is not None and (r.low > 0 or (r.low == 0 and r.low_open)):
            sign = 1
    if sign == 0:
        lo, hi = endpoints(_eval(e, env))
        if lo > 0:
            sign = 1
        elif hi < 0:
            sign = -1
        elif e.is_Pow and e.exp.is_Integer and e.exp < 0:
            blo, bhi = endpoints(_eval(e.base, env))
            if blo > 0:
                sign = 1
            elif bhi < 0:
                sign = -1 if int(e.exp) % 2 else 1
        elif e.is_Pow and e.exp.is_number and e.exp.is_negative:
            blo, _ = endpoints(_eval(e.base, env))
            sign = 1 if blo > 0 else 0
    if sign == -1 and f.power % 2 == 0:
        sign = 1
    return sign


_SMOOTH_FUNCTIONS = (sympy.exp, sympy.log, sympy.erf, sympy.erfc)


def _smooth(expr: sympy.Expr) -> bool:
    """True when ``expr`` is built from arithmetic, powers, exp, log, erf and erfc only:
    smooth wherever the guards of :func:`_guards` hold."""
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Function) and not isinstance(node, _SMOOTH_FUNCTIONS):
            return False
    return True


def _enclose(factors: Sequence[_Factor], box: Mapping[str, tuple[Any, Any]]) -> tuple[Any, Any]:
    env = {n: _iv(x) for n, x in box.items()}
    total = mpmath.iv.mpf(1)
    for f in factors:
        part = _eval(f.expr, env)
        total = total * (part**f.power if f.power != 1 else part)
    lo, hi = endpoints(total)
    if lo > 0:
        return lo, hi
    # not decided by the plain enclosure: refine each factor by its monotonicity
    total = mpmath.iv.mpf(1)
    for f in factors:
        total = total * _enclose_factor(f, box)
    lo, hi = endpoints(total)
    if mpmath.isnan(lo) or mpmath.isnan(hi):
        return -_INF, _INF
    return lo, hi
