"""Noisy stochastic gradient descent of Bassily, Smith, Thakurta 2014 (BST14) on the margin
loss of source document 000 (:class:`MarginLoss`): the noise scale, the step event each
iteration releases (a uniformly sampled Gaussian step), and the loop, scalar and batched.
See :mod:`mechanisms.halfspaces` for the reconstruction of the loss and of the noise."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from dpaudit import events as ev
from dpaudit.learners import report_progress
from dpaudit.numeric import exact
from mechanisms.halfspace_inputs import REPLACE, _positive
from mechanisms.ledger import recorded_as
from mechanisms.primitives import GaussianMechanism


def bst14_sigma(n: Any, lipschitz: Any, epsilon: Any, delta: Any) -> sympy.Expr:
    """sigma = sqrt(32 L^2 n^2 log(n/delta) log(1/delta)) / epsilon (000 Algorithm 3 step 13,
    after BST14 Algorithm 1), exact (symbolic allowed)."""
    n_, L = exact(n, "n"), exact(lipschitz, "lipschitz")
    e, d = exact(epsilon, "epsilon"), exact(delta, "delta")
    return sympy.sqrt(32 * L**2 * n_**2 * sympy.log(n_ / d) * sympy.log(1 / d)) / e


@dataclasses.dataclass(frozen=True)
class MarginLoss:
    """000's loss l(w;(x,y)) = max(0, 96/86 - y<w,x> / (0.86 gamma)) (Algorithm 1 step 4).

    ``hinge=True`` gives 001's rho-hinge loss max(0, 1 - y<w,x>/rho) instead (with
    ``gamma`` = rho), Lipschitz radius/rho for features of norm <= ``radius``.
    """

    gamma: float
    hinge: bool = False
    radius: float = 1.0
    weight_radius: float = 1.0

    def __post_init__(self) -> None:
        _positive("gamma", self.gamma)
        _positive("radius", self.radius)
        _positive("weight_radius", self.weight_radius)

    @property
    def offset(self) -> sympy.Expr:
        return sympy.Integer(1) if self.hinge else sympy.Rational(96, 86)

    @property
    def slope(self) -> sympy.Expr:
        g = exact(self.gamma, "gamma")
        return 1 / g if self.hinge else 100 / (86 * g)

    @property
    def lipschitz(self) -> sympy.Expr:
        """L = slope x feature radius (exact)."""
        return self.slope * exact(self.radius, "radius")

    @property
    def bound(self) -> sympy.Expr:
        """The largest value on the weight ball: offset + slope R_w R_x (EM sensitivity)."""
        return self.offset + self.slope * exact(self.radius, "radius") * exact(
            self.weight_radius, "weight_radius"
        )

    def values(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Total loss sum_i l(w; x_i, y_i) for each row w of W."""
        margins = (np.atleast_2d(W) @ X.T) * y
        return np.maximum(0.0, float(self.offset) - float(self.slope) * margins).sum(axis=1)

    def gradient(self, w: np.ndarray, x: np.ndarray, y: int) -> np.ndarray:
        """A subgradient of l(.; x, y) at w."""
        active = float(self.offset) - float(self.slope) * y * float(w @ x) > 0
        return -float(self.slope) * y * x if active else np.zeros_like(w)


def _project_ball(w: np.ndarray, radius: float) -> np.ndarray:
    norm = float(np.linalg.norm(w))
    return w if norm <= radius else w * (radius / norm)


SAMPLINGS = ("uniform", "poisson")


def step_event(sigma: Any, n: Any, lipschitz: Any, sampling: str = "uniform") -> ev.Event:
    """One noisy step as an event: ``uniform`` (000/BST14: one record drawn uniformly, i.e.
    SampledWithoutReplacement(Gaussian(sigma, 2 n L, replace-one), 1, n)) or ``poisson``
    (each record kept with probability 1/n, PoissonSampled(Gaussian(sigma, n L,
    add/remove), 1/n): a documented variant the accountant composes with RDP/PLD today)."""
    n_ = exact(n, "n")
    if sampling == "uniform":
        return ev.SampledWithoutReplacement(
            ev.Gaussian(sigma, 2 * n_ * lipschitz, relation=REPLACE), 1, n_
        )
    if sampling == "poisson":
        return ev.PoissonSampled(ev.Gaussian(sigma, n_ * lipschitz), 1 / n_)
    raise ValueError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")


def _sgd_noise(
    n: int, loss: MarginLoss, sigma: Any, sampling: str
) -> tuple[GaussianMechanism, Callable[[ev.Event], ev.Event]]:
    """The Gaussian primitive of one noisy step and the wrapper its runs are recorded with."""
    template = step_event(sigma, n, loss.lipschitz, sampling)
    gauss = GaussianMechanism(sigma, template.event.sensitivity, relation=template.event.relation)
    wrap = (
        (lambda e: ev.SampledWithoutReplacement(e, 1, n))
        if sampling == "uniform"
        else (lambda e: ev.PoissonSampled(e, sympy.Rational(1, n)))
    )
    return gauss, wrap


