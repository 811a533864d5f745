"""One-run trainers: noisy gradient descent with m canaries, for
:func:`dpaudit.audit.audit_one_run` (Steinke, Nasr, Jagielski 2023, "Privacy auditing with
one (1) training run", arXiv 2305.08846, Sections 6-7).

* :class:`NoisyGDCanaryTrainer` -- full-batch noisy gradient descent on the rho-hinge loss
  of the noisy-SGD margin learners (:class:`mechanisms.halfspaces.MarginLoss` with
  ``hinge=True``, rho = 1, features mapped into the unit ball record by record, so every
  record's gradient has norm <= L = 1), each step one release of the project's
  :class:`~mechanisms.primitives.GaussianMechanism` (sigma, sensitivity L, add/remove) on the
  summed gradients.  Two kinds of canaries:

  - ``"gradient"`` (white box, the paper's Dirac canaries): the model has m extra
    coordinates; an included canary i adds the gradient -L e_{D+i} to every step's sum (a
    record whose clipped gradient always points along its own coordinate).  Score: the final
    model's inner product with the canary direction, w_{D+i}.
  - ``"input"`` (black box): canary i is a record (x_i, y_i), x_i a random unit vector, y_i a
    random label, added to the training set when included.  Score: the model's confidence in
    the canary's label, y_i <w, x_i>.

  Privacy: the plan is T steps of Gaussian(sigma, L) composed (:meth:`plan`); the accountant
  gives the claimed epsilon at a delta (:meth:`claimed_epsilon`); each canary is one record
  under add/remove.
* :func:`learner_canary_trainer` -- black-box input canaries for any registered private
  learner (``dpaudit learn`` names, e.g. ``noisy-sgd-margin``): fit the scikit-learn
  estimator on the base data plus the included canaries, score = y_i * decision_function.

The deliberately broken trainer (noise 10x too small) is
:class:`mechanisms.broken_training.BrokenNoisyGDTooLittleNoise`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.accountant import account
from mechanisms.estimators.halfspace import unit_rows
from mechanisms.halfspaces import MarginLoss
from mechanisms.ledger import recorded_as
from mechanisms.primitives import GaussianMechanism

__all__ = [
    "CANARY_KINDS",
    "IdealizedGaussianTrainer",
    "NoisyGDCanaryTrainer",
    "learner_canary_trainer",
]

CANARY_KINDS = ("gradient", "input")
#: Largest design matrix (records x features, floats) a trainer builds: 400 MB.
MAX_DESIGN = 50_000_000


@dataclasses.dataclass(frozen=True)
class NoisyGDCanaryTrainer:
    """Full-batch noisy gradient descent with m canaries (module docstring).

    Args:
        m: number of canaries.
        canaries: ``"gradient"`` (white-box Dirac gradient canaries) or ``"input"``
            (black-box canary records).
        noise_multiplier: sigma / L, the Gaussian noise per step in units of the gradient
            bound (> 0).
        steps: T, the number of full-batch steps (>= 1).
        n: number of base records (the training data without canaries).
        dimension: D, the feature dimension (default: max(16, 4 m) for input canaries, so
            canaries are nearly orthogonal; 16 for gradient canaries).
        learning_rate: step size (default 1/(p T): an included canary moves its coordinate
            by L in total on average).
        sample_rate: p, the Poisson sampling rate of each step's batch (1.0: full-batch
            noisy gradient descent; below 1: noisy SGD, each record and each included
            canary in a step's batch independently with probability p, as in DP-SGD).
        data_seed: seed of the base data and the canary records (fixed before the run and
            independent of which canaries are included).
    """

    m: int
    canaries: str = "gradient"
    noise_multiplier: float = 5.0
    steps: int = 25
    n: int = 100
    dimension: int | None = None
    learning_rate: float | None = None
    sample_rate: float = 1.0
    data_seed: int = 0

    def __post_init__(self) -> None:
        if self.canaries not in CANARY_KINDS:
            raise ValueError(
                f"canaries must be one of {', '.join(CANARY_KINDS)}, got {self.canaries!r}"
            )
        for name in ("m", "steps", "n", "data_seed"):
            value = getattr(self, name)
            low = 0 if name in ("n", "data_seed") else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if not (isinstance(self.noise_multiplier, (int, float)) and self.noise_multiplier > 0):
            raise ValueError(
                f"noise_multiplier must be a number > 0, got {self.noise_multiplier!r}"
            )
        if not (isinstance(self.sample_rate, (int, float)) and 0 < self.sample_rate <= 1):
            raise ValueError(f"sample_rate must be a number in (0, 1], got {self.sample_rate!r}")
        if self.dimension is not None and not (
            isinstance(self.dimension, int) and self.dimension >= 1
        ):
            raise ValueError(f"dimension must be None or an integer >= 1, got {self.dimension!r}")
        design = (self.n + (self.m if self.canaries == "input" else 0)) * self.features
        if design > MAX_DESIGN:
            raise ValueError(
                f"(n + m) x dimension must be at most {MAX_DESIGN:,} floats (MAX_DESIGN), got "
                f"{design:,}: pass a smaller dimension (input canaries default to 4 m features)"
            )

    @property
    def name(self) -> str:
        return f"noisy-gd-{self.canaries}-canaries"

    @property
    def claimed_tradeoff(self) -> str | None:
        """``"gaussian"`` for full-batch descent: its plan, T Gaussian releases of
        sensitivity L, is exactly mu-GDP with mu = sqrt(T) / noise_multiplier (Dong, Roth,
        Su 2022, Corollary 3.3), so the claim may be tested as that curve
        (:func:`dpaudit.audit.audit_one_run`, ``curve="auto"``); None for Poisson-sampled
        steps, whose curve is not Gaussian."""
        return "gaussian" if self.sample_rate == 1 else None

    @property
    def score_distribution(self) -> str | None:
        """``"gaussian"`` for full-batch descent with gradient canaries: canary i's
        coordinate moves only by its own gradient and the noise, so given the mask the
        scores are independent N(eta T L b_i, eta^2 T sigma^2) -- the assumption of the
        Gaussian one-run certification (``method="auto"``); None otherwise (a Poisson
        batch makes a canary's pull a binomial count, input canaries interact)."""
        return "gaussian" if self.canaries == "gradient" and self.sample_rate == 1 else None

    @property
    def loss(self) -> MarginLoss:
        """The rho-hinge loss with rho = 1 on the unit ball: Lipschitz L = 1."""
        return MarginLoss(1.0, hinge=True)

    @property
    def features(self) -> int:
        if self.dimension is not None:
            return self.dimension
        return max(16, 4 * self.m) if self.canaries == "input" else 16

    def _sigma(self) -> sympy.Expr:
        return sympy.nsimplify(self.noise_multiplier) * self.loss.lipschitz

    def _sampled(self, event: ev.Event) -> ev.Event:
        if self.sample_rate == 1:
            return event
        return ev.PoissonSampled(event, sympy.nsimplify(self.sample_rate))

    def plan(self) -> ev.Event:
        """T adaptive releases of Gaussian(sigma, L), add/remove (one canary = one record),
        each on a Poisson(p) sample when ``sample_rate`` p < 1."""
        step = ev.Gaussian(self._sigma(), self.loss.lipschitz)
        return ev.SelfComposed(self._sampled(step), self.steps)

    def claimed_epsilon(self, delta: float) -> float:
        """The accountant's epsilon at ``delta`` for :meth:`plan` (an upper bound, rounded
        up)."""
        eps = account(self.plan(), delta).epsilon_upper
        if eps is None:  # pragma: no cover - Gaussian trees always have a numeric bound
            raise ValueError(f"no numeric epsilon for {self.plan()}")
        return float(eps)

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(X, y) base records and (Xc, yc) canary records (input canaries; for gradient
        canaries Xc is empty), all fixed by ``data_seed``."""
        rng = np.random.default_rng(self.data_seed)
        d = self.features
        truth = rng.normal(size=d)
        X = unit_rows(rng.normal(size=(self.n, d)), math.sqrt(d), False)
        y = np.where(X @ truth >= 0, 1.0, -1.0)
        if self.canaries == "input":
            Xc = rng.normal(size=(self.m, d))
            Xc /= np.linalg.norm(Xc, axis=1, keepdims=True)
            yc = rng.choice([-1.0, 1.0], size=self.m)
        else:
            Xc, yc = np.zeros((0, d)), np.zeros(0)
        return X, y, Xc, yc

    def _noise(self) -> GaussianMechanism:
        """The Gaussian primitive of one step (overridden only by the broken variant)."""
        return GaussianMechanism(self._sigma(), self.loss.lipschitz)

    def __call__(self, included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Train once with the included canaries; return one score per canary.

        Privacy: T releases of the Gaussian primitive on the summed per-record gradients
        (each of norm <= L), recorded in the ledger; scores are post-processing.
        """
        mask = np.asarray(included, dtype=bool)
        if mask.shape != (self.m,):
            raise ValueError(f"included must be a boolean mask of m = {self.m} canaries")
        X, y, Xc, yc = self.data()
        if self.canaries == "input":
            X = np.vstack([X, unit_rows(Xc[mask], 1.0, False)])
            y = np.concatenate([y, yc[mask]])
        d, extra = X.shape[1], (self.m if self.canaries == "gradient" else 0)
        offset, slope = float(self.loss.offset), float(self.loss.slope)
        lipschitz = float(self.loss.lipschitz)
        p = float(self.sample_rate)
        eta = self.learning_rate if self.learning_rate is not None else 1.0 / (p * self.steps)
        gauss = self._noise()
        canary_grad = -lipschitz * mask.astype(float)  # Dirac canaries: -L e_{D+i}
        w = np.zeros(d + extra)
        with recorded_as(self._sampled):
            for _ in range(self.steps):
                active = offset - slope * y * (X @ w[:d]) > 0
                if p < 1:  # Poisson batch: every record (canaries too) with probability p
                    active &= rng.random(len(y)) < p
                grad = np.zeros(d + extra)
                grad[:d] = -slope * ((active * y) @ X)  # sum of per-record subgradients
                if extra:
                    grad[d:] = canary_grad * (rng.random(extra) < p if p < 1 else 1.0)
                w = w - eta * gauss.release(grad, rng)
        if self.canaries == "gradient":
            return w[d:]
        return yc * (Xc @ w[:d])


@dataclasses.dataclass(frozen=True)
class IdealizedGaussianTrainer:
    """The idealized one-run trainer: canary i's score is its inclusion bit plus N(0,
    sigma^2) noise, independently (the idealized setting of Steinke, Nasr, Jagielski 2023,
    Section 7, and of Mahloujifar, Melis, Chaudhuri 2025).

    Privacy: with respect to each canary the scores are the Gaussian mechanism with
    sensitivity 1 and noise sigma, exactly mu-GDP with mu = 1 / sigma; its epsilon at delta
    is the Gaussian profile's (:meth:`claimed_epsilon`: 1.993 for sigma 2, 4.377 for sigma 1
    at delta 1e-5).  It declares its claim Gaussian and its scores Gaussian.

    Args:
        sigma: the noise standard deviation (> 0).
    """

    sigma: float = 1.0
    claimed_tradeoff = "gaussian"
    score_distribution = "gaussian"

    def __post_init__(self) -> None:
        if not (isinstance(self.sigma, (int, float)) and self.sigma > 0):
            raise ValueError(f"sigma must be a number > 0, got {self.sigma!r}")

    @property
    def name(self) -> str:
        return f"idealized-gaussian-sigma-{self.sigma:g}"

    def plan(self) -> ev.Event:
        """One Gaussian release of sensitivity 1 and noise sigma per canary."""
        return ev.Gaussian(sympy.nsimplify(self.sigma), 1)

    def claimed_epsilon(self, delta: float) -> float:
        """The accountant's epsilon at ``delta`` for :meth:`plan` (rounded up)."""
        eps = account(self.plan(), delta).epsilon_upper
        if eps is None:  # pragma: no cover - a Gaussian has a numeric bound
            raise ValueError(f"no numeric epsilon for {self.plan()}")
        return float(eps)

    def __call__(self, included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One score per canary: its inclusion bit plus N(0, sigma^2)."""
        mask = np.asarray(included, dtype=bool)
        return mask + self.sigma * rng.standard_normal(len(mask))


def learner_canary_trainer(
    learner: str | Callable[..., Any],
    X: np.ndarray,
    y: np.ndarray,
    m: int,
    *,
    canary_seed: int = 0,
    **params: Any,
) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """Black-box input canaries for a registered private learner.

    m canary records (random directions of the feature space at the norm of the largest
    base record, random labels from ``y``'s two classes), fixed by ``canary_seed``; the
    returned ``train(included, rng)`` fits ``learner(**params, random_state=rng)`` on
    (X, y) plus the included canaries and scores canary i by ``s_i * decision_function(x_i)``
    (s_i = +1 for the second class, -1 for the first): the model's confidence in the
    canary's label.

    Args:
        learner: a registered learner's name (``dpaudit learn`` lists them) or its class.
        X, y: base training data (two classes).
        m: number of canaries.
        canary_seed: seed of the canary records.
        params: the learner's keyword arguments (its epsilon and delta among them).
    """
    if isinstance(learner, str):
        from dpaudit.learners import get_learner

        factory = get_learner(learner).estimator
    else:
        factory = learner
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"y must hold two classes, got {len(classes)}")
    rng = np.random.default_rng(canary_seed)
    Xc = rng.normal(size=(m, X.shape[1]))
    Xc *= float(np.max(np.linalg.norm(X, axis=1))) / np.linalg.norm(Xc, axis=1, keepdims=True)
    yc = rng.choice(classes, size=m)
    sign = np.where(yc == classes[1], 1.0, -1.0)

    def train(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        mask = np.asarray(included, dtype=bool)
        model = factory(**params, random_state=rng)
        model.fit(np.vstack([X, Xc[mask]]), np.concatenate([y, yc[mask]]))
        return sign * np.asarray(model.decision_function(Xc), dtype=float)

    label = getattr(factory, "NAME", None) or getattr(factory, "__name__", "learner")
    train.name = f"{label}-input-canaries"  # type: ignore[attr-defined]
    return train
