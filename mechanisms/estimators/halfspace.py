"""Scikit-learn classifiers for the halfspace / margin learners of source documents 000
(Nguyen, Ullman, Zakynthinou 2020) and 001 (Bassily, Mohri, Suresh 2022).

Features are mapped into the unit ball record by record, with a data-independent bound
``feature_norm`` (rows longer than it are clipped to it, then all rows are divided by it;
rescaling by the data's own largest norm would leak) and, with ``fit_intercept``, a constant
coordinate appended (then the row is divided by sqrt 2).  A record-wise map keeps
neighbouring datasets neighbouring, so the learners' guarantees hold for the raw data.

``optimizer`` of 001's Algorithm 2 learners (efficient, kernel): ``"phased"`` (default) runs
001's Algorithm 4 as reconstructed in :mod:`mechanisms.phased_sgd` (phased SGD + confidence
boosting, about n gradient steps per run; ``steps`` is ignored), ``"bst14"`` the earlier
stand-in (BST14 noisy SGD + boosting, clearly the older reconstruction; ``steps`` applies),
``"calibrated"`` (also offered by 000's noisy-SGD learner) the practical regime: full-batch
noisy GD with sigma calibrated by the accountant to the requested (epsilon, delta)
(:mod:`mechanisms.calibrated_gd`; ``steps`` gradient steps, ``"auto"`` = 100).

``steps`` of the BST14 / phased learners: ``"auto"`` runs min(n^2, 100000) steps per run
(BST14's noise sigma is calibrated for n^2 steps and is kept, so fewer steps spend *less*
privacy than declared for n^2; the accountant states what the run spent), ``"paper"`` the
papers' n^2 steps, or an integer.

``candidates`` of the enumerating learners (net, pure, margin selection, and the network
learner of :mod:`mechanisms.estimators.halfspace_selection`): None (the
paper's net or cover) or N random points of the sphere drawn before the data are read (the
practical regime: the exponential mechanism's privacy holds for any data-independent finite
candidate set).  Each class's ``CURVE_REGIMES`` (in
:mod:`mechanisms.estimators.halfspace_regimes`) names its practical regime.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from mechanisms.calibrated_gd import CALIBRATED_STEPS
from mechanisms.estimators.base import PrivateClassifier, check_in_range, check_integer
from mechanisms.estimators.halfspace_regimes import (
    AUTO_STEPS,
    EFFICIENT_MARGIN_REGIMES,
    KERNEL_MARGIN_REGIMES,
    NET_MARGIN_REGIMES,
    NOISY_SGD_REGIMES,
    PRACTICAL_NOTE,
    PURE_MARGIN_REGIMES,
    RANDOM_CANDIDATES_NOTE,
    kernel_notes,
    phased_note,
    projection_note,
    steps_note,
)
from mechanisms.halfspaces import NetMarginLearner, NoisyGDMarginLearner
from mechanisms.margin import (
    EfficientLinearLearner,
    KernelLearner,
    LabelDPLearner,
    PureLinearLearner,
)
from mechanisms.margin_linear import OPTIMIZERS

__all__ = [
    "EfficientMarginClassifier",
    "KernelMarginClassifier",
    "LabelDPClassifier",
    "NetMarginClassifier",
    "NoisySGDMarginClassifier",
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


def _check_candidates(est: Any, net_dimension: int) -> None:
    """``candidates`` None (the paper's enumerated net: ``dimension`` at most
    ``net_dimension``) or an integer in [1, 10^6] (random candidates: ``dimension`` up to
    1000)."""
    if est.candidates is None:
        check_integer("dimension", est.dimension, 1, net_dimension)
    else:
        check_integer("candidates", est.candidates, 1, 10**6)
        check_integer("dimension", est.dimension, 1, 1000)


def _candidates(candidates: Any) -> int | None:
    return None if candidates is None else int(candidates)


class _HalfspaceClassifier(PrivateClassifier):
    """Shared parts: the unit-ball map, a linear model's scores."""

    LABELS: ClassVar[tuple[int, int]] = (-1, 1)
    TASK: ClassVar[str] = "halfspace"

    def _check_common(self, margin: str | None = None) -> None:
        """Check epsilon, delta (if the learner has one), feature_norm and the margin
        parameter named ``margin`` (``"margin"`` or ``"rho"``, in (0, 1])."""
        check_in_range("epsilon", self.epsilon, 0.0)
        if hasattr(self, "delta"):
            check_in_range("delta", self.delta, 0.0, 1.0)
        check_in_range("feature_norm", self.feature_norm, 0.0)
        if margin is not None:
            check_in_range(margin, getattr(self, margin), 0.0, 1.0, high_open=False)

    def _check_noisy_sgd(self, optimizers: tuple[str, ...] = OPTIMIZERS) -> None:
        """Check the noisy-SGD learners' JL dimension, repetitions, optimizer and steps."""
        check_integer("dimension", self.dimension)
        check_integer("repetitions", self.repetitions)
        _steps(self.steps, 2, _check_optimizer(self.optimizer, optimizers))

    def _rows(self, X: np.ndarray) -> np.ndarray:
        return unit_rows(X, float(self.feature_norm), bool(self.fit_intercept))

    def _fit_learner(
        self, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        return learner.fit(self._rows(X), y, rng)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._rows(X) @ self.model_.w


class NoisySGDMarginClassifier(_HalfspaceClassifier):
    """000 Algorithm 1 via Algorithm 3: JL projection to R^``dimension``, BST14 noisy SGD on
    the margin loss (``repetitions`` runs), the best run chosen by the exponential mechanism.

    Args:
        epsilon, delta: the (epsilon, delta)-DP target (Theorem 3), replace-one.
        margin: gamma, the margin the loss is built for, in (0, 1].
        dimension: m, the JL dimension.
        repetitions: runs of noisy SGD (000: ceil(log(8/beta))).
        steps: per run, ``"auto"``, ``"paper"`` (n^2) or an integer (module docstring).
        feature_norm, fit_intercept: the unit-ball map (module docstring).
        random_state: None, an int seed or a numpy Generator.
        optimizer: ``"bst14"`` (000 Algorithm 3, default) or ``"calibrated"`` (the
            practical regime: full-batch noisy GD, sigma calibrated by the accountant to
            (epsilon, delta); ``steps="auto"`` = 100 steps; see
            :mod:`mechanisms.calibrated_gd` for why the privacy proof holds).
    """

    NAME = "noisy-sgd-margin"
    SOURCE = "000 Nguyen-Ullman-Zakynthinou 2020, Algorithm 1 via Algorithm 3 (JL + BST14 SGD)"
    PRIVACY = "approximate"
    SUMMARY = "JL projection, noisy SGD on the margin loss, best of k runs by the EM"
    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = NOISY_SGD_REGIMES

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [steps_note(n, cls().repetitions), PRACTICAL_NOTE]

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        margin: float = 0.1,
        dimension: int = 10,
        repetitions: int = 3,
        steps: Any = "auto",
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        optimizer: str = "bst14",
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.margin = margin
        self.dimension = dimension
        self.repetitions = repetitions
        self.steps = steps
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.optimizer = optimizer

    def _check_params(self) -> None:
        self._check_common("margin")
        self._check_noisy_sgd(("bst14", "calibrated"))

    def _learner(self, n: int, d: int) -> Any:
        return NoisyGDMarginLearner(
            float(self.epsilon),
            float(self.delta),
            float(self.margin),
            int(self.dimension),
            int(self.repetitions),
            _steps(self.steps, n, self.optimizer),
            optimizer=self.optimizer,
        )


class NetMarginClassifier(_HalfspaceClassifier):
    """000 Algorithm 2: JL projection to R^``dimension`` (keep 2-3: the net is enumerated),
    the exponential mechanism over a gamma/10-net of the unit ball (Theorem 5, epsilon-DP).
    """

    NAME = "net-margin"
    SOURCE = "000 Nguyen-Ullman-Zakynthinou 2020, Algorithm 2 (JL + EM over a net)"
    PRIVACY = "pure"
    SUMMARY = "JL projection to R^2, exponential mechanism over a gamma/10-net"
    EFFICIENT = False
    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = NET_MARGIN_REGIMES

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(cls, n, d, "000", "m = O(log(n/(alpha beta))/gamma^2)", "margin"),
            RANDOM_CANDIDATES_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        margin: float = 0.3,
        dimension: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.margin = margin
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.candidates = candidates

    def _check_params(self) -> None:
        self._check_common("margin")
        _check_candidates(self, 4)

    def _learner(self, n: int, d: int) -> Any:
        return NetMarginLearner(
            float(self.epsilon),
            float(self.margin),
            int(self.dimension),
            candidates=_candidates(self.candidates),
        )


class PureMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 1 (Theorem 3.1, epsilon-DP): random sign projection to R^``dimension``,
    the exponential mechanism over a rho/(10 r)-cover of B(2 Lambda) scored by the empirical
    rho-margin loss."""

    NAME = "pure-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 1 (Theorem 3.1)"
    PRIVACY = "pure"
    SUMMARY = "projection, exponential mechanism over a cover, rho-margin loss"
    EFFICIENT = False
    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = PURE_MARGIN_REGIMES

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [
            projection_note(cls, n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", "rho"),
            RANDOM_CANDIDATES_NOTE,
        ]

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float = 0.25,
        dimension: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        candidates: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.candidates = candidates

    def _check_params(self) -> None:
        self._check_common("rho")
        _check_candidates(self, 4)

    def _learner(self, n: int, d: int) -> Any:
        return PureLinearLearner(
            float(self.epsilon),
            float(self.rho),
            int(self.dimension),
            candidates=_candidates(self.candidates),
        )


class EfficientMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 2 (Theorem 3.2, (epsilon, delta)-DP): projection, clipping onto
    B(2r), private ERM of the rho-hinge loss by Algorithm 4 (``optimizer="phased"``: phased
    SGD on the smoothed loss + selection by the EM, reconstructed in
    :mod:`mechanisms.phased_sgd`; ``"bst14"``: the earlier BST14 noisy-SGD stand-in)."""

    NAME = "efficient-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 2 (Theorem 3.2)"
    PRIVACY = "approximate"
    SUMMARY = "projection, clipping, phased SGD on the rho-hinge loss, best run by the EM"
    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = EFFICIENT_MARGIN_REGIMES

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [phased_note(n, cls().repetitions), PRACTICAL_NOTE]

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        rho: float = 0.25,
        dimension: int = 10,
        repetitions: int = 2,
        steps: Any = "auto",
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        optimizer: str = "phased",
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.dimension = dimension
        self.repetitions = repetitions
        self.steps = steps
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.optimizer = optimizer

    def _check_params(self) -> None:
        self._check_common("rho")
        self._check_noisy_sgd()

    def _learner(self, n: int, d: int) -> Any:
        return EfficientLinearLearner(
            float(self.epsilon),
            float(self.delta),
            float(self.rho),
            int(self.dimension),
            repetitions=int(self.repetitions),
            steps=_steps(self.steps, n, self.optimizer),
            optimizer=self.optimizer,
        )


class KernelMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 3 (Theorem 4.2): ``features`` random Fourier features of the Gaussian
    kernel of width ``bandwidth`` (data-independent), then Algorithm 2 on them.  The
    unit-ball map is applied first (so ``bandwidth`` is in units of ``feature_norm``)."""

    NAME = "kernel-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 3 (Theorem 4.2, random Fourier features)"
    PRIVACY = "approximate"
    SUMMARY = "random Fourier features of a Gaussian kernel, then Algorithm 2"
    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = KERNEL_MARGIN_REGIMES

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return kernel_notes(cls, n)

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        rho: float = 0.25,
        features: int = 50,
        dimension: int = 10,
        bandwidth: float = 0.5,
        repetitions: int = 2,
        steps: Any = "auto",
        feature_norm: float = 1.0,
        fit_intercept: bool = False,
        random_state: Any = None,
        optimizer: str = "phased",
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.features = features
        self.dimension = dimension
        self.bandwidth = bandwidth
        self.repetitions = repetitions
        self.steps = steps
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.optimizer = optimizer

    def _check_params(self) -> None:
        self._check_common("rho")
        _check_optimizer(self.optimizer)
        check_integer("features", self.features)
        check_integer("dimension", self.dimension)
        check_in_range("bandwidth", self.bandwidth, 0.0)
        check_integer("repetitions", self.repetitions)
        _steps(self.steps, 2, self.optimizer)

    def _learner(self, n: int, d: int) -> Any:
        return KernelLearner(
            float(self.epsilon),
            float(self.delta),
            float(self.rho),
            int(self.features),
            int(self.dimension),
            float(self.bandwidth),
            repetitions=int(self.repetitions),
            steps=_steps(self.steps, n, self.optimizer),
            optimizer=self.optimizer,
        )

    def _decision(self, X: np.ndarray) -> np.ndarray:
        from mechanisms.margin import random_fourier_features

        model = self.model_
        return random_fourier_features(self._rows(X), model.frequencies, model.radius) @ model.w


class LabelDPClassifier(_HalfspaceClassifier):
    """001 Appendix E (reconstructed): label-DP halfspaces of R^2 through the origin: one
    candidate per labeling of the (public) features, the exponential mechanism on the
    rho-margin loss of the (private) labels.  Needs exactly 2 features (no intercept)."""

    NAME = "label-dp-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Appendix E (label DP, reconstructed)"
    PRIVACY = "label"
    SUMMARY = "features public, labels private: EM over the halfspaces labelling the sample"
    EFFICIENT = False
    N_FEATURES = 2

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float = 0.1,
        feature_norm: float = 1.0,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.feature_norm = feature_norm
        self.random_state = random_state

    fit_intercept = False

    def _check_params(self) -> None:
        self._check_common("rho")
        self._check_feature_count(2)

    def _learner(self, n: int, d: int) -> Any:
        return LabelDPLearner(float(self.epsilon), float(self.rho))
