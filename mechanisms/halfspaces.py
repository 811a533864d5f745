"""Private learners of large-margin halfspaces: source document 000 (Nguyen, Ullman,
Zakynthinou, "Efficient private algorithms for learning large-margin halfspaces", ALT 2020).

* :class:`NoisyGDMarginLearner` -- Algorithm 1 instantiated as Algorithm 3 (Appendix A): a
  random +-1/sqrt(m) projection to R^m, normalisation, then the noisy stochastic gradient
  descent of Bassily, Smith, Thakurta 2014 (BST14) on the (100/(86 gamma))-Lipschitz margin
  loss, run ceil(log(8/beta)) times, the best run chosen by the exponential mechanism.
  Privacy (Theorem 3) comes from the accountant composing the *subsampled Gaussian steps*
  (each step releases n grad l at one uniformly drawn record plus N(0, sigma^2 I)), never
  from a constant copied from the paper.
* :class:`NetMarginLearner` -- Algorithm 2: the same projection, then the exponential
  mechanism over a gamma/10-net of the unit ball of R^m with utility minus the fraction of
  points of margin below gamma/10 (sensitivity 1/n).  Privacy: Theorem 5, pure epsilon.
* the lower-bound construction of Theorem 6 is a data generator:
  :func:`mechanisms.synthetic_margin.lower_bound_code` / ``lower_bound_sample``.

Reconstructions and corrections (the PDF extraction garbles formulas):

* Loss (Alg. 1 step 4): l(w; (x, y)) = 1{y<w,x> < 96 gamma/100} (96/86 - y<w,x>/(86 gamma /
  100)), i.e. max(0, 96/86 - y<w,x>/(0.86 gamma)), Lipschitz 100/(86 gamma) on the unit ball,
  with values in [0, 96/86 + 100/(86 gamma)] (its sensitivity as an EM score).
* Noise (Alg. 3 step 13): sigma^2 = 32 L^2 n^2 log(n/delta') log(1/delta') / eps'^2, step size
  eta(t) = ||C|| / sqrt(t (n^2 L^2 + m sigma^2)), T = n^2 steps.  The gradient step is
  n grad l + b_t, whose replace-one sensitivity is 2 n L; the record is drawn uniformly, i.e.
  a sample of 1 out of n without replacement.  The plan states exactly that, so the
  accountant's amplification/composition (not BST14's closed form) bounds it.
* Omission corrected: Algorithm 3 gives the ceil(log(8/beta)) runs eps/ceil(log(8/beta)) each
  *and* then runs an exponential mechanism whose budget it never states, so as written the
  total exceeds epsilon (Theorem 3's proof ignores the selection step).  Here a share
  ``selection_share`` of epsilon goes to the selection and the rest is split among the runs.
* Claim 4.1's proof writes "96 gamma/100 - gamma/10 = 86 gamma/10"; it is 86 gamma/100 (the
  conclusion "> gamma/10" still holds).
* Theorem 6's proof (lower bound) writes Pr[sign<w_i,x> = sign<w_j,x>] = theta/pi; that is
  the probability that they *differ*.  With inner product <= 4/5 they agree with probability
  1 - arccos(4/5)/pi ~ 0.795, so the step "agree <= 0.21" and the conclusion err >= 0.49 do
  not follow with these constants (the proof needs codewords at Hamming distance near d/2).
  The generator builds the construction as stated; the test measures the agreement.
"""

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
from dpaudit.verify import Claim, Domain, register_claim
from mechanisms.covers import ball_net
from mechanisms.ledger import Ledger, recorded_as
from mechanisms.primitives import ExponentialMechanism, GaussianMechanism

__all__ = [
    "HalfspaceModel",
    "MarginLoss",
    "NetMarginLearner",
    "NoisyGDMarginLearner",
    "PrivateERM",
    "bst14_sigma",
    "jl_matrix",
    "margin_fractions",
    "net_selection",
    "project_to_sphere",
    "single_record_pair",
    "step_event",
]

