"""Rigorous evaluation at a single point: every sign, comparison and branch decided with
increasing precision, or the point left undecided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mpmath
import sympy

from dpaudit.numeric import EvaluationError, decide_relation, endpoints, interval, mp_precision
from dpaudit.verify.budget import POINT_PRECISION
from dpaudit.verify.domain import by_name
from dpaudit.verify.symbolic import _light_simplify

# ------------------------------------------------------------------------------------------
# Rigorous evaluation at a point: every branch choice and comparison by interval arithmetic
# ------------------------------------------------------------------------------------------

#: Precisions (bits) of the rigorous sign decisions at a point, tried in turn.
POINT_LADDER = (POINT_PRECISION, 4 * POINT_PRECISION, 16 * POINT_PRECISION)


class _UndecidedError(Exception):
    """A branch choice at a point that no rigorous method decided."""


def _sign_at(expr: sympy.Expr, values: Mapping[str, Any]) -> int | None:
    """The sign (-1, 0 or 1) of ``expr`` at a point (exact values by name), or None.

    Decided by interval enclosures at the precisions of :data:`POINT_LADDER`
    (:func:`dpaudit.numeric.decide_relation` on each), and 0 -- which no enclosure of a
    value that is not a dyadic rational separates -- only when exact sympy algebra reduces the
    expression to 0 after every branch was chosen rigorously (:func:`_value_at`).  Never by a
    floating-point comparison: sympy's own ``Min``, ``Max``, ``Abs`` and relationals compare
    numbers by a low-precision ``evalf``, which takes ``3 n^2 log(1 + x/n)`` at ``n = 10^9``
    for 0 and so picks the wrong branch of ``Min(3 n^2 log(1 + x/n), 10^-6)``.
    """
    subs = {n: values[n] for n in by_name(expr)}
    for prec in POINT_LADDER:
        try:
            lo, hi = endpoints(interval(expr, subs, prec=prec))
        except (EvaluationError, ValueError, ZeroDivisionError, TypeError):
            return None
        for op, sign in ((">", 1), ("<", -1), ("==", 0)):
            if decide_relation(op, lo, hi):
                return sign
    try:
        if _light_simplify(_value_at(expr, values)) == 0:
            return 0
    except (_UndecidedError, TypeError, ValueError, NotImplementedError):
        pass
    return None


def _holds_at(cond: Any, values: Mapping[str, Any]) -> bool:
    """A Piecewise condition decided at a point by :func:`_sign_at`.

    Raises:
        _UndecidedError: when it cannot be decided rigorously.
    """
    if cond in (sympy.true, True):
        return True
    if cond in (sympy.false, False):
        return False
    if isinstance(cond, (sympy.And, sympy.Or)):
        states: list[bool | None] = []
        for c in cond.args:
            try:
                states.append(_holds_at(c, values))
            except _UndecidedError:
                states.append(None)
        decisive = isinstance(cond, sympy.Or)  # the value one argument decides it with
        if decisive in states:
            return decisive
        if None in states:
            raise _UndecidedError(cond)
        return not decisive
    if isinstance(cond, sympy.Not):
        return not _holds_at(cond.args[0], values)
    if isinstance(cond, sympy.core.relational.Relational) and cond.rel_op in (
        "<",
        "<=",
        ">",
        ">=",
        "==",
        "!=",
    ):
        s = _sign_at(_value_at(cond.lhs, values) - _value_at(cond.rhs, values), {})
        if s is None:
            raise _UndecidedError(cond)
        return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[
            cond.rel_op
        ]
    raise _UndecidedError(cond)


def _value_at(expr: sympy.Expr, values: Mapping[str, Any]) -> sympy.Expr:
    """``expr`` at a point (exact values by name) as a closed sympy expression, with every
    branch -- ``Min``, ``Max``, ``Abs``, ``sign``, ``floor``, ``ceiling``, ``Heaviside``,
    ``Piecewise`` -- chosen by :func:`_sign_at`, never by sympy's automatic evaluation
    (plain ``xreplace`` would let sympy compare the numbers by a low-precision evalf).

    Raises:
        _UndecidedError: when a branch cannot be chosen rigorously.
    """
    if expr.is_Symbol:
        return values[expr.name]
    if not expr.args:
        return expr
    if isinstance(expr, sympy.Piecewise):
        for value, cond in expr.args:
            if _holds_at(cond, values):
                return _value_at(value, values)
        raise _UndecidedError(expr)
    args = [_value_at(a, values) for a in expr.args]
    if isinstance(expr, (sympy.Min, sympy.Max)):
        best = args[0]
        for a in args[1:]:
            s = _sign_at(a - best, {})
            if s is None:
                raise _UndecidedError(expr)
            if s == (-1 if isinstance(expr, sympy.Min) else 1):
                best = a
        return best
    if isinstance(expr, (sympy.Abs, sympy.sign, sympy.Heaviside)):
        s = _sign_at(args[0], {})
        if s is None or (s == 0 and isinstance(expr, sympy.Heaviside)):
            raise _UndecidedError(expr)
        if isinstance(expr, sympy.Abs):
            return args[0] if s >= 0 else -args[0]
        return sympy.Integer(s) if isinstance(expr, sympy.sign) else sympy.Integer(int(s > 0))
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        return _integer_part(expr.func, args[0])
    return expr.func(*args)


def _integer_part(func: Any, arg: sympy.Expr) -> sympy.Integer:
    """``floor(arg)`` or ``ceiling(arg)`` of a closed expression, decided rigorously.

    Raises:
        _UndecidedError: when ``arg`` is too close to an integer to decide.
    """
    rnd = mpmath.floor if func is sympy.floor else mpmath.ceil
    for prec in POINT_LADDER:
        try:
            lo, hi = endpoints(interval(arg, prec=prec))
        except (EvaluationError, ValueError, ZeroDivisionError, TypeError):
            raise _UndecidedError(arg) from None
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            continue
        with mp_precision(prec + max(int(abs(lo)).bit_length(), int(abs(hi)).bit_length()) + 8):
            a, b = rnd(lo), rnd(hi)
        if a == b:
            return sympy.Integer(int(a))
    # an integer value (such as log(8)/log(2)) is its own floor and ceiling
    if not mpmath.isfinite(hi):
        raise _UndecidedError(arg)
    k = sympy.Integer(int(mpmath.nint(hi)))
    if _sign_at(arg - k, {}) == 0:
        return k
    raise _UndecidedError(arg)
