"""The restricted expression parser (:mod:`dpaudit.expressions`): exact numbers, agreement with
directly built sympy expressions, only ``ExpressionError`` on any text, and each limit."""

from __future__ import annotations

import contextlib
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from dpaudit.expressions import (
    LIMITS,
    ExpressionError,
    as_expr,
    parse,
    parse_expression,
    parse_relation,
)

X, Y, Z = sympy.symbols("x y z")
SETTINGS = settings(max_examples=150, deadline=None)


def _leaf() -> st.SearchStrategy[tuple[str, sympy.Expr]]:
    ints = st.integers(0, 10**6).map(lambda n: (str(n), sympy.Integer(n)))
    decimals = st.tuples(st.integers(0, 10**6), st.integers(0, 6)).map(
        lambda t: (
            f"{t[0] / 10 ** t[1]:.{t[1]}f}" if t[1] else str(t[0]),
            sympy.Rational(t[0], 10 ** t[1]),
        )
    )
    names = st.sampled_from([("x", X), ("y", Y), ("z", Z), ("pi", sympy.pi)])
    return st.one_of(ints, decimals, names)


def _node(children: st.SearchStrategy) -> st.SearchStrategy:
    def binary(op):
        def build(pair):
            (ta, ea), (tb, eb) = pair
            return f"({ta}) {op} ({tb})", {"+": ea + eb, "-": ea - eb, "*": ea * eb}[op]

        return st.tuples(children, children).map(build)

    div = st.tuples(children, st.integers(1, 1000)).map(
        lambda p: (f"({p[0][0]}) / {p[1]}", p[0][1] / sympy.Integer(p[1]))
    )
    power = st.tuples(children, st.integers(0, 3)).map(
        lambda p: (f"({p[0][0]})**{p[1]}", p[0][1] ** p[1])
    )
    neg = children.map(lambda c: (f"-({c[0]})", -c[1]))
    funcs = st.tuples(st.sampled_from(["exp", "sqrt", "Abs"]), children).map(
        lambda p: (f"{p[0]}({p[1][0]})", getattr(sympy, p[0])(p[1][1]))
    )
    return st.one_of(binary("+"), binary("-"), binary("*"), div, power, neg, funcs)


EXPRESSIONS = st.recursive(_leaf(), _node, max_leaves=12)


@SETTINGS
@given(EXPRESSIONS)
def test_parser_agrees_with_directly_built_sympy(pair):
    text, expected = pair
    try:
        got = parse_expression(text)
    except ExpressionError as error:
        # a documented limit (security.md: numeric arguments up to 10^1000, 4,000-bit exact
        # numbers): exp(exp(...)) of generated subterms can pass it; only that refusal is fine
        assert "too large" in str(error), (text, error)
        reject()
    assert got == expected or sympy.expand(got - expected) == 0, (text, got, expected)


@SETTINGS
@given(st.fractions(max_denominator=10**30))
def test_fractions_round_trip_exactly(q):
    text = f"{q.numerator}/{q.denominator}"
    assert parse_expression(text, symbols=False) == sympy.Rational(q.numerator, q.denominator)


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_decimal_literals_are_read_as_the_decimal_they_spell(f):
    text = repr(f)
    expected = Fraction(text)  # the decimal spelled, not the binary float
    got = parse_expression(text, symbols=False)
    assert got == sympy.Rational(expected.numerator, expected.denominator)


def test_decimals_are_exact():
    assert parse_expression("0.1") == sympy.Rational(1, 10)
    assert parse_expression("1e-6") == sympy.Rational(1, 10**6)
    assert parse_expression("2.5E+3") == 2500
    assert parse_expression(".5") == sympy.Rational(1, 2)


GRAMMAR_CHARS = "0123456789.eE+-*/()[],=<>!'\" _xyzpiolgsqrtexpLaplce\u0435\uff58:;@{}\\"


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=60), st.text(alphabet=GRAMMAR_CHARS, max_size=60)))
def test_random_text_raises_only_expression_error(text):
    with contextlib.suppress(ExpressionError):
        parse(text, symbols=True, callables={"f": lambda *a, **k: 0})


