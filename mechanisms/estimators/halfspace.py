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
stand-in (BST14 noisy SGD + boosting, clearly the older reconstruction; ``steps`` applies).

``steps`` of the noisy-SGD learners: ``"auto"`` runs min(n^2, 100000) steps per run (the
practical regime: BST14's noise sigma is calibrated for n^2 steps and is kept, so fewer
steps spend *less* privacy than declared for n^2; the accountant states what the run spent),
``"paper"`` the papers' n^2 steps, or an integer.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from mechanisms.estimators.base import PrivateClassifier, check_in_range, check_integer
from mechanisms.halfspaces import NetMarginLearner, NoisyGDMarginLearner
from mechanisms.margin import (
    EfficientLinearLearner,
    KernelLearner,
    LabelDPLearner,
    MarginSelection,
    NeuralNetLearner,
    PureLinearLearner,
)
from mechanisms.margin_linear import OPTIMIZERS

__all__ = [
    "EfficientMarginClassifier",
    "KernelMarginClassifier",
    "LabelDPClassifier",
    "MarginSelectionClassifier",
    "NetMarginClassifier",
    "NeuralNetMarginClassifier",
    "NoisySGDMarginClassifier",
    "PureMarginClassifier",
    "unit_rows",
]

#: ``steps="auto"``: at most this many noisy-SGD steps per run.
AUTO_STEPS = 100_000


def unit_rows(X: np.ndarray, feature_norm: float, fit_intercept: bool) -> np.ndarray:
    """The record-wise map into the unit ball described in the module docstring."""
    Z = np.asarray(X, dtype=float) / feature_norm
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    Z = np.where(norms > 1.0, Z / np.maximum(norms, 1e-300), Z)
    if fit_intercept:
        Z = np.concatenate([Z, np.ones((len(Z), 1))], axis=1) / math.sqrt(2.0)
    return Z


def _steps(steps: Any, n: int) -> int:
    if steps == "auto":
        return min(n * n, AUTO_STEPS)
    if steps == "paper":
        return n * n
    return check_integer("steps", steps)


def _check_optimizer(optimizer: Any) -> str:
    if optimizer not in OPTIMIZERS:
        raise ValueError(
            f"optimizer must be one of {', '.join(map(repr, OPTIMIZERS))}, got {optimizer!r}"
        )
    return str(optimizer)


def _steps_note(n: int, repetitions: int) -> str:
    """The papers' n^2 noisy-SGD steps at n against what ``steps="auto"`` runs."""
    return (
        f"The papers run n^2 = {n * n:,} noisy-SGD steps per run at n = {n:,} "
        f"({repetitions} runs); the curves use steps='auto', min(n^2, {AUTO_STEPS:,}) steps "
        "with the papers' noise scale sigma kept (calibrated for n^2 steps), so the privacy "
        "proof holds and the run spends less than the papers' budget (the accounted epsilon "
        "in the tables): the practical regime, chosen by default. Fewer steps at the same "
        "sigma also average less noise away; the learner offers no setting that recalibrates "
        "sigma to the steps run, so none is drawn."
    )


def _phased_note(n: int, repetitions: int) -> str:
    """What the default optimiser of 001's Algorithm 2 runs at n."""
    return (
        f"001 Algorithm 2 step 4 runs Algorithm 4 (phased SGD + confidence boosting, "
        f"reconstructed: mechanisms.phased_sgd): {n.bit_length() - 1} phases on disjoint "
        f"halving batches, {n - 1:,} gradient steps per run at most ({repetitions} runs), "
        "Gaussian noise on each phase's average iterate calibrated to the stability "
        "sensitivity 2 L eta_i; optimizer='bst14' runs the earlier BST14 stand-in instead."
    )


