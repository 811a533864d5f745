"""Event texts read plainly (issue 32, item 7): NaN and infinite outputs have events of their
own, and numbers print with enough digits to tell them apart.

The audits: 20,000 samples per dataset (25% selection), confidence 0.95, seed 0; the
NaN record makes every output NaN under one dataset and none under the other, a zero-count
witness (certified ln(15000 / 4.4) = 8.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit import audit
from dpaudit.audit.events import Identity, NonFiniteEvent, ThresholdEvent, plain_intervals

BIG = 2.0**52


def nan_through_clamp(data: Any, rng: np.random.Generator) -> float:
    """A clamped sum that lets NaN through (np.clip passes NaN: pipeline-dp 0.3.1)."""
    return float(nan_through_clamp.batch(data, 1, rng)[0])


def _clamp_batch(data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    return np.clip(np.asarray(data, float), 0, 1).sum() + rng.laplace(0.0, 1.0, n)


nan_through_clamp.batch = _clamp_batch  # type: ignore[attr-defined]


def test_a_nan_leak_reads_as_the_output_is_nan() -> None:
    d0, d1 = [0.5, 0.5], [0.5, np.nan]
    result = audit(nan_through_clamp, d0, d1, epsilon=1.0, samples=20_000, seed=0)
    assert result.violation  # the event was a learned score before the non-finite events
    assert result.event in ("the output is NaN", "the output is not NaN"), result.event


def test_either_direction_of_a_nan_leak_reads_plainly() -> None:
    """A one-record mean: d0's outputs are numbers and d1's all NaN, so the certifying event
    may put d0 in the numerator; its complement then reads "is not NaN" (it read as a
    logistic-regression score threshold before the complement kinds existed)."""
    for d0, d1 in (([0.0], [np.nan]), ([np.nan], [0.0])):
        result = audit(nan_through_clamp, d0, d1, epsilon=1.0, samples=2_000, seed=0)
        assert result.violation
        assert result.event in ("the output is NaN", "the output is not NaN"), result.event


def test_non_finite_events() -> None:
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    got = {k: NonFiniteEvent(k).contains(x).tolist() for k in ("nan", "+inf", "-inf")}
    assert got == {
        "nan": [True, False, False, False],
        "+inf": [False, True, False, False],
        "-inf": [False, False, True, False],
    }
    assert NonFiniteEvent("non-finite").describe() == "the output is NaN or infinite"
    assert NonFiniteEvent("not-nan").contains(x).tolist() == [False, True, True, True]
    assert NonFiniteEvent("finite").contains(x).tolist() == [False, False, False, True]
    assert NonFiniteEvent("finite").describe() == "the output is a finite number"
    rows = np.array([[np.nan, 0.0], [np.nan, 1.0]])  # column 1: "the output is None"
    assert NonFiniteEvent("nan", 0, "the output", absent=(1,)).contains(rows).tolist() == [
        True,
        False,
    ]


def test_thresholds_near_two_to_the_52_print_exactly() -> None:
    event = ThresholdEvent(Identity(), BIG + 1, True)
    assert event.describe() == "the output >= 4503599627370497"
    assert ThresholdEvent(Identity(), 0.1234567891, False).describe() == "the output <= 0.123457"


@dataclass(frozen=True)
class DistanceTo:
    """``-|x - centre|``: its thresholds are intervals around ``centre``."""

    centre: float

    def values(self, outputs: np.ndarray) -> np.ndarray:
        return -np.abs(np.asarray(outputs, float) - self.centre)

    def describe(self) -> str:
        return "minus the distance to the centre"


def test_interval_ends_are_told_apart() -> None:
    grid = BIG + np.arange(-8.0, 9.0, 2.0)
    event = ThresholdEvent(DistanceTo(BIG), -2.0, True)
    text = plain_intervals(event, grid=grid)
    # before: "the output in [4.504e+15, 4.504e+15]"
    assert text == "the output in [4503599627370494, 4503599627370498]"
    single = ThresholdEvent(DistanceTo(BIG), 0.0, True)
    assert plain_intervals(single, grid=grid) == "the output = 4.504e+15"
    near_one = ThresholdEvent(DistanceTo(1.0), -0.7, True)
    ordinary = plain_intervals(near_one, grid=np.linspace(-4, 4, 9) / 3 + 1)
    assert ordinary == "the output in [0.3333, 1.667]"  # four digits suffice as before
