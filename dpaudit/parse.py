"""Safe parsing of event expressions such as ``SelfComposed(Laplace(scale=10), 100)``.

A thin layer over :mod:`dpaudit.expressions`, the restricted parser that is the only way text
becomes an expression in dpaudit: calls of registered event classes, numbers, strings,
``True``/``False``, lists, arithmetic on numbers and (when allowed) symbols are accepted.
Nothing is evaluated as Python.  Number literals are read exactly as the decimals they spell
(``0.1`` is 1/10, ``1e-6`` is 10^-6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.events import EVENT_TYPES, Event
from dpaudit.expressions import (
    ExpressionError,
    ExpressionSizeError,
    parse,
    parse_expression,
    parse_relation,
)

__all__ = ["ExpressionError", "parse_event", "parse_expression", "parse_number", "parse_relation"]


#: Where an event tree too large for one expression goes.
PLAN_HINT = (
    "a larger event tree belongs in a plan file (JSON or YAML, up to 1 MB and 10,000 event "
    "nodes: `dpaudit account --plan plan.json`; docs/plans.md)"
)


def _positive(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, positive=True)


def parse_event(
    text: str, symbols: Iterable[str] | Mapping[str, sympy.Symbol] | bool = False
) -> Event:
    """Parse an event expression.

    Args:
        text: e.g. ``"SelfComposed(Laplace(scale=10), 100)"`` or
            ``"PoissonSampled(Gaussian(1.1), 256/60000)"``.
        symbols: names that may appear as sympy symbols (positive reals), or True to allow
            any name.

    Returns:
        The event (validated by its constructor).

    Raises:
        ExpressionError: for syntax errors, unknown names, disallowed constructs, a limit of
            :data:`dpaudit.expressions.LIMITS` (over the length or token limit, the message
            points to plan files), or an event constructor's ValueError (its message kept).
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("the event expression is empty")
    try:
        value: Any = parse(text, symbols=symbols, callables=EVENT_TYPES, make_symbol=_positive)
    except ExpressionSizeError as err:
        raise ExpressionSizeError(f"{err}; {PLAN_HINT}") from None
    if not isinstance(value, Event):
        raise ExpressionError(
            f"the expression must be an event such as Laplace(1), got {text[:60]!r}"
        )
    return value


def parse_number(text: str) -> sympy.Expr:
    """Parse a numeric expression exactly (``"1e-6"``, ``"256/60000"``, ``"log(2)"``).

    Raises:
        ExpressionError: if the text is not a number without parameters.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"not a number: {text!r}")
    try:
        value = parse_expression(text, symbols=False, name="number")
    except ExpressionError as err:
        raise ExpressionError(f"not a number: {text[:60]!r} ({err})") from None
    return value
