"""The block sums of a coarsening (:func:`dpaudit.pld.sums.coarse_sums`) against exact
rational sums of the same rounded products: each coarse mass within ``(2 g + 1)`` unit
roundoffs (relative), the allowance the coarsenings of :mod:`dpaudit.pld.distribution` add to
their error terms, and in the right place (row ``J`` of the fine grid gives to ``J`` and
``J + 1``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.pld.fft import UNIT_ROUNDOFF
from dpaudit.pld.sums import coarse_sums


def _exact(values: np.ndarray, first: int, g: int, lo: np.ndarray, hi: np.ndarray) -> list:
    """The definition, entry by entry, in rationals (the products rounded as numpy rounds
    them: elementwise float64 products)."""
    rows = -(-(first + len(values)) // g)
    out = [Fraction(0)] * (rows + 1)
    for i, v in enumerate(values):
        row, r = divmod(first + i, g)
        out[row] += Fraction(float(v * lo[r]))
        out[row + 1] += Fraction(float(v * hi[r]))
    return out


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    g_exp=st.integers(0, 6),
    first_share=st.floats(0, 1, exclude_max=True),
    seed=st.integers(0, 2**32 - 1),
    power=st.sampled_from([1, 8, 60]),
)
def test_block_sums_are_within_their_allowance(n, g_exp, first_share, seed, power):
    g = 2**g_exp
    first = int(first_share * g)
    rng = np.random.default_rng(seed)
    values = rng.random(n) ** power
    w = rng.random(g)
    got = coarse_sums(values, first, g, 1 - w, w)
    exact = _exact(values, first, g, 1 - w, w)
    assert len(got) == len(exact)
    allowance = Fraction((2 * g + 1) * UNIT_ROUNDOFF)
    for computed, true in zip(got, exact, strict=True):
        assert abs(Fraction(float(computed)) - true) <= allowance * true


def test_rows_start_at_the_fine_offset():
    # fine indices 3..6 with g = 4: index 3 is row 0 (r = 3), indices 4..6 row 1 (r = 0..2)
    lo = np.array([1.0, 0.5, 0.25, 0.125])
    got = coarse_sums(np.array([1.0, 2.0, 4.0, 8.0]), 3, 4, lo, 1 - lo)
    assert got.tolist() == [0.125, 0.875 + 2.0 + 2.0 + 2.0, 0.0 + 2.0 + 6.0]


def test_a_misplaced_row_is_caught():
    # the oracle tells the rows apart: the same sums one row late differ from it
    values, lo = np.array([1.0, 2.0, 4.0, 8.0]), np.array([1.0, 0.5, 0.25, 0.125])
    exact = _exact(values, 3, 4, lo, 1 - lo)
    shifted = coarse_sums(values, 0, 4, lo, 1 - lo)
    assert [Fraction(float(v)) for v in shifted] != exact
