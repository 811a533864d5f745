"""Stable and private prediction: source document 003 (Dagan and Feldman, "PAC learning with
stable and private predictions", COLT 2020).

The hypothesis class is H = homogeneous halfspaces of R^2, x -> [<w, x> >= 0] (VC dimension
2), so every H_T (one hypothesis per labeling of a subsample T) is enumerated exactly
(:func:`mechanisms.covers.halfspace_labelings_2d`).  Labels are in {0, 1} as in 003.

* :class:`StableLearner` -- Theorem 1 / Section 3.1 (Lemma 7): draw a uniform subset I of
  n' indices, build H_{S_I}, select h by the exponential mechanism (score minus the number
  of errors on all of S, sensitivity 1) and predict h(x).  gamma-uniformly stable.
* :class:`FlippedStableLearner` -- Corollary 1: the stable learner with target stability
  eps alpha / 2, its prediction flipped with probability alpha.  eps-private prediction.
* :class:`RealizableLearner` and :class:`Theorem2Learner` -- Section 4.2 (Lemma 8) then the
  flip of Theorem 2: subsample I (|I| = n'), exponential mechanism with privacy 2/(eta n)
  over H_{S_I}, relabel S by the chosen h, answer with the realizable learner A^R with pure
  1/(eta n)-private prediction trained on the relabeled S, then flip with probability alpha.
* :class:`SubsampledResponse` -- an instance of Lemma 5's setting for audits: randomized
  response (an eps-DP algorithm) on a uniform n'-subset.

Auditable forms (``mechanism(x)``: the prediction at a query point x) batch their runs by
subsample content (:func:`_selections`): the same law as separate runs, far fewer EM
set-ups; the Theorem 2 learner's batch also vectorises A^R's votes over runs
(:meth:`RealizableLearner.vote_counts`).  Its audit (report target ``003/theorem-2``) is of a
reconstructed claim, the accountant's bound at a toy instance
(:func:`dpaudit.report.builtin.theorem2_audited`): Theorem 2 itself has no constants.

Each learner's :meth:`plan` is its prediction mechanism at one query point as an event tree
(see :mod:`dpaudit.events.stability`); the run records that same tree through
:func:`mechanisms.ledger.recorded_as` around the exponential-mechanism primitive, the only
primitive that reads the data (the Theorem 2 learner runs two, the selection and A^R's vote,
recorded as the one Lemma 8 event by :func:`mechanisms.ledger.recorded_jointly`). The
subsample and the flip coin are data-independent randomness drawn from the injected
generator (like a projection matrix); the recorded event says what they do to privacy. The
flip is drawn as the equivalent mixture "with probability 1 - 2a keep the label, else output
a fair coin", which is flipping with probability a.

Reconstructions and corrections:

* Section 3's outline uses |T| = gamma n/2 and EM privacy gamma/4; Section 3.1 uses
  n' <= gamma n and EM privacy gamma, concluding 3 gamma-stability.  Both are covered: the
  accountant bounds the stability by n'/n + (1 - n'/n) tanh(eps_EM/2) (exact TV of an
  eps-DP binary output), tighter than the paper's n'/n + 2 eps_EM (which uses
  e^x <= 1 + 2x, valid for x <= 1.25 only -- 003 says "x <= 1").
* The realizable learner A^R of Lemma 6 ([DF18, Theorem 4.1]) is not in the document.  It
  is reconstructed (:class:`RealizableLearner`) from what 003 says of it: Section 1 names
  the technique ("averaging of models trained on disjoint subsets of data", DF18's
  aggregation), and Remark 2 says DF18's proof needs only a non-private learner that
  outputs a hypothesis consistent with its (relabeled) sample.  So: a random partition into
  k blocks, on each block the hypothesis of H restricted to the block (H_{block},
  enumerated exactly) with the fewest errors (consistent on S_h, which h labels), and the
  k votes at the query aggregated by the exponential mechanism over the two labels
  (sensitivity 1: one record changes one vote), privacy 1/(eta n) as step 4 asks.  DF18's
  own constants are not in the document; k is a parameter (``parts``).
* Lemma 8 is stated with O(.) constants; :func:`dpaudit.theorems.stability.lemma8_guarantee`
  makes them explicit (4 e^{k(2 beta + eps_R)} with k = eta(n-1)+1; 003 has 4 e^6) and bounds
  the eta-net failure with the epsilon-net theorem; at feasible n the resulting epsilon is
  large: the privacy of Theorem 2 is asymptotic.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.events.stability import (
    LabelFlipped,
    RelabeledSubsampleSelection,
    SubsampledCandidates,
)
from dpaudit.numeric import exact
from dpaudit.verify import Claim, Domain, register_claim
from mechanisms.covers import halfspace_labelings_2d
from mechanisms.ledger import recorded_as, recorded_jointly
from mechanisms.primitives import ExponentialMechanism, RandomizedResponseMechanism

__all__ = [
    "FlippedStableLearner",
    "RealizableLearner",
    "StableLearner",
    "SubsampledResponse",
    "Theorem2Learner",
    "balanced_query_pair",
    "predict_halfspaces",
]

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


@dataclasses.dataclass(frozen=True)
class StableLearner:
    """003 Section 3.1: subsample n' = ``sample`` indices, exponential mechanism with privacy
    ``selection_epsilon`` over H_{S_I} scored on all of S, predict with the selection.

    Privacy: Lemma 7 claims 3 gamma-uniform stability when n' <= gamma n and the EM privacy
    is gamma (claim ``003/lemma-7``); the accountant gives n'/n + (1 - n'/n) tanh(gamma/2).
    """

    selection_epsilon: Any
    sample: int

    def plan(self, n: Any) -> ev.Event:
        """SubsampledCandidates(Exponential(eps_EM, sensitivity 1), n', n)."""
        return SubsampledCandidates(
            ev.Exponential(self.selection_epsilon, 1, relation=REPLACE), self.sample, n
        )

    def _transform(self, n: int) -> Callable[[ev.Event], ev.Event]:
        return lambda e: SubsampledCandidates(e, self.sample, n)

    def hypothesis(self, X: Any, y: Any, rng: np.random.Generator) -> np.ndarray:
        """One draw of the selected hypothesis h (a unit vector of R^2)."""
        X, y = _data(X, y)
        _sample_size("sample", self.sample, len(X))
        return _subsample_select(
            X, y, self.sample, self.selection_epsilon, self._transform(len(X)), _check_rng(rng)
        )

    def predict(self, X: Any, y: Any, x: Any, rng: np.random.Generator) -> int:
        """The randomised prediction A_S(x) in {0, 1} (fresh randomness per query)."""
        q = _query(x)
        return int(predict_halfspaces(self.hypothesis(X, y, rng), q)[0, 0])

    def mechanism(self, x: Any) -> Callable[..., Any]:
        """The auditable form: ``mechanism((X, y), rng)`` is the prediction at ``x``, with a
        ``.batch`` grouped by subsample (:func:`_predictions`)."""
        q = _query(x)

        def mechanism(dataset: Any, rng: np.random.Generator) -> int:
            return self.predict(*dataset, q, rng)

        def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
            X, y = _data(*dataset)
            _sample_size("sample", self.sample, len(X))
            return _predictions(
                X,
                y,
                q,
                self.sample,
                self.selection_epsilon,
                self._transform(len(X)),
                n,
                _check_rng(rng),
            )

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = "003 stable learner prediction"  # type: ignore[attr-defined]
        return mechanism


@dataclasses.dataclass(frozen=True)
class FlippedStableLearner:
    """003 Corollary 1: the stable learner, prediction flipped with probability ``flip``.

    :meth:`from_paper` sets the parameters as the corollary does: target stability
    gamma = eps alpha / 2 realised by Lemma 7 (n' = floor(gamma n / 3), EM privacy gamma/3),
    flip probability alpha.

    Privacy: eps-private prediction (claim ``003/corollary-1``).
    """

    selection_epsilon: Any
    sample: int
    flip: Any

    def __post_init__(self) -> None:
        _probability("flip", self.flip, 0.5)

    @classmethod
    def from_paper(cls, epsilon: Any, alpha: Any, n: int) -> FlippedStableLearner:
        """Corollary 1's choice for datasets of size n."""
        gamma = exact(epsilon, "epsilon") * exact(alpha, "alpha") / 2
        sample = max(1, math.floor(float(gamma * n / 3)))
        return cls(gamma / 3, sample, exact(alpha, "alpha"))

    def stable(self) -> StableLearner:
        return StableLearner(self.selection_epsilon, self.sample)

    def plan(self, n: Any) -> ev.Event:
        return LabelFlipped(self.stable().plan(n), self.flip)

    def predict(self, X: Any, y: Any, x: Any, rng: np.random.Generator) -> int:
        X, y = _data(X, y)
        q = _query(x)
        n = _sample_size("sample", self.sample, len(X)) and len(X)
        rng = _check_rng(rng)
        h = _subsample_select(
            X,
            y,
            self.sample,
            self.selection_epsilon,
            lambda e: LabelFlipped(SubsampledCandidates(e, self.sample, n), self.flip),
            rng,
        )
        return _flip(int(predict_halfspaces(h, q)[0, 0]), float(exact(self.flip, "flip")), rng)

    def mechanism(self, x: Any) -> Callable[..., Any]:
        """The auditable form: ``mechanism((X, y), rng)`` is the prediction at ``x``."""
        q = _query(x)
        flip = float(exact(self.flip, "flip"))

        def run(X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> int:
            n = len(X)
            h = _subsample_select(
                X,
                y,
                self.sample,
                self.selection_epsilon,
                lambda e: LabelFlipped(SubsampledCandidates(e, self.sample, n), self.flip),
                rng,
            )
            return _flip(int(predict_halfspaces(h, q)[0, 0]), flip, rng)

        def mechanism(dataset: Any, rng: np.random.Generator) -> int:
            X, y = _data(*dataset)
            _sample_size("sample", self.sample, len(X))
            return run(X, y, _check_rng(rng))

        def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
            X, y = _data(*dataset)
            _sample_size("sample", self.sample, len(X))
            size = len(X)
            labels = _predictions(
                X,
                y,
                q,
                self.sample,
                self.selection_epsilon,
                lambda e: LabelFlipped(SubsampledCandidates(e, self.sample, size), self.flip),
                n,
                _check_rng(rng),
            )
            return _flips(labels, flip, rng)

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = "003 Corollary 1 prediction"  # type: ignore[attr-defined]
        return mechanism


def _row_groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first index of each distinct row of a non-negative integer array and each row's
    group (``np.unique(rows, axis=0)``'s index and inverse, up to the groups' order), by a
    base-(max + 1) code of the rows when it fits in an int64."""
    base = int(rows.max()) + 1 if rows.size else 1
    if base ** rows.shape[1] < 2**62:
        code = rows @ (base ** np.arange(rows.shape[1], dtype=np.int64))
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def _block_vote(X: np.ndarray, labels: np.ndarray, q: np.ndarray) -> int:
    """One block's vote at ``q`` in A^R: the hypothesis of H_{block} with the fewest errors on
    the block (the first of them), evaluated at ``q``."""
    candidates = halfspace_labelings_2d(X)
    errors = np.sum(predict_halfspaces(candidates, X) != labels, axis=1)
    return int(predict_halfspaces(candidates[int(np.argmin(errors))], q)[0, 0])


@dataclasses.dataclass(frozen=True)
class RealizableLearner:
    """003's realizable learner with pure private prediction, A^R of Lemma 6 (= [DF18,
    Theorem 4.1]; reconstructed, see the module docstring): split the records by a uniformly
    random partition into ``parts`` blocks, let each block's learner return a hypothesis of H
    restricted to the block (the labeling of H_{block} with the fewest errors on the block:
    consistent when the data are realizable), count the votes v of the ``parts`` hypotheses
    for label 1 at the query, and answer with the exponential mechanism over the two labels,
    scores (parts - v, v), sensitivity 1, privacy ``epsilon`` (sampled exactly: Gumbel max over
    the two enumerated labels).

    Privacy: replacing one record changes one block, hence one hypothesis, hence each score
    by at most 1: the prediction is ``epsilon``-private (exponential mechanism, McSherry and
    Talwar 2007); the partition is data-independent.  Plan: ``Exponential(epsilon, 1)``.

    Utility (DF18's argument, not re-proved here): when at most a quarter of the votes are
    wrong at x the answer is wrong with probability <= e^(-epsilon parts / 4), so
    parts ~ 4 ln(1/alpha) / epsilon blocks of O~(d/alpha) records give error O(alpha).
    """

    parts: int
    epsilon: Any

    def __post_init__(self) -> None:
        if (
            isinstance(self.parts, bool)
            or not isinstance(self.parts, (int, np.integer))
            or (self.parts < 1)
        ):
            raise ValueError(f"parts must be an integer >= 1, got {self.parts!r}")
        _probability("epsilon", self.epsilon, math.inf)

    def plan(self) -> ev.Event:
        """The vote's exponential mechanism: the learner's prediction mechanism."""
        return ev.Exponential(self.epsilon, 1, relation=REPLACE)

    def votes(
        self, X: np.ndarray, labels: np.ndarray, q: np.ndarray, rng: np.random.Generator
    ) -> int:
        """The number of block hypotheses that predict 1 at ``q`` (random partition)."""
        if self.parts > len(X):
            raise ValueError(
                f"parts must be in [1, {len(X)}] (at most one block per record), got {self.parts}"
            )
        blocks = np.array_split(rng.permutation(len(X)), self.parts)
        return sum(_block_vote(X[block], labels[block], q) for block in blocks)

    def vote_counts(
        self, X: np.ndarray, labels: np.ndarray, q: np.ndarray, runs: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``runs`` independent draws of :meth:`votes` (a uniformly random partition each,
        cut as ``np.array_split`` cuts it), vectorised: a block's vote is a deterministic
        function of its records in order, so the blocks of all runs are written as
        sequences of record classes (records equal in point and label), and each distinct
        sequence is voted once."""
        if self.parts > len(X):
            raise ValueError(
                f"parts must be in [1, {len(X)}] (at most one block per record), got {self.parts}"
            )
        n = len(X)
        _, first, classes = np.unique(
            np.column_stack([X, labels]), axis=0, return_index=True, return_inverse=True
        )
        shuffled = classes.ravel()[np.argsort(rng.random((runs, n)), axis=1)]
        small, extra = divmod(n, self.parts)  # array_split: `extra` blocks of small + 1
        total = np.zeros(runs, dtype=np.int64)
        for lo, hi, size in ((0, extra * (small + 1), small + 1), (extra * (small + 1), n, small)):
            if hi == lo:
                continue
            blocks = shuffled[:, lo:hi].reshape(-1, size)
            distinct, inverse = _row_groups(blocks)
            votes = np.array(
                [_block_vote(X[first[blocks[i]]], labels[first[blocks[i]]], q) for i in distinct]
            )
            total += votes[inverse].reshape(runs, -1).sum(axis=1)
        return total

    def predict_with(
        self, X: np.ndarray, labels: np.ndarray, q: np.ndarray, rng: np.random.Generator
    ) -> int:
        """The prediction at ``q`` of the learner trained on (X, labels)."""
        v = self.votes(X, labels, q, rng)
        em = _selection_mechanism(exact(self.epsilon, "epsilon"))
        return int(em.select(np.array([self.parts - v, v], dtype=float), rng))

    def predict_many(
        self,
        X: np.ndarray,
        labelings: np.ndarray,
        which: np.ndarray,
        q: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Independent runs of :meth:`predict_with`, run i trained on the labels
        ``labelings[which[i]]``: the votes by :meth:`vote_counts` per labeling, the votes'
        exponential mechanisms drawn together per vote count (the same law run by run)."""
        votes = np.empty(len(which), dtype=np.int64)
        for g, row in enumerate(labelings):
            where = np.flatnonzero(which == g)
            if where.size:
                votes[where] = self.vote_counts(X, row, q, where.size, rng)
        em = _selection_mechanism(exact(self.epsilon, "epsilon"))
        out = np.empty(len(which), dtype=np.int64)
        for v in np.unique(votes):
            where = np.flatnonzero(votes == v)
            out[where] = em.select(np.array([self.parts - v, v], dtype=float), rng, size=where.size)
        return out

    def predict(self, X: Any, y: Any, x: Any, rng: np.random.Generator) -> int:
        """The randomised prediction at ``x`` (data realizable by H for its utility)."""
        X, y = _data(X, y)
        return self.predict_with(X, y, _query(x), _check_rng(rng))


@dataclasses.dataclass(frozen=True)
class Theorem2Learner:
    """003 Section 4.2 + Theorem 2: subsample n' = ``sample`` indices I, exponential
    mechanism with privacy 2/(eta n) (eta = ``net_radius``) over H_{S_I} scored by the errors
    on S, relabel S by the selected h, answer with the realizable learner A^R with
    1/(eta n)-private prediction (:class:`RealizableLearner` with ``parts`` blocks) trained on
    the relabeled S_h (step 5), then flip with probability ``flip`` (proof of Theorem 2).

    Privacy: (O(eps), O(eps alpha))-private prediction before the flip (Lemma 8), O(eps)
    after (Theorem 2); the accountant evaluates the explicit-constant version of Lemma 8
    (:func:`dpaudit.theorems.stability.lemma8_guarantee`) on :meth:`plan`, then the flip.
    """

    sample: int
    net_radius: Any
    flip: Any
    parts: int

    def __post_init__(self) -> None:
        _probability("net_radius", self.net_radius, 1)
        _probability("flip", self.flip, 0.5)
        RealizableLearner(self.parts, 1)  # validates parts

    def selection_epsilon(self, n: Any) -> sympy.Expr:
        """003 Section 4.2 step 3: 2/(eta n)."""
        return 2 / (exact(self.net_radius, "net_radius") * exact(n, "n"))

    def relabel(self, n: Any) -> RealizableLearner:
        """003 Section 4.2 step 4: A^R with privacy 1/(eta n)."""
        return RealizableLearner(self.parts, self.selection_epsilon(n) / 2)

    def _event(self, selection: ev.Event, relabel: ev.Event, n: Any) -> ev.Event:
        inner = RelabeledSubsampleSelection(selection, relabel, self.sample, n, 2, self.net_radius)
        return LabelFlipped(inner, self.flip)

    def plan(self, n: Any) -> ev.Event:
        return self._event(
            ev.Exponential(self.selection_epsilon(n), 1, relation=REPLACE),
            self.relabel(n).plan(),
            n,
        )

    def predict(self, X: Any, y: Any, x: Any, rng: np.random.Generator) -> int:
        X, y = _data(X, y)
        q = _query(x)
        n = len(X)
        _sample_size("sample", self.sample, n)
        rng = _check_rng(rng)
        relabel = self.relabel(n)
        selection = ev.Exponential(self.selection_epsilon(n), 1, relation=REPLACE)
        with recorded_jointly(
            (selection, relabel.plan()), self._event(selection, relabel.plan(), n)
        ):
            idx = rng.choice(n, size=self.sample, replace=False)
            h = _select_in(X, y, idx, self.selection_epsilon(n), lambda e: e, rng)
            relabeled = predict_halfspaces(h, X)[0]
            label = relabel.predict_with(X, relabeled, q, rng)
        return _flip(label, float(exact(self.flip, "flip")), rng)

    def mechanism(self, x: Any) -> Callable[..., Any]:
        """The auditable form: ``mechanism((X, y), rng)`` is :meth:`predict` at ``x``; its
        ``.batch`` draws the selections grouped by subsample (:func:`_selections`), A^R's
        votes with a per-relabeling memo of the block votes and the votes' exponential
        mechanisms and the flips together (the same law run by run), recorded as ``runs``
        runs of :meth:`plan`'s event."""
        q = _query(x)
        flip = float(exact(self.flip, "flip"))

        def mechanism(dataset: Any, rng: np.random.Generator) -> int:
            return self.predict(*dataset, q, rng)

        def batch(dataset: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
            X, y = _data(*dataset)
            n = len(X)
            _sample_size("sample", self.sample, n)
            rng = _check_rng(rng)
            relabel = self.relabel(n)
            selection = ev.Exponential(self.selection_epsilon(n), 1, relation=REPLACE)
            with recorded_jointly(
                (selection, relabel.plan()), self._event(selection, relabel.plan(), n), times=runs
            ):
                hypotheses = _selections(
                    X, y, self.sample, self.selection_epsilon(n), lambda e: e, runs, rng
                )
                distinct, which = np.unique(hypotheses, axis=0, return_inverse=True)
                labels = relabel.predict_many(
                    X, predict_halfspaces(distinct, X), which.ravel(), q, rng
                )
            return _flips(labels, flip, rng)

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = "003 Theorem 2 prediction"  # type: ignore[attr-defined]
        return mechanism


@dataclasses.dataclass(frozen=True)
class SubsampledResponse:
    """An instance of 003 Lemma 5's setting for audits: the eps-DP algorithm is randomized
    response on the bit "the subsample holds a record equal to 1" (replace-one sensitivity
    1), run on a uniform subset of ``sample`` records.  Datasets are 0/1 vectors.

    Privacy: Lemma 5 claims 2 eps n'/n for eps <= 1 (claim ``003/lemma-5``); the exact value
    for this instance is ln(1 + (n'/n)(e^eps - 1)) (amplification by subsampling), reached on
    :meth:`pair`.
    """

    epsilon: Any
    sample: int

    def plan(self, n: Any) -> ev.Event:
        return ev.SampledWithoutReplacement(
            ev.RandomizedResponse(self.epsilon, relation=REPLACE), self.sample, n
        )

    def _bits(self, dataset: Any) -> np.ndarray:
        bits = np.asarray(dataset)
        if bits.ndim != 1 or not np.all(np.isin(bits, (0, 1))):
            raise ValueError("dataset must be a 1-D array of bits in {0, 1}")
        _sample_size("sample", self.sample, len(bits))
        return bits.astype(np.int64)

    def __call__(self, dataset: Any, rng: np.random.Generator) -> int:
        bits, rng = self._bits(dataset), _check_rng(rng)
        held = int(bits[rng.choice(len(bits), size=self.sample, replace=False)].max())
        return int(_response(self.epsilon).respond(held, rng))

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """n independent runs (subsets drawn together, then one respond call per bit)."""
        bits, rng = self._bits(dataset), _check_rng(rng)
        subsets = np.argpartition(rng.random((n, len(bits))), self.sample - 1, axis=1)[
            :, : self.sample
        ]
        held = bits[subsets].max(axis=1)
        out = np.empty(n, dtype=np.int64)
        for value in (0, 1):
            where = np.flatnonzero(held == value)
            if where.size:
                out[where] = _response(self.epsilon).respond(value, rng, size=where.size)
        return out

    @staticmethod
    def pair(n: int) -> tuple[np.ndarray, np.ndarray]:
        """The stressing replace-one pair: all zeros, and one record set to 1."""
        d1 = np.zeros(n, dtype=np.int64)
        d1[0] = 1
        return np.zeros(n, dtype=np.int64), d1


@functools.lru_cache(maxsize=16)
def _response(epsilon: Any) -> RandomizedResponseMechanism:
    return RandomizedResponseMechanism(epsilon, relation=REPLACE)


# ----------------------------------------------------------------------------------------
# Claims
# ----------------------------------------------------------------------------------------

_g, _e, _a = (sympy.Symbol(s, positive=True) for s in ("gamma", "epsilon", "alpha"))
_n, _m = sympy.Symbol("n", positive=True), sympy.Symbol("n_prime", positive=True)

register_claim(
    Claim(
        key="003/lemma-7",
        document="003 Dagan, Feldman 2020",
        theorem="Lemma 7 (stability part)",
        statement=(
            "subsample n' <= gamma n, EM with privacy gamma over H_{S_I}: the prediction "
            "is 3 gamma-uniformly stable, i.e. (0, 3 gamma)-private prediction"
        ),
        plan=StableLearner(_g, _m).plan(_n),
        epsilon=0,
        delta=3 * _g,
        domain=Domain(
            {"gamma": "(0, 1/3)", "n": "[2, oo)", "n_prime": "[1, oo)"},
            integers=["n", "n_prime"],
            constraints=[_m <= _g * _n],
        ),
        note="the accountant's bound n'/n + (1 - n'/n) tanh(gamma/2) is tighter than 3 gamma",
    )
)

register_claim(
    Claim(
        key="003/corollary-1",
        document="003 Dagan, Feldman 2020",
        theorem="Corollary 1 (privacy part)",
        statement=(
            "the eps alpha/2-stable learner (Lemma 7 with n' <= eps alpha n / 6, EM privacy"
            " eps alpha / 6) flipped with probability alpha gives eps-private prediction"
        ),
        plan=LabelFlipped(StableLearner(_e * _a / 6, _m).plan(_n), _a),
        epsilon=_e,
        delta=0,
        domain=Domain(
            {"epsilon": "(0, 1)", "alpha": "(0, 1/2)", "n": "[2, oo)", "n_prime": "[1, oo)"},
            integers=["n", "n_prime"],
            constraints=[_m <= _e * _a * _n / 6],
        ),
        note="label-flip rule: eps' = ln(1 + (1 - 2 alpha) gamma / alpha) <= gamma / alpha",
    )
)

register_claim(
    Claim(
        key="003/lemma-5",
        document="003 Dagan, Feldman 2020",
        theorem="Lemma 5",
        statement="an eps-private (prediction) algorithm on a uniform m-subset of n is "
        "2 eps m/n-private for eps <= 1",
        plan=ev.SampledWithoutReplacement(ev.PureDP(_e, relation=REPLACE), _m, _n),
        epsilon=2 * _e * _m / _n,
        delta=0,
        domain=Domain(
            {"epsilon": "(0, 1]", "n": "[2, oo)", "n_prime": "[1, oo)"},
            integers=["n", "n_prime"],
            constraints=[_m <= _n],
        ),
    )
)
