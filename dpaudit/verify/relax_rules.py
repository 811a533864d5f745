"""Step 1 of proof by relaxation (:mod:`dpaudit.verify.relax`): enclosures over a domain, the
polarity of g in a sub-expression, and the choices and relaxations by the bounds in
:data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import mpmath
import sympy

from dpaudit.numeric import endpoints, interval
from dpaudit.verify.budget import BOX_PRECISION
from dpaudit.verify.domain import Domain, Range
from dpaudit.verify.enclosure import _eval

_INF = mpmath.inf

#: The bounds step 1 may use, as they appear in method texts.
RULES = {
    "min": "Min(a, b, ...) <= a",
    "max": "Max(a, b, ...) >= a",
    "log": "log(y) <= y - 1 (y > 0)",
    "expm1": "e^y - 1 <= y e^y (mean value theorem)",
}

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
