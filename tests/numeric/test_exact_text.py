"""``str`` of an exact number without sympy (``dpaudit.exact_text``) is sympy's ``str`` of the
same value, on the forms the accountant prints: the zCDP, advanced-composition, RDP (BBGG20,
Mironov) and CKS20 conversions of plain numbers.  Oracle: sympy itself
(``str(x.to_sympy())``), on Hypothesis-drawn parameters (derandomized, 40 examples each)
and on the values of ``dpaudit account`` commands that no longer import sympy."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.exact_numbers import ExactNumber, apply, constant
from dpaudit.exact_text import sympy_text
from dpaudit.numeric import exact
from dpaudit.numeric import functions as fn
from dpaudit.theorems import advanced, rdp, zcdp

positive = st.fractions(min_value=Fraction(1, 1000), max_value=100, max_denominator=1000)
probability = st.fractions(
    min_value=Fraction(1, 10**12), max_value=Fraction(999, 1000), max_denominator=10**12
)
decimal_delta = st.integers(1, 15).map(lambda k: Fraction(1, 10**k))
deltas = st.one_of(decimal_delta, probability)


def same_as_sympy(x: ExactNumber) -> str | None:
    """The native text, asserted equal to sympy's whenever there is one."""
    text = sympy_text(x)
    if text is not None:
        assert text == str(x.to_sympy()), (text, str(x.to_sympy()))
    return text


@settings(max_examples=40, derandomize=True)
@given(positive, deltas)
def test_zcdp_conversion(rho, delta):
    value = zcdp.zcdp_to_approx(exact(rho), exact(delta))
    assert same_as_sympy(value) is not None  # always in the printed class


@settings(max_examples=40, derandomize=True)
@given(st.one_of(positive, st.integers(1, 5)), st.integers(1, 5000), deltas)
def test_advanced_composition(epsilon, count, slack):
    value, _ = advanced.advanced_composition(exact(epsilon), 0, count, exact(slack))
    assert same_as_sympy(value) is not None  # exp(1) included: sympy's E


@settings(max_examples=40, derandomize=True)
@given(positive, st.integers(2, 1024), deltas)
def test_rdp_conversions(tau, order, delta):
    t, a, d = exact(tau), exact(order), exact(delta)
    same_as_sympy(rdp._bbgg20_epsilon(t, a, d))
    same_as_sympy(t + fn.log(1 / d) / (a - 1))


@settings(max_examples=40, derandomize=True)
@given(st.integers(1_000_001, 60_000_000), positive, deltas)
def test_cks20_conversion(micro_order, rho, delta):
    order = fn.Rational(micro_order, 10**6)
    same_as_sympy(zcdp._cks20_epsilon(order, exact(rho), exact(delta)))


