"""The non-linear learners of source document 001 (Bassily, Mohri, Suresh 2022, see
:mod:`mechanisms.margin`): Algorithm 3 (:class:`KernelLearner`, random Fourier features for
the Gaussian kernel, then Algorithm 2) and Section 5 (:class:`NeuralNetLearner`, a two-layer
network selected by the exponential mechanism over a cover of its weights)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
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
from mechanisms.localised_selection import Localisation, cap_points, localised_select
from mechanisms.margin_linear import (
    EfficientLinearLearner,
    _auditable,
    _em,
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
    dimension: int | None
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
        return self.linear().plan(m, 2 * _int("features", self.features))

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


#: Candidates x records x width handled at once by the random-network regime of
#: :class:`NeuralNetLearner` (a memory bound: 2^22 doubles, 32 MiB per array).
NETWORK_BLOCK = 1 << 22


def random_networks(
    count: int, dimension: int, width: int, radius: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` networks drawn independently of the data: W1 (count x k x N) uniform on the
    Frobenius sphere of radius ``radius`` and w2 (count x N) uniform on the sphere of that
    radius (normalised Gaussians).  Each candidate takes one row of (k + 1) N standard
    normals, so drawing the candidates in chunks gives the same networks as drawing them at
    once (NumPy draws normals one after another)."""
    kn = dimension * width
    G = rng.standard_normal((count, kn + width))
    W1, w2 = G[:, :kn], G[:, kn:]
    W1 = radius * W1 / np.maximum(np.linalg.norm(W1, axis=1, keepdims=True), 1e-300)
    w2 = radius * w2 / np.maximum(np.linalg.norm(w2, axis=1, keepdims=True), 1e-300)
    return W1.reshape(count, dimension, width), w2


