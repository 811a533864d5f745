"""The one way text becomes an expression in dpaudit: a small restricted parser (layer 1).

No user text is ever evaluated as Python.  Every string that names a number, a parameter
expression, a relation, a domain end or an event goes through :func:`parse` here: a
hand-written tokenizer and a recursive-descent (precedence-climbing) parser that builds sympy
objects directly from their classes (``sympy.Add``, ``sympy.Mul``, ``sympy.Pow``,
``sympy.Rational``, ``sympy.Symbol``, the function classes).  Python's ``eval``, ``exec``,
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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

import sympy

__all__ = [
    "FUNCTIONS",
    "LIMITS",
    "ExpressionError",
    "as_expr",
    "check_text",
    "parse",
    "parse_expression",
    "parse_relation",
    "shorten",
]

#: The documented limits of the parser.
LIMITS: dict[str, int] = {
    "length": 10_000,  # characters of text
    "tokens": 5_000,  # tokens in one text
    "depth": 100,  # nesting of parentheses, brackets, calls, unary signs and powers
    "digits": 1_000,  # digits in one number literal (before and after the point)
    "exponent": 1_000,  # |decimal exponent| of one number literal (1e-1000 .. 1e1000)
    # bits of an exact number the parser computes (e.g. base**exponent); sympy's own work on
    # exact numbers (sqrt, floor of a huge integer) grows fast past a few thousand digits
    "bits": 4_000,
    # decimal exponent of the magnitude of a numeric argument of a function or a power
    # (floor(exp(exp(100))) or ceiling(exp(10**4)) would make sympy compute a huge integer)
    "magnitude": 1_000,
    "factorial": 10_000,  # largest numeric argument of factorial, gamma, binomial
}


class ExpressionError(ValueError):
    """Text that is not a well-formed, allowed expression; the message says what and where."""


def _arity(lo: int, hi: int | None) -> tuple[int, int | None]:
    return lo, hi


#: Functions a text may call: name -> (sympy function, least and most number of arguments).
FUNCTIONS: dict[str, tuple[Callable[..., Any], tuple[int, int | None]]] = {
    "sqrt": (sympy.sqrt, _arity(1, 1)),
    "log": (sympy.log, _arity(1, 2)),
    "exp": (sympy.exp, _arity(1, 1)),
    "Min": (sympy.Min, _arity(1, None)),
    "Max": (sympy.Max, _arity(1, None)),
    "floor": (sympy.floor, _arity(1, 1)),
    "ceiling": (sympy.ceiling, _arity(1, 1)),
    "Abs": (sympy.Abs, _arity(1, 1)),
    "erf": (sympy.erf, _arity(1, 1)),
    "erfc": (sympy.erfc, _arity(1, 1)),
    "binomial": (sympy.binomial, _arity(2, 2)),
    "factorial": (sympy.factorial, _arity(1, 1)),
    "gamma": (sympy.gamma, _arity(1, 1)),
    "tanh": (sympy.tanh, _arity(1, 1)),
}

_CONSTANTS: dict[str, Any] = {
    "pi": sympy.pi,
    "E": sympy.E,
    "oo": sympy.oo,
    "True": True,
    "False": False,
}

_RELATIONS = {
    "<": sympy.StrictLessThan,
    "<=": sympy.LessThan,
    ">": sympy.StrictGreaterThan,
    ">=": sympy.GreaterThan,
    "==": sympy.Eq,
    "!=": sympy.Ne,
}
_TWO_CHAR = ("**", "<=", ">=", "==", "!=")
_ONE_CHAR = "+-*/()[],=<>"
_SPACE = " \t\r\n"
_STRING_CHARS = frozenset(chr(c) for c in range(32, 127)) - {"\\"}


@dataclasses.dataclass(frozen=True)
class _Token:
    kind: str  # "num", "name", "str", "op", "end"
    text: str
    pos: int  # 0-based offset in the text
    value: Any = None


def shorten(text: Any, limit: int = 60) -> Any:
    """``text`` cut to ``limit`` characters (with "...") for an error message; other values
    unchanged."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit] + "..."


_short = shorten


def _log2(n: Any) -> int:
    """About log2(|n|) for an integer (0 for 0 and +-1)."""
    return max(int(abs(int(n))).bit_length() - 1, 0)


