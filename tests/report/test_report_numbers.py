"""Report numbers are rounded to fixed significant digits in the direction their key allows,
so reports do not depend on a machine's last float bits (BLAS, CPU) and bounds stay bounds."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.report.numbers import SIGNIFICANT_DIGITS, for_people, round_significant

finite = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


def test_float_noise_in_the_last_bits_disappears() -> None:
    noisy = 1e-05 - 2**-70  # 9.999999999999999e-06
    assert repr(noisy) != "1e-05"
    assert repr(round_significant(noisy)) == "1e-05"
    # two machines whose results differ in the last bit write the same number
    x = 0.1 + 0.2
    assert round_significant(x) == round_significant(math.nextafter(x, 1.0)) == 0.3


@settings(max_examples=300, derandomize=True)
@given(finite)
def test_upper_is_never_below_and_lower_never_above(x: float) -> None:
    up, down = round_significant(x, "up"), round_significant(x, "down")
    assert down <= x <= up
    # and at most one unit of the last kept digit (plus an ulp of each side's float) away
    if x != 0 and math.isfinite(up) and math.isfinite(down):
        slack = abs(Decimal(x)) * Decimal(10) ** (2 - SIGNIFICANT_DIGITS)
        assert abs(Decimal(up) - Decimal(down)) <= slack + 2 * Decimal(math.ulp(x))


@settings(max_examples=300, derandomize=True)
@given(finite, st.sampled_from(["up", "down", "nearest"]))
def test_rounding_is_idempotent(x: float, direction: str) -> None:
    # a stored report recomputes to itself
    once = round_significant(x, direction)
    assert round_significant(once, direction) == once


def test_keys_choose_the_direction() -> None:
    x = 0.12345678915  # the 11th digit decides the 10-digit rounding
    out = for_people(
        {
            "epsilon_upper": x,
            "epsilon_lower": x,
            "epsilon_estimate": x,
            "audit": {"p_denominator_upper": [x], "delta_lower": (x,)},
            "samples": 10,
            "name": "a",
            "ok": True,
            "none": None,
        }
    )
    assert out["epsilon_upper"] >= x >= out["epsilon_lower"]
    assert out["epsilon_upper"] > out["epsilon_lower"]
    assert out["audit"]["p_denominator_upper"][0] >= x >= out["audit"]["delta_lower"][0]
    assert (out["samples"], out["name"], out["ok"], out["none"]) == (10, "a", True, None)
    assert isinstance(out["audit"]["delta_lower"], tuple)


def test_non_finite_and_zero_pass_through() -> None:
    assert round_significant(math.inf, "down") == math.inf
    assert round_significant(0.0, "up") == 0.0
    assert math.isnan(round_significant(math.nan))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"direction": "sideways"}, "direction must be one of"),
        ({"digits": 0}, r"digits must be an integer >= 1, got 0"),
        ({"digits": True}, r"digits must be an integer >= 1, got True"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        round_significant(1.0, **kwargs)
