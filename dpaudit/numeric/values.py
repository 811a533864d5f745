"""Exact values: the conversion of user numbers to exact sympy expressions and back from floats.

A Python ``float`` given to :func:`exact` is converted to the rational number it *is* (its
binary value), with no rounding; a decimal *string* is read by the restricted parser of
:mod:`dpaudit.expressions` as the decimal it spells.  :func:`from_float` is the one way a
computed float re-enters as an exact value.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Rational
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, is_sympy_object, rational
from dpaudit.expressions import ExpressionError, as_expr, parse_expression
from dpaudit.numeric.functions import is_plain_number


class EvaluationError(ArithmeticError):
    """Raised when an expression cannot be enclosed rigorously (unsupported or undefined)."""


def _describe(value: Any) -> str:
    return repr(value)


#: The heads :func:`_obviously_real` accepts (names: sympy is imported on first use).
_REAL_HEADS = ("Add", "Mul", "exp", "Max", "Min", "binomial", "Abs")


def _is_real(expr: sympy.Expr) -> bool | None:
    """sympy's ``is_real``, None (unknown) where sympy's numeric evaluation behind it
    overflows (erfc of an argument beyond a double's range converts an integer to a float)."""
    try:
        return expr.is_real
    except OverflowError:
        return None


def _obviously_real(expr: sympy.Expr) -> bool:
    """Whether ``expr`` is real by its structure alone: rational numbers, e and pi combined by
    + and *, integer powers, exp, Max, Min, Abs and binomial.  (sympy's ``is_real`` query
    answers the same on such trees but, on an unevaluated sum of thousands of terms, takes
    seconds.)"""
    heads = tuple(getattr(sympy, name) for name in _REAL_HEADS)
    for node in sympy.preorder_traversal(expr):
        if node.is_Rational or node is sympy.E or node is sympy.pi:
            continue
        if isinstance(node, heads):
            continue
        if node.is_Pow and node.args[1].is_Integer:
            continue
        return False
    return True


def exact(value: Any, name: str = "value") -> sympy.Expr:
    """Convert ``value`` to an exact sympy expression.

    Args:
        value: an ``int``, ``fractions.Fraction``, numeric string read by the restricted
            parser of :mod:`dpaudit.expressions` (``"0.1"``,
            ``"1/3"``, ``"1e-6"``), finite ``float`` (converted to its exact binary value),
            or a sympy expression (sympy ``Float`` atoms inside it are replaced by their exact
            binary values).
        name: the parameter's name, used in error messages.

    Returns:
        An exact sympy expression with no floating-point atoms.

    Raises:
        ValueError: for NaN, infinities, booleans, complex numbers or unparsable strings.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got the boolean {value!r}")
    if isinstance(value, ExactNumber):
        return value
    if is_sympy_object(value):
        expr = as_expr(value)
        if expr.has(sympy.nan, sympy.zoo) or expr in (sympy.oo, -sympy.oo):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
        floats = expr.atoms(sympy.Float)
        if floats:
            expr = expr.xreplace({f: sympy.Rational(f) for f in floats})
        if not _obviously_real(expr) and _is_real(expr) is False:
            raise ValueError(f"{name} must be a real number, got {value!r}")
        return expr
    if isinstance(value, Integral):
        return rational(int(value))
    if isinstance(value, (Fraction, Rational)):
        return rational(Fraction(int(value.numerator), int(value.denominator)))
    if isinstance(value, float) or type(value).__name__.startswith("float"):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
        return rational(Fraction(f))
    if isinstance(value, str):
        # the restricted parser (never Fraction(text): "1e999999999" would hang it)
        try:
            expr = parse_expression(value, symbols=False, name=name)
        except ExpressionError as err:
            raise ExpressionError(
                f"{name} must be a number such as '0.1', '1/3' or 'log(2)', got "
                f"{value[:60]!r} ({err})"
            ) from None
        return exact(expr, name)
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return exact(value.item(), name)
    raise ValueError(f"{name} must be a real number, got {_describe(value)}")


def exact_value(value: Any) -> Any:
    """``value`` as an exact value for computing with it: an
    :class:`~dpaudit.exact_numbers.ExactNumber` stays one and a plain ``int`` or ``Fraction``
    becomes one (no sympy needed); anything else becomes sympy through
    :func:`~dpaudit.expressions.as_expr` (symbols, relations, text)."""
    if isinstance(value, ExactNumber):
        return value
    return exact(value) if is_plain_number(value) else as_expr(value)


def is_exact_number(expr: sympy.Expr) -> bool:
    """True when ``expr`` is a closed expression (no free symbols) with no float atoms."""
    return not expr.free_symbols and not expr.atoms(sympy.Float)


def from_float(x: float) -> Any:
    """The exact value of a float: finite floats exactly (an
    :class:`~dpaudit.exact_numbers.ExactNumber` rational), +-inf as sympy's +-oo.

    Use this, never ``sympy.Rational(x)`` on a computed float: sympy maps
    ``Rational(float("inf"))`` to **0**, which turned an infinite upper bound into a zero
    one (an unsound epsilon of 12.4 for ``SelfComposed(Laplace(1e-400), 5)``).

    Raises:
        ValueError: for nan (no number to bound).
    """
    x = float(x)
    if math.isnan(x):
        raise ValueError("cannot bound nan: a computation lost its value")
    if math.isinf(x):
        return sympy.oo if x > 0 else -sympy.oo
    return rational(Fraction(x))
