"""Synthetic data for the learners of source documents 000, 001 and 003.

* :func:`margin_sample`: unit vectors in R^d labelled by a unit halfspace w* with margin at
  least gamma (000's distributions with margin gamma), optionally with label noise (001's
  non-separable setting, where only a confidence margin exists);
* :func:`lower_bound_code` and :func:`lower_bound_sample`: the packing construction of 000,
  Theorem 6 (codewords w^(i) in {+-1/sqrt d}^d at pairwise Hamming distance >= d/10, and
  D^(i): uniform on the sphere conditioned on |<w^(i), x>| >= gamma, labelled by sign);
* :func:`rings_sample`: two concentric rings in R^2 (not linearly separable; separable with a
  Gaussian kernel), for 001's kernel learner;
* :func:`plane_sample`: points in R^2 labelled in {0, 1} by a homogeneous halfspace with
  label noise, for 003's agnostic learners.

Every generator draws from an injected :class:`numpy.random.Generator`; none draws privacy
noise (they make data, not releases).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "lower_bound_code",
    "lower_bound_sample",
    "margin_sample",
    "plane_sample",
    "rings_sample",
    "zero_one_error",
]


def _rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _count(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, inf), got {value!r}")
    return int(value)


def _unit_interval(name: str, value: Any, high: float = 1.0) -> float:
    v = float(value)
    if not (0 <= v < high):
        raise ValueError(f"{name} must be in [0, {high}), got {value!r}")
    return v


def _sphere_conditioned(
    n: int, w: np.ndarray, margin: float, rng: np.random.Generator
) -> np.ndarray:
    """n points uniform on the unit sphere of R^d conditioned on |<w, x>| >= margin, exactly.

    For x uniform on the sphere, t = <w, x> has (1 + t)/2 ~ Beta((d-1)/2, (d-1)/2) and, given
    t, x - t w is uniform on the sphere of radius sqrt(1 - t^2) orthogonal to w.  The tail
    |t| >= margin is sampled by inverse survival function (no rejection, any dimension).
    """
    from scipy.stats import beta

    d = w.size
    shape = (d - 1) / 2
    tail = beta.sf((1 + margin) / 2, shape, shape)
    b = beta.isf(rng.random(n) * tail, shape, shape)
    t = np.clip(2 * b - 1, margin, 1.0) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    u = rng.standard_normal((n, d))
    u -= np.outer(u @ w, w)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return t[:, None] * w[None, :] + np.sqrt(1 - t**2)[:, None] * u


def margin_sample(
    n: int,
    d: int,
    margin: float,
    rng: np.random.Generator,
    *,
    w: Any = None,
    label_noise: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n labelled unit vectors with margin ``margin`` with respect to a unit w*.

    Points are uniform on the sphere of R^d conditioned on |<w*, x>| >= margin (000's
    lower-bound distributions have exactly this form) and labelled y = sign(<w*, x>) in
    {-1, +1}; each label is then flipped with probability ``label_noise``.

    Returns:
        (X of shape (n, d), y in {-1, +1} of shape (n,), w* of shape (d,)).

    Raises:
        ValueError: for bad sizes, a margin outside [0, 1), a noise rate outside [0, 1/2).
    """
    rng = _rng(rng)
    n, d = _count("n", n), _count("d", d, 2)
    g = _unit_interval("margin", margin)
    p = _unit_interval("label_noise", label_noise, 0.5)
    if w is None:
        w = rng.standard_normal(d)
    w = np.asarray(w, dtype=float)
    if w.shape != (d,) or not np.all(np.isfinite(w)) or not np.any(w):
        raise ValueError(f"w must be a non-zero finite vector of length {d}")
    w = w / np.linalg.norm(w)
    X = _sphere_conditioned(n, w, g, rng)
    y = np.where(X @ w >= 0, 1, -1)
    if p > 0:
        y = np.where(rng.random(n) < p, -y, y)
    return X, y, w


def lower_bound_code(
    d: int, rng: np.random.Generator, size: int | None = None, attempts: int = 20_000
) -> np.ndarray:
    """Codewords w^(1..K) in {+-1/sqrt d}^d with pairwise Hamming distance >= d/10
    (000, proof of Theorem 6; K = 2^(d/20) by default), built greedily from random words.

    Raises:
        ValueError: if the greedy search cannot find ``size`` words within ``attempts``.
    """
    rng = _rng(rng)
    d = _count("d", d, 2)
    k = _count("size", size) if size is not None else max(2, int(2 ** (d / 20)))
    need = math.ceil(d / 10)
    words: list[np.ndarray] = []
    for _ in range(attempts):
        cand = rng.integers(0, 2, d)
        if all(np.sum(cand != w) >= need for w in words):
            words.append(cand)
            if len(words) == k:
                return (2 * np.array(words) - 1) / math.sqrt(d)
    raise ValueError(
        f"size must be achievable by the greedy code search; found "
        f"{len(words)} of {k} words in {attempts} attempts"
    )


def lower_bound_sample(
    code: np.ndarray, index: int, n: int, margin: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """n samples of D^(index) of 000, Theorem 6: x uniform on the unit sphere conditioned on
    |<w^(i), x>| >= margin, y = sign(<w^(i), x>).

    Raises:
        ValueError: for an index outside the code, bad sizes or margin.
    """
    code = np.asarray(code, dtype=float)
    if not (isinstance(index, (int, np.integer)) and 0 <= index < len(code)):
        raise ValueError(f"index must be in [0, {len(code) - 1}], got {index!r}")
    X, y, _ = margin_sample(n, code.shape[1], margin, rng, w=code[index])
    return X, y


def rings_sample(
    n: int, rng: np.random.Generator, *, inner: float = 0.3, outer: float = 0.8, width: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """n points of R^2 on two rings: radius ~ ``inner`` labelled +1, ~ ``outer`` labelled -1.

    Raises:
        ValueError: for bad radii (need 0 < inner + width < outer - width, outer + width
            <= 1).
    """
    rng = _rng(rng)
    n = _count("n", n, 2)
    if not (inner - width > 0 and inner + width < outer - width and outer + width <= 1):
        raise ValueError(
            f"inner, outer, width must satisfy 0 < inner - width, inner + width <"
            f" outer - width, outer + width <= 1, got {inner}, {outer}, {width}"
        )
    y = np.where(rng.random(n) < 0.5, 1, -1)
    radius = np.where(y == 1, inner, outer) + rng.uniform(-width, width, n)
    angle = rng.uniform(0, 2 * np.pi, n)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1), y


def plane_sample(
    n: int, rng: np.random.Generator, *, angle: float = 0.7, label_noise: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """n points uniform in the unit disc, labelled 1 when <w, x> >= 0 for w at ``angle``,
    each label flipped with probability ``label_noise`` (an agnostic halfspace problem with
    Bayes error ``label_noise``).  Labels are in {0, 1} as in 003.
    """
    rng = _rng(rng)
    n = _count("n", n)
    p = _unit_interval("label_noise", label_noise, 0.5)
    r = np.sqrt(rng.random(n))
    t = rng.uniform(0, 2 * np.pi, n)
    X = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
    w = np.array([math.cos(angle), math.sin(angle)])
    y = (X @ w >= 0).astype(np.int64)
    flip = rng.random(n) < p
    return X, np.where(flip, 1 - y, y)


def zero_one_error(predictions: Any, labels: Any) -> float:
    """The fraction of predictions that differ from the labels."""
    p, y = np.asarray(predictions), np.asarray(labels)
    if p.shape != y.shape:
        raise ValueError(f"predictions and labels must have one shape, got {p.shape} and {y.shape}")
    return float(np.mean(p != y))
