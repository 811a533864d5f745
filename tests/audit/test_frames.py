"""Adapters for code written over DataFrames and lists of records (dpaudit.audit.frames):
conversions, attribute passing, pickling for worker processes, and audits through them."""

from __future__ import annotations

import pickle

import _records_mechanisms as m
import numpy as np
import pytest

from dpaudit.audit import audit_records, over_frame, over_records

pd = pytest.importorskip("pandas")


def test_over_frame_builds_the_named_dataframe_and_keeps_batch_and_arithmetic() -> None:
    seen = {}

    def fn(df, rng):  # type: ignore[no-untyped-def]
        seen["df"] = df
        return 0.0

    wrapped = over_frame(fn, ["age", "income"])
    wrapped(np.array([[30.0, 0.5], [40.0, 0.25]]), np.random.default_rng(0))
    df = seen["df"]
    assert isinstance(df, pd.DataFrame) and list(df.columns) == ["age", "income"]
    assert df["income"].tolist() == [0.5, 0.25]
    assert not hasattr(wrapped, "batch")
    batched = over_frame(m.frame_mean_income, ["age", "income"])
    out = batched.batch(np.array([[30.0, 0.5]]), 4, np.random.default_rng(0))
    assert np.shape(out) == (4,)
    assert batched.arithmetic == "real"
    # picklable (workers > 1 and Dask send the function to other processes)
    again = pickle.loads(pickle.dumps(batched))
    assert again.columns == ("age", "income")


def test_over_records_passes_tuples() -> None:
    seen = {}

    def fn(records, rng):  # type: ignore[no-untyped-def]
        seen["r"] = records
        return 0.0

    over_records(fn)(np.array([[1.0, 2.0], [3.0, 4.0]]), np.random.default_rng(0))
    assert seen["r"] == [(1.0, 2.0), (3.0, 4.0)]


@pytest.mark.parametrize(
    "columns",
    ["income", [], ["a", "a"], ["a", 3], None],
    ids=["str", "empty", "dup", "int", "none"],
)
def test_bad_columns_are_refused_with_the_parameter_named(columns: object) -> None:
    with pytest.raises(ValueError, match="columns must"):
        over_frame(m.frame_mean_income, columns)  # type: ignore[arg-type]


def test_a_domain_of_the_wrong_width_is_a_clear_error() -> None:
    wrapped = over_frame(m.frame_mean_income, ["age", "income"])
    with pytest.raises(ValueError, match=r"expected \(records, 2\)"):
        wrapped(np.zeros((3, 1)), np.random.default_rng(0))
    with pytest.raises(ValueError, match="fn must be callable"):
        over_records(3)  # type: ignore[arg-type]


def test_audits_through_the_frame_adapter_catch_the_forgotten_clip() -> None:
    """alpha = 0.05 (confidence 0.95), 10,000 samples per side: the correct DataFrame code is
    not flagged at its epsilon 1, the one that forgot to clip is (true epsilon 10 on the
    domain income in [0, 10])."""
    domain = [(18, 90), (0, 10)]
    ok = audit_records(
        over_frame(m.frame_mean_income, ["age", "income"]),
        domain,
        epsilon=1.0,
        samples=10_000,
        seed=0,
    )
    assert not ok.violation
    bad = audit_records(
        over_frame(m.frame_unclipped_income, ["age", "income"]),
        domain,
        epsilon=1.0,
        samples=10_000,
        seed=0,
    )
    assert bad.violation and bad.epsilon_lower > 1.0


def test_audit_through_the_records_adapter_is_not_flagged() -> None:
    """alpha = 0.05, 10,000 samples per side, a correct 1-DP count over a list of records."""
    result = audit_records(
        over_records(m.records_count_positive),
        [(-1, 1), [0, 1]],
        epsilon=1.0,
        relation="add-remove",
        samples=10_000,
        seed=1,
    )
    assert not result.violation