@pytest.mark.parametrize(
    "text,expected",
    [
        ("0 < x < 1", sympy.And(sympy.Lt(0, X), sympy.Lt(X, 1))),
        ("x != 1", sympy.Ne(X, 1)),
        ("x == y", sympy.Eq(X, Y)),
        ("exp(x) - 1 <= 2*x", sympy.exp(X) - 1 <= 2 * X),
        ("-x**2", -(X**2)),
        ("2**-1", sympy.Rational(1, 2)),
        ("2**3**2", sympy.Integer(512)),
        ("log(8, 2)", sympy.log(8, 2)),
        ("Max(x, 1/2)", sympy.Max(X, sympy.Rational(1, 2))),
        ("[1, oo)".replace(")", "]"), [1, sympy.oo]),
        ("(0, 1)", (0, 1)),
        ("'gumbel'", "gumbel"),
        ("True", True),
    ],
)
def test_grammar(text, expected):
    assert parse(text, symbols=True) == expected


def test_relation_and_symbols():
    assert parse_relation("delta < epsilon") == (sympy.Symbol("delta") < sympy.Symbol("epsilon"))
    with pytest.raises(ExpressionError, match="must be a comparison"):
        parse_relation("x + 1")
    with pytest.raises(ExpressionError, match=r"unknown name 'k'.*parameters allowed here: n"):
        parse_expression("n + k", symbols=["n"])
    with pytest.raises(ExpressionError, match="must be called"):
        parse_expression("sqrt + 1", symbols=False)
    # primes only for theorem cards
    assert parse_expression("delta'", primes=True) == sympy.Symbol("delta'")
    with pytest.raises(ExpressionError):
        parse_expression("delta'")


@pytest.mark.parametrize(
    "text,pattern",
    [
        ("x" * (LIMITS["length"] + 1), "too long: 10001 characters, the limit is 10000"),
        ("(" * 101 + "1" + ")" * 101, "nested too deeply: more than 100 levels"),
        ("-" * 101 + "1", "nested too deeply"),
        ("1" * 1001, "1001 digits, the limit is 1000"),
        ("1e1001", "exponent 1001, the limit is \\+-1000"),
        ("+".join(["1"] * 2600), "too many tokens"),
        ("2**100001", "power too large: 2\\*\\*100001"),
        ("9**9**9**9", "power too large"),
        ("factorial(10001)", "factorial argument too large: 10001, the limit is 10000"),
        ("1/0", "division by zero"),
        ("0**-1", "division by zero"),
        ("_x", "starts with '_'"),
        ("\u0445", "U\\+0445"),
        ("'a\\\\b'", "not allowed in a string"),
        ("log()", "log takes 1 to 2 argument"),
        ("exp(x=1)", "no keyword arguments"),
        ("x.y", "character '.'"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_limits_and_refusals_are_named(text, pattern):
    with pytest.raises(ExpressionError, match=pattern):
        parse(text, symbols=True)


def test_within_limits_is_accepted():
    assert parse_expression("(" * 99 + "1" + ")" * 99) == 1
    assert parse_expression("2**4000") == sympy.Integer(2) ** 4000
    assert parse_expression("1" * 1000) == sympy.Integer("1" * 1000)


def test_as_expr():
    assert as_expr("1/3") == sympy.Rational(1, 3)
    assert as_expr(Fraction(1, 3)) == sympy.Rational(1, 3)
    assert as_expr(2) == 2 and as_expr(X) is X
    assert as_expr(["x", 1]) == [X, 1]
    with pytest.raises(ExpressionError, match="epsilon: syntax error"):
        as_expr("1 +", "epsilon")
    with pytest.raises(ValueError, match="epsilon must be a number, a sympy expression or text"):
        as_expr(object(), "epsilon")
