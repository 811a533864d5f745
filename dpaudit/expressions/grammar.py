"""The grammar of the restricted expression language: a recursive-descent
(precedence-climbing) parser that builds sympy objects directly from their classes, and the
names (functions, constants, relations) a text may use."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import (
    FUNCTION_HEADS,
    ExactNumber,
    apply,
    constant,
    is_sympy_object,
    rational,
)
from dpaudit.expressions.tokens import (
    LIMITS,
    ExpressionError,
    _bits,
    _log2,
    _short,
    _Token,
)
from dpaudit.suggestions import closest_hint

__all__ = ["FUNCTIONS"]


def _arity(lo: int, hi: int | None) -> tuple[int, int | None]:
    return lo, hi


#: Functions a text may call: name -> (the sympy function's name, least and most number of
#: arguments).  Names, not the functions: sympy is imported when a text first calls one.
FUNCTIONS: dict[str, tuple[str, tuple[int, int | None]]] = {
    "sqrt": ("sqrt", _arity(1, 1)),
    "log": ("log", _arity(1, 2)),
    "exp": ("exp", _arity(1, 1)),
    "Min": ("Min", _arity(1, None)),
    "Max": ("Max", _arity(1, None)),
    "floor": ("floor", _arity(1, 1)),
    "ceiling": ("ceiling", _arity(1, 1)),
    "Abs": ("Abs", _arity(1, 1)),
    "erf": ("erf", _arity(1, 1)),
    "erfc": ("erfc", _arity(1, 1)),
    "binomial": ("binomial", _arity(2, 2)),
    "factorial": ("factorial", _arity(1, 1)),
    "gamma": ("gamma", _arity(1, 1)),
    "tanh": ("tanh", _arity(1, 1)),
}

#: Named constants: name -> the sympy constant's name (or a Python value).
_CONSTANTS: dict[str, Any] = {
    "pi": "pi",
    "E": "E",
    "oo": "oo",
    "True": True,
    "False": False,
}

#: Relations: operator -> the sympy relation class's name.
_RELATIONS = {
    "<": "StrictLessThan",
    "<=": "LessThan",
    ">": "StrictGreaterThan",
    ">=": "GreaterThan",
    "==": "Eq",
    "!=": "Ne",
}


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

    def number(self, value: Any, tok: _Token, what: str) -> Any:
        if isinstance(value, ExactNumber) or (
            is_sympy_object(value) and isinstance(value, sympy.Expr)
        ):
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
            rels.append(getattr(sympy, _RELATIONS[op.text])(_symbolic(a), _symbolic(b)))
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
        return _combine(terms, "add")

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
                factor = _power(factor, rational(-1))
            factors.append(factor)
        self.check_size(factors)
        return _combine(factors, "mul")

    def check_magnitude(self, value: sympy.Basic, what: str, tok: Any = None) -> None:
        """Refuse a numeric value whose magnitude exceeds 10**LIMITS["magnitude"] (estimated
        with 15-digit floating point, which represents any exponent), before a function or
        a power makes sympy compute with it exactly."""
        if isinstance(value, ExactNumber):
            if value.is_Rational:
                return
            value = value.to_sympy()  # a closed form: sized by sympy's evaluation
        if not is_sympy_object(value) or value.free_symbols or value.is_Rational:
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
        bits = sum(_bits(x) for x in operands if _is_rational(x))
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
        if _is_rational(base) and _is_rational(exponent):
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
        if _is_rational(exponent) and abs(exponent) > LIMITS["bits"]:
            # (2*x)**n expands to 2**n * x**n: size the numeric coefficient's power first
            coeff, _ = _symbolic(base).as_coeff_Mul()
            if _is_rational(coeff) and coeff not in (0, 1, -1):
                bits = abs(int(exponent.p)) * max(_log2(coeff.p), _log2(coeff.q))
                if bits > LIMITS["bits"]:
                    raise self.fail(
                        f"power too large: ({_short(str(base))})**{_short(str(exponent))}"
                        f" would need about {bits} bits, the limit is {LIMITS['bits']}",
                        op,
                    )
        return _power(base, exponent)

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
            raise ExpressionError("syntax error: the expression ends too early")
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
            value = _CONSTANTS[word]
            if value in ("E", "pi"):
                return constant(value)
            return getattr(sympy, value) if isinstance(value, str) else value
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
                raise self.fail(_owned(name, err), name_tok) from None
        if name in FUNCTIONS:
            func_name, (lo, hi) = FUNCTIONS[name]
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
                return _call(func_name, values)
            except (TypeError, ValueError, ArithmeticError) as err:
                raise self.fail(_owned(name, err), name_tok) from None
        known = sorted(set(FUNCTIONS) | set(self.callables))
        what = "mechanism or function" if self.callables else "function"
        hint = closest_hint(name, known)
        listed = hint or f" (known: {', '.join(known)})"  # the whole list only when none is close
        raise self.fail(f"unknown {what} {_short(name)!r}{listed}", name_tok)


def _owned(name: str, err: BaseException) -> str:
    """The message of an error raised by the callable ``name``, prefixed by the name once (an
    event constructor's own message already starts with it: ``Laplace: scale must be ...``)."""
    text = str(err)
    return text if text.startswith(f"{name}:") else f"{name}: {text}"


# ---- building values: exact numbers while every operand is one, sympy otherwise ----------


def _symbolic(value: Any) -> Any:
    """``value`` as a sympy object (exact numbers converted)."""
    return value.to_sympy() if isinstance(value, ExactNumber) else value


def _is_rational(value: Any) -> bool:
    if isinstance(value, ExactNumber):
        return value.is_Rational
    return is_sympy_object(value) and bool(value.is_Rational)


def _combine(values: list[Any], head: str) -> Any:
    """The sum or product of ``values``: an exact number when all are, else one sympy
    ``Add``/``Mul`` call (linear in the number of terms)."""
    if all(isinstance(v, ExactNumber) for v in values):
        total = values[0]
        for v in values[1:]:
            total = total + v if head == "add" else total * v
        return total
    parts = [_symbolic(v) for v in values]
    return sympy.Add(*parts) if head == "add" else sympy.Mul(*parts)


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, ExactNumber) and isinstance(exponent, ExactNumber):
        fraction = exponent.as_fraction()
        return base ** (fraction if fraction is not None else exponent)
    return sympy.Pow(_symbolic(base), _symbolic(exponent))


def _neg(value: Any) -> Any:
    if isinstance(value, ExactNumber):
        return -value
    return sympy.Mul(sympy.Integer(-1), value)


def _call(name: str, values: list[Any]) -> Any:
    """The parser's function ``name`` applied to ``values`` (exact numbers when all are)."""
    if all(isinstance(v, ExactNumber) for v in values):
        if name == "sqrt":
            return values[0] ** Fraction(1, 2)
        # log(x, b) is left to sympy, whose rule extracts powers of the base (log(8, 2) = 3)
        if name in FUNCTION_HEADS and FUNCTION_HEADS[name] in (None, len(values)):
            return apply(name, *values)
    return getattr(sympy, name)(*[_symbolic(v) for v in values])


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {_short(value)!r}"
    if isinstance(value, bool) or (
        is_sympy_object(value) and isinstance(value, sympy.logic.boolalg.BooleanAtom)
    ):
        return f"the boolean {value}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if is_sympy_object(value):
        return f"the relation {_short(str(value))}"
    return f"a {type(value).__name__}"
