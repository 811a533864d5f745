"""The data of the learning curves: per task synthetic distributions standard for it (for the
halfspace learners 000's margin distribution in d = 5, 20 and 100 dimensions; for the boolean
learners a decision list and a sparse disjunction) and two real tabular datasets bundled with
scikit-learn, no download needed (breast cancer, Wolberg et al., 569 rows, 30 features; the
handwritten digits, 1797 rows of 64 pixel columns, turned binary: digit 0-4 against 5-9),
each as a :class:`Dataset` that draws training and test rows from a seeded
``numpy.random.Generator``."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable

import numpy as np

from dpaudit.learners import LearnerInfo

__all__ = ["Dataset", "breast_cancer", "datasets_for", "digits", "synthetic"]

Draw = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A source of training and test rows.

    Attributes:
        name: short name (``margin d=20``, ``breast-cancer``, ...).
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


#: The features of the sparse disjunction (boolean synthetic data): x0 or x7 or x19.
DISJUNCTION = (0, 7, 19)


def synthetic(task: str, d: int, test: int = 1000, name: str | None = None) -> Dataset:
    """The synthetic data of a task.

    * ``halfspace`` (and any task not below): unit vectors of R^d with margin 0.1 around a
      random halfspace through the origin (000's distribution), labels -1/+1;
    * ``boolean``: uniform 0/1 vectors of length d labelled by the decision list "if x0 then
      1, elif not x2 then 0, else 1";
    * ``disjunction``: 0/1 vectors of length d with each bit 1 with probability 0.2, labelled
      by the sparse disjunction x0 or x7 or x19 (positive with probability 1 - 0.8^3 = 0.488);
    * ``threshold``: x uniform in [0, 1] (one feature), label x >= 0.37.

    Args:
        task: as above.
        d: the number of features.
        test: fresh test rows per seed.
        name: the dataset's name (default: ``"margin d=D"``, ``"decision list d=D"``,
            ``"disjunction d=D"`` or ``"threshold"``).

    Raises:
        ValueError: for d < 1 (< 3 for ``boolean``, < 20 for ``disjunction``) or test < 1.
    """
    low = {"boolean": 3, "disjunction": max(DISJUNCTION) + 1}.get(task, 1)
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
        return Dataset(name or f"decision list d={d}", text, draw_boolean, math.sqrt(d), True)
    if task == "disjunction":

        def draw_disjunction(n: int, rng: np.random.Generator) -> Draw:
            B = (rng.random((n + test, d)) < 0.2).astype(float)
            y = (B[:, list(DISJUNCTION)].max(axis=1) > 0).astype(int)
            return B[:n], y[:n], B[n:], y[n:]

        text = (
            f"0/1 vectors of length {d}, each bit 1 with probability 0.2, labelled by the sparse "
            f"disjunction x0 or x7 or x19; {test} fresh test rows per seed"
        )
        return Dataset(name or f"disjunction d={d}", text, draw_disjunction, math.sqrt(d), True)
    if task == "threshold":

        def draw_threshold(n: int, rng: np.random.Generator) -> Draw:
            x = rng.random((n + test, 1))
            y = (x[:, 0] >= 0.37).astype(int)
            return x[:n], y[:n], x[n:], y[n:]

        text = f"x uniform in [0, 1], label x >= 0.37; {test} fresh test rows per seed"
        return Dataset(name or "threshold", text, draw_threshold, 1.0, True)
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
    return Dataset(name or f"margin d={d}", text, draw, 1.0, False)


#: Breast-cancer columns in the order a learner of k features takes its first k (fixed in
#: advance, not chosen on the data): worst concave points, worst radius, then the rest.
_CANCER_ORDER = (27, 20, *[j for j in range(30) if j not in (27, 20)])


def _split(
    name: str, Z: np.ndarray, y: np.ndarray, norm: float, test_fraction: float, text: str
) -> Dataset:
    """A real dataset: per seed a random ``test_fraction`` of the rows held out, the first n
    of the rest for training."""
    test = round(len(Z) * float(test_fraction))

    def draw(n: int, rng: np.random.Generator) -> Draw:
        order = rng.permutation(len(Z))
        held, pool = order[:test], order[test:]
        if n > len(pool):
            raise ValueError(f"n must be at most {len(pool)} for {name}, got {n}")
        return Z[pool[:n]], y[pool[:n]], Z[held], y[held]

    shown = f"{text}; per seed a random {test}-row test split"
    return Dataset(name, shown, draw, norm, True, len(Z) - test)


def _norm(task: str, d: int) -> float:
    """A public bound on the rows' norm: 1 for [0, 1] thresholds of one feature (sqrt(d) for
    more), sqrt(d) for 0/1 features, sqrt(d)/2 for features in [-1/2, 1/2]."""
    if task in ("threshold", "boolean", "disjunction"):
        return math.sqrt(d)
    return math.sqrt(d) / 2


def _check_real(d: int | None, most: int, test_fraction: float) -> None:
    if d is not None and (
        isinstance(d, bool) or not isinstance(d, numbers.Integral) or not 1 <= d <= most
    ):
        raise ValueError(f"d must be an integer in [1, {most}] or None, got {d!r}")
    if not (isinstance(test_fraction, numbers.Real) and 0 < test_fraction < 1):
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")


def breast_cancer(task: str, d: int | None = None, test_fraction: float = 0.3) -> Dataset:
    """scikit-learn's bundled breast-cancer data (569 rows, 30 features; malignant = 0).

    Each seed splits the rows at random: ``test_fraction`` held out, the first n of the
    rest for training.  Features are scaled to [-1/2, 1/2] with each column's range over
    the whole file, and for ``boolean`` binarised at each column's median (the ranges and
    medians are treated as public, as diffprivlib's bounds are); ``threshold`` takes the
    features scaled to [0, 1], with malignant as label 1 (the class of large values, which
    thresholds x_j >= t name).  ``d`` keeps the first d columns of a fixed order (worst
    concave points, worst radius, then the rest).

    Raises:
        ValueError: for d outside [1, 30] or test_fraction outside (0, 1).
    """
    from sklearn.datasets import load_breast_cancer

    _check_real(d, 30, test_fraction)
    raw = load_breast_cancer()
    X = np.asarray(raw.data, dtype=float)[:, list(_CANCER_ORDER)]
    y = np.asarray(raw.target)
    low, high = X.min(axis=0), X.max(axis=0)
    U = (X - low) / np.where(high > low, high - low, 1.0)
    if task == "threshold":
        # thresholds x >= t name the positive class: malignant (label 1 here) has the larger
        # values of most features
        Z, y = U, 1 - y
        how = "features scaled to [0, 1]; label 1 = malignant"
    elif task in ("boolean", "disjunction"):
        Z = (np.median(X, axis=0) < X).astype(float)
        how = "features binarised at their medians"
    else:
        Z, how = U - 0.5, "features scaled to [-1/2, 1/2]"
    if d is not None:
        Z = Z[:, : int(d)]
    text = (
        f"scikit-learn's breast-cancer data ({len(Z)} rows, {Z.shape[1]} feature"
        f"{'' if Z.shape[1] == 1 else 's'}; {how})"
    )
    return _split("breast-cancer", Z, y, _norm(task, Z.shape[1]), test_fraction, text)


def digits(task: str, d: int | None = None, test_fraction: float = 0.3) -> Dataset:
    """scikit-learn's bundled handwritten digits (1797 rows of 8 x 8 pixels, 64 columns with
    values 0-16), turned binary: label 1 for the digits 5-9, 0 for 0-4 (balanced).

    Features: pixels / 16 - 1/2 in [-1/2, 1/2] (the pixel range 0-16 is public: no statistic
    of the data is used); for ``boolean`` the bits pixel >= 8; for ``threshold`` pixels / 16
    in [0, 1].  ``d`` keeps the first d pixels.

    Raises:
        ValueError: for d outside [1, 64] or test_fraction outside (0, 1).
    """
    from sklearn.datasets import load_digits

    _check_real(d, 64, test_fraction)
    raw = load_digits()
    X = np.asarray(raw.data, dtype=float)
    y = (np.asarray(raw.target) >= 5).astype(int)
    if task == "threshold":
        Z, how = X / 16, "pixels / 16 in [0, 1]"
    elif task in ("boolean", "disjunction"):
        Z, how = (X >= 8).astype(float), "bits pixel >= 8"
    else:
        Z, how = X / 16 - 0.5, "pixels / 16 - 1/2 in [-1/2, 1/2]"
    if d is not None:
        Z = Z[:, : int(d)]
    text = (
        f"scikit-learn's digits ({len(Z)} rows, {Z.shape[1]} pixel columns; {how}), "
        "binary: 5-9 against 0-4"
    )
    return _split("digits", Z, y, _norm(task, Z.shape[1]), test_fraction, text)


def datasets_for(info: LearnerInfo, test: int = 1000) -> list[Dataset]:
    """The learning curves' data for the learner's task (``test`` synthetic test rows per
    seed): halfspace (and other) learners: the margin distribution in d = 5, 20, 100;
    boolean learners: a decision list over 10 features and a sparse disjunction over 30;
    threshold learners: a threshold on [0, 1]; then, for every task, breast cancer and the
    binary digits.  A learner class's ``N_FEATURES`` (a plugin's learner of a fixed
    dimension) cuts every dataset to that many columns."""
    fixed = getattr(info.estimator, "N_FEATURES", None)
    if info.task == "boolean":
        synthetic_sets = [synthetic("boolean", fixed or 10, test)]
        synthetic_sets.append(synthetic("disjunction", max(fixed or 30, 20), test))
    elif info.task == "threshold":
        synthetic_sets = [synthetic("threshold", 1, test)]
    else:
        synthetic_sets = [synthetic(info.task, fixed or k, test) for k in (5, 20, 100)]
        if fixed:
            synthetic_sets = synthetic_sets[:1]
    return [*synthetic_sets, breast_cancer(info.task, fixed), digits(info.task, fixed)]