@settings(max_examples=40, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.fractions(min_value=-20, max_value=20, max_denominator=50),
            st.sampled_from(["sqrtlog", "log", "exp", "sqrt", "one", "E"]),
            st.fractions(min_value=Fraction(1, 50), max_value=50, max_denominator=50),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_sums_of_the_class(terms):
    total = fn.Rational(0)
    for c, kind, r in terms:
        x = exact(r)
        atom = {
            "sqrtlog": fn.sqrt(fn.log(x)) if r > 1 else fn.log(x),
            "log": fn.log(x),
            "exp": fn.exp(x),
            "sqrt": fn.sqrt(x),
            "one": fn.Rational(1),
            "E": fn.E,
        }[kind]
        total = total + exact(c) * atom
    same_as_sympy(total)
    same_as_sympy(fn.Rational(3, 7) * total)


@settings(max_examples=40, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.fractions(min_value=-9, max_value=9, max_denominator=30),
            st.sets(st.sampled_from(["sqrt", "exp", "log", "sqrtlog", "E"]), max_size=3),
            st.fractions(min_value=Fraction(1, 20), max_value=30, max_denominator=30),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_sums_of_products_of_the_class(terms):
    total = fn.Rational(0)
    for c, kinds, r in terms:
        term, x = exact(c), exact(r)
        for kind in sorted(kinds):
            term = (
                term
                * {
                    "sqrt": fn.sqrt(x),
                    "exp": fn.exp(x - 5),
                    "log": fn.log(x),
                    "sqrtlog": fn.sqrt(fn.log(x + 1)),
                    "E": fn.E,
                }[kind]
            )
        total = total + term
    same_as_sympy(total)


@pytest.mark.parametrize(
    "value",
    [
        fn.Rational(1, 2) + 2 * fn.sqrt(fn.Rational(1, 2) * fn.log(fn.Rational(10**6))),
        fn.Rational(45, 16) + 3 * fn.sqrt(5 * fn.log(fn.Rational(10**6))) / 2,
        -10 + fn.sqrt(2 * fn.log(fn.Rational(10**6))) + 10 * fn.exp(fn.Rational(1, 10)),
        1 - 2 * fn.sqrt(fn.Rational(3)),  # sympy's "a - c*x" exception to the value order
        1 - fn.log(fn.Rational(3)),
        fn.log(fn.Rational(1, 6)) + fn.log(fn.Rational(5, 6)),
    ],
    ids=str,
)
def test_forms_the_commands_print(value):
    assert same_as_sympy(value) is not None


@pytest.mark.parametrize(
    "value",
    [
        fn.exp(fn.Rational(1)) + 1,  # E alone beside a number: sympy's special case
        constant("pi") + 1,
        fn.sqrt(fn.Rational(2)) * fn.sqrt(fn.Rational(3)),  # sympy: sqrt(6)
        fn.exp(fn.Rational(2)) * fn.exp(fn.Rational(3)),  # sympy: exp(5)
        2 * fn.log(fn.Rational(2)) * (1 + fn.log(fn.Rational(3))),  # product with a sum
        fn.sqrt(fn.log(fn.Rational(1, 2))),  # root of a negative number
        apply("erfc", fn.Rational(1, 2)) + 1,
        fn.log(fn.Rational(2)) - fn.log(fn.Rational(2)) + fn.sqrt(fn.Rational(2)) * 0,
    ],
    ids=str,
)
def test_outside_the_class_is_left_to_sympy(value):
    """Refused (None), and ``str`` is then sympy's (the control: the oracle is sympy)."""
    assert sympy_text(value) is None
    if isinstance(value, ExactNumber):
        assert str(value) == str(value.to_sympy())


def test_a_wrong_rule_is_caught():
    """Control: the comparison fails for a printer that ignores sympy's value order."""
    value = fn.Rational(-10) + 10 * fn.exp(fn.Rational(1, 10)) + fn.sqrt(fn.Rational(2))
    text = sympy_text(value)
    assert text == str(value.to_sympy())
    reordered = " + ".join(reversed(text.split(" + ")))
    assert reordered != str(value.to_sympy())


@settings(max_examples=60, derandomize=True)
@given(
    probability,
    st.fractions(min_value=Fraction(1, 100), max_value=50, max_denominator=100),
    st.sampled_from([Fraction(1), Fraction(2), Fraction(100), Fraction(1, 2), Fraction(7, 3)]),
)
def test_amplified_epsilon_log_of_a_sum(q, epsilon, count):
    """c * log(1 + q (e^eps - 1)), the amplified epsilon (and its k-fold sum), prints as
    sympy prints it (``100*log(E/10 + 9/10)``)."""
    value = count * fn.log(1 + exact(q) * (fn.exp(exact(epsilon)) - 1))
    assert same_as_sympy(value) is not None


def test_a_log_of_a_sum_beside_other_terms_is_left_to_sympy():
    s = fn.log(1 + exact(Fraction(1, 10)) * (fn.exp(1) - 1))
    assert sympy_text(s + 1) is None and sympy_text(s * fn.sqrt(2)) is None
