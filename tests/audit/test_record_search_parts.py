"""The parts of the record search: edge values of a column, the race's plan and its cost.

No sampling here: exact checks of what the parts compute, and Hypothesis property tests of
the plan's promise that the search never draws more than its budget.
"""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit.domain import EDGE_KINDS, check_domain
from dpaudit.audit.racing import (
    ETA,
    FINALISTS,
    MIN_STAGE_SAMPLES,
    plan,
    race_cost,
    stage_counts,
)


def test_a_numeric_column_has_every_edge_value_in_order() -> None:
    column = check_domain([(-1.0, 10.0)]).columns[0]
    values = column.edge_values()
    expected = [
        math.nan,
        math.inf,
        -math.inf,
        10.0 + 10 * 11.0,  # well above: ten widths past the end
        -1.0 - 10 * 11.0,
        math.nextafter(10.0, math.inf),  # just above: the next double
        math.nextafter(-1.0, -math.inf),
        -0.0,
        5e-324,
        sys.float_info.max,
    ]
    assert np.array(values).tobytes() == np.array(expected).tobytes()  # -0.0 and NaN exactly
    assert [column.edge_value(kind) is not None for kind in EDGE_KINDS] == [True] * 10
    words = [column.describe(v) for v in values]
    assert words[:3] == ["NaN", "+inf", "-inf"]
    assert words[5] == "10.000000000000002, just above the declared range [-1.0, 10.0]"
    assert words[3] == "120.0, above the declared range [-1.0, 10.0]"
    assert words[7] == "-0.0" and "5e-324" in words[8] and "1.8e308" in words[9]
    assert column.describe(0.0) is None and column.describe(10.0) is None
    assert all(column.admits(v, True) and not column.admits(v, False) for v in values)


def test_a_categorical_column_has_nan_and_a_number_past_each_end() -> None:
    column = check_domain([[0, 1, 2, 3]]).columns[0]
    values = column.edge_values()
    assert math.isnan(values[0]) and values[1:] == (4.0, -1.0)
    assert column.describe(4.0) == "4.0, not one of the listed values"
    assert column.describe(2.0) is None


def test_a_range_near_the_largest_double_leaves_out_what_overflows() -> None:
    column = check_domain([(0.0, 1e308)]).columns[0]
    assert column.edge_value("far above") is None  # 11e308 is not a double
    assert column.edge_value("just above") == math.nextafter(1e308, math.inf)


def test_edge_records_put_every_column_at_a_kind_first_then_one_column_at_a_time() -> None:
    domain = check_domain([(0.0, 1.0), [5, 6]])
    records = domain.edge_records(100)
    assert np.isnan(records[0]).all()  # NaN in both columns
    assert records[1].tolist() == [math.inf, 5.0]  # +inf: the categorical column at its low end
    singles = [r for r in records if np.isnan(r).sum() == 1]
    assert [np.isnan(r).tolist() for r in singles] == [[True, False], [False, True]]
    assert len({r.tobytes() for r in records}) == len(records)
    assert len(domain.edge_records(3)) == 3


@settings(max_examples=200, deadline=None)
@given(
    budget=st.integers(40, 10**8),
    structured=st.integers(1, 200),
    local=st.integers(0, 200),
    cap=st.integers(1, 300_000),
)
def test_a_race_never_costs_more_than_its_budget(
    budget: int, structured: int, local: int, cap: int
) -> None:
    race = plan(budget, structured, local, cap)
    pool = race.structured + race.local
    assert 1 <= pool <= structured + local and race.structured >= 1
    assert 1 <= race.first_samples <= cap
    assert race_cost(pool, race.first_samples, cap) <= budget
    if pool > 1:  # more candidates only when each gets its MIN_STAGE_SAMPLES (or the cap)
        assert race.first_samples >= min(MIN_STAGE_SAMPLES, cap)


@pytest.mark.parametrize("pool", [1, 2, 3, 4, 5, 17, 64, 144])
def test_each_stage_keeps_a_quarter_until_a_few_remain(pool: int) -> None:
    counts = stage_counts(pool)
    assert counts[0] == pool and counts[-1] <= FINALISTS
    assert all(b == math.ceil(a / ETA) for a, b in itertools.pairwise(counts))
    assert all(a > FINALISTS for a in counts[:-1])
