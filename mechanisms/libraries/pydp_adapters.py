"""PyDP (``pip install python-dp``; audited at 1.1.5), the Python binding of Google's
differential-privacy library, as its README and tutorials call it: an algorithm of
``pydp.algorithms.laplacian`` built with its epsilon (and bounds) and run with
``quick_result(values)``; partition selection with
``pydp.algorithms.partition_selection.create_partition_strategy``.

Claims: each algorithm is epsilon-DP (with its delta, 0 unless stated) under adding or removing
one record, the guarantee Google's library states for its algorithms (``Algorithm`` in
differential-privacy's ``cc/algorithms/algorithm.h``: "epsilon-differentially private");
``quick_result`` "consumes 100% of the privacy budget" (``pydp/algorithms/_algorithm.py``).
Bounded algorithms built without bounds infer them with ``ApproxBounds`` from part of the same
budget.

Randomness: the C++ library draws from a secure generator that cannot be seeded, so no audit of
these adapters is reproducible from its seed (dpaudit says so); each bound still holds at its
confidence.

What the audits look at (docs/libraries.md): the bounded sum and mean on records outside their
bounds and on special values (the C++ library skips NaN inputs), the count, the auto-bounds sum
(``BoundedSum`` with no bounds raises ``FAILED_PRECONDITION: Bin count threshold was too large
to find approximate bounds`` on small datasets, and whether it raises is a random function of
the data: audited with errors as outputs), and partition selection, whose output is the set of
keys kept.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from mechanisms.libraries import LibraryAdapter, adapter_maker, by_name, import_library

__all__ = [
    "ADAPTERS",
    "DELTA",
    "EPSILON",
    "pydp_auto_bounds_sum",
    "pydp_bounded_mean",
    "pydp_bounded_sum",
    "pydp_count",
    "pydp_partition_selection",
]

#: The epsilon of every adapter.
EPSILON = 1.0
#: The delta of partition selection.
DELTA = 1e-5
#: Largest dataset searched by the bounded algorithms.
MAX_SIZE = 8
#: Dataset sizes of the auto-bounds sum: ApproxBounds gives up below about 40 records at
#: epsilon 1 (measured: it raised on all 50 runs at 30 equal records and on none at 50).
AUTO_SIZES = (32, 48)


@functools.cache
def _laplacian() -> Any:
    return import_library("pydp.algorithms.laplacian", "python-dp==1.1.5")


@functools.cache
def _partition_selection() -> Any:
    return import_library("pydp.algorithms.partition_selection", "python-dp==1.1.5")


def _values(data: np.ndarray) -> list[float]:
    return [float(v) for v in data[:, 0]]


def _bounded(algorithm: str, bounds: bool) -> Callable[[np.ndarray, np.random.Generator], float]:
    def release(data: np.ndarray, rng: np.random.Generator) -> float:
        cls = getattr(_laplacian(), algorithm)
        kwargs = {"lower_bound": 0.0, "upper_bound": 1.0} if bounds else {}
        return float(cls(epsilon=EPSILON, dtype="float", **kwargs).quick_result(_values(data)))

    return release


def _count(data: np.ndarray, rng: np.random.Generator) -> int:
    return int(_laplacian().Count(epsilon=EPSILON, dtype="float").quick_result(_values(data)))


def _kept_partitions(data: np.ndarray, rng: np.random.Generator) -> frozenset[int]:
    """The partition keys (column 0) kept by PyDP's truncated geometric partition selection,
    each record one privacy unit contributing to one partition."""
    strategy = _partition_selection().create_partition_strategy(
        "truncated_geometric", EPSILON, DELTA, 1
    )
    users = Counter(int(k) for k in data[:, 0])
    return frozenset(k for k, n in users.items() if strategy.should_keep(n))


_adapter = adapter_maker("python-dp", "pydp", epsilon=EPSILON)

pydp_bounded_sum = _adapter(
    "bounded-sum",
    'BoundedSum(epsilon=1, lower_bound=0, upper_bound=1, dtype="float").quick_result(x)',
    "Sum of the records' values, clamped by PyDP to [0, 1], Laplace noise: 1-DP under add/remove.",
    [(-1.0, 2.0)],
    (0, MAX_SIZE),
    _bounded("BoundedSum", bounds=True),
)
pydp_bounded_mean = _adapter(
    "bounded-mean",
    'BoundedMean(epsilon=1, lower_bound=0, upper_bound=1, dtype="float").quick_result(x)',
    "Mean of the records' values, clamped to [0, 1] (noisy normalised sum over noisy count): "
    "1-DP under add/remove.",
    [(-1.0, 2.0)],
    (0, MAX_SIZE),
    _bounded("BoundedMean", bounds=True),
)
pydp_count = _adapter(
    "count",
    'Count(epsilon=1, dtype="float").quick_result(x)',
    "Number of records (integer output): 1-DP under add/remove.",
    [(0.0, 1.0)],
    (0, MAX_SIZE),
    _count,
)
pydp_auto_bounds_sum = _adapter(
    "auto-bounds-sum",
    'BoundedSum(epsilon=1, dtype="float").quick_result(x) (no bounds: ApproxBounds infers them)',
    "Sum of the records' values, the bounds inferred privately by ApproxBounds from part of "
    "the budget, on datasets of 32 to 48 records (where ApproxBounds starts to succeed; it "
    "raises on smaller ones): 1-DP under add/remove, its exceptions included.",
    [(-1.0, 2.0)],
    AUTO_SIZES,
    _bounded("BoundedSum", bounds=False),
)
pydp_partition_selection = _adapter(
    "partition-selection",
    'create_partition_strategy("truncated_geometric", 1, 1e-5, 1).should_keep(users)',
    "The set of partition keys kept (a record is a key in {0, 1, 2}, one privacy unit each), "
    "each key kept or not by PyDP's truncated geometric partition selection on its number of "
    "users: (1, 1e-5)-DP under add/remove.",
    [[0, 1, 2]],
    (0, MAX_SIZE),
    _kept_partitions,
    delta=DELTA,
)

#: Every PyDP adapter, by name.
ADAPTERS: dict[str, LibraryAdapter] = by_name(
    pydp_bounded_sum,
    pydp_bounded_mean,
    pydp_count,
    pydp_auto_bounds_sum,
    pydp_partition_selection,
)