@dataclasses.dataclass(frozen=True)
class NeuralNetLearner:
    """001 Section 5 (Theorem 5.1) at toy sizes: L = 2, width ``width`` = N, embedding
    dimension k = ``dimension``; the exponential mechanism over a ``scale``-cover of
    B^{k x N}_F(Lambda) x B^N(Lambda) with the empirical rho-margin loss (sensitivity 1/m).

    ``candidates`` (the practical regime; None: the enumerated cover): the exponential
    mechanism runs over that many networks drawn by :func:`random_networks` (weights on the
    spheres of radius Lambda) from a generator seeded by the learner's randomness *before*
    the data are read, so k and N need not stay at toy sizes.  The candidates are scored
    ``chunk`` at a time (None: as many as keep chunk x m x N within
    :data:`NETWORK_BLOCK`) and the selection is sampled by the streaming Gumbel-max
    (:meth:`~mechanisms.primitives.ExponentialMechanism.select_stream`), so memory is
    bounded by one chunk whatever ``candidates`` is.

    Privacy: eps-DP (claim ``001/theorem-5.1``).  Theorem 5.1's privacy part is the
    exponential mechanism over a finite set chosen independently of the data, with a
    sensitivity-1/m score (McSherry-Talwar 2007 Theorem 6; Phi0 is data-independent, the
    network post-processing): it holds for the random networks too, with the same plan.
    Its utility part (a cover point near the comparator network) is not claimed for them.
    """

    epsilon: Any
    rho: float
    dimension: int = 2
    width: int = 2
    weight_radius: float = 1.0
    scale: float = 0.5
    kappa: float = 1.0
    max_points: int = 60_000
    candidates: int | None = None
    chunk: int | None = None
    rounds: int = 1
    first_angle: float = 1.0
    shrink: float = 0.5

    def __post_init__(self) -> None:
        if self.candidates is None and self.rounds != 1:
            raise ValueError(
                f"rounds must be 1 with the enumerated cover (candidates None), got {self.rounds!r}"
            )

    def schedule(self) -> Localisation:
        """The rounds of the random-network regime (:mod:`mechanisms.localised_selection`)."""
        return Localisation(
            _int("rounds", self.rounds), self.candidates or 1, self.first_angle, self.shrink
        )

    def cover(self) -> tuple[list[np.ndarray], np.ndarray]:
        nets = product_net(
            [self.weight_radius, self.weight_radius],
            [self.dimension * self.width, self.width],
            self.scale,
            self.max_points,
        )
        return nets, product_indices(nets)

    def plan(self, m: Any) -> ev.Event:
        return ev.PostProcessed(self.schedule().plan(self.epsilon, m))

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

    # ---- the practical regime: random networks, streamed -----------------------------

    def chunk_size(self, m: int) -> int:
        """Candidates scored at once: ``chunk``, or the most that keep chunk x m x N within
        :data:`NETWORK_BLOCK` (at least 1)."""
        if self.chunk is not None:
            return _int("chunk", self.chunk)
        return max(1, NETWORK_BLOCK // max(1, m * _int("width", self.width)))

    def _network_losses(
        self, Z: np.ndarray, y: np.ndarray, W1: np.ndarray, w2: np.ndarray
    ) -> np.ndarray:
        """The empirical rho-margin loss of each network (W1[c], w2[c]) on the embedded rows
        Z = X Phi0^T: one (m x cN) product, so memory is about m x c x N doubles."""
        c, k, n = W1.shape
        H = np.tanh(self.kappa * (Z @ W1.transpose(1, 0, 2).reshape(k, c * n)))
        scores = np.einsum("mcn,cn->cm", H.reshape(len(Z), c, n), w2)
        return margin_loss(scores, y, self.rho)

    def _loss_chunks(
        self, seed: int, Z: np.ndarray, y: np.ndarray, chunk: int
    ) -> Iterator[np.ndarray]:
        """Minus the margin loss of the random networks, ``chunk`` at a time; the networks
        come from ``numpy.random.default_rng(seed)`` (data-independent)."""
        total = _int("candidates", self.candidates)
        gen = np.random.default_rng(seed)
        for start in range(0, total, chunk):
            W1, w2 = random_networks(
                min(chunk, total - start), self.dimension, self.width, self.weight_radius, gen
            )
            yield -self._network_losses(Z, y, W1, w2)

    def network(self, seed: int, index: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``index``-th random network of the candidate stream seeded by ``seed`` (drawn
        again in chunks up to it: the stream does not depend on the chunk size)."""
        total = _int("candidates", self.candidates)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"index must be an integer, got {type(index).__name__}")
        if not 0 <= index < total:
            raise ValueError(f"index must be an integer in [0, {total - 1}], got {index}")
        gen = np.random.default_rng(seed)
        step = 1 << 14
        start = 0
        while True:
            count = min(step, int(index) + 1 - start)
            W1, w2 = random_networks(count, self.dimension, self.width, self.weight_radius, gen)
            if start + count > index:
                return W1[index - start], w2[index - start]
            start += count

    def _select_random(
        self,
        seed: int,
        phi0: np.ndarray,
        X: Any,
        y: Any,
        rng: np.random.Generator,
        size: int | None = None,
    ) -> Any:
        """The exponential mechanism over the random networks of ``seed`` for a given
        embedding: one run by the streaming Gumbel-max (memory: one chunk), or ``size`` runs
        from the scores (8 bytes a candidate) by :meth:`ExponentialMechanism.select`."""
        X, y = _data(X, y)
        Z = X @ phi0.T
        em = _em(self.epsilon, len(X))
        chunks = self._loss_chunks(seed, Z, y, self.chunk_size(len(X)))
        if size is None:
            return em.select_stream(chunks, rng)
        return em.select(np.concatenate(list(chunks)), rng, size=size)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> NetworkModel:
        X = np.asarray(X, dtype=float)
        rng = _rng(rng)
        phi0 = jl_matrix(_int("dimension", self.dimension), X.shape[1], rng)
        if self.candidates is not None and self.rounds > 1:
            return self._fit_rounds(phi0, X, y, rng)
        if self.candidates is not None:
            # the candidates' seed is drawn before the data are read (data-independent)
            seed = int(rng.integers(0, 2**63 - 1))
            index = self._select_random(seed, phi0, X, y, rng)
            W1, w2 = self.network(seed, index)
            return NetworkModel(phi0, W1, w2, self.kappa)
        cover = self.cover()
        (net1, net2), idx = cover
        i, j = idx[int(self._select(cover, phi0, X, y, rng))]
        return NetworkModel(phi0, net1[i].reshape(self.dimension, self.width), net2[j], self.kappa)

    def _fit_rounds(
        self, phi0: np.ndarray, X: np.ndarray, y: Any, rng: np.random.Generator
    ) -> NetworkModel:
        """The localised random-network regime: round 1 over ``candidates`` random networks,
        later rounds over networks near the previous choice (each weight block in a cap of
        its sphere), every round on its own part of the rows (chunked scoring)."""
        X, y = _data(X, y)
        Z = X @ phi0.T
        k, width = _int("dimension", self.dimension), _int("width", self.width)
        kn = k * width
        W1, w2 = random_networks(self.candidates or 1, k, width, self.weight_radius, rng)
        first = np.concatenate([W1.reshape(len(W1), kn), w2], axis=1)

        def near(center: np.ndarray, angle: float, count: int, gen: np.random.Generator) -> Any:
            return np.concatenate(
                [
                    cap_points(center[:kn], angle, count, gen),
                    cap_points(center[kn:], angle, count, gen),
                ],
                axis=1,
            )

        def loss(C: np.ndarray, rows: np.ndarray) -> np.ndarray:
            chunk = self.chunk_size(len(rows))
            out = np.empty(len(C))
            for start in range(0, len(C), chunk):
                block = C[start : start + chunk]
                out[start : start + chunk] = self._network_losses(
                    Z[rows], y[rows], block[:, :kn].reshape(len(block), k, width), block[:, kn:]
                )
            return out

        best, _ = localised_select(self.schedule(), self.epsilon, len(Z), first, loss, rng, near)
        return NetworkModel(phi0, best[:kn].reshape(k, width), best[kn:], self.kappa)

    def mechanism(self, phi0: np.ndarray, seed: int | None = None) -> Any:
        """The auditable form for a *fixed* embedding phi0 (data-independent, so conditioning
        on it is a valid test) and, with ``candidates``, a fixed candidate ``seed`` (likewise
        data-independent): ``mechanism((X, y), rng)`` returns the index of the selected
        network in the cover (or the candidate stream), with a vectorised ``.batch``."""
        if self.candidates is not None:
            if seed is None:
                raise ValueError("seed must be an integer with candidates set, got None")
            return _auditable(
                lambda X, y, rng, size: self._select_random(seed, phi0, X, y, rng, size),
                "001 neural-network learner, random candidates (fixed embedding and seed)",
            )
        cover = self.cover()
        return _auditable(
            lambda X, y, rng, size: self._select(cover, phi0, X, y, rng, size),
            "001 neural-network learner (fixed embedding)",
        )
