"""The linear learners of source document 001 (Bassily, Mohri, Suresh 2022, see
:mod:`mechanisms.margin`): Algorithm 1 (:class:`PureLinearLearner`, eps-DP) and Algorithm 2
(:class:`EfficientLinearLearner`, (eps, delta)-DP), with what every 001 learner shares: the
empirical margin loss, the exponential mechanism on it and the auditable form of a
selection."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.numeric import exact
from mechanisms.covers import ball_net
from mechanisms.halfspace_inputs import projection
from mechanisms.halfspaces import (
    HalfspaceModel,
    MarginLoss,
    PrivateERM,
    _data,
    _int,
    jl_matrix,
    margin_fractions,
    random_sphere_points,
)
from mechanisms.localised_selection import Localisation, localised_select
from mechanisms.phased_sgd import PhasedSGD
from mechanisms.primitives import ExponentialMechanism

REPLACE = ev.Relation.REPLACE_ONE

#: Algorithm 2 step 4's optimisers: 001 Algorithm 4 (reconstructed), the BST14 stand-in, or
#: the practical regime (full-batch noisy GD calibrated by the accountant).
OPTIMIZERS = ("phased", "bst14", "calibrated")


def _rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def margin_loss(scores: np.ndarray, y: np.ndarray, rho: float) -> np.ndarray:
    """Empirical rho-margin loss (1/m) #{y h(x) <= rho}, one per row of ``scores``."""
    return np.mean(np.atleast_2d(scores) * y <= rho, axis=1)


@functools.lru_cache(maxsize=64)
def _em(epsilon: Any, m: int) -> ExponentialMechanism:
    return ExponentialMechanism(epsilon, sympy.Rational(1, m), relation=REPLACE)


def _em_plan(epsilon: Any, m: Any) -> ev.Event:
    return ev.PostProcessed(ev.Exponential(epsilon, 1 / exact(m, "m"), relation=REPLACE))


def _auditable(
    select: Callable[[np.ndarray, np.ndarray, np.random.Generator, int | None], Any], name: str
) -> Any:
    """The auditable form ``mechanism((X, y), rng)`` (with a vectorised ``.batch``) of a
    selection ``select(X, y, rng, size)`` returning one index (``size`` None) or ``size``."""

    def mechanism(dataset: Any, rng: np.random.Generator) -> int:
        X, y = dataset
        return int(select(X, y, _rng(rng), None))

    def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        X, y = dataset
        return np.asarray(select(X, y, _rng(rng), n))

    mechanism.batch = batch  # type: ignore[attr-defined]
    mechanism.name = name  # type: ignore[attr-defined]
    return mechanism


