"""Proof by relaxation: prove a simpler inequality that implies ``lhs <= rhs``.

Interval branch-and-bound (:mod:`dpaudit.verify.engine`) cannot enclose some bounds the
accountant produces: nested minima of candidate bounds, ``n log(1 + x/n)`` as n -> oo, and
ratios of logarithms as delta -> 0.  :func:`prove_by_relaxation` proves ``g = rhs - lhs >= 0``
(``> 0``) through a chain of steps, each of which implies the one before, and states every
step in the verdict's method text:

1. **Choices and relaxations.**  A sub-expression X in whose value g is nonincreasing (its
   *polarity* is -1) may be replaced by an upper bound X' >= X; one in whose value g is
   nondecreasing by a lower bound.  The bounds used (:data:`RULES`) are

   * ``Min(a, b, ...) <= a`` (each argument is a choice: Min(A, B) + Min(C, D) <= rhs holds
     where any of A + C, A + D, B + C, B + D is <= rhs), and ``Max(a, b, ...) >= a``;
   * ``log(y) <= y - 1`` for y > 0 (so ``n log(1 + x/n) <= x``);
   * ``e^y - 1 <= y e^y`` for all real y (mean value theorem: e^y - 1 = y e^xi, xi between
     0 and y).

   One occurrence is replaced at a time, every other fixed, so g changes as a function of
   that one value along the segment from X to X'.  The polarity is read off the expression
   tree: sums keep it, a product multiplies it by the sign of its other factors, ``u^k``
   (u >= 0) by the sign of k, exp, log and erf keep it, erfc reverses it; every sign comes
   from a rigorous interval enclosure over the whole domain.  The functions on the path that
   need their argument in a range (log: > 0; non-integer or negative powers: >= 0 / > 0)
   are checked at both ends (before and after), so the whole segment stays in their domain
   and g is monotone along it.
2. **Change of variables.**  A parameter in (0, b], b <= 1, that occurs only inside logs is
   written ``x = e^-t`` (t = log 1/x in [log 1/b, oo)); one in [a, oo), a > 0, that occurs
   only inside logs ``x = e^s`` (an integer parameter relaxed to the reals: a superset).
   Logs of products are then sums, linear in t and s, and side constraints between such
   parameters (``delta m < 1``) are taken to logs (``s - t < 0``).
3. **Ratios of logs.**  In each product, ``P^a Q^-c`` with P - Q a constant and P, Q > 0 is
   written ``(1 + (P - Q)/Q)^r P^(a-r) Q^(r-c)``, r = min(a, c) (an identity), so that each
   parameter occurs with one polarity (``log(12n/d)/log(3n/d) = 1 + log 4/log(3n/d)``).
4. **Monotone elimination.**  A parameter in which g has a proved polarity (read off as in
   1., signs by enclosures) is set to the end of its range where g is smallest, provided no
   side constraint bounds it on that side (constant bounds are folded into the range), and
   g is continuous up to that end (every log argument, denominator and root base is
   enclosed away from its singularity on the closed box); a positive factor (a parameter
   with a range in (0, oo), or an enclosure > 0) is divided out first when that helps.
5. What is left is decided by a rigorous interval enclosure (no parameters left) or by
   :func:`~dpaudit.verify.engine.verify_inequality` on the reduced problem (one parameter
   left).
6. When no single choice of Min (Max) arguments proves the whole domain, the domain is
   bisected along one parameter (the two closed halves cover it) and each half may choose
   its own arguments.

Soundness: steps 1-4 only ever replace the problem by one that implies it; nothing is
refuted here (a counterexample must come from the engine, in the original problem).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import mpmath
import sympy

from dpaudit.expressions import as_expr
from dpaudit.numeric import endpoints, interval
from dpaudit.verify.budget import BOX_PRECISION, _clock
from dpaudit.verify.domain import Domain, Range, by_name
from dpaudit.verify.enclosure import _continuous as _guards_hold
from dpaudit.verify.enclosure import _eval, _Factor, _guards
from dpaudit.verify.engine import verify_inequality
from dpaudit.verify.reformulate import _linear_bound
from dpaudit.verify.verdict import Verdict, _plain, parse_relation

__all__ = ["RELAX_SECONDS", "RULES", "prove_by_relaxation", "verify_with_relaxation"]

_INF = mpmath.inf

#: The bounds step 1 may use, as they appear in method texts.
RULES = {
    "min": "Min(a, b, ...) <= a",
    "max": "Max(a, b, ...) >= a",
    "log": "log(y) <= y - 1 (y > 0)",
    "expm1": "e^y - 1 <= y e^y (mean value theorem)",
}

#: Rule sets tried after the Min/Max choices, most relaxed first.
_RULE_SETS: tuple[tuple[str, ...], ...] = (("log", "expm1"), ("log",), ())

#: The CPU-time safety net :func:`~dpaudit.verify.prove.verify_claim` gives a relaxation
#: attempt (the candidate budget :data:`MAX_CANDIDATES` decides; this only stops a runaway).
RELAX_SECONDS = 30.0

#: A reduced problem goes to the engine only with at most this many parameters left.
ENGINE_PARAMETERS = 1

#: The deterministic budget of one attempt: relaxed candidates examined (screened, reduced and
#: decided) over all domain pieces.  It, not the clock, decides when relaxation gives up, so
#: the outcome is the same on any machine; the CPU time limit is only a safety net.
MAX_CANDIDATES = 200

#: The engine's work budget on a reduced one-parameter problem.
ENGINE_WORK = 1500

#: At most this many Min/Max choice combinations are tried.
MAX_CHOICES = 24


# ------------------------------------------------------------------------------------------
# Enclosures over a domain
# ------------------------------------------------------------------------------------------


def _range_iv(r: Range) -> Any:
    lo = -_INF if r.low is None else endpoints(interval(r.low, prec=BOX_PRECISION))[0]
    hi = _INF if r.high is None else endpoints(interval(r.high, prec=BOX_PRECISION))[1]
    return mpmath.iv.mpf([lo, hi])


def _env(domain: Domain) -> dict[str, Any]:
    """Every parameter's closed range as an (extended) interval: a superset of the domain."""
    return {n: _range_iv(r) for n, r in domain.ranges}


