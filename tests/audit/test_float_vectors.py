"""The ``bits`` family on vector outputs: each coordinate of a noisy histogram or of a model's
coefficients is a double, and textbook floating-point noise leaks through its bits there as
it does for a scalar (Mironov 2012).

Every audit here is at confidence 0.95 (alpha = 0.05) with 10^5 samples per dataset and a
fixed seed.
"""

from __future__ import annotations

import numpy as np

from dpaudit.audit import audit
from dpaudit.audit.events import FloatClassEvent
from mechanisms.floating_point import snap

SAMPLES = 100_000
EPSILON = 0.1


def naive_histogram(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Textbook Laplace histogram in doubles (sensitivity 1 per count under add/remove)."""
    return np.asarray(counts, dtype=float) + rng.laplace(0.0, 1.0 / EPSILON, len(counts))


def _naive_batch(counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    return c + rng.laplace(0.0, 1.0 / EPSILON, (n, len(c)))


naive_histogram.batch = _naive_batch  # type: ignore[attr-defined]

SCALE = (1.0 + 2.0**-49 * 100.0) / EPSILON  # Mironov 2012, Theorem 1, bound B = 100


def snapped_histogram(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The snapping mechanism on each count (epsilon-DP per count, Mironov 2012 Thm 1)."""
    return np.array([snap(float(c), SCALE, 100.0, 1, rng)[0] for c in counts])


def _snapped_batch(counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return np.stack([snap(float(c), SCALE, 100.0, n, rng) for c in counts], axis=1)


snapped_histogram.batch = _snapped_batch  # type: ignore[attr-defined]

D0 = np.array([3.0, 1.0, 4.0])
D1 = np.array([3.0, 0.0, 4.0])  # one record removed from the second bin


def test_naive_histogram_is_flagged_through_the_bits_of_the_changed_count() -> None:
    """Fails on a broken auditor: with the bits family off (``arithmetic="real"``) the same
    audit certifies below the claimed 0.1 (the real-number claim holds)."""
    result = audit(naive_histogram, D0, D1, epsilon=EPSILON, samples=SAMPLES, seed=3)
    assert result.violation and result.family == "bits", str(result)
    assert result.epsilon_lower > 1.0
    assert result.event.startswith("coordinate 1 is in")  # the count that changed
    blind = audit(
        naive_histogram, D0, D1, epsilon=EPSILON, samples=SAMPLES, seed=3, arithmetic="real"
    )
    assert not blind.violation and blind.epsilon_lower <= EPSILON


def test_snapped_histogram_is_not_flagged() -> None:
    """The safe counterpart, with the bits family searched on every coordinate."""
    result = audit(snapped_histogram, D0, D1, epsilon=EPSILON, samples=SAMPLES, seed=3)
    assert not result.violation, str(result)
    assert result.epsilon_lower <= EPSILON


def test_vector_class_event_reads_its_coordinate() -> None:
    from dpaudit.audit.float_bits import class_keys

    key = class_keys()[0]
    outputs = np.array([[0.3, 1.0], [0.3, 2.0]])
    code = int(key.codes(np.array([1.0]))[0])
    event = FloatClassEvent(key, (code,), coordinate=1)
    assert event.contains(outputs).tolist() == [True, False]
