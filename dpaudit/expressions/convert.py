"""The entry points: text to a sympy object through the restricted parser
(:func:`parse`, :func:`parse_expression`, :func:`parse_relation`), and :func:`as_expr`, the
one safe converter of any value to sympy."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, is_sympy_object
from dpaudit.expressions.grammar import _CONSTANTS, _Parser, _symbolic
from dpaudit.expressions.tokens import ExpressionError, _short, _tokenize

__all__ = ["as_expr", "names_in", "parse", "parse_expression", "parse_relation"]


def parse(
    text: str,
    *,
    symbols: Iterable[str] | Mapping[str, sympy.Symbol] | bool = False,
    callables: Mapping[str, Callable[..., Any]] | None = None,
    make_symbol: Callable[[str], sympy.Symbol] | None = None,
    primes: bool = False,
) -> Any:
    """Parse ``text`` with the restricted grammar of this module.

    Args:
        text: the expression.
        symbols: the parameter names allowed (an iterable of names, a mapping name ->
            sympy symbol, True for any name, False for none).
        callables: further callable names (e.g. event constructors), called with the parsed
            arguments; their TypeError/ValueError becomes an ExpressionError.
        make_symbol: how a name becomes a symbol (None: a plain ``sympy.Symbol``).
        primes: allow trailing primes on names (``delta'``), for theorem cards.

    Returns:
        A sympy expression or relation, or whatever a callable returned, or a string, list,
        tuple or bool.

    Raises:
        ExpressionError: for text that is not a string, too long, too deep, malformed, or
            uses a construct or name not allowed here; the message names it.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"expected text, got {type(text).__name__}")
    if not text.strip():
        raise ExpressionError("the expression is empty")
    tokens = _tokenize(text, primes)
    if not isinstance(symbols, (bool, Mapping)):
        symbols = frozenset(symbols)
    if make_symbol is None:
        make_symbol = _plain_symbol
    return _Parser(text, tokens, symbols, make_symbol, dict(callables or {})).parse()


@functools.lru_cache(maxsize=4096)
def names_in(text: str, *, primes: bool = False) -> frozenset[str]:
    """The parameter names ``text`` mentions (names that are neither called as functions nor
    constants), read by the restricted tokenizer without building anything.

    Raises:
        ExpressionError: for text the tokenizer refuses.
    """
    tokens = _tokenize(text, primes)
    return frozenset(
        tok.text
        for tok, after in itertools.pairwise(tokens)
        if tok.kind == "name"
        and tok.text not in _CONSTANTS
        and not (after.kind == "op" and after.text == "(")
    )


def _plain_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name)


def parse_expression(
    text: str,
    symbols: Iterable[str] | Mapping[str, sympy.Symbol] | bool = True,
    *,
    name: str = "expression",
    primes: bool = False,
) -> sympy.Expr:
    """Parse a numeric expression such as ``"exp(epsilon) - 1"`` (no relations, no events).

    Args:
        text: the expression.
        symbols: allowed parameter names (see :func:`parse`); True (default) allows any.
        name: what the text is, for error messages.
        primes: allow ``delta'`` style names.

    Returns:
        The sympy expression (exact: numbers are rationals).

    Raises:
        ExpressionError: if the text is not a numeric expression.
    """
    value = parse(text, symbols=symbols, primes=primes)
    if not isinstance(value, ExactNumber) and not (
        is_sympy_object(value) and isinstance(value, sympy.Expr)
    ):
        raise ExpressionError(
            f"{name} must be a numeric expression such as 'exp(epsilon) - 1', got {_short(text)!r}"
        )
    return value


def parse_relation(
    text: str,
    symbols: Iterable[str] | Mapping[str, sympy.Symbol] | bool = True,
    *,
    name: str = "relation",
) -> sympy.Basic:
    """Parse a relation such as ``"delta < epsilon"`` or ``"0 < x < 1"`` (a chain is a sympy
    ``And``).  Sympy may decide it at once (``"1 < 2"`` is ``sympy.true``).

    Raises:
        ExpressionError: if the text is not a comparison.
    """
    value = parse(text, symbols=symbols)
    if not isinstance(
        value, (sympy.core.relational.Relational, sympy.And, sympy.logic.boolalg.BooleanAtom)
    ):
        raise ExpressionError(
            f"{name} must be a comparison such as 'delta < epsilon', got {_short(text)!r}"
        )
    return value


def as_expr(value: Any, name: str = "value") -> Any:
    """The one safe converter to sympy: strings through the restricted parser (any parameter
    name allowed, plain symbols), everything else through ``sympy.sympify(value, strict=True)``
    (which never parses ``str(value)``).

    Args:
        value: a string, number, sympy object, or a container of them.
        name: the parameter's name, for error messages.

    Returns:
        The sympy object.

    Raises:
        ExpressionError: for a string the parser refuses.
        ValueError: for an object of another type (the message names it).
    """
    if is_sympy_object(value):
        return value
    if isinstance(value, ExactNumber):
        return value.to_sympy()
    if isinstance(value, str):
        try:
            return _symbolic(parse(value, symbols=True))
        except ExpressionError as err:
            raise ExpressionError(f"{name}: {err}") from None
    if isinstance(value, (list, tuple)):
        return type(value)(as_expr(v, name) for v in value)
    # sympify(strict=True) does not pass strict to a container's items: the string keys of a
    # dict would be evaluated as Python.  Only numbers and sympy objects go to sympify.
    if isinstance(value, (dict, set, frozenset, bytes, bytearray)) or (
        hasattr(value, "__array__") and getattr(value, "ndim", 0) != 0
    ):
        raise ValueError(
            f"{name} must be a number, a sympy expression or text, got "
            f"{type(value).__name__} {_short(repr(value))}"
        )
    try:
        return sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError, ValueError):
        raise ValueError(
            f"{name} must be a number, a sympy expression or text, got "
            f"{type(value).__name__} {_short(repr(value))}"
        ) from None