def _bounds(expr: sympy.Expr, env: Mapping[str, Any]) -> tuple[Any, Any]:
    lo, hi = endpoints(_eval(expr, env))
    if mpmath.isnan(lo) or mpmath.isnan(hi):
        return -_INF, _INF
    return lo, hi


def _sign(expr: sympy.Expr, env: Mapping[str, Any]) -> int:
    """+1 when ``expr >= 0``, -1 when ``<= 0`` on the box (certified), else 0."""
    lo, hi = _bounds(expr, env)
    if lo >= 0:
        return 1
    if hi <= 0:
        return -1
    return 0


def _positive(expr: sympy.Expr, env: Mapping[str, Any], strict: bool = True) -> bool:
    lo, _ = _bounds(expr, env)
    return lo > 0 if strict else lo >= 0


# ------------------------------------------------------------------------------------------
# Polarity: the direction in which g moves with the value of a sub-expression
# ------------------------------------------------------------------------------------------

_INCREASING = (sympy.exp, sympy.erf)


def _pow_sign(node: sympy.Pow, env: Mapping[str, Any]) -> int:
    """The sign by which ``base^k`` (k a number) passes on its base's polarity (0: none)."""
    k = node.exp
    if not k.is_number or not k.is_real:
        return 0
    if k.is_Integer and int(k) % 2 == 1 and k > 0:
        return 1
    if k > 0 and _positive(node.base, env, strict=False):
        return 1
    if k < 0 and _positive(node.base, env):
        return -1
    return 0


