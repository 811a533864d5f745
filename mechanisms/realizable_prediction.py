"""Section 4.2 of source document 003 (Dagan and Feldman 2020, see
:mod:`mechanisms.private_prediction`): the reconstructed realizable learner A^R
(:class:`RealizableLearner`, DF18's aggregation of block-wise consistent hypotheses by the
exponential mechanism) and Theorem 2's learner built on it (:class:`Theorem2Learner`:
subsample selection, relabeling, A^R, then a flip).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.events.stability import (
    LabelFlipped,
    RelabeledSubsampleSelection,
)
from dpaudit.numeric import exact
from mechanisms.covers import halfspace_labelings_2d
from mechanisms.ledger import recorded_jointly
from mechanisms.subsample_selection import (
    REPLACE,
    _check_rng,
    _data,
    _flip,
    _flips,
    _probability,
    _query,
    _sample_size,
    _select_in,
    _selection_mechanism,
    _selections,
    predict_halfspaces,
)

__all__ = ["RealizableLearner", "Theorem2Learner"]


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
