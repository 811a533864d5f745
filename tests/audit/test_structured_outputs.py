"""Structured outputs (issue 32, item 3): dicts, variable-length sequences, None and pandas
objects are audited through their structure (keys, length, missingness) and their values.

Neighbouring datasets differ by one added record of group "c". Each audit: 4,000 samples per
dataset (600 for pandas objects; 25% selection), confidence 0.95 (alpha 0.05), seed 0. A
leak of the structure is a zero-count witness (an output one dataset never produces):
certified about ln(3000 / 4.4) = 6.5 (4.6 for pandas), far above the claim 1. The correct
mechanisms are exactly 1-DP (discrete Laplace noise on a fixed key set), so they are flagged
with probability at most 0.05; here, at seed 0, not.
"""

from __future__ import annotations

import pickle
import re
from typing import Any

import numpy as np
import pytest
from _structured_mechanisms import (  # tests/audit is on sys.path
    EPSILON,
    fixed_key_histogram,
    frame_group_by,
    group_by_pairs,
    noisy_values_per_record,
    none_when_empty,
    series_histogram,
    uncensored_group_by,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit import audit
from dpaudit.audit.layout import Layout, infer_layout
from dpaudit.audit.outputs import infer_schema, to_array
from dpaudit.audit.structured import BUCKETS

D0, D1 = ["a", "a", "b"], ["a", "a", "b", "c"]
SAMPLES = 4_000


#: pandas objects cost about a millisecond each to build and read: fewer samples (a zero-count
#: witness on 450 certification samples still certifies ln(450 / 4.4) = 4.6).
PANDAS_SAMPLES = 600


def _audit(mechanism: Any, d0: Any = D0, d1: Any = D1, **kwargs: Any) -> Any:
    samples = PANDAS_SAMPLES if mechanism in (frame_group_by, series_histogram) else SAMPLES
    return audit(mechanism, d0, d1, epsilon=EPSILON, samples=samples, seed=0, **kwargs)


def _reads_in_output_terms(event: str) -> None:
    assert not re.search(r"coordinate \d+", event), event


@pytest.mark.parametrize("mechanism", [uncensored_group_by, frame_group_by, group_by_pairs])
def test_a_leaking_key_set_is_flagged(mechanism: Any) -> None:
    result = _audit(mechanism)
    assert result.violation and result.epsilon_lower > 4.3
    _reads_in_output_terms(result.event)
    assert re.search(r"'c'|entries", result.event), result.event


@pytest.mark.parametrize("mechanism", [fixed_key_histogram, series_histogram])
def test_a_correct_release_over_a_fixed_key_set_is_not_flagged(mechanism: Any) -> None:
    result = _audit(mechanism)
    assert not result.violation and result.epsilon_lower <= EPSILON


def test_a_variable_length_output_is_flagged_by_its_length() -> None:
    result = _audit(noisy_values_per_record, [1.0, 2.0], [1.0, 2.0, 3.0])
    assert result.violation
    assert "entries" in result.event or "entry 2" in result.event, result.event
    _reads_in_output_terms(result.event)


def test_a_none_output_is_flagged_as_none() -> None:
    result = _audit(none_when_empty, [], ["a"])
    assert result.violation and result.event == "the output is None"


def test_structured_audits_are_the_same_with_workers() -> None:
    kwargs: dict[str, Any] = dict(batch_size=1_000)
    one = _audit(uncensored_group_by, **kwargs)
    two = _audit(uncensored_group_by, workers=2, **kwargs)
    assert (one.event, one.hits_d0, one.hits_d1, one.epsilon_lower) == (
        two.event,
        two.hits_d0,
        two.hits_d1,
        two.epsilon_lower,
    )


def test_keys_outside_the_layout_are_hashed_stably() -> None:
    layout = infer_layout([{"a": 1.0}], 0, False)
    assert layout.buckets == BUCKETS and pickle.loads(pickle.dumps(layout)) == layout
    rows = layout.convert([{"a": 2.0, "zz": 1.0}, {"zz": 3.0, "yy": 4.0}])
    buckets = rows[:, layout.bucket_columns]
    assert buckets.sum(axis=1).tolist() == [1.0, 2.0]
    # the bucket of 'zz' is a function of the key alone (BLAKE2b, not the salted hash())
    assert np.flatnonzero(buckets[0]).tolist() == [12]
    assert layout.describe_structure(rows[0][list(layout.structure_columns())]) == (
        "the keys are exactly {'a'} and 1 outside the probe's labels"
    )


def test_columns_and_events_read_in_the_outputs_terms() -> None:
    schema = infer_schema([{"a": 1.0, "b": 2.0}, None, {"a": 1.5}])
    layout = schema.layout
    assert isinstance(layout, Layout)
    names = [schema.column_name(j) for j in range(schema.width)]
    assert names[:6] == [
        "whether the output is None",
        "the number of entries",
        "the count of the key 'a'",
        "the value of the key 'a'",
        "the count of the key 'b'",
        "the value of the key 'b'",
    ]
    count_b = layout.label_columns()[1][0]
    assert layout.count_phrase(count_b, True, 0.5) == "the key 'b' is present"
    assert layout.count_phrase(count_b, False, 0.0) == "the key 'b' is absent"
    assert layout.count_phrase(layout.length_column, True, 3) == "the output has at least 3 entries"
    x = to_array([{"b": 2.0, "a": 1.0}, None], schema)
    assert layout.describe_row(x[0]) == "the output is {'a': 1, 'b': 2}"
    assert layout.describe_row(x[1]) == "the output is None"


def test_pandas_frames_name_rows_by_their_group_columns() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"group": ["a", "c"], "count": [3.0, 1.0]})
    layout = infer_schema([frame]).layout
    assert layout is not None
    assert [(lab.kind, lab.value, lab.fields) for lab in layout.labels] == [
        ("row", "a", ("count",)),
        ("row", "c", ("count",)),
    ]
    assert layout.column_name(layout.label_columns()[1][1][0]) == "column 'count' of the row 'c'"


