"""What the learners of source document 003 (Dagan and Feldman 2020, see
:mod:`mechanisms.private_prediction`) share: input checks, halfspace predictions, the
exponential-mechanism selection over H_T of a subsample T, batched selections grouped by
subsample content (the same law as separate runs, far fewer EM set-ups), and label flips.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact
from mechanisms.covers import halfspace_labelings_2d
from mechanisms.ledger import recorded_as
from mechanisms.primitives import ExponentialMechanism

REPLACE = ev.Relation.REPLACE_ONE

#: Batched predictions enumerate the subsamples when there are at most this many of them.
ENUMERATED_SUBSETS = 5000


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _data(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2 or len(X) < 2 or not np.all(np.isfinite(X)):
        raise ValueError(
            f"X must be an (n, 2) array of finite numbers with n >= 2, got shape {X.shape}"
        )
    if y.shape != (len(X),) or not np.all(np.isin(y, (0, 1))):
        raise ValueError(f"y must be a length-{len(X)} array of labels in {{0, 1}}")
    return X, y.astype(np.int64)


def _query(x: Any) -> np.ndarray:
    q = np.asarray(x, dtype=float)
    if q.shape != (2,) or not np.all(np.isfinite(q)):
        raise ValueError(f"x must be a point of R^2 (shape (2,)), got shape {q.shape}")
    return q


def _sample_size(name: str, value: Any, n: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (1 <= value < n):
        raise ValueError(
            f"{name} must be an integer in [1, {n - 1}] (below the dataset size "
            f"n = {n}), got {value!r}"
        )
    return int(value)


def _probability(name: str, value: Any, high: float) -> Any:
    if isinstance(value, sympy.Basic) and value.free_symbols:
        return value
    try:
        v = float(exact(value, name))
    except ValueError:
        raise ValueError(f"{name} must be in (0, {high}), got {value!r}") from None
    if not (0 < v < high):
        raise ValueError(f"{name} must be in (0, {high}), got {value!r}")
    return value


def predict_halfspaces(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Labels [<w, x> >= 0] of every row w of W on every row of X, shape (len(W), len(X))."""
    return (np.atleast_2d(W) @ np.atleast_2d(X).T >= 0).astype(np.int64)


def _flip(label: int, flip: float, rng: np.random.Generator) -> int:
    """Flip with probability ``flip``, drawn as the mixture keep / fair coin (data-independent
    randomness; the recorded LabelFlipped event accounts for it)."""
    if rng.random() < 2 * flip:
        return int(rng.integers(2))
    return int(label)


#: Odd 64-bit multipliers of :func:`class_representatives`' labeling hash (fixed constants).
_HASH = np.random.default_rng(20260).integers(1, 2**63, size=4096, dtype=np.uint64) | np.uint64(1)


