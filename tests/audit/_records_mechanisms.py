"""Functions over record datasets for the tests of ``audit_records`` (module level, so that
worker processes can import them).  Each says which neighbouring relation it is correct for."""

from __future__ import annotations

import numpy as np


def sanitised(values: np.ndarray) -> np.ndarray:
    """NaN read as 0 and infinities as the largest doubles, so that a clamp that follows bounds
    every value (np.clip alone passes NaN through)."""
    return np.nan_to_num(values, nan=0.0)


class ClippedSum:
    """Sum of column 0 clipped to [low, high], plus Laplace noise of scale ``scale``.

    Correct at epsilon when ``scale = sensitivity / epsilon``: sensitivity ``high - low``
    under replace-one, ``max(|low|, |high|)`` under add-remove; on every input, edge values
    included (NaN is read as 0 before the clamp: :func:`sanitised`).
    """

    def __init__(self, low: float, high: float, scale: float) -> None:
        self.low, self.high, self.scale = low, high, scale

    def total(self, data: np.ndarray) -> float:
        return float(np.clip(sanitised(data[:, 0]), self.low, self.high).sum())

    def __call__(self, data: np.ndarray, rng: np.random.Generator) -> float:
        return self.total(data) + rng.laplace(0.0, self.scale)

    def batch(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.total(data) + rng.laplace(0.0, self.scale, n)


class PassesNaN(ClippedSum):
    """The same clamped sum written as pipeline-dp 0.3.1 writes its SUM: ``np.clip`` alone,
    which passes NaN through. Correct on finite inputs; one NaN record makes every release NaN
    (no finite epsilon)."""

    def total(self, data: np.ndarray) -> float:
        return float(np.clip(data[:, 0], self.low, self.high).sum())


class ForgetsUpperClip(ClippedSum):
    """Claims a sum clipped to [0, 1] with noise for sensitivity 1, but clips only from
    below: broken for records above 1 (true epsilon ``high_of_domain * epsilon``)."""

    def total(self, data: np.ndarray) -> float:
        return float(np.maximum(sanitised(data[:, 0]), self.low).sum())


class TwoColumnSum:
    """Sum of both columns, each clipped to [0, 1], with noise calibrated for sensitivity 1.

    Replacing a record changes the output by at most 1 unless both columns move: the only
    pairs with true epsilon ``2 / scale`` replace a corner record (0, 0) by (1, 1) (NaN read
    as 0: :func:`sanitised`).
    """

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def batch(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return float(np.clip(sanitised(data), 0.0, 1.0).sum()) + rng.laplace(0.0, self.scale, n)

    def __call__(self, data: np.ndarray, rng: np.random.Generator) -> float:
        return float(self.batch(data, 1, rng)[0])


class NoisyHistogram:
    """Histogram of column 0 over the categories 0..k-1 with Laplace(scale) on every bin.

    With ``scale = 1 / epsilon`` it is epsilon-DP under add-remove (L1 sensitivity 1) but only
    2 epsilon-DP under replace-one (two bins move).
    """

    def __init__(self, k: int, scale: float) -> None:
        self.k, self.scale = k, scale

    def batch(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        counts = np.bincount(data[:, 0].astype(int), minlength=self.k)[: self.k]
        return counts + rng.laplace(0.0, self.scale, (n, self.k))

    def __call__(self, data: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.batch(data, 1, rng)[0]


def fails_on_empty(data: np.ndarray, rng: np.random.Generator) -> float:
    """Raises on an empty dataset (to test the error naming the datasets)."""
    if len(data) == 0:
        raise ZeroDivisionError("mean of no records")
    return float(data[:, 0].mean()) + rng.laplace()


def writes_its_input(data: np.ndarray, rng: np.random.Generator) -> float:
    """Clips its input in place (the datasets are read-only: refused)."""
    np.clip(data, 0, 1, out=data)
    return float(data.sum()) + rng.laplace()


class RaisesOnNonFinite(ClippedSum):
    """The clamped sum of a library that validates its input: raises ValueError on a NaN or
    infinite value (correct on every input it accepts: the clamp bounds the rest)."""

    def total(self, data: np.ndarray) -> float:
        if not np.isfinite(data).all():
            raise ValueError("input contains NaN or infinity")
        return super().total(data)


class NeedsRecords(ClippedSum):
    """The clamped sum of a library that refuses small datasets (PyDP's automatic bounds,
    pipeline-dp's "col must be non-empty"): raises ValueError on fewer than ``fewest`` records."""

    def __init__(self, low: float, high: float, scale: float, fewest: int) -> None:
        super().__init__(low, high, scale)
        self.fewest = fewest

    def total(self, data: np.ndarray) -> float:
        if len(data) < self.fewest:
            raise ValueError(f"needs at least {self.fewest} records, got {len(data)}")
        return super().total(data)


def always_raises(data: np.ndarray, rng: np.random.Generator) -> float:
    """Raises on every dataset."""
    raise RuntimeError("not implemented for these inputs")


class SizeScaledNoise:
    """The sum of column 0 clamped to [0, 1] (NaN read as 0), with Laplace noise whose scale
    is computed from the dataset size, ``2 / n``, as code calibrated for a mean would: under
    replace-one its true epsilon on datasets of ``n`` records is ``n / 2`` (sensitivity 1)."""

    def batch(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        total = float(np.clip(sanitised(data[:, 0]), 0.0, 1.0).sum())
        return total + rng.laplace(0.0, 2.0 / max(1, len(data)), n)

    def __call__(self, data: np.ndarray, rng: np.random.Generator) -> float:
        return float(self.batch(data, 1, rng)[0])


class CountingSum(ClippedSum):
    """:class:`ClippedSum` counting the outputs it is asked for (in this process only)."""

    def __init__(self, low: float, high: float, scale: float) -> None:
        super().__init__(low, high, scale)
        self.drawn = 0

    def batch(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        self.drawn += n
        return super().batch(data, n, rng)


# Textbook float noise: these claims are about real arithmetic, so the auditor's
# floating-point ('bits') family is left out (dpaudit.audit.audit, arithmetic).
for _textbook in (
    ClippedSum,
    PassesNaN,
    RaisesOnNonFinite,
    NeedsRecords,
    always_raises,
    SizeScaledNoise,
    CountingSum,
    ForgetsUpperClip,
    TwoColumnSum,
    NoisyHistogram,
    fails_on_empty,
    writes_its_input,
):
    _textbook.arithmetic = "real"  # type: ignore[attr-defined]


def frame_mean_income(df, rng):  # type: ignore[no-untyped-def]
    """Code written over a pandas DataFrame: the sum of 'income' clipped to [0, 1] plus Laplace
    noise of scale 1 (1-DP under replace-one: sensitivity 1)."""
    return float(df["income"].clip(0, 1).sum()) + rng.laplace(0.0, 1.0)


def frame_unclipped_income(df, rng):  # type: ignore[no-untyped-def]
    """The same claim, but the clipping was forgotten: records up to 10 move the sum by 10."""
    return float(df["income"].sum()) + rng.laplace(0.0, 1.0)


def _frame_batch(df, n, rng):  # type: ignore[no-untyped-def]
    return float(df["income"].clip(0, 1).sum()) + rng.laplace(0.0, 1.0, n)


def _frame_unclipped_batch(df, n, rng):  # type: ignore[no-untyped-def]
    return float(df["income"].sum()) + rng.laplace(0.0, 1.0, n)


frame_mean_income.batch = _frame_batch  # type: ignore[attr-defined]
frame_unclipped_income.batch = _frame_unclipped_batch  # type: ignore[attr-defined]
frame_mean_income.arithmetic = "real"  # type: ignore[attr-defined]
frame_unclipped_income.arithmetic = "real"  # type: ignore[attr-defined]


def records_count_positive(records, rng):  # type: ignore[no-untyped-def]
    """Code written over a list of records: how many have a positive first field, plus
    Laplace noise of scale 1 (1-DP under add-remove and replace-one)."""
    return sum(1 for r in records if r[0] > 0) + rng.laplace(0.0, 1.0)


def _records_batch(records, n, rng):  # type: ignore[no-untyped-def]
    return sum(1 for r in records if r[0] > 0) + rng.laplace(0.0, 1.0, n)


records_count_positive.batch = _records_batch  # type: ignore[attr-defined]
records_count_positive.arithmetic = "real"  # type: ignore[attr-defined]