def test_streamed_selection_of_structured_outputs_matches_across_workers(monkeypatch: Any) -> None:
    """A pilot of 1,000 selection samples per dataset, the other 500 tallied batch by batch
    (dpaudit.audit.streaming): the structure's outcome sketch and the named thresholds stream,
    and the result is the same with two worker processes."""
    from dpaudit.audit import streaming

    monkeypatch.setattr(streaming, "HELD_SELECTION_SAMPLES", 1_000)
    kwargs: dict[str, Any] = dict(epsilon=EPSILON, samples=6_000, seed=1, batch_size=500)
    one = audit(uncensored_group_by, D0, D1, **kwargs)
    two = audit(uncensored_group_by, D0, D1, workers=2, **kwargs)
    assert one.violation and one.selection_samples == 1_500
    assert (one.event, one.hits_d0, one.hits_d1) == (two.event, two.hits_d0, two.hits_d1)
    _reads_in_output_terms(one.event)


def test_ragged_sequences_of_integers_stay_categorical() -> None:
    """Their outcomes repeat and are compared exactly, as before structured outputs (a
    committed report, 004--theorem-3.5, audits such tuples); ragged real numbers, which never
    repeat, are read as variable-length sequences."""
    assert infer_schema([(1, 2), (3,)], also=[(0,)]).kind == "categorical"
    assert infer_schema([[1, 2], [3]]).kind == "categorical"
    assert infer_schema([(1, 2), (3, 4)], also=[(5, 6)]).kind == "vector"
    assert infer_schema([[1.5, 2.25], [3.5]]).kind == "structured"


_KEYS = st.sampled_from(["a", "b", "c", "d", "e", 1, 2, (3, "x")])
_VALUES = st.one_of(st.floats(allow_nan=False, width=64), st.integers(-(2**40), 2**40), st.none())


@settings(max_examples=60, deadline=None)
@given(
    seen=st.lists(st.dictionaries(_KEYS, _VALUES, max_size=4), min_size=1, max_size=4),
    output=st.dictionaries(_KEYS, _VALUES, max_size=6),
)
def test_every_entry_is_counted_once_and_named_values_are_kept(
    seen: list[dict[Any, Any]], output: dict[Any, Any]
) -> None:
    """Property: whatever keys the layout names, converting a dict counts each of its
    entries once (in its key's count column or in one bucket), the length column is its
    size, and the value of a named key is the value given (None: NaN)."""
    layout = infer_layout(seen, 0, False)
    row = layout.convert([output])[0]
    counts = [row[c] for c, _ in layout.label_columns()] + [row[b] for b in layout.bucket_columns]
    assert sum(counts) == len(output) == row[layout.length_column]
    for label, (count, values) in zip(layout.labels, layout.label_columns(), strict=True):
        if label.value in output and values:
            given_value = output[label.value]
            expected = np.nan if given_value is None else float(given_value)
            np.testing.assert_equal(row[values[0]], expected)
        elif label.value not in output:
            assert row[count] == 0
    assert pickle.loads(pickle.dumps(layout)).convert([output]).tobytes() == row.tobytes()