@dataclasses.dataclass(frozen=True)
class PureLinearLearner:
    """001 Algorithm 1 (Theorem 3.1): eps-DP linear learner with a relative-deviation margin
    guarantee.

    Args:
        epsilon: privacy parameter.
        rho: the confidence margin (0, r].
        dimension: k, the projected dimension (001: O(Lambda^2 r^2 log(m/beta)/rho^2); keep
            2-3 at toy sizes, the cover is enumerated exactly); None: the data's dimension,
            no projection (the practical regime; with ``candidates`` only).
        weight_radius: Lambda, the norm bound of the comparator class.
        radius: r, the feature norm bound.
        candidates: the practical regime (None: 001's cover): that many points drawn
            uniformly from the sphere of radius 2 Lambda in R^k with the learner's randomness
            before the data are read, instead of the enumerated rho/(10 r)-cover, so that k
            may be the data's own dimension.
        rounds, first_angle, shrink: with ``candidates``, localise them over ``rounds``
            rounds (:mod:`mechanisms.localised_selection`; 1: one exponential mechanism).

    Privacy: the exponential mechanism with sensitivity 1/m; Phi is data-independent and the
    output Phi^T w post-processing (claim ``001/theorem-3.1``).  Theorem 3.1's privacy part
    needs only a finite candidate set chosen independently of the data (McSherry-Talwar 2007
    Theorem 6), so it holds for the random candidates too; its utility part (a cover point
    near the comparator) is not claimed for them.  With R > 1 rounds: their parallel
    composition over a partition of positions, eps-DP (:mod:`mechanisms.localised_selection`).
    """

    epsilon: Any
    rho: float
    dimension: int | None
    weight_radius: float = 1.0
    radius: float = 1.0
    max_points: int = 200_000
    candidates: int | None = None
    rounds: int = 1
    first_angle: float = 1.0
    shrink: float = 0.5

    def __post_init__(self) -> None:
        if self.candidates is None and (self.rounds != 1 or self.dimension is None):
            raise ValueError(
                "rounds must be 1 and dimension an integer with the enumerated cover "
                f"(candidates None), got rounds {self.rounds!r}, dimension {self.dimension!r}"
            )

    def schedule(self) -> Localisation:
        """The rounds of the random-candidate regime."""
        return Localisation(
            _int("rounds", self.rounds), self.candidates or 1, self.first_angle, self.shrink
        )

    def cover(self, rng: np.random.Generator | None = None, d: int | None = None) -> np.ndarray:
        """001's cover, or (``candidates`` set) random points of the sphere of radius
        2 Lambda drawn from ``rng`` (data-independent; ``d`` the data's dimension, used when
        ``dimension`` is None)."""
        k = self.dimension if self.dimension is not None else d
        if k is None:
            raise ValueError("d must be the data's dimension when dimension is None, got None")
        if self.candidates is not None:
            if rng is None:
                raise ValueError("rng must be a numpy Generator to draw random candidates")
            points = random_sphere_points(_int("candidates", self.candidates), k, rng)
            return 2 * self.weight_radius * points
        return ball_net(k, 2 * self.weight_radius, self.rho / (10 * self.radius), self.max_points)

    def plan(self, m: Any) -> ev.Event:
        return ev.PostProcessed(self.schedule().plan(self.epsilon, m))

    def _features(self, Phi: np.ndarray, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Step 3: Phi x for rows of norm <= r (checked), and the labels."""
        X, y = _data(np.asarray(X, dtype=float) / max(1.0, self.radius), y)
        return X * self.radius @ Phi.T, y

    def _select(
        self,
        C: np.ndarray,
        Phi: np.ndarray,
        X: Any,
        y: Any,
        rng: np.random.Generator,
        size: int | None = None,
    ) -> Any:
        """Steps 3-5 for a given projection: the index of the selected cover point."""
        Z, y = self._features(Phi, X, y)
        loss = margin_fractions(C, Z, y, self.rho)
        return _em(self.epsilon, len(Z)).select(-loss, rng, size=size)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> HalfspaceModel:
        X = np.asarray(X, dtype=float)
        rng = _rng(rng)
        d = X.shape[1]
        k = None if self.dimension is None else _int("dimension", self.dimension)
        Phi = projection(k, d, rng)
        C = self.cover(rng, d)
        if self.rounds == 1:
            return HalfspaceModel(Phi.T @ C[int(self._select(C, Phi, X, y, rng))])
        Z, labels = self._features(Phi, X, y)

        def loss(W: np.ndarray, rows: np.ndarray) -> np.ndarray:
            return margin_fractions(W, Z[rows], labels[rows], self.rho)

        w, _ = localised_select(self.schedule(), self.epsilon, len(Z), C, loss, rng)
        return HalfspaceModel(Phi.T @ w)

    def mechanism(self, Phi: np.ndarray) -> Any:
        """The auditable form for a *fixed* projection Phi (privacy holds for every Phi, so
        conditioning on one is a valid test): ``mechanism((X, y), rng)`` returns the index of
        the selected cover point, with a vectorised ``.batch``."""
        C = self.cover()
        return _auditable(
            lambda X, y, rng, size: self._select(C, Phi, X, y, rng, size),
            "001 Algorithm 1 (fixed projection)",
        )


@dataclasses.dataclass(frozen=True)
class EfficientLinearLearner:
    """001 Algorithm 2 (Theorem 3.2): projection, clipping onto B^k(2r), private ERM of the
    rho-hinge loss over B^k(Lambda) by Algorithm 4.

    ``optimizer``:

    * ``"phased"`` (default): 001's Algorithm 4 as reconstructed in
      :mod:`mechanisms.phased_sgd` -- FKT20 phased SGD on the Moreau-smoothed rho-hinge loss
      (disjoint halving batches, step eta 4^-i, Gaussian output noise per phase) and
      confidence boosting by the exponential mechanism; about m gradient steps per run.
      ``steps`` is ignored.
    * ``"bst14"``: the earlier stand-in, kept for comparison and for the claim
      ``001/theorem-3.2`` (whose plan is symbolic in m): BST14 noisy SGD with uniform
      sampling (m^2 steps, or ``steps``) + EM boosting, :class:`PrivateERM`.
    * ``"calibrated"``: the practical regime, full-batch noisy projected GD on the
      rho-hinge loss with sigma calibrated by the accountant to (eps, delta)
      (:mod:`mechanisms.calibrated_gd`; ``steps`` gradient steps, default 100; R =
      ``repetitions`` runs, the EM over them when R > 1).  001's Lemma 3.1 utility bound is
      not claimed for it; its privacy is the accountant's on :meth:`plan`.

    Privacy: (eps, delta)-DP from the accountant on :meth:`plan` (phased: per run a
    ``Parallel`` of the phases' Gaussian releases, then one exponential mechanism; bst14:
    subsampled Gaussian steps and one exponential mechanism); the claim ``001/theorem-3.2``
    is stated for the bst14 plan, ``001/lemma-3.1`` for the phased one at m = 10.
    """

    epsilon: Any
    delta: Any
    rho: float
    dimension: int | None
    weight_radius: float = 1.0
    radius: float = 1.0
    repetitions: int = 2
    steps: int | None = None
    optimizer: str = "phased"

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(
                f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}"
            )

    def _loss(self) -> MarginLoss:
        return MarginLoss(
            self.rho, hinge=True, radius=2 * self.radius, weight_radius=self.weight_radius
        )

    def erm(self) -> PrivateERM:
        """The ``"bst14"`` stand-in (BST14 noisy SGD + EM boosting)."""
        return PrivateERM(self.epsilon, self.delta, self._loss(), self.repetitions, self.steps)

    def phased(self) -> PhasedSGD:
        """Algorithm 4 as reconstructed (:mod:`mechanisms.phased_sgd`)."""
        return PhasedSGD(self.epsilon, self.delta, self._loss(), self.repetitions)

    def calibrated(self) -> Any:
        """The practical regime (:class:`mechanisms.calibrated_gd.CalibratedGD`)."""
        from mechanisms.calibrated_gd import CALIBRATED_STEPS, CalibratedGD

        return CalibratedGD(
            self.epsilon,
            self.delta,
            self._loss(),
            self.steps or CALIBRATED_STEPS,
            self.repetitions,
        )

    def optimiser(self) -> Any:
        if self.optimizer == "calibrated":
            return self.calibrated()
        return self.phased() if self.optimizer == "phased" else self.erm()

    def plan(self, m: Any, d: int | None = None) -> ev.Event:
        """The declared plan for m records (``"phased"``: m an integer; the number of
        phases is floor(log2 m); ``d`` the features' dimension, which the phased plan needs
        when ``dimension`` is None, i.e. no projection)."""
        if self.optimizer == "phased":
            k = self.dimension if self.dimension is not None else d
            if k is None:
                raise ValueError("d must be the features' dimension when dimension is None")
            return ev.PostProcessed(self.phased().plan(_int("m", m, 2), k))
        if self.optimizer == "calibrated":
            return ev.PostProcessed(self.calibrated().plan(_int("m", m, 2)))
        return ev.PostProcessed(self.erm().plan(m))

    def fit_features(self, Z: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Steps 2-4 on features Z (rows of norm <= r); returns w in R^d of the features."""
        rng = _rng(rng)
        if self.dimension is None:  # no projection: the identity, without its d x d product
            return self.optimiser().fit(self._clipped(Z, None), y, rng)
        Phi = jl_matrix(_int("dimension", self.dimension), Z.shape[1], rng)
        return Phi.T @ self.optimiser().fit(self._clipped(Z, Phi), y, rng)

    def _clipped(self, Z: np.ndarray, Phi: np.ndarray | None) -> np.ndarray:
        """Steps 2-3: Phi z clipped onto B^k(2r), row by row (``Phi`` None: the identity)."""
        P = Z if Phi is None else Z @ Phi.T
        norms = np.linalg.norm(P, axis=1, keepdims=True)
        cap = 2 * self.radius
        return np.where(norms > cap, P * cap / np.maximum(norms, 1e-300), P)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> HalfspaceModel:
        X, y = _data(np.asarray(X, dtype=float) / self.radius, y)
        return HalfspaceModel(self.fit_features(X * self.radius, y, rng))

    def mechanism(self, Phi: np.ndarray, direction: Any) -> Any:
        """The auditable form for a *fixed* projection Phi (privacy holds for every Phi):
        ``mechanism((X, y), rng)`` is <w, direction> for the optimiser's output w in R^k (a
        post-processing of the output), with a vectorised ``.batch``."""

        def features(dataset: Any) -> tuple[np.ndarray, np.ndarray]:
            X, y = _data(np.asarray(dataset[0], dtype=float) / self.radius, dataset[1])
            return self._clipped(X * self.radius, Phi), y

        name = f"001 Algorithm 2 (fixed projection, {self.optimizer})"
        return self.optimiser().mechanism(features, direction, name)