def class_representatives(labels: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """H_T for a finite class: ``labels`` holds the class's labels on S, one row per
    *record* (shape (n, |H|)); the result is, for each distinct labeling of the subsample
    ``idx``, the index of the first hypothesis (in the class's fixed order) that induces it.
    The choice depends on the subsample's records only (003 Section 2.1's H_T, one
    hypothesis per labeling of T).  Labelings are compared by a 64-bit hash of their bits
    (fixed multipliers; two distinct labelings of the same T collide with probability about
    |H|^2 / 2^64, which would merge them into one representative, still a function of T)."""
    packed = np.packbits(labels[idx].astype(bool), axis=0)  # (ceil(n'/8), |H|) bytes
    pad = (-packed.shape[0]) % 8
    if pad:
        packed = np.concatenate([packed, np.zeros((pad, packed.shape[1]), np.uint8)])
    words = np.ascontiguousarray(packed.T).view(np.uint64)  # (|H|, words)
    with np.errstate(over="ignore"):
        keys = (words * _HASH[: words.shape[1]]).sum(axis=1, dtype=np.uint64)
    _, first = np.unique(keys, return_index=True)
    return np.sort(first)


def _select_in_class(
    labels: np.ndarray,
    errors: np.ndarray,
    idx: np.ndarray,
    epsilon: Any,
    transform: Callable[[ev.Event], ev.Event],
    rng: np.random.Generator,
    size: int | None = None,
) -> np.ndarray:
    """Steps 2-3 of 003 Section 3.1 for a finite class given by its labels on S and its
    error counts on S: H_T by :func:`class_representatives`, then the EM (score minus the
    errors on all of S, sensitivity 1); the selected hypotheses' indices.  ``labels`` is
    (n, |H|)."""
    reps = class_representatives(labels, idx)
    em = _selection_mechanism(exact(epsilon, "selection_epsilon"))
    with recorded_as(transform):
        k = em.select(-errors[reps].astype(float), rng, size=size)
    return reps[k]


def _select_in(
    X: np.ndarray,
    y: np.ndarray,
    idx: np.ndarray,
    epsilon: Any,
    transform: Callable[[ev.Event], ev.Event],
    rng: np.random.Generator,
    size: int | None = None,
) -> np.ndarray:
    """Steps 2-3 of 003 Section 3.1 / 4.2 for the subsample ``idx``: H_{S_I}, then the EM on
    S; the selected hypothesis (``size`` runs: one row each)."""
    candidates = halfspace_labelings_2d(X[idx])
    errors = np.sum(predict_halfspaces(candidates, X) != y, axis=1)
    em = _selection_mechanism(exact(epsilon, "selection_epsilon"))
    with recorded_as(transform):
        k = em.select(-errors.astype(float), rng, size=size)
    return candidates[k]


def _subsample_select(
    X: np.ndarray,
    y: np.ndarray,
    sample: int,
    epsilon: Any,
    transform: Callable[[ev.Event], ev.Event],
    rng: np.random.Generator,
) -> np.ndarray:
    """Steps 1-3 of 003 Section 3.1 / 4.2: I uniform of size ``sample``, H_{S_I}, EM on S."""
    idx = rng.choice(len(X), size=sample, replace=False)
    return _select_in(X, y, idx, epsilon, transform, rng)


def _predictions(
    X: np.ndarray,
    y: np.ndarray,
    q: np.ndarray,
    sample: int,
    epsilon: Any,
    transform: Callable[[ev.Event], ev.Event],
    runs: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``runs`` independent draws of the stable learner's prediction h(q) (steps 1-3, then
    predict): :func:`_selections`, then predict.  For audits, which need many runs."""
    return predict_halfspaces(_selections(X, y, sample, epsilon, transform, runs, rng), q)[:, 0]


def _selections(
    X: np.ndarray,
    y: np.ndarray,
    sample: int,
    epsilon: Any,
    transform: Callable[[ev.Event], ev.Event],
    runs: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``runs`` independent draws of the selected hypothesis (steps 1-3; one row each),
    grouped by subsample content: steps 2-3 read the subsample I only through its records
    X_I (in index order), so the runs whose subsamples hold the same records draw their
    selections together (the same law run by run as :func:`_subsample_select`; randomness
    drawn in another order; with at most :data:`ENUMERATED_SUBSETS` possible subsets, as
    multinomial counts over all of them)."""
    n = len(X)
    if math.comb(n, sample) <= ENUMERATED_SUBSETS:
        # i.i.d. uniform subsets = multinomial counts over all subsets, placed at uniformly
        # random positions (O(runs), not O(runs n))
        keys = np.array(list(itertools.combinations(range(n), sample)))
        counts = rng.multinomial(runs, np.full(len(keys), 1 / len(keys)))
        run_key = np.empty(runs, dtype=np.int64)
        run_key[rng.permutation(runs)] = np.repeat(np.arange(len(keys)), counts)
    else:
        subsets = np.sort(
            np.argpartition(rng.random((runs, n)), sample - 1, axis=1)[:, :sample], axis=1
        )
        keys, run_key = np.unique(subsets, axis=0, return_inverse=True)
        run_key = run_key.ravel()
    _, first, content = np.unique(
        X[keys].reshape(len(keys), -1), axis=0, return_index=True, return_inverse=True
    )
    run_content = content.ravel()[run_key]
    out = np.empty((runs, 2))
    for c, g in enumerate(first):
        where = np.flatnonzero(run_content == c)
        if where.size:
            out[where] = _select_in(X, y, keys[g], epsilon, transform, rng, size=where.size)
    return out


def class_selections(
    labels: np.ndarray,
    errors: np.ndarray,
    sample: int,
    epsilon: Any,
    transform: Callable[[ev.Event], ev.Event],
    runs: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``runs`` independent draws of the stable learner's selection over a finite class
    (steps 1-3 of 003 Section 3.1: a uniform subset I of ``sample`` of the n records, H_{S_I}
    by :func:`class_representatives`, the EM on S): the selected hypotheses' indices.
    ``labels`` is (n, |H|): the class's labels, one row per record."""
    n = labels.shape[0]
    out = np.empty(runs, dtype=np.int64)
    for r in range(runs):
        idx = np.sort(rng.choice(n, size=sample, replace=False))
        out[r] = _select_in_class(labels, errors, idx, epsilon, transform, rng)
    return out


def balanced_query_pair(
    n: int, x: Any
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A replace-one pair for auditing the prediction at ``x``: ``n`` (odd) records all at
    the query point x, (n + 1)/2 labelled 1 in d0, and d1 with one of those labels set to 0.

    Every subsample's class H_T is {+x, -x} (predict 1 / 0 everywhere on the data and at
    x), so the exponential mechanism chooses between the two labels with scores
    #ones - #zeros = +1 (d0) or -1 (d1): balanced, where its log-odds move 2 beta (beta =
    eps_EM / 2) shifts the prediction most.  The exact prediction probabilities are
    sigma(+-beta) before the flip.

    Raises:
        ValueError: if n is not an odd integer >= 3.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 3 or n % 2 == 0:
        raise ValueError(f"n must be an odd integer >= 3, got {n!r}")
    q = _query(x)
    X = np.tile(q, (n, 1))
    y = np.zeros(n, dtype=np.int64)
    y[: (n + 1) // 2] = 1
    y1 = y.copy()
    y1[0] = 0
    return (X, y), (X, y1)


def _flips(labels: np.ndarray, flip: float, rng: np.random.Generator) -> np.ndarray:
    """:func:`_flip` applied to each label (one coin per label)."""
    coin = rng.random(len(labels)) < 2 * flip
    return np.where(coin, rng.integers(2, size=len(labels)), labels)


@functools.lru_cache(maxsize=64)
def _selection_mechanism(epsilon: sympy.Expr) -> ExponentialMechanism:
    """The exponential-mechanism primitive on the error count (sensitivity 1, replace-one),
    built once per epsilon (building validates the event, which is slow in a loop)."""
    return ExponentialMechanism(epsilon, 1, relation=REPLACE)
