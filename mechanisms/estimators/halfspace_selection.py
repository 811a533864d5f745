"""Scikit-learn classifiers for 001's selection learners (Bassily, Mohri, Suresh 2022):
the network learner of Section 5 and the margin selection of Appendix F, both an exponential
mechanism over an enumerated (or, in the practical regime, randomly drawn and localised)
candidate set.  The shared parts (the unit-ball map, the ``candidates`` and ``rounds``
options, the regimes) are those of :mod:`mechanisms.estimators.halfspace`."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from mechanisms.estimators.base import check_in_range, check_integer
from mechanisms.estimators.halfspace import (
    _candidates,
    _check_candidates,
    _dimension,
    _HalfspaceClassifier,
    _rounds_check,
)
from mechanisms.estimators.halfspace_regimes import (
    MARGIN_SELECTION_DEFAULTS,
    MARGIN_SELECTION_TUNED,
    NEURAL_NET_DEFAULTS,
    NEURAL_NET_NOTE,
    NEURAL_NET_TUNED,
    RANDOM_CANDIDATES_NOTE,
    SELECTION_NOTE,
    SELECTION_PEER_NOTE,
    projection_note,
)
from mechanisms.margin import MarginSelection, NeuralNetLearner

__all__ = ["MarginSelectionClassifier", "NeuralNetMarginClassifier"]


class NeuralNetMarginClassifier(_HalfspaceClassifier):
    """001 Section 5 (Theorem 5.1, epsilon-DP): a two-layer tanh network of width ``width``
    on a ``dimension``-dimensional sign embedding, chosen by the exponential mechanism over
    a cover of the weights (``candidates="net"``, the paper regime: enumerated, so toy sizes
    only) or over random networks localised over ``rounds`` rounds (practical).

    ``candidates`` N random networks are drawn from the learner's randomness before the data
    are read and scored in memory-bounded chunks (``dimension`` up to 1000, ``width`` up to
    64); with one round they are selected by the streaming Gumbel-max; ``kappa`` is the
    activation's Lipschitz constant, tanh(kappa a).  None of these enters the privacy proof
    (see :class:`mechanisms.margin_nonlinear.NeuralNetLearner`).

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): 1000 random networks
    per round [the cover], ``rounds`` a function of n [1], k = 40 [2], width 2 [2],
    kappa 3 [1], rho 0.05 [0.1].  See ``TUNED``.  Measured at d = 20, n = 20,000,
    epsilon 1 (margin-0.1 data, seeds 0-2): median test error 0.002 (the earlier k = 10,
    width 4 erred 0.146: a 10-dimensional embedding of 20 features loses information, and
    a square k = d = 20 sign matrix is badly conditioned, 0.073).  k = 2d was tried too:
    better at d = 100, n = 10,000 (0.098 against k = 40's 0.228) but worse on the digits
    (64 features, n = 1258: 0.516 against 0.293; breast cancer 0.135 against 0.105), where
    5 rounds of about 250 rows cannot search 4d + 2 weights.
    """

    NAME = "neural-net-margin"
    TASK = "neural network"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Section 5 (Theorem 5.1)"
    PRIVACY = "pure"
    SUMMARY = "exponential mechanism over two-layer networks (practical: localised)"
    EFFICIENT = False
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = NEURAL_NET_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = NEURAL_NET_TUNED
    PEER_NOTE = (
        "its networks (width 2) see a random 40-dimensional sign embedding of the features, "
        "which loses information when d > 40; " + SELECTION_PEER_NOTE
    )

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", 0.1, 2),
            NEURAL_NET_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float | None = None,
        dimension: int | None = None,
        width: int | None = None,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: Any = None,
        kappa: float | None = None,
        rounds: int | None = None,
        first_angle: float | None = None,
        shrink: float | None = None,
        regime: str = "practical",
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
        self.rounds = rounds
        self.first_angle = first_angle
        self.shrink = shrink
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        self._check_common(s, "rho")
        check_in_range("kappa", s.kappa, 0.0)
        if s.candidates == "net":
            check_integer("dimension", s.dimension, 1, 3)
            check_integer("width", s.width, 1, 3)
        else:
            check_integer("dimension", s.dimension, 1, 1000)
            check_integer("width", s.width, 1, 64)
        _check_candidates(s, None)

    def _learner(self, s: Any, n: int, d: int) -> Any:
        _rounds_check(s, n)
        return NeuralNetLearner(
            float(s.epsilon),
            float(s.rho),
            int(s.dimension),
            int(s.width),
            kappa=float(s.kappa),
            candidates=_candidates(s),
            rounds=int(s.rounds),
            first_angle=float(s.first_angle),
            shrink=float(s.shrink),
        )

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self.model_.scores(self._rows(X))


class MarginSelectionClassifier(_HalfspaceClassifier):
    """001 Appendix F (reconstructed): Algorithm 1 at rho_j = g 2^-(j-1) (j = 1..``grid``)
    with epsilon/(2 grid) each, then the exponential mechanism (epsilon/2) picks the margin.

    Options (privacy unchanged, see :class:`mechanisms.margin.MarginSelection`):
    ``largest_margin`` g (the paper's 1/2), ``penalty`` c (the factor of Appendix F's
    complexity term, the paper's 1), ``selection_share`` s (the final selection's share of
    epsilon, the paper's 1/2), and the candidates / rounds of each Algorithm 1 run.

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): each margin's
    Algorithm 1 on 2000 localised random candidates per round [the cover], no projection
    [k = 2], the grid 0.2, 0.1, 0.05 [1/2, 1/4, 1/8], penalty x 0.1 [x 1], the final
    selection's share of epsilon 0.1 [1/2].  See ``TUNED``.
    """

    NAME = "margin-selection"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Appendix F (margin selection, reconstructed)"
    PRIVACY = "pure"
    SUMMARY = "Algorithm 1 over a grid of margins, the margin chosen privately"
    EFFICIENT = False
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = MARGIN_SELECTION_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = MARGIN_SELECTION_TUNED
    PEER_NOTE = (
        "it splits epsilon over three margins and the choice among them; " + SELECTION_PEER_NOTE
    )

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", 0.125, 2),
            RANDOM_CANDIDATES_NOTE,
            SELECTION_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        grid: int = 3,
        dimension: Any = None,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: Any = None,
        largest_margin: float | None = None,
        penalty: float | None = None,
        selection_share: float | None = None,
        rounds: int | None = None,
        first_angle: float | None = None,
        shrink: float | None = None,
        regime: str = "practical",
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
        self.rounds = rounds
        self.first_angle = first_angle
        self.shrink = shrink
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        self._check_common(s)
        check_integer("grid", s.grid, 1, 8)
        _check_candidates(s, 3)
        check_in_range("largest_margin", s.largest_margin, 0.0, 1.0, high_open=False)
        check_in_range("penalty", s.penalty, 0.0, low_open=False)
        check_in_range("selection_share", s.selection_share, 0.0, 1.0)

    def _learner(self, s: Any, n: int, d: int) -> Any:
        _rounds_check(s, n)
        return MarginSelection(
            float(s.epsilon),
            int(s.grid),
            _dimension(s.dimension),
            candidates=_candidates(s),
            selection_share=float(s.selection_share),
            penalty=float(s.penalty),
            largest_margin=float(s.largest_margin),
            rounds=int(s.rounds),
            first_angle=float(s.first_angle),
            shrink=float(s.shrink),
        )

    def _fit_learner(
        self, s: Any, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        model, rho = learner.fit(self._rows(X), y, rng)
        self.rho_ = rho
        return model