def _step_size(loss: MarginLoss, gauss: GaussianMechanism, n: int, m: int, t: Any) -> Any:
    """BST14's eta(t) = ||C|| / sqrt(t (n^2 L^2 + m sigma^2)) (000 Algorithm 3); ``t`` may be
    an array of step numbers."""
    lf = float(loss.lipschitz)
    return 2 * loss.weight_radius / np.sqrt(t * (n**2 * lf**2 + m * gauss.sigma**2))


#: Steps whose noise and records are drawn at once (memory: CHUNK x m floats per array).
CHUNK = 1 << 15


def noisy_gradient_descent(
    X: np.ndarray,
    y: np.ndarray,
    loss: MarginLoss,
    sigma: Any,
    steps: int,
    rng: np.random.Generator,
    sampling: str = "uniform",
) -> np.ndarray:
    """BST14's noisy SGD (000 Algorithm 3, procedure A_Noise-GD) over the ball of radius
    ``loss.weight_radius``: w_{t+1} = Pi(w_t - eta(t) [n grad l(w_t; batch) + b_t]).

    Speed: the data-independent randomness (the sampled records and the noise vectors b_t
    of up to :data:`CHUNK` steps) is drawn in blocks, and the noisy steps are released in
    blocks by the Gaussian primitive (one ``release`` of ``size`` runs, recorded as that many
    runs); the only per-step work left is the sequential update itself (a dot product, a
    subtraction and the projection), a few microseconds a step.

    Privacy: each step is one run of the Gaussian primitive on the step's batch, recorded as
    :func:`step_event` (``uniform``: one uniformly drawn record, replace-one sensitivity
    2 n L; ``poisson``: a Poisson(1/n) batch, add/remove sensitivity n L): the ledger holds
    ``steps`` runs of that event (in entries of up to :data:`CHUNK` runs; merged, one entry
    of ``steps`` runs, as before).  Drawing b_t before the step that adds it changes nothing:
    b_t is independent of the data and of the iterates.
    """
    n, m = X.shape
    gauss, wrap = _sgd_noise(n, loss, sigma, sampling)
    offset, slope, radius = float(loss.offset), float(loss.slope), float(loss.weight_radius)
    r2 = radius * radius
    w = np.zeros(m)
    with recorded_as(wrap):
        for start in range(0, steps, CHUNK):
            size = min(CHUNK, steps - start)
            t = np.arange(start + 1, start + size + 1, dtype=float)
            eta = _step_size(loss, gauss, n, m, t)[:, None]
            # b_t for the block, drawn (and recorded) by the primitive: n grad is added below
            noise = gauss.release(np.zeros(m), rng, size=size) * eta
            if sampling == "uniform":
                rows = rng.integers(n, size=size)
                # step t moves by eta n slope y x when the record's loss is active
                G = (slope * y[rows])[:, None] * X[rows]
                pull = (n * eta) * G
                for k in range(size):
                    active = offset - float(w @ G[k]) > 0
                    w = w - noise[k]
                    if active:
                        w = w + pull[k]
                    nrm = float(w @ w)
                    if nrm > r2:
                        w = w * (radius / math.sqrt(nrm))
            else:
                counts = rng.binomial(n, 1 / n, size=size)
                for k in range(size):
                    w_prev = w
                    w = w - noise[k]
                    if counts[k]:
                        batch = rng.choice(n, size=int(counts[k]), replace=False)
                        Gb = (slope * y[batch])[:, None] * X[batch]
                        active = offset - Gb @ w_prev > 0
                        if active.any():
                            w = w + (n * eta[k, 0]) * Gb[active].sum(axis=0)
                    nrm = float(w @ w)
                    if nrm > r2:
                        w = w * (radius / math.sqrt(nrm))
            report_progress(start + size, steps)
    return w


def noisy_gradient_descent_batch(
    X: np.ndarray,
    y: np.ndarray,
    loss: MarginLoss,
    sigma: Any,
    steps: int,
    runs: int,
    rng: np.random.Generator,
    sampling: str = "uniform",
) -> np.ndarray:
    """``runs`` independent runs of :func:`noisy_gradient_descent` on one dataset, advanced
    together (the same law run by run; the randomness is drawn in another order), shape
    (runs, m).  For audits, which need many runs.  With uniform sampling only the sampled
    record's margin is computed (O(runs m) a step, not O(runs n m))."""
    n, m = X.shape
    gauss, wrap = _sgd_noise(n, loss, sigma, sampling)
    W = np.zeros((runs, m))
    offset, slope = float(loss.offset), float(loss.slope)
    with recorded_as(wrap):
        for t in range(1, steps + 1):
            if sampling == "uniform":
                picks = rng.integers(n, size=runs)
                G = (slope * y[picks])[:, None] * X[picks]
                active = offset - np.einsum("rm,rm->r", W, G) > 0
                grad = -(active[:, None] * G)
            else:
                batch = rng.random((runs, n)) < 1 / n
                active = offset - slope * (W @ X.T) * y > 0  # the subgradient's support
                grad = -slope * ((batch & active) * y) @ X
            W = W - _step_size(loss, gauss, n, m, t) * gauss.release(n * grad, rng)
            norms = np.linalg.norm(W, axis=1, keepdims=True)
            W = np.where(norms > loss.weight_radius, W * (loss.weight_radius / norms), W)
    return W
