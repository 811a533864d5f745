"""Scikit-learn classifiers for the noisy-gradient learners of source documents 000 (Nguyen,
Ullman, Zakynthinou 2020, Algorithm 1 via Algorithm 3) and 001 (Bassily, Mohri, Suresh 2022,
Algorithms 2 and 3).  The shared parts (the unit-ball map, ``dimension``, ``optimizer``,
``steps``, the regimes) are described in :mod:`mechanisms.estimators.halfspace`."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from dpaudit.events import Event
from mechanisms.estimators.base import check_in_range, check_integer
from mechanisms.estimators.halfspace import _dimension, _HalfspaceClassifier, _steps
from mechanisms.estimators.halfspace_regimes import (
    EFFICIENT_MARGIN_DEFAULTS,
    EFFICIENT_MARGIN_TUNED,
    GD_PEER_NOTE,
    KERNEL_MARGIN_DEFAULTS,
    KERNEL_MARGIN_TUNED,
    NOISY_SGD_DEFAULTS,
    NOISY_SGD_TUNED,
    PRACTICAL_NOTE,
    kernel_notes,
    phased_note,
    steps_note,
)
from mechanisms.halfspaces import NoisyGDMarginLearner
from mechanisms.margin import EfficientLinearLearner, KernelLearner

__all__ = ["EfficientMarginClassifier", "KernelMarginClassifier", "NoisySGDMarginClassifier"]


class NoisySGDMarginClassifier(_HalfspaceClassifier):
    """000 Algorithm 1 via Algorithm 3: JL projection to R^``dimension``, noisy gradient
    descent on the margin loss (``repetitions`` runs), the best run chosen by the
    exponential mechanism.

    Args:
        epsilon, delta: the (epsilon, delta)-DP target (Theorem 3), replace-one.
        margin: gamma, the margin the loss is built for, in (0, 1].
        dimension: m, the JL dimension, or ``"identity"`` (no projection).
        repetitions: runs (000: ceil(log(8/beta))).
        steps: per run, ``"auto"``, ``"paper"`` (n^2) or an integer (module docstring).
        optimizer: ``"calibrated"`` or ``"bst14"`` (000 Algorithm 3).
        feature_norm, fit_intercept: the unit-ball map (module docstring).
        regime: ``"practical"`` (tuned constants) or ``"paper"``.
        random_state: None, an int seed or a numpy Generator.

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): optimizer
    ``"calibrated"`` [``"bst14"``], one run [3], 300 full-batch steps [min(n^2, 10^5)
    sampled], no projection [JL to 10], margin 0.1 [0.1].  See ``TUNED`` for why each keeps
    the privacy proof.
    """

    NAME = "noisy-sgd-margin"
    SOURCE = "000 Nguyen-Ullman-Zakynthinou 2020, Algorithm 1 via Algorithm 3 (JL + BST14 SGD)"
    PRIVACY = "approximate"
    SUMMARY = "JL projection, noisy gradient descent on the margin loss, best run by the EM"
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = NOISY_SGD_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = NOISY_SGD_TUNED
    PEER_NOTE = GD_PEER_NOTE

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [steps_note(n, 3), PRACTICAL_NOTE]

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        margin: float | None = None,
        dimension: Any = None,
        repetitions: int | None = None,
        steps: Any = None,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        optimizer: str | None = None,
        regime: str = "practical",
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
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        self._check_common(s, "margin")
        self._check_noisy_sgd(s, ("bst14", "calibrated"))

    def _learner(self, s: Any, n: int, d: int) -> Any:
        return NoisyGDMarginLearner(
            float(s.epsilon),
            float(s.delta),
            float(s.margin),
            _dimension(s.dimension),
            int(s.repetitions),
            _steps(s.steps, n, s.optimizer),
            optimizer=s.optimizer,
        )


class EfficientMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 2 (Theorem 3.2, (epsilon, delta)-DP): projection, clipping onto
    B(2r), private ERM of the rho-hinge loss: by full-batch noisy GD calibrated by the
    accountant (practical), by Algorithm 4 (``optimizer="phased"``, the paper regime:
    phased SGD on the smoothed loss + selection by the EM, reconstructed in
    :mod:`mechanisms.phased_sgd`) or the BST14 stand-in (``"bst14"``).

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): optimizer
    ``"calibrated"`` [``"phased"``], one run [2], 300 steps [about n], no projection
    [k = 10], rho 0.1 [0.25].  See ``TUNED``.
    """

    NAME = "efficient-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 2 (Theorem 3.2)"
    PRIVACY = "approximate"
    SUMMARY = "projection, clipping, private ERM of the rho-hinge loss"
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = EFFICIENT_MARGIN_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = EFFICIENT_MARGIN_TUNED
    PEER_NOTE = GD_PEER_NOTE

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [phased_note(n, 2), PRACTICAL_NOTE]

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        rho: float | None = None,
        dimension: Any = None,
        repetitions: int | None = None,
        steps: Any = None,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
        optimizer: str | None = None,
        regime: str = "practical",
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
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        self._check_common(s, "rho")
        self._check_noisy_sgd(s)

    def _learner(self, s: Any, n: int, d: int) -> Any:
        return EfficientLinearLearner(
            float(s.epsilon),
            float(s.delta),
            float(s.rho),
            _dimension(s.dimension),
            repetitions=int(s.repetitions),
            steps=_steps(s.steps, n, s.optimizer),
            optimizer=s.optimizer,
        )

    def _plan(self, s: Any, learner: Any, n: int, d: int) -> Event:
        return learner.plan(n, d + int(bool(self.fit_intercept)))


class KernelMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 3 (Theorem 4.2): ``features`` random Fourier features of the Gaussian
    kernel of width ``bandwidth`` (data-independent), then Algorithm 2 on them.  The
    unit-ball map is applied first (so ``bandwidth`` is in units of ``feature_norm``).

    Tuned constants (``regime="practical"``; ``"paper"`` in brackets): D = 500 features
    [50], bandwidth 2 [0.5], optimizer ``"calibrated"`` [``"phased"``], one run [2], 300
    steps, no projection of the 2D features [k = 10], rho 0.05 [0.25].  See ``TUNED``.
    """

    NAME = "kernel-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 3 (Theorem 4.2, random Fourier features)"
    PRIVACY = "approximate"
    SUMMARY = "random Fourier features of a Gaussian kernel, then Algorithm 2"
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = KERNEL_MARGIN_DEFAULTS
    TUNED: ClassVar[dict[str, str]] = KERNEL_MARGIN_TUNED
    PEER_NOTE = (
        "its D = 200 random Fourier features make a 400-dimensional problem whose privacy "
        "noise grows with that dimension, for data a linear model already fits; " + GD_PEER_NOTE
    )

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return kernel_notes(n)

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        rho: float | None = None,
        features: int | None = None,
        dimension: Any = None,
        bandwidth: float | None = None,
        repetitions: int | None = None,
        steps: Any = None,
        feature_norm: float = 1.0,
        fit_intercept: bool = False,
        random_state: Any = None,
        optimizer: str | None = None,
        regime: str = "practical",
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
        self.regime = regime

    def _check_params(self, s: Any) -> None:
        self._check_common(s, "rho")
        check_integer("features", s.features, 1, 10**5)
        check_in_range("bandwidth", s.bandwidth, 0.0)
        self._check_noisy_sgd(s)

    def _learner(self, s: Any, n: int, d: int) -> Any:
        return KernelLearner(
            float(s.epsilon),
            float(s.delta),
            float(s.rho),
            int(s.features),
            _dimension(s.dimension),
            float(s.bandwidth),
            repetitions=int(s.repetitions),
            steps=_steps(s.steps, n, s.optimizer),
            optimizer=s.optimizer,
        )

    def _decision(self, X: np.ndarray) -> np.ndarray:
        from mechanisms.margin import random_fourier_features

        model = self.model_
        return random_fourier_features(self._rows(X), model.frequencies, model.radius) @ model.w
