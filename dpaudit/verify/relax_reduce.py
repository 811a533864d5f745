"""Steps 2-4 of proof by relaxation (:mod:`dpaudit.verify.relax`): change of variables, ratios
of logs, monotone elimination of parameters.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from typing import Any

import mpmath
import sympy

from dpaudit.expressions import as_expr
from dpaudit.verify.domain import Domain, Range, by_name
from dpaudit.verify.enclosure import _continuous as _guards_hold
from dpaudit.verify.enclosure import _Factor, _guards
from dpaudit.verify.reformulate import _linear_bound
from dpaudit.verify.relax_rules import _INCREASING, _bounds, _positive, _pow_sign, _range_iv, _sign
from dpaudit.verify.verdict import _plain

# ------------------------------------------------------------------------------------------
# Reduction: change of variables, ratios of logs, monotone elimination
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Problem:
    g: sympy.Expr
    ranges: dict[str, Range]
    constraints: list[Any]
    notes: list[str]

    def domain(self) -> Domain:
        return Domain(dict(self.ranges), constraints=list(self.constraints))

    def env(self) -> dict[str, Any]:
        return {n: _range_iv(r) for n, r in self.ranges.items()}


def _only_in_logs(expr: sympy.Expr, name: str) -> bool:
    x = sympy.Symbol(name)
    stripped = expr.replace(
        lambda e: isinstance(e, sympy.log) and x in e.free_symbols, lambda e: sympy.Integer(2)
    )
    return x not in stripped.free_symbols


def _symbol(name: str, r: Range) -> sympy.Symbol:
    if r.low is not None and (r.low > 0 or (r.low == 0 and r.low_open)):
        return sympy.Symbol(name, positive=True)
    return sympy.Symbol(name, real=True)


def _logs_of(
    expr: Any, rep: Mapping[sympy.Symbol, sympy.Expr], assumed: Mapping[sympy.Symbol, sympy.Symbol]
) -> sympy.Expr:
    out = as_expr(expr).xreplace(assumed).xreplace(rep)
    return sympy.expand_log(out, deep=True)


def _change_variables(p: _Problem) -> _Problem:
    """Step 2: ``x = e^-t`` for x in (0, b], b <= 1, and ``x = e^s`` for x in [a, oo),
    a > 0, when x occurs in g only inside logs (an exact reparametrization; side
    constraints between positive monomials are taken to logs, an equivalence)."""
    new_ranges: dict[str, Range] = {}
    rep: dict[sympy.Symbol, sympy.Expr] = {}
    notes = []
    for name, r in p.ranges.items():
        if name not in by_name(p.g) or not _only_in_logs(p.g, name):
            continue
        x = sympy.Symbol(name)
        if r.low == 0 and r.low_open and r.high is not None and r.high <= 1:
            t = sympy.Symbol(f"log(1/{name})", real=True)
            low = sympy.simplify(-sympy.log(r.high))
            new_ranges[t.name] = Range(low, None, low_open=r.high_open)
            rep[x] = sympy.exp(-t)
            notes.append(f"{name} = exp(-t), t = log(1/{name}) in {new_ranges[t.name]}")
        elif r.low is not None and r.low > 0 and r.high is None:
            s = sympy.Symbol(f"log({name})", real=True)
            new_ranges[s.name] = Range(sympy.log(r.low), None, low_open=r.low_open)
            rep[x] = sympy.exp(s)
            notes.append(
                f"{name} = exp(s), s = log({name}) in {new_ranges[s.name]}"
                + (" (the integer parameter relaxed to the reals)" if r.integer else "")
            )
    if not rep:
        return p
    ranges = {n: r for n, r in p.ranges.items() if sympy.Symbol(n) not in rep}
    ranges.update(new_ranges)
    assumed = {
        sympy.Symbol(n): _symbol(n, r) for n, r in p.ranges.items() if sympy.Symbol(n) not in rep
    }
    rep = {
        k: v.xreplace({s: _symbol(s.name, new_ranges[s.name]) for s in v.free_symbols})
        for k, v in rep.items()
    }
    g = _plain(_logs_of(p.g, rep, assumed))
    cons = []
    for c in p.constraints:
        c2 = _logs_of(c, rep, assumed)
        if isinstance(c2, sympy.core.relational.Relational):
            a, b = c2.lhs, c2.rhs
            if a.is_positive and b.is_positive:  # log is increasing: an equivalence
                c2 = c2.func(
                    sympy.expand_log(sympy.log(a), deep=True),
                    sympy.expand_log(sympy.log(b), deep=True),
                )
        cons.append(_plain(c2))
    return _Problem(g, ranges, cons, [*p.notes, *notes])


def _linear_form(e: sympy.Expr) -> bool:
    if not e.is_Add or not e.free_symbols:
        return False
    try:
        poly = sympy.Poly(e, *sorted(e.free_symbols, key=str))
    except sympy.PolynomialError:
        return False
    return poly.total_degree() == 1


def _pair(mul: sympy.Expr, env: Mapping[str, Any]) -> sympy.Expr:
    """Step 3 on one product."""
    factors: dict[sympy.Expr, sympy.Expr] = {}
    for f in sympy.Mul.make_args(mul):
        base, k = (f.base, f.exp) if f.is_Pow and f.exp.is_Rational else (f, sympy.Integer(1))
        factors[base] = factors.get(base, 0) + k
    changed = True
    out = sympy.Integer(1)
    while changed:
        changed = False
        for (p, a), (q, c) in itertools.permutations(list(factors.items()), 2):
            if not (a > 0 and c < 0 and _linear_form(p) and _linear_form(q)):
                continue
            diff = sympy.expand(p - q)
            if not diff.is_number or diff == 0 or not _positive(p, env) or not _positive(q, env):
                continue
            r = min(a, -c)
            out *= (1 + diff / q) ** r
            factors[p], factors[q] = a - r, c + r
            changed = True
            break
    for base, k in factors.items():
        out *= base**k
    return out


def _distribute(expr: sympy.Expr) -> sympy.Expr:
    """Products distributed over the sums among their factors (not over sums in
    denominators or powers), so that factors of one term meet in one product."""

    def step(e: sympy.Expr) -> sympy.Expr:
        if e.is_Mul and any(a.is_Add for a in e.args):
            return sympy.expand_mul(e, deep=False)
        return e

    return sympy.bottom_up(expr, step)


def _normalize(p: _Problem) -> _Problem:
    env = p.env()
    g = sympy.expand_power_base(
        _distribute(p.g).xreplace({sympy.Symbol(n): _symbol(n, r) for n, r in p.ranges.items()})
    )
    g2 = sympy.bottom_up(_plain(g), lambda e: _pair(e, env) if e.is_Mul else e)
    if g2 == p.g:
        return p
    return _Problem(
        g2,
        p.ranges,
        p.constraints,
        [*p.notes, "ratios of logs P/Q with P - Q constant written 1 + (P - Q)/Q"],
    )


def _monotone(expr: sympy.Expr, name: str, env: Mapping[str, Any]) -> int | None:
    """+1 / -1 when ``expr`` is nondecreasing / nonincreasing in ``name`` on the box, 0 when
    it does not depend on it, None when the tree does not show it."""
    x = sympy.Symbol(name)
    if x not in expr.free_symbols:
        return 0
    if expr == x:
        return 1

    def combine(parts: list[int | None]) -> int | None:
        if None in parts:
            return None
        found = {q for q in parts if q}
        return found.pop() if len(found) == 1 else (0 if not found else None)

    if expr.is_Add or isinstance(expr, (sympy.Min, sympy.Max)):
        return combine([_monotone(a, name, env) for a in expr.args])
    if expr.is_Mul:
        signs = [_sign(a, env) for a in expr.args]
        parts: list[int | None] = []
        for i, a in enumerate(expr.args):
            m = _monotone(a, name, env)
            if m == 0:
                continue
            others = signs[:i] + signs[i + 1 :]
            if m is None or not all(others):
                return None
            parts.append(m * int(sympy.prod(others)))
        return combine(parts)
    if expr.is_Pow:
        if x in expr.exp.free_symbols:
            return None
        s = _pow_sign(expr, env)
        m = _monotone(expr.base, name, env)
        return None if not s or m is None else s * m
    if isinstance(expr, _INCREASING):
        return _monotone(expr.args[0], name, env)
    if isinstance(expr, sympy.erfc):
        m = _monotone(expr.args[0], name, env)
        return None if m is None else -m
    if isinstance(expr, sympy.log) and _positive(expr.args[0], env):
        return _monotone(expr.args[0], name, env)
    return None


def _continuous(g: sympy.Expr, env: Mapping[str, Any]) -> bool:
    """Every singularity of g is certainly avoided on the closed box (so g is continuous
    there, up to its faces): the engine's guard check on g as one factor."""
    return _guards_hold(_Factor(g, 1, False, _guards(g)), env)