def _slots(
    g: sympy.Expr, env: Mapping[str, Any]
) -> Iterator[tuple[tuple[int, ...], sympy.Expr, int]]:
    """(path, node, polarity of g in the node's value) for every node with a certain
    polarity, parents before children."""

    def visit(node: sympy.Expr, path: tuple[int, ...], pol: int) -> Iterator[Any]:
        yield path, node, pol
        children: list[tuple[int, int]] = []
        if node.is_Add or isinstance(node, (sympy.Min, sympy.Max)):
            children = [(i, pol) for i in range(len(node.args))]
        elif node.is_Mul:
            signs = [_sign(a, env) for a in node.args]
            for i in range(len(node.args)):
                others = signs[:i] + signs[i + 1 :]
                if all(others):
                    children.append((i, pol * int(sympy.prod(others))))
        elif node.is_Pow:
            s = _pow_sign(node, env)
            if s:
                children = [(0, pol * s)]
        elif isinstance(node, _INCREASING):
            children = [(0, pol)]
        elif isinstance(node, sympy.erfc):
            children = [(0, -pol)]
        elif isinstance(node, sympy.log) and _positive(node.args[0], env):
            children = [(0, pol)]
        for i, p in children:
            yield from visit(node.args[i], (*path, i), p)

    yield from visit(g, (), 1)


def _at(expr: sympy.Expr, path: tuple[int, ...]) -> sympy.Expr:
    for i in path:
        expr = expr.args[i]
    return expr


def _replace(
    g: sympy.Expr, path: tuple[int, ...], new: sympy.Expr, env: Mapping[str, Any]
) -> sympy.Expr | None:
    """``g`` with the node at ``path`` replaced by ``new``, or None when a function on the
    path would leave the range where it is monotone (checked after the change; the caller's
    polarity walk checked before)."""
    nodes = [g]
    for i in path:
        nodes.append(nodes[-1].args[i])
    current = new
    for parent, i in zip(reversed(nodes[:-1]), reversed(path), strict=True):
        if isinstance(parent, sympy.log) and not _positive(current, env):
            return None
        if (
            parent.is_Pow
            and i == 0
            and not (parent.exp.is_Integer and int(parent.exp) % 2 and parent.exp > 0)
        ):
            strict = bool(parent.exp < 0)
            if not _positive(current, env, strict=strict):
                return None
        args = list(parent.args)
        args[i] = current
        current = parent.func(*args)
    return current


def _bound_for(node: sympy.Expr, pol: int, rule: str, env: Mapping[str, Any]) -> list[sympy.Expr]:
    """The replacements ``rule`` offers for ``node`` at polarity ``pol`` (g nonincreasing in
    the node: an upper bound is wanted, pol = -1; nondecreasing: a lower bound)."""
    if rule == "min" and pol == -1 and isinstance(node, sympy.Min):
        return list(node.args)
    if rule == "max" and pol == 1 and isinstance(node, sympy.Max):
        return list(node.args)
    if rule == "log" and pol == -1 and isinstance(node, sympy.log) and _positive(node.args[0], env):
        return [node.args[0] - 1]
    if rule == "expm1" and pol == -1 and node.is_Add and len(node.args) == 2:
        ones = [a for a in node.args if a == -1]
        exps = [a for a in node.args if isinstance(a, sympy.exp)]
        if ones and exps:
            y = exps[0].args[0]
            return [y * sympy.exp(y)]
    return []


def _brief(expr: sympy.Expr, width: int = 48) -> str:
    text = str(expr)
    return text if len(text) <= width else text[: width - 3] + "..."


