"""Bit features of doubles (dpaudit.audit.float_bits): closed forms on values built bit by bit."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.audit.events import FloatClassEvent
from dpaudit.audit.float_bits import (
    GRANULARITY_CAP,
    ClassKey,
    binade_bounds,
    class_keys,
    fields,
    granularity,
    low_bits,
    trailing_zeros,
)


def build(sign: int, exponent: int, significand: int) -> float:
    """The double with these fields, assembled with struct (independent of float_bits)."""
    return struct.unpack("<d", struct.pack("<Q", (sign << 63) | (exponent << 52) | significand))[0]


def test_fields_of_values_built_bit_by_bit():
    cases = [(0, 1023, 0), (1, 1022, 1), (0, 0, 5), (1, 2046, (1 << 52) - 1), (0, 1075, 12345)]
    x = np.array([build(*c) for c in cases])
    sign, exponent, significand = fields(x)
    assert list(zip(sign, exponent, significand, strict=True)) == cases
    assert x[0] == 1.0 and x[1] == -(0.5 + 2.0**-53)


def test_low_bits_trailing_zeros_and_granularity_closed_forms():
    # 1.0: significand 0 -> 52 trailing zeros, granularity 0 (1 = 1 * 2^0, odd multiple)
    # 3.0 = 1.1b * 2^1: significand 2^51 -> 51 trailing zeros, granularity 0
    # 0.75 = 1.1b * 2^-1: granularity -2 ;  1 + 2^-52: last bit 1, granularity -52
    # 6 * 2^-1074 (subnormal): significand 6 -> 1 trailing zero, granularity -1073
    x = np.array([1.0, 3.0, 0.75, 1.0 + 2.0**-52, build(0, 0, 6), -40.0])
    assert list(trailing_zeros(x)) == [52, 51, 51, 0, 1, 50]
    assert list(granularity(x)) == [0, 0, -2, -52, -1073, 3]
    assert list(low_bits(x, 1)) == [0, 0, 0, 1, 0, 0]
    assert list(low_bits(x, 3)) == [0, 0, 0, 1, 6, 0]
    special = granularity(np.array([0.0, -0.0, np.inf, np.nan]))
    assert (special == np.iinfo(np.int64).max).all()


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v != 0))
def test_granularity_is_the_largest_power_of_two_dividing_the_value(v):
    j = int(granularity(np.array([v]))[0])
    # v / 2^j is an odd integer (exact: scaling by a power of two)
    q = np.ldexp(abs(v), -j)
    assert q == int(q) and int(q) % 2 == 1


def test_class_codes_and_descriptions():
    key = ClassKey("low-bits", 4)
    x = np.array([0.3, build(0, 1021, 0b1011), -build(0, 1021, 0b1011)])
    codes = key.codes(x)
    assert codes[1] == (0 * 2048 + 1021) * 16 + 0b1011
    assert codes[2] == (1 * 2048 + 1021) * 16 + 0b1011
    assert key.describe_code(int(codes[1])) == "[0.25, 0.5) with last significand 4 bits 1011"
    assert key.describe_code(int(codes[2])) == "(-0.5, -0.25] with last significand 4 bits 1011"
    lattice = ClassKey("lattice")
    assert lattice.codes(np.array([1.0]))[0] == 1023 * (GRANULARITY_CAP + 1) + GRANULARITY_CAP
    assert binade_bounds(0, 1022) == (0.5, 1.0) and binade_bounds(1, 1022) == (-1.0, -0.5)
    event = FloatClassEvent(key, (int(codes[1]),))
    assert list(event.contains(x)) == [False, True, False]
    assert "[0.25, 0.5) with last significand 4 bits 1011" in event.describe()
    assert len(class_keys()) == 4
    big = np.array([-np.nan, -np.inf, np.finfo(float).max, 5e-324])
    assert all(0 <= int(c) < k.size for k in class_keys() for c in k.codes(big))


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 52\], got 0"):
        low_bits(np.array([1.0]), 0)
    with pytest.raises(ValueError, match="kind must be 'low-bits' or 'lattice', got 'x'"):
        ClassKey("x")
    with pytest.raises(ValueError, match=r"x must be a 1-D array of doubles, got shape \(1, 1\)"):
        fields(np.zeros((1, 1)))
