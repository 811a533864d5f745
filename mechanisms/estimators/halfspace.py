"""Scikit-learn classifiers for the halfspace / margin learners of source documents 000
(Nguyen, Ullman, Zakynthinou 2020) and 001 (Bassily, Mohri, Suresh 2022): here the shared
parts and the selection learners of 000 Algorithm 2, 001 Algorithm 1 and Appendix E; the
noisy-gradient learners are in :mod:`mechanisms.estimators.halfspace_gd`, the network and
margin-selection learners in :mod:`mechanisms.estimators.halfspace_selection`.

Features are mapped into the unit ball record by record, with a data-independent bound
``feature_norm`` (rows longer than it are clipped to it, then all rows are divided by it;
rescaling by the data's own largest norm would leak) and, with ``fit_intercept``, a constant
coordinate appended (then the row is divided by sqrt 2).  A record-wise map keeps
neighbouring datasets neighbouring, so the learners' guarantees hold for the raw data.

Regimes (:mod:`mechanisms.estimators.regimes`; the constants are in
:mod:`mechanisms.estimators.halfspace_regimes`, each with why the privacy proof holds):
``regime="practical"`` (default) runs tuned, data-independent constants that learn at
practical sizes; ``regime="paper"`` the papers' constants, as these classes ran before.
Every parameter left at None is filled in by the regime; an explicit value wins.

``dimension``: an integer (the JL / sign projection's target dimension) or ``"identity"``
(no projection: the data's own features, the practical regimes' choice).

``optimizer`` of the noisy-SGD learners: ``"calibrated"`` (practical) full-batch noisy GD
with sigma calibrated by the accountant to the requested (epsilon, delta)
(:mod:`mechanisms.calibrated_gd`; ``steps`` gradient steps, ``"auto"`` = 100); ``"bst14"``
(000's Algorithm 3) and ``"phased"`` (001's Algorithm 4 as reconstructed in
:mod:`mechanisms.phased_sgd`, the paper regime of 001's learners).  ``steps`` of the BST14
optimiser: ``"auto"`` runs min(n^2, 100000) steps per run (BST14's sigma is calibrated for
n^2 steps and kept, so fewer steps spend *less*), ``"paper"`` n^2, or an integer.

``candidates`` of the selection learners (net, pure, label-DP, margin selection, network):
``"net"`` (the paper's enumerated net or cover; ``"labelings"`` for the label-DP learner)
or N random candidates drawn before the data are read, localised over ``rounds`` rounds
(:mod:`mechanisms.localised_selection`; 1 round: one exponential mechanism, the papers'
plan).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from mechanisms.calibrated_gd import CALIBRATED_STEPS
from mechanisms.estimators.base import (
    PAPER_CURVE,
    PrivateClassifier,
    check_in_range,
    check_integer,
)
from mechanisms.estimators.halfspace_regimes import (
    AUTO_STEPS,
    LABEL_DP_DEFAULTS,
    LABEL_DP_TUNED,
    NET_MARGIN_DEFAULTS,
    NET_MARGIN_TUNED,
    PURE_MARGIN_DEFAULTS,
    PURE_MARGIN_TUNED,
    RANDOM_CANDIDATES_NOTE,
    SELECTION_PEER_NOTE,
    projection_note,
)
from mechanisms.halfspaces import NetMarginLearner
from mechanisms.margin import (
    LabelDPLearner,
    PureLinearLearner,
)
from mechanisms.margin_linear import OPTIMIZERS

__all__ = [
    "LabelDPClassifier",
    "NetMarginClassifier",
    "PureMarginClassifier",
    "unit_rows",
]


def unit_rows(X: np.ndarray, feature_norm: float, fit_intercept: bool) -> np.ndarray:
    """The record-wise map into the unit ball described in the module docstring."""
    Z = np.asarray(X, dtype=float) / feature_norm
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    Z = np.where(norms > 1.0, Z / np.maximum(norms, 1e-300), Z)
    if fit_intercept:
        Z = np.concatenate([Z, np.ones((len(Z), 1))], axis=1) / math.sqrt(2.0)
    return Z


def _steps(steps: Any, n: int, optimizer: str = "bst14") -> int:
    if optimizer == "calibrated":
        if steps == "auto":
            return CALIBRATED_STEPS
        if steps == "paper":
            raise ValueError(
                "steps must be 'auto' or an integer in [1, inf) with optimizer='calibrated' "
                "(the papers' n^2 steps belong to their own optimisers), got 'paper'"
            )
    elif steps == "auto":
        return min(n * n, AUTO_STEPS)
    elif steps == "paper":
        return n * n
    return check_integer("steps", steps)


def _check_optimizer(optimizer: Any, allowed: tuple[str, ...] = OPTIMIZERS) -> str:
    if optimizer not in allowed:
        raise ValueError(
            f"optimizer must be one of {', '.join(map(repr, allowed))}, got {optimizer!r}"
        )
    return str(optimizer)


def _dimension(value: Any, high: float = math.inf) -> int | None:
    """``dimension``: ``"identity"`` (None: no projection) or an integer in [1, high]."""
    if value == "identity":
        return None
    if isinstance(value, str):
        raise ValueError(f"dimension must be 'identity' or an integer in [1, inf), got {value!r}")
    return check_integer("dimension", value, 1, high)


def _check_candidates(s: Any, net_dimension: int | None, paper: str = "net") -> None:
    """``candidates`` ``paper`` (the enumerated net: ``dimension`` an integer at most
    ``net_dimension``, one round) or an integer in [1, 10^6] (random candidates: any
    ``dimension``), and the rounds' schedule (``net_dimension`` None: the learner has no
    projection)."""
    if s.candidates == paper:
        if net_dimension is not None:
            _dimension(s.dimension, net_dimension)
        if net_dimension is not None and s.dimension == "identity":
            raise ValueError(
                f"dimension must be an integer in [1, {net_dimension}] with candidates="
                f"{paper!r} (the enumerated set is exponential in it), got 'identity'"
            )
        check_integer("rounds", s.rounds, 1, 1)
    else:
        check_integer("candidates", s.candidates, 1, 10**6)
        if net_dimension is not None:
            _dimension(s.dimension, 10**4)
        check_integer("rounds", s.rounds, 1, 64)
    check_in_range("first_angle", s.first_angle, 0.0, math.pi, high_open=False)
    check_in_range("shrink", s.shrink, 0.0, 1.0, high_open=False)


def _candidates(s: Any, paper: str = "net") -> int | None:
    return None if s.candidates == paper else int(s.candidates)


def _rounds_check(s: Any, n: int) -> None:
    if s.candidates not in ("net", "labelings") and int(s.rounds) > n:
        raise ValueError(
            f"rounds must be an integer in [1, {n}] (each round scores its own part of the "
            f"n = {n} rows), got {s.rounds}"
        )


class _HalfspaceClassifier(PrivateClassifier):
    """Shared parts: the unit-ball map, a linear model's scores."""

    LABELS: ClassVar[tuple[int, int]] = (-1, 1)
    TASK: ClassVar[str] = "halfspace"

    def _check_common(self, s: Any, margin: str | None = None) -> None:
        """Check delta (if the learner has one), feature_norm and the margin parameter named
        ``margin`` (``"margin"`` or ``"rho"``, in (0, 1]); epsilon is checked by the base."""
        if hasattr(self, "delta"):
            check_in_range("delta", s.delta, 0.0, 1.0)
        check_in_range("feature_norm", s.feature_norm, 0.0)
        if margin is not None:
            check_in_range(margin, getattr(s, margin), 0.0, 1.0, high_open=False)

    def _check_noisy_sgd(self, s: Any, optimizers: tuple[str, ...] = OPTIMIZERS) -> None:
        """Check the noisy-SGD learners' projection, repetitions, optimizer and steps."""
        _dimension(s.dimension)
        check_integer("repetitions", s.repetitions)
        _steps(s.steps, 2, _check_optimizer(s.optimizer, optimizers))

    def _rows(self, X: np.ndarray) -> np.ndarray:
        return unit_rows(X, float(self.feature_norm), bool(self.fit_intercept))

    def _fit_learner(
        self, s: Any, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        return learner.fit(self._rows(X), y, rng)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._rows(X) @ self.model_.w


class NetMarginClassifier(_HalfspaceClassifier):
    """000 Algorithm 2: JL projection to R^``dimension``, the exponential mechanism over a
    gamma/10-net of the unit ball (Theorem 5, epsilon-DP); in the practical regime over
    random candidates localised over rounds (module docstring).

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): ``candidates`` 2000
    random unit vectors per round [the gamma/10-net], ``rounds`` a function of n [1],
    no projection [JL to 2], margin 0.3 [0.3].  See ``TUNED``.
    """

    NAME = "net-margin"
    SOURCE = "000 Nguyen-Ullman-Zakynthinou 2020, Algorithm 2 (JL + EM over a net)"
    PRIVACY = "pure"
    SUMMARY = "exponential mechanism over a net (practical: localised random candidates)"
    EFFICIENT = False
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = NET_MARGIN_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = NET_MARGIN_TUNED
    PEER_NOTE = SELECTION_PEER_NOTE

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(n, d, "000", "m = O(log(n/(alpha beta))/gamma^2)", 0.3, 2),
            RANDOM_CANDIDATES_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        margin: float | None = None,
        dimension: Any = None,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: Any = None,
        rounds: int | None = None,
        first_angle: float | None = None,
        shrink: float | None = None,
        regime: str = "practical",
    ) -> None:
        self.epsilon = epsilon
        self.margin = margin
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.candidates = candidates
        self.rounds = rounds
        self.first_angle = first_angle
        self.shrink = shrink
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        self._check_common(s, "margin")
        _check_candidates(s, 4)

    def _learner(self, s: Any, n: int, d: int) -> Any:
        _rounds_check(s, n)
        return NetMarginLearner(
            float(s.epsilon),
            float(s.margin),
            _dimension(s.dimension),
            candidates=_candidates(s),
            rounds=int(s.rounds),
            first_angle=float(s.first_angle),
            shrink=float(s.shrink),
        )


class PureMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 1 (Theorem 3.1, epsilon-DP): random sign projection to R^``dimension``,
    the exponential mechanism over a rho/(10 r)-cover of B(2 Lambda) scored by the empirical
    rho-margin loss; in the practical regime over random candidates localised over rounds.

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): ``candidates`` 2000
    random points per round [the cover], ``rounds`` a function of n [1], no projection
    [k = 2], rho 0.05 [0.25].  See ``TUNED``.
    """

    NAME = "pure-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 1 (Theorem 3.1)"
    PRIVACY = "pure"
    SUMMARY = "exponential mechanism over a cover, rho-margin loss (practical: localised)"
    EFFICIENT = False
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = PURE_MARGIN_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = PURE_MARGIN_TUNED
    PEER_NOTE = SELECTION_PEER_NOTE

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", 0.25, 2),
            RANDOM_CANDIDATES_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float | None = None,
        dimension: Any = None,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: Any = None,
        rounds: int | None = None,
        first_angle: float | None = None,
        shrink: float | None = None,
        regime: str = "practical",
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.candidates = candidates
        self.rounds = rounds
        self.first_angle = first_angle
        self.shrink = shrink
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        self._check_common(s, "rho")
        _check_candidates(s, 4)

    def _learner(self, s: Any, n: int, d: int) -> Any:
        _rounds_check(s, n)
        return PureLinearLearner(
            float(s.epsilon),
            float(s.rho),
            _dimension(s.dimension),
            candidates=_candidates(s),
            rounds=int(s.rounds),
            first_angle=float(s.first_angle),
            shrink=float(s.shrink),
        )


class LabelDPClassifier(_HalfspaceClassifier):
    """001 Appendix E (reconstructed): label-DP halfspaces through the origin: the
    exponential mechanism on the rho-margin loss of the (private) labels over candidates that
    do not read the labels -- one halfspace of R^2 per labeling of the (public) features
    (``candidates="labelings"``, the paper regime; d != 2 features are first projected to R^2
    by a random orthonormal map drawn before the data are read), or random halfspaces of R^d
    localised over rounds (practical; module docstring).

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): ``candidates`` 2000
    per round [the labelings of R^2], ``rounds`` a function of n [1], rho 0.05 [0.1].

    Cost: the paper regime scores about 2m labelings on m rows, O(m^2) time and memory
    (measured: 5 CPU s and 340 MB per fit at m = 3,000; 52 CPU s and 840 MB at m = 10^4),
    so the learning curves run it up to n = 3,000 only (``CURVE_MAX_N``); the defaults fit
    m = 10^4 in under a second.
    """

    NAME = "label-dp-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Appendix E (label DP, reconstructed)"
    PRIVACY = "label"
    SUMMARY = "features public, labels private: EM over halfspaces that do not read the labels"
    EFFICIENT = False
    EPSILON_NOTE = (
        "regime='paper' enumerates the labelings of R^2: d != 2 features are projected to R^2 "
        "by a random orthonormal map (data-independent)"
    )
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = LABEL_DP_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = LABEL_DP_TUNED
    PEER_NOTE = SELECTION_PEER_NOTE
    CURVE_MAX_N: ClassVar[dict[str, tuple[int, str]]] = {
        PAPER_CURVE: (
            3000,
            "the paper regime scores about 2n labelings of R^2 on n rows, O(n^2) time and "
            "memory: 52 CPU s and 840 MB per fit at n = 10^4, against 5 s and 340 MB at "
            "n = 3,000",
        )
    }

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float | None = None,
        feature_norm: float = 1.0,
        random_state: Any = None,
        candidates: Any = None,
        rounds: int | None = None,
        first_angle: float | None = None,
        shrink: float | None = None,
        regime: str = "practical",
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.feature_norm = feature_norm
        self.random_state = random_state
        self.candidates = candidates
        self.rounds = rounds
        self.first_angle = first_angle
        self.shrink = shrink
        self.regime = regime

    fit_intercept = False

    def _check_params(self, s: Any) -> None:
        self._check_common(s, "rho")
        _check_candidates(s, None, "labelings")

    def _reduction_notes(self, s: Any, d: int) -> list[str]:
        if s.candidates == "labelings" and d != 2:
            return [
                f"the {d} features are projected to R^2 by a random orthonormal map drawn "
                "before the data are read (the labelings are enumerated in R^2)"
            ]
        return []

    def _learner(self, s: Any, n: int, d: int) -> Any:
        _rounds_check(s, n)
        return LabelDPLearner(
            float(s.epsilon),
            float(s.rho),
            candidates=_candidates(s, "labelings"),
            rounds=int(s.rounds),
            first_angle=float(s.first_angle),
            shrink=float(s.shrink),
        )

    def _fit_learner(
        self, s: Any, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        Z = self._rows(X)
        d = Z.shape[1]
        if s.candidates == "labelings" and d != 2:
            from mechanisms.estimators.prediction import _projection_2d

            P = _projection_2d(d, rng)
            model = learner.fit(Z @ P.T, y, rng)
            return type(model)(P.T @ model.w)
        return learner.fit(Z, y, rng)