def _choices(g: sympy.Expr, env: Mapping[str, Any]) -> list[tuple[sympy.Expr, list[str]]]:
    """Every way (up to :data:`MAX_CHOICES`) of replacing each Min (Max) of the right
    polarity by one of its arguments, with a note per choice."""
    out: list[tuple[sympy.Expr, list[str]]] = []

    def walk(expr: sympy.Expr, notes: list[str]) -> None:
        if len(out) >= MAX_CHOICES:
            return
        for path, node, pol in _slots(expr, env):
            for rule in ("min", "max"):
                options = _bound_for(node, pol, rule, env)
                if not options:
                    continue
                for k, arg in enumerate(options):
                    new = _replace(expr, path, arg, env)
                    if new is not None:
                        walk(
                            new,
                            [
                                *notes,
                                f"{RULES[rule]}: {_brief(node)} replaced by "
                                f"its argument {k + 1}, {_brief(arg)}",
                            ],
                        )
                return
        out.append((expr, notes))

    walk(g, [])
    return out


def _relax(
    g: sympy.Expr, rules: tuple[str, ...], env: Mapping[str, Any], screen: Any
) -> tuple[sympy.Expr, list[str]]:
    """Apply ``rules`` wherever the polarity allows, one occurrence at a time, keeping a
    replacement only while the relaxed inequality still holds at the sample points
    (``screen``: a heuristic choice of *which* sound steps to take)."""
    used: dict[str, int] = {}
    rejected: set[sympy.Expr] = set()
    for _ in range(40):
        for path, node, pol in _slots(g, env):
            if node in rejected:
                continue
            new, rule = None, ""
            for rule in rules:
                options = _bound_for(node, pol, rule, env)
                if options:
                    new = _replace(g, path, options[0], env)
                    if new is not None:
                        break
            if new is None:
                continue
            if not screen(new):
                rejected.add(node)
                continue
            used[rule] = used.get(rule, 0) + 1
            g = new
            break
        else:
            break
    return g, [f"{RULES[r]} at {k} occurrence{'s' if k > 1 else ''}" for r, k in used.items()]


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


# ------------------------------------------------------------------------------------------
# The entry point
# ------------------------------------------------------------------------------------------


def _decide_constant(g: sympy.Expr, strict: bool) -> bool:
    try:
        lo, _ = endpoints(interval(g, prec=120))
    except Exception:  # an expression interval() cannot enclose is undecided
        return False
    return lo > 0 if strict else lo >= 0


