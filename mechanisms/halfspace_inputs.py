"""Input checks of the large-margin learners (source documents 000 and 001) and the
data-independent Johnson-Lindenstrauss projection to the unit sphere they start with
(000 Algorithm 1 steps 1-2)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev

REPLACE = ev.Relation.REPLACE_ONE


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _positive(name: str, value: Any, high: float | None = None) -> Any:
    if isinstance(value, sympy.Basic) and value.free_symbols:
        return value  # symbolic (a plan): its range is the claim's domain
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, {high or 'oo'}), got {value!r}") from None
    if not math.isfinite(v) or v <= 0 or (high is not None and v >= high):
        raise ValueError(f"{name} must be a number in (0, {high or 'oo'}), got {value!r}")
    return value


def _int(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, inf), got {value!r}")
    return int(value)


def _data(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or len(X) < 2 or not np.all(np.isfinite(X)):
        raise ValueError(
            f"X must be an (n, d) array of finite numbers with n >= 2, got shape {X.shape}"
        )
    if y.shape != (len(X),) or not np.all(np.isin(y, (-1, 1))):
        raise ValueError(f"y must be a length-{len(X)} array of labels in {{-1, +1}}")
    if np.any(np.linalg.norm(X, axis=1) > 1 + 1e-9):
        raise ValueError("X must have rows in the unit ball (normalise the data first)")
    return X, y.astype(np.int64)


def jl_matrix(m: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """The m x d matrix of i.i.d. +-1/sqrt(m) entries (000, Algorithm 1 step 1; Achlioptas
    2003).  Data-independent randomness, so it costs no privacy."""
    m, d = _int("m", m), _int("d", d)
    return (2 * _check_rng(rng).integers(0, 2, (m, d)) - 1) / math.sqrt(m)


def projection(m: int | None, d: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`jl_matrix` (m x d), or for ``m`` None the d x d identity: no projection, the
    practical regimes' choice when the data's own dimension is affordable (a fixed linear
    map, data-independent like the JL matrix; nothing is drawn)."""
    if m is None:
        return np.eye(_int("d", d))
    return jl_matrix(m, d, rng)


def project_to_sphere(X: np.ndarray, A: np.ndarray) -> np.ndarray:
    """x -> Ax / ||Ax|| row by row (000, Algorithm 1 step 2); Ax = 0 maps to 0.

    Privacy: applied record by record, so neighbouring datasets stay neighbours.
    """
    Z = np.asarray(X, dtype=float) @ np.asarray(A, dtype=float).T
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return np.divide(Z, norms, out=np.zeros_like(Z), where=norms > 0)


def projected_mechanism(
    learner: Any,
    features: Callable[[Any], tuple[np.ndarray, np.ndarray]],
    direction: Any,
    name: str,
) -> Callable[..., Any]:
    """An auditable form of a learner with ``fit(Z, y, rng)`` and ``fit_batch(Z, y, n, rng)``:
    ``mechanism(dataset, rng)`` is <w, direction> for the learned w on ``features(dataset)`` =
    (Z, y) (a post-processing of the output), with a vectorised ``.batch``."""
    u = np.asarray(direction, dtype=float)

    def mechanism(dataset: Any, rng: np.random.Generator) -> float:
        Z, y = features(dataset)
        return float(learner.fit(Z, y, _check_rng(rng)) @ u)

    def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        Z, y = features(dataset)
        return learner.fit_batch(Z, y, _int("n", n), _check_rng(rng)) @ u

    mechanism.batch = batch  # type: ignore[attr-defined]
    mechanism.name = name  # type: ignore[attr-defined]
    return mechanism
