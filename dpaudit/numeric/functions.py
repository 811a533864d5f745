"""The functions the theorems compute with, on exact values of either kind.

A theorem's formula is written once, for instance ``log(a / (2 * a - 1) * exp((a - 1) / b))``
with ``exp`` and ``log`` from here.  Given plain numbers (``int``, ``Fraction``,
:class:`~dpaudit.exact_numbers.ExactNumber`) it builds an exact number without sympy; given a
sympy expression (a symbol, or a value the caller made with sympy) it is sympy's function, so
the same formula serves a concrete run and a symbolic theorem.
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Integral
from numbers import Rational as _RationalABC
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, apply, constant, rational

__all__ = [
    "Abs",
    "Add",
    "E",
    "Max",
    "Min",
    "Rational",
    "binomial",
    "ceiling",
    "erf",
    "erfc",
    "exp",
    "factorial",
    "floor",
    "gamma",
    "is_plain_number",
    "log",
    "pi",
    "sqrt",
    "tanh",
]


def is_plain_number(value: Any) -> bool:
    """Whether ``value`` is an exact number that needs no sympy: an ``int``, a rational such
    as ``Fraction``, or an :class:`ExactNumber` (not a bool, not a float, not sympy's)."""
    if isinstance(value, ExactNumber):
        return True
    if isinstance(value, bool) or not isinstance(value, (Integral, _RationalABC)):
        return False
    return type(value).__module__.split(".")[0] != "sympy"


def _call(name: str, *args: Any) -> Any:
    if all(is_plain_number(a) for a in args):
        return apply(name, *args)
    return getattr(sympy, name)(*args)


def exp(x: Any) -> Any:
    """e**x."""
    return _call("exp", x)


def log(x: Any) -> Any:
    """The natural logarithm."""
    return _call("log", x)


def erf(x: Any) -> Any:
    return _call("erf", x)


def erfc(x: Any) -> Any:
    return _call("erfc", x)


def tanh(x: Any) -> Any:
    return _call("tanh", x)


def gamma(x: Any) -> Any:
    return _call("gamma", x)


def factorial(x: Any) -> Any:
    return _call("factorial", x)


def floor(x: Any) -> Any:
    return _call("floor", x)


def ceiling(x: Any) -> Any:
    return _call("ceiling", x)


def Abs(x: Any) -> Any:
    return _call("Abs", x)


def binomial(n: Any, k: Any) -> Any:
    return _call("binomial", n, k)


def Min(*args: Any) -> Any:
    return _call("Min", *args)


def Max(*args: Any) -> Any:
    return _call("Max", *args)


def Add(*terms: Any) -> Any:
    """The sum of ``terms`` (0 for none): an exact number when every term is a plain number,
    else ``sympy.Add`` (one flattening pass, not a chain of binary additions)."""
    if all(is_plain_number(t) for t in terms):
        total: Any = rational(0)
        for t in terms:
            total = total + t
        return total
    return sympy.Add(*terms)


def sqrt(x: Any) -> Any:
    """The non-negative square root."""
    if is_plain_number(x):
        value = x if isinstance(x, ExactNumber) else rational(Fraction(x))
        return value ** Fraction(1, 2)
    return sympy.sqrt(x)


def Rational(p: int, q: int = 1) -> ExactNumber:
    """The exact rational p/q (an :class:`ExactNumber`)."""
    return rational(Fraction(p, q))


#: Euler's number and pi as exact numbers.
E = constant("E")
pi = constant("pi")