def _samples(domain: Domain, count: int = 30) -> list[dict[str, Any]]:
    """Points spread over the domain: the corners (each parameter at its first or last
    sample value) and mixtures, including far ends (delta = 10^-300, n = 10^30)."""
    values: dict[str, list[Any]] = {}
    for n, r in domain.ranges:
        lo, hi = r.low, r.high
        if lo is not None and hi is not None:
            vs = [lo + (hi - lo) * sympy.Rational(k, 8) for k in (8, 7, 4, 1, 0)]
            if lo == 0:
                vs += [hi * sympy.Integer(10) ** -k for k in (3, 30, 300)]
        elif lo is not None:
            vs = [lo, lo + 1] + [(abs(lo) + 1) * sympy.Integer(10) ** k for k in (1, 3, 10, 30)]
        elif hi is not None:
            vs = [hi, hi - 1] + [-(abs(hi) + 1) * sympy.Integer(10) ** k for k in (1, 3, 10)]
        else:
            vs = [sympy.Integer(k) for k in (0, 1, -1, 10, -10, 1000, -1000)]
        if r.integer:
            vs = [sympy.ceiling(v) for v in vs]
        values[n] = [v for v in vs if r.contains(v) is not False]
    names = sorted(values)
    out = [
        {n: values[n][-1 if corner >> j & 1 else 0] for j, n in enumerate(names)}
        for corner in range(2 ** min(len(names), 4))
    ]
    for i in range(count):
        out.append(
            {
                n: values[n][(i * (2 * j + 1) + i // (j + 2)) % len(values[n])]
                for j, n in enumerate(names)
            }
        )
    return out


def _screen_for(domain: Domain, strict: bool) -> Any:
    """A heuristic filter: False when g is < 0 (<= 0) at a sample point of the domain, in
    30-digit arithmetic.  Nothing is concluded from it; it only chooses what to try."""
    points = [p for p in _samples(domain) if domain.contains(p) is not False]

    def screen(g: sympy.Expr) -> bool:
        names = sorted(by_name(g))
        try:
            f = sympy.lambdify([sympy.Symbol(n) for n in names], g, modules="mpmath")
        except Exception:  # cannot be screened: keep it
            return True
        with mpmath.workdps(30):
            for pt in points:
                try:
                    v = f(
                        *(
                            mpmath.mpf(sympy.Rational(pt[n]).p) / sympy.Rational(pt[n]).q
                            for n in names
                        )
                    )
                except Exception:  # undefined at the sample: no verdict
                    continue
                if isinstance(v, mpmath.mpc) or not mpmath.isfinite(v):
                    continue
                if v < 0 or (strict and v == 0):
                    return False
        return True

    return screen


def prove_by_relaxation(
    relation: Any, domain: Domain, *, time_limit: float = 10.0, max_boxes: int = 1500
) -> Verdict | None:
    """Try to prove ``lhs <= rhs`` (``<``, ``>=``, ``>``) on ``domain`` by relaxation,
    change of variables and monotone elimination (see the module docstring).  When no
    choice of Min arguments works on the whole domain, the domain is bisected (at most
    :data:`SPLIT_DEPTH` levels, one parameter per level) and each piece may choose its own.

    Args:
        relation: the inequality.
        domain: its domain.
        time_limit: a CPU-time safety net for the whole attempt (including any engine run
            on a reduced problem); :data:`MAX_CANDIDATES` decides when it gives up.
        max_boxes: the engine's box budget on a reduced problem.

    Returns:
        A proved :class:`~dpaudit.verify.engine.Verdict` whose method lists every step, or
        None when no candidate could be proved (this never refutes).
    """
    start = _clock()
    if as_expr(relation) in (sympy.true, sympy.false):
        return None  # already decided by sympy: nothing to relax
    rel = _plain(parse_relation(relation))
    strict = rel.rel_op in ("<", ">")
    lhs, rhs = (rel.lhs, rel.rhs) if rel.rel_op in ("<", "<=") else (rel.rhs, rel.lhs)
    deadline = start + time_limit
    budget = [MAX_CANDIDATES]
    method = _prove_split(rhs - lhs, strict, domain, deadline, max_boxes, SPLIT_DEPTH, budget)
    if method is None:
        return None
    return Verdict("proved", rel, domain, f"by relaxation: {method}", seconds=_clock() - start)


#: Levels of domain bisection when no single choice proves the whole domain.
SPLIT_DEPTH = 1


def _halves(domain: Domain, name: str) -> tuple[Domain, Domain, str] | None:
    """The domain cut in two along ``name`` (a superset of it: the cut is in both)."""
    r = domain.range(name)
    if r.low is not None and r.high is not None:
        mid = (r.low + r.high) / 2
        if r.low == 0 and r.low_open:
            mid = r.high / 2
    elif r.low is not None:
        mid = 2 * r.low + 1 if r.low >= 0 else sympy.Integer(0)
    elif r.high is not None:
        mid = 2 * r.high - 1 if r.high <= 0 else sympy.Integer(0)
    else:
        mid = sympy.Integer(0)
    if r.integer:
        mid = sympy.floor(mid)
        if (r.low is not None and mid < r.first_integer()) or (
            r.high is not None and mid >= r.last_integer()
        ):
            return None
        upper = dataclasses.replace(r, low=mid + 1, low_open=False)
    else:
        upper = dataclasses.replace(r, low=mid, low_open=False)
    lower = dataclasses.replace(r, high=mid, high_open=False)
    pieces = []
    for piece in (lower, upper):
        ranges = {**dict(domain.ranges), name: piece}
        try:
            pieces.append(Domain(ranges, constraints=list(domain.constraints)))
        except ValueError:  # an empty piece: the cut is at an open end
            return None
    return pieces[0], pieces[1], f"{name} <= {mid} and {name} >= {upper.low}"


def _prove_split(
    g: sympy.Expr,
    strict: bool,
    domain: Domain,
    deadline: float,
    max_boxes: int,
    depth: int,
    budget: list[int],
) -> str | None:
    """A proof method for ``g >= 0`` (``> 0``) on ``domain``, or None.  ``budget`` holds
    the candidates left (shared by all pieces, decremented in place)."""
    method = _prove_whole(g, strict, domain, deadline, max_boxes, budget)
    if method is not None or depth <= 0 or budget[0] <= 0 or _clock() > deadline:
        return method
    if not g.has(sympy.Min, sympy.Max):
        return None  # pieces help by choosing Min/Max arguments differently
    for name in sorted(by_name(g)):
        cut = _halves(domain, name)
        if cut is None:
            continue
        low, high, where = cut
        m1 = _prove_split(g, strict, low, deadline, max_boxes, depth - 1, budget)
        if m1 is None:
            continue
        m2 = _prove_split(g, strict, high, deadline, max_boxes, depth - 1, budget)
        if m2 is not None:
            return f"domain split into {where}: [{m1}] and [{m2}]"
    return None


def _prove_whole(
    g: sympy.Expr, strict: bool, domain: Domain, deadline: float, max_boxes: int, budget: list[int]
) -> str | None:
    """One choice of Min arguments and relaxations for the whole domain."""
    base = _Problem(g, dict(domain.ranges), [_plain(c) for c in domain.constraints], [])
    env = base.env()
    tried: set[sympy.Expr] = set()
    screen = _screen_for(domain, strict)
    partial: list[_Problem] = []
    for choice, notes in _choices(g, env):
        for rules in _RULE_SETS:
            if budget[0] <= 0 or _clock() > deadline:  # budget; the clock is a safety net
                return None
            budget[0] -= 1
            relaxed, rnotes = _relax(choice, rules, env, screen)
            if relaxed in tried or not screen(relaxed):
                continue
            tried.add(relaxed)
            p = _reduce(
                _Problem(relaxed, dict(base.ranges), list(base.constraints), [*notes, *rnotes])
            )
            if p.g.free_symbols:
                if p.notes:
                    partial.append(p)
                continue
            if _decide_constant(p.g, strict):
                lo = mpmath.nstr(endpoints(interval(p.g, prec=80))[0], 6)
                return _steps(p, f"what is left is a number >= {lo} (interval arithmetic)")
    # no candidate reduced to a number: the engine on the reduced problems, fewest
    # parameters first
    for p in sorted(partial, key=lambda q: len(q.ranges)):
        if len(by_name(p.g)) > ENGINE_PARAMETERS:
            continue
        left = deadline - _clock()
        if left <= 0 or budget[0] <= 0:
            return None
        budget[0] -= 1
        # the engine's deterministic work budget decides; the time left is a safety net
        v = verify_inequality(
            sympy.Gt(p.g, 0) if strict else sympy.Ge(p.g, 0),
            p.domain(),
            time_limit=left,
            max_boxes=max_boxes,
            max_work=ENGINE_WORK,
        )
        if v.proved:
            return _steps(p, f"the reduced inequality: {v.method}")
    return None


def _steps(p: _Problem, last: str) -> str:
    return "; ".join([*p.notes, last])


def verify_with_relaxation(
    relation: Any, domain: Domain, *, time_limit: float = 20.0, max_boxes: int = 3000
) -> Verdict:
    """:func:`prove_by_relaxation` (at most :data:`RELAX_SECONDS`), then, if it proved
    nothing, :func:`~dpaudit.verify.engine.verify_inequality` (which alone refutes)."""
    r = prove_by_relaxation(relation, domain, time_limit=min(time_limit, RELAX_SECONDS))
    if r is not None:
        return r
    return verify_inequality(relation, domain, time_limit=time_limit, max_boxes=max_boxes)