def _fold_constant_bounds(p: _Problem, name: str) -> _Problem:
    """Side constraints that bound ``name`` by a constant become part of its range."""
    r = p.ranges[name]
    keep = []
    for c in p.constraints:
        b = _linear_bound(c, name) if name in by_name(c) else None
        if b is None or b[0].free_symbols:
            keep.append(c)
            continue
        bound, side = b
        is_open = c.rel_op in ("<", ">")
        if side == "upper":
            if r.high is None or bool(bound < r.high):
                r = dataclasses.replace(r, high=bound, high_open=is_open)
            elif bound == r.high:
                r = dataclasses.replace(r, high_open=r.high_open or is_open)
        else:
            if r.low is None or bool(bound > r.low):
                r = dataclasses.replace(r, low=bound, low_open=is_open)
            elif bound == r.low:
                r = dataclasses.replace(r, low_open=r.low_open or is_open)
    if len(keep) == len(p.constraints):
        return p
    return _Problem(p.g, {**p.ranges, name: r}, keep, p.notes)


def _eliminate_one(p: _Problem) -> _Problem | None:
    """Step 4 for the first parameter it applies to."""
    env = p.env()
    for name in sorted(p.ranges):
        if name not in by_name(p.g):
            if any(name in by_name(c) for c in p.constraints):
                continue
            ranges = {n: r for n, r in p.ranges.items() if n != name}
            return _Problem(p.g, ranges, p.constraints, p.notes)
        m = _monotone(p.g, name, env)
        if not m:
            continue
        side = "lower" if m == 1 else "upper"
        q = _fold_constant_bounds(p, name)
        r = q.ranges[name]
        end = r.low if side == "lower" else r.high
        if r.integer and end is not None:
            end = sympy.Integer(r.first_integer() if side == "lower" else r.last_integer())
        if end is None:
            continue
        other = "upper" if side == "lower" else "lower"
        bounds = [_linear_bound(c, name) for c in q.constraints if name in by_name(c)]
        if any(b is None or b[1] != other for b in bounds):
            continue
        if not _continuous(q.g, q.env()):
            continue
        x = sympy.Symbol(name)
        g = q.g.xreplace({x: end})
        cons = [c.xreplace({x: end}) for c in q.constraints]
        if any(c is sympy.false for c in cons):
            continue
        cons = [c for c in cons if c is not sympy.true]
        ranges = {n: rr for n, rr in q.ranges.items() if n != name}
        how = "nondecreasing" if m == 1 else "nonincreasing"
        is_open = r.low_open if side == "lower" else r.high_open
        note = (
            f"rhs - lhs is {how} in {name} (signs of its expression tree, enclosed on "
            f"the domain), so smallest at {name} = {end}"
            + (" (an open end: the limit, g continuous there)" if is_open else "")
        )
        return _Problem(g, ranges, cons, [*q.notes, note])
    return None


