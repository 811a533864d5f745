"""Learned features: scores trained on the selection samples to separate d0's outputs from d1's.

When no simple threshold, coordinate or projection separates the two output distributions,
DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers", IEEE S&P 2021, Section IV) trains a classifier for
``P[d0 | output]`` and thresholds it. We do the same with two small models, fitted only on the
selection samples (so certification on fresh samples stays sound):

* :class:`LogisticScore`: logistic regression on ``[x, x^2, missing(x)]`` per coordinate;
* :class:`BinnedRatioScore`: a per-coordinate histogram estimate of the log likelihood ratio,
  summed over coordinates (exact for independent coordinates such as a noisy histogram, where
  it finds "coordinate 0 high and coordinate 1 low" events that no projection can).

Unlike DP-Sniper we do not fix the event probability in advance; the threshold on the score
is chosen by the same certified-bound search as every other feature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.audit.events import sorted_quantiles

__all__ = [
    "BinnedRatioScore",
    "LogisticScore",
    "fit_binned_ratio",
    "fit_binned_ratio_scored",
    "fit_logistic",
]

#: At most this many rows per dataset are used to fit a model (fitting cost, not soundness).
MAX_TRAINING_ROWS = 5_000
#: Number of quantile bins per coordinate of the binned likelihood-ratio score.
RATIO_BINS = 40
#: Ridge penalty and Newton iterations of the logistic regression.
RIDGE = 1e-3
NEWTON_STEPS = 10


def _as_2d(outputs: np.ndarray) -> np.ndarray:
    return outputs.reshape(len(outputs), -1)


def _logistic_features(outputs: np.ndarray) -> np.ndarray:
    x = _as_2d(outputs)
    missing, z = _finite_part(x)
    return np.hstack([z, z * z, missing.astype(float)])


#: Finite values beyond this are clipped before squaring (x^2 and its variance stay finite).
_LARGEST = 1e75


def _finite_part(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(not_finite, z)``: which entries are NaN or infinite (the 'missing' feature: an
    infinite output would make the standardisation NaN and the fit meaningless), and the
    finite entries clipped to +-1e75 (0 elsewhere)."""
    with np.errstate(invalid="ignore"):
        missing = ~np.isfinite(x)
        z = np.clip(np.where(missing, 0.0, x), -_LARGEST, _LARGEST)
    return missing, z


@dataclass(frozen=True)
class LogisticScore:
    """Linear score of a logistic regression on ``[x, x^2, not finite]`` (standardised; NaN
    and infinite outputs count as 'not finite', their x set to 0)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]

    def values(self, outputs: np.ndarray) -> np.ndarray:
        # sum_j coef_j (f_j - mean_j) / scale_j, with the standardisation folded into the
        # weights (w_j = coef_j / scale_j): three products per coordinate and no (n, 3d)
        # feature array, which matters when every streamed batch is scored.
        x = _as_2d(outputs)
        d = x.shape[1]
        w = np.asarray(self.coef) / np.asarray(self.scale)
        missing, z = _finite_part(x)
        total = np.einsum("ij,j->i", z, w[:d]) + np.einsum("ij,j->i", z * z, w[d : 2 * d])
        if missing.any():
            total += np.einsum("ij,j->i", missing.astype(float), w[2 * d :])
        return total - float(np.dot(np.asarray(self.mean), w))

    def describe(self) -> str:
        return (
            "the score of a logistic-regression classifier trained to tell d0's outputs from d1's"
        )


def _training_rows(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if len(x) <= MAX_TRAINING_ROWS:
        return x
    return x[rng.choice(len(x), MAX_TRAINING_ROWS, replace=False)]


def fit_logistic(x0: np.ndarray, x1: np.ndarray, rng: np.random.Generator) -> LogisticScore:
    """Fit :class:`LogisticScore` by Newton's method with a small ridge penalty.

    Args:
        x0: selection outputs under d0 (label 1).
        x1: selection outputs under d1 (label 0).
        rng: used only to subsample large training sets.

    Returns:
        The fitted score.
    """
    a, b = _training_rows(x0, rng), _training_rows(x1, rng)
    feats = _logistic_features(np.concatenate([a, b]))
    mean = feats.mean(axis=0)
    scale = feats.std(axis=0)
    scale[scale == 0] = 1.0
    X = np.hstack([(feats - mean) / scale, np.ones((len(feats), 1))])
    y = np.concatenate([np.ones(len(a)), np.zeros(len(b))])
    w = np.zeros(X.shape[1])
    # einsum (no BLAS): threaded BLAS slows to a crawl on a loaded two-core machine, and these
    # products are small.
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(np.einsum("ij,j->i", X, w), -30, 30)))
        grad = np.einsum("ij,i->j", X, y - p) - RIDGE * len(y) * w
        weighted = X * (p * (1 - p))[:, None]
        hess = np.einsum("ij,ik->jk", weighted, X) + RIDGE * len(y) * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w += step
        if np.max(np.abs(step)) < 1e-8:
            break
    return LogisticScore(tuple(mean), tuple(scale), tuple(w[:-1]))


@dataclass(frozen=True)
class BinnedRatioScore:
    """Sum over coordinates of a binned estimate of ``ln(p_d0(x_j) / p_d1(x_j))``."""

    edges: tuple[tuple[float, ...], ...]
    log_ratios: tuple[tuple[float, ...], ...]

    def values(self, outputs: np.ndarray) -> np.ndarray:
        x = _as_2d(outputs)
        total = np.zeros(len(x))
        for j, (edges, ratios) in enumerate(zip(self.edges, self.log_ratios, strict=True)):
            total += np.asarray(ratios)[_bin(x[:, j], np.asarray(edges))]
        return total

    def describe(self) -> str:
        return (
            "the estimated log likelihood ratio of d0 to d1 (binned per coordinate,"
            " summed over coordinates)"
        )


def _bin(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin 0 holds missing values (NaN); bin i >= 1 the values in [edges[i-2], edges[i-1])."""
    missing = np.isnan(values)
    return np.where(missing, 0, 1 + _edges_at_or_below(edges, np.where(missing, 0.0, values)))


