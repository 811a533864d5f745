"""Exact numbers without sympy (``dpaudit.exact_numbers``): the same values as sympy's,
enclosed rigorously, compared soundly, and built without importing sympy."""

from __future__ import annotations

import pickle
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.exact_numbers import ExactNumber, apply, constant, rational
from dpaudit.numeric import endpoints, exact, float_down, float_up, interval

ROOT = Path(__file__).resolve().parents[2]

fractions = st.fractions(min_value=-50, max_value=50, max_denominator=1000)
positive = st.fractions(min_value=Fraction(1, 1000), max_value=50, max_denominator=1000)


@st.composite
def trees(draw: st.DrawFn, depth: int = 3) -> tuple[ExactNumber, object]:
    """A random exact number and the same value built with sympy's operations."""
    if depth == 0 or draw(st.booleans()):
        kind = draw(st.sampled_from(["rational", "rational", "E", "pi"]))
        if kind == "rational":
            q = draw(fractions)
            return rational(q), sympy.Rational(q.numerator, q.denominator)
        return constant(kind), getattr(sympy, kind)
    op = draw(st.sampled_from(["add", "mul", "sub", "exp", "log", "sqrt", "erfc", "Max", "pow"]))
    a, sa = draw(trees(depth - 1))
    if op in ("add", "mul", "sub", "Max"):
        b, sb = draw(trees(depth - 1))
        if op == "add":
            return a + b, sa + sb
        if op == "mul":
            return a * b, sa * sb
        if op == "sub":
            return a - b, sa - sb
        return apply("Max", a, b), sympy.Max(sa, sb)
    if op in ("log", "sqrt"):  # on a positive argument: exp of the tree
        a, sa = apply("exp", a), sympy.exp(sa)
        if op == "log":
            return apply("log", a), sympy.log(sa)
        return a ** Fraction(1, 2), sympy.sqrt(sa)
    if op == "pow":
        n = draw(st.integers(-3, 3))
        if n < 0:  # a positive base
            a, sa = apply("exp", a), sympy.exp(sa)
        return a**n, sa**n
    if op == "exp":
        return apply("exp", a), sympy.exp(sa)
    return apply("erfc", a), sympy.erfc(sa)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(trees())
def test_enclosure_contains_sympys_value_and_the_sympy_form_is_equal(pair):
    """The interval of the exact number contains sympy's 60-digit value of the same
    expression, and ``to_sympy`` is that expression (sympy evaluates both the same way)."""
    x, sx = pair
    if x.size() > 1 and sx.has(sympy.zoo, sympy.nan):
        return
    lo, hi = endpoints(interval(x))
    with mpmath.workdps(60):
        v = mpmath.mpf(sympy.N(sx, 60))
        assert lo <= v + abs(v) * mpmath.mpf(10) ** -50 + mpmath.mpf(10) ** -300
        assert v - abs(v) * mpmath.mpf(10) ** -50 - mpmath.mpf(10) ** -300 <= hi
    assert sympy.simplify(x.to_sympy() - sx) == 0
    assert float_down(x) <= float_up(x)


@given(fractions, fractions, st.integers(-4, 4))
def test_rational_arithmetic_is_fraction_arithmetic(a, b, n):
    x, y = rational(a), rational(b)
    assert (x + y).as_fraction() == a + b and (x - y).as_fraction() == a - b
    assert (x * y).as_fraction() == a * b
    if b != 0:
        assert (x / y).as_fraction() == a / b
    if a != 0 or n >= 0:
        assert (x**n).as_fraction() == a**n
    assert (x < y) == (a < b) and (x <= y) == (a <= b) and (x == y) == (a == b)
    assert str(x) == str(sympy.Rational(a.numerator, a.denominator))
    assert x == sympy.Rational(a.numerator, a.denominator)
    assert sympy.Rational(a.numerator, a.denominator) == x
    assert float(x) == float(a)


def test_comparisons_are_decided_by_intervals_and_refused_when_undecidable():
    root2 = rational(2) ** Fraction(1, 2)
    assert root2 > Fraction(141421, 100000) and root2 < Fraction(141422, 100000)
    assert apply("exp", rational(1)) > constant("E") - Fraction(1, 10**30)
    with pytest.raises(TypeError, match="cannot decide"):
        _ = root2 * root2 < 2  # equal to 2: no interval separates them
    assert (root2 * root2).is_positive


def test_folding_keeps_exact_values_exact():
    assert rational(9) ** Fraction(1, 2) == 3
    assert rational(Fraction(4, 25)) ** Fraction(-1, 2) == Fraction(5, 2)
    assert apply("exp", 0) == 1 and apply("log", 1) == 0 and apply("log", constant("E")) == 1
    assert apply("Min", 3, Fraction(1, 2), 7) == Fraction(1, 2)
    assert apply("binomial", 10, 3) == 120 and apply("factorial", 5) == 120
    assert apply("floor", Fraction(7, 2)) == 3 and apply("ceiling", Fraction(7, 2)) == 4
    assert (rational(2) ** Fraction(1, 2)) ** 2 == 2
    x, y = apply("exp", 2), apply("log", 3)
    assert x - x == 0 and not (x - x) and (2 * x + y) - (x + y) - x == 0  # like terms collected
    assert (x + x).to_sympy() == 2 * sympy.exp(2)


