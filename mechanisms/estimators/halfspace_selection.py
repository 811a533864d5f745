"""Scikit-learn classifiers for 001's selection learners (Bassily, Mohri, Suresh 2022):
the network learner of Section 5 and the margin selection of Appendix F, both an exponential
mechanism over an enumerated (or, in the practical regimes, randomly drawn) candidate set.
The shared parts (the unit-ball map, the ``candidates`` option) are those of
:mod:`mechanisms.estimators.halfspace`."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from mechanisms.estimators.base import check_in_range, check_integer
from mechanisms.estimators.halfspace import (
    _candidates,
    _check_candidates,
    _HalfspaceClassifier,
)
from mechanisms.estimators.halfspace_regimes import (
    MARGIN_SELECTION_REGIMES,
    NEURAL_NET_NOTE,
    NEURAL_NET_REGIMES,
    RANDOM_CANDIDATES_NOTE,
    SELECTION_NOTE,
    projection_note,
)
from mechanisms.margin import MarginSelection, NeuralNetLearner

__all__ = ["MarginSelectionClassifier", "NeuralNetMarginClassifier"]


class NeuralNetMarginClassifier(_HalfspaceClassifier):
    """001 Section 5 (Theorem 5.1, epsilon-DP) at toy sizes: a two-layer tanh network of
    width ``width`` on a ``dimension``-dimensional sign embedding, chosen by the exponential
    mechanism over a cover of the weights (enumerated: keep the sizes small).

    ``candidates`` (the practical regime): None (the cover: ``dimension`` and ``width`` in
    [1, 3]) or N random networks drawn before the data are read, scored in memory-bounded
    chunks and selected by the streaming Gumbel-max (``dimension`` up to 1000, ``width`` up
    to 64); ``kappa`` is the activation's Lipschitz constant, tanh(kappa a).  Neither enters
    the privacy proof (see :class:`mechanisms.margin_nonlinear.NeuralNetLearner`).
    """

    NAME = "neural-net-margin"
    TASK = "neural network"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Section 5 (Theorem 5.1)"
    PRIVACY = "pure"
    SUMMARY = "exponential mechanism over a cover of two-layer networks (toy sizes)"
    EFFICIENT = False
    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = NEURAL_NET_REGIMES

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(cls, n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", "rho"),
            NEURAL_NET_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float = 0.1,
        dimension: int = 2,
        width: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: int | None = None,
        kappa: float = 1.0,
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.dimension = dimension
        self.width = width
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.candidates = candidates
        self.kappa = kappa

    def _check_params(self) -> None:
        self._check_common("rho")
        check_in_range("kappa", self.kappa, 0.0)
        if self.candidates is None:
            check_integer("dimension", self.dimension, 1, 3)
            check_integer("width", self.width, 1, 3)
        else:
            check_integer("candidates", self.candidates, 1, 10**6)
            check_integer("dimension", self.dimension, 1, 1000)
            check_integer("width", self.width, 1, 64)

    def _learner(self, n: int, d: int) -> Any:
        return NeuralNetLearner(
            float(self.epsilon),
            float(self.rho),
            int(self.dimension),
            int(self.width),
            kappa=float(self.kappa),
            candidates=_candidates(self.candidates),
        )

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self.model_.scores(self._rows(X))


class MarginSelectionClassifier(_HalfspaceClassifier):
    """001 Appendix F (reconstructed): Algorithm 1 at rho_j = 2^-j (j = 1..``grid``) with
    epsilon/(2 grid) each, then the exponential mechanism (epsilon/2) picks the margin.

    Practical-regime options (privacy unchanged, see
    :class:`mechanisms.margin.MarginSelection`): ``largest_margin`` g (None: 1/2; the grid
    is g 2^-(j-1)), ``penalty`` c (the factor of Appendix F's complexity term, default 1)
    and ``selection_share`` s (the final selection's share of epsilon, default 1/2).
    """

    NAME = "margin-selection"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Appendix F (margin selection, reconstructed)"
    PRIVACY = "pure"
    SUMMARY = "Algorithm 1 over a grid of margins, the margin chosen privately"
    EFFICIENT = False

    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = MARGIN_SELECTION_REGIMES

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(cls, n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", ""),
            RANDOM_CANDIDATES_NOTE,
            SELECTION_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        grid: int = 3,
        dimension: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: int | None = None,
        largest_margin: float | None = None,
        penalty: float = 1.0,
        selection_share: float = 0.5,
    ) -> None:
        self.epsilon = epsilon
        self.grid = grid
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.candidates = candidates
        self.largest_margin = largest_margin
        self.penalty = penalty
        self.selection_share = selection_share

    def _check_params(self) -> None:
        self._check_common()
        check_integer("grid", self.grid, 1, 8)
        _check_candidates(self, 3)
        if self.largest_margin is not None:
            check_in_range("largest_margin", self.largest_margin, 0.0, 1.0, high_open=False)
        check_in_range("penalty", self.penalty, 0.0, low_open=False)
        check_in_range("selection_share", self.selection_share, 0.0, 1.0)

    def _learner(self, n: int, d: int) -> Any:
        return MarginSelection(
            float(self.epsilon),
            int(self.grid),
            int(self.dimension),
            candidates=_candidates(self.candidates),
            selection_share=float(self.selection_share),
            penalty=float(self.penalty),
            largest_margin=None if self.largest_margin is None else float(self.largest_margin),
        )

    def _fit_learner(
        self, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        model, rho = learner.fit(self._rows(X), y, rng)
        self.rho_ = rho
        return model
