"""Safe parsing of event expressions such as ``SelfComposed(Laplace(scale=10), 100)``.

The text is parsed with :mod:`ast` and interpreted node by node: only calls of registered
event classes, numbers, strings, ``True``/``False``, lists, arithmetic on numbers and (when
allowed) symbols are accepted.  Nothing is evaluated with ``eval``.  Number literals are
read exactly as the decimals they spell (``0.1`` is 1/10, ``1e-6`` is 10^-6).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import sympy

from dpaudit.events import EVENT_TYPES, Event

__all__ = ["ExpressionError", "parse_event", "parse_number"]

_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}

_FUNCTIONS = {"sqrt": sympy.sqrt, "log": sympy.log, "exp": sympy.exp}


class ExpressionError(ValueError):
    """A malformed or disallowed event expression; the message says where."""


def parse_event(text: str, symbols: Iterable[str] | bool = False) -> Event:
    """Parse an event expression.

    Args:
        text: e.g. ``"SelfComposed(Laplace(scale=10), 100)"`` or
            ``"PoissonSampled(Gaussian(1.1), 256/60000)"``.
        symbols: names that may appear as sympy symbols (positive reals), or True to allow
            any name.

    Returns:
        The event (validated by its constructor).

    Raises:
        ExpressionError: for syntax errors, unknown names, disallowed constructs, or an
            event constructor's ValueError (its message kept).
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("the event expression is empty")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise ExpressionError(f"syntax error in event expression at column {err.offset}: "
                              f"{err.msg}") from None
    allowed = symbols if isinstance(symbols, bool) else frozenset(symbols)
    value = _Interpreter(text.strip(), allowed).visit(tree.body)
    if not isinstance(value, Event):
        raise ExpressionError(f"the expression must be an event such as Laplace(1), got {text!r}")
    return value


def parse_number(text: str) -> sympy.Expr:
    """Parse a numeric expression exactly (``"1e-6"``, ``"256/60000"``, ``"log(2)"``)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise ExpressionError(f"not a number: {text!r} ({err.msg})") from None
    value = _Interpreter(text.strip(), False).visit(tree.body)
    if isinstance(value, Event) or not isinstance(value, sympy.Basic):
        raise ExpressionError(f"not a number: {text!r}")
    return value


class _Interpreter:
    def __init__(self, source: str, symbols: frozenset[str] | bool) -> None:
        self.source = source
        self.symbols = symbols

    def fail(self, node: ast.AST, message: str) -> ExpressionError:
        col = getattr(node, "col_offset", None)
        where = f" at column {col + 1}" if col is not None else ""
        return ExpressionError(f"{message}{where}")

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.visit(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.number(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = self.number(node.left), self.number(node.right)
            if isinstance(node.op, ast.Div) and right == 0:
                raise self.fail(node, "division by zero")
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.Name):
            return self.name(node)
        raise self.fail(node, f"{type(node).__name__} is not allowed in an event expression")

    def number(self, node: ast.AST) -> sympy.Expr:
        value = self.visit(node)
        if not isinstance(value, sympy.Basic):
            raise self.fail(node, "arithmetic is only allowed on numbers and symbols")
        return value

    def constant(self, node: ast.Constant) -> Any:
        value = node.value
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)):
            segment = ast.get_source_segment(self.source, node) or repr(value)
            try:
                frac = Fraction(segment.replace("_", ""))
            except ValueError:
                raise self.fail(node, f"cannot read the number {segment!r}") from None
            return sympy.Rational(frac.numerator, frac.denominator)
        raise self.fail(node, f"constant {value!r} is not allowed")

    def name(self, node: ast.Name) -> Any:
        if node.id in ("True", "False"):
            return node.id == "True"
        if node.id in ("pi", "E"):
            return sympy.pi if node.id == "pi" else sympy.E
        if self.symbols is True or (self.symbols and node.id in self.symbols):
            return sympy.Symbol(node.id, positive=True)
        if node.id in EVENT_TYPES:
            raise self.fail(node, f"{node.id} must be called with its parameters, e.g. "
                                  f"{node.id}(...)")
        raise self.fail(node, f"unknown name {node.id!r} (events: "
                              f"{', '.join(sorted(EVENT_TYPES))})")

    def call(self, node: ast.Call) -> Any:
        if not isinstance(node.func, ast.Name):
            raise self.fail(node, "only event names can be called")
        name = node.func.id
        if name in _FUNCTIONS:
            if node.keywords or len(node.args) != 1:
                raise self.fail(node, f"{name} takes one number")
            return _FUNCTIONS[name](self.number(node.args[0]))
        cls = EVENT_TYPES.get(name)
        if cls is None:
            raise self.fail(node, f"unknown event {name!r} (known: "
                                  f"{', '.join(sorted(EVENT_TYPES))})")
        args = [self.visit(a) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.fail(node, "** arguments are not allowed")
            kwargs[kw.arg] = self.visit(kw.value)
        try:
            return cls(*args, **kwargs)
        except TypeError as err:
            raise self.fail(node, f"{name}: {err}") from None
        except ValueError as err:
            raise self.fail(node, str(err)) from None
