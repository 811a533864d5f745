"""A scikit-learn classifier for private *prediction*: source document 003 (Dagan, Feldman,
"PAC learning with stable and private predictions", Corollary 1).

A private-prediction learner never releases a model: ``fit`` keeps the training data, and
each row that ``predict`` answers is one run of the prediction mechanism (a fresh subsample,
the exponential mechanism over the halfspaces of R^2 labelling it, the label flipped with
probability alpha), epsilon-private with respect to the training data.  Answers compose: k
answered rows cost k times the per-prediction guarantee (``guarantee_`` is per prediction;
``predictions_answered_`` counts them).  Successive ``predict`` calls continue one random
stream, so asking the same row twice gives two independent answers (and costs twice).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from dpaudit.events import Event
from dpaudit.events.stability import LabelFlipped, SubsampledCandidates
from mechanisms.estimators.base import (
    PrivateClassifier,
    as_generator,
    check_in_range,
)
from mechanisms.ledger import Ledger, LedgerExceededError
from mechanisms.private_prediction import FlippedStableLearner, _flips, _selections

__all__ = ["PrivatePredictionClassifier"]


class PrivatePredictionClassifier(PrivateClassifier):
    """003 Corollary 1: the stable learner (Lemma 7: subsample n' = floor(gamma n / 3),
    exponential mechanism with privacy gamma / 3, gamma = epsilon alpha / 2) with its
    prediction flipped with probability ``alpha``; homogeneous halfspaces of R^2 (exactly 2
    features).

    Privacy: epsilon-private prediction per answered row (claim ``003/corollary-1``); the
    accountant's bound on one prediction's event is ``guarantee_["epsilon"]``.
    """

    NAME = "private-prediction"
    SOURCE = "003 Dagan-Feldman 2020, Corollary 1 (stable learner + label flipping)"
    TASK = "halfspace"
    PRIVACY = "prediction"
    SUMMARY = "each prediction private: subsample, EM over H_T, flip with probability alpha"
    LABELS: ClassVar[tuple[int, int]] = (0, 1)
    EFFICIENT = False
    N_FEATURES = 2

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        alpha = float(cls().alpha)
        learner = FlippedStableLearner.from_paper(epsilon, alpha, n)
        return [
            f"003 Corollary 1 at epsilon = {epsilon:g}, alpha = {alpha:g}: each prediction runs "
            f"the exponential mechanism on a subsample of n' = floor(epsilon alpha n / 6) rows "
            f"(n' = {learner.sample} at n = {n:,}) and flips its answer with probability alpha, "
            f"so the error is at least alpha = {alpha:g} above the subsample learner's; n' >= 1 "
            f"needs n >= {math.ceil(6 / (epsilon * alpha)):,}."
        ]

    def __init__(
        self,
        epsilon: float = 0.9,
        alpha: float = 0.1,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.alpha = alpha
        self.random_state = random_state

    def _check_params(self) -> None:
        check_in_range("epsilon", self.epsilon, 0.0, 1.0)
        check_in_range("alpha", self.alpha, 0.0, 0.5)
        self._check_feature_count(2)

    def _learner(self, n: int, d: int) -> FlippedStableLearner:
        learner = FlippedStableLearner.from_paper(float(self.epsilon), float(self.alpha), n)
        if learner.sample >= n:
            raise ValueError(f"X must have more rows for the {self.NAME} learner, got n = {n}")
        return learner

    def _plan(self, learner: Any, n: int, d: int) -> Event:
        return learner.plan(n)

    def _run(
        self,
        learner: Any,
        X: np.ndarray,
        labels: np.ndarray,
        classes: np.ndarray,
        plan: Event,
        planned: Any,
    ) -> None:
        """Nothing is released at fit: keep the data and the random stream."""
        self.classes_ = classes
        self.train_X_, self.train_y_ = X, labels
        self.rng_ = as_generator(self.random_state)
        self.predictions_answered_ = 0
        self.guarantee_ = self._accounted_guarantee(
            planned, plan, spent_epsilon=0.0, requested_delta=None, ledger="", per="prediction"
        )
        self.model_ = None

    def predict(self, X: Any) -> np.ndarray:
        """One private prediction per row (each a fresh run of the mechanism)."""
        check_is_fitted(self)
        Q = self._validate_X(X, reset=False)
        learner = self._learner(len(self.train_X_), 2)
        n = len(self.train_X_)
        with Ledger() as ledger:
            hypotheses = _selections(
                self.train_X_,
                self.train_y_,
                learner.sample,
                learner.selection_epsilon,
                lambda e: LabelFlipped(SubsampledCandidates(e, learner.sample, n), learner.flip),
                len(Q),
                self.rng_,
            )
            raw = (np.sum(hypotheses * Q, axis=1) >= 0).astype(np.int64)  # [<w, x> >= 0]
            answers = _flips(raw, float(learner.flip), self.rng_)
        runs = sum(e.count for e in ledger.entries)
        if runs != len(Q) or any(e.event != learner.plan(n) for e in ledger.entries):
            raise LedgerExceededError(
                f"{runs} recorded prediction runs for {len(Q)} answers, or an event not the plan"
            )
        self.predictions_answered_ += len(Q)
        return self.classes_[answers]

    @available_if(lambda est: False)
    def decision_function(self, X: Any) -> np.ndarray:
        """Not offered: a private prediction is a label, not a score."""
        raise AttributeError("decision_function")
