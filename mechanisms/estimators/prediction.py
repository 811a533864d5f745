"""A scikit-learn classifier for private *prediction*: source document 003 (Dagan, Feldman,
"PAC learning with stable and private predictions", Corollary 1).

A private-prediction learner never releases a model: ``fit`` keeps the training data, and
each row that ``predict`` answers is one run of the prediction mechanism (a fresh subsample
T, the exponential mechanism over the class H_T -- one hypothesis per labeling of T -- scored
on all the training data, the label flipped with probability alpha), epsilon-private with
respect to the training data.  Answers compose: k answered rows cost k times the
per-prediction guarantee (``guarantee_`` is per prediction; ``predictions_answered_`` counts
them).  Successive ``predict`` calls continue one random stream, so asking the same row twice
gives two independent answers (and costs twice).

Regimes (any number of features, any epsilon > 0):

* ``"practical"`` (default): the class is ``candidates`` homogeneous halfspaces of R^d whose
  directions are drawn uniformly from the sphere at fit, independently of the data (003's
  Theorem 1 / Corollary 1 hold for every class of finite VC dimension, a finite class
  among them; H_T is then one hypothesis per distinct labeling of T, the first in the
  class's order).  The flip ``alpha`` = 0.05, and the subsample size n' and the exponential
  mechanism's privacy are calibrated (data-independently: from epsilon, alpha and n) so
  that the accountant's bound on one prediction, ln(1 + (1 - 2 alpha) g / alpha) with
  g = n'/n + (1 - n'/n) tanh(eps_EM / 2), is within the request (:func:`calibrated`).
* ``"paper"``: Corollary 1's constants (alpha = 0.1, n' = floor(eps alpha n / 6), EM
  privacy eps alpha / 6) over the homogeneous halfspaces of R^2 (H_T enumerated exactly);
  d != 2 features are first mapped to R^2 by a random orthonormal projection drawn at fit
  (data-independent, applied record by record: the reduction, stated in ``notes``).
  Corollary 1 is stated for epsilon in (0, 1): asked for more, its formulas run at
  :data:`~mechanisms.estimators.regimes.BELOW_ONE` (private at the request too).
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar

import numpy as np
import sympy
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from dpaudit.events import Event
from dpaudit.events.stability import LabelFlipped, SubsampledCandidates
from mechanisms.estimators.base import (
    PrivateClassifier,
    _accounted,
    _json_ready,
    as_generator,
    check_in_range,
    check_integer,
)
from mechanisms.estimators.regimes import BELOW_ONE
from mechanisms.halfspaces import random_sphere_points
from mechanisms.ledger import Ledger, LedgerExceededError
from mechanisms.private_prediction import FlippedStableLearner, _flips, _selections
from mechanisms.subsample_selection import class_selections

__all__ = ["PrivatePredictionClassifier", "calibrated"]

#: Largest subsample n' of the practical regime (each prediction costs about n' x class size).
MAX_SAMPLE = 500


@functools.lru_cache(maxsize=128)
def calibrated(epsilon: float, alpha: float, n: int) -> FlippedStableLearner:
    """The practical regime's stable learner for one prediction at epsilon: flip ``alpha``,
    n' = min(floor(g n / 4), 500) (at least 1, below n), and the largest EM privacy eps_EM
    (on a grid of 10^-9, then lowered by 1% steps until the accountant agrees) with
    ln(1 + (1 - 2 alpha) g' / alpha) <= epsilon, g' = n'/n + (1 - n'/n) tanh(eps_EM / 2) and
    g = alpha (e^epsilon - 1) / (1 - 2 alpha) the stability the flip turns into epsilon.

    Privacy: the accountant's bound on the returned learner's plan (the label-flip rule on
    the subsampled-candidates stability, 003 Lemma 7 and Corollary 1's proof) is checked to
    be at most epsilon; the formula above only proposes.

    Raises:
        ValueError: if n < 2 or no EM privacy is certified.
    """
    if n < 2:
        raise ValueError(f"X must have at least 2 rows for the private-prediction learner, got {n}")
    target = min(alpha * math.expm1(epsilon) / (1 - 2 * alpha), 0.999)
    sample = min(max(1, math.floor(target * n / 4)), MAX_SAMPLE, n - 1)
    fraction = sample / n
    inner = (target - fraction) / (1 - fraction)
    if inner <= 0:  # too few rows: the subsample alone uses the stability the flip allows
        raise ValueError(
            f"X must have more rows for the private-prediction learner at epsilon {epsilon:g}: "
            f"a subsample of 1 of n = {n} rows already exceeds the stability the flip allows"
        )
    eps_em = 2 * math.atanh(min(inner, 0.999999))
    alpha_q = sympy.Rational(repr(alpha))
    for _ in range(40):
        proposal = sympy.Rational(math.floor(eps_em * 1e9), 10**9)
        if proposal <= 0:
            break
        learner = FlippedStableLearner(proposal, sample, alpha_q)
        bound = _accounted(learner.plan(n), None).epsilon_upper
        if bound is not None and bound <= epsilon:
            return learner
        eps_em *= 0.99
    raise ValueError(f"epsilon: no exponential-mechanism privacy is certified within {epsilon:g}")


def _projection_2d(d: int, rng: np.random.Generator) -> np.ndarray:
    """A random 2 x d matrix with orthonormal rows (d >= 2), or (1, 0)^T for d = 1: the
    paper regime's data-independent reduction to R^2."""
    if d == 1:
        return np.array([[1.0], [0.0]])
    Q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    return Q.T


class PrivatePredictionClassifier(PrivateClassifier):
    """003 Corollary 1: the stable learner (Lemma 7: a subsample of n' rows, the exponential
    mechanism over H_T scored on all the rows) with its prediction flipped with probability
    ``alpha`` (module docstring: the two regimes).

    Args:
        epsilon: the per-prediction privacy (any epsilon > 0).
        alpha: the flip probability in (0, 1/2) (None: the regime's, 0.05 / 0.1).
        candidates: the size of the practical regime's finite class of halfspaces (None:
            the regime's; ``"labelings"``: the paper's exact H_T of R^2).
        regime: ``"practical"`` or ``"paper"``.
        random_state: None, an int seed or a numpy Generator.

    Privacy: epsilon-private prediction per answered row (claim ``003/corollary-1``); the
    accountant's bound on one prediction's event is ``guarantee_["epsilon"]``.

    Utility limit of the defaults (docs/learners.md, "What the defaults reach"): an answer
    errs at least the best hypothesis of the data-independent class plus about
    alpha (1 - 2 e*), and N random halfspaces cover R^20 coarsely (best of 1000: 0.171 on
    margin-0.1 data; of 10^4: 0.165; of 10^5: 0.096).  At d = 20, n = 20,000, epsilon 1 the
    median over seeds 0-2 is 0.220 (alpha 0.05, N = 1000); the best constants found,
    alpha 0.02 and N = 10^4, give 0.148 (seeds 0.13-0.15) at about 6 times the CPU time,
    and at n = 10^5, d = 100 a 10.7 CPU s fit, 330 s for 1000 answers and 2.3 GB, so they
    are not the defaults.  Localising the class, which makes the other selection learners
    learn in R^20, would be a private fit per answered row (each answer is a run).
    """

    NAME = "private-prediction"
    SOURCE = "003 Dagan-Feldman 2020, Corollary 1 (stable learner + label flipping)"
    TASK = "halfspace"
    PRIVACY = "prediction"
    SUMMARY = "each prediction private: subsample, EM over H_T, flip with probability alpha"
    LABELS: ClassVar[tuple[int, int]] = (0, 1)
    EFFICIENT = False
    EPSILON_NOTE = (
        "any epsilon > 0; regime='paper' runs Corollary 1 (stated for epsilon < 1) at "
        f"min(epsilon, {BELOW_ONE}); d != 2 features: the practical regime's class is random "
        "halfspaces of R^d, the paper regime projects to R^2 (random orthonormal, "
        "data-independent)"
    )
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = {
        "practical": {"alpha": 0.05, "candidates": 1000},
        "paper": {"alpha": 0.1, "candidates": "labelings"},
    }
    PEER_NOTE = (
        "each answer is a fresh run that selects among 1000 random halfspaces of R^d (a coarse "
        "cover of R^d once d is 20 or more) and flips with probability 0.05"
    )
    TUNED: ClassVar[dict[str, str]] = {
        "alpha": "the flip probability; Corollary 1's privacy holds for every alpha in (0, "
        "1/2) (the accountant's label-flip rule at the calibrated stability)",
        "candidates": "1000 random halfspaces of R^d drawn independently of the data: a "
        "finite class, for which 003's Theorem 1 / Corollary 1 hold as for any class of "
        "finite VC dimension",
        "sample, eps_EM": "n' and the EM's privacy calibrated by the accountant from "
        "(epsilon, alpha, n) before the data are read (calibrated())",
    }

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        alpha = 0.1
        learner = FlippedStableLearner.from_paper(min(epsilon, BELOW_ONE), alpha, n)
        practical = calibrated(float(epsilon), 0.05, n)
        return [
            f"003 Corollary 1 at epsilon = {epsilon:g}, alpha = {alpha:g}: each prediction runs "
            f"the exponential mechanism on a subsample of n' = floor(epsilon alpha n / 6) rows "
            f"(n' = {learner.sample} at n = {n:,}) and flips its answer with probability alpha, "
            f"so the error is at least alpha = {alpha:g} above the subsample learner's; n' >= 1 "
            f"needs n >= {math.ceil(6 / (epsilon * alpha)):,}.",
            f"The practical regime flips with probability 0.05 and, at n = {n:,}, uses "
            f"n' = {practical.sample} and EM privacy {float(practical.selection_epsilon):.3g} "
            "(calibrated by the accountant) over 1000 random halfspaces of R^d: its error is at "
            "least the best of those halfspaces', which in d = 20 is far from the target "
            "(random directions cover R^20 poorly); each prediction is a fresh run of the "
            "mechanism, so the rounds that localise the other selection learners' candidates "
            "would be paid per prediction.",
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        alpha: float | None = None,
        candidates: Any = None,
        regime: str = "practical",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.alpha = alpha
        self.candidates = candidates
        self.regime = regime
        self.random_state = random_state

    def _check_params(self, s: Any) -> None:
        check_in_range("alpha", s.alpha, 0.0, 0.5)
        if s.candidates != "labelings":
            check_integer("candidates", s.candidates, 1, 10**5)

    def _run_epsilon(self, s: Any) -> tuple[float, list[str]]:
        eps = float(self.epsilon)
        if s.regime == "paper" and eps >= 1:
            return BELOW_ONE, [
                f"Corollary 1 is stated for epsilon in (0, 1): its formulas ran at epsilon "
                f"{BELOW_ONE} (private at the requested {eps:g} too)"
            ]
        return eps, []

    def _reduction_notes(self, s: Any, d: int) -> list[str]:
        if s.candidates == "labelings" and d != 2:
            return [
                f"the {d} features are projected to R^2 by a random orthonormal map drawn "
                "before the data are read (Corollary 1's class: halfspaces of R^2)"
            ]
        return []

    def _learner(self, s: Any, n: int, d: int) -> FlippedStableLearner:
        if s.candidates == "labelings":
            learner = FlippedStableLearner.from_paper(float(s.epsilon), float(s.alpha), n)
            if learner.sample >= n:
                raise ValueError(f"X must have more rows for the {self.NAME} learner, got n = {n}")
            return learner
        return calibrated(float(s.epsilon), float(s.alpha), n)

    def _plan(self, s: Any, learner: Any, n: int, d: int) -> Event:
        return learner.plan(n)

    def _run(
        self,
        s: Any,
        notes: list[str],
        learner: Any,
        X: np.ndarray,
        labels: np.ndarray,
        classes: np.ndarray,
        plan: Event,
        planned: Any,
    ) -> None:
        """Nothing is released at fit: keep the data and the random stream; draw the
        data-independent class (or projection) first, then precompute its labels."""
        rng = as_generator(self.random_state)
        d = X.shape[1]
        if s.candidates == "labelings":
            P = _projection_2d(d, rng) if d != 2 else np.eye(2)
            self.projection_ = P
            self.train_X_ = X @ P.T
        else:
            D = random_sphere_points(int(s.candidates), d, rng)
            self.directions_ = D
            signs = np.concatenate(
                [X[i : i + 4096] @ D.T >= 0 for i in range(0, len(X), 4096)]
            )  # (n, N): the class's labels [<w, x> >= 0] on S
            self.class_bits_ = np.packbits(signs, axis=1)
            self.class_errors_ = np.sum(signs != labels[:, None].astype(bool), axis=0)
            self.train_X_ = X
        self.classes_ = classes
        self.train_y_ = labels
        self.rng_ = rng
        self.learner_ = learner
        self.predictions_answered_ = 0
        self.settings_ = _json_ready(vars(s))
        self.guarantee_ = self._accounted_guarantee(
            planned,
            plan,
            spent_epsilon=0.0,
            requested_delta=None,
            ledger="",
            per="prediction",
            regime=s.regime,
            run_epsilon=float(s.epsilon),
            notes=notes,
        )
        self.model_ = None

    def predict(self, X: Any) -> np.ndarray:
        """One private prediction per row (each a fresh run of the mechanism)."""
        check_is_fitted(self)
        Q = self._validate_X(X, reset=False)
        learner = self.learner_
        n = len(self.train_y_)

        @functools.lru_cache(maxsize=8)
        def flipped(e: Event) -> Event:  # the same event for every run: built once
            return LabelFlipped(SubsampledCandidates(e, learner.sample, n), learner.flip)

        with Ledger() as ledger:
            if hasattr(self, "directions_"):
                labels = np.unpackbits(self.class_bits_, axis=1, count=len(self.directions_))
                chosen = class_selections(
                    labels,
                    self.class_errors_,
                    learner.sample,
                    learner.selection_epsilon,
                    flipped,
                    len(Q),
                    self.rng_,
                )
                hypotheses = self.directions_[chosen]
            else:
                Q = Q @ self.projection_.T
                hypotheses = _selections(
                    self.train_X_,
                    self.train_y_,
                    learner.sample,
                    learner.selection_epsilon,
                    flipped,
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
