"""The non-linear learners of source document 001 (Bassily, Mohri, Suresh 2022, see
:mod:`mechanisms.margin`): Algorithm 3 (:class:`KernelLearner`, random Fourier features for
the Gaussian kernel, then Algorithm 2) and Section 5 (:class:`NeuralNetLearner`, a two-layer
network selected by the exponential mechanism over a cover of its weights)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from dpaudit import events as ev
from mechanisms.covers import product_indices, product_net
from mechanisms.halfspaces import (
    _data,
    _int,
    _positive,
    jl_matrix,
)
from mechanisms.margin_linear import (
    EfficientLinearLearner,
    _auditable,
    _em,
    _em_plan,
    _rng,
    margin_loss,
)


def random_fourier_features(
    X: np.ndarray, frequencies: np.ndarray, radius: float = 1.0
) -> np.ndarray:
    """Psi(x) = (r / sqrt(D)) (cos<w_j, x>, sin<w_j, x>)_j (001 eq. (2); Rahimi and Recht
    2007); ||Psi(x)|| = r and E <Psi(x), Psi(x')> = K(x, x')."""
    proj = np.asarray(X, dtype=float) @ frequencies.T
    D = frequencies.shape[0]
    return radius / math.sqrt(D) * np.concatenate([np.cos(proj), np.sin(proj)], axis=1)


@dataclasses.dataclass(frozen=True)
class KernelModel:
    """h(x) = <w, Psi(x)> for fixed random features."""

    w: np.ndarray
    frequencies: np.ndarray
    radius: float

    def predict(self, X: Any) -> np.ndarray:
        return np.where(
            random_fourier_features(X, self.frequencies, self.radius) @ self.w >= 0, 1, -1
        )

    def error(self, X: Any, y: Any) -> float:
        return float(np.mean(self.predict(X) != np.asarray(y)))


@dataclasses.dataclass(frozen=True)
class KernelLearner:
    """001 Algorithm 3 (Theorem 4.2): Gaussian kernel K(x,x') = r^2 exp(-||x-x'||^2 /
    (2 bandwidth^2)); draw D frequencies from N(0, I/bandwidth^2) (data-independent), then
    Algorithm 2 on Psi(x) with norm bound 2 Lambda.  001 takes D = m^2 log(2m/beta); here D
    is a parameter.  ``optimizer``: Algorithm 2's (``"phased"``, 001 Algorithm 4 as
    reconstructed, the default; ``"bst14"`` the earlier stand-in; ``"calibrated"`` the
    practical regime, full-batch noisy GD calibrated by the accountant).

    Privacy: as Algorithm 2 (the feature map is data-independent, applied record-wise, so D
    and the bandwidth do not enter the guarantee).
    """

    epsilon: Any
    delta: Any
    rho: float
    features: int
    dimension: int
    bandwidth: float = 0.5
    weight_radius: float = 1.0
    repetitions: int = 2
    steps: int | None = None
    optimizer: str = "phased"

    def linear(self) -> EfficientLinearLearner:
        return EfficientLinearLearner(
            self.epsilon,
            self.delta,
            self.rho,
            self.dimension,
            2 * self.weight_radius,
            1.0,
            self.repetitions,
            self.steps,
            self.optimizer,
        )

    def plan(self, m: Any) -> ev.Event:
        return self.linear().plan(m)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> KernelModel:
        X, y = _data(X, y)
        rng = _rng(rng)
        freq = rng.normal(
            0.0,
            1 / _positive("bandwidth", self.bandwidth),
            (_int("features", self.features), X.shape[1]),
        )
        w = self.linear().fit_features(random_fourier_features(X, freq), y, rng)
        return KernelModel(w, freq, 1.0)


@dataclasses.dataclass(frozen=True)
class NetworkModel:
    """x -> sign(w2^T tanh(kappa W1^T Phi0 x))."""

    phi0: np.ndarray
    W1: np.ndarray
    w2: np.ndarray
    kappa: float

    def scores(self, X: Any) -> np.ndarray:
        return np.tanh(self.kappa * (np.asarray(X, dtype=float) @ self.phi0.T) @ self.W1) @ self.w2

    def predict(self, X: Any) -> np.ndarray:
        return np.where(self.scores(X) >= 0, 1, -1)

    def error(self, X: Any, y: Any) -> float:
        return float(np.mean(self.predict(X) != np.asarray(y)))


@dataclasses.dataclass(frozen=True)
class NeuralNetLearner:
    """001 Section 5 (Theorem 5.1) at toy sizes: L = 2, width ``width`` = N, embedding
    dimension k = ``dimension``; the exponential mechanism over a ``scale``-cover of
    B^{k x N}_F(Lambda) x B^N(Lambda) with the empirical rho-margin loss (sensitivity 1/m).

    Privacy: eps-DP (claim ``001/theorem-5.1``).
    """

    epsilon: Any
    rho: float
    dimension: int = 2
    width: int = 2
    weight_radius: float = 1.0
    scale: float = 0.5
    kappa: float = 1.0
    max_points: int = 60_000

    def cover(self) -> tuple[list[np.ndarray], np.ndarray]:
        nets = product_net(
            [self.weight_radius, self.weight_radius],
            [self.dimension * self.width, self.width],
            self.scale,
            self.max_points,
        )
        return nets, product_indices(nets)

    def plan(self, m: Any) -> ev.Event:
        return _em_plan(self.epsilon, m)

    def _select(
        self,
        cover: tuple[list[np.ndarray], np.ndarray],
        phi0: np.ndarray,
        X: Any,
        y: Any,
        rng: np.random.Generator,
        size: int | None = None,
    ) -> Any:
        """The exponential mechanism over the cover for a given embedding: the index (into
        the cover's index tuples) of the selected network."""
        X, y = _data(X, y)
        (net1, net2), idx = cover
        H = np.tanh(
            self.kappa
            * np.einsum("mk,ckn->cmn", X @ phi0.T, net1.reshape(-1, self.dimension, self.width))
        )
        losses = np.empty(len(idx))
        for start in range(0, len(idx), 4096):
            block = idx[start : start + 4096]
            scores = np.einsum("bmn,bn->bm", H[block[:, 0]], net2[block[:, 1]])
            losses[start : start + 4096] = margin_loss(scores, y, self.rho)
        return _em(self.epsilon, len(X)).select(-losses, rng, size=size)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> NetworkModel:
        X = np.asarray(X, dtype=float)
        rng = _rng(rng)
        phi0 = jl_matrix(_int("dimension", self.dimension), X.shape[1], rng)
        cover = self.cover()
        (net1, net2), idx = cover
        i, j = idx[int(self._select(cover, phi0, X, y, rng))]
        return NetworkModel(phi0, net1[i].reshape(self.dimension, self.width), net2[j], self.kappa)

    def mechanism(self, phi0: np.ndarray) -> Any:
        """The auditable form for a *fixed* embedding phi0 (data-independent, so conditioning
        on it is a valid test): ``mechanism((X, y), rng)`` returns the index of the selected
        network in the cover, with a vectorised ``.batch``."""
        cover = self.cover()
        return _auditable(
            lambda X, y, rng, size: self._select(cover, phi0, X, y, rng, size),
            "001 neural-network learner (fixed embedding)",
        )
