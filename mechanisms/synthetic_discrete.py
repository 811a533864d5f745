"""Synthetic data for the learners of source documents 002 and 004.

Generators for the utility checks of :mod:`mechanisms.exponential_learner`,
:mod:`mechanisms.decision_lists` and :mod:`mechanisms.winnow`:

* labelled points on a grid for the finite-class PAC learner of Lecture 4 (002),
* random feature-decision lists and samples labelled by them (004, Section 3),
* streams labelled by a rho-margin halfspace with a non-negative weight vector (004,
  Section 4): the majority of ``k`` (odd) out of ``d`` coordinates has margin exactly
  ``1/k``.

Every generator draws from an injected :class:`numpy.random.Generator`; none of them draws
privacy noise (they make data, not releases).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np

__all__ = [
    "DecisionList",
    "grid_threshold_sample",
    "literal_features",
    "majority_halfspace_stream",
    "random_decision_list",
]


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _positive_int(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, inf), got {value!r}")
    return int(value)


def _probability(
    name: str, value: Any, *, low_open: bool = False, high_open: bool = False
) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    v = float(value) if ok else float("nan")
    lo_ok = v > 0 if low_open else v >= 0
    hi_ok = v < 1 if high_open else v <= 1
    if not (ok and lo_ok and hi_ok):
        lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
        raise ValueError(f"{name} must be a number in {lo}0, 1{hi}, got {value!r}")
    return v


def grid_threshold_sample(
    n: int, grid_size: int, threshold: int, rng: np.random.Generator, label_noise: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """n points uniform on {0, ..., grid_size-1}, labelled +1 iff x >= threshold.

    Args:
        n: sample size, >= 1.
        grid_size: number of grid points, >= 2.
        threshold: the target threshold, in [0, grid_size].
        rng: the data generator.
        label_noise: probability of flipping each label, in [0, 1/2) (agnostic case).

    Returns:
        (x, y): int64 points and labels in {-1, +1}.

    Raises:
        ValueError: on a parameter outside its range.
    """
    rng = _check_rng(rng)
    n = _positive_int("n", n)
    grid_size = _positive_int("grid_size", grid_size, 2)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, np.integer))
        or not (0 <= threshold <= grid_size)
    ):
        raise ValueError(f"threshold must be an integer in [0, {grid_size}], got {threshold!r}")
    noise = _probability("label_noise", label_noise)
    if noise >= 0.5:
        raise ValueError(f"label_noise must be a number in [0, 0.5), got {label_noise!r}")
    x = rng.integers(0, grid_size, size=n)
    y = np.where(x >= threshold, 1, -1)
    flips = rng.random(n) < noise
    return x.astype(np.int64), np.where(flips, -y, y).astype(np.int64)


def literal_features(x: Any) -> np.ndarray:
    """The 2d literal features of Boolean points: columns x_1..x_d then (not x_1)..(not x_d).

    Args:
        x: an (n, d) array of 0/1 values.

    Returns:
        An (n, 2d) bool array.

    Raises:
        ValueError: if ``x`` is not a 2-D 0/1 array.
    """
    arr = np.asarray(x)
    if arr.ndim != 2 or not np.isin(arr, (0, 1)).all():
        raise ValueError(f"x must be a 2-D array of 0/1 values, got shape {arr.shape}")
    b = arr.astype(bool)
    return np.concatenate([b, ~b], axis=1)


@dataclasses.dataclass(frozen=True)
class DecisionList:
    """An F-decision list "if f_1 then b_1, else if f_2 then b_2, ..., else default" (004,
    Section 2), over features given by index into a feature matrix.

    Attributes:
        terms: ((feature index, bit), ...) with bit in {0, 1}.
        default: the final bit (the rule (T, b) with T the constant-true feature).
    """

    terms: tuple[tuple[int, int], ...]
    default: int

    def __post_init__(self) -> None:
        terms = tuple((int(f), int(b)) for f, b in self.terms)
        for f, b in terms:
            if f < 0 or b not in (0, 1):
                raise ValueError(
                    f"terms must be (feature index >= 0, bit in {{0, 1}}), got {(f, b)}"
                )
        if self.default not in (0, 1):
            raise ValueError(f"default must be a bit in {{0, 1}}, got {self.default!r}")
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "default", int(self.default))

    def __len__(self) -> int:
        return len(self.terms) + 1

    def predict(self, features: Any) -> np.ndarray:
        """The list's bit on each row of an (n, M) Boolean feature matrix.

        Raises:
            ValueError: if a term's feature index is outside the matrix.
        """
        f = np.asarray(features, dtype=bool)
        if f.ndim != 2:
            raise ValueError(f"features must be a 2-D array, got shape {f.shape}")
        out = np.full(f.shape[0], self.default, dtype=np.int64)
        decided = np.zeros(f.shape[0], dtype=bool)
        for index, bit in self.terms:
            if index >= f.shape[1]:
                raise ValueError(f"term feature {index} outside the {f.shape[1]} features")
            fire = f[:, index] & ~decided
            out[fire] = bit
            decided |= fire
        return out

    def alternations(self) -> int:
        """How often the output bit changes along the list (terms, then the default)."""
        bits = [b for _, b in self.terms] + [self.default]
        return sum(1 for a, b in itertools.pairwise(bits) if a != b)


def random_decision_list(
    n_features: int, length: int, rng: np.random.Generator, alternations: int | None = None
) -> DecisionList:
    """A random F-decision list with ``length - 1`` distinct features and a default bit.

    Args:
        n_features: size M of the feature set, >= length - 1.
        length: number of rules including the default, >= 1.
        rng: the data generator.
        alternations: if given, the exact number of bit changes along the list, in
            [0, length - 1]; otherwise bits are uniform.

    Returns:
        A :class:`DecisionList`.

    Raises:
        ValueError: on a parameter outside its range.
    """
    rng = _check_rng(rng)
    m = _positive_int("n_features", n_features)
    r = _positive_int("length", length)
    if r - 1 > m:
        raise ValueError(f"length must be in [1, n_features + 1] = [1, {m + 1}], got {length}")
    features = rng.choice(m, size=r - 1, replace=False)
    if alternations is None:
        bits = rng.integers(0, 2, size=r).tolist()
    else:
        if (
            isinstance(alternations, bool)
            or not isinstance(alternations, int)
            or not (0 <= alternations <= r - 1)
        ):
            raise ValueError(
                f"alternations must be an integer in [0, {r - 1}], got {alternations!r}"
            )
        changes = np.zeros(r - 1, dtype=int)
        changes[rng.choice(r - 1, size=alternations, replace=False)] = 1
        first = int(rng.integers(0, 2))
        bits = [first, *((first + np.cumsum(changes)) % 2).tolist()]
    return DecisionList(tuple(zip(features.tolist(), bits[:-1], strict=True)), bits[-1])


def majority_halfspace_stream(
    d: int, k: int, length: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A stream labelled by the majority of ``k`` random coordinates of {-1, 1}^d.

    The target v puts weight 1/k on each of the k coordinates (v >= 0, ||v||_1 = 1), so
    y <v, x> = |sum of k signs| / k >= 1/k for odd k: a rho-margin halfspace with rho = 1/k
    (004, Section 2), as Lemma 4.2 and Theorem 4.5 assume.

    Args:
        d: dimension, >= k.
        k: number of relevant coordinates, odd, >= 1.
        length: number of examples T, >= 1.
        rng: the data generator.

    Returns:
        (x, y, v, rho): x an (T, d) int8 array in {-1, 1}, y in {-1, 1}, the target v, 1/k.

    Raises:
        ValueError: on a parameter outside its range.
    """
    rng = _check_rng(rng)
    k = _positive_int("k", k)
    if k % 2 == 0:
        raise ValueError(f"k must be an odd integer in [1, inf), got {k}")
    d = _positive_int("d", d, k)
    t = _positive_int("length", length)
    relevant = rng.choice(d, size=k, replace=False)
    v = np.zeros(d)
    v[relevant] = 1.0 / k
    x = np.where(rng.random((t, d)) < 0.5, -1, 1).astype(np.int8)
    y = np.sign(x[:, relevant].sum(axis=1)).astype(np.int64)
    return x, y, v, 1.0 / k