def _bits(q: sympy.Rational) -> int:
    return int(q.p).bit_length() + int(q.q).bit_length()


def check_text(text: Any, name: str = "expression") -> str:
    """Check that ``text`` is a string within the length limit, before any other work on it
    (regular expressions included).

    Raises:
        ExpressionError: naming ``name``, the limit and the length received.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"{name} must be text, got {type(text).__name__}")
    if len(text) > LIMITS["length"]:
        raise ExpressionError(
            f"{name} too long: {len(text)} characters, the limit is "
            f"{LIMITS['length']} (text starts {_short(text)!r})"
        )
    return text


def _tokenize(text: str, primes: bool) -> list[_Token]:
    n = len(text)
    check_text(text)
    tokens: list[_Token] = []
    i = 0
    while i < n:
        c = text[i]
        if len(tokens) > LIMITS["tokens"]:
            raise ExpressionError(
                f"expression has too many tokens: more than "
                f"{LIMITS['tokens']}, the limit (text starts "
                f"{_short(text)!r})"
            )
        if c in _SPACE:
            i += 1
            continue
        if not c.isascii():
            raise ExpressionError(
                f"non-ASCII character {c!r} (U+{ord(c):04X}) at column "
                f"{i + 1}: only ASCII letters, digits and operators are "
                f"allowed"
            )
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            i = _number(text, i, tokens)
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if primes:
                while j < n and text[j] == "'":
                    j += 1
            word = text[i:j]
            if word.startswith("_"):
                raise ExpressionError(
                    f"name {_short(word)!r} at column {i + 1} starts with "
                    f"'_': such names are not allowed"
                )
            if j < n and not text[j].isascii() and text[j].isalnum():
                raise ExpressionError(
                    f"non-ASCII character {text[j]!r} (U+{ord(text[j]):04X})"
                    f" at column {j + 1}: names must be ASCII"
                )
            tokens.append(_Token("name", word, i))
            i = j
            continue
        if c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] not in _STRING_CHARS:
                    raise ExpressionError(
                        f"character {text[j]!r} at column {j + 1} is not allowed in a string "
                        f"(plain printable ASCII only, no escapes)"
                    )
                j += 1
            if j >= n:
                raise ExpressionError(
                    f"syntax error: unterminated string starting at column {i + 1}"
                )
            tokens.append(_Token("str", text[i : j + 1], i, text[i + 1 : j]))
            i = j + 1
            continue
        if text[i : i + 2] in _TWO_CHAR:
            tokens.append(_Token("op", text[i : i + 2], i))
            i += 2
            continue
        if c in _ONE_CHAR:
            tokens.append(_Token("op", c, i))
            i += 1
            continue
        raise ExpressionError(
            f"syntax error: character {c!r} at column {i + 1} is not allowed in an expression"
        )
    if len(tokens) > LIMITS["tokens"]:
        raise ExpressionError(
            f"expression has too many tokens: {len(tokens)}, the limit is {LIMITS['tokens']}"
        )
    tokens.append(_Token("end", "", n))
    return tokens


def _digits(text: str, i: int) -> int:
    n = len(text)
    while i < n and "0" <= text[i] <= "9":
        i += 1
    return i


def _number(text: str, i: int, tokens: list[_Token]) -> int:
    """Read one number literal at ``i``; append its token; return the next offset."""
    start = i
    j = _digits(text, i)
    int_part = text[i:j]
    frac_part = ""
    if j < len(text) and text[j] == ".":
        k = _digits(text, j + 1)
        frac_part = text[j + 1 : k]
        j = k
    ndigits = len(int_part) + len(frac_part)
    if ndigits > LIMITS["digits"]:
        raise ExpressionError(
            f"number at column {start + 1} has {ndigits} digits, the limit is {LIMITS['digits']}"
        )
    exponent = 0
    if j < len(text) and text[j] in "eE":
        k = j + 1
        if k < len(text) and text[k] in "+-":
            k += 1
        m = _digits(text, k)
        if m == k:
            raise ExpressionError(
                f"syntax error: malformed number {text[start : m + 1]!r} at column "
                f"{start + 1}: the exponent has no digits"
            )
        if m - k > 6 or int(text[k:m]) > LIMITS["exponent"]:
            raise ExpressionError(
                f"number at column {start + 1} has the exponent "
                f"{_short(text[j + 1 : m])}, the limit is "
                f"+-{LIMITS['exponent']}"
            )
        exponent = int(text[j + 1 : m])
        j = m
    if j < len(text) and (text[j].isalnum() or text[j] in "._"):
        raise ExpressionError(
            f"syntax error: malformed number {_short(text[start : j + 1])!r} at column {start + 1}"
        )
    mantissa = Fraction(int(int_part + frac_part or "0"), 10 ** len(frac_part))
    value = mantissa * Fraction(10) ** exponent
    tokens.append(
        _Token("num", text[start:j], start, sympy.Rational(value.numerator, value.denominator))
    )
    return j


class _Parser:
    def __init__(
        self,
        text: str,
        tokens: list[_Token],
        symbols: Any,
        make_symbol: Callable[[str], sympy.Symbol],
        callables: Mapping[str, Callable[..., Any]],
    ) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.symbols = symbols
        self.make_symbol = make_symbol
        self.callables = callables

    # ---- helpers -------------------------------------------------------------------------

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def fail(self, message: str, tok: _Token | None = None) -> ExpressionError:
        tok = tok or self.tok
        where = "at the end" if tok.kind == "end" else f"at column {tok.pos + 1}"
        return ExpressionError(f"{message} {where}")

    def accept(self, op: str) -> bool:
        if self.tok.kind == "op" and self.tok.text == op:
            self.i += 1
            return True
        return False

    def expect(self, op: str) -> None:
        if not self.accept(op):
            found = "the end" if self.tok.kind == "end" else repr(self.tok.text)
            raise self.fail(f"syntax error: expected {op!r}, found {found}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > LIMITS["depth"]:
            raise self.fail(
                f"expression nested too deeply: more than {LIMITS['depth']} levels, the limit"
            )

    def number(self, value: Any, tok: _Token, what: str) -> sympy.Basic:
        if isinstance(value, sympy.Expr):
            return value
        raise self.fail(f"{what} needs numbers or parameters, got {_describe(value)}", tok)

    # ---- grammar -------------------------------------------------------------------------

    def parse(self) -> Any:
        value = self.comparison()
        if self.tok.kind != "end":
            raise self.fail(f"syntax error: unexpected {self.tok.text!r}")
        return value

    def comparison(self) -> Any:
        self.enter()
        first_tok = self.tok
        left = self.sum()
        rels = []
        while self.tok.kind == "op" and self.tok.text in _RELATIONS:
            op = self.tok
            self.i += 1
            right_tok = self.tok
            right = self.sum()
            a = self.number(left, first_tok, f"comparison {op.text!r}")
            b = self.number(right, right_tok, f"comparison {op.text!r}")
            rels.append(_RELATIONS[op.text](a, b))
            left, first_tok = right, right_tok
        self.depth -= 1
        if not rels:
            return left
        return rels[0] if len(rels) == 1 else sympy.And(*rels)

    def sum(self) -> Any:
        first = self.tok
        value = self.product()
        if not (self.tok.kind == "op" and self.tok.text in "+-"):
            return value
        terms = [self.number(value, first, "'+' and '-'")]
        while self.tok.kind == "op" and self.tok.text in ("+", "-"):
            op = self.tok.text
            self.i += 1
            tok = self.tok
            term = self.number(self.product(), tok, f"{op!r}")
            terms.append(term if op == "+" else _neg(term))
        self.check_size(terms)
        return sympy.Add(*terms)

    def product(self) -> Any:
        first = self.tok
        value = self.unary()
        if not (self.tok.kind == "op" and self.tok.text in "*/"):
            return value
        factors = [self.number(value, first, "'*' and '/'")]
        while self.tok.kind == "op" and self.tok.text in ("*", "/"):
            op = self.tok
            self.i += 1
            tok = self.tok
            factor = self.number(self.unary(), tok, f"{op.text!r}")
            if op.text == "/":
                if factor.is_zero:
                    raise self.fail("division by zero", op)
                factor = sympy.Pow(factor, -1)
            factors.append(factor)
        self.check_size(factors)
        return sympy.Mul(*factors)

    def check_magnitude(self, value: sympy.Basic, what: str, tok: Any = None) -> None:
        """Refuse a numeric value whose magnitude exceeds 10**LIMITS["magnitude"] (estimated
        with 15-digit floating point, which represents any exponent), before a function or
        a power makes sympy compute with it exactly."""
        if not isinstance(value, sympy.Expr) or value.free_symbols or value.is_Rational:
            return
        try:
            approx = sympy.Abs(value).evalf(15)
        except (TypeError, ValueError, ArithmeticError, RecursionError):
            raise self.fail(f"{what}: cannot size the argument {_short(str(value))}", tok) from None
        if approx.is_zero:
            return
        limit = sympy.Float(10) ** LIMITS["magnitude"]
        if approx.is_finite is False or (approx.is_number and approx > limit):
            raise self.fail(
                f"{what}: argument too large: {_short(str(value))} exceeds "
                f"10**{LIMITS['magnitude']}",
                tok,
            )

    def check_size(self, operands: list[sympy.Basic]) -> None:
        bits = sum(_bits(x) for x in operands if isinstance(x, sympy.Rational))
        if bits > LIMITS["bits"]:
            raise self.fail(
                f"exact number too large: about {bits} bits, the limit is {LIMITS['bits']}"
            )

    def unary(self) -> Any:
        if self.tok.kind == "op" and self.tok.text in ("-", "+"):
            op = self.tok
            self.i += 1
            self.enter()
            tok = self.tok
            value = self.number(self.unary(), tok, f"unary {op.text!r}")
            self.depth -= 1
            return _neg(value) if op.text == "-" else value
        return self.power()

    def power(self) -> Any:
        first = self.tok
        base = self.primary()
        if not (self.tok.kind == "op" and self.tok.text == "**"):
            return base
        op = self.tok
        self.i += 1
        self.enter()
        tok = self.tok
        exponent = self.number(self.unary(), tok, "'**'")
        self.depth -= 1
        base = self.number(base, first, "'**'")
        if isinstance(base, sympy.Rational) and isinstance(exponent, sympy.Rational):
            bits = abs(int(exponent.p)) * max(_log2(base.p), _log2(base.q))
            if bits > LIMITS["bits"] and base not in (0, 1, -1):
                raise self.fail(
                    f"power too large: {_short(str(base))}**{_short(str(exponent))}"
                    f" would need about {bits} bits, the limit is "
                    f"{LIMITS['bits']}",
                    op,
                )
            if base == 0 and exponent < 0:
                raise self.fail("division by zero (0 to a negative power)", op)
        self.check_magnitude(base, "'**'", op)
        self.check_magnitude(exponent, "'**'", op)
        if isinstance(exponent, sympy.Rational) and abs(exponent) > LIMITS["bits"]:
            # (2*x)**n expands to 2**n * x**n: size the numeric coefficient's power first
            coeff, _ = base.as_coeff_Mul() if isinstance(base, sympy.Expr) else (1, base)
            if isinstance(coeff, sympy.Rational) and coeff not in (0, 1, -1):
                bits = abs(int(exponent.p)) * max(_log2(coeff.p), _log2(coeff.q))
                if bits > LIMITS["bits"]:
                    raise self.fail(
                        f"power too large: ({_short(str(base))})**{_short(str(exponent))}"
                        f" would need about {bits} bits, the limit is {LIMITS['bits']}",
                        op,
                    )
        return sympy.Pow(base, exponent)

    def primary(self) -> Any:
        tok = self.tok
        if tok.kind == "num":
            self.i += 1
            return tok.value
        if tok.kind == "str":
            self.i += 1
            return tok.value
        if tok.kind == "name":
            self.i += 1
            if self.accept("("):
                return self.call(tok)
            return self.name(tok)
        if self.accept("("):
            value = self.comparison()
            if self.accept(","):
                items = [value]
                if not (self.tok.kind == "op" and self.tok.text == ")"):
                    items.extend(self.items(")"))
                value = tuple(items)
            self.expect(")")
            return value
        if self.accept("["):
            items = [] if self.accept("]") else self.items("]")
            if items:
                self.expect("]")
            return items
        if tok.kind == "end":
            raise self.fail("syntax error: the expression ends too early")
        raise self.fail(f"syntax error: unexpected {tok.text!r}")

    def items(self, close: str) -> list[Any]:
        out = [self.comparison()]
        while self.accept(","):
            if self.tok.kind == "op" and self.tok.text == close:
                break
            out.append(self.comparison())
        return out

    def name(self, tok: _Token) -> Any:
        word = tok.text
        if word in _CONSTANTS:
            return _CONSTANTS[word]
        if self.symbols is True or (self.symbols and word in self.symbols):
            if isinstance(self.symbols, Mapping):
                return self.symbols[word]
            return self.make_symbol(word)
        if word in FUNCTIONS or word in self.callables:
            raise self.fail(f"{word} must be called with its arguments, e.g. {word}(...)", tok)
        allowed = (
            ""
            if not self.symbols
            else f" (parameters allowed here: {', '.join(sorted(self.symbols))})"
        )
        raise self.fail(f"unknown name {_short(word)!r}{allowed}", tok)

    def call(self, name_tok: _Token) -> Any:
        name = name_tok.text
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        if not self.accept(")"):
            while True:
                tok = self.tok
                if (
                    tok.kind == "name"
                    and self.tokens[self.i + 1].kind == "op"
                    and self.tokens[self.i + 1].text == "="
                ):
                    self.i += 2
                    if tok.text in kwargs:
                        raise self.fail(f"{name}: argument {tok.text!r} given twice", tok)
                    kwargs[tok.text] = self.comparison()
                else:
                    if kwargs:
                        raise self.fail(
                            f"{name}: a positional argument follows a keyword argument", tok
                        )
                    args.append((self.comparison(), tok))
                if self.accept(")"):
                    break
                self.expect(",")
                if self.accept(")"):
                    break
        if name in self.callables:
            try:
                return self.callables[name](*(a for a, _ in args), **kwargs)
            except ExpressionError:
                raise
            except (TypeError, ValueError, ArithmeticError) as err:
                raise self.fail(f"{name}: {err}", name_tok) from None
        if name in FUNCTIONS:
            func, (lo, hi) = FUNCTIONS[name]
            if kwargs:
                raise self.fail(f"{name} takes no keyword arguments", name_tok)
            if len(args) < lo or (hi is not None and len(args) > hi):
                want = f"{lo}" if lo == hi else (f"{lo} or more" if hi is None else f"{lo} to {hi}")
                raise self.fail(f"{name} takes {want} argument(s), got {len(args)}", name_tok)
            values = [self.number(a, t, name) for a, t in args]
            for v in values:
                self.check_magnitude(v, name, name_tok)
            if name in ("factorial", "gamma", "binomial"):
                for v in values:
                    if v.is_number and v.is_finite and abs(v) > LIMITS["factorial"]:
                        raise self.fail(
                            f"{name} argument too large: {_short(str(v))}, the "
                            f"limit is {LIMITS['factorial']}",
                            name_tok,
                        )
            try:
                return func(*values)
            except (TypeError, ValueError, ArithmeticError) as err:
                raise self.fail(f"{name}: {err}", name_tok) from None
        known = sorted(set(FUNCTIONS) | set(self.callables))
        raise self.fail(f"unknown function {_short(name)!r} (known: {', '.join(known)})", name_tok)


def _neg(value: sympy.Basic) -> sympy.Basic:
    return sympy.Mul(sympy.Integer(-1), value)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {_short(value)!r}"
    if isinstance(value, (bool, sympy.logic.boolalg.BooleanAtom)):
        return f"the boolean {value}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, sympy.Basic):
        return f"the relation {_short(str(value))}"
    return f"a {type(value).__name__}"


def parse(
    text: str,
    *,
    symbols: Iterable[str] | Mapping[str, sympy.Symbol] | bool = False,
    callables: Mapping[str, Callable[..., Any]] | None = None,
    make_symbol: Callable[[str], sympy.Symbol] = sympy.Symbol,
    primes: bool = False,
) -> Any:
    """Parse ``text`` with the restricted grammar of this module.

    Args:
        text: the expression.
        symbols: the parameter names allowed (an iterable of names, a mapping name ->
            sympy symbol, True for any name, False for none).
        callables: further callable names (e.g. event constructors), called with the parsed
            arguments; their TypeError/ValueError becomes an ExpressionError.
        make_symbol: how a name becomes a symbol (default: a plain ``sympy.Symbol``).
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
    return _Parser(text, tokens, symbols, make_symbol, dict(callables or {})).parse()


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
    if not isinstance(value, sympy.Expr):
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
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, str):
        try:
            return parse(value, symbols=True)
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
