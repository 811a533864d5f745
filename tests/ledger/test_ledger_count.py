"""A ledger refuses a count that is not an integer >= 1, wherever the count comes from, and
records nothing then."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.events import Laplace
from dpaudit.filters import PrivacyFilter
from dpaudit.ledger import Entry, Ledger, record

BAD_COUNTS = [0, -1, -(10**30), True, False, "3", 3.0, 2.5, float("nan"), None, 1j]


@pytest.mark.parametrize("count", BAD_COUNTS, ids=repr)
def test_record_refuses_a_bad_count_and_records_nothing(count: object) -> None:
    f = PrivacyFilter(10)
    with Ledger(guard=f) as ledger:
        with pytest.raises(
            ValueError,
            match=r"count must be an integer in \[1, inf\), got "
            + repr(count).replace("(", r"\(").replace(")", r"\)"),
        ):
            record(Laplace(1), count)
        assert ledger.entries == [] and f.spent_epsilons == []


@pytest.mark.parametrize("count", BAD_COUNTS, ids=repr)
def test_ledger_add_and_entry_refuse_a_bad_count(count: object) -> None:
    ledger = Ledger()
    with pytest.raises(ValueError, match=r"count must be an integer in \[1, inf\)"):
        ledger.add(Laplace(1), count)
    with pytest.raises(ValueError, match=r"count must be an integer in \[1, inf\)"):
        Entry(Laplace(1), count)
    assert ledger.entries == []


def test_record_refuses_a_bad_count_even_with_no_ledger_active() -> None:
    with pytest.raises(ValueError, match="count must be"):
        record(Laplace(1), 0)


def test_integer_counts_of_any_integer_type_are_recorded_as_int() -> None:
    with Ledger() as ledger:
        record(Laplace(1), np.int64(3))
        record(Laplace(1), 10**20)
    assert [e.count for e in ledger.entries] == [3, 10**20]
    assert type(ledger.entries[0].count) is int


def test_bad_event_and_label_are_refused() -> None:
    with Ledger() as ledger:
        with pytest.raises(ValueError, match="event must be an event, got 'Laplace"):
            record("Laplace(1)")
        with pytest.raises(ValueError, match="label must be a str, got 3"):
            record(Laplace(1), 1, 3)
    assert ledger.entries == []
    with pytest.raises(ValueError, match="guard must be callable or None, got 3"):
        Ledger(guard=3)
