"""The binned likelihood-ratio score (dpaudit.audit.classifier): its bins, and the values the
fit returns with it (the streamed proposal uses them instead of scoring the pilot again)."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.audit.classifier import RATIO_BINS, fit_binned_ratio, fit_binned_ratio_scored


def _samples(kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if kind == "laplace":
        return rng.laplace(0.0, 1.0, 5_000), rng.laplace(1.0, 1.0, 5_000)
    if kind == "vector-with-nan":
        x0, x1 = rng.normal(size=(3_000, 3)), rng.normal(0.5, 1.0, size=(3_000, 3))
        x0[rng.random(x0.shape) < 0.05] = np.nan
        x1[rng.random(x1.shape) < 0.05] = np.inf
        return x0, x1
    # few distinct values: they are the edges
    return rng.integers(0, 5, 4_000).astype(float), rng.integers(0, 6, 4_000).astype(float)


@pytest.mark.parametrize("kind", ["laplace", "vector-with-nan", "few-values"])
def test_the_fit_returns_the_scores_values_bit_for_bit(kind: str) -> None:
    x0, x1 = _samples(kind, np.random.default_rng(3))
    score, v0, v1 = fit_binned_ratio_scored(x0, x1)
    assert score == fit_binned_ratio(x0, x1)
    assert np.array_equal(v0, score.values(x0)) and np.array_equal(v1, score.values(x1))


def test_the_edges_are_numpys_quantiles_of_the_pooled_samples() -> None:
    rng = np.random.default_rng(5)
    x0, x1 = rng.laplace(0.0, 1.0, 20_001), rng.laplace(0.3, 2.0, 19_000)
    score = fit_binned_ratio(x0, x1)
    pooled = np.concatenate([x0, x1])
    expected = np.unique(np.quantile(pooled, np.linspace(0, 1, RATIO_BINS + 1)[1:-1]))
    assert np.array_equal(np.array(score.edges[0]), expected)
