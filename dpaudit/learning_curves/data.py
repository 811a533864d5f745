"""The data of the learning curves: per task a synthetic distribution standard for it, and
scikit-learn's bundled breast-cancer data (Wolberg et al., 569 rows, 30 features), each as a
:class:`Dataset` that draws training and test rows from a seeded ``numpy.random.Generator``."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable

import numpy as np

from dpaudit.learners import LearnerInfo

__all__ = ["Dataset", "breast_cancer", "datasets_for", "synthetic"]

Draw = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A source of training and test rows.

    Attributes:
        name: short name (``synthetic`` / ``breast-cancer``).
        description: one sentence on the distribution and preprocessing.
        draw: ``draw(n, rng)`` -> (X_train of n rows, y_train, X_test, y_test).
        feature_norm: a public bound on the rows' Euclidean norm (given to the learners that
            take ``feature_norm`` and to diffprivlib as ``data_norm``).
        fit_intercept: whether the classes are split by a halfspace through the origin
            (False) or need an intercept (True).
        max_n: the largest training size available (None: unbounded).
    """

    name: str
    description: str
    draw: Callable[[int, np.random.Generator], Draw]
    feature_norm: float = 1.0
    fit_intercept: bool = False
    max_n: int | None = None


def _margin_rows(
    n: int, w: np.ndarray, margin: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """n unit vectors of R^d with |<w, x>| >= margin (uniform on the sphere, by rejection),
    labelled sign(<w, x>) in {-1, +1}: 000's margin distribution."""
    rows: list[np.ndarray] = []
    have = 0
    while have < n:
        Z = rng.standard_normal((2 * (n - have) + 16, w.size))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        Z = Z[np.abs(Z @ w) >= margin]
        rows.append(Z)
        have += len(Z)
    X = np.concatenate(rows)[:n]
    return X, np.where(X @ w >= 0, 1, -1)


def synthetic(task: str, d: int, test: int = 1000) -> Dataset:
    """The synthetic data of a task.

    * ``halfspace`` (and any task not below): unit vectors of R^d with margin 0.1 around a
      random halfspace through the origin (000's distribution), labels -1/+1;
    * ``boolean``: uniform 0/1 vectors of length d labelled by the decision list "if x0 then
      1, elif not x2 then 0, else 1";
    * ``threshold``: x uniform in [0, 1] (one feature), label x >= 0.37.

    Raises:
        ValueError: for d < 1 (or < 3 for ``boolean``) or test < 1.
    """
    low = 3 if task == "boolean" else 1
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < low:
        raise ValueError(f"d must be an integer in [{low}, inf), got {d!r}")
    if isinstance(test, bool) or not isinstance(test, numbers.Integral) or test < 1:
        raise ValueError(f"test must be an integer in [1, inf), got {test!r}")

    if task == "boolean":

        def draw_boolean(n: int, rng: np.random.Generator) -> Draw:
            B = (rng.random((n + test, d)) < 0.5).astype(float)
            y = np.where(B[:, 0] == 1, 1, np.where(B[:, 2] == 0, 0, 1))
            return B[:n], y[:n], B[n:], y[n:]

        text = (
            f"uniform 0/1 vectors of length {d}, labelled by the decision list 'if x0 then 1, "
            f"elif not x2 then 0, else 1'; {test} fresh test rows per seed"
        )
        return Dataset("synthetic", text, draw_boolean, math.sqrt(d), True)
    if task == "threshold":

        def draw_threshold(n: int, rng: np.random.Generator) -> Draw:
            x = rng.random((n + test, 1))
            y = (x[:, 0] >= 0.37).astype(int)
            return x[:n], y[:n], x[n:], y[n:]

        text = f"x uniform in [0, 1], label x >= 0.37; {test} fresh test rows per seed"
        return Dataset("synthetic", text, draw_threshold, 1.0, True)
    if d < 2:
        raise ValueError(f"d must be an integer in [2, inf) for task {task!r}, got {d!r}")

    def draw(n: int, rng: np.random.Generator) -> Draw:
        w = rng.standard_normal(d)
        w /= np.linalg.norm(w)
        X, y = _margin_rows(n + test, w, 0.1, rng)
        return X[:n], y[:n], X[n:], y[n:]

    text = (
        f"unit vectors of R^{d} with margin 0.1 around a random halfspace through the origin "
        f"(000's distribution); {test} fresh test rows per seed"
    )
    return Dataset("synthetic", text, draw, 1.0, False)


#: Breast-cancer columns in the order a learner of k features takes its first k (fixed in
#: advance, not chosen on the data): worst concave points, worst radius, then the rest.
_CANCER_ORDER = (27, 20, *[j for j in range(30) if j not in (27, 20)])


def breast_cancer(task: str, d: int | None = None, test_fraction: float = 0.3) -> Dataset:
    """scikit-learn's bundled breast-cancer data (569 rows, 30 features; malignant = 0).

    Each seed splits the rows at random: ``test_fraction`` held out, the first n of the
    rest for training.  Features are scaled to [-1/2, 1/2] with each column's range over
    the whole file, and for ``boolean`` binarised at each column's median (the ranges and
    medians are treated as public, as diffprivlib's bounds are); ``threshold`` takes worst
    concave points scaled to [0, 1], with malignant as label 1 (the class of large values,
    which a threshold x >= t names).  ``d`` keeps the first d columns of a fixed order
    (worst concave points, worst radius, then the rest).

    Raises:
        ValueError: for d outside [1, 30] or test_fraction outside (0, 1).
    """
    from sklearn.datasets import load_breast_cancer

    if d is not None and (
        isinstance(d, bool) or not isinstance(d, numbers.Integral) or not 1 <= d <= 30
    ):
        raise ValueError(f"d must be an integer in [1, 30] or None, got {d!r}")
    if not (isinstance(test_fraction, numbers.Real) and 0 < test_fraction < 1):
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    raw = load_breast_cancer()
    X = np.asarray(raw.data, dtype=float)[:, list(_CANCER_ORDER)]
    y = np.asarray(raw.target)
    low, high = X.min(axis=0), X.max(axis=0)
    U = (X - low) / np.where(high > low, high - low, 1.0)
    if task == "threshold":
        # thresholds x >= t name the positive class: malignant (label 1 here) has the larger
        # worst concave points
        Z, y = U[:, :1], 1 - y
        norm, how = 1.0, "worst concave points scaled to [0, 1]; label 1 = malignant"
    elif task == "boolean":
        Z = (np.median(X, axis=0) < X).astype(float)
        norm, how = math.sqrt(Z.shape[1]), "features binarised at their medians"
    else:
        Z, how = U - 0.5, "features scaled to [-1/2, 1/2]"
        norm = 0.0
    if d is not None:
        Z = Z[:, : int(d)]
    if task not in ("threshold", "boolean"):
        norm = math.sqrt(Z.shape[1]) / 2
    test = round(len(Z) * float(test_fraction))

    def draw(n: int, rng: np.random.Generator) -> Draw:
        order = rng.permutation(len(Z))
        held, pool = order[:test], order[test:]
        if n > len(pool):
            raise ValueError(f"n must be at most {len(pool)} for breast-cancer, got {n}")
        return Z[pool[:n]], y[pool[:n]], Z[held], y[held]

    text = (
        f"scikit-learn's breast-cancer data ({len(Z)} rows, {Z.shape[1]} feature"
        f"{'' if Z.shape[1] == 1 else 's'}; {how}); per seed a random {test}-row test split"
    )
    return Dataset("breast-cancer", text, draw, norm, True, len(Z) - test)


def datasets_for(info: LearnerInfo, d: int = 10, test: int = 1000) -> list[Dataset]:
    """The synthetic data of the learner's task (d features, or the learner's
    ``N_FEATURES``; ``test`` test rows per seed) and the breast-cancer data (cut to
    ``N_FEATURES`` columns if set)."""
    fixed = getattr(info.estimator, "N_FEATURES", None)
    return [synthetic(info.task, fixed or d, test), breast_cancer(info.task, fixed)]
