"""Outputs that are infinite, or finite but huge, are features like any other: no NaN
standardisation, no overflow warnings, and the verdicts stay right (issue 15)."""

from __future__ import annotations

import warnings

import numpy as np

from dpaudit.audit import audit


def saturating(x: float, rng: np.random.Generator) -> float:
    """Laplace(1) mechanism whose large outputs are reported as +inf: post-processing of a
    1-DP mechanism (the threshold 3 does not depend on the data), so 1-DP."""
    v = x + rng.laplace(0.0, 1.0)
    return float("inf") if v > 3 else v


saturating.arithmetic = "real"  # type: ignore[attr-defined]


def vector_with_inf(x: float, rng: np.random.Generator) -> np.ndarray:
    """A 1-DP pair of coordinates whose second one is +inf when the first exceeds 2 (again a
    data-independent post-processing)."""
    out = np.array([x + rng.laplace(), rng.laplace()])
    if out[0] > 2:
        out[1] = np.inf
    return out


# 1-DP in real arithmetic; in doubles x + Laplace leaks through the first coordinate's bits
# (the bits family flags it, tests/audit/test_float_vectors.py): the claim here is the real one
vector_with_inf.arithmetic = "real"  # type: ignore[attr-defined]


def huge(x: float, rng: np.random.Generator) -> np.ndarray:
    """Broken: releases x scaled by 1e200 with noise of scale 1 (no finite epsilon)."""
    return np.array([x * 1e200 + rng.laplace(), 0.0])


def test_infinite_and_huge_outputs_audit_without_warnings() -> None:
    """alpha = 0.05 each, 20,000 samples per side: the two correct mechanisms are not flagged
    at their epsilon 1, the broken one is; no RuntimeWarning on the way (the classifier once
    standardised infinite features into NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ok_scalar = audit(saturating, 1.0, 0.0, epsilon=1.0, samples=20_000, seed=0)
        ok_vector = audit(vector_with_inf, 1.0, 0.0, epsilon=1.0, samples=20_000, seed=0)
        broken = audit(huge, 1.0, 0.0, epsilon=1.0, samples=20_000, seed=0)
    assert not ok_scalar.violation and not ok_vector.violation
    assert broken.violation and broken.epsilon_lower > 5
