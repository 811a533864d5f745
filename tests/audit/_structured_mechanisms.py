"""Mechanisms with structured outputs for tests/audit (module level: picklable for workers).

Counts use discrete Laplace noise (the difference of two geometric variables: Ghosh,
Roughgarden, Sundararajan 2009), exactly EPSILON-DP per count with sensitivity 1, so the
correct ones stay correct in floating point too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

EPSILON = 1.0


def discrete_laplace(rng: np.random.Generator, size: Any = None) -> Any:
    p = 1.0 - math.exp(-EPSILON)
    return rng.geometric(p, size) - rng.geometric(p, size)


def counts(data: Any) -> dict[str, int]:
    found: dict[str, int] = {}
    for group in data:
        found[group] = found.get(group, 0) + 1
    return found


def uncensored_group_by(data: Any, rng: np.random.Generator) -> dict[str, int]:
    """{group: noisy count} for the groups present: the key set leaks (smartnoise-sql's
    GROUP BY without censoring)."""
    return {g: int(c + discrete_laplace(rng)) for g, c in sorted(counts(data).items())}


def fixed_key_histogram(data: Any, rng: np.random.Generator) -> dict[str, int]:
    """{group: noisy count} over a fixed, public key set: EPSILON-DP for one added record."""
    found = counts(data)
    return {g: int(found.get(g, 0) + discrete_laplace(rng)) for g in ("a", "b", "c")}


def noisy_values_per_record(data: Any, rng: np.random.Generator) -> list[float]:
    """One value per record plus Laplace noise (real numbers: a variable-length sequence
    that never repeats; ragged sequences of integers stay categorical): the length is the
    dataset's size."""
    return [float(x + rng.laplace()) for x in data]


def none_when_empty(data: Any, rng: np.random.Generator) -> int | None:
    """A noisy count, or None when the data is empty (a library refusing small data)."""
    return None if len(data) == 0 else int(len(data) + discrete_laplace(rng))


def frame_group_by(data: Any, rng: np.random.Generator) -> Any:
    """The GROUP BY as a pandas DataFrame (default index, the group in a column)."""
    import pandas as pd

    released = uncensored_group_by(data, rng)
    return pd.DataFrame({"group": list(released), "count": list(released.values())})


def series_histogram(data: Any, rng: np.random.Generator) -> Any:
    """The fixed-key histogram as a pandas Series (index: the groups)."""
    import pandas as pd

    return pd.Series(fixed_key_histogram(data, rng), dtype=float)


def group_by_pairs(data: Any, rng: np.random.Generator) -> list[tuple[str, int]]:
    """The GROUP BY as a list of (group, noisy count) records (pipeline-dp's shape)."""
    return list(uncensored_group_by(data, rng).items())


class RaisesOnEmpty:
    """A noisy count that raises ValueError on an empty dataset (as pipeline-dp's "col must
    be non-empty"): the exception tells an observer the data is empty."""

    def __call__(self, data: Any, rng: np.random.Generator) -> float:
        if len(data) == 0:
            raise ValueError(f"data must be non-empty (noise {rng.random()})")
        return float(len(data) + discrete_laplace(rng))

    def batch(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        if len(data) == 0:
            raise ValueError("data must be non-empty")
        return len(data) + discrete_laplace(rng, n).astype(float)


class RaisesAtRandom:
    """The same count, raising RuntimeError with probability 0.3 whatever the data (its
    message holds a random number): exceptions that tell nothing; exactly EPSILON-DP."""

    def __call__(self, data: Any, rng: np.random.Generator) -> float:
        if rng.random() < 0.3:
            raise RuntimeError(f"flaky backend {rng.random():.6f}")
        return float(len(data) + discrete_laplace(rng))
