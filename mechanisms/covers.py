"""Exact nets and covers at small dimension, enumerated point by point.

The learners of documents 000, 001 and 003 run the exponential mechanism over a net of a
ball (after a random projection makes the dimension small), over a cover of a product of
balls (the toy neural networks of 001, Section 5), or over the finite class H_T of all
labelings of a subsample by a hypothesis class (003, Section 2.1).  These sets are
exponentially large in the dimension, so they are built exactly only where they are small;
every builder takes ``max_points`` and refuses (``ValueError``) beyond it rather than
approximate.  The exponential mechanism over them is then sampled exactly by the Gumbel-max
primitive (:class:`mechanisms.primitives.ExponentialMechanism`).

Nothing here reads private data except :func:`halfspace_labelings_2d`, whose input is the
subsample T (its data dependence is what :class:`dpaudit.events.stability.SubsampledCandidates`
accounts for).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

__all__ = [
    "ball_net",
    "ball_net_size_bound",
    "halfspace_labelings_2d",
    "product_indices",
    "product_net",
]

#: Default refusal threshold for enumerated nets.
MAX_POINTS = 200_000


def _positive(name: str, value: Any) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a number in (0, inf), got {value!r}")
    return v


def _dimension(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"dimension must be an integer in [1, inf), got {value!r}")
    return int(value)


def ball_net_size_bound(dimension: int, radius: float, scale: float) -> int:
    """The number of grid points :func:`ball_net` inspects (an upper bound on its size)."""
    m = _dimension(dimension)
    step = 2 * _positive("scale", scale) / math.sqrt(m)
    per_axis = 2 * math.floor((_positive("radius", radius) + scale) / step) + 1
    return per_axis**m


def ball_net(
    dimension: int, radius: float, scale: float, max_points: int = MAX_POINTS
) -> np.ndarray:
    """A ``scale``-net of the closed Euclidean ball of ``radius`` in R^dimension.

    Grid points of spacing 2 scale / sqrt(dimension) (so every point of space is within
    ``scale`` of one) within distance ``scale`` of the ball, projected onto the ball
    (projection onto a convex set is non-expansive, so the covering property survives), with
    duplicates removed.  Every returned point lies in the ball.

    Args:
        dimension: the dimension m >= 1.
        radius: the ball's radius (> 0).
        scale: the covering radius (> 0).
        max_points: refuse to enumerate more grid points than this.

    Returns:
        An array of shape (size, dimension).

    Raises:
        ValueError: for bad arguments, or when the grid exceeds ``max_points`` (naming it).
    """
    m = _dimension(dimension)
    r = _positive("radius", radius)
    s = _positive("scale", scale)
    total = ball_net_size_bound(m, r, s)
    if total > max_points:
        raise ValueError(
            f"max_points must be at least the grid size {total} for a {s}-net of "
            f"the radius-{r} ball in dimension {m}, got {max_points}"
        )
    step = 2 * s / math.sqrt(m)
    k = math.floor((r + s) / step)
    axis = step * np.arange(-k, k + 1)
    grid = np.array(np.meshgrid(*([axis] * m), indexing="ij")).reshape(m, -1).T
    norms = np.linalg.norm(grid, axis=1)
    grid = grid[norms <= r + s]
    norms = np.linalg.norm(grid, axis=1)
    outside = norms > r
    grid[outside] *= (r / norms[outside])[:, None]
    return np.unique(np.round(grid, 12), axis=0)


def product_net(
    radii: list[float], dimensions: list[int], scale: float, max_points: int = MAX_POINTS
) -> list[np.ndarray]:
    """A cover of a product of balls: one ``scale``-net per factor, enumerated jointly.

    Returns the list of per-factor nets; the product is enumerated by the caller with
    :func:`itertools.product` over indices (its size is the product of the sizes).

    Raises:
        ValueError: when the product exceeds ``max_points``.
    """
    nets = [ball_net(d, r, scale, max_points) for r, d in zip(radii, dimensions, strict=True)]
    size = math.prod(len(n) for n in nets)
    if size > max_points:
        raise ValueError(
            f"max_points must be at least the product-net size {size}, got {max_points}"
        )
    return nets


def product_indices(nets: list[np.ndarray]) -> np.ndarray:
    """All index tuples of the product of ``nets``, shape (size, len(nets))."""
    return np.array(list(itertools.product(*(range(len(n)) for n in nets))), dtype=np.int64)


def halfspace_labelings_2d(points: Any) -> np.ndarray:
    """One homogeneous halfspace x -> [<w, x> >= 0] of R^2 per labeling it induces on
    ``points`` (the class H_T of 003, Section 2.1, for T = points).

    Labels change only when w crosses a direction orthogonal to some point, so one unit
    vector between each pair of consecutive critical angles enumerates every labeling of
    points in general position exactly (labelings that need w exactly orthogonal to a point,
    a tie, are not represented); duplicates are removed.

    Args:
        points: an array of shape (k, 2).

    Returns:
        Unit vectors w, shape (number of distinct labelings, 2) (at most 2k rows).

    Raises:
        ValueError: if ``points`` is not a (k, 2) array of finite numbers.
    """
    pts = np.asarray(points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError(f"points must be a (k, 2) array of finite numbers, got shape {pts.shape}")
    base = np.arctan2(pts[:, 1], pts[:, 0])
    critical = np.sort(np.mod(np.concatenate([base + np.pi / 2, base - np.pi / 2]), 2 * np.pi))
    if critical.size == 0:
        angles = np.array([0.0])
    else:
        nxt = np.append(critical[1:], critical[0] + 2 * np.pi)
        angles = (critical + nxt) / 2
    w = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    labels = (pts @ w.T >= 0).T
    if labels.shape[1] <= 62:  # one integer code per labeling: fast exact deduplication
        codes = labels.astype(np.int64) @ (
            np.int64(1) << np.arange(labels.shape[1], dtype=np.int64)
        )
        _, keep = np.unique(codes, return_index=True)
    else:
        _, keep = np.unique(labels, axis=0, return_index=True)
    return w[np.sort(keep)]
