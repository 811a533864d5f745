"""Candidate counterexamples at extreme magnitudes, which the box search cannot reach.

The branch-and-bound maps an unbounded parameter ``x in [a, inf)`` to ``u in [0, 1)`` by
``x = a + u/(1-u)`` and stops splitting at a relative width of 2^-40, so its points stay below
about 2^41 (and within about 2^-40 of a finite end).  ``x <= 1e10`` over ``x > 0`` is refuted
there; ``x <= 1e300`` was left *unknown*.  Before the search gives up, it tries the points of
:func:`extreme_points`: every unbounded end at 10^(2^j) (up to the parser's magnitude limit
10^1000), every open finite end approached to within 10^-(2^j), one parameter at a time and
all together.  A point counts only when rigorous interval evaluation certifies the violation
(:meth:`~dpaudit.verify.search._Search.witness`), so these candidates can refute, never prove.

Evaluating at 10^1000 is cheap for polynomials, logarithms and roots, but ``exp(exp(x))``
there would make mpmath compute a number with 10^(10^1000) digits: :func:`cheap_at` skips a
point where a fast-growing function (``exp``, a power with a varying exponent, ``gamma``,
``factorial``, ``binomial``) would get an argument beyond :data:`GROWTH_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import mpmath
import sympy

from dpaudit.numeric import EvaluationError, endpoints, interval
from dpaudit.verify.boxes import _any_point
from dpaudit.verify.domain import Domain

__all__ = ["FAR_EXPONENTS", "GROWTH_LIMIT", "NEAR_EXPONENTS", "cheap_at", "extreme_points"]

#: Decimal exponents of the magnitudes tried at an unbounded end (10^1 .. 10^1000, the largest
#: numeric argument the expression parser admits).
FAR_EXPONENTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)
#: Decimal exponents of the distances to an open finite end (the box search reaches about
#: 10^-12 of an end itself).
NEAR_EXPONENTS = (16, 32, 64, 128, 256, 512, 1000)
#: Largest magnitude of the argument of ``exp`` (and of ``exponent * log(base)`` of a power with
#: a varying exponent, and of the argument of ``gamma``, ``factorial``, ``binomial``) evaluated
#: at an extreme point: exp(10^6) has about 434,000 digits, computed in milliseconds.
GROWTH_LIMIT = 10**6
#: Precision (bits) of the magnitude checks of :func:`cheap_at`.
_CHECK_PRECISION = 40


def _values(domain: Domain, name: str) -> list[sympy.Expr]:
    """The extreme values of one parameter: far out at each unbounded end, close to each
    open finite end (integers only where the parameter is an integer)."""
    r = domain.range(name)
    out: list[sympy.Expr] = []
    for k in FAR_EXPONENTS:
        step = sympy.Integer(10) ** k
        if r.high is None:
            out.append((r.low if r.low is not None else 0) + step)
        if r.low is None:
            out.append((r.high if r.high is not None else 0) - step)
    if not r.integer:
        for k in NEAR_EXPONENTS:
            eps = sympy.Rational(1, 10**k)
            if r.low is not None and r.low_open:
                out.append(r.low + eps)
            if r.high is not None and r.high_open:
                out.append(r.high - eps)
    return [v for v in out if domain.range(name).contains(v) is True]


def extreme_points(domain: Domain, names: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Points at extreme magnitudes: one parameter of ``names`` at an extreme value and the
    others at an ordinary point, then every parameter with an unbounded end far out at once
    (the same magnitude for all).

    Args:
        domain: the domain (side constraints are checked later, by the caller's witness).
        names: the parameters the inequality depends on.

    Yields:
        Points, exact values by name (every parameter of the domain given).
    """
    base = {n: _any_point(domain.range(n)) for n in domain.names}
    for name in names:
        for v in _values(domain, name):
            yield {**base, name: v}
    unbounded = [n for n in names if None in (domain.range(n).low, domain.range(n).high)]
    if len(unbounded) > 1:
        for k in FAR_EXPONENTS:
            point = dict(base)
            for n in unbounded:
                r = domain.range(n)
                step = sympy.Integer(10) ** k
                if r.high is None:
                    point[n] = (r.low if r.low is not None else 0) + step
                else:
                    point[n] = r.high - step
            yield point


def _magnitude(expr: sympy.Expr, subs: Mapping[Any, Any]) -> Any:
    """An upper bound on |expr| at the point (an mpmath number, inf when not evaluable)."""
    try:
        lo, hi = endpoints(interval(expr, subs, prec=_CHECK_PRECISION))
    except (EvaluationError, ValueError, ZeroDivisionError, TypeError, OverflowError):
        return mpmath.inf
    return max(abs(lo), abs(hi))


def cheap_at(expr: sympy.Expr, point: Mapping[str, Any]) -> bool:
    """Whether rigorous evaluation of ``expr`` at ``point`` stays cheap: no fast-growing
    function gets an argument beyond :data:`GROWTH_LIMIT` (checked from the innermost
    function out, so no check itself evaluates a huge argument).

    Args:
        expr: the expression.
        point: exact values by parameter name.

    Returns:
        False when a check fails or cannot be done.
    """
    subs = {s: point[s.name] for s in expr.free_symbols if s.name in point}
    for node in sympy.postorder_traversal(expr):
        if not node.free_symbols:
            continue
        if isinstance(node, (sympy.exp, sympy.gamma, sympy.factorial)):
            arguments = [node.args[0]]
        elif isinstance(node, sympy.binomial):
            arguments = list(node.args)
        elif isinstance(node, sympy.Pow) and node.args[1].free_symbols:
            base, exponent = node.args
            arguments = [exponent * sympy.log(sympy.Abs(base))]
        else:
            continue
        if any(_magnitude(a, subs) > GROWTH_LIMIT for a in arguments):
            return False
    return True
