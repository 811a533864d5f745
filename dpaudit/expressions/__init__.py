"""The one way text becomes an expression in dpaudit: a small restricted parser (layer 1).

No user text is ever evaluated as Python.  Every string that names a number, a parameter
expression, a relation, a domain end or an event goes through :func:`parse` here: a
hand-written tokenizer and a recursive-descent (precedence-climbing) parser that builds values
directly: exact numbers (:class:`dpaudit.exact_numbers.ExactNumber`) while every operand is a
number, so that plain numbers need no sympy, and sympy objects from their classes
(``sympy.Add``, ``sympy.Mul``, ``sympy.Pow``, ``sympy.Symbol``, the function classes) once a
symbol is involved.  Python's ``eval``, ``exec``,
``compile``, ``ast`` and ``sympy.sympify``/``parse_expr`` of a string are never used.

Grammar (EBNF; whitespace between tokens is ignored)::

    start      = comparison ;
    comparison = sum { ("<" | "<=" | ">" | ">=" | "==" | "!=") sum } ;   (* chains: And *)
    sum        = product { ("+" | "-") product } ;
    product    = unary { ("*" | "/") unary } ;
    unary      = ("-" | "+") unary | power ;
    power      = primary [ "**" unary ] ;                                 (* right-assoc *)
    primary    = number | string | name | call | "(" comparison [ "," items ] ")"
               | "[" [ items ] "]" ;
    call       = name "(" [ argument { "," argument } ] ")" ;
    argument   = [ name "=" ] comparison ;
    items      = comparison { "," comparison } [ "," ] ;
    number     = digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ]
               | "." digits [ ("e" | "E") [ "+" | "-" ] digits ] ;
    name       = letter { letter | digit | "_" } ;                        (* ASCII only *)
    string     = "'" { plain } "'" | '"' { plain } '"' ;   (* printable ASCII, no escapes *)

Names: ``True``, ``False``, ``pi``, ``E``, ``oo``; the functions in :data:`FUNCTIONS`; the
callables the caller passes (the event constructors, for :func:`dpaudit.parse.parse_event`);
and the parameter names the caller allows.  A name starting with ``_`` and any non-ASCII
character are refused.  Numbers are read exactly: ``0.1`` is 1/10, ``1e-6`` is 10^-6.

Limits (each violation is an :class:`ExpressionError` naming the limit and the value): see
:data:`LIMITS`.  Work is linear in the length of the text: one pass to tokenize, one to parse,
sums and products built with one ``sympy.Add``/``sympy.Mul`` call each, exact numbers kept
below a bit budget before sympy computes them.

Modules by role: :mod:`~dpaudit.expressions.tokens` (the tokenizer and :data:`LIMITS`),
:mod:`~dpaudit.expressions.grammar` (the parser and the allowed names),
:mod:`~dpaudit.expressions.convert` (the entry points and :func:`as_expr`).
"""

from __future__ import annotations

from dpaudit.expressions.convert import (
    as_expr,
    names_in,
    parse,
    parse_expression,
    parse_relation,
)
from dpaudit.expressions.grammar import FUNCTIONS
from dpaudit.expressions.tokens import (
    LIMITS,
    ExpressionError,
    ExpressionSizeError,
    check_text,
    shorten,
)

__all__ = [
    "FUNCTIONS",
    "LIMITS",
    "ExpressionError",
    "ExpressionSizeError",
    "as_expr",
    "check_text",
    "names_in",
    "parse",
    "parse_expression",
    "parse_relation",
    "shorten",
]
