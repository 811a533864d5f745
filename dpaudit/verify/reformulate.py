"""Reformulations of an inequality the engine tries when branch-and-bound alone is not enough:
logarithmic substitution, substitution of an end of a range, and their helpers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import mpmath
import sympy

from dpaudit.expressions import as_expr
from dpaudit.numeric import EvaluationError, endpoints, interval
from dpaudit.verify.boxes import _any_point, _halton, _mpf_fraction
from dpaudit.verify.budget import POINT_PRECISION
from dpaudit.verify.domain import Domain, Range, by_name
from dpaudit.verify.symbolic import _deep_cancel, _light_simplify
from dpaudit.verify.verdict import _plain


@dataclasses.dataclass
class _Reformulated:
    """``g >= 0`` (``> 0``) on ``domain`` implies the original inequality on the original
    domain; ``back`` maps a point of ``domain`` to one of the original domain (or None),
    so that a counterexample found here can be certified there."""

    g: sympy.Expr
    domain: Domain
    notes: list[str]
    back: Any


def _rational_near(value: sympy.Expr, side: str = "mid") -> sympy.Rational:
    """A rational below (``"down"``), above (``"up"``) or near (``"mid"``) ``value``."""
    lo, hi = endpoints(interval(value, prec=POINT_PRECISION))
    pick = lo if side == "down" else hi if side == "up" else (lo + hi) / 2
    f = _mpf_fraction(pick)
    if side == "mid":
        f = f.limit_denominator(10**30)
    return sympy.Rational(f.numerator, f.denominator)


def _fills(names: Sequence[str], domain: Domain) -> Any:
    """Values for parameters a reformulation dropped: each at a point of its range, then one
    at a time doubled outwards (a sequence to search for a point of the original domain)."""
    base = {n: _any_point(domain.range(n)) for n in names}
    yield dict(base)
    for level in range(1, 80):
        for n in names:
            r = domain.range(n)
            if r.high is not None and r.low is not None:
                continue
            step = sympy.Integer(2) ** level
            v = base[n] * step if r.high is None else base[n] - step
            if r.high is None and base[n] <= 0:
                v = base[n] + step
            yield {**base, n: v}


def _drop_unused(g: sympy.Expr, domain: Domain) -> tuple[Domain, list[str]]:
    """The domain without the parameters ``g`` does not mention and without every side
    constraint that mentions one of them: a superset of the projection (sound for proving)."""
    used = set(by_name(g))
    dropped = [n for n in domain.names if n not in used]
    if not dropped:
        return domain, []
    ranges = {n: r for n, r in domain.ranges if n in used}
    cons = [c for c in domain.constraints if set(by_name(c)) <= used]
    return Domain(ranges, constraints=cons), dropped


def _sign_guess(d: sympy.Expr, domain: Domain) -> int:
    """+1 / -1 when ``d`` is >= 0 / <= 0 at a few sample points of the domain's ranges, else
    0 (only a guess of which monotonicity to try to prove)."""
    signs = set()
    for i in range(1, 9):
        point = {}
        for j, (n, r) in enumerate(domain.ranges):
            t = _halton(i, (2, 3, 5, 7, 11, 13)[j % 6])
            if r.low is not None and r.high is not None:
                v = r.low + (r.high - r.low) * sympy.Rational(t.numerator, t.denominator)
            else:
                v = (
                    _any_point(r)
                    + (1 if r.high is None else -1)
                    * sympy.Rational(t.numerator, t.denominator)
                    * 100
                )
            point[n] = sympy.floor(v) if r.integer else v
        try:
            lo, hi = endpoints(interval(d, {sympy.Symbol(n): point[n] for n in by_name(d)}))
        except (EvaluationError, ValueError, ZeroDivisionError, TypeError):
            continue
        if lo > 0:
            signs.add(1)
        elif hi < 0:
            signs.add(-1)
    return signs.pop() if len(signs) == 1 else 0


def _log_substitution(g: sympy.Expr, domain: Domain) -> _Reformulated | None:
    """``x = e^(-t)`` for each parameter x in (0, b], b <= 1, that appears inside a log:
    ``log(2/delta)`` becomes ``t + log 2`` and the end delta -> 0 the end t -> oo, where
    the reciprocal coordinate ``1/t`` of the branch-and-bound encloses ratios of logs."""
    names = []
    for n, r in domain.ranges:
        if r.integer or r.low != 0 or not r.low_open or r.high is None or r.high > 1:
            continue
        if any(n in by_name(a.args[0]) for a in g.atoms(sympy.log)):
            names.append(n)
    if not names:
        return None
    ranges = dict(domain.ranges)
    rep = {}
    for n in names:
        r = ranges.pop(n)
        t = sympy.Symbol(f"log(1/{n})", positive=True)
        rep[sympy.Symbol(n)] = sympy.exp(-t)
        ranges[t.name] = Range(sympy.simplify(-sympy.log(r.high)), None, low_open=r.high_open)
    g2 = _plain(sympy.expand_log(_positive_symbols(g.xreplace(rep)), deep=True))
    cons = [
        _plain(sympy.expand_log(_positive_symbols(c.xreplace(rep)), deep=True))
        for c in domain.constraints
    ]
    new = Domain(ranges, constraints=cons)

    def back(p: dict[str, Any]) -> dict[str, Any]:
        q = {k: v for k, v in p.items() if not k.startswith("log(1/")}
        for n in names:
            q[n] = _rational_near(sympy.exp(-as_expr(p[f"log(1/{n})"])))
        return q

    return _Reformulated(
        g2, new, [f"{n} = exp(-t), t = log(1/{n}) in {ranges[f'log(1/{n})']}" for n in names], back
    )


def _positive_symbols(expr: sympy.Expr) -> sympy.Expr:
    """The ``log(1/x)`` symbols made positive, so that ``expand_log`` may split logs."""
    return expr.xreplace(
        {
            s: sympy.Symbol(s.name, positive=True)
            for s in expr.free_symbols
            if s.name.startswith("log(1/")
        }
    )


def _linear_bound(c: Any, name: str) -> tuple[sympy.Expr, str] | None:
    """A side constraint linear in ``name`` with a numeric coefficient as (bound, "upper" or
    "lower"): ``x <= bound`` or ``x >= bound``; None otherwise."""
    if not isinstance(c, sympy.core.relational.Relational) or c.rel_op not in (
        "<",
        "<=",
        ">",
        ">=",
    ):
        return None
    x = sympy.Symbol(name)
    diff = _plain(c.lhs - c.rhs)
    k = sympy.diff(diff, x)
    if not k.is_number or k == 0 or sympy.diff(k, x) != 0:
        return None
    bound = sympy.expand(x - diff / k)
    if x in bound.free_symbols:
        return None
    upper = (c.rel_op in ("<", "<=")) == bool(k > 0)
    return bound, "upper" if upper else "lower"


def _substitute_end(
    g: sympy.Expr, domain: Domain, name: str, at: sympy.Expr, used: Any, side: str
) -> _Reformulated:
    x = sympy.Symbol(name)
    r = domain.range(name)
    g2 = _light_simplify(_deep_cancel(g.xreplace({x: at})))
    cons = []
    for c in domain.constraints:
        if c is used:
            continue
        cons.append(c.xreplace({x: at}) if name in by_name(c) else c)
    if used is not None:
        # the admissible interval of x is nonempty
        other = r.high if side == "lower" else r.low
        if r.integer:
            other = r.last_integer() if side == "lower" else r.first_integer()
        if other is not None:
            is_open = (r.high_open if side == "lower" else r.low_open) and not r.integer
            rel = (
                (sympy.Lt if is_open else sympy.Le)(at, other)
                if side == "lower"
                else (sympy.Gt if is_open else sympy.Ge)(at, other)
            )
            cons.append(rel)
    cons = [c for c in cons if c is not sympy.true]
    ranges = {n: rr for n, rr in domain.ranges if n != name}
    reduced = Domain(ranges, constraints=cons)
    reduced, dropped = _drop_unused(g2, reduced)

    def back(p: dict[str, Any]) -> dict[str, Any] | None:
        for fill in _fills(dropped, domain):
            q = {**p, **fill}
            v = at.xreplace({sympy.Symbol(k): val for k, val in q.items()})
            if r.integer:
                lo, hi = endpoints(interval(v, prec=POINT_PRECISION))
                v = sympy.Integer(
                    int(mpmath.floor(lo)) if side == "upper" else int(mpmath.ceil(hi))
                )
            elif not v.is_Rational:
                v = _rational_near(v, "down" if side == "upper" else "up")
            q[name] = v
            if domain.contains(q) is True:
                return q
        return None

    end_text = f"{name} = {at}" + (
        " (its bound in the side constraint)" if used is not None else " (the end of its range)"
    )
    note = f"{name} eliminated by proved monotonicity: {end_text}"
    if dropped:
        note += f"; {', '.join(dropped)} then free"
    return _Reformulated(g2, reduced, [note], back)