def _projection_note(cls: Any, n: int, d: int, doc: str, formula: str, margin_name: str) -> str:
    """Why an enumerating learner levels off: the projected dimension its theorem asks for
    (alpha = 0.1, beta = 0.05, the O(.)'s constant taken as 1) against the one it runs at."""
    default = cls()
    margin = float(getattr(default, margin_name, 0.0) or 2.0 ** -int(default.grid))
    if doc == "000":
        dims = math.log(n / (0.1 * 0.05)) / margin**2
    else:
        dims = math.log(n / 0.05) / margin**2
    k = min(d, math.ceil(dims))
    return (
        f"{doc} projects to {formula} dimensions; with the O(.)'s constant taken as 1, at "
        f"n = {n:,}, alpha = 0.1, beta = 0.05 and the default margin parameter "
        f"{margin:g} that is about {dims:,.0f} dimensions (for data of d = {d} dimensions the "
        f"projection would keep them all). The learner enumerates a net of the projected "
        f"ball, exponential in the dimension (at scale margin/10 about (30/margin)^{k} = "
        f"{(30 / margin) ** k:.2g} points in {k} dimensions), so it runs at dimension "
        f"{default.dimension} (the default); a random projection of the synthetic data (R^10, "
        "margin 0.1) to so few dimensions keeps little of the margin, and the error levels "
        "off whatever n. No setting within the proof reaches the theorem's dimension at "
        "feasible cost, so no practical regime is offered."
    )


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

    def _check_noisy_sgd(self) -> None:
        """Check the noisy-SGD learners' JL dimension, repetitions and steps."""
        check_integer("dimension", self.dimension)
        check_integer("repetitions", self.repetitions)
        _steps(self.steps, 2)

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
    """

    NAME = "noisy-sgd-margin"
    SOURCE = "000 Nguyen-Ullman-Zakynthinou 2020, Algorithm 1 via Algorithm 3 (JL + BST14 SGD)"
    PRIVACY = "approximate"
    SUMMARY = "JL projection, noisy SGD on the margin loss, best of k runs by the EM"

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [_steps_note(n, cls().repetitions)]

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

    def _check_params(self) -> None:
        self._check_common("margin")
        self._check_noisy_sgd()

    def _learner(self, n: int, d: int) -> Any:
        return NoisyGDMarginLearner(
            float(self.epsilon),
            float(self.delta),
            float(self.margin),
            int(self.dimension),
            int(self.repetitions),
            _steps(self.steps, n),
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

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [_projection_note(cls, n, d, "000", "m = O(log(n/(alpha beta))/gamma^2)", "margin")]

    def __init__(
        self,
        epsilon: float = 1.0,
        margin: float = 0.3,
        dimension: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.margin = margin
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self) -> None:
        self._check_common("margin")
        check_integer("dimension", self.dimension, 1, 4)

    def _learner(self, n: int, d: int) -> Any:
        return NetMarginLearner(float(self.epsilon), float(self.margin), int(self.dimension))


class PureMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 1 (Theorem 3.1, epsilon-DP): random sign projection to R^``dimension``,
    the exponential mechanism over a rho/(10 r)-cover of B(2 Lambda) scored by the empirical
    rho-margin loss."""

    NAME = "pure-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 1 (Theorem 3.1)"
    PRIVACY = "pure"
    SUMMARY = "projection, exponential mechanism over a cover, rho-margin loss"
    EFFICIENT = False

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [_projection_note(cls, n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", "rho")]

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float = 0.25,
        dimension: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self) -> None:
        self._check_common("rho")
        check_integer("dimension", self.dimension, 1, 4)

    def _learner(self, n: int, d: int) -> Any:
        return PureLinearLearner(float(self.epsilon), float(self.rho), int(self.dimension))


class EfficientMarginClassifier(_HalfspaceClassifier):
    """001 Algorithm 2 (Theorem 3.2, (epsilon, delta)-DP): projection, clipping onto
    B(2r), private ERM of the rho-hinge loss by Algorithm 4 (``optimizer="phased"``: phased
    SGD on the smoothed loss + selection by the EM, reconstructed in
    :mod:`mechanisms.phased_sgd`; ``"bst14"``: the earlier BST14 noisy-SGD stand-in)."""

    NAME = "efficient-margin"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Algorithm 2 (Theorem 3.2)"
    PRIVACY = "approximate"
    SUMMARY = "projection, clipping, phased SGD on the rho-hinge loss, best run by the EM"

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [_phased_note(n, cls().repetitions)]

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
        _check_optimizer(self.optimizer)

    def _learner(self, n: int, d: int) -> Any:
        return EfficientLinearLearner(
            float(self.epsilon),
            float(self.delta),
            float(self.rho),
            int(self.dimension),
            repetitions=int(self.repetitions),
            steps=_steps(self.steps, n),
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

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        beta = 0.05
        paper_features = n * n * math.log(2 * n / beta)
        return [
            f"001 Algorithm 3 step 2 takes D = m^2 log(2m/beta) random Fourier features for m "
            f"samples: at m = {n:,}, beta = {beta:g} that is D = {paper_features:.3g} features "
            f"per example (the curves use the default D = {cls().features}). The privacy does "
            "not depend on D or the bandwidth (the feature map is drawn independently of the "
            "data), so both may be tuned without touching the proof. Tried on the synthetic "
            "data at n = 1000, epsilon = 0.9 (2 seeds each): bandwidth 0.5 / 1 / 2, D = 50 / "
            "200, JL dimension 3 / 10, rho 0.25 / 0.5 / 1, one or two runs: test errors "
            "0.38-0.58 against 0.5 for guessing with the earlier BST14 stand-in optimiser; "
            "with the default, Algorithm 4 (phased SGD, next note), bandwidth 0.5 / 1 / 2, "
            "D = 50 / 200, rho 0.25 / 1: 0.29-0.53. Neither learns reliably at this n, so "
            "no practical regime is offered: the privacy noise of Algorithm 2's optimiser "
            "dominates.",
            _phased_note(n, cls().repetitions),
        ]

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
        _steps(self.steps, 2)

    def _learner(self, n: int, d: int) -> Any:
        return KernelLearner(
            float(self.epsilon),
            float(self.delta),
            float(self.rho),
            int(self.features),
            int(self.dimension),
            float(self.bandwidth),
            repetitions=int(self.repetitions),
            steps=_steps(self.steps, n),
            optimizer=self.optimizer,
        )

    def _decision(self, X: np.ndarray) -> np.ndarray:
        from mechanisms.margin import random_fourier_features

        model = self.model_
        return random_fourier_features(self._rows(X), model.frequencies, model.radius) @ model.w


class NeuralNetMarginClassifier(_HalfspaceClassifier):
    """001 Section 5 (Theorem 5.1, epsilon-DP) at toy sizes: a two-layer tanh network of
    width ``width`` on a ``dimension``-dimensional sign embedding, chosen by the exponential
    mechanism over a cover of the weights (enumerated: keep the sizes small)."""

    NAME = "neural-net-margin"
    TASK = "neural network"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Section 5 (Theorem 5.1)"
    PRIVACY = "pure"
    SUMMARY = "exponential mechanism over a cover of two-layer networks (toy sizes)"
    EFFICIENT = False

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [_projection_note(cls, n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", "rho")]

    def __init__(
        self,
        epsilon: float = 1.0,
        rho: float = 0.1,
        dimension: int = 2,
        width: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.dimension = dimension
        self.width = width
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self) -> None:
        self._check_common("rho")
        check_integer("dimension", self.dimension, 1, 3)
        check_integer("width", self.width, 1, 3)

    def _learner(self, n: int, d: int) -> Any:
        return NeuralNetLearner(
            float(self.epsilon), float(self.rho), int(self.dimension), int(self.width)
        )

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self.model_.scores(self._rows(X))


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


class MarginSelectionClassifier(_HalfspaceClassifier):
    """001 Appendix F (reconstructed): Algorithm 1 at rho_j = 2^-j (j = 1..``grid``) with
    epsilon/(2 grid) each, then the exponential mechanism (epsilon/2) picks the margin."""

    NAME = "margin-selection"
    SOURCE = "001 Bassily-Mohri-Suresh 2022, Appendix F (margin selection, reconstructed)"
    PRIVACY = "pure"
    SUMMARY = "Algorithm 1 over a grid of margins, the margin chosen privately"
    EFFICIENT = False

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        return [_projection_note(cls, n, d, "001", "k = O(Lambda^2 r^2 log(m/beta)/rho^2)", "")]

    def __init__(
        self,
        epsilon: float = 1.0,
        grid: int = 3,
        dimension: int = 2,
        feature_norm: float = 1.0,
        fit_intercept: bool = True,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.grid = grid
        self.dimension = dimension
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self) -> None:
        self._check_common()
        check_integer("grid", self.grid, 1, 8)
        check_integer("dimension", self.dimension, 1, 3)

    def _learner(self, n: int, d: int) -> Any:
        return MarginSelection(float(self.epsilon), int(self.grid), int(self.dimension))

    def _fit_learner(
        self, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        model, rho = learner.fit(self._rows(X), y, rng)
        self.rho_ = rho
        return model