#: Cells per edge of :func:`_edges_at_or_below`'s lookup table, and most edges one cell may hold.
CELLS_PER_EDGE, MAX_CELL_EDGES = 64, 4


def _edges_at_or_below(edges: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted(edges, values, side="right")`` (no NaN), about three times faster.

    The values are put into equal cells over the edges' range by ``(v - low) * scale``,
    clipped at both ends and truncated (monotone in ``v``); ``first[c]`` counts the edges in
    cells before ``c``, and the few edges of ``v``'s own cell are compared one by one (edges
    in later cells are larger than ``v``, so comparing past the cell's end adds nothing).
    Exact; falls back to the binary search when edges crowd into one cell.
    """
    size = len(edges)
    span = float(edges[-1] - edges[0]) if size >= 2 else 0.0
    if not 0.0 < span < np.inf or len(values) < 8 * size:
        return np.searchsorted(edges, values, side="right")
    cells = CELLS_PER_EDGE * size
    low, scale = float(edges[0]), cells / span

    def cell(v: np.ndarray) -> np.ndarray:
        return np.clip((v - low) * scale, 0, cells - 1).astype(np.intp)

    own = cell(edges)
    depth = int(np.bincount(own).max())
    if not np.isfinite(scale) or depth > MAX_CELL_EDGES:
        return np.searchsorted(edges, values, side="right")
    first = np.searchsorted(own, np.arange(cells), "left")
    padded = np.concatenate([edges, np.full(depth, np.inf)])
    start = first[cell(values)]
    found = start.copy()
    for j in range(depth):
        found += padded[start + j] <= values
    return found


def fit_binned_ratio(x0: np.ndarray, x1: np.ndarray) -> BinnedRatioScore:
    """Fit :class:`BinnedRatioScore` from quantile bins of the pooled selection samples.

    Args:
        x0: selection outputs under d0.
        x1: selection outputs under d1.

    Returns:
        The fitted score (counts smoothed by 1/2 so empty bins stay finite).
    """
    return fit_binned_ratio_scored(x0, x1)[0]


def fit_binned_ratio_scored(
    x0: np.ndarray, x1: np.ndarray
) -> tuple[BinnedRatioScore, np.ndarray, np.ndarray]:
    """:func:`fit_binned_ratio` and the fitted score's values on ``x0`` and ``x1`` (the
    same numbers as ``score.values``, from the bins the fit computed anyway)."""
    a, b = _as_2d(x0), _as_2d(x1)
    edges_all, ratios_all = [], []
    total_a, total_b = np.zeros(len(a)), np.zeros(len(b))
    for j in range(a.shape[1]):
        va, vb = a[:, j], b[:, j]
        pooled = np.concatenate([va, vb])
        finite = pooled[np.isfinite(pooled)]
        # Few distinct values: they are the edges. (A prefix with more than RATIO_BINS of
        # them settles it without sorting everything.)
        few = len(np.unique(finite[: 8 * RATIO_BINS])) <= RATIO_BINS
        distinct = np.unique(finite) if few else finite[:0]
        if few and len(distinct) <= RATIO_BINS:
            edges = distinct
        else:
            # np.quantile's partition at 2 x 39 indices cost 3-6 ms per 10^5 values (NumPy
            # 2.4); one sort and the same interpolation cost a tenth (same numbers)
            q = np.linspace(0, 1, RATIO_BINS + 1)[1:-1]
            edges = np.unique(sorted_quantiles(np.sort(finite), q))
        bins_a, bins_b = _bin(va, edges), _bin(vb, edges)
        ca = np.bincount(bins_a, minlength=len(edges) + 2)
        cb = np.bincount(bins_b, minlength=len(edges) + 2)
        ratios = np.log((ca + 0.5) / (cb + 0.5)) + np.log(len(vb) / len(va))
        edges_all.append(tuple(edges.tolist()))
        ratios_all.append(tuple(ratios.tolist()))
        total_a += np.asarray(ratios_all[-1])[bins_a]  # as BinnedRatioScore.values sums them
        total_b += np.asarray(ratios_all[-1])[bins_b]
    return BinnedRatioScore(tuple(edges_all), tuple(ratios_all)), total_a, total_b