def test_floats_never_enter_and_errors_name_the_problem():
    with pytest.raises(TypeError):
        _ = rational(1) + 0.5
    with pytest.raises(ValueError, match="unknown function"):
        apply("sin", 1)
    with pytest.raises(ValueError, match="argument"):
        apply("exp", 1, 2)
    with pytest.raises(ZeroDivisionError):
        _ = rational(1) / 0
    with pytest.raises(AttributeError):
        rational(1)._head = "add"  # type: ignore[misc]


def test_sympy_code_keeps_working_through_the_conversion():
    x = apply("log", 3) / 2
    a = sympy.Symbol("a", positive=True)
    assert sympy.exp(x) == sympy.sqrt(3)
    assert (x + a) - a == sympy.log(3) / 2
    assert x.evalf(5) == sympy.N(sympy.log(3) / 2, 5)  # an attribute of the sympy form
    assert exact(x) is x
    assert pickle.loads(pickle.dumps(x)) == x
    assert hash(rational(Fraction(1, 2))) == hash(Fraction(1, 2))


def test_building_and_enclosing_imports_no_sympy():
    code = (
        "import sys\n"
        "from fractions import Fraction\n"
        "from dpaudit.numeric import float_up\n"
        "from dpaudit.exact_numbers import apply, rational\n"
        "x = (rational(2) ** Fraction(1, 2)) * apply('log', 5) + apply('erfc', 3)\n"
        "print(float_up(x) > 2, x > 2, 'sympy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True", "False"]


@st.composite
def number_texts(draw: st.DrawFn, depth: int = 3) -> str:
    """Numeric text of the restricted grammar: decimals, fractions, + - * / **, functions."""
    if depth == 0 or draw(st.booleans()):
        kind = draw(st.sampled_from(["int", "decimal", "exp", "const"]))
        if kind == "int":
            return str(draw(st.integers(0, 1000)))
        if kind == "decimal":
            return f"{draw(st.integers(0, 999))}.{draw(st.integers(0, 999)):03d}"
        if kind == "exp":
            return f"{draw(st.integers(1, 9))}e{draw(st.integers(-8, 8))}"
        return draw(st.sampled_from(["E", "pi"]))
    a = draw(number_texts(depth - 1))
    op = draw(st.sampled_from(["+", "-", "*", "/", "**", "fn", "neg"]))
    if op == "fn":
        name = draw(st.sampled_from(["exp", "log", "sqrt", "erfc", "Abs", "floor", "ceiling"]))
        if name in ("log", "sqrt"):
            a = f"exp({a})"  # a positive argument
        if name == "exp":
            a = f"Min({a}, 50)"
        return f"{name}({a})"
    if op == "neg":
        return f"-({a})"
    if op == "**":
        return f"({a})**{draw(st.integers(0, 3))}"
    b = draw(number_texts(depth - 1))
    if op == "/":
        b = f"(1 + Abs({b}))"  # never zero
    return f"({a}) {op} ({b})"


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(number_texts())
def test_parsed_numbers_are_the_values_sympy_reads(text):
    """The restricted parser's exact number for numeric text is the value sympy reads from the
    same text (sympify with rationals, used here only as a test oracle): equal to 40 digits,
    and inside its own rigorous enclosure."""
    from dpaudit.expressions import parse_expression

    value = parse_expression(text, symbols=False)
    assert isinstance(value, ExactNumber)
    oracle = sympy.sympify(text, rational=True)
    with mpmath.workdps(50):
        want = mpmath.mpf(sympy.N(oracle, 50))
        lo, hi = endpoints(interval(value))
        pad = abs(want) * mpmath.mpf(10) ** -40 + mpmath.mpf(10) ** -300
        assert lo - pad <= want <= hi + pad, (text, lo, hi, want)


@pytest.mark.parametrize(
    ("text", "scale"),
    [("Laplace(gamma(3))", 2), ("Laplace(tanh(1))", None), ("Laplace(gamma(1/2))", None)],
)
def test_event_parameters_given_as_closed_forms_are_placed_by_intervals(text, scale):
    """gamma and tanh of numbers are exact numbers the intervals evaluate (gamma(3) is folded
    to 2, as sympy does), so positive values are accepted as scales."""
    from dpaudit.parse import parse_event

    event = parse_event(text)
    if scale is not None:
        assert event.scale == scale
    assert float_down(event.scale) > 0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Laplace(sqrt(-1))", "not evaluated by interval arithmetic: square root"),
        ("Laplace(gamma(0))", "interval arithmetic cannot place it"),
        ("Laplace(tanh(-1))", "scale must be in"),
    ],
)
def test_event_parameters_outside_or_unplaceable_are_refused_with_the_reason(text, reason):
    from dpaudit.expressions import ExpressionError
    from dpaudit.parse import parse_event

    with pytest.raises(ExpressionError, match="scale must be in") as err:
        parse_event(text)
    assert reason in str(err.value)