def _divide_positive(p: _Problem) -> _Problem | None:
    """``g = f h`` with f > 0 at every point: decide h instead."""
    g = sympy.factor_terms(p.g)
    if not g.is_Mul:
        return None
    env = p.env()
    keep, symbols, enclosed = [], [], []
    for f in g.args:
        base = f.base if f.is_Pow and f.exp.is_Rational else f
        if (
            base.is_Symbol
            and base.name in p.ranges
            and (lambda r: r.low is not None and (r.low > 0 or (r.low == 0 and r.low_open)))(
                p.ranges[base.name]
            )
        ):
            symbols.append(f)
        elif f.free_symbols and _positive(f, env):
            enclosed.append(mpmath.nstr(_bounds(f, env)[0], 4))
        elif not (f.is_number and f.is_positive):
            keep.append(f)
    if not symbols and not enclosed:
        return None
    what = [str(sympy.Mul(*symbols))] if symbols else []
    what += [f"a factor enclosed >= {lo} > 0 (interval arithmetic)" for lo in enclosed]
    return _Problem(
        sympy.Mul(*keep),
        p.ranges,
        p.constraints,
        [*p.notes, f"divided by {' and '.join(what)} (> 0 on the domain)"],
    )


def _reduce(p: _Problem) -> _Problem:
    p = _normalize(_change_variables(p))
    for _ in range(2 * len(p.ranges) + 2):
        if not p.ranges:
            break
        q = _eliminate_one(p)
        if q is None:
            q = _divide_positive(p)
            if q is not None:
                q2 = _eliminate_one(q)
                if q2 is None:
                    return p
                q = q2
        if q is None:
            break
        p = q
    return p
