"""pipeline-dp (``pip install pipeline-dp``; audited at 0.3.1) as its README and its
``examples/`` call it: a ``DPEngine`` over the ``LocalBackend``, a ``NaiveBudgetAccountant``
holding the whole budget, ``AggregateParams`` and ``DataExtractors``; one record of the dataset
is one privacy unit (its own privacy id), so the claim is about adding or removing a record.

The claim of each adapter is the accountant's ``total_epsilon`` (and ``total_delta``):
pipeline-dp's documentation states that the engine's output is (total_epsilon,
total_delta)-DP with respect to the privacy unit (pipeline-dp README, "DP Engine";
``pipeline_dp/budget_accounting.py``, ``NaiveBudgetAccountant``).

Randomness: pipeline-dp draws its noise through python-dp's C++ library (a secure generator that
cannot be seeded), so no audit of these adapters is reproducible from its seed (dpaudit says so:
``reproducible=False``); each bound still holds at its confidence.  Each output is one engine
run (about 0.4 ms): there is no batch.

What the audits look for (docs/libraries.md):

- SUM, MEAN and VARIANCE clamp each value with ``np.clip`` (``pipeline_dp/combiners.py``,
  ``SumCombiner.create_accumulator`` and the mean/variance combiners), which passes NaN: one NaN
  record makes the release NaN every time.  Found by a search that tries NaN as a record (edge
  values in :func:`dpaudit.audit.audit_records`).
- ``DPEngine.aggregate`` raises ``ValueError("col must be non-empty")`` on an empty dataset
  (``dp_engine.py``, ``_check_col``) and releases a noisy value on a dataset of one record: the
  exception tells the empty dataset apart (found when errors are outputs, ``on_error="output"``).
- COUNT by partition with private partition selection (no public partitions): the released
  partitions are chosen with pipeline-dp's DP partition selection, (1, 1e-5)-DP; its output is
  a ``{partition: count}`` dict, whose key set the auditor reads as structured outputs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mechanisms.libraries import LibraryAdapter, adapter_maker, by_name, import_library

__all__ = [
    "ADAPTERS",
    "DELTA",
    "EPSILON",
    "pipeline_dp_count",
    "pipeline_dp_count_by_partition",
    "pipeline_dp_mean",
    "pipeline_dp_sum",
    "pipeline_dp_variance",
]

#: The budget of every adapter (the accountant's total_epsilon).
EPSILON = 1.0
#: The total_delta of the adapter that selects its partitions privately.
DELTA = 1e-5
#: Largest dataset searched.
MAX_SIZE = 8
#: Partition keys of the count-by-partition adapter (a record's first column).
PARTITIONS = [0, 1, 2]


@functools.cache
def _pdp() -> Any:
    return import_library("pipeline_dp", "pipeline-dp==0.3.1")


def _aggregate(
    rows: list[tuple[int, Any, float]], metric: str, delta: float, public: list[Any] | None
) -> dict[Any, Any]:
    """One ``DPEngine.aggregate`` run over ``rows`` (privacy id, partition, value) on the local
    backend, as pipeline-dp's README does; returns ``{partition: MetricsTuple}``."""
    pdp = _pdp()
    accountant = pdp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=delta)
    engine = pdp.DPEngine(accountant, pdp.LocalBackend())
    params = pdp.AggregateParams(
        noise_kind=pdp.NoiseKind.LAPLACE,
        metrics=[getattr(pdp.Metrics, metric)],
        max_partitions_contributed=1,
        max_contributions_per_partition=1,
        min_value=0.0,
        max_value=1.0,
    )
    extractors = pdp.DataExtractors(
        privacy_id_extractor=lambda row: row[0],
        partition_extractor=lambda row: row[1],
        value_extractor=lambda row: row[2],
    )
    result = engine.aggregate(rows, params, extractors, public_partitions=public)
    accountant.compute_budgets()
    return dict(result)


def _one_partition(metric: str) -> Callable[[np.ndarray, np.random.Generator], float]:
    """``metric`` of the records' values (column 0), all in the one public partition 0."""
    name = metric.lower()

    def release(data: np.ndarray, rng: np.random.Generator) -> float:
        rows = [(i, 0, float(v)) for i, v in enumerate(data[:, 0])]
        return float(getattr(_aggregate(rows, metric, 0.0, [0])[0], name))

    return release