REPLACE = ev.Relation.REPLACE_ONE


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _positive(name: str, value: Any, high: float | None = None) -> Any:
    if isinstance(value, sympy.Basic) and value.free_symbols:
        return value  # symbolic (a plan): its range is the claim's domain
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, {high or 'oo'}), got {value!r}") from None
    if not math.isfinite(v) or v <= 0 or (high is not None and v >= high):
        raise ValueError(f"{name} must be a number in (0, {high or 'oo'}), got {value!r}")
    return value


def _int(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer in [{low}, oo), got {value!r}")
    return int(value)


def _data(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or len(X) < 2 or not np.all(np.isfinite(X)):
        raise ValueError(
            f"X must be an (n, d) array of finite numbers with n >= 2, got shape {X.shape}"
        )
    if y.shape != (len(X),) or not np.all(np.isin(y, (-1, 1))):
        raise ValueError(f"y must be a length-{len(X)} array of labels in {{-1, +1}}")
    if np.any(np.linalg.norm(X, axis=1) > 1 + 1e-9):
        raise ValueError("X must have rows in the unit ball (normalise the data first)")
    return X, y.astype(np.int64)


def jl_matrix(m: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """The m x d matrix of i.i.d. +-1/sqrt(m) entries (000, Algorithm 1 step 1; Achlioptas
    2003).  Data-independent randomness, so it costs no privacy."""
    m, d = _int("m", m), _int("d", d)
    return (2 * _check_rng(rng).integers(0, 2, (m, d)) - 1) / math.sqrt(m)


def project_to_sphere(X: np.ndarray, A: np.ndarray) -> np.ndarray:
    """x -> Ax / ||Ax|| row by row (000, Algorithm 1 step 2); Ax = 0 maps to 0.

    Privacy: applied record by record, so neighbouring datasets stay neighbours.
    """
    Z = np.asarray(X, dtype=float) @ np.asarray(A, dtype=float).T
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return np.divide(Z, norms, out=np.zeros_like(Z), where=norms > 0)


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


@dataclasses.dataclass(frozen=True)
class HalfspaceModel:
    """A learned linear classifier x -> sign(<w, x>) (labels in {-1, +1})."""

    w: np.ndarray

    def predict(self, X: Any) -> np.ndarray:
        return np.where(np.asarray(X, dtype=float) @ self.w >= 0, 1, -1)

    def error(self, X: Any, y: Any) -> float:
        return float(np.mean(self.predict(X) != np.asarray(y)))


@dataclasses.dataclass(frozen=True)
class PrivateERM:
    """Private ERM with confidence boosting (000 Algorithm 3, procedure F): ``repetitions``
    runs of BST14 noisy SGD, each with (eps_run, delta_run) = ((1 - share) eps / k, delta / k),
    then the exponential mechanism (share x eps, sensitivity ``loss.bound``) picks the run of
    least total loss.  Used by :class:`NoisyGDMarginLearner` and by 001's efficient learners.

    Privacy: the plan :meth:`plan` is k x steps subsampled Gaussian steps and one exponential
    mechanism, composed by the accountant.
    """

    epsilon: Any
    delta: Any
    loss: MarginLoss
    repetitions: int = 3
    steps: int | None = None
    selection_share: Any = sympy.Rational(1, 2)
    sampling: str = "uniform"

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLINGS:
            raise ValueError(
                f"sampling must be one of {', '.join(SAMPLINGS)}, got {self.sampling!r}"
            )
        _positive("epsilon", self.epsilon)
        _positive("delta", self.delta, 1.0)
        _int("repetitions", self.repetitions)
        if self.steps is not None:
            _int("steps", self.steps)
        _positive("selection_share", self.selection_share, 1.0)

    def run_budget(self) -> tuple[sympy.Expr, sympy.Expr]:
        """(eps_run, delta_run) handed to each noisy-SGD run."""
        share = exact(self.selection_share, "selection_share")
        k = self.repetitions
        return ((1 - share) * exact(self.epsilon, "epsilon") / k, exact(self.delta, "delta") / k)

    def sigma(self, n: Any) -> sympy.Expr:
        e_run, d_run = self.run_budget()
        return bst14_sigma(n, self.loss.lipschitz, e_run, d_run)

    def step_count(self, n: Any) -> Any:
        return self.steps if self.steps is not None else exact(n, "n") ** 2

    def plan(self, n: Any) -> ev.Event:
        """The declared event tree for datasets of size n (symbolic n allowed)."""
        n_ = exact(n, "n")
        step = step_event(self.sigma(n_), n_, self.loss.lipschitz, self.sampling)
        # k runs of T steps each: k T adaptive steps (one SelfComposed, as the ledger merges)
        runs = ev.SelfComposed(step, self.step_count(n_) * self.repetitions)
        select = ev.Exponential(
            exact(self.selection_share, "share") * exact(self.epsilon, "e"),
            self.loss.bound,
            relation=step.relation,
        )
        return ev.Composed([runs, select])

    def fit(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Run the k noisy-SGD runs and the selection; returns the selected weight vector."""
        n = len(X)
        sigma, steps = self.sigma(n), int(self.step_count(n))
        runs = np.array(
            [
                noisy_gradient_descent(X, y, self.loss, sigma, steps, rng, self.sampling)
                for _ in range(self.repetitions)
            ]
        )
        return runs[int(self._selection().select(-self.loss.values(runs, X, y), rng))]

    def _selection(self) -> ExponentialMechanism:
        share = exact(self.selection_share, "share") * exact(self.epsilon, "epsilon")
        relation = REPLACE if self.sampling == "uniform" else ev.Relation.ADD_REMOVE
        return ExponentialMechanism(share, self.loss.bound, relation=relation)

    def fit_batch(
        self, X: np.ndarray, y: np.ndarray, runs: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``runs`` independent runs of :meth:`fit` (vectorised noisy SGD, then one selection
        per run), shape (runs, m)."""
        n, m = X.shape
        sigma, steps = self.sigma(n), int(self.step_count(n))
        W = np.stack(
            [
                noisy_gradient_descent_batch(
                    X, y, self.loss, sigma, steps, runs, rng, self.sampling
                )
                for _ in range(self.repetitions)
            ],
            axis=1,
        )
        values = self.loss.values(W.reshape(-1, m), X, y).reshape(runs, self.repetitions)
        em = self._selection()
        return W[np.arange(runs), [int(em.select(-v, rng)) for v in values]]

    def mechanism(
        self, features: Callable[[Any], tuple[np.ndarray, np.ndarray]], direction: Any, name: str
    ) -> Callable[..., Any]:
        """An auditable form: ``mechanism(dataset, rng)`` is <w, direction> for the selected
        w (a post-processing of the output) on ``features(dataset)`` = (Z, y), with a
        vectorised ``.batch``."""
        u = np.asarray(direction, dtype=float)

        def mechanism(dataset: Any, rng: np.random.Generator) -> float:
            Z, y = features(dataset)
            return float(self.fit(Z, y, _check_rng(rng)) @ u)

        def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
            Z, y = features(dataset)
            return self.fit_batch(Z, y, _int("n", n), _check_rng(rng)) @ u

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = name  # type: ignore[attr-defined]
        return mechanism


@dataclasses.dataclass(frozen=True)
class NoisyGDMarginLearner:
    """000 Algorithm 1 / Algorithm 3: JL projection to R^m + private ERM on the margin loss.

    Args:
        epsilon, delta: the privacy target of Theorem 3.
        margin: gamma, the margin the loss is built for.
        dimension: m, the projected dimension (000 takes m = O(log(1/beta_JL)/gamma^2); small
            m at toy sizes, see the tests).
        repetitions: ceil(log(8/beta)) in 000.
        steps: noisy-SGD steps per run (000: n^2; fewer is cheaper and spends less).
        selection_share: the share of epsilon given to the final exponential mechanism (see
            the module docstring: 000 leaves it unstated).
        sampling: ``"uniform"`` (000/BST14, replace-one) or ``"poisson"`` (a variant under
            add/remove whose subsampled Gaussian steps the accountant composes by RDP/PLD;
            a replace-one guarantee follows by group privacy of size 2).

    Privacy: Theorem 3 claims (epsilon, delta)-DP; :meth:`plan` is what the code runs, and the
    claim ``000/theorem-3`` is checked by the verifier on it.
    """

    epsilon: Any
    delta: Any
    margin: float
    dimension: int
    repetitions: int = 3
    steps: int | None = None
    selection_share: Any = sympy.Rational(1, 2)
    sampling: str = "uniform"

    def erm(self) -> PrivateERM:
        return PrivateERM(
            self.epsilon,
            self.delta,
            MarginLoss(self.margin),
            self.repetitions,
            self.steps,
            self.selection_share,
            self.sampling,
        )

    def plan(self, n: Any) -> ev.Event:
        """PostProcessed(k x T subsampled Gaussian steps, then the exponential mechanism)."""
        return ev.PostProcessed(self.erm().plan(n))

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> HalfspaceModel:
        """Learn a halfspace of R^d (returns w = A^T w_hat, 000 Algorithm 1 step 6)."""
        X, y = _data(X, y)
        rng = _check_rng(rng)
        A = jl_matrix(_int("dimension", self.dimension), X.shape[1], rng)
        w_hat = self.erm().fit(project_to_sphere(X, A), y, rng)
        return HalfspaceModel(A.T @ w_hat)

    def mechanism(self, A: np.ndarray, direction: Any) -> Callable[..., Any]:
        """The auditable form for a *fixed* projection A (privacy holds for every A):
        ``mechanism((X, y), rng)`` is <w_hat, direction> for the learned w_hat in R^m (a
        post-processing of the output), with a vectorised ``.batch``."""

        def features(dataset: Any) -> tuple[np.ndarray, np.ndarray]:
            X, y = _data(*dataset)
            return project_to_sphere(X, A), y

        return self.erm().mechanism(features, direction, "000 Algorithm 1/3 (fixed projection)")


def single_record_pair(
    n: int, direction: Any
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A replace-one pair for auditing the noisy-SGD learners (000 Algorithm 1/3, 001
    Algorithm 2): ``n - 1`` zero records (their projected features are 0, so they have no
    gradient and a constant loss) and a last record, the unit vector along ``direction``,
    labelled +1 in d0 and -1 in d1.

    Only the changed record moves anything, so what the audit sees is its whole influence:
    at BST14's sigma the noisy-SGD runs are almost pure noise, and the leak is the final
    exponential mechanism's choice among the runs (the changed record's loss at a run with
    |<w, z>| near its maximum moves by the mechanism's full sensitivity, in opposite
    directions for the two labels).

    Raises:
        ValueError: if n < 2 or ``direction`` is zero.
    """
    n = _int("n", n, 2)
    u = np.asarray(direction, dtype=float).ravel()
    if not np.all(np.isfinite(u)) or not np.linalg.norm(u) > 0:
        raise ValueError(f"direction must be a non-zero finite vector, got {direction!r}")
    X = np.zeros((n, u.size))
    X[-1] = u / np.linalg.norm(u)
    y = np.ones(n, dtype=np.int64)
    y1 = y.copy()
    y1[-1] = -1
    return (X, y), (X, y1)


#: Candidates x records handled at once by :func:`margin_fractions` (a memory bound).
BLOCK_ELEMENTS = 1 << 23


def margin_fractions(
    W: np.ndarray, Z: np.ndarray, y: np.ndarray, threshold: float, strict: bool = False
) -> np.ndarray:
    """For each row w of W, the fraction of records with y <w, z> <= threshold (< with
    ``strict``): the empirical margin loss that 000 Algorithm 2 and 001's cover learners score
    candidates by.  Computed in blocks of candidates (memory stays bounded: a cover of 40,000
    points on 10^5 records is 30 GiB at once) as <w, y z>, which equals y <w, z> exactly
    (y = +-1 negates every product exactly).
    """
    yZ = np.asarray(Z, dtype=float) * np.asarray(y)[:, None]
    n = len(yZ)
    rows = max(1, BLOCK_ELEMENTS // max(n, 1))
    out = np.empty(len(W))
    for start in range(0, len(W), rows):
        block = W[start : start + rows] @ yZ.T
        below = block < threshold if strict else block <= threshold
        out[start : start + rows] = np.count_nonzero(below, axis=1) / n
    return out


def net_selection(
    Z: np.ndarray,
    y: np.ndarray,
    net: np.ndarray,
    threshold: float,
    epsilon: Any,
    rng: np.random.Generator,
    size: int | None = None,
) -> Any:
    """The exponential mechanism over ``net`` with utility minus the fraction of points of
    margin below ``threshold`` (000 Algorithm 2 steps 4-5; 001 Algorithm 1 step 5), sampled
    exactly by Gumbel-max.  Returns the index (or ``size`` indices) of the selected point.

    Privacy: one Exponential(epsilon, sensitivity 1/n, replace-one) event per run.
    """
    n = len(Z)
    u = -margin_fractions(net, Z, y, threshold, strict=True)
    em = ExponentialMechanism(epsilon, sympy.Rational(1, n), relation=REPLACE)
    return em.select(u, rng, size=size)


@dataclasses.dataclass(frozen=True)
class NetMarginLearner:
    """000 Algorithm 2: JL projection, then the exponential mechanism over a gamma/10-net of
    the unit ball of R^m with utility -(1/n) #{y <w, x_A> < gamma/10} (sensitivity 1/n).

    Privacy: Theorem 5, epsilon-DP (the projection is data-independent, the output
    post-processing).  The net is enumerated exactly (:func:`mechanisms.covers.ball_net`), so
    keep m small (2-3) or raise ``max_points``.
    """

    epsilon: Any
    margin: float
    dimension: int
    max_points: int = 200_000

    def plan(self, n: Any) -> ev.Event:
        return ev.PostProcessed(ev.Exponential(self.epsilon, 1 / exact(n, "n"), relation=REPLACE))

    def net(self) -> np.ndarray:
        return ball_net(self.dimension, 1.0, float(self.margin) / 10, self.max_points)

    def fit(self, X: Any, y: Any, rng: np.random.Generator) -> HalfspaceModel:
        X, y = _data(X, y)
        rng = _check_rng(rng)
        A = jl_matrix(_int("dimension", self.dimension), X.shape[1], rng)
        net = self.net()
        k = net_selection(
            project_to_sphere(X, A), y, net, float(self.margin) / 10, self.epsilon, rng
        )
        return HalfspaceModel(A.T @ net[int(k)])

    def selection_mechanism(self, A: np.ndarray) -> Callable[..., Any]:
        """The auditable form for a *fixed* projection A (privacy holds for every A, so
        conditioning on one is a valid test): ``mechanism((X, y), rng)`` returns the index of
        the selected net point, with a vectorised ``.batch``."""
        net = self.net()
        g = float(self.margin) / 10

        def mechanism(dataset: Any, rng: np.random.Generator) -> int:
            X, y = dataset
            return int(net_selection(project_to_sphere(X, A), y, net, g, self.epsilon, rng))

        def batch(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
            X, y = dataset
            return net_selection(project_to_sphere(X, A), y, net, g, self.epsilon, rng, size=n)

        mechanism.batch = batch  # type: ignore[attr-defined]
        mechanism.name = "000 Algorithm 2 (fixed projection)"  # type: ignore[attr-defined]
        return mechanism


# ----------------------------------------------------------------------------------------
# Claims (000's privacy theorems over the paper's domain)
# ----------------------------------------------------------------------------------------

_e, _d, _g, _n = (sympy.Symbol(s, positive=True) for s in ("epsilon", "delta", "gamma", "n"))

register_claim(
    Claim(
        key="000/theorem-5",
        document="000 Nguyen, Ullman, Zakynthinou 2020",
        theorem="Theorem 5",
        statement="Algorithm 2 (JL + exponential mechanism over a gamma/10-net) is (eps, 0)-DP",
        plan=NetMarginLearner(_e, 0.3, 2).plan(_n),
        epsilon=_e,
        delta=0,
        domain=Domain({"epsilon": "(0, oo)", "n": "[2, oo)"}, integers=["n"]),
        note="utility sensitivity 1/n (replace-one); the projection is data-independent",
    )
)

register_claim(
    Claim(
        key="000/theorem-3",
        document="000 Nguyen, Ullman, Zakynthinou 2020",
        theorem="Theorem 3",
        statement=(
            "Algorithm 1/3 (JL + BST14 noisy SGD, k runs, EM selection) is (eps, delta)-DP"
            "; here with k = 3 runs of n^2 steps and half of eps for the selection"
        ),
        plan=NoisyGDMarginLearner(_e, _d, 0.5, 10).plan(_n),
        epsilon=_e,
        delta=_d,
        domain=Domain({"epsilon": "(0, 1]", "delta": "(0, 1/10]", "n": "[10, oo)"}, integers=["n"]),
        note=(
            "margin gamma = 1/2 fixed (the loss's Lipschitz constant enters sigma); the "
            "selection's budget is a correction (000 leaves it unstated). The accountant bounds "
            "each uniformly sampled Gaussian step by amplification by sampling without "
            "replacement (Balle, Barthe, Gaboardi 2018, Thm 9, replace-one) and composes the "
            "steps (advanced composition, DRV10; WBK19 RDP as a second route); the verifier's "
            "outcome over the whole domain is what `dpaudit verify --claim 000/theorem-3` "
            "shows: proved by relaxation (dpaudit.verify.relax)."
        ),
    )
)


def demo_section(seed: int = 2024) -> str:
    """One learner end to end for ``dpaudit demo``: 000's Algorithm 2 (JL projection +
    exponential mechanism over a net) trained on synthetic large-margin data, its ledger
    compared with its plan, Theorem 5 verified, and an audit on a stressing pair.  Takes a
    few seconds.

    Returns:
        Readable text.
    """
    from dpaudit.accountant import Accountant
    from dpaudit.audit import audit
    from dpaudit.verify import get_claim
    from dpaudit.verify.prove import verify_claim
    from mechanisms.synthetic_margin import margin_sample

    epsilon, gamma, n, d = 1.0, 0.6, 400, 20
    rng = np.random.default_rng(seed)
    X, y, w = margin_sample(n, d, gamma, rng)
    Xt, yt, _ = margin_sample(4000, d, gamma, rng, w=w)
    learner = NetMarginLearner(epsilon, gamma, 2)
    with Ledger() as ledger:
        model = learner.fit(X, y, rng)
    spent, planned = ledger.check_within(learner.plan(n))
    guarantee = Accountant().guarantee(learner.plan(n))
    claim = get_claim("000/theorem-5")
    verdict = verify_claim(claim)
    Xa, ya, _ = margin_sample(8, 6, 0.5, np.random.default_rng(5))
    A = jl_matrix(2, 6, np.random.default_rng(seed))
    y1 = ya.copy()
    y1[-1] = -y1[-1]
    small = NetMarginLearner(epsilon, 0.5, 2)
    result = audit(
        small.selection_mechanism(A), (Xa, ya), (Xa, y1), epsilon=epsilon, samples=50_000, seed=seed
    )
    return "\n".join(
        [
            "Large-margin halfspaces, pure DP (000 Nguyen-Ullman-Zakynthinou, Algorithm 2)",
            f"  train: n = {n} unit vectors in R^{d} with margin {gamma}, JL to R^2, exponential "
            f"mechanism over a {len(learner.net())}-point gamma/10-net",
            f"  learned: test error {model.error(Xt, yt):.3f} on 4000 fresh points",
            f"  account: {guarantee} [{guarantee.theorem.name}]; ledger spent {spent:g} of "
            f"{planned:g}",
            f"  verify: claim {claim.key} ({claim.theorem}): {verdict.status}",
            f"  audit: 8 records, last label negated, fixed projection, 50,000 samples per side: "
            f"certified epsilon >= {result.epsilon_lower:.3f} <= upper {guarantee.epsilon_upper:g}"
            f" (violation: {result.violation})",
        ]
    )