def _count_by_partition(data: np.ndarray, rng: np.random.Generator) -> dict[int, float]:
    """COUNT per partition key (column 0), partitions selected privately: ``{key: count}``."""
    rows = [(i, int(k), 0.0) for i, k in enumerate(data[:, 0])]
    out = _aggregate(rows, "COUNT", DELTA, None)
    return {int(k): float(v.count) for k, v in sorted(out.items())}


_adapter = adapter_maker("pipeline-dp", "pipeline-dp", epsilon=EPSILON)


NAN_FINDING = (
    "Finding (pipeline-dp 0.3.1): values are clamped with np.clip, which passes NaN, so one "
    "record whose value is NaN makes the released value NaN with probability 1, and its absence "
    "never does: no finite epsilon."
)
_API = (
    "DPEngine(NaiveBudgetAccountant(total_epsilon=1, total_delta=0), LocalBackend())"
    ".aggregate(rows, AggregateParams(noise_kind=LAPLACE, metrics=[{metric}], "
    "max_partitions_contributed=1, max_contributions_per_partition=1, min_value=0, "
    "max_value=1), extractors, public_partitions=[0])"
)

pipeline_dp_sum = _adapter(
    "sum",
    _API.format(metric="Metrics.SUM"),
    "Sum of the records' values, clamped by pipeline-dp to [0, 1], Laplace noise, one public "
    "partition: 1-DP under add/remove of a privacy unit (one record).",
    [(-1.0, 2.0)],
    (1, MAX_SIZE),
    _one_partition("SUM"),
    finding=NAN_FINDING,
)
pipeline_dp_mean = _adapter(
    "mean",
    _API.format(metric="Metrics.MEAN"),
    "Mean of the records' values (clamped to [0, 1]; noisy count and noisy normalised sum), "
    "one public partition: 1-DP under add/remove.",
    [(-1.0, 2.0)],
    (1, MAX_SIZE),
    _one_partition("MEAN"),
    finding=NAN_FINDING,
)
pipeline_dp_variance = _adapter(
    "variance",
    _API.format(metric="Metrics.VARIANCE"),
    "Variance of the records' values (clamped to [0, 1]), one public partition: 1-DP under "
    "add/remove.",
    [(-1.0, 2.0)],
    (1, MAX_SIZE),
    _one_partition("VARIANCE"),
    finding=NAN_FINDING,
)
pipeline_dp_count = _adapter(
    "count",
    _API.format(metric="Metrics.COUNT"),
    "Number of records, one public partition, datasets of 0 to 8 records: 1-DP under add/remove.",
    [(0.0, 1.0)],
    (0, MAX_SIZE),
    _one_partition("COUNT"),
    finding="Finding (pipeline-dp 0.3.1): DPEngine.aggregate raises ValueError('col must be "
    "non-empty') on an empty dataset, and releases a noisy count on a dataset of one record: "
    "the exception tells the two neighbours apart with probability 1.",
)
pipeline_dp_count_by_partition = _adapter(
    "count-by-partition",
    "DPEngine(NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-5), LocalBackend())"
    ".aggregate(rows, AggregateParams(noise_kind=LAPLACE, metrics=[Metrics.COUNT], "
    "max_partitions_contributed=1, max_contributions_per_partition=1), extractors) "
    "(no public partitions: private partition selection)",
    "Count of records per partition key (a record is a key in {0, 1, 2}), the partitions "
    "released chosen by pipeline-dp's private partition selection; the output is the dict "
    "{key: noisy count}: (1, 1e-5)-DP under add/remove.",
    [PARTITIONS],
    (1, MAX_SIZE),
    _count_by_partition,
    delta=DELTA,
)

#: Every pipeline-dp adapter, by name.
ADAPTERS: dict[str, LibraryAdapter] = by_name(
    pipeline_dp_sum,
    pipeline_dp_mean,
    pipeline_dp_variance,
    pipeline_dp_count,
    pipeline_dp_count_by_partition,
)
